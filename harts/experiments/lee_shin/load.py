"""Paper 001, section VI-B: "In the general case of rho > 0, the execution times of the various algorithms
will fall between the best and worst-case execution times shown in Tables II and IV." Each algorithm runs
over uniform Poisson traffic at link load rho (MODEL.md, Traffic), starting after the warm-up, with the
same fixed schedule as in dedicated mode; its time is from its start to its last copy. Every load point
runs with several seeds of the background traffic; the figure shows their mean and range, with each
algorithm's dedicated best case and its worst case (every hop stored, D = 0) beside it. Receiver FIFOs
are 256 bytes here: with 64, an IHC packet that queues behind another while the relay's refused-forward
path runs overflows the FIFO (MODEL.md, "Lee & Shin's IHC").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...machine.config import defaults
from ...output import save_figure
from ..sweep import run_tasks, write_csv
from .ata import run_algorithm

LOADS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
SEEDS = (1, 2, 3, 4, 5)
NETWORKS = {  # name: (topology, ((algorithm, eta), ...))
    "E-6": ({"kind": "hex", "size": 6}, (("ihc", 7), ("ks", None))),
    "SQ_5": ({"kind": "torus", "dims": [5, 5]}, (("ihc", 5), ("vsq", None))),
    "Q4": ({"kind": "hypercube", "dimension": 4}, (("ihc", 2), ("vrs", None), ("frs", None))),
}
FIFO_BYTES = 256
WARMUP = 2000
MU = 2


def run_at(algorithm: str, eta: int | None, spec: dict, load: float, seed: int, queueing: int | None = None):
    config = defaults().with_values(topology=spec, traffic__uniform__load=load, run__warmup_cycles=WARMUP,
                                    run__cycles=WARMUP + 60_000, run__seed=seed,
                                    timing__receiver_fifo_bytes=FIFO_BYTES)
    return run_algorithm(config, algorithm, MU, eta, queueing=queueing)


@dataclass(frozen=True)
class LoadPoint:
    """One all-to-all broadcast over background traffic: a task for `run_tasks`. At load 0 the seed does not
    matter, and the same point also gives the worst case (`queueing` = 0)."""
    network: str
    algorithm: str
    load: float
    seed: int

    @property
    def key(self) -> str:
        return f"paper001-{self.network}-{self.algorithm}-load{self.load:g}-seed{self.seed}"

    @property
    def cost(self) -> float:
        return self.load + (1 if self.network == "E-6" else 0)

    def run(self) -> dict:
        spec, algorithms = NETWORKS[self.network]
        eta = dict(algorithms)[self.algorithm]
        run = run_at(self.algorithm, eta, spec, self.load, self.seed)
        out = {"key": self.key, "network": self.network, "algorithm": self.algorithm, "background_load": self.load,
               "seed": self.seed, "cycles": float(run.completion_cycles),
               "copies_per_node_min": run.copies_per_node_min, "contention_free": run.contention_free}
        if self.load == 0:
            out["best_case_cycles"] = float(run.formula_cycles)
            out["worst_case_cycles"] = float(run_at(self.algorithm, eta, spec, 0.0, self.seed, 0).completion_cycles)
        return out


def points(loads=LOADS, seeds=SEEDS) -> list[LoadPoint]:
    return [LoadPoint(name, algorithm, load, seed)
            for name, (_, algorithms) in NETWORKS.items() for algorithm, _ in algorithms
            for load in loads for seed in (seeds if load > 0 else seeds[:1])]


def load_sweep(results: Path, loads=LOADS, seeds=SEEDS, resume: bool = False, workers: int | None = None,
               dask_scheduler: str | None = None, progress: bool = True) -> list[dict]:
    tasks = points(loads, seeds)
    done = run_tasks(tasks, results, resume=resume, workers=workers, dask_scheduler=dask_scheduler,
                     progress=progress, description="paper 001 under load")
    rows = [{k: v for k, v in done[task.key].items() if k != "key"} for task in tasks]
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv([{**r, **dict(zip(("best_case_cycles", "worst_case_cycles"), bounds(rows, r)))} for r in rows],
              out / "load.csv")
    draw(rows, out / "load.png")
    return rows


def bounds(rows: list[dict], row: dict) -> tuple[float, float]:
    """The dedicated best case and the worst case (D = 0) of the row's algorithm on its network."""
    zero = next(r for r in rows if r["network"] == row["network"] and r["algorithm"] == row["algorithm"]
                and "best_case_cycles" in r)
    return zero["best_case_cycles"], zero["worst_case_cycles"]


def summary(rows: list[dict]) -> list[dict]:
    """Per network, algorithm and load: the mean, least and greatest time over the seeds."""
    keys = sorted({(r["network"], r["algorithm"], r["background_load"]) for r in rows},
                  key=lambda k: (list(NETWORKS).index(k[0]), k[1], k[2]))
    out = []
    for network, algorithm, load in keys:
        times = [r["cycles"] for r in rows
                 if (r["network"], r["algorithm"], r["background_load"]) == (network, algorithm, load)]
        out.append({"network": network, "algorithm": algorithm, "background_load": load, "runs": len(times),
                    "mean_cycles": sum(times) / len(times), "min_cycles": min(times), "max_cycles": max(times)})
    return out


def draw(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = summary(rows)
    fig, axes = plt.subplots(1, len(NETWORKS), figsize=(14, 4.4), layout="constrained")
    for ax, name in zip(axes, NETWORKS):
        for index, (algorithm, _) in enumerate(NETWORKS[name][1]):
            mine = [r for r in table if r["network"] == name and r["algorithm"] == algorithm]
            loads = [r["background_load"] for r in mine]
            mean = [r["mean_cycles"] for r in mine]
            spread = [[m - r["min_cycles"] for m, r in zip(mean, mine)], [r["max_cycles"] - m for m, r in zip(mean, mine)]]
            colour = f"C{index}"
            ax.errorbar(loads, mean, yerr=spread, marker="o", capsize=3, color=colour,
                        label=f"{algorithm.upper()} (mean, range of {mine[-1]['runs']} seeds)")
            best, worst = bounds(rows, next(r for r in rows if r["network"] == name and r["algorithm"] == algorithm))
            ax.axhline(worst, color=colour, ls="--", lw=0.9)
            ax.axhline(best, color=colour, ls=":", lw=0.9)
        ax.set_yscale("log")
        ax.set_title(f"{name}   (dotted: best case; dashed: worst case, D = 0)", fontsize=9)
        ax.set_xlabel("background link load rho (uniform Poisson traffic)")
        ax.set_ylabel("all-to-all broadcast time (cycles)")
        ax.legend(fontsize=7)
    fig.suptitle(f"Paper 001: all-to-all reliable broadcast time against background load (mu = {MU})", fontsize=10)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
