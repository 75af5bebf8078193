"""The paper's Figs 10-14: which points each needs, and how each is drawn (PNG) and tabulated (CSV)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ...machine.traffic import LOAD_BASES
from ...output import save_figure, write_text
from ...tools.text import balanced_lines
from ..broadcast_sweep import BroadcastSweep, run_broadcast_sweeps
from ..sweep import write_csv
from .claims import _flag, check_all, markdown
from .points import FULL, QUICK, Precision, hex_base

K_BCASTS = ("2bcast", "3bcast", "4bcast", "5bcast", "6bcast")


@dataclass(frozen=True)
class Figure:
    number: int
    title: str
    metric: str  # "latency" or "mean_delivery"
    series: tuple[tuple[str, int], ...]  # (algorithm, size) curves, or the compared ones for increases
    baseline: str | None = None  # with a baseline the curves are percent increases over it, per size

    @property
    def sizes(self) -> list[int]:
        return sorted({size for _, size in self.series})


FIGURES = {
    10: Figure(10, "Performance of simple broadcast (SBCAST)", "latency",
               (("sbcast", 5), ("sbcast", 7), ("sbcast", 9))),
    11: Figure(11, "Performance of multiple copy broadcasts (mesh size = 7)", "latency",
               tuple((k, 7) for k in K_BCASTS), baseline="sbcast"),
    12: Figure(12, "Performance comparison of simple broadcast algorithms (mesh size = 5)", "latency",
               (("sbcast", 5), ("sfbcast", 5))),
    13: Figure(13, "Comparison of SBCAST and SFBCAST with varying mesh size: latency", "latency",
               (("sfbcast", 5), ("sfbcast", 7), ("sfbcast", 9)), baseline="sbcast"),
    14: Figure(14, "Comparison of SBCAST and SFBCAST with varying mesh size: mean delivery time",
               "mean_delivery", (("sfbcast", 5), ("sfbcast", 7), ("sfbcast", 9)), baseline="sbcast"),
}


AXIS_LABEL = {
    "link": "link load (offered mean link utilisation of the regular traffic)",
    "node": "load (per-node generation rate / a link's peak I/O rate of 4 MBytes/s)",
}


def sweeps(figure: Figure, precision: Precision, basis: str) -> dict[int, BroadcastSweep]:
    """The figure's sweep at each mesh size: `harts sweep` on E-size with --broadcast its curves there, --baseline
    its baseline and --to-saturation (harts.experiments.broadcast_sweep)."""
    return {size: BroadcastSweep(hex_base(size, basis), tuple(a for a, s in figure.series if s == size),
                                 precision=precision, baseline=figure.baseline, to_saturation=True)
            for size in figure.sizes}


def reproduce(numbers: list[int], results: Path, quick: bool = False, resume: bool = False,
              workers: int | None = None, dask_scheduler: str | None = None, progress: bool = True,
              bases: tuple[str, ...] = LOAD_BASES) -> dict:
    """Run the figures' sweeps (shared points once) and write each figure's PNG and CSV under each reading of the
    load (figures/fig10_link.png, ...); with all five, also check the paper's claims about them (claims_link.json,
    ...). Returns {basis: {figure number: files and rows, "saturation": {size: probe}, "claims": verdicts}}."""
    precision = QUICK if quick else FULL
    every = {(basis, number, size): sweep for basis in bases for number in numbers
             for size, sweep in sweeps(FIGURES[number], precision, basis).items()}
    found = dict(zip(every, run_broadcast_sweeps(list(every.values()), results, resume=resume, workers=workers,
                                                 dask_scheduler=dask_scheduler, progress=progress)))
    written = {}
    out = results / "figures"
    out.mkdir(parents=True, exist_ok=True)
    for basis in bases:
        probed = {size: found[b, n, size]["saturation"] for b, n, size in every if b == basis}
        saturation = {size: probe["saturation_load"] for size, probe in probed.items()}
        mine = written[basis] = {"saturation": probed}
        for number in numbers:
            figure = FIGURES[number]
            rows = figure_rows(figure, {size: found[basis, number, size]["points"] for size in figure.sizes},
                               precision, basis)
            stem = out / f"fig{figure.number}_{basis}"
            write_csv(rows, stem.with_suffix(".csv"))
            draw(figure, rows, saturation, precision, basis, stem.with_suffix(".png"))
            mine[figure.number] = {"png": str(stem.with_suffix(".png")), "csv": str(stem.with_suffix(".csv")),
                                   "rows": rows}
        if set(FIGURES) <= set(mine):
            verdicts = check_all({n: mine[n]["rows"] for n in FIGURES}, probed)
            write_text(results / f"claims_{basis}.json", json.dumps(verdicts, indent=1))
            write_text(results / f"claims_{basis}.md", markdown(verdicts, basis))
            mine["claims"] = verdicts
    if all("claims" in mine for mine in written.values()):
        write_text(results / "points.md",
                   points_markdown({basis: [r for n in FIGURES for r in mine[n]["rows"]]
                                    for basis, mine in written.items()}))
    return written


def points_markdown(rows: dict[str, list[dict]]) -> str:
    """How the points of the figures ended, a row per reading of the load: `rows` holds each reading's rows of
    Figs 10-14, as reproduce makes them or as their CSVs give them back. A point is one algorithm on one size at
    one load; it counts as within ±5% when its figures draw it solid (for a percent increase, when it and its
    baseline are), and as saturated, whatever its intervals, when the network carried < 95% of the regular
    bytes."""
    lines = [("| reading | points | broadcasts | within ±5% at 95% confidence | out of budget (drawn hollow) | "
              "saturated (under 95% of the regular bytes carried) |"), "|---|---|---|---|---|---|"]
    for basis, mine in rows.items():
        points: dict = {}
        for r in mine:
            point = points.setdefault((r["algorithm"], int(r["size"]), float(r["load"])), {
                "broadcasts": int(r["broadcasts"]), "saturated": _flag(r["saturated"]), "precise": True})
            point["precise"] &= _flag(r["precise"])
        unsaturated = [p for p in points.values() if not p["saturated"]]
        precise = sum(p["precise"] for p in unsaturated)
        lines.append(f"| {basis} | {len(points)} | {sum(p['broadcasts'] for p in points.values()):,} | {precise} | "
                     f"{len(unsaturated) - precise} | {len(points) - len(unsaturated)} |")
    return "\n".join(lines) + "\n"


def write_tables(results: Path) -> list[Path]:
    """Rewrite the Markdown tables of `results` (a `harts reproduce` directory) from its claims_*.json and
    figures/*.csv: the verdicts of each reading found, and, with both readings' figures, the points table."""
    import csv

    written = []
    for basis in LOAD_BASES:
        if (results / f"claims_{basis}.json").is_file():
            verdicts = json.loads((results / f"claims_{basis}.json").read_text())
            write_text(results / f"claims_{basis}.md", markdown(verdicts, basis))
            written.append(results / f"claims_{basis}.md")
    csvs = {basis: [results / "figures" / f"fig{n}_{basis}.csv" for n in FIGURES] for basis in LOAD_BASES}
    if all(path.is_file() for paths in csvs.values() for path in paths):
        rows = {basis: [r for path in paths for r in csv.DictReader(path.read_text().splitlines())]
                for basis, paths in csvs.items()}
        write_text(results / "points.md", points_markdown(rows))
        written.append(results / "points.md")
    return written


def figure_rows(figure: Figure, swept: dict[int, list[dict]], precision: Precision, basis: str) -> list[dict]:
    """The figure's CSV rows from its sweeps' rows (`swept`, by size): a curve's value is its measure, or with a
    baseline its percent increase over it, precise only if both points are."""
    rows = []
    for algorithm, size in figure.series:
        for point in (r for r in swept[size] if r["algorithm"] == algorithm):
            value, half = point[figure.metric], point[f"{figure.metric}_half_width"]
            precise = point["precise"]
            if figure.baseline:
                value = point[f"{figure.metric}_increase_percent"]
                half = point[f"{figure.metric}_increase_half_width"]
                precise = precise and point["baseline_precise"]
            rows.append({
                "figure": figure.number, "algorithm": algorithm, "size": size, "load": point["load"],
                "load_basis": basis, "metric": ("percent_increase_" if figure.baseline else "") + figure.metric,
                "value": value, "half_width_95": half, "precise": precise,
                "saturated": point["saturated"], "replications": point["replications"],
                "broadcasts": point["broadcasts"], "regular_latency": point["regular_latency"],
                "accepted_over_offered": point["accepted_over_offered"], "precision": precision.name,
            })
    return rows


def draw(figure: Figure, rows: list[dict], saturation: dict, precision: Precision, basis: str, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 5.0), layout="constrained")
    curves = list(dict.fromkeys((r["algorithm"], r["size"]) for r in rows))
    imprecise = False
    for index, (algorithm, size) in enumerate(curves):
        mine = [r for r in rows if (r["algorithm"], r["size"]) == (algorithm, size)]
        label = f"{algorithm.upper()}, E-{size}" if len(figure.sizes) > 1 else algorithm.upper()
        color = f"C{index}"
        x = [r["load"] for r in mine]
        y = [r["value"] for r in mine]
        half = [r["half_width_95"] for r in mine]
        # on the log axis of the latency figures a lower bound at or below zero cannot be drawn
        lower = half if figure.baseline else [min(h, 0.9 * v) for h, v in zip(half, y)]
        ax.errorbar(x, y, yerr=[lower, half], color=color, marker="o", ms=4, capsize=2, lw=1.2, label=label,
                    mfc=color)
        for r in mine:
            if not r["precise"]:
                imprecise = True
                ax.plot(r["load"], r["value"], "o", ms=8, mfc="white", mec=color, zorder=5)
    # The saturation loads are named on a top axis, where no curve or error bar can run into them; sizes
    # that saturate at the same load share one tick.
    saturating = {}
    for size in figure.sizes:
        ax.axvline(saturation[size], color="grey", ls=":", lw=1)
        saturating.setdefault(saturation[size], []).append(f"E-{size}")
    top = ax.secondary_xaxis("top")
    top.set_xticks(list(saturating), [", ".join(names) for names in saturating.values()], fontsize=7,
                   color="grey")
    top.tick_params(color="grey")
    top.set_xlabel("regular traffic saturates", fontsize=7, color="grey", loc="right")
    ax.set_xlabel(AXIS_LABEL[basis])
    if figure.baseline:
        what = "latency" if figure.metric == "latency" else "mean delivery time"
        ax.set_ylabel(f"percent increase in {what} over {figure.baseline.upper()}")
    else:
        ax.set_ylabel("latency (clock cycles of 1.5 us)")
        ax.set_yscale("log")
    note = f"95% confidence intervals; {precision.name} precision"
    if not figure.baseline:
        note += " (lower bars cut at 10% of the value)"
    if imprecise:
        note += "; hollow: budget ended before the interval reached 5% of the mean"
    fig.suptitle(f"Fig. {figure.number}. {figure.title}", fontsize=9)
    ax.set_title(balanced_lines(note, 105), fontsize=7)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
