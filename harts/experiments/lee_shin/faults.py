"""What paper 001's all-to-all reliable broadcasts tolerate: trials with random fault sets, as `harts faults`
does for one broadcast, but over every ordered pair of non-faulty nodes (u, v): does v decide u's value?

* Crashed nodes and dead links (faults a checksum shows): v decides if any copy of u's message reaches it
  (the first-valid rule).
* Byzantine nodes: v decides u's value if more than half of the copies it got carry it (the majority
  rule); no majority, no decision. Each copy arrives on its own incoming link (every algorithm here sends
  its gamma copies over distinct links into v), so this is the one-copy-per-link rule of
  harts.faults.reception.

FRS is left out: its merged messages carry many sources' packets and are counted by bytes only.
"""

from __future__ import annotations

import numpy as np

from ...faults.fault_set import faults_from_config
from ...faults.tolerance import ToleranceRow
from ...machine.config import Config
from ...network import build_topology
from .ata import AtaRun, run_algorithm

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

