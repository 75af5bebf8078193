"""`harts load`: a preset of `harts sweep` (harts/experiments/load_sweep.py). Latency against offered load on the 8x8
mesh and the 8x8 torus, for each of four traffic patterns, on a flit-level microprogram (wormhole.yaml by default:
dimension-order routing, 2 VCs with the dateline, 8-flit buffers, 8-flit packets).

Each network and router is a sweep of the built-in defaults with these keys set: Poisson arrivals for WARMUP +
MEASURE cycles, the first WARMUP left out of the statistics, seed SEED, offered loads at FRACTIONS of each pattern's
channel-load bound (harts.machine.patterns.throughput_bound), up to past it. A pattern's saturation is the largest
fraction of the sweep up to which every run is stable (harts.machine.statistics), set against the bound.
"""

from __future__ import annotations

from pathlib import Path

from ...machine.patterns import throughput_bound
from ...network.build import build_topology
from ...output import save_figure, write_text
from ..load_sweep import Base, Sweep, run_points
from ..sweep import write_csv

NETWORKS = {"mesh 8x8": {"kind": "mesh", "dims": [8, 8]}, "torus 8x8": {"kind": "torus", "dims": [8, 8]}}
PATTERNS = ("uniform", "transpose", "bit_complement", "hotspot")
FRACTIONS = tuple(round(0.05 * k, 2) for k in range(1, 21)) + (1.1, 1.2, 1.3)  # of the channel-load bound
QUICK_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.3)
# (virtual channels, buffer flits): the default, then more buffer, more VCs and both, to see what the
# default router loses against the bound
ROUTERS = ((2, 8), (2, 16), (4, 8), (4, 16))
PACKET_FLITS = 8
WARMUP = 2_000
MEASURE = 10_000
SEED = 1


def base(network: str, microcode: str, router: tuple[int, int], torus_tie: str = "random") -> Base:
    """The keys `harts load` sets on the built-in defaults for one network and router: the equivalent of
    `harts sweep default.yaml --set KEY=VALUE ...` with these keys."""
    return Base(None, (("topology", NETWORKS[network]), ("microcode", microcode),
                       ("flow.virtual_channels", router[0]), ("flow.buffer_flits", router[1]),
                       ("routing.torus_tie", torus_tie), ("traffic.synthetic.packet_flits", PACKET_FLITS),
                       ("run.warmup_cycles", WARMUP), ("run.cycles", WARMUP + MEASURE), ("run.seed", SEED)))


def sweeps(microcode: str = "wormhole", fractions=FRACTIONS, routers=ROUTERS, torus_tie: str = "random"
           ) -> dict[tuple, Sweep]:
    """The sweep of every network and router, by (network, router)."""
    return {(network, router): Sweep(base(network, microcode, router, torus_tie), PATTERNS, bound_fractions=fractions)
            for router in routers for network in NETWORKS}


def rows_of(points: list[dict], network: str, microcode: str, router: tuple[int, int], sweep: Sweep) -> list[dict]:
    """A sweep's points as `harts load` tabulates them."""
    topology = build_topology(NETWORKS[network])
    tie = dict(sweep.base.values)["routing.torus_tie"]
    bottleneck = {pattern: str(throughput_bound(topology, pattern, 1, torus_tie=tie).bottleneck)
                  for pattern in sweep.patterns}
    rows = []
    for point in points:
        pattern = point["pattern"]
        bound = sweep.bounds[pattern]
        rows.append({
            "microcode": microcode, "network": network, "pattern": pattern,
            "virtual_channels": router[0], "buffer_flits": router[1],
            "bound_fraction": round(point["rate"] / bound, 2), "bound_flits_per_node_cycle": bound,
            "bottleneck": bottleneck[pattern],
            "offered": point["rate"], "offered_measured": point["offered_flits_per_node_cycle"],
            "accepted": point["accepted_flits_per_node_cycle"], "latency_mean": point["latency_mean_cycles"],
            "latency_p99": point["latency_p99_cycles"], "queueing_mean": point["queueing_mean_cycles"],
            "network_latency_mean": point["network_latency_mean_cycles"], "stable": point["stable"],
            "packets": point["packets"], "peak_buffer_flits": point["peak_buffer_flits"],
            "last_cycle": round(point["simulated_cycles"]) - 1})
    return rows


def saturation(rows: list[dict]) -> list[dict]:
    """Per router, network and pattern: the saturation throughput, the largest offered load of the sweep up to
    which every run is stable, against the channel-load bound; and the largest accepted throughput of any point,
    which past saturation can exceed the bound when the flows through the bottleneck are starved and the others are
    not."""
    out = []
    for router in sorted({(r["virtual_channels"], r["buffer_flits"]) for r in rows}):
        for network in NETWORKS:
            for pattern in PATTERNS:
                mine = sorted((r for r in rows if r["network"] == network and r["pattern"] == pattern
                               and (r["virtual_channels"], r["buffer_flits"]) == router), key=lambda r: r["offered"])
                if not mine:
                    continue
                carried = 0.0
                for r in mine:
                    if not r["stable"]:
                        break
                    carried = r["offered"]
                bound = mine[0]["bound_flits_per_node_cycle"]
                out.append({"virtual_channels": router[0], "buffer_flits": router[1], "network": network,
                            "pattern": pattern, "bound": bound, "bottleneck": mine[0]["bottleneck"],
                            "saturation": carried, "saturation_fraction_of_bound": carried / bound,
                            "max_accepted": max(r["accepted"] for r in mine)})
    return out


def _tie_suffix(torus_tie: str) -> str:
    """Results of the default tie rule keep their names; the other rule's go beside them."""
    return "" if torus_tie == "random" else f"-tie_{torus_tie}"


def output_name(microcode: str, torus_tie: str) -> str:
    """The stem of the sweep's CSV and PNG files in results/switching/."""
    return f"{microcode}{_tie_suffix(torus_tie).replace('-', '_')}"


def load_sweep(results: Path, microcode: str = "wormhole", fractions=FRACTIONS, routers=ROUTERS,
               torus_tie: str = "random", resume: bool = False, workers: int | None = None,
               dask_scheduler: str | None = None, progress: bool = True) -> list[dict]:
    """Run every network's and router's sweep (in one pool of workers) and write switching/NAME_load.csv,
    NAME_saturation.csv, NAME_saturation.md (the table EXPERIMENTS.md shows) and NAME_load.png."""
    every = sweeps(microcode, fractions, routers, torus_tie)
    grids = {where: sweep.grid() for where, sweep in every.items()}
    found = iter(run_points([point for grid in grids.values() for point in grid], results, resume=resume,
                            workers=workers, dask_scheduler=dask_scheduler, progress=progress))
    rows = []
    for (network, router), grid in grids.items():
        rows += rows_of([next(found) for _ in grid], network, microcode, router, every[network, router])
    out = results / "switching"
    out.mkdir(parents=True, exist_ok=True)
    name = output_name(microcode, torus_tie)
    write_csv(rows, out / f"{name}_load.csv")
    saturated = saturation(rows)
    write_csv(saturated, out / f"{name}_saturation.csv")
    write_text(out / f"{name}_saturation.md", saturation_markdown(saturated))
    draw(rows, out / f"{name}_load.png", microcode)
    return rows


PATTERN_NAMES = {"bit_complement": "bit-complement"}


def saturation_markdown(saturated: list[dict]) -> str:
    """The saturation table EXPERIMENTS.md shows: a row per network and pattern, a column per router (VCs x
    buffer), each the saturation as a fraction of the pattern's channel-load bound."""
    routers = list(dict.fromkeys((r["virtual_channels"], r["buffer_flits"]) for r in saturated))
    by = {(r["network"], r["pattern"], r["virtual_channels"], r["buffer_flits"]): r for r in saturated}
    lines = ["| network | pattern | " + " | ".join(f"{v} VCs x {b}" for v, b in routers) + " |",
             "|---|---|" + "---|" * len(routers)]
    for network, pattern in dict.fromkeys((r["network"], r["pattern"]) for r in saturated):
        fractions = [by[network, pattern, v, b]["saturation_fraction_of_bound"] for v, b in routers]
        lines.append(f"| {network} | {PATTERN_NAMES.get(pattern, pattern)} | "
                     + " | ".join(f"{f:.2f}" for f in fractions) + " |")
    return "\n".join(lines) + "\n"


def draw(rows: list[dict], path: Path, microcode: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    present = sorted({(r["virtual_channels"], r["buffer_flits"]) for r in rows})
    routers = [present[0], present[-1]] if len(present) > 1 else present  # the smallest and the largest
    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(13, 4.8), layout="constrained")
    for ax, network in zip(axes, NETWORKS):
        for index, pattern in enumerate(PATTERNS):
            colour = f"C{index}"
            for style, router in zip(("-", "--"), routers):
                mine = [r for r in rows if r["network"] == network and r["pattern"] == pattern
                        and (r["virtual_channels"], r["buffer_flits"]) == router]
                if not mine:
                    continue
                label = f"{pattern}, {router[0]} VCs x {router[1]} flits"
                ax.plot([r["offered"] for r in mine], [r["latency_mean"] for r in mine], ls=style, marker="o",
                        ms=2.5, color=colour, label=label)
            ax.axvline(mine[0]["bound_flits_per_node_cycle"], color=colour, ls=":", lw=0.9)
        ax.set_yscale("log")
        ax.set_ylim(top=1e4)
        ax.set_xlabel("offered load (flits per node per cycle)")
        ax.set_ylabel("mean latency (cycles, creation to delivery)")
        ax.set_title(f"{network}: dotted lines are the channel-load bounds", fontsize=9)
        ax.legend(fontsize=7)
    topology = build_topology(NETWORKS[next(iter(NETWORKS))])
    fig.suptitle(f"{microcode}: {PACKET_FLITS}-flit packets, dimension-order routing, {topology.n_nodes} nodes",
                 fontsize=10)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
