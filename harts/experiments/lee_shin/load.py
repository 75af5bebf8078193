"""Paper 001, section VI-B: "In the general case of rho > 0, the execution times of the various algorithms
will fall between the best and worst-case execution times shown in Tables II and IV." Each algorithm runs
over uniform Poisson traffic at link load rho (MODEL.md, Traffic), starting after the warm-up, with the
same fixed schedule as in dedicated mode; its time is from its start to its last copy. Every load point
runs with several seeds of the background traffic; the figure shows their mean and range, with each
algorithm's dedicated best case and its worst case (every hop stored, D = 0) beside it. Receiver FIFOs
are 256 bytes here: with 64, an IHC packet that queues behind another while the relay's refused-forward
path runs overflows the FIFO (MODEL.md, "Lee & Shin's IHC"). load.md gives the mean and range per load.
`fifo_peaks()` measures how full IHC's receiver FIFOs get, with FIFOs too large to overflow (fifo_peaks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...machine.config import defaults
from ...machine.simulation import Simulation
from ...machine.traffic import Traffic, build_traffic
from ...output import save_figure, write_text
from ..sweep import run_tasks, write_csv
from .ata import on_controller, run_algorithm

LOADS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
SEEDS = (1, 2, 3, 4, 5)
NETWORKS = {  # name: (topology, ((algorithm, eta), ...))
    "E-6": ({"kind": "hex", "size": 6}, (("ihc", 7), ("ks", None))),
    "SQ_5": ({"kind": "torus", "dims": [5, 5]}, (("ihc", 5), ("vsq", None))),
    "Q_4": ({"kind": "hypercube", "dimension": 4}, (("ihc", 2), ("vrs", None), ("frs", None))),
}
FIFO_BYTES = 256
WARMUP = 2000
MU = 2


def loaded(spec: dict, load: float, seed: int, fifo_bytes: int | None = None, **values):
    """The config of a run over background traffic."""
    return defaults().with_values(topology=spec, traffic__uniform__load=load, run__warmup_cycles=WARMUP,
                                  run__cycles=WARMUP + 60_000, run__seed=seed,
                                  timing__receiver_fifo_bytes=FIFO_BYTES if fifo_bytes is None else fifo_bytes,
                                  **values)


def run_at(algorithm: str, eta: int | None, spec: dict, load: float, seed: int, queueing: int | None = None):
    return run_algorithm(loaded(spec, load, seed), algorithm, MU, eta, queueing=queueing)


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
    write_text(out / "load.md", load_markdown(rows))
    return rows


def load_markdown(rows: list[dict]) -> str:
    """Per network and algorithm: the time at each load, the mean over the seeds and (in brackets) their
    range, then the worst case (D = 0)."""
    from .tables import NAMES, number
    table = summary(rows)
    loads = sorted({r["background_load"] for r in table})
    lines = ["| network | algorithm | " + " | ".join(f"rho = {x:g}" if i == 0 else f"{x:g}" for i, x in enumerate(loads))
             + " | worst case, D = 0 |", "|---" * (len(loads) + 3) + "|"]
    for name, (_, algorithms) in NETWORKS.items():
        for algorithm, eta in algorithms:
            mine = {r["background_load"]: r for r in table if (r["network"], r["algorithm"]) == (name, algorithm)}
            cells = [number(r["mean_cycles"]) if r["runs"] == 1 else
                     f"{r['mean_cycles']:.0f} ({r['min_cycles']:.0f}-{r['max_cycles']:.0f})"
                     for r in (mine[x] for x in loads)]
            _, worst = bounds(rows, next(r for r in rows if (r["network"], r["algorithm"]) == (name, algorithm)))
            label = NAMES[algorithm] + (f" (eta = {eta})" if eta is not None else "")
            lines.append(f"| {name} | {label} | " + " | ".join(cells) + f" | {number(worst)} |")
    return "\n".join(lines) + "\n"


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


# IHC's receiver FIFOs over background traffic: FIFOs too large to overflow, seed 1. SQ_8 as
# configs/torus_8x8.yaml routes it (routing.torus_tie positive); the others as the load sweep runs them.
FIFO_NETWORKS = {"SQ_8": ({"kind": "torus", "dims": [8, 8]}, 2, {"routing__torus_tie": "positive"}),
                 **{name: (spec, dict(algorithms)["ihc"], {}) for name, (spec, algorithms) in NETWORKS.items()}}
FIFO_LOADS = (0.1, 0.2, 0.3)
LARGE_FIFO_BYTES = 1 << 16
FIFO_SEED = 1


def fifo_peaks(results: Path) -> list[dict]:
    """Each network's peak receiver FIFO fill with IHC over the background at each of FIFO_LOADS, and with the
    background alone (IHC's controller, no schedule); written to RESULTS/paper001/fifo_peaks.csv and .md."""
    rows = []
    for name, (spec, eta, values) in FIFO_NETWORKS.items():
        for load in FIFO_LOADS:
            config = loaded(spec, load, FIFO_SEED, LARGE_FIFO_BYTES, **values)
            run = run_algorithm(config, "ihc", MU, eta)
            background = Simulation(on_controller(config, "ihc", "ihc"))
            alone = background.run(Traffic.concatenate(list(build_traffic(background.config,
                                                                          background.topology).chunks())))
            rows.append({"network": name, "eta": eta, "background_load": load, "seed": FIFO_SEED,
                         "fifo_bytes": LARGE_FIFO_BYTES, "ihc_fifo_peak_bytes": run.fifo_peak_bytes,
                         "background_fifo_peak_bytes": alone.summary()["fifo_peak_bytes"]})
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "fifo_peaks.csv")
    write_text(out / "fifo_peaks.md", fifo_peaks_markdown(rows))
    return rows


def fifo_peaks_markdown(rows: list[dict]) -> str:
    loads = sorted({r["background_load"] for r in rows})
    head = (f"Peak receiver FIFO fill in bytes, seed {rows[0]['seed']}, FIFOs of {rows[0]['fifo_bytes']} bytes. SQ_8 "
            f"with routing.torus_tie positive, as configs/torus_8x8.yaml.\n\n"
            "| network | IHC's eta | " + " | ".join(f"IHC, rho = {x:g}" for x in loads) + " | "
            + " | ".join(f"background alone, rho = {x:g}" for x in loads) + " |\n"
            + "|---" * (2 + 2 * len(loads)) + "|\n")
    lines = []
    for name in FIFO_NETWORKS:
        mine = sorted((r for r in rows if r["network"] == name), key=lambda r: r["background_load"])
        lines.append(f"| {name} | {mine[0]['eta']} | " + " | ".join(str(r["ihc_fifo_peak_bytes"]) for r in mine)
                     + " | " + " | ".join(str(r["background_fifo_peak_bytes"]) for r in mine) + " |\n")
    return head + "".join(lines)
