"""`harts sweep`: latency against offered load on any config, for any traffic pattern, with each pattern's saturation
throughput found to a stated tolerance.

A point is one run of the config with ``traffic.synthetic.pattern`` and ``traffic.synthetic.rate`` set (and
``run.seed``, one run per seed). What it reports is the run's summary over the measurement window
(harts.machine.statistics): offered and accepted throughput, latency split into source queueing and network time,
hops, and whether the run was stable. Points run through harts.experiments.sweep.run_tasks: each is saved as it
finishes, ``resume`` runs only what is missing, and local processes or a Dask cluster give the same numbers.

**Saturation** (``to_saturation``). The saturation throughput of a pattern is the accepted throughput of the largest
offered load the network carries stably: every seed's run stable by the rule of harts.machine.statistics. It is
bracketed between a stable offered load `lo` (0 at first) and an unstable one `hi`. `hi` starts at the pattern's
channel-load bound (harts.machine.patterns.throughput_bound) and grows by half while the run there is stable. Each
round then runs loads evenly spaced inside the bracket (as many as there are workers to spare) and moves `lo` up to
the largest stable one and `hi` down to the smallest unstable one above it, until hi - lo <= SATURATION_TOLERANCE x
hi. The result is known to that tolerance of the offered load,
given the rule; how far the rule's own verdict can sit from a longer run's is a matter of the window (MODEL.md,
Stability). Where the microprogram routes by dimension order and the bound is a link's, a load above the bound is
unstable whatever the window shows (SweepPoint.link_bound): the search never reports a saturation above it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from pathlib import Path

from ..errors import InputError, SimulationError
from ..machine.config import Config, check_run_keys, defaults, load_config
from ..output import save_figure, write_text
from .sweep import run_tasks, write_csv

SATURATION_TOLERANCE = 0.01
BOUND_SLACK = 1e-9  # a load this close above a link bound counts as at it (float rounding of fractions of it)
BOUND_GROWTH = 1.5  # hi's growth while the run at hi is stable
MAX_BOUND_GROWTHS = 8
# what a point reports of its run's summary, in this order (the CSV's columns after pattern, rate and seed)
POINT_FIELDS = (
    "offered_flits_per_node_cycle", "accepted_flits_per_node_cycle", "accepted_flits_per_node_cycle_min",
    "accepted_flits_per_node_cycle_max",
    "latency_mean_cycles", "latency_p50_cycles", "latency_p95_cycles", "latency_p99_cycles",
    "queueing_mean_cycles", "queueing_p50_cycles", "queueing_p95_cycles", "queueing_p99_cycles",
    "network_latency_mean_cycles", "network_latency_p50_cycles", "network_latency_p95_cycles",
    "network_latency_p99_cycles", "latency_max_cycles", "mean_hops", "stable", "packets", "packets_measured",
    "simulated_cycles", "wall_seconds")
STABILITY_FIELDS = ("backlog_growth_flits", "backlog_threshold_flits", "growing_sources", "above_link_bound")


@dataclass(frozen=True)
class Base:
    """The config every point starts from: a file (None: the built-in defaults) and the keys set on it, as
    (dotted key, value) pairs in the order given."""

    path: str | None
    values: tuple = ()

    def config(self, **more) -> Config:
        config = load_config(self.path) if self.path else defaults()
        return config.with_values({**dict(self.values), **{k.replace("__", "."): v for k, v in more.items()}})

    @cached_property
    def text(self) -> str:
        """What a point's key is made of: the file, its contents (so that a point run before the file was edited is
        not taken for one of the new file's) and the keys set."""
        contents = hashlib.sha256(Path(self.path).read_bytes()).hexdigest() if self.path else None
        return json.dumps({"path": self.path, "contents": contents, "values": [list(v) for v in self.values]},
                          sort_keys=True, default=str)


@dataclass(frozen=True)
class SweepPoint:
    base: Base
    pattern: str
    rate: float  # offered load, flits/node/cycle averaged over all nodes
    seed: int
    nodes: int = 1  # for the cost estimate only
    link_bound: float | None = None  # a load above this overloads a link for certain (Sweep.link_bounds), or None

    @property
    def key(self) -> str:
        text = json.dumps({"base": self.base.text, "pattern": self.pattern, "rate": repr(self.rate),
                           "seed": self.seed, "link_bound": self.link_bound}, sort_keys=True)
        return "sweep-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def cost(self) -> float:
        return self.nodes * (1 + self.rate)

    def config(self) -> Config:
        return self.base.config(traffic__synthetic__pattern=self.pattern, traffic__synthetic__rate=self.rate,
                                run__seed=self.seed)

    def run(self) -> dict:
        from ..machine.simulation import Simulation
        row = {"key": self.key, "pattern": self.pattern, "rate": self.rate, "seed": self.seed}
        try:
            result = Simulation(self.config()).run(keep=False)
        except SimulationError as exc:  # a deadlock past saturation, say: no number, and unstable
            return {**row, **{f: None for f in POINT_FIELDS}, "stable": False, "error": str(exc)}
        summary = result.summary()
        row.update({f: summary.get(f) for f in POINT_FIELDS}, stability=summary["stability"],
                   latency_histogram=summary["latency_histogram"], hops_histogram=summary["hops_histogram"],
                   peak_buffer_flits=summary.get("peak_buffer_flits"))
        if self.link_bound is not None and self.rate > self.link_bound * (1 + BOUND_SLACK):
            # the busiest link is offered more than it carries: its sources fall behind for ever, however slowly
            # a short window sees it (MODEL.md, Stability)
            row["stable"] = False
            row["stability"] = {**row["stability"], "stable": False, "above_link_bound": self.link_bound}
        return row


def parse_rates(text: str, what: str = "--rates") -> tuple[float, ...]:
    """'A:B:STEP' (A, A + STEP, ... up to B inclusive) or a comma list; every value positive and finite."""
    try:
        if ":" in text:
            first, last, step = (float(part) for part in text.split(":"))
            if not (0 < first <= last and step > 0) or (last - first) / step > 10_000:
                raise ValueError
            count = int(math.floor((last - first) / step + 1e-9)) + 1
            values = tuple(round(first + i * step, 12) for i in range(count))
        else:
            values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"{what} expects A:B:STEP (0 < A <= B, STEP > 0, at most 10,000 values) or a comma list of "
                         f"positive numbers, got {text!r}") from None
    if not all(0 < v < math.inf for v in values):
        raise InputError(f"{what} expects positive finite numbers, got {text!r}")
    return tuple(sorted(set(values)))


def bound(config: Config, pattern: str):
    """The pattern's channel-load bound on the config's network (harts.machine.patterns.Bound, under dimension-order
    routing), its throughput in flits/node/cycle; a pattern the network cannot take is an InputError."""
    from ..machine.patterns import throughput_bound
    from ..network import build_topology
    topology = build_topology(config.topology_spec)
    args = {"hotspot_nodes": config["traffic.synthetic.hotspot_nodes"].plain() or None,
            "hotspot_fraction": config["traffic.synthetic.hotspot_fraction"], "permutation_seed": config["run.seed"]}
    # a flit takes flit_bytes / bytes_per_cycle cycles on a link (a whole number on the flit-level kernel)
    cycles = Fraction(config["flow.flit_bytes"], config.bytes_per_cycle)
    try:
        found = throughput_bound(topology, pattern, cycles.numerator, torus_tie=config["routing.torus_tie"], **args)
    except ValueError as exc:
        raise InputError(f"--pattern {pattern}: {exc}") from None
    return replace(found, throughput=found.throughput * cycles.denominator)


def routes_by_dimension_order(program) -> bool:
    """Whether every forward and tee of the microprogram routes by dimension order: then a pattern's channel-load
    bound is exact, and a load above it overloads a link."""
    from ..controller import isa
    code = program.code
    forwards = (code[isa.CODE_OP] == isa.OP_FORWARD) | (code[isa.CODE_OP] == isa.OP_TEE)
    return bool(forwards.any()) and bool((code[isa.CODE_ARG, forwards] == isa.VIA_DIMENSION_ORDER).all())


@dataclass
class Sweep:
    """What `harts sweep` runs: the base config, the patterns, the offered loads (absolute, or fractions of each
    pattern's bound), the seeds, and whether to find each pattern's saturation."""

    base: Base
    patterns: tuple[str, ...]
    rates: tuple[float, ...] = ()
    bound_fractions: tuple[float, ...] = ()
    seeds: int = 1
    to_saturation: bool = False

    def __post_init__(self):
        config = self.base.config()
        # every point runs synthetic traffic: a warm-up that leaves it no window, or a run.packets it would ignore,
        # is refused as in a file with that traffic
        check_run_keys(self.base.config(traffic__synthetic__rate=1.0))
        from ..machine.simulation import Simulation
        simulation = Simulation(config)  # refuses what cannot run, before any point does
        self.nodes = simulation.nodes
        self.first_seed = config["run.seed"]
        found = {pattern: bound(config, pattern) for pattern in self.patterns}
        self.bounds = {pattern: b.throughput for pattern, b in found.items()}
        # where the bound is a link's and the routers route as the bound assumes, a load above it is unstable whatever
        # a window of the run shows; an injection or ejection bound depends on the NP's channels, and stays a guide
        exact = routes_by_dimension_order(simulation.microprogram)
        self.link_bounds = {pattern: b.throughput if exact and isinstance(b.bottleneck[0], int) else None
                            for pattern, b in found.items()}

    def point(self, pattern: str, rate: float, seed: int) -> SweepPoint:
        return SweepPoint(self.base, pattern, rate, seed, self.nodes, self.link_bounds[pattern])

    def grid(self) -> list[SweepPoint]:
        points = []
        for pattern in self.patterns:
            rates = set(self.rates) | {f * self.bounds[pattern] for f in self.bound_fractions}
            for rate in sorted(rates):
                points += [self.point(pattern, rate, self.first_seed + s) for s in range(self.seeds)]
        return points


def run_sweep(sweep: Sweep, results: Path, resume: bool = False, workers: int | None = None,
              dask_scheduler: str | None = None, progress: bool = True) -> dict:
    """Run the grid, then (to_saturation) the search; {"points": rows of every run, "saturation": one row per
    pattern}."""
    options = {"resume": resume, "workers": workers, "dask_scheduler": dask_scheduler, "progress": progress}
    rows = {row["key"]: row for row in run_points(sweep.grid(), results, **options)}
    saturation = []
    if sweep.to_saturation:
        saturation, searched = find_saturation(sweep, results, rows, options)
        rows.update(searched)
    ordered = sorted(rows.values(), key=lambda r: (sweep.patterns.index(r["pattern"]), r["rate"], r["seed"]))
    return {"points": ordered, "saturation": saturation}


def run_points(points: list[SweepPoint], results: Path, **options) -> list[dict]:
    """Each point's row, in the points' order (run_tasks' options: resume, workers, dask_scheduler, progress)."""
    done = run_tasks(points, results, description="sweep", **options) if points else {}
    return [done[point.key] for point in points]


def _stable(rows: list[dict]) -> bool:
    return all(r["stable"] is True for r in rows)


def find_saturation(sweep: Sweep, results: Path, known: dict, options: dict) -> tuple[list[dict], dict]:
    """The search of the module docstring, for every pattern at once (a round's points run together)."""
    runs = dict(known)

    def at(pattern: str, rate: float) -> list[dict]:
        return [runs[sweep.point(pattern, rate, sweep.first_seed + s).key] for s in range(sweep.seeds)]

    def run(wanted: list[tuple[str, float]], description: str) -> None:
        tasks = [sweep.point(p, r, sweep.first_seed + s) for p, r in wanted for s in range(sweep.seeds)]
        tasks = [t for t in tasks if t.key not in runs]
        if tasks:
            runs.update(run_tasks(tasks, results, description=description, **options))

    brackets = {p: [0.0, sweep.bounds[p]] for p in sweep.patterns}
    growths = 0
    while True:  # hi must be unstable
        run([(p, hi) for p, (_, hi) in brackets.items()], "saturation: the bounds")
        stable = [p for p, (_, hi) in brackets.items() if _stable(at(p, hi))]
        if not stable:
            break
        growths += 1
        if growths > MAX_BOUND_GROWTHS:
            raise SimulationError(f"{', '.join(stable)}: still stable at {BOUND_GROWTH:g}^{MAX_BOUND_GROWTHS} times "
                                  f"the bound; no saturation to find")
        for p in stable:
            brackets[p] = [brackets[p][1], brackets[p][1] * BOUND_GROWTH]
    rounds = 0
    while True:
        open_ = [p for p, (lo, hi) in brackets.items() if hi - lo > SATURATION_TOLERANCE * hi]
        if not open_:
            break
        rounds += 1
        spare = max(1, (options["workers"] or os.cpu_count() or 1) // (len(open_) * sweep.seeds))
        wanted = []
        for p in open_:
            lo, hi = brackets[p]
            wanted += [(p, lo + (hi - lo) * (i + 1) / (spare + 1)) for i in range(spare)]
        run(wanted, f"saturation: round {rounds}")
        for p in open_:
            lo, hi = brackets[p]
            for rate in sorted(r for q, r in wanted if q == p):
                if _stable(at(p, rate)):
                    lo = rate
                else:
                    hi = rate
                    break
            brackets[p] = [lo, hi]
    rows = []
    for p, (lo, hi) in brackets.items():
        carried = at(p, lo) if lo > 0 else []
        accepted = [r["accepted_flits_per_node_cycle"] for r in carried]
        rows.append({"pattern": p, "bound_flits_per_node_cycle": sweep.bounds[p],
                     "saturation_throughput": sum(accepted) / len(accepted) if accepted else 0.0,
                     "stable_offered": lo, "unstable_offered": hi, "tolerance": SATURATION_TOLERANCE,
                     "fraction_of_bound": lo / sweep.bounds[p]})
    return rows, {k: v for k, v in runs.items() if k not in known}


def curves(points: list[dict]) -> list[dict]:
    """One row per pattern and rate: the seeds' means of every numeric field; stable only if every seed was."""
    out = []
    groups: dict[tuple, list[dict]] = {}
    for r in points:
        groups.setdefault((r["pattern"], r["rate"]), []).append(r)
    for (pattern, rate), rows in groups.items():
        row = {"pattern": pattern, "rate": rate, "seeds": len(rows)}
        for name in POINT_FIELDS:
            values = [r[name] for r in rows if r[name] is not None]
            if name == "stable":
                row[name] = _stable(rows)
            else:
                row[name] = sum(values) / len(values) if len(values) == len(rows) and values else None
        out.append(row)
    return out


def csv_rows(points: list[dict]) -> list[dict]:
    """The points as the CSV has them: the fields, then the stability verdict's numbers."""
    rows = []
    for r in points:
        verdict = r.get("stability") or {}
        rows.append({"pattern": r["pattern"], "rate": r["rate"], "seed": r["seed"],
                     **{f: r[f] for f in POINT_FIELDS}, **{f: verdict.get(f) for f in STABILITY_FIELDS},
                     "error": r.get("error", "")})
    return rows


def write(sweep: Sweep, found: dict, results: Path, stem: str, plot: str | None = None) -> list[Path]:
    """DIR/STEM.csv (a row per run), STEM.json (every run with its histograms and verdict, the curves, the
    saturation), STEM_saturation.csv, and the plot."""
    results.mkdir(parents=True, exist_ok=True)
    files = [results / f"{stem}.csv", results / f"{stem}.json"]
    write_csv(csv_rows(found["points"]), files[0])
    write_text(files[1], json.dumps({"config": sweep.base.path, "set": [list(v) for v in sweep.base.values],
                                     "patterns": list(sweep.patterns), "seeds": sweep.seeds,
                                     "bounds": sweep.bounds, "points": [{k: v for k, v in r.items() if k != "key"}
                                                                        for r in found["points"]],
                                     "curves": curves(found["points"]), "saturation": found["saturation"]},
                                    indent=1))
    if found["saturation"]:
        files.append(results / f"{stem}_saturation.csv")
        write_csv(found["saturation"], files[-1])
    if plot:
        draw(found, plot, stem)
        files.append(Path(plot))
    return files


def draw(found: dict, path: str, title: str) -> None:
    """Mean latency against accepted throughput, a curve per pattern; hollow markers are unstable runs (their
    latency grows with the window); a pattern's saturation throughput is a dotted line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = curves(found["points"])
    saturation = {r["pattern"]: r["saturation_throughput"] for r in found["saturation"]}
    fig, ax = plt.subplots(figsize=(7, 4.6), layout="constrained")
    for index, pattern in enumerate(dict.fromkeys(r["pattern"] for r in rows)):
        colour = f"C{index}"
        mine = sorted((r for r in rows if r["pattern"] == pattern and r["latency_mean_cycles"] is not None),
                      key=lambda r: r["rate"])
        x = [r["accepted_flits_per_node_cycle"] for r in mine]
        y = [r["latency_mean_cycles"] for r in mine]
        ax.plot(x, y, "-", color=colour, lw=1, label=pattern)
        for xi, yi, r in zip(x, y, mine):
            ax.plot(xi, yi, "o", ms=4, color=colour, mfc=colour if r["stable"] else "none")
        if pattern in saturation:
            ax.axvline(saturation[pattern], color=colour, ls=":", lw=1)
    ax.plot([], [], "o", color="grey", mfc="none", label="unstable (latency grows with the window)")
    if saturation:
        ax.plot([], [], ":", color="grey", label="saturation throughput")
    ax.set_yscale("log")
    ax.set_xlabel("accepted throughput (flits per node per cycle)")
    ax.set_ylabel("mean latency (cycles, creation to delivery)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
