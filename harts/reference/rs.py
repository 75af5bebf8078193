"""Functional model of Ramanathan & Shin's reliable broadcast (RS) on the hypercube Q_m, and of its
cut-through version VRS (paper 001, section V-A), independent of the engine.

The source sends to its m neighbours in step 1; the neighbour in direction i then runs recursive doubling
over directions i+1, i+2, ..., i+m (mod m) in steps 2..m+1: step t of subtree i uses direction
(i + t - 1) mod m, and every node holding the packet after step t - 1 sends it on. In VRS a packet that a
node received in step s and sends on in step s + 1 cuts through (it is *forwarded*); the node's sends in
later steps are *redirections*, each a new packet (store-and-forward). So every send starts a chain that
runs, cutting through, to step m + 1: a column of the paper's Table I. Sends that would return a copy to
the source are left out, as the paper allows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hop:
    step: int
    subtree: int
    sender: int
    receiver: int
    transmissions: int  # packets the copy took to get here (1 + redirections)
    cut_throughs: int


def rs_hops(m: int, source: int = 0) -> list[Hop]:
    """Every send of one RS broadcast on Q_m, in step order, with the T and C of the copy it delivers."""
    hops: list[Hop] = []
    # (node, subtree, step it received in, its copy's T and C)
    holders = [(source ^ (1 << i), i, 1, 1, 0) for i in range(m)]
    hops += [Hop(1, subtree, source, node, 1, 0) for node, subtree, *_ in holders]
    for step in range(2, m + 2):
        new = []
        for node, subtree, received, transmissions, cuts in holders:
            to = node ^ (1 << ((subtree + step - 1) % m))
            if to == source:
                continue
            # forwarded if the node got the packet in the step before: a cut-through, same packet
            forwarded = received == step - 1 and received >= 1
            t, c = (transmissions, cuts + 1) if forwarded else (transmissions + 1, 0 + cuts)
            hops.append(Hop(step, subtree, node, to, t, c))
            new.append((to, subtree, step, t, c))
        holders += new
    return hops

