"""What paper 001's all-to-all reliable broadcasts tolerate: trials with random fault sets, as `harts faults`
does for one broadcast, but over every ordered pair of non-faulty nodes (u, v): does v decide u's value?

* Crashed nodes and dead links (faults a checksum shows): v decides if any copy of u's message reaches it
  (the first-valid rule).
* Byzantine nodes: v decides u's value if more than half of the copies it got carry it (the majority
  rule); no majority, no decision. Each copy arrives on its own incoming link (every algorithm here sends
  its gamma copies over distinct links into v), so this is the one-copy-per-link rule of
  harts.faults.reception.

FRS is left out: its merged messages carry many sources' packets and are counted by bytes only.

`fault_trials()` writes RESULTS/paper001/fault_trials.csv and .md: every tolerant algorithm on two networks or
more, TRIALS random fault sets per count, as `harts ata --crash F | --byzantine F | --dead-links F --trials 20`
runs them (seed 1, up to gamma - 1 crashes and dead links, floor((gamma - 1)/2) Byzantine nodes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...faults.fault_set import faults_from_config
from ...faults.tolerance import ToleranceRow
from ...machine.config import Config, defaults
from ...network import build_topology, port_count
from ...output import write_text
from ..sweep import write_csv
from .ata import AtaRun, run_algorithm
from .tables import HEX3, HEX5, HEX6, NAMES, SQ, Q, network

KINDS = {"crash": "faults__random_crashed", "byzantine": "faults__random_byzantine",
         "dead_links": "faults__random_dead_links"}
TOLERANT = ("ihc", "ks", "vsq", "vrs")


def decided(run: AtaRun, faulty: np.ndarray, kind: str) -> np.ndarray:
    """[v, u]: v decided u's value; False where u or v is faulty or u == v."""
    if kind == "byzantine":
        correct = 2 * run.true_copies > run.copies
    else:
        correct = run.copies > 0
    return correct & eligible_pairs(run.nodes, faulty)


def eligible_pairs(n: int, faulty: np.ndarray) -> np.ndarray:
    """[v, u]: both non-faulty and distinct."""
    good = np.ones(n, dtype=bool)
    good[faulty] = False
    return good[:, None] & good[None, :] & ~np.eye(n, dtype=bool)


def trial(config: Config, algorithm: str, kind: str, count: int, fault_seed: int, behaviour: str = "alter",
          **options) -> tuple[float, bool]:
    """One all-to-all run (`options` as run_algorithm's) with `count` random faults of `kind`: the share of
    eligible ordered pairs that decided correctly, and whether all did."""
    config = config.with_values(**{KINDS[kind]: count}, faults__seed=fault_seed, faults__random_behaviour=behaviour)
    faulty = faults_from_config(config, build_topology(config.topology_spec)).faulty_nodes
    run = run_algorithm(config, algorithm, **options)
    ok = decided(run, faulty, kind)
    eligible = eligible_pairs(run.nodes, faulty)
    return float(ok.sum() / eligible.sum()), bool(ok.sum() == eligible.sum())


def ata_tolerance(config: Config, algorithm: str, kind: str, max_faults: int, trials: int, seed: int = 1,
                  behaviour: str = "alter", **options) -> list[ToleranceRow]:
    """For f = 0..max_faults: `trials` random sets of f faults of `kind` (any node can be faulty: every node
    is a source), one all-to-all broadcast each (`options` as run_algorithm's)."""
    rng = np.random.default_rng(seed)
    rows = []
    topology = build_topology(config.topology_spec).name
    for f in range(max_faults + 1):
        outcomes = [trial(config, algorithm, kind, f, int(rng.integers(2**31)), behaviour, **options)
                    for _ in range(trials if f else 1)]  # with no faults every trial is the same run
        fractions = [share for share, _ in outcomes]
        rows.append(ToleranceRow(algorithm, topology, f, kind, behaviour, len(outcomes), float(np.mean(fractions)),
                                 float(np.mean([all_ok for _, all_ok in outcomes])), float(np.min(fractions))))
    return rows



TRIALS = 20
SEED = 1
TRIAL_CASES = (("ihc", HEX3), ("ihc", HEX6), ("ihc", SQ[4]), ("ihc", SQ[8]), ("ihc", Q[4]), ("ihc", Q[6]),
               ("ks", HEX3), ("ks", HEX5), ("vsq", SQ[5]), ("vsq", SQ[7]), ("vrs", Q[4]), ("vrs", Q[6]))
TRIAL_KINDS = ("crash", "byzantine", "dead_links")


def most_faults(kind: str, gamma: int) -> int:
    """The faults the paper's reasoning says gamma copies tolerate: gamma - 1 crashes or dead links,
    floor((gamma - 1)/2) Byzantine nodes."""
    return (gamma - 1) // 2 if kind == "byzantine" else gamma - 1


def fault_trials(results: Path, trials: int = TRIALS, seed: int = SEED) -> list[dict]:
    """Every case of TRIAL_CASES, each kind of fault from 1 to most_faults, as ata_tolerance runs them (a
    count's trials follow the lower counts' in one random stream, as in `harts ata`)."""
    rows = []
    for algorithm, spec in TRIAL_CASES:
        config, gamma = defaults().with_values(topology=spec), port_count(spec)
        for kind in TRIAL_KINDS:
            for r in ata_tolerance(config, algorithm, kind, most_faults(kind, gamma), trials, seed)[1:]:
                rows.append({"algorithm": algorithm, "network": network(spec), "gamma": gamma, "kind": kind,
                             "faults": r.faults, "behaviour": r.behaviour if kind == "byzantine" else "",
                             "trials": r.trials, "correct_fraction": r.correct_fraction,
                             "all_correct_fraction": r.all_correct_fraction, "worst_fraction": r.worst_fraction})
    out = results / "paper001"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "fault_trials.csv")
    write_text(out / "fault_trials.md", fault_trials_markdown(rows))
    return rows


def share(x: float, places: int) -> str:
    """A share as the fault table prints it: 0 and 1 bare, others to `places` decimals."""
    return f"{x:g}" if x in (0.0, 1.0) else f"{x:.{places}f}"


def fault_trials_markdown(rows: list[dict]) -> str:
    """One row per algorithm and network; a cell per count of faults, lowest first."""
    head = ("Each cell: the share of ordered non-faulty pairs that decide correctly, mean over "
            f"{rows[0]['trials']} trials; in brackets, the share of trials in which every pair did.\n\n"
            "| algorithm | network | gamma | crashes 1, 2, ..., gamma - 1 | Byzantine 1, ..., floor((gamma-1)/2) "
            "| dead links 1, 2, ..., gamma - 1 |\n|---|---|---|---|---|---|\n")
    lines = []
    for algorithm, spec in TRIAL_CASES:
        mine = [r for r in rows if (r["algorithm"], r["network"]) == (algorithm, network(spec))]
        cells = [" / ".join(f"{share(r['correct_fraction'], 3)} ({share(r['all_correct_fraction'], 2)})"
                            for r in mine if r["kind"] == kind) for kind in TRIAL_KINDS]
        lines.append(f"| {NAMES[algorithm]} | {network(spec)} | {mine[0]['gamma']} | {' | '.join(cells)} |\n")
    return head + "".join(lines)
