"""Reception: how a node turns the copies of one broadcast into a decided value (Ramanathan & Shin's
reception mechanisms, which paper 000 section 4 adopts for the hexagonal mesh).

A node takes at most one copy per incoming link: the k node-disjoint paths of a k-BCAST end on k
different links, so a faulty neighbour can spoil at most one of them however many copies it sends.
Copies arriving after the deadline are ignored.

* majority: the node decides the value carried by more than half of its accepted copies (a damaged
  copy counts as a vote for no value); no majority, no decision.
* first-valid: the node decides the value of its first accepted copy whose checksum holds; this is
  the rule for faults a checksum detects (crashes, dead links, corruption), not for Byzantine ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..controller import records as R

RULES = ("majority", "first-valid")


@dataclass
class Decisions:
    """Per broadcast (rows, in initiation order) and node (columns)."""

    correct: np.ndarray  # bool: decided the value the source sent
    eligible: np.ndarray  # bool: a non-faulty node other than the source
    copies: np.ndarray  # accepted copies

    def correct_fraction(self) -> np.ndarray:
        """Per broadcast: the share of eligible nodes that decided correctly."""
        return (self.correct & self.eligible).sum(axis=1) / self.eligible.sum(axis=1)

    def all_correct(self) -> np.ndarray:
        return ((self.correct | ~self.eligible).all(axis=1))


def broadcasts(traffic) -> np.ndarray:
    """The traffic records that start a broadcast (initiations whose argument names an algorithm)."""
    return np.nonzero((traffic.kind == R.TRAFFIC_INITIATE) & (traffic.argument != 0))[0]


def decide(result, rule: str, deadline_ticks: np.ndarray | int) -> Decisions:
    """What every node decides for every broadcast of a run, copies counted up to `deadline_ticks` after
    each broadcast started (one deadline, or one per broadcast)."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}")
    dl, topo = result.deliveries, result.topology
    n = topo.n_nodes
    starts = broadcasts(result.traffic)
    b = len(starts)
    rows, which = result.copies_of(starts)
    elapsed = dl[R.DL_TICK, rows] - result.traffic.create[starts[which]] * result.ticks_per_cycle
    in_time = elapsed <= np.broadcast_to(np.asarray(deadline_ticks), (b,))[which]
    rows, which, elapsed = rows[in_time], which[in_time], elapsed[in_time]
    # one copy per (broadcast, node, incoming link): the first to arrive
    node = dl[R.DL_NODE, rows]
    link = (which * n + node) * topo.n_ports + dl[R.DL_DIR, rows]
    order = np.lexsort((elapsed, link))
    first = order[np.diff(link[order], prepend=-1) != 0]
    rows, which, node, elapsed = rows[first], which[first], node[first], elapsed[first]
    valid = dl[R.DL_CORRUPT, rows] == 0
    true = valid & (dl[R.DL_VALUE, rows] == R.VALUE_TRUE)
    cell = which * n + node
    copies = np.bincount(cell, minlength=b * n).reshape(b, n)
    if rule == "majority":
        votes = np.bincount(cell, weights=true, minlength=b * n).reshape(b, n)
        correct = 2 * votes > copies
    else:
        correct = np.zeros(b * n, dtype=bool)
        candidates = np.nonzero(valid)[0]
        candidates = candidates[np.lexsort((elapsed[candidates], cell[candidates]))]
        firsts = candidates[np.diff(cell[candidates], prepend=-1) != 0]
        correct[cell[firsts]] = true[firsts]
        correct = correct.reshape(b, n)
    eligible = np.broadcast_to(result.faults.node_fault == R.FAULT_NONE, (b, n)).copy()
    eligible[np.arange(b), result.traffic.source[starts]] = False
    return Decisions(correct, eligible, copies)
