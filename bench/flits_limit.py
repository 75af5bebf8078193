"""The flit-level kernel against its speed of light (bench/limits/flits.py, the same model as one tight loop) on the
same workload in the same process: dimension-order wormhole, 2 VCs, 8-flit buffers, 8-flit packets, uniform
Poisson traffic. Writes bench/results/flits_limit.json.

    python bench/flits_limit.py [--repeat 3] [--scale 1.0]

Points: the 8x8 mesh and the 16x16 torus at 0.1 and 0.3 flits/node/cycle; the 8x8 and 64x64 tori at 0.2 and
0.6 of their channel-load bound (uniform, the tie at k/2 going +). Each point's workload is drawn once (not
timed); then engine (Simulation.run, kernel loaded before) and limit run alternately --repeat times and the
medians are reported. Both rates count the same work: router-cycles = routers x the engine's cycles,
flit-hops = the engine's packet hops x 8. engine/limit is the engine's rate over the limit's (1 = the limit).
--scale multiplies every point's cycles of traffic.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from record import write_results  # noqa: E402

from bench.limits import flits as limit  # noqa: E402
from harts.machine.config import defaults  # noqa: E402
from harts.machine.patterns import synthetic_packets, throughput_bound  # noqa: E402
from harts.machine.simulation import Simulation  # noqa: E402
from harts.machine.traffic import unicast  # noqa: E402

FLITS = 8
# (kind, side, rate, rate basis, cycles of traffic): "flits" rates are flits/node/cycle, "bound" a fraction of the
# network's channel-load bound
POINTS = [
    ("mesh", 8, 0.1, "flits", 20_000), ("mesh", 8, 0.3, "flits", 20_000),
    ("torus", 16, 0.1, "flits", 10_000), ("torus", 16, 0.3, "flits", 10_000),
    ("torus", 8, 0.2, "bound", 20_000), ("torus", 8, 0.6, "bound", 20_000),
    ("torus", 64, 0.2, "bound", 2_000), ("torus", 64, 0.6, "bound", 2_000),
]


def uniform_torus_bound(topology) -> float:
    """The channel-load bound of uniform traffic on a torus, in flits/node/cycle, from one source's routes: every
    node is alike, so a link of each axis and direction carries, per flit/cycle each node injects, the mean
    hops its packets take that way, ties half-way round going + as the limit sends them. (throughput_bound walks
    all N^2 pairs.)"""
    n = topology.n_nodes
    offsets = topology.route_offsets(np.zeros(n - 1, np.int64), np.arange(1, n))
    loads = [np.clip(offsets, 0, None).sum(axis=0) / (n - 1), np.clip(-offsets, 0, None).sum(axis=0) / (n - 1)]
    return 1.0 / max(float(np.max(loads)), 1.0)  # the injection and ejection channels carry 1


def machine(kind: str, side: int) -> Simulation:
    return Simulation(defaults().with_values(topology={"kind": kind, "dims": [side, side]}, microcode="wormhole",
                                             flow__virtual_channels=2, flow__buffer_flits=8,
                                             routing__torus_tie="positive"))  # the limit's tie rule


def one_point(kind, side, rate, basis, cycles, repeat) -> dict:
    sim = machine(kind, side)
    bound = None
    if kind == "torus":
        bound = uniform_torus_bound(sim.topology)
    flits_rate = rate * bound if basis == "bound" else rate
    create, source, destination, flits = synthetic_packets(sim.topology, "uniform", flits_rate, FLITS, cycles, 1)
    work = unicast(create, source, destination, flits * sim.params.flit_bytes)
    engine_walls, limit_walls = [], []
    result = delivered = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = sim.run(work, keep=False)
        engine_walls.append(time.perf_counter() - started)
        started = time.perf_counter()
        delivered = limit.deliveries(kind, (side, side), sim.params, FLITS, create, source, destination)
        limit_walls.append(time.perf_counter() - started)
    summary = result.summary()
    latency = float(np.mean(delivered - create))
    if not np.isclose(latency, summary["latency_mean_cycles"], rtol=1e-12, atol=0):
        raise SystemExit(f"{kind} {side}x{side} at {flits_rate}: the limit's mean latency {latency} is not the "
                         f"engine's {summary['latency_mean_cycles']}")
    routers = sim.topology.n_nodes
    cycles_run = result.ticks - 1
    flit_hops = summary["packet_hops"] * FLITS
    engine_wall, limit_wall = statistics.median(engine_walls), statistics.median(limit_walls)
    ratios = sorted(lim / eng for eng, lim in zip(engine_walls, limit_walls))
    return {
        "network": f"{side}x{side} {kind}", "rate_flits_per_node_cycle": flits_rate,
        "rate_of_bound": flits_rate / bound if bound else None, "channel_load_bound": bound,
        "packets": len(work), "cycles": cycles_run, "flit_hops": flit_hops,
        "latency_mean_cycles": summary["latency_mean_cycles"],
        "engine_seconds": engine_walls, "limit_seconds": limit_walls,
        "engine_router_cycles_per_second": routers * cycles_run / engine_wall,
        "limit_router_cycles_per_second": routers * cycles_run / limit_wall,
        "engine_flit_hops_per_second": flit_hops / engine_wall,
        "limit_flit_hops_per_second": flit_hops / limit_wall,
        "engine_over_limit": limit_wall / engine_wall,
        "engine_over_limit_per_run": ratios,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each per point; medians are reported")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every point's cycles of traffic")
    args = parser.parse_args()
    if args.repeat < 1 or not args.scale > 0:
        print("flits_limit: --repeat must be >= 1 and --scale > 0", file=sys.stderr)
        return 2
    for kind in ("mesh", "torus"):  # load the kernel and compile the limit outside the timings
        one_point(kind, 4, 0.05, "flits", 100, 1)
    sim = machine("torus", 8)
    exact = throughput_bound(sim.topology, "uniform", torus_tie="positive").throughput
    if not np.isclose(uniform_torus_bound(sim.topology), exact, rtol=1e-12):
        raise SystemExit(f"uniform_torus_bound disagrees with throughput_bound on the 8x8 torus ({exact})")
    points = []
    for kind, side, rate, basis, cycles in POINTS:
        point = one_point(kind, side, rate, basis, max(1, round(cycles * args.scale)), args.repeat)
        points.append(point)
        spread = point["engine_over_limit_per_run"]
        print(f"{point['network']:>12} at {point['rate_flits_per_node_cycle']:.4f}: engine "
              f"{point['engine_router_cycles_per_second'] / 1e6:6.2f} M router-cycles/s "
              f"{point['engine_flit_hops_per_second'] / 1e6:6.2f} M flit-hops/s; limit "
              f"{point['limit_router_cycles_per_second'] / 1e6:6.2f} M, "
              f"{point['limit_flit_hops_per_second'] / 1e6:6.2f} M; engine/limit {point['engine_over_limit']:.3f} "
              f"({spread[0]:.3f}-{spread[-1]:.3f}); {point['packets']} packets, {point['cycles']} cycles",
              flush=True)
    by = {(p["network"], round(p["rate_of_bound"] or 0, 3)): p for p in points}
    size = {f"{f}": by[("64x64 torus", f)]["engine_flit_hops_per_second"]
            / by[("8x8 torus", f)]["engine_flit_hops_per_second"] for f in (0.2, 0.6)}
    limit_size = {f"{f}": by[("64x64 torus", f)]["limit_flit_hops_per_second"]
                  / by[("8x8 torus", f)]["limit_flit_hops_per_second"] for f in (0.2, 0.6)}
    for f in size:
        print(f"64x64 / 8x8 torus at {f} of the bound, flit-hops/s: engine {size[f]:.3f}, limit {limit_size[f]:.3f}")
    out = {
        "repeat": args.repeat, "scale": args.scale,
        "points": points,
        "engine_64x64_over_8x8_flit_hops_per_second": size,
        "limit_64x64_over_8x8_flit_hops_per_second": limit_size,
    }
    write_results("flits_limit", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
