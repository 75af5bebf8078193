"""Paper 001, section VI-B: "In the general case of rho > 0, the execution times of the various algorithms
will fall between the best and worst-case execution times shown in Tables II and IV." Each algorithm runs
once per background load over uniform Poisson traffic at that link load (MODEL.md, Traffic), starting
after the warm-up, with the same fixed schedule as in dedicated mode; its time is from its start to its
last copy. Receiver FIFOs are 256 bytes here: with 64, an IHC packet that queues behind another while the
relay's refused-forward path runs overflows the FIFO (MODEL.md, "Paper 001").
"""

from __future__ import annotations

from pathlib import Path

from ...config import defaults
from ..sweep import write_csv
from .ata import frs_ata, ihc, ks_ata, vrs_ata

LOADS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
NETWORKS = {
    "E-6": ({"kind": "hex", "size": 6}, (("ihc", 7), ("ks", None))),
    "Q4": ({"kind": "hypercube", "dimension": 4}, (("ihc", 2), ("vrs", None), ("frs", None))),
}
FIFO_BYTES = 256
WARMUP = 2000


def run_at(algorithm: str, eta: int | None, spec: dict, load: float, seed: int, queueing: int | None = None):
    config = defaults().with_values(topology=spec, traffic__uniform__load=load, run__warmup_cycles=WARMUP,
                                    run__cycles=WARMUP + 60_000, run__seed=seed,
                                    timing__receiver_fifo_bytes=FIFO_BYTES)
    if algorithm == "ihc":
        return ihc(config, eta, 2, queueing=queueing)
    if algorithm == "frs":
        return frs_ata(config, 2, queueing=queueing)
    return (ks_ata if algorithm == "ks" else vrs_ata)(config, 2)


def load_sweep(results: Path, loads=LOADS, seed: int = 1) -> list[dict]:
    rows = []
    for name, (spec, algorithms) in NETWORKS.items():
        for algorithm, eta in algorithms:
            best = None
            for load in loads:
                run = run_at(algorithm, eta, spec, load, seed)
                best = best if best is not None else float(run.formula_cycles)
                rows.append({"network": name, "algorithm": algorithm, "background_load": load,
                             "cycles": float(run.completion_cycles), "best_case_cycles": best,
                             "copies_per_node_min": run.copies_per_node_min})
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "load.csv")
    draw(rows, out / "load.png")
    return rows


def draw(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(10, 4.2), layout="constrained")
    for ax, name in zip(axes, NETWORKS):
        for algorithm, _ in NETWORKS[name][1]:
            mine = [r for r in rows if r["network"] == name and r["algorithm"] == algorithm]
            ax.plot([r["background_load"] for r in mine], [r["cycles"] for r in mine], marker="o",
                    label=algorithm.upper())
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("background link load rho (uniform Poisson traffic)")
        ax.set_ylabel("all-to-all broadcast time (cycles)")
        ax.legend(fontsize=8)
    fig.suptitle("Paper 001: all-to-all reliable broadcast time against background load (mu = 2)", fontsize=10)
    fig.savefig(path, dpi=130)
    plt.close(fig)
