"""The cut-through kernel against its speed-of-light model (bench/limits/cut_through.py): packet-hops per second
of each on the same packets, uniform Poisson unicasts on E-9 and E-41 at link loads 0.1, 0.3 and 0.5 with the
default config, in one process, one core. Writes bench/results/cut_through_limit.json.

    python bench/cut_through_limit.py [--repeat 7] [--only E-9]

Both run the same generated packet list (generation excluded from both timings). The engine is timed as
`harts bench` times it: Simulation.run(keep=False)'s wall_seconds, from its tables allocated and its kernel
loaded to the kernel's last return, with the log drains and per-packet checks made meanwhile (not the end-of-run
drain and checks). The limit is timed on its event loop alone, its tables allocated
beforehand, as the engine's are. Each repeat runs the engine and then the limit back to back; medians over the
repeats, and the spread (min, max) of the per-repeat ratio. Both must count the same packet-hops (checked).
Issue 21's target: engine / limit >= 0.5 at every point, and E-41's rate within 25% of E-9's.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from record import write_results  # noqa: E402

from bench.limits.cut_through import Limit, simulate, workload  # noqa: E402
from harts.machine.config import hex_config  # noqa: E402
from harts.machine.simulation import Simulation, load_kernel  # noqa: E402

NETWORKS = {"E-9": (9, 50_000), "E-41": (41, 5_000)}  # size, cycles of traffic (as bench/engine.py)
LOADS = (0.1, 0.3, 0.5)
TARGET_RATIO = 0.5
TARGET_SIZE_RATIO = 0.75


def warm_up() -> None:
    """Load the engine's kernel and the limit's compiled loop outside every timing."""
    load_kernel()
    config = hex_config(3, traffic__uniform__load=0.1, run__cycles=200)
    Limit(config).run(workload(config))


def one_point(size: int, cycles: int, load: float, repeat: int) -> dict:
    config = hex_config(size, traffic__uniform__load=load, run__cycles=cycles)
    traffic = workload(config)
    limit = Limit(config)
    engine_seconds, limit_seconds = [], []
    for _ in range(repeat):
        simulation = Simulation(config)
        result = simulation.run(traffic, keep=False)
        summary = result.summary()
        engine_seconds.append(result.wall_seconds)
        arrays = limit.prepare(traffic)
        started = time.perf_counter()
        error, hops, events = simulate(*arrays)
        limit_seconds.append(time.perf_counter() - started)
        if error != 0 or hops != summary["packet_hops"]:
            raise SystemExit(f"E-{size} at {load}: the limit counted {hops} packet-hops (error {error}), the "
                             f"engine {summary['packet_hops']}")
    ratios = [lim / eng for eng, lim in zip(engine_seconds, limit_seconds)]  # engine rate / limit rate
    engine_rate = hops / statistics.median(engine_seconds)
    limit_rate = hops / statistics.median(limit_seconds)
    return {
        "network": f"E-{size}", "nodes": simulation.topology.n_nodes, "load": load, "cycles_of_traffic": cycles,
        "packets": len(traffic), "packet_hops": hops, "link_utilisation": summary["link_utilisation"],
        "engine_events": summary["events"], "limit_events": int(events),
        "engine_microinstructions": summary["microinstructions"],
        "engine_seconds": engine_seconds, "limit_seconds": limit_seconds,
        "engine_packet_hops_per_second": engine_rate, "limit_packet_hops_per_second": limit_rate,
        "engine_over_limit": statistics.median(ratios),
        "engine_over_limit_spread": [min(ratios), max(ratios)],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each per point; medians are reported")
    parser.add_argument("--only", choices=sorted(NETWORKS), help="one network")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    warm_up()
    points = []
    for name, (size, cycles) in NETWORKS.items():
        if args.only and name != args.only:
            continue
        for load in LOADS:
            point = one_point(size, cycles, load, args.repeat)
            points.append(point)
            low, high = point["engine_over_limit_spread"]
            print(f"{name:5s} load {load}: engine {point['engine_packet_hops_per_second'] / 1e6:6.2f} M packet-hops/s, "
                  f"limit {point['limit_packet_hops_per_second'] / 1e6:6.2f} M, engine/limit "
                  f"{point['engine_over_limit']:.2f} ({low:.2f}-{high:.2f}), events per packet-hop "
                  f"{point['engine_events'] / point['packet_hops']:.2f} / {point['limit_events'] / point['packet_hops']:.2f}",
                  flush=True)
    by_point = {(p["network"], p["load"]): p for p in points}
    sizes = {}
    for load in LOADS:
        if ("E-9", load) in by_point and ("E-41", load) in by_point:
            small, large = by_point["E-9", load], by_point["E-41", load]
            sizes[str(load)] = {
                "engine": large["engine_packet_hops_per_second"] / small["engine_packet_hops_per_second"],
                "limit": large["limit_packet_hops_per_second"] / small["limit_packet_hops_per_second"]}
            print(f"E-41 / E-9 at {load}: engine {sizes[str(load)]['engine']:.2f}, limit "
                  f"{sizes[str(load)]['limit']:.2f}")
    out = {
        "repeat": args.repeat,
        "targets": {"engine / limit": TARGET_RATIO, "E-41 / E-9": TARGET_SIZE_RATIO},
        "points": points,
        "E-41 / E-9": sizes,
    }
    write_results("cut_through_limit", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
