"""Latency against offered load on the 8x8 mesh and the 8x8 torus, for each traffic pattern, on a flit-level
microprogram (wormhole.yaml by default: dimension-order routing, 2 VCs with the dateline, 8-flit buffers,
8-flit packets).

Each point is one run: Poisson arrivals for WARMUP + MEASURE cycles, then every packet is delivered. Latency
is creation to delivery (source queueing included) of the packets created in the measurement window;
accepted throughput is the data flits delivered during the window per node and cycle. The offered loads
are fractions of each pattern's channel-load bound (harts.machine.patterns.throughput_bound), up to past it, so
the saturation throughput (the largest accepted throughput of the sweep) can be set against that bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...controller import records as R
from ...machine.config import defaults
from ...machine.patterns import PATTERNS, synthetic_packets, throughput_bound
from ...machine.simulation import Simulation
from ...machine.traffic import unicast
from ...network.build import build_topology
from ..sweep import run_tasks, write_csv

NETWORKS = {"mesh 8x8": {"kind": "mesh", "dims": [8, 8]}, "torus 8x8": {"kind": "torus", "dims": [8, 8]}}
FRACTIONS = tuple(round(0.05 * k, 2) for k in range(1, 21)) + (1.1, 1.2, 1.3)  # of the channel-load bound
QUICK_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.3)
# (virtual channels, buffer flits): the default, then more buffer, more VCs and both, to see what the
# default router loses against the bound
ROUTERS = ((2, 8), (2, 16), (4, 8), (4, 16))
# A load is carried while the mean latency stays within this factor of the lightest load's (the usual
# criterion: a flow the network cannot carry queues without bound at its source, so its packets' latency
# grows with the window; the accepted throughput alone hides it when only a few flows cross the bottleneck).
LATENCY_FACTOR = 3
PACKET_FLITS = 8
WARMUP = 2_000
MEASURE = 10_000
SEED = 1


def config_for(network: str, microcode: str, router: tuple[int, int], torus_tie: str = "random"):
    return defaults().with_values(topology=NETWORKS[network], microcode=microcode,
                                  flow__virtual_channels=router[0], flow__buffer_flits=router[1],
                                  routing__torus_tie=torus_tie)


@dataclass(frozen=True)
class LoadPoint:
    network: str
    pattern: str
    fraction: float
    microcode: str = "wormhole"
    router: tuple[int, int] = ROUTERS[0]
    torus_tie: str = "random"

    @property
    def key(self) -> str:
        return (f"load-{self.microcode}-{self.network.replace(' ', '')}-{self.pattern}-{self.fraction:g}"
                f"-vc{self.router[0]}-b{self.router[1]}{_tie_suffix(self.torus_tie)}")

    @property
    def cost(self) -> float:
        return self.fraction

    def run(self) -> dict:
        config = config_for(self.network, self.microcode, self.router, self.torus_tie)
        sim = Simulation(config)
        bound = throughput_bound(sim.topology, self.pattern, sim.params.flit_cycles, torus_tie=self.torus_tie)
        rate = self.fraction * bound.throughput
        create, source, dest = synthetic_packets(sim.topology, self.pattern, rate, PACKET_FLITS, WARMUP + MEASURE,
                                                 SEED)
        result = sim.run(unicast(create, source, dest, PACKET_FLITS * sim.params.flit_bytes))
        delivered = np.zeros(len(create), np.int64)
        dl = result.deliveries
        delivered[dl[R.DL_UID]] = dl[R.DL_TICK]
        measured = (create >= WARMUP) & (create < WARMUP + MEASURE)
        in_window = (delivered >= WARMUP) & (delivered < WARMUP + MEASURE)
        n = sim.topology.n_nodes
        latency = (delivered - create)[measured]
        return {"key": self.key, "microcode": self.microcode, "network": self.network, "pattern": self.pattern,
                "virtual_channels": self.router[0], "buffer_flits": self.router[1],
                "bound_fraction": self.fraction, "bound_flits_per_node_cycle": bound.throughput,
                "bottleneck": str(bound.bottleneck), "offered": rate,
                "offered_measured": float(PACKET_FLITS * measured.sum() / (n * MEASURE)),
                "accepted": float(PACKET_FLITS * in_window.sum() / (n * MEASURE)),
                "latency_mean": float(latency.mean()), "latency_p99": float(np.percentile(latency, 99)),
                "packets": int(len(create)), "peak_buffer_flits": result.network.peak_flits,
                "last_cycle": result.ticks - 1}


def points(microcode: str = "wormhole", fractions=FRACTIONS, routers=ROUTERS, torus_tie: str = "random"
           ) -> list[LoadPoint]:
    return [LoadPoint(network, pattern, fraction, microcode, router, torus_tie) for router in routers
            for network in NETWORKS for pattern in PATTERNS for fraction in fractions]


def _tie_suffix(torus_tie: str) -> str:
    """Results of the default tie rule keep their names; the other rule's go beside them."""
    return "" if torus_tie == "random" else f"-tie_{torus_tie}"


def saturation(rows: list[dict]) -> list[dict]:
    """Per router, network and pattern: the saturation throughput, the largest offered load of the sweep up to
    which every load is carried (mean latency within LATENCY_FACTOR of the lightest load's), against the
    channel-load bound; and the largest accepted throughput of any point, which past saturation can exceed
    the bound when the flows through the bottleneck are starved and the others are not."""
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
                    if r["latency_mean"] > LATENCY_FACTOR * mine[0]["latency_mean"]:
                        break
                    carried = r["offered"]
                bound = mine[0]["bound_flits_per_node_cycle"]
                out.append({"virtual_channels": router[0], "buffer_flits": router[1], "network": network,
                            "pattern": pattern, "bound": bound, "bottleneck": mine[0]["bottleneck"],
                            "saturation": carried, "saturation_fraction_of_bound": carried / bound,
                            "max_accepted": max(r["accepted"] for r in mine)})
    return out


def output_name(microcode: str, torus_tie: str) -> str:
    """The stem of the sweep's CSV and PNG files in results/switching/."""
    return f"{microcode}{_tie_suffix(torus_tie).replace('-', '_')}"


def load_sweep(results: Path, microcode: str = "wormhole", fractions=FRACTIONS, routers=ROUTERS,
               torus_tie: str = "random", resume: bool = False, workers: int | None = None,
               dask_scheduler: str | None = None, progress: bool = True) -> list[dict]:
    tasks = points(microcode, fractions, routers, torus_tie)
    done = run_tasks(tasks, results, resume=resume, workers=workers, dask_scheduler=dask_scheduler,
                     progress=progress, description=f"{microcode} under load")
    rows = [{k: v for k, v in done[task.key].items() if k != "key"} for task in tasks]
    out = results / "switching"
    out.mkdir(parents=True, exist_ok=True)
    name = output_name(microcode, torus_tie)
    write_csv(rows, out / f"{name}_load.csv")
    write_csv(saturation(rows), out / f"{name}_saturation.csv")
    draw(rows, out / f"{name}_load.png", microcode)
    return rows


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
    fig.savefig(path, dpi=130)
    plt.close(fig)
