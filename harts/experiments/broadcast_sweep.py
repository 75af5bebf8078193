"""`harts sweep CONFIG --broadcast ALG[,ALG...]`: broadcast latency and mean delivery time against load on a hexagonal
mesh, a curve per broadcast algorithm, under the workload of Kandlur & Shin's section 5.

A point (harts.experiments.kandlur_shin.points.Point) is the config at one load, read under
``traffic.uniform.load_basis``: Poisson packets at every node, each a broadcast of the algorithm with probability
0.001 and otherwise a regular packet to a destination drawn with probability inversely proportional to its
distance, lengths drawn from ``traffic.uniform.lengths``. It is replicated until the 95% confidence intervals of both
measures are within 5% of their means, or its budget ends (the precision: Precision). The replication window is set
by the precision (enough broadcasts), not by ``run.cycles``. Replication i of every algorithm at one load sees the
same traffic, so a baseline's percent increases come from paired replications.

**Saturation** (``to_saturation``): the load at which the regular traffic saturates the network, found as
SaturationProbe finds it: the first load in steps of SATURATION_STEP at which the network carries under 95% of the
offered regular bytes, run with the baseline (or the first algorithm). Without loads of its own, such a sweep runs
0.05 and then the steps up to and including that load. `harts figure` is this sweep on E-5, E-7 and E-9 under each
reading of the load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..output import save_figure, write_text
from .kandlur_shin.points import (
    FULL,
    Point,
    Precision,
    SaturationProbe,
    paired_increase,
)
from .load_sweep import Base
from .sweep import run_tasks, write_csv

SATURATION_STEP = 0.1
MEASURES = ("latency", "mean_delivery")
# what a row reports of its point, after algorithm and load (the CSV's columns)
ROW_FIELDS = ("latency", "latency_half_width", "mean_delivery", "mean_delivery_half_width", "precise",
              "saturated", "replications", "broadcasts", "regular_latency", "accepted_over_offered")
INCREASE_FIELDS = ("latency_increase_percent", "latency_increase_half_width", "mean_delivery_increase_percent",
                   "mean_delivery_increase_half_width", "baseline_precise")


def loads_up_to(saturation: float) -> list[float]:
    """0.05, then steps of SATURATION_STEP up to and including the saturation load."""
    steps = int(round(saturation / SATURATION_STEP))
    return [0.05] + [round(SATURATION_STEP * i, 1) for i in range(1, steps + 1)]


@dataclass(frozen=True)
class BroadcastSweep:
    """The algorithms (and the baseline) at each load of a config; with to_saturation, the saturation probe and,
    without loads, the loads up to saturation."""

    base: Base
    algorithms: tuple[str, ...]
    loads: tuple[float, ...] = ()
    precision: Precision = FULL
    baseline: str | None = None
    to_saturation: bool = False

    def check(self) -> None:
        """Refuse, in one line, what the workload cannot run on, before any point runs."""
        from ..faults.fault_set import FAULT_KEYS, refuse_faults
        from ..machine.simulation import Simulation
        from ..machine.traffic import traffic_keys
        from ..np.kandlur_shin import ALGORITHMS
        config = self.base.config()
        if config.topology_spec["kind"] != "hex":
            raise InputError(f"--broadcast runs Kandlur & Shin's workload on the hexagonal mesh; the config's "
                             f"topology is {config.topology_spec['kind']!r}")
        unknown = [a for a in (*self.algorithms, self.baseline) if a is not None and a not in ALGORITHMS]
        if unknown:
            raise InputError(f"--broadcast: unknown algorithm {unknown[0]!r}: expected one of {', '.join(ALGORITHMS)}")
        if config["np.program"] != "kandlur_shin":
            raise InputError(f"--broadcast needs np.program kandlur_shin, whose relay procedures the algorithms are; "
                             f"the config has {config['np.program']!r}")
        refuse_faults(config, FAULT_KEYS, "--broadcast waits for every node's copy, so it needs",
                      "harts faults measures broadcasts under faults")
        own = [k for k in traffic_keys(config) if k != "traffic.uniform.load"]
        if own:
            raise InputError(f"--broadcast replaces the config's traffic with its workload: set {own[0]} to its "
                             f"empty value, or leave it out")
        machine = Simulation(config)
        if machine.kernel != "cut_through":
            raise InputError(f"--broadcast runs on the cut-through kernel; microcode {config['microcode']!r} switches "
                             f"by {machine.switching}")
        if not self.loads and not self.to_saturation:
            raise InputError("--broadcast needs --rates (loads) or --to-saturation")

    @property
    def probe_algorithm(self) -> str:
        return self.baseline or self.algorithms[0]

    def probe(self) -> SaturationProbe:
        return SaturationProbe(self.base, self.precision, SATURATION_STEP, self.probe_algorithm)

    def all_loads(self, saturation_load: float | None) -> list[float]:
        loads = set(self.loads)
        if self.to_saturation and not self.loads:
            loads |= set(loads_up_to(saturation_load))
        return sorted(loads)

    @property
    def measured(self) -> tuple[str, ...]:
        """The algorithms run: the curves, then the baseline."""
        return tuple(dict.fromkeys((*self.algorithms, *([self.baseline] if self.baseline else []))))

    def points(self, saturation_load: float | None) -> list[Point]:
        return [Point(algorithm, load, self.precision, self.base) for algorithm in self.measured
                for load in self.all_loads(saturation_load)]

    def rows(self, done: dict, saturation_load: float | None) -> list[dict]:
        """A row per algorithm (the baseline's own curve only if it is one of them) and load."""
        rows = []
        for algorithm in self.algorithms:
            for load in self.all_loads(saturation_load):
                found = done[Point(algorithm, load, self.precision, self.base).key]
                row = {"algorithm": algorithm, "load": load, "load_basis": found["basis"],
                       **{name: found[name] for name in ROW_FIELDS}, "precision": self.precision.name}
                if self.baseline:
                    base = done[Point(self.baseline, load, self.precision, self.base).key]
                    for measure in MEASURES:
                        value, half = paired_increase(found["runs"], base["runs"], measure)
                        row[f"{measure}_increase_percent"], row[f"{measure}_increase_half_width"] = value, half
                    row["baseline_precise"] = base["precise"]
                rows.append(row)
        return rows


def run_broadcast_sweeps(sweeps: list[BroadcastSweep], results: Path, **options) -> list[dict]:
    """Every sweep's probe, then every sweep's points, each in one pool of workers (a point two sweeps share runs
    once); per sweep {"points": rows, "saturation": the probe's result or None, "runs": the points' results}.
    `options`: run_tasks' resume, workers, dask_scheduler and progress."""
    probes = list({s.probe().key: s.probe() for s in sweeps if s.to_saturation}.values())
    probed = run_tasks(probes, results, description="saturation", **options) if probes else {}
    saturation = [probed[s.probe().key] if s.to_saturation else None for s in sweeps]
    wanted = {p.key: p for s, found in zip(sweeps, saturation)
              for p in s.points(found["saturation_load"] if found else None)}
    done = run_tasks(list(wanted.values()), results, description="points", **options)
    out = []
    for sweep, found in zip(sweeps, saturation):
        load = found["saturation_load"] if found else None
        out.append({"points": sweep.rows(done, load), "saturation": found,
                    "runs": [done[p.key] for p in sweep.points(load)]})
    return out


def write(sweep: BroadcastSweep, found: dict, results: Path, stem: str, plot: str | None = None) -> list[Path]:
    """DIR/STEM.csv (a row per algorithm and load), STEM.json (the rows, every point with its replications, the
    saturation probe), STEM_saturation.csv (the probe's loads) and the plot."""
    results.mkdir(parents=True, exist_ok=True)
    files = [results / f"{stem}.csv", results / f"{stem}.json"]
    write_csv(found["points"], files[0])
    write_text(files[1], json.dumps({
        "config": sweep.base.path, "set": [list(v) for v in sweep.base.values], "algorithms": list(sweep.algorithms),
        "baseline": sweep.baseline, "precision": sweep.precision.name, "rows": found["points"],
        "points": [{k: v for k, v in r.items() if k != "key"} for r in found["runs"]],
        "saturation": found["saturation"]}, indent=1))
    if found["saturation"]:
        files.append(results / f"{stem}_saturation.csv")
        write_csv([{k: v for k, v in probe.items() if not isinstance(v, (list, dict))}
                   for probe in found["saturation"]["probes"]], files[-1])
    if plot:
        draw(sweep, found, plot, stem)
        files.append(Path(plot))
    return files


def draw(sweep: BroadcastSweep, found: dict, path: str, title: str) -> None:
    """Latency against load, a curve per algorithm with its 95% intervals, hollow where the budget ended first;
    with a baseline, its percent increases beside; the saturation load dotted."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = ("latency", "latency_increase_percent") if sweep.baseline else ("latency",)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.8), layout="constrained", squeeze=False)
    for ax, measure in zip(axes[0], panels):
        half = measure.replace("_percent", "") + "_half_width"
        for index, algorithm in enumerate(sweep.algorithms):
            colour = f"C{index}"
            mine = [r for r in found["points"] if r["algorithm"] == algorithm]
            x, y, h = ([r["load"] for r in mine], [r[measure] for r in mine], [r[half] for r in mine])
            # on the log axis a lower bound at or below zero cannot be drawn
            lower = h if sweep.baseline else [min(e, 0.9 * v) for e, v in zip(h, y)]
            ax.errorbar(x, y, yerr=[lower, h], color=colour, marker="o", ms=4, capsize=2, lw=1.2,
                        label=algorithm.upper())
            for r in mine:  # an increase is as precise as the worse of its two points
                if not (r["precise"] and (measure == "latency" or r["baseline_precise"])):
                    ax.plot(r["load"], r[measure], "o", ms=8, mfc="white", mec=colour, zorder=5)
        if found["saturation"]:
            ax.axvline(found["saturation"]["saturation_load"], color="grey", ls=":", lw=1,
                       label="regular traffic saturates")
        ax.set_xlabel(f"load ({found['points'][0]['load_basis']} basis: traffic.uniform.load_basis)")
        if measure == "latency":
            ax.set_ylabel("broadcast latency (cycles)")
            ax.set_yscale("log")
        else:
            ax.set_ylabel(f"percent increase in latency over {sweep.baseline.upper()}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{title}: 95% confidence intervals, {sweep.precision.name} precision; hollow: budget ended "
                 f"before the interval reached 5% of the mean", fontsize=8)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
