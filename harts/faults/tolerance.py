"""What k-reliable broadcast tolerates: trials with random fault sets, and what each node decides."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..broadcasts.kandlur_shin import broadcast_traffic
from ..controller import records as R
from ..machine.config import Config
from ..machine.simulation import Simulation
from ..machine.traffic import initiations
from ..np.kandlur_shin import ALGORITHMS
from ..output import save_figure
from .fault_set import FaultSet, random_faults
from .reception import decide


def zero_load_latency_ticks(sim: Simulation, algorithm: str, length: int, source: int = 0) -> int:
    """The broadcast's latency on an idle, fault-free network, in ticks."""
    alone = initiations([0], [source], [ALGORITHMS[algorithm]], [length])
    return int(sim.run(alone, faults=FaultSet.none(sim.topology)).deliveries[R.DL_TICK].max())


def deadline_ticks(sim: Simulation, algorithm: str, length: int, source: int = 0) -> int:
    """reception.deadline_cycles, or by default twice the zero-load latency (MODEL.md argues why)."""
    if sim.config["reception.deadline_cycles"]:
        return sim.config["reception.deadline_cycles"] * sim.config.bytes_per_cycle
    return 2 * zero_load_latency_ticks(sim, algorithm, length, source)


@dataclass
class ToleranceRow:
    algorithm: str
    topology: str
    faults: int
    kind: str
    behaviour: str  # of the Byzantine nodes
    trials: int
    correct_fraction: float  # mean over trials of the share of non-faulty nodes deciding correctly
    all_correct_fraction: float  # share of trials in which every non-faulty node decided correctly
    worst_fraction: float  # the lowest share seen in one trial

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def tolerance(config: Config, algorithm: str, kind: str, max_faults: int, trials: int, length: int = 64,
              source: int = 0, behaviour: str = "alter", seed: int = 1) -> list[ToleranceRow]:
    """For f = 0..max_faults: `trials` random sets of f crashed (kind 'crash') or Byzantine ('byzantine')
    nodes, never the source; one broadcast each (over the config's background traffic, if any)."""
    sim = Simulation(config)
    deadline = deadline_ticks(sim, algorithm, length, source)
    traffic, _ = broadcast_traffic(sim, algorithm, source, length)
    rng = np.random.default_rng(seed)
    rows = []
    for f in range(max_faults + 1):
        fractions, all_ok = [], []
        for _ in range(trials if f else 1):  # with no faults every trial is the same run
            faults = random_faults(sim.topology, rng, crashed=f if kind == "crash" else 0,
                                   byzantine=f if kind == "byzantine" else 0, behaviour=behaviour, spare=[source])
            faults.corruption_probability = config["faults.corruption_probability"]
            decisions = decide(sim.run(traffic, faults=faults), config["reception.rule"], deadline)
            fractions.append(float(decisions.correct_fraction()[0]))
            all_ok.append(bool(decisions.all_correct()[0]))
        rows.append(ToleranceRow(algorithm, sim.topology.name, f, kind, behaviour, len(fractions),
                                 float(np.mean(fractions)), float(np.mean(all_ok)), float(np.min(fractions))))
    return rows


def reached_tolerance(config: Config, algorithm: str, kind: str, max_faults: int, trials: int,
                      length: int | None = None, source: int = 0, behaviour: str = "alter",
                      seed: int = 1) -> list[ToleranceRow]:
    """For f = 0..max_faults: `trials` random sets of f crashed ('crash') or Byzantine ('byzantine') nodes, never
    the source; one broadcast each (over the config's background traffic, if any), of an algorithm whose paper
    claims no fault tolerance: the share of non-faulty nodes the message reached whole and unaltered."""
    from ..broadcasts.runner import run_broadcast
    from ..broadcasts.table import BROADCASTS
    from ..network.build import build_topology
    from ..tools.calibrate import measure_linear_cost

    topology = build_topology(config.topology_spec)
    cost = measure_linear_cost(config) if BROADCASTS[algorithm].paper == "004" else None
    rng = np.random.default_rng(seed)
    rows = []
    for f in range(max_faults + 1):
        fractions = []
        for _ in range(trials if f else 1):  # with no faults every trial is the same run
            faults = random_faults(topology, rng, crashed=f if kind == "crash" else 0,
                                   byzantine=f if kind == "byzantine" else 0, behaviour=behaviour, spare=[source])
            faults.corruption_probability = config["faults.corruption_probability"]
            reached = run_broadcast(config, algorithm, source, length, faults=faults, cost=cost).reached()
            eligible = faults.node_fault == R.FAULT_NONE
            eligible[source] = False
            fractions.append(float(reached[eligible].mean()))
        rows.append(ToleranceRow(algorithm, topology.name, f, kind, behaviour, len(fractions),
                                 float(np.mean(fractions)), float(np.mean([x == 1.0 for x in fractions])),
                                 float(np.min(fractions))))
    return rows


# One marker shape per curve, drawn hollow and each smaller than the one before, so that curves sharing a
# point (all of them at no faults) show as nested outlines rather than one hiding the others.
MARKERS = "osD^vP*Xph"


def coinciding_curves(rows: list[ToleranceRow]) -> dict[str, list[str]]:
    """For each algorithm, the other algorithms whose curve is the same as its own at every fault count."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        curves.setdefault(r.algorithm, []).append((r.faults, r.correct_fraction))
    return {a: [b for b in curves if b != a and curves[b] == curves[a]] for a in curves}


def plot_tolerance(rows: list[ToleranceRow], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    same = coinciding_curves(rows)
    algorithms = list(same)
    for index, algorithm in enumerate(algorithms):
        mine = [r for r in rows if r.algorithm == algorithm]
        label = algorithm.upper()
        if same[algorithm]:
            label += f" (same curve as {', '.join(a.upper() for a in same[algorithm])})"
        # A curve drawn over an identical earlier one is dashed, so the earlier colour shows in the gaps.
        covers = any(algorithms.index(a) < index for a in same[algorithm])
        ax.plot([r.faults for r in mine], [r.correct_fraction for r in mine], color=f"C{index % 10}",
                marker=MARKERS[index % len(MARKERS)], ms=11 - 6 * index / max(1, len(algorithms) - 1),
                mfc="none", mew=1.3, ls="--" if covers else "-", label=label)
    kind = rows[0].kind
    what = "crashed" if kind == "crash" else f"Byzantine ({rows[0].behaviour})"
    ax.set_xlabel(f"number of {what} nodes (random, never the source)")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("fraction of non-faulty nodes deciding correctly")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Correct decisions on {rows[0].topology} under {what} nodes ({rows[-1].trials} random fault "
                 f"sets per count)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=130)
    plt.close(fig)
