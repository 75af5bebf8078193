"""Paper 001's Tables II, III and IV on the engine: every algorithm on two or more sizes of each network it
runs on, at mu = 2, the completion time beside the paper's formulas evaluated with the calibrated S, r and
d (tau_S = S, alpha = d, mu alpha = rM). Writes tables.csv and tables.md (dedicated mode, Tables II and
III) and worst_case.csv and worst_case.md (Table IV: every hop stored and forwarded, queueing delay D;
there a stored restart is S + 1 cycles where a receiver marks the copy for its NP, ata.MARK_CYCLES).

Table II is the general formula; the engine's "best case" column uses the exact counts of each path
(they differ from the printed ones for KS-ATA, VSQ-ATA and VRS-ATA, EXPERIMENTS.md). Table III is Table II with
eta = mu = 2 and mu alpha written as 2 alpha; since the engine's packet time rM (8 cycles at M = 48) is
the 2 alpha = 10 cycles less the idle gap, Table III's values are what the printed rows give with
tau_S = S and alpha = d.
"""

from __future__ import annotations

import math
from pathlib import Path

from ...machine.config import defaults
from ..sweep import write_csv
from .ata import MARK_CYCLES, run_algorithm

MU = 2
CASES = (
    ("ihc", {"kind": "hex", "size": 3}), ("ihc", {"kind": "hex", "size": 6}),
    ("ihc", {"kind": "torus", "dims": [4, 4]}), ("ihc", {"kind": "torus", "dims": [8, 8]}),
    ("ihc", {"kind": "hypercube", "dimension": 4}), ("ihc", {"kind": "hypercube", "dimension": 6}),
    ("ihc", {"kind": "hypercube", "dimension": 8}),
    ("ks", {"kind": "hex", "size": 3}), ("ks", {"kind": "hex", "size": 5}), ("ks", {"kind": "hex", "size": 7}),
    ("vsq", {"kind": "torus", "dims": [5, 5]}), ("vsq", {"kind": "torus", "dims": [7, 7]}),
    ("vrs", {"kind": "hypercube", "dimension": 4}), ("vrs", {"kind": "hypercube", "dimension": 8}),
    ("frs", {"kind": "hypercube", "dimension": 4}), ("frs", {"kind": "hypercube", "dimension": 8}),
)


def table_three(algorithm: str, n: int, S, d) -> float:
    """Table III (eta = mu = 2) as printed, with tau_S = S and alpha = d."""
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


def run_case(algorithm: str, spec: dict, queueing: int | None = None):
    return run_algorithm(defaults().with_values(topology=spec), algorithm, MU, queueing=queueing)


def tables(results: Path) -> list[dict]:
    rows = []
    for algorithm, spec in CASES:
        run = run_case(algorithm, spec)
        rows.append({
            "algorithm": algorithm, "network": run.topology, "nodes": run.nodes, "eta": run.eta or "",
            "mu": run.mu, "length_bytes": run.length, "engine_cycles": float(run.completion_cycles),
            "best_case_cycles": float(run.formula_cycles),
            "table_2_cycles": (run.printed_formula_cycles if run.printed_formula_cycles is not None
                               else float(run.formula_cycles)),
            "table_3_cycles": table_three(algorithm, run.nodes, run.S, run.d) if run.eta in (None, 2) else "",
            "contention_free": run.contention_free, "copies_per_node": run.copies_per_node_min,
        })
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "tables.csv")
    (out / "tables.md").write_text(markdown(rows))
    worst = worst_case_rows()
    write_csv(worst, out / "worst_case.csv")
    (out / "worst_case.md").write_text(worst_case_markdown(worst))
    return rows, worst


QUEUEING = (0, 20)  # D, cycles


def table_four(algorithm: str, run, D: int) -> float:
    """Table IV as printed, for the network and packets of `run`, with mu alpha = rM and tau_S the engine's
    stored restart: S + MARK_CYCLES where a receiver marks the copy for its NP, S for FRS, whose NP restarts
    every message itself."""
    n = run.nodes
    startup = run.S + (0 if algorithm == "frs" else MARK_CYCLES)
    hop = startup + run.r * run.length + D
    log_n = math.log2(n)
    if algorithm == "ihc":
        return float(run.eta * (n - 1) * hop)
    if algorithm == "ks":
        return float(n * (2 * math.sqrt((n - 1) / 3) - 2) * hop)
    if algorithm == "vsq":
        return float(n * (2 * math.sqrt(n) - 3) * hop)
    if algorithm == "vrs":
        return float(n * (log_n + 1) * hop)
    return float((log_n + 1) * (startup + D) + (n - 1) * run.r * run.length)


def worst_case_rows() -> list[dict]:
    """Every algorithm on the engine with every hop stored and forwarded (section VI-B), for D in QUEUEING,
    beside Table IV as printed."""
    rows = []
    for algorithm, spec in CASES:
        for D in QUEUEING:
            run = run_case(algorithm, spec, D)
            rows.append({"algorithm": algorithm, "network": run.topology, "nodes": run.nodes, "queueing_D": D,
                         "engine_cycles": float(run.completion_cycles), "longest_path_cycles": float(run.formula_cycles),
                         "table_4_cycles": table_four(algorithm, run, D), "contention_free": run.contention_free,
                         "copies_per_node": run.copies_per_node_min})
    return rows


def worst_case_markdown(rows: list[dict]) -> str:
    head = ("| algorithm | network | N | D | engine | longest path | Table IV | contention-free | copies |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['algorithm'].upper()} | {r['network']} | {r['nodes']} | {r['queueing_D']} | {r['engine_cycles']:g} | "
        f"{r['longest_path_cycles']:g} | {r['table_4_cycles']:.1f} | {'yes' if r['contention_free'] else 'no'} | "
        f"{r['copies_per_node']} |\n" for r in rows)


def markdown(rows: list[dict]) -> str:
    head = ("| algorithm | network | N | eta | M | engine | best case | Table II | Table III | contention-free "
            "| copies |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['algorithm'].upper()} | {r['network']} | {r['nodes']} | {r['eta'] or '-'} | {r['length_bytes']} | "
        f"{r['engine_cycles']:g} | {r['best_case_cycles']:g} | {r['table_2_cycles']:.1f} | "
        f"{format(r['table_3_cycles'], '.1f') if r['table_3_cycles'] != '' else '-'} | "
        f"{'yes' if r['contention_free'] else 'no'} | {r['copies_per_node']} |\n" for r in rows)
