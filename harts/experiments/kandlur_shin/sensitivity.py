"""The two choices the paper leaves to the modeller, swept: how the saturation of regular traffic depends
on the BMU's structure (bus interfaces, queues) per mesh size, and how the spread among 4-, 5- and
6-BCAST depends on d / (S + rM) (paper statement 6).

S, r and d are not set directly: the sweep changes timing.bmu_setup_cycles (which adds to S) and
timing.link_delay_cycles (which adds to both d and S, MODEL.md "How S, r and d arise"), and `calibrate`
measures the S, r and d that result, so the x axis is measured, not assumed. Beside each measured spread
is the spread the functional model (harts.reference) gives at zero load with the same S, r and d.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from ...machine.traffic import (
    PAPER_LENGTH_PROBABILITIES,
    PAPER_LENGTHS,
    PAPER_MEAN_LENGTH,
)
from ...output import save_figure, write_text
from ...reference.kandlur_shin import best_case_latency, broadcast_copies
from ...tools.calibrate import calibrate
from ..broadcast_sweep import BroadcastSweep, run_broadcast_sweeps
from ..sweep import run_tasks, write_csv
from .points import FULL, QUICK, SaturationProbe, hex_base

# (bmu.bus_interfaces, bmu.queues): from one shared interface to more than a node has links
BMU_STRUCTURES = ((1, "single"), (2, "single"), (6, "single"), (6, "per_output"), (12, "single"),
                  (24, "single"), (24, "per_output"))
BMU_SIZES = (5, 7, 9)
SATURATION_STEP = 0.05

# statement 6: E-7 (the paper's Fig. 11 mesh) at a light and a moderate link load
SPREAD_SIZE = 7
SPREAD_LOADS = (0.05, 0.3)
SPREAD_ALGORITHMS = ("sbcast", "4bcast", "5bcast", "6bcast")
SETUP_CYCLES = (1, 50, 200)  # timing.bmu_setup_cycles: S = 7, 56, 206 cycles at link delay 0
LINK_DELAYS = (0, 20)  # timing.link_delay_cycles: d = 5, 25 cycles (and S 20 cycles more)


def bmu_model(interfaces: int, queues: str) -> tuple:
    return (("bmu.bus_interfaces", interfaces), ("bmu.queues", queues))


def timing_model(setup: int, link_delay: int) -> tuple:
    return (("timing.bmu_setup_cycles", setup), ("timing.link_delay_cycles", link_delay))


def sensitivity(results: Path, quick: bool = False, resume: bool = False, workers: int | None = None,
                dask_scheduler: str | None = None, progress: bool = True) -> dict:
    """Run both sweeps; write results/sensitivity/{bmu,spread}.{csv,png} and their Markdown tables (bmu.md,
    bmu_saturated.md, spread.md, spread_latency.md). Returns their rows."""
    precision = QUICK if quick else FULL
    options = {"resume": resume, "workers": workers, "dask_scheduler": dask_scheduler, "progress": progress}
    out = results / "sensitivity"
    out.mkdir(parents=True, exist_ok=True)

    probes = [SaturationProbe(hex_base(size, "link", bmu_model(*structure)), precision, SATURATION_STEP)
              for structure in BMU_STRUCTURES for size in BMU_SIZES]
    done = run_tasks(probes, results, description="BMU structures", **options)
    bmu_rows = [bmu_row(probe, done[probe.key]) for probe in probes]
    write_csv(bmu_rows, out / "bmu.csv")
    write_text(out / "bmu.md", bmu_markdown(bmu_rows))
    write_text(out / "bmu_saturated.md", bmu_saturated_markdown(bmu_rows))
    draw_bmu(bmu_rows, precision.name, out / "bmu.png")

    variants = [timing_model(setup, delay) for setup in SETUP_CYCLES for delay in LINK_DELAYS]
    # each timing is `harts sweep` on E-7 with --broadcast the four, --baseline sbcast, at the two loads
    spreads = [BroadcastSweep(hex_base(SPREAD_SIZE, "link", model), SPREAD_ALGORITHMS, SPREAD_LOADS, precision,
                              baseline="sbcast") for model in variants]
    swept = run_broadcast_sweeps(spreads, results, **options)
    spread_rows = [spread_row(model, load, {r["algorithm"]: r for r in found["points"] if r["load"] == load})
                   for model, found in zip(variants, swept) for load in SPREAD_LOADS]
    write_csv(spread_rows, out / "spread.csv")
    write_text(out / "spread.md", spread_markdown(spread_rows))
    write_text(out / "spread_latency.md", spread_latency_markdown(spread_rows))
    draw_spread(spread_rows, precision.name, out / "spread.png")
    summary = {"bmu": bmu_rows, "spread": spread_rows,
               "files": [str(out / name) for name in ("bmu.csv", "bmu.md", "bmu_saturated.md", "bmu.png", "spread.csv",
                                                      "spread.md", "spread_latency.md", "spread.png")]}
    write_text(out / "sensitivity.json", json.dumps(summary, indent=1))
    return summary


DEFAULT_BMU = (6, "single")  # the config's defaults (bmu.bus_interfaces, bmu.queues), set in bold in bmu.md


def bmu_markdown(rows: list[dict]) -> str:
    """The table EXPERIMENTS.md shows: a row per BMU structure, a column per mesh size, each cell the saturation
    load, then (mean link busy; bus interfaces busy) at it."""
    sizes = sorted({r["size"] for r in rows})
    by = {(r["bus_interfaces"], r["queues"], r["size"]): r for r in rows}
    lines = ["| BMU structure | " + " | ".join(f"E-{n}" for n in sizes) + " |", "|---" * (len(sizes) + 1) + "|"]
    for label, structure in _structures(rows):
        cells = [f"{r['saturation_load']:g} ({r['saturated_link_utilisation']:.2f}; "
                 f"{r['saturated_bmu_interface_utilisation']:.2f})" for r in (by[(*structure, n)] for n in sizes)]
        bold = "**" if structure == DEFAULT_BMU else ""
        lines.append("| " + " | ".join(f"{bold}{c}{bold}" for c in (label, *cells)) + " |")
    return "\n".join(lines) + "\n"


def _structures(rows: list[dict]) -> list[tuple[str, tuple[int, str]]]:
    """Each BMU structure in the rows' order, with its label: the first spelt out, the default marked."""
    labels = []
    for first, (interfaces, queues) in enumerate(dict.fromkeys((r["bus_interfaces"], r["queues"]) for r in rows)):
        label = (f"{interfaces} interface{'s' if interfaces > 1 else ''}, {queues} queue" if first == 0
                 else f"{interfaces}, {queues}")
        labels.append((label + (" (default)" if (interfaces, queues) == DEFAULT_BMU else ""), (interfaces, queues)))
    return labels


def bmu_saturated_markdown(rows: list[dict]) -> str:
    """The second table EXPERIMENTS.md shows: a row per BMU structure, and for each what was busy at the saturation
    load, each cell giving the mesh sizes' values in order: the busiest link, the bus interfaces, the share of
    their busy time they were blocked (holding a packet whose transmitter was busy), the packets queued in a BMU."""
    sizes = sorted({r["size"] for r in rows})
    by = {(r["bus_interfaces"], r["queues"], r["size"]): r for r in rows}
    columns = (("busiest link busy", "saturated_link_utilisation_max", "{:.2f}"),
               ("bus interfaces busy", "saturated_bmu_interface_utilisation", "{:.3f}"),
               ("of that, blocked", "saturated_bmu_interface_blocked", "{:.0%}"),
               ("packets queued in a BMU", "saturated_bmu_queue_mean_packets", "{:.0f}"))
    which = ", ".join(f"E-{n}" for n in sizes)
    lines = [f"| BMU structure ({which}) | " + " | ".join(title for title, _, _ in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for label, structure in _structures(rows):
        cells = [", ".join(form.format(by[(*structure, n)][key]) for n in sizes) for _, key, form in columns]
        bold = "**" if structure == DEFAULT_BMU else ""
        lines.append("| " + " | ".join(f"{bold}{c}{bold}" for c in (label, *cells)) + " |")
    return "\n".join(lines) + "\n"


def spread_markdown(rows: list[dict]) -> str:
    """The table EXPERIMENTS.md shows: a row per timing, in order of d / (S + rM), with the zero-load spread of the
    formula and the measured 4/5/6-BCAST increases over SBCAST (and their spread) at each load."""
    loads = sorted({r["load"] for r in rows})
    timings = sorted({(r["bmu_setup_cycles"], r["link_delay_cycles"]) for r in rows},
                     key=lambda t: next(r["d_over_S_plus_rM"] for r in rows
                                        if (r["bmu_setup_cycles"], r["link_delay_cycles"]) == t))
    by = {(r["bmu_setup_cycles"], r["link_delay_cycles"], r["load"]): r for r in rows}
    lines = ["| S | d | d / (S + rM) | zero-load spread (formula, same S, r, d) | "
             + " | ".join(f"measured at {load:g}: 4/5/6-BCAST (spread)" for load in loads) + " |",
             "|---" * (4 + len(loads)) + "|"]
    for timing in timings:
        first = by[(*timing, loads[0])]
        cells = [", ".join(f"{by[(*timing, load)][f'{a}bcast_increase']:.0f}%" for a in (4, 5, 6))
                 + f" ({by[(*timing, load)]['spread_points']:.0f})" for load in loads]
        lines.append(f"| {first['S']:g} | {first['d']:g} | {first['d_over_S_plus_rM']:.3f} | "
                     f"{first['zero_load_spread_points']:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def spread_latency_markdown(rows: list[dict]) -> str:
    """The latencies behind spread.md, in cycles: a block of rows per timing, in order of d / (S + rM). Its first row
    is Table I's zero-load latency over the workload's lengths; each measured row gives, per algorithm, the mean
    latency, its 95% half-width, and in brackets what load adds to the zero-load latency."""
    names = {"sbcast": "SBCAST", **{f"{k}bcast": f"{k}-BCAST" for k in (4, 5, 6)}}
    timings = sorted({(r["bmu_setup_cycles"], r["link_delay_cycles"]) for r in rows},
                     key=lambda t: next(r["d_over_S_plus_rM"] for r in rows
                                        if (r["bmu_setup_cycles"], r["link_delay_cycles"]) == t))
    lines = ["| S | d | link load | " + " | ".join(names[a] for a in SPREAD_ALGORITHMS) + " |",
             "|---" * (3 + len(SPREAD_ALGORITHMS)) + "|"]
    for timing in timings:
        mine = sorted((r for r in rows if (r["bmu_setup_cycles"], r["link_delay_cycles"]) == timing),
                      key=lambda r: r["load"])
        first = mine[0]
        lines.append(f"| {first['S']:g} | {first['d']:g} | 0 (formula) | "
                     + " | ".join(f"{first[f'{a}_zero_load_latency']:.0f}" for a in SPREAD_ALGORITHMS) + " |")
        for r in mine:
            cells = [f"{r[f'{a}_latency']:.0f} ± {r[f'{a}_latency_half_width_95']:.0f} "
                     f"(+{r[f'{a}_latency'] - r[f'{a}_zero_load_latency']:.0f})" for a in SPREAD_ALGORITHMS]
            lines.append(f"| {r['S']:g} | {r['d']:g} | {r['load']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _read_csv(path: Path) -> list[dict]:
    """A CSV's rows with numbers as numbers, as the sweep made them."""
    def number(text: str):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text
    return [{key: number(value) for key, value in row.items()} for row in csv.DictReader(path.read_text().splitlines())]


def write_tables(results: Path) -> list[Path]:
    """Rewrite the Markdown tables of `results`/sensitivity from its bmu.csv and spread.csv, without running."""
    out, written = results / "sensitivity", []
    for source, tables in (("bmu.csv", (("bmu.md", bmu_markdown), ("bmu_saturated.md", bmu_saturated_markdown))),
                           ("spread.csv", (("spread.md", spread_markdown),
                                           ("spread_latency.md", spread_latency_markdown)))):
        if (out / source).is_file():
            rows = _read_csv(out / source)
            for name, render in tables:
                write_text(out / name, render(rows))
                written.append(out / name)
    return written


def bmu_row(probe: SaturationProbe, found: dict) -> dict:
    """Where one BMU structure saturates E-n, and how busy links and BMU were at the last load carried and
    at the first load not carried."""
    model = dict(probe.base.values)
    row = {"bus_interfaces": model["bmu.bus_interfaces"], "queues": model["bmu.queues"], "size": found["size"],
           "saturation_load": found["saturation_load"], "precision": probe.precision.name}
    for name, at in (("carried", found["probes"][-2] if len(found["probes"]) > 1 else None),
                     ("saturated", found["probes"][-1])):
        for field in ("load", "accepted_over_offered", "link_utilisation", "link_utilisation_max",
                      "bmu_interface_utilisation", "bmu_interface_blocked", "bmu_queue_mean_packets"):
            row[f"{name}_{field}"] = at.get(field, float("nan")) if at else float("nan")
    return row


def spread_row(model: tuple, load: float, swept: dict) -> dict:
    """The 4/5/6-BCAST percent increases over SBCAST (paired) at one timing and load (`swept`: the broadcast
    sweep's row of each algorithm there), against the calibrated d / (S + rM) at the workload's mean length, and
    what they are at zero load."""
    timing = calibrate(hex_base(SPREAD_SIZE, "link", model).config())
    row = {**{key.split(".")[1]: value for key, value in model}, "load": load,
           "S": float(timing.S), "r": float(timing.r), "d": float(timing.d),
           "d_over_S_plus_rM": float(timing.d / (timing.S + timing.r * PAPER_MEAN_LENGTH))}
    zero_load = zero_load_latencies(timing)
    measured = {}
    for algorithm in SPREAD_ALGORITHMS[1:]:
        value, half = swept[algorithm]["latency_increase_percent"], swept[algorithm]["latency_increase_half_width"]
        measured[algorithm] = value
        row[f"{algorithm}_increase"], row[f"{algorithm}_half_width_95"] = value, half
        row[f"{algorithm}_zero_load_increase"] = 100 * (zero_load[algorithm] / zero_load["sbcast"] - 1)
    row["spread_points"] = max(measured.values()) - min(measured.values())
    zero = [row[f"{a}_zero_load_increase"] for a in SPREAD_ALGORITHMS[1:]]
    row["zero_load_spread_points"] = max(zero) - min(zero)
    row["sbcast_latency"] = swept["sbcast"]["latency"]
    row["sbcast_zero_load_latency"] = zero_load["sbcast"]
    for algorithm in SPREAD_ALGORITHMS:  # what the increases are made of: each one's latency, and at zero load
        found = swept[algorithm]
        row[f"{algorithm}_latency"], row[f"{algorithm}_latency_half_width_95"] = found["latency"], found[
            "latency_half_width"]
        row[f"{algorithm}_zero_load_latency"] = zero_load[algorithm]
    return row


def zero_load_latencies(timing) -> dict[str, float]:
    """Each algorithm's best-case latency on E-n (the slowest copy's T(S + rM) + Cd), averaged over the
    workload's packet lengths."""
    return {algorithm: float(sum(p * best_case_latency(broadcast_copies(algorithm, SPREAD_SIZE), timing.S, timing.r,
                                                       timing.d, length)
                                 for length, p in zip(PAPER_LENGTHS, PAPER_LENGTH_PROBABILITIES)))
            for algorithm in SPREAD_ALGORITHMS}


def draw_bmu(rows: list[dict], precision: str, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{k} {q}" for k, q in BMU_STRUCTURES]
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    width = 0.8 / len(BMU_SIZES)
    for i, size in enumerate(BMU_SIZES):
        loads = [next(r["saturation_load"] for r in rows if (r["bus_interfaces"], r["queues"], r["size"])
                      == (k, q, size)) for k, q in BMU_STRUCTURES]
        ax.bar([x + (i - 1) * width for x in range(len(labels))], loads, width, label=f"E-{size}")
    ax.axhline(0.7, color="grey", linestyle=":", linewidth=1)
    # at the left, above the one-interface bars, which saturate far below 0.7
    ax.text(-0.45, 0.71, "paper: saturates above 0.7", ha="left", va="bottom", fontsize=7, color="grey")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel("BMU structure (bmu.bus_interfaces, bmu.queues)")
    ax.set_ylabel("saturation link load")
    ax.set_title(f"Where regular traffic saturates, by BMU structure (SBCAST workload, {precision})", fontsize=10)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8, loc="upper left", ncols=3)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def draw_spread(rows: list[dict], precision: str, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
    for load, marker in zip(SPREAD_LOADS, "os"):
        mine = sorted((r for r in rows if r["load"] == load), key=lambda r: r["d_over_S_plus_rM"])
        ax.plot([r["d_over_S_plus_rM"] for r in mine], [r["spread_points"] for r in mine], marker=marker,
                label=f"measured, link load {load:g}")
    zero = sorted({(r["d_over_S_plus_rM"], r["zero_load_spread_points"]) for r in rows})
    ax.plot([x for x, _ in zero], [y for _, y in zero], color="grey", linestyle="--", marker=".",
            label="zero load (functional model, same S, r, d)")
    ax.set_xlabel("d / (S + rM), calibrated, M = mean packet length")
    ax.set_ylabel("spread of 4/5/6-BCAST increase over SBCAST (points)")
    ax.set_title(f"4-, 5- and 6-BCAST on E-{SPREAD_SIZE}: spread against d / (S + rM) ({precision})", fontsize=10)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=130)
    plt.close(fig)
