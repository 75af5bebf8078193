"""Paper 001's Tables II, III and IV on the engine, and the rows that check the paper's other claims, with the
paper's formulas evaluated with the calibrated S, r and d (tau_S = S, alpha = d, mu alpha = rM).

`tables()` writes, under RESULTS/paper001/:
* tables.csv and tables.md: every algorithm on two or more sizes of each network it runs on, at mu = 2, in
  dedicated mode (CASES), then the claim rows (CLAIMS): overlapped stages, Theorem 4, IHC against FRS, eta on
  a hexagonal mesh, the bound on eta. Each row gives the engine's completion beside its formula with exact path
  counts; a row that differs names its measured cause.
* vrs_formula.csv and vrs_formula.md: VRS-ATA's formula, from the functional model (harts.reference.rs): each
  Q_m's slowest copy, its packets T and cut-throughs C, against the printed count.
* worst_case.csv and worst_case.md: Table IV, every hop stored and forwarded, queueing delay D. There a stored
  restart is S + 1 cycles, since a receiver marks the copy for its NP (ata.MARK_CYCLES), so Table IV is
  evaluated with tau_S = S + 1 (FRS: tau_S = S).

EXPERIMENTS.md shows these .md files as written: bench/results/reproduce/paper001/ keeps them, and
`python -m harts.experiments.splice RESULTS` refreshes them and the page's blocks. tests/test_ata.py fails when a
new run's files differ from the kept ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...machine.config import defaults
from ...output import write_text
from ...reference.rs import rs_hops
from ..sweep import write_csv
from .ata import MARK_CYCLES, AtaRun, prepare, run_algorithm, startup

MU = 2
HEX3, HEX5, HEX6, HEX7 = ({"kind": "hex", "size": n} for n in (3, 5, 6, 7))
Q = {m: {"kind": "hypercube", "dimension": m} for m in (2, 3, 4, 6, 8)}
SQ = {m: {"kind": "torus", "dims": [m, m]} for m in (4, 5, 6, 7, 8)}


@dataclass(frozen=True)
class Case:
    algorithm: str
    spec: dict
    mu: int = MU
    eta: int | None = None
    overlapped: bool = False
    early: int | None = None  # overlapped: each stage starts this many d early (default: mu - 1)
    timing: dict = field(default_factory=dict)  # config keys changed for this row
    claim: str = ""  # what the row checks (claim rows only)

    def run(self, queueing: int | None = None) -> AtaRun:
        config = defaults().with_values(self.timing, topology=self.spec)
        return run_algorithm(config, self.algorithm, self.mu, eta=self.eta, overlapped=self.overlapped,
                             queueing=queueing, early=self.early)


CASES = (
    Case("ihc", HEX3), Case("ihc", HEX6), Case("ihc", SQ[4]), Case("ihc", SQ[6]), Case("ihc", SQ[8]),
    Case("ihc", Q[4]), Case("ihc", Q[6]), Case("ihc", Q[8]),
    Case("ks", HEX3), Case("ks", HEX5), Case("ks", HEX7),
    Case("vsq", SQ[5]), Case("vsq", SQ[7]),
    Case("vrs", Q[3]), Case("vrs", Q[4]), Case("vrs", Q[6]), Case("vrs", Q[8]),
    Case("frs", Q[2]), Case("frs", Q[4]), Case("frs", Q[8]),
)

SLOW_SETUP = {"timing.bmu_setup_cycles": 5}  # S = 11 >= mu^2 d / 2 = 10
LONG_WIRE = {"timing.link_delay_cycles": 5}  # d = 10, S = 12; mu = 1 packets are 48 bytes
NO_GAP = {"timing.idle_gap_bytes": 0}  # rM = mu d
EARLY = "overlapped, each stage {} early (ours, not harts ata's)"
BOUND = "the bound on eta ({}): {}"
CLAIMS = (
    Case("ihc", SQ[6], mu=3, eta=3, overlapped=True, claim="VI-A: overlapped, eta = mu, saves (mu-1)^2 d"),
    Case("ihc", Q[4], mu=3, overlapped=True, claim="overlapped, eta > mu (ours): saves (eta-1)(mu-1)d"),
    Case("ihc", Q[8], mu=3, overlapped=True, claim="overlapped, eta > mu (ours): saves (eta-1)(mu-1)d"),
    Case("ihc", Q[4], mu=3, eta=4, overlapped=True, early=4, claim=EARLY.format("eta d")),
    Case("ihc", Q[4], mu=3, eta=4, overlapped=True, early=5, claim=EARLY.format("(eta+1)d")),
    Case("ihc", SQ[6], mu=3, eta=6, overlapped=True, early=6, claim=EARLY.format("eta d")),
    Case("ihc", SQ[6], mu=3, eta=6, overlapped=True, early=7, claim=EARLY.format("(eta+1)d")),
    Case("ihc", SQ[6], mu=3, eta=3, overlapped=True, early=3, claim=EARLY.format("eta d")),
    Case("ihc", SQ[6], mu=3, eta=3, overlapped=True, early=4, claim=EARLY.format("(eta+1)d")),
    Case("ihc", Q[4], mu=1, eta=1, claim="Theorem 4: eta = mu = 1 takes tau_S + (N-1) alpha"),
    Case("ihc", SQ[4], mu=1, eta=1, claim="Theorem 4: eta = mu = 1 takes tau_S + (N-1) alpha"),
    Case("ihc", Q[4], mu=1, eta=2, claim="the same 18-byte packets at eta = 2"),
    *(Case("ihc", Q[4], mu=1, eta=1, timing={"timing.link_delay_cycles": wire},
           claim="Theorem 4 with a little wire delay") for wire in (1, 2, 3)),
    Case("ihc", Q[4], mu=2, eta=2, timing=LONG_WIRE, claim="eta = mu = 2 with a longer d"),
    Case("ihc", Q[4], mu=1, eta=1, timing=LONG_WIRE, claim="Theorem 4 with a longer d"),
    Case("frs", Q[4], mu=1, timing=LONG_WIRE, claim="FRS with a longer d"),
    Case("ihc", HEX3, eta=2, claim="Table III's eta = mu = 2 on E-3 (N odd)"),
    Case("ihc", Q[4], timing=SLOW_SETUP, claim="VI-A: eta = mu, tau_S >= mu^2 alpha / 2: IHC beats FRS"),
    Case("frs", Q[4], timing=SLOW_SETUP, claim="VI-A: eta = mu, tau_S >= mu^2 alpha / 2: IHC beats FRS"),
    Case("ihc", Q[4], timing={"timing.bmu_setup_cycles": 6}, claim="IHC against FRS, S = 12"),
    Case("frs", Q[4], timing={"timing.bmu_setup_cycles": 6}, claim="IHC against FRS, S = 12"),
    Case("ihc", Q[4], timing={"timing.bmu_setup_cycles": 7}, claim="IHC against FRS, S = 13"),
    Case("frs", Q[4], timing={"timing.bmu_setup_cycles": 7}, claim="IHC against FRS, S = 13"),
    Case("ihc", Q[8], timing=SLOW_SETUP, claim="VI-A: eta = mu, tau_S >= mu^2 alpha / 2: IHC beats FRS"),
    Case("frs", Q[8], timing=SLOW_SETUP, claim="VI-A: eta = mu, tau_S >= mu^2 alpha / 2: IHC beats FRS"),
    Case("ihc", Q[8], timing={"timing.bmu_setup_cycles": 68}, claim="IHC against FRS, S = 74"),
    Case("frs", Q[8], timing={"timing.bmu_setup_cycles": 68}, claim="IHC against FRS, S = 74"),
    Case("ihc", Q[4], timing=NO_GAP, claim="IHC without the idle gap: rM = mu d"),
    Case("ihc", Q[8], timing=NO_GAP, claim="IHC without the idle gap: rM = mu d"),
    Case("ihc", Q[4], eta=8, claim=BOUND.format("3 on Q_4", "eta above it")),
    Case("ihc", Q[4], eta=16, claim=BOUND.format("3 on Q_4", "eta above it")),
    Case("ihc", SQ[5], eta=5, claim=BOUND.format("7 on SQ_5", "eta within it")),
    Case("ihc", SQ[5], eta=25, claim=BOUND.format("7 on SQ_5", "eta above it")),
    Case("ihc", HEX6, eta=13, claim=BOUND.format("8.95 on E-6", "eta above it")),
    Case("ks", HEX6, claim=BOUND.format("8.95 on E-6", "KS-ATA")),
)

NAMES = {"ihc": "IHC", "ks": "KS-ATA", "vsq": "VSQ-ATA", "vrs": "VRS-ATA", "frs": "FRS"}


def network(spec: dict) -> str:
    """The paper's name of a network: H_n is E-n here, SQ_m, Q_m."""
    if spec["kind"] == "hex":
        return f"E-{spec['size']}"
    if spec["kind"] == "torus":
        return f"SQ_{spec['dims'][0]}"
    return f"Q_{spec['dimension']}"


def table_two(algorithm: str, run: AtaRun) -> float:
    """Table II as printed, with tau_S + mu alpha = S + rM and alpha = d. KS-ATA's "(2 sqrt(N-1))/3 - 5" is read
    as the text's 2 sqrt((N-1)/3) - 5; VRS-ATA's N(log2 N - 1)(tau_S + mu alpha) + 2 alpha as Table III brackets
    it, N((log2 N - 1)(tau_S + mu alpha) + 2 alpha): N broadcasts of that time each (section VI-A)."""
    n, S, d, packet = run.nodes, run.S, run.d, run.S + run.r * run.length
    if algorithm == "ihc":
        return float(run.eta * (packet + (n - 2) * d))
    if algorithm == "ks":
        return float(n * (3 * packet + (2 * math.sqrt((n - 1) / 3) - 5) * d))
    if algorithm == "vsq":
        return float(n * (3 * packet + (2 * math.sqrt(n) - 6) * d))
    if algorithm == "vrs":
        return float(n * ((math.log2(n) - 1) * packet + 2 * d))
    return float((math.log2(n) + 1) * S + (n - 1) * run.r * run.length)


def table_three(algorithm: str, run: AtaRun) -> float | str:
    """Table III (eta = mu = 2, mu alpha written 2 alpha) as printed, with tau_S = S and alpha = d; or why a
    cell has no value."""
    n, S, d = run.nodes, run.S, run.d
    if run.mu != 2:
        return f"n/a: mu = {run.mu}"
    if algorithm == "ihc" and run.eta != 2:
        return (f"n/a: N = {n} is odd, so no eta = 2" if n % 2 else f"n/a: eta = {run.eta}")
    log_n = math.log2(n)
    if algorithm == "ihc":
        return float(2 * S + 2 * n * d)
    if algorithm == "ks":
        return float(n * (3 * (S + 2 * d) + (2 * math.sqrt((n - 1) / 3) - 5) * d))
    if algorithm == "vsq":
        return float(n * (3 * (S + 2 * d) + (2 * math.sqrt(n) - 6) * d))
    if algorithm == "vrs":
        return float(n * ((log_n - 1) * (S + 2 * d) + 2 * d))
    return float((log_n + 1) * S + 2 * (n - 1) * d)


def number(x) -> str:
    """A cycle count as the tables print it: whole numbers whole, others to one decimal."""
    if isinstance(x, str):
        return x
    return f"{round(float(x))}" if abs(float(x) - round(float(x))) < 1e-9 else f"{float(x):.1f}"


def timing_label(run: AtaRun, case: Case) -> str:
    if not case.timing:
        return "-"
    return ", ".join(f"{key.split('.')[-1]} {value}" for key, value in case.timing.items()) + \
        f": S = {run.S}, d = {run.d}"


def measured(case: Case, run: AtaRun, ihc_twin: AtaRun | None) -> str:
    """What the row shows, measured on the run: where it differs from its formula, the cause."""
    late = run.completion_cycles - run.formula_cycles
    notes = []
    times = np.unique(run.arrivals)
    first_late = times[0] - float(run.S + run.r * run.length)  # the first copies, one hop from their sources
    pace = None
    if run.algorithm == "ihc" and run.eta == 1 and late:
        spacing = set(np.round(np.diff(times), 6))  # eta = 1: every copy at a node comes at one pace
        pace = float(spacing.pop()) if len(spacing) == 1 else None
    if pace is not None and pace != float(run.d):
        notes.append(f"copies arrive at cycles {', '.join(number(t) for t in times[:3])}, ...: one every "
                     f"{number(pace)} cycles, not every d = {run.d}")
        if (run.nodes - 2) * (pace - float(run.d)) + first_late == float(late):
            notes.append(f"{number(float(late))} = (N-2)({number(pace)} - d) + the first copies' "
                         f"{number(first_late)}")
    elif late and run.contention_free:
        notes.append(f"contention-free; the first copies arrive {number(first_late)} "
                     f"cycle{'' if first_late == 1 else 's'} after S + rM: a "
                     f"packet under 48 bytes is late to the NP (MODEL.md, How S, r and d arise)")
    if run.algorithm == "ihc" and run.eta is not None and run.nodes % run.eta:
        notes.append(f"N = {run.nodes} mod eta = {run.nodes % run.eta}: stage 0's first and last senders are "
                     f"{run.nodes % run.eta} hop apart")
    if run.first_contention:
        notes.append(f"first wait: {run.first_contention}")
    if run.algorithm == "frs" and ihc_twin is not None:
        m, mu, n, S, d, rM = (int(math.log2(run.nodes)), ihc_twin.mu, run.nodes, run.S, run.d,
                              run.r * run.length)
        predicted = (m + 1 - mu) * S - mu * (mu - 1) * d - (n - 1 - mu) * (mu * d - rM)
        notes.append(f"FRS - IHC = {number(float(run.completion_cycles - ihc_twin.completion_cycles))}; "
                     f"(m+1-mu)S - mu(mu-1)d - (N-1-mu)(mu d - rM) = {number(float(predicted))}")
    if not notes and run.completion_cycles == run.formula_cycles:
        notes.append("exact")
    return "; ".join(notes)


def row(case: Case, run: AtaRun, ihc_twin: AtaRun | None = None) -> dict:
    return {
        "claim": case.claim, "algorithm": case.algorithm, "network": network(case.spec), "nodes": run.nodes,
        "eta": run.eta or "", "mu": run.mu, "overlapped": run.overlapped,
        "early": (run.mu - 1 if case.early is None else case.early) if run.overlapped else "",
        "length_bytes": run.length,
        "timing": timing_label(run, case), "S": float(run.S), "d": float(run.d),
        "engine_cycles": float(run.completion_cycles), "formula_cycles": float(run.formula_cycles),
        "table_2_cycles": table_two(case.algorithm, run), "table_3_cycles": table_three(case.algorithm, run),
        "contention_free": run.contention_free, "copies_per_node": run.copies_per_node_min,
        "measured": measured(case, run, ihc_twin),
    }


def tables(results: Path) -> tuple[list[dict], list[dict]]:
    rows = [row(case, case.run()) for case in CASES]
    previous = None
    for case in CLAIMS:
        run = case.run()
        twin = previous if case.algorithm == "frs" and previous is not None and previous.mu == run.mu else None
        rows.append(row(case, run, twin))
        previous = run if case.algorithm == "ihc" else None
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "tables.csv")
    write_text(out / "tables.md", markdown(rows))
    worst = worst_case_rows()
    write_csv(worst, out / "worst_case.csv")
    write_text(out / "worst_case.md", worst_case_markdown(worst))
    vrs = vrs_formula_rows()
    write_csv(vrs, out / "vrs_formula.csv")
    write_text(out / "vrs_formula.md", vrs_formula_markdown(vrs))
    return rows, worst


VRS_DIMENSIONS = (3, 4, 5, 6, 7, 8)


def vrs_formula_rows(dimensions=VRS_DIMENSIONS) -> list[dict]:
    """One VRS broadcast on each Q_m in the functional model (harts.reference.rs), with the S, r and d
    calibrated for VRS-ATA: its slowest copy's packets T and cut-throughs C, T(S + rM) + Cd against the printed
    (m-1)(S + rM) + 2d (Table III's bracketing), and N times each: VRS-ATA's formula and its printed row."""
    rows = []
    for m in dimensions:
        _, timing, length = prepare(defaults().with_values(topology={"kind": "hypercube", "dimension": m}), "vrs",
                                    "vrs", MU, None)
        packet, d, n = timing.S + timing.r * length, timing.d, 2 ** m
        cycles = {h: h.transmissions * packet + h.cut_throughs * d for h in rs_hops(m)}
        slowest = max(cycles, key=lambda h: (cycles[h], h.transmissions))
        printed = (m - 1) * packet + 2 * d
        rows.append({"network": f"Q_{m}", "nodes": n, "S_plus_rM": float(packet), "d": float(d),
                     "packets": slowest.transmissions, "cut_throughs": slowest.cut_throughs,
                     "broadcast_cycles": float(cycles[slowest]), "printed_broadcast_cycles": float(printed),
                     "all_to_all_cycles": float(n * cycles[slowest]), "printed_all_to_all_cycles": float(n * printed)})
    return rows


def vrs_formula_markdown(rows: list[dict]) -> str:
    """The broadcasts, then N times each."""
    first = rows[0]
    head = (f"One broadcast, with S + rM = {number(first['S_plus_rM'])} and d = {number(first['d'])} cycles; "
            f"N times it, the all-to-all.\n\n"
            "| network | N | slowest copy: packets T, cut-throughs C | T(S + rM) + Cd | printed (m-1)(S + rM) + 2d | "
            "difference (m-1-T)(S + rM) + (2-C)d | N(T(S + rM) + Cd) | N((m-1)(S + rM) + 2d) |\n"
            "|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        m = int(r["network"][2:])
        lines.append(f"| {r['network']} | {r['nodes']} | {r['packets']}, {r['cut_throughs']} | "
                     f"{number(r['broadcast_cycles'])} | {number(r['printed_broadcast_cycles'])} | "
                     f"{m - 1 - r['packets']} x {number(r['S_plus_rM'])} + {2 - r['cut_throughs']} x {number(r['d'])} "
                     f"= {number(r['printed_broadcast_cycles'] - r['broadcast_cycles'])} | "
                     f"{number(r['all_to_all_cycles'])} | {number(r['printed_all_to_all_cycles'])} |\n")
    return head + "".join(lines)


QUEUEING = (0, 20)  # D, cycles


def table_four(algorithm: str, run: AtaRun, D: int) -> float:
    """Table IV as printed, for the network and packets of `run`, with mu alpha = rM and tau_S the engine's
    stored restart (ata.startup): S + MARK_CYCLES where a receiver marks the copy for its NP, S for FRS,
    whose NP restarts every message itself."""
    n = run.nodes
    hop = startup(run) + run.r * run.length + D
    log_n = math.log2(n)
    if algorithm == "ihc":
        return float(run.eta * (n - 1) * hop)
    if algorithm == "ks":
        return float(n * (2 * math.sqrt((n - 1) / 3) - 2) * hop)
    if algorithm == "vsq":
        return float(n * (2 * math.sqrt(n) - 3) * hop)
    if algorithm == "vrs":
        return float(n * (log_n + 1) * hop)
    return float((log_n + 1) * (startup(run) + D) + (n - 1) * run.r * run.length)


def stored_hops(row: dict) -> str:
    """The stored hops on the longest path, by their count in our patterns."""
    if row["algorithm"] == "ihc":
        return f"eta(N-1) = {row['eta']} x {row['nodes'] - 1}"
    what = {"ks": "2n - 2", "vsq": "3(m-1)/2", "vrs": "m + 1", "frs": "m + 1"}[row["algorithm"]]
    return f"{what} = {row['stored_hops']}" + (" steps" if row["algorithm"] == "frs" else "")


def table_four_hops(algorithm: str, n: int) -> str:
    """Table IV's count of stored hops, where it is not the engine's pattern's."""
    if algorithm == "ks":
        return f"Table IV counts 2 sqrt((N-1)/3) - 2 = {2 * math.sqrt((n - 1) / 3) - 2:.2f} stored hops"
    if algorithm == "vsq":
        return f"Table IV counts 2 sqrt(N) - 3 = {2 * math.sqrt(n) - 3:.0f} stored hops (for the paper's pattern)"
    return ""


def worst_case_rows() -> list[dict]:
    """Every algorithm on the engine with every hop stored and forwarded (section VI-B), for D in QUEUEING,
    beside Table IV as printed."""
    rows = []
    for case in CASES:
        for D in QUEUEING:
            run = case.run(D)
            rows.append({"algorithm": case.algorithm, "network": network(case.spec), "nodes": run.nodes,
                         "eta": run.eta or "", "queueing_D": D, "S": float(run.S), "tau_S": float(startup(run)),
                         "stored_hops": run.stored_hops, "engine_cycles": float(run.completion_cycles),
                         "longest_path_cycles": float(run.formula_cycles), "table_4_cycles": table_four(case.algorithm, run, D),
                         "contention_free": run.contention_free, "copies_per_node": run.copies_per_node_min,
                         "table_4_differs": table_four_hops(case.algorithm, run.nodes)})
    return rows


def worst_case_markdown(rows: list[dict]) -> str:
    """One row per network and algorithm, D = 0 and D = 20 side by side."""
    first = rows[0]
    head = (f"Table IV with tau_S = S + {MARK_CYCLES} = {first['tau_S']:g} cycles: S = {first['S']:g}, and one cycle "
            f"in which the receiver marks each stored copy for its NP (ata.MARK_CYCLES). FRS with tau_S = S, since "
            f"its NP restarts each message itself. \"Longest path\": N x stored hops x (tau_S + rM + D), or "
            f"eta(N-1)(tau_S + rM + D) for IHC and (m+1)(S + D) + (N-1)rM for FRS.\n\n"
            f"| algorithm | network | N | stored hops | engine, D = {QUEUEING[0]} | Table IV, D = {QUEUEING[0]} | "
            f"engine, D = {QUEUEING[1]} | Table IV, D = {QUEUEING[1]} | "
            f"engine = longest path | contention-free | copies | where Table IV differs |\n"
            f"|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for low, high in zip(rows[::2], rows[1::2]):
        hops = stored_hops(low)
        exact = all(r["engine_cycles"] == r["longest_path_cycles"] for r in (low, high))
        lines.append(f"| {NAMES[low['algorithm']]} | {low['network']} | {low['nodes']} | {hops} | "
                     f"{number(low['engine_cycles'])} | {number(low['table_4_cycles'])} | "
                     f"{number(high['engine_cycles'])} | {number(high['table_4_cycles'])} | {'yes' if exact else 'no'} | "
                     f"{'yes' if low['contention_free'] and high['contention_free'] else 'no'} | "
                     f"{low['copies_per_node']} | {low['table_4_differs'] or '-'} |\n")
    return head + "".join(lines)


def overlapped(row: dict) -> str:
    """How an overlapped row's stages start, after its algorithm's name."""
    if not row["overlapped"]:
        return ""
    return " overlapped" if int(row["early"]) == int(row["mu"]) - 1 else f" overlapped, {row['early']}d early"


def markdown(rows: list[dict]) -> str:
    """Tables II and III (rows without a claim), then the claim rows."""
    plain = [r for r in rows if not r["claim"]]
    claims = [r for r in rows if r["claim"]]
    head = ("| algorithm | network | N | eta | M | engine | formula | Table II as printed | Table III as printed "
            "| contention-free | copies |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    first = head + "".join(
        f"| {NAMES[r['algorithm']]} | {r['network']} | {r['nodes']} | {r['eta'] or '-'} | {r['length_bytes']} | "
        f"{number(r['engine_cycles'])} | {number(r['formula_cycles'])} | {number(r['table_2_cycles'])} | "
        f"{number(r['table_3_cycles'])} | {'yes' if r['contention_free'] else 'no'} | {r['copies_per_node']} |\n"
        for r in plain)
    head = ("| checks | algorithm | network | eta | mu | M | timing | engine | formula | contention-free | measured |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|\n")
    second = head + "".join(
        f"| {r['claim']} | {NAMES[r['algorithm']]}{overlapped(r)} | {r['network']} | "
        f"{r['eta'] or '-'} | {r['mu']} | {r['length_bytes']} | {r['timing']} | {number(r['engine_cycles'])} | "
        f"{number(r['formula_cycles'])} | {'yes' if r['contention_free'] else 'no'} | {r['measured']} |\n"
        for r in claims)
    return first + "\n" + second
