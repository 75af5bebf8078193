"""Paper 004 (Peters & Syska), reproduced on the circuit-switched controller: every algorithm against its
formula, Table 1 from measured terms, time against N and against L, the two H-tree claims, and how much the
phases stretch under other traffic.

The network is configs/circuit_torus_25x25.yaml resized: circuit.yaml, all-port NPs, alpha = 52, delta = 8,
tau = 1 cycle (our timing, with the iPSC/860's alpha / delta = 6.5 the paper quotes). Every run goes through
run_torus_broadcast, which holds it against its plan (routes, copies, phases) and, idle, every send against
the plan's schedule; a failing run stops the sweep. "formula" columns are the paper's expressions evaluated
with our measured alpha, delta, tau: the paper prints no numbers of its own.

Store-and-forward over four arc-disjoint spanning trees is the paper's formula (section 2, from its refs [3]
and [22]) with beta = alpha + delta, evaluated, not run: we do not build those trees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ...broadcasts.torus import run_torus_broadcast
from ...machine.config import CONFIGS_DIR, load_config
from ...np import h_tree
from ...output import save_figure, write_text
from ...tools.calibrate import measure_linear_cost
from ..sweep import markdown_table, run_tasks, write_csv

CONFIG = CONFIGS_DIR / "circuit_torus_25x25.yaml"
LENGTH = 100  # flits
SIZES = {"tiling": ((5, 5), (25, 25), (125, 125), (10, 10), (5, 10), (10, 5)),
         "dc": ((4, 4), (8, 8), (16, 16), (32, 32), (64, 64)),
         "htree": ((3, 3), (7, 7), (15, 15), (31, 31), (63, 63))}
QUICK_SIZES = {"tiling": ((5, 5), (25, 25), (10, 10)), "dc": ((4, 4), (8, 8), (16, 16)),
               "htree": ((3, 3), (7, 7), (15, 15))}
VARIANTS_10X10 = ("slanting", "square_blocks", "four_squares")
LENGTHS = (1, 10, 100, 1000, 10000)
NEAR_1000 = {"tiling": (25, 25), "dc": (32, 32), "htree": (31, 31)}  # the sizes closest to N = 1000 each runs on
PIPELINE_PACKETS = (1, 2, 4, 8)  # the pipelined formulas against the runs
# background flits per node per cycle; at 0.01 D&C and the H-trees livelock (overload.py records the runs)
LOADS = (0.0, 0.001, 0.002, 0.003, 0.005)
CONTENTION = NEAR_1000
CONTENTION_SEEDS = tuple(range(1, 9))
BACKGROUND_FLITS = 16
WARMUP = 2_000  # cycles of background before the broadcast starts
LABELS = {"tiling": "tiling", "dc": "divide-and-conquer", "htree": "H-trees"}
# the paper's Table 1 as printed: (alpha coefficient, L tau coefficient) as functions of N; delta is sqrt N for all
PAPER_TABLE_1 = {"tiling": (lambda n: math.log(n, 5), lambda n: round(math.log(n, 5), 2)),
                 "dc": (lambda n: math.log(n, 4), lambda n: 1.0),
                 "htree": (lambda n: math.log2(n), lambda n: 0.5)}


def config(dims, rate: float = 0.0, seed: int = 1, cycles: int = 10_000):
    base = load_config(CONFIG).with_topology(kind="torus", dims=list(dims))
    if rate == 0:
        return base
    # probes that find a link held give up and retry: waiting ones deadlock a loaded torus (MODEL.md)
    return base.with_values(flow__circuit_setup="retry", traffic__synthetic__rate=rate,
                            traffic__synthetic__packet_flits=BACKGROUND_FLITS, run__warmup_cycles=WARMUP,
                            run__cycles=cycles, run__seed=seed)


def name(dims) -> str:
    return f"{dims[0]}x{dims[1]}"


@dataclass(frozen=True)
class FormulaPoint:
    """One idle broadcast: measured completion against the paper's formula, and its three terms."""

    algorithm: str
    dims: tuple[int, int]
    length: int
    packets: int | None = None  # None: the paper's B_opt, rounded
    variant: str | None = None

    @property
    def key(self) -> str:
        return (f"paper004-{self.algorithm}-{name(self.dims)}-L{self.length}-p{self.packets or 'opt'}"
                f"{'-' + self.variant if self.variant else ''}")

    @property
    def cost(self) -> float:
        return self.dims[0] * self.dims[1] * (1 + self.length / 100)

    def run(self) -> dict:
        broadcast = run_torus_broadcast(config(self.dims), self.algorithm, 0, self.length, packets=self.packets,
                                        variant=self.variant)
        s = broadcast.summary()
        row = {"key": self.key, "algorithm": self.algorithm, "torus": name(self.dims),
               "nodes": self.dims[0] * self.dims[1], "variant": self.variant or "", "length_flits": self.length,
               "packets": s["packets"], "packets_choice": "B_opt" if self.packets is None else "given",
               "packet_flits": s["packet_flits"], "phases": s["phases"],
               "completion_cycles": s["completion_cycles"], "formula_cycles": s["formula_cycles"],
               "equal": s["completion_cycles"] == s["formula_cycles"], "closed_form_cycles": s["formula_cycles"],
               "contention_free": s["contention_free"],
               "copies_per_node_min": s["copies_per_node_min"], "copies_per_node_max": s["copies_per_node_max"],
               **broadcast.terms()}
        if self.algorithm == "htree":  # the printed T(B) miscounts the schedule: ours, derived by hand
            k = round(math.log2(self.dims[0] + 1))
            row["closed_form_cycles"] = h_tree.schedule_cycles(k, s["packets"], s["packet_flits"], s["alpha_cycles"],
                                                               s["delta_cycles_per_hop"], s["tau_cycles_per_flit"])
        row["equals_closed_form"] = row["completion_cycles"] == row["closed_form_cycles"]
        return row


@dataclass(frozen=True)
class ContentionPoint:
    """One broadcast over uniform background circuits at `rate` flits per node per cycle, and the same
    broadcast idle: when each phase ended in both."""

    algorithm: str
    dims: tuple[int, int]
    rate: float
    seed: int

    @property
    def key(self) -> str:
        return f"paper004-contention-{self.algorithm}-{name(self.dims)}-r{self.rate:g}-s{self.seed}"

    @property
    def cost(self) -> float:
        return self.dims[0] * self.dims[1] * 20

    def run(self) -> dict:
        idle = run_torus_broadcast(config(self.dims), self.algorithm, 0, LENGTH, packets=1)
        loaded = idle
        if self.rate > 0:
            cycles = WARMUP + 20 * idle.run.latency
            loaded = run_torus_broadcast(config(self.dims, self.rate, self.seed, cycles), self.algorithm, 0, LENGTH,
                                         packets=1, cost=idle.cost)
            if loaded.run.latency > cycles - WARMUP:
                raise RuntimeError(f"{self.key}: the broadcast outlived its background ({loaded.run.latency} cycles)")
        s = loaded.summary()
        return {"key": self.key, "algorithm": self.algorithm, "torus": name(self.dims), "rate": self.rate,
                "seed": self.seed, "completion_cycles": s["completion_cycles"],
                "idle_completion_cycles": idle.run.latency, "stretch": s["completion_cycles"] / idle.run.latency,
                "contention_free": s["contention_free"], "background_packets": s["background_packets"],
                "background_latency_mean_cycles": s["background_latency_mean_cycles"],
                "phase_end_cycles": s["phase_end_cycles"], "idle_phase_end_cycles": idle.phase_ends()}


def formula_points(quick: bool) -> list[FormulaPoint]:
    sizes = QUICK_SIZES if quick else SIZES
    points = []
    for algorithm, tori in sizes.items():
        for dims in tori:
            variants = VARIANTS_10X10 if algorithm == "tiling" and dims == (10, 10) else (None,)
            points += [FormulaPoint(algorithm, dims, LENGTH, 1, v) for v in variants]
            if algorithm != "tiling":
                points += [FormulaPoint(algorithm, dims, LENGTH * p, p) for p in PIPELINE_PACKETS[1:]]
                points.append(FormulaPoint(algorithm, dims, LENGTH))
    for algorithm, dims in NEAR_1000.items():
        if not quick:
            points += [FormulaPoint(algorithm, dims, length, None if algorithm != "tiling" else 1)
                       for length in LENGTHS]
    return list({p.key: p for p in points}.values())  # each run once: the L sweep repeats three of the above


def contention_points(quick: bool) -> list[ContentionPoint]:
    loads = LOADS[:3] if quick else LOADS
    seeds = CONTENTION_SEEDS[:1] if quick else CONTENTION_SEEDS
    return [ContentionPoint(a, dims, rate, seed) for a, dims in CONTENTION.items() for rate in loads
            for seed in (seeds if rate > 0 else (0,))]


def store_and_forward_cycles(dims, length: int, alpha: int, delta: int, tau: int) -> float:
    """Section 2: pipelining over four arc-disjoint spanning trees of depth D + 1, packet size chosen best:
    (sqrt(D beta) + sqrt(L tau / 4))^2 with beta = alpha + delta (a formula; not run here)."""
    diameter = dims[0] // 2 + dims[1] // 2
    return (math.sqrt(diameter * (alpha + delta)) + math.sqrt(length * tau / 4)) ** 2


def lower_bound_cycles(dims, length: int, alpha: int, delta: int, tau: int) -> float:
    """Proposition 1 for the 4-regular torus (edge connectivity 4):
    max(ceil(log5 N) alpha, D delta, L tau / 4, alpha + D delta + L tau / 4)."""
    n = dims[0] * dims[1]
    diameter = dims[0] // 2 + dims[1] // 2
    return max(math.ceil(math.log(n, 5) - 1e-12) * alpha, diameter * delta, length * tau / 4,
               alpha + diameter * delta + length * tau / 4)


def reproduce(results: Path, quick: bool = False, resume: bool = False, workers: int | None = None,
              dask_scheduler: str | None = None, progress: bool = True) -> dict:
    """Run every point (saved under results/points as it finishes) and write paper004/'s CSVs, PNGs and
    tables.md. Returns {name: path} of what it wrote."""
    formula = formula_points(quick)
    contention = contention_points(quick)
    done = run_tasks([*formula, *contention], results, resume=resume, workers=workers,
                     dask_scheduler=dask_scheduler, progress=progress, description="paper 004")
    out = results / "paper004"
    out.mkdir(parents=True, exist_ok=True)
    files = {n: out / n for n in ("formulas.csv", "contention.csv", "fill_phase.csv", "time_vs_n.png",
                                  "time_vs_length.png", "contention.png", "tables.md")}
    cost = measure_linear_cost(config((5, 5)))
    rows = [{k: v for k, v in done[p.key].items() if k != "key"} for p in formula]
    write_csv(rows, files["formulas.csv"])
    stretched = [{k: v for k, v in done[p.key].items() if k != "key"} for p in contention]
    write_csv(stretched, files["contention.csv"])
    fill = [h_tree.fill_phase_claim(k) for k in range(2, 7 if not quick else 5)]
    write_csv(fill, files["fill_phase.csv"])
    draw_time_vs_n(rows, cost, files["time_vs_n.png"])
    draw_time_vs_length(rows, cost, files["time_vs_length.png"], quick)
    draw_contention(stretched, files["contention.png"])
    write_text(files["tables.md"], tables_markdown(rows, stretched, fill, cost))
    return files


def table1_rows(rows: list[dict], cost) -> list[dict]:
    """Table 1 from the runs near N = 1000: each algorithm's alpha, delta and tau counts on its critical
    chain, beside the lower bounds of Proposition 1 for the same torus."""
    table = []
    for algorithm, dims in NEAR_1000.items():
        for length in (LENGTHS[2], LENGTHS[-1]):
            r = next((r for r in rows if r["algorithm"] == algorithm and r["torus"] == name(dims)
                      and r["length_flits"] == length and (algorithm == "tiling" or r["packets"] > 0)
                      and not r["variant"]), None)
            if r is None:
                continue
            n = r["nodes"]
            paper_alpha, paper_l_tau = PAPER_TABLE_1[algorithm]
            table.append({"algorithm": LABELS[algorithm], "torus": r["torus"], "L": length, "packets": r["packets"],
                          "alpha_count": r["alpha_count"], "paper_alpha": round(paper_alpha(n), 2),
                          "bound_alpha": math.ceil(math.log(n, 5) - 1e-12),
                          "delta_count": r["delta_count"], "paper_delta": round(math.sqrt(n), 1),
                          "bound_delta": dims[0] // 2 + dims[1] // 2,
                          "l_tau_multiple": round(r["tau_count"] / length, 3), "paper_l_tau": paper_l_tau(n),
                          "bound_l_tau": 0.25, "completion_cycles": r["completion_cycles"]})
    return table


def tables_markdown(rows, stretched, fill, cost) -> str:
    text = [(f"Measured alpha = {cost.alpha}, delta = {cost.delta}, tau = {cost.tau} cycles "
             f"(configs/circuit_torus_25x25.yaml).\n\n## Every run against the paper's formula\n\n"),
            markdown_table(rows, [("algorithm", "algorithm"), ("torus", "torus"), ("variant", "variant"),
                             ("length_flits", "L"), ("packets", "packets"), ("phases", "phases"),
                             ("completion_cycles", "measured"), ("formula_cycles", "paper's formula"),
                             ("equal", "equal"), ("closed_form_cycles", "closed form"),
                             ("equals_closed_form", "equal"),
                             ("alpha_count", "alphas"), ("delta_count", "deltas"), ("tau_count", "taus"),
                             ("contention_free", "contention-free")]),
            "\n## Table 1: terms on the critical chain against the lower bounds\n\n",
            markdown_table(table1_rows(rows, cost), [("algorithm", "algorithm"), ("torus", "torus"), ("L", "L"),
                                                ("packets", "packets"), ("alpha_count", "alpha x: measured"),
                                                ("paper_alpha", "Table 1"), ("bound_alpha", "bound"),
                                                ("delta_count", "delta x: measured"), ("paper_delta", "Table 1"),
                                                ("bound_delta", "bound"), ("l_tau_multiple", "L tau x: measured"),
                                                ("paper_l_tau", "Table 1"), ("bound_l_tau", "bound"),
                                                ("completion_cycles", "cycles")]),
            "\n## The H-tree fill phase\n\n", markdown_table(fill, [(k, k) for k in fill[0]]),
            "\n## Under background traffic\n\n",
            markdown_table(stretched, [("algorithm", "algorithm"), ("torus", "torus"), ("rate", "rate"),
                                  ("seed", "seed"), ("idle_completion_cycles", "idle"),
                                  ("completion_cycles", "loaded"), ("stretch", "stretch"),
                                  ("background_latency_mean_cycles", "background latency")]),
            "\n## Every algorithm against its formula, run count\n\n",
            markdown_table(agreement_rows(rows), [("algorithm", "algorithm"), ("tori", "tori"), ("L", "L (flits)"),
                                                  ("runs", "runs"), ("formula", "measured = paper's formula"),
                                                  ("schedule", "measured = closed form")]),
            "\n## Examples, to the cycle\n\n",
            markdown_table(example_rows(rows), [("algorithm", "algorithm"), ("torus", "torus"),
                                                ("variant", "variant"), ("length_flits", "L"),
                                                ("packets", "packets"), ("chain", "critical chain"),
                                                ("completion_cycles", "measured"),
                                                ("formula_cycles", "paper's formula")]),
            "\n## Time against L near N = 1000\n\n", length_markdown(rows, cost),
            "\n## Measured over the store-and-forward formula near N = 1000\n\n",
            crossover_markdown(rows, cost),
            "\n## Claim 2: the H-trees against the printed T(B)\n\n",
            markdown_table(claim2_rows(rows, cost), [("torus", "torus"), ("L", "L"),
                                                     ("packets", "packets per half"), ("B", "B (flits)"),
                                                     ("measured", "measured"), ("printed", "printed T(B)"),
                                                     ("difference", "measured - printed"),
                                                     ("rounds", "(P - 1)(alpha + 2^(k-2) delta + B tau)"),
                                                     ("first", "first packets: schedule - printed")]),
            "\n## Background traffic: completion over idle completion\n\n",
            markdown_table(*loaded_completion(stretched, cost)),
            "\n## Background traffic: the tiling's phase stretch by rate\n\n",
            markdown_table(*phase_stretch_by_rate(stretched)),
            f"\n## Background traffic: the tiling's phases by seed at rate {max(r['rate'] for r in stretched):g}\n\n",
            markdown_table(*phase_stretch_by_seed(stretched))]
    return "".join(text)


def agreement_rows(rows: list[dict]) -> list[dict]:
    """Per algorithm: the tori and lengths it ran on, its runs, and how many equal the paper's formula and the
    closed form (for the H-trees the schedule derived by hand, for the others the paper's formula)."""
    table = []
    for algorithm in SIZES:
        mine = [r for r in rows if r["algorithm"] == algorithm]
        tori = []
        for r in mine:
            variants = [v.replace("_", " ") for v in dict.fromkeys(x["variant"] for x in mine
                                                                   if x["torus"] == r["torus"]) if v]
            torus = r["torus"] + (f" ({', '.join(variants)})" if variants else "")
            if torus not in tori:
                tori.append(torus)
        table.append({"algorithm": LABELS[algorithm], "tori": ", ".join(tori),
                      "L": " ".join(str(n) for n in sorted({r["length_flits"] for r in mine})), "runs": len(mine),
                      "formula": sum(r["equal"] for r in mine), "schedule": sum(r["equals_closed_form"] for r in mine)})
    return table


# (algorithm, torus, variant, L, packets): the examples EXPERIMENTS.md writes out as formulas
EXAMPLES = (("tiling", "25x25", "", 100, 1), ("tiling", "125x125", "", 100, 1),
            ("tiling", "10x10", "slanting", 100, 1), ("tiling", "10x10", "square_blocks", 100, 1),
            ("tiling", "10x10", "four_squares", 100, 1), ("tiling", "5x10", "", 100, 1),
            ("tiling", "10x5", "", 100, 1), ("dc", "64x64", "", 400, 4))


def example_rows(rows: list[dict]) -> list[dict]:
    table = []
    for algorithm, torus, variant, length, packets in EXAMPLES:
        r = next((r for r in rows if (r["algorithm"], r["torus"], r["variant"], r["length_flits"], r["packets"])
                  == (algorithm, torus, variant, length, packets) and r["packets_choice"] == "given"), None)
        if r is not None:
            table.append({**r, "algorithm": LABELS[algorithm], "variant": variant.replace("_", " "),
                          "chain": f"{r['alpha_count']} alpha + {r['delta_count']} delta + {r['tau_count']} tau"})
    return table


def length_rows(rows: list[dict], cost) -> list[dict]:
    """The runs near N = 1000 against L (D&C and H-trees at the paper's B_opt), each beside the
    store-and-forward formula on its torus."""
    table = []
    for length in LENGTHS:
        row = {"L": length, "l_tau_over_alpha": length * cost.tau / cost.alpha}
        for algorithm, dims in NEAR_1000.items():
            r = next((r for r in rows if r["algorithm"] == algorithm and r["torus"] == name(dims)
                      and r["length_flits"] == length and not r["variant"]
                      and (algorithm == "tiling" or r["packets_choice"] == "B_opt")), None)
            if r is None:
                break
            row[algorithm] = r["completion_cycles"]
            row[f"{algorithm}_packets"] = r["packets"]
            row[f"{algorithm}_sf"] = store_and_forward_cycles(dims, length, cost.alpha, cost.delta, cost.tau)
        else:
            table.append(row)
    return table


def length_markdown(rows: list[dict], cost) -> str:
    table = [{**r, **{f"{a}_sf": f"{r[f'{a}_sf']:.0f}" for a in NEAR_1000}} for r in length_rows(rows, cost)]
    columns = [("L", "L (flits)"), ("l_tau_over_alpha", "L tau / alpha")]
    for algorithm, dims in NEAR_1000.items():
        columns.append((algorithm, f"{LABELS[algorithm]} {name(dims)}"
                                   + (" (B_opt)" if algorithm != "tiling" else "")))
        if algorithm != "tiling":
            columns.append((f"{algorithm}_packets", "packets" + (" per half" if algorithm == "htree" else "")))
        columns.append((f"{algorithm}_sf", f"SF formula {name(dims)}"))
    return markdown_table(table, columns) if table else "(no runs near N = 1000 in this variant)\n"


def crossover_markdown(rows: list[dict], cost) -> str:
    """Each algorithm's time over the store-and-forward formula at each L, and where the formula falls below."""
    lengths = length_rows(rows, cost)
    if not lengths:
        return "(no runs near N = 1000 in this variant)\n"
    table = []
    for algorithm, dims in NEAR_1000.items():
        ratio = {r["L"]: r[algorithm] / r[f"{algorithm}_sf"] for r in lengths}
        slower = [length for length in ratio if ratio[length] > 1]
        faster = [length for length in ratio if ratio[length] <= 1]
        if not slower:
            where = f"nowhere up to L = {max(ratio)}"
        elif not faster:
            where = "at every L"
        elif max(faster) < min(slower):
            where = f"between L = {max(faster)} and {min(slower)}"
        else:
            where = "at L = " + ", ".join(map(str, slower))
        table.append({"algorithm": LABELS[algorithm], "torus": name(dims),
                      **{f"L{n}": f"{x:.2f}" for n, x in ratio.items()}, "where": where})
    return markdown_table(table, [("algorithm", "algorithm"), ("torus", "torus")]
                          + [(f"L{r['L']}", f"L = {r['L']}") for r in lengths]
                          + [("where", "the formula falls below the run")])


# (side, L, packets choice): the H-tree runs Claim 2 is shown on
CLAIM_2 = ((7, 400, "given"), (15, 800, "given"), (31, 100, "given"), (31, 10000, "B_opt"), (63, 800, "given"),
           (3, 100, "given"))


def claim2_rows(rows: list[dict], cost) -> list[dict]:
    """Measured H-tree times against the printed T(B), the difference split into the remaining packets' rounds
    the printed formula counts once where the schedule takes two, and the first packets' own difference."""
    table = []
    for side, length, choice in CLAIM_2:
        r = next((r for r in rows if r["algorithm"] == "htree" and r["torus"] == name((side, side))
                  and r["length_flits"] == length and r["packets_choice"] == choice), None)
        if r is None:
            continue
        k, packets, b = round(math.log2(side + 1)), r["packets"], r["packet_flits"]
        terms = (cost.alpha, 2 ** (k - 2) * cost.delta, b * cost.tau)
        first = (h_tree.schedule_cycles(k, 1, b, cost.alpha, cost.delta, cost.tau)
                 - h_tree.formula_cycles(k, 2 * b, cost.alpha, cost.delta, cost.tau, 1))
        table.append({"torus": r["torus"], "L": length, "packets": packets, "B": b,
                      "measured": r["completion_cycles"], "printed": r["formula_cycles"],
                      "difference": r["completion_cycles"] - r["formula_cycles"],
                      "rounds": f"{packets - 1} ({' + '.join(map(str, terms))}) = {(packets - 1) * sum(terms)}",
                      "first": int(first)})
    return table


def mean_distance(dims) -> float:
    """Mean shortest-path hops from a node of the torus to the other nodes."""
    ring = [sum(min(i, side - i) for i in range(side)) for side in dims]
    nodes = dims[0] * dims[1]
    return (dims[1] * ring[0] + dims[0] * ring[1]) / (nodes - 1)


def loaded_completion(stretched: list[dict], cost) -> tuple[list[dict], list]:
    """Completion over idle completion per rate: mean (min-max) over the seeds; the background's latency at the
    highest rate (mean over the seeds' means) beside its zero-load latency alpha + h delta + 16 tau."""
    rates = sorted({r["rate"] for r in stretched if r["rate"] > 0})
    table = []
    for algorithm, dims in CONTENTION.items():
        mine = [r for r in stretched if r["algorithm"] == algorithm]
        row = {"algorithm": LABELS[algorithm], "torus": name(dims), "idle": mine[0]["idle_completion_cycles"]}
        for rate in rates:
            ratio = [r["stretch"] for r in mine if r["rate"] == rate]
            row[rate] = f"{sum(ratio) / len(ratio):.2f} ({min(ratio):.2f}-{max(ratio):.2f})"
        top = [r["background_latency_mean_cycles"] for r in mine if r["rate"] == rates[-1]]
        hops = mean_distance(dims)
        row["latency"] = f"{sum(top) / len(top):.0f}"
        row["zero_load"] = (f"{cost.alpha + hops * cost.delta + BACKGROUND_FLITS * cost.tau:.0f} "
                            f"(h = {hops:.1f})")
        table.append(row)
    return table, ([("algorithm", "algorithm"), ("torus", "torus"), ("idle", "idle")]
                   + [(rate, f"{rate:g}") for rate in rates]
                   + [("latency", f"background latency at {rates[-1]:g}"),
                      ("zero_load", "its zero-load latency")])


def _phase_ratios(r: dict) -> list[float]:
    return [_phase_length(r["phase_end_cycles"], j) / _phase_length(r["idle_phase_end_cycles"], j)
            for j in range(len(r["idle_phase_end_cycles"]))]


def phase_stretch_by_rate(stretched: list[dict]) -> tuple[list[dict], list]:
    """The tiling's phases (end of phase j minus end of phase j-1) over their idle length, mean over the seeds."""
    tiling = [r for r in stretched if r["algorithm"] == "tiling" and r["rate"] > 0]
    phases = len(tiling[0]["idle_phase_end_cycles"])
    table = []
    for rate in sorted({r["rate"] for r in tiling}):
        ratios = [_phase_ratios(r) for r in tiling if r["rate"] == rate]
        table.append({"rate": f"{rate:g}", **{j: f"{sum(x[j] for x in ratios) / len(ratios):.2f}"
                                               for j in range(phases)}})
    return table, [("rate", "rate")] + [(j, f"phase {j + 1}") for j in range(phases)]


def phase_stretch_by_seed(stretched: list[dict]) -> tuple[list[dict], list]:
    """The tiling's phase stretches at the highest rate, seed by seed, with the phase that stretched most."""
    rate = max(r["rate"] for r in stretched)
    tiling = [r for r in stretched if r["algorithm"] == "tiling" and r["rate"] == rate]
    phases = len(tiling[0]["idle_phase_end_cycles"])
    table = []
    for r in tiling:
        ratios = _phase_ratios(r)
        table.append({"seed": r["seed"], **{j: f"{x:.2f}" for j, x in enumerate(ratios)},
                      "worst": ratios.index(max(ratios)) + 1, "stretch": f"{r['stretch']:.2f}"})
    return table, ([("seed", "seed")] + [(j, f"phase {j + 1}") for j in range(phases)]
                   + [("worst", "worst phase"), ("stretch", "completion over idle")])


def draw_time_vs_n(rows, cost, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    squares = sorted({(r["nodes"], r["torus"]) for r in rows})
    for index, algorithm in enumerate(SIZES):
        mine = sorted((r for r in rows if r["algorithm"] == algorithm and r["length_flits"] == LENGTH
                       and r["packets"] == 1 and r["variant"] in ("", "slanting")), key=lambda r: r["nodes"])
        ax.plot([r["nodes"] for r in mine], [r["completion_cycles"] for r in mine], marker="o", color=f"C{index}",
                label=f"{LABELS[algorithm]}: measured")
        ax.plot([r["nodes"] for r in mine], [r["formula_cycles"] for r in mine], ls="none", marker="x", ms=9,
                color=f"C{index}", label=f"{LABELS[algorithm]}: paper's formula")
    nodes = [n for n, _ in squares]
    dims = [tuple(int(x) for x in t.split("x")) for _, t in squares]
    ax.plot(nodes, [store_and_forward_cycles(d, LENGTH, cost.alpha, cost.delta, cost.tau) for d in dims], ls=":",
            color="grey", label="store-and-forward, 4 trees (formula)")
    ax.plot(nodes, [lower_bound_cycles(d, LENGTH, cost.alpha, cost.delta, cost.tau) for d in dims], ls="--",
            color="black", label="lower bound (Prop. 1)")
    ax.set_xscale("log")
    ax.set_xlabel("nodes N")
    ax.set_ylabel("cycles to the last delivery")
    ax.set_title(f"Paper 004, L = {LENGTH} flits, one packet, idle; alpha {cost.alpha}, delta {cost.delta}, "
                 f"tau {cost.tau}", fontsize=8)
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def draw_time_vs_length(rows, cost, path: Path, quick: bool) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for index, (algorithm, dims) in enumerate(NEAR_1000.items()):
        mine = sorted((r for r in rows if r["algorithm"] == algorithm and r["torus"] == name(dims)
                       and r["length_flits"] in LENGTHS and not r["variant"]
                       and (algorithm == "tiling" or r["packets_choice"] == "B_opt")), key=lambda r: r["length_flits"])
        ax.plot([r["length_flits"] for r in mine], [r["completion_cycles"] for r in mine], marker="o",
                color=f"C{index}", label=f"{LABELS[algorithm]} on {name(dims)}")
        ax.plot([r["length_flits"] for r in mine],
                [store_and_forward_cycles(dims, r["length_flits"], cost.alpha, cost.delta, cost.tau) for r in mine],
                ls=":", color=f"C{index}", label=f"store-and-forward on {name(dims)} (formula)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("message length L (flits)")
    ax.set_ylabel("cycles to the last delivery")
    ax.set_title("Paper 004: time against L (D&C and H-trees cut the message at the paper's B_opt)", fontsize=8)
    ax.legend(fontsize=7)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def draw_contention(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
    for index, algorithm in enumerate(CONTENTION):
        mine = [r for r in rows if r["algorithm"] == algorithm]
        rates = sorted({r["rate"] for r in mine})
        mean = [sum(r["stretch"] for r in mine if r["rate"] == x) / sum(r["rate"] == x for r in mine) for x in rates]
        left.plot(rates, mean, marker="o", color=f"C{index}", label=f"{LABELS[algorithm]} ({mine[0]['torus']})")
    left.set_xlabel("background rate (flits per node per cycle)")
    left.set_ylabel("completion / idle completion (mean over seeds)")
    left.legend(fontsize=7)
    tiling = [r for r in rows if r["algorithm"] == "tiling"]
    rates = sorted({r["rate"] for r in tiling})
    for index, rate in enumerate(rates):
        runs = [r for r in tiling if r["rate"] == rate]
        phases = len(runs[0]["idle_phase_end_cycles"])
        durations = []
        for j in range(phases):
            durations.append(sum(_phase_length(r["phase_end_cycles"], j) / _phase_length(r["idle_phase_end_cycles"], j)
                                 for r in runs) / len(runs))
        right.plot(range(1, phases + 1), durations, marker="o", color=f"C{index}", label=f"rate {rate:g}")
    right.set_xlabel("phase of the tiling broadcast (25x25)")
    right.set_ylabel("phase length / idle phase length")
    right.legend(fontsize=7)
    fig.suptitle("Paper 004 under uniform background circuits of 16 flits", fontsize=9)
    save_figure(fig, path, dpi=130)
    plt.close(fig)


def _phase_length(ends: list[int], j: int) -> int:
    return ends[j] - (ends[j - 1] if j else 0)
