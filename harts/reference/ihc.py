"""Functional model of Lee & Shin's IHC all-to-all broadcast (paper 001, section IV), independent of the
engine: who starts a packet in which stage, and the path every copy takes.

In stage i (0 <= i < eta), every node v with [ID_j(v)]_eta = i starts a packet along each directed HC_j,
and the packet is relayed for N - 1 hops, so every other node gets one copy per directed HC: gamma copies
in all. ID_j(v) is v's distance from N_0 along HC_j; here N_0 is where each cycle starts
(`harts.network.hamiltonian.directed_cycles`).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np


def senders(cycle: np.ndarray, eta: int, stage: int) -> np.ndarray:
    """The nodes that start a packet along this directed HC in `stage`."""
    return cycle[np.arange(len(cycle)) % eta == stage]


def copy_path(cycle: np.ndarray, source: int, destination: int) -> list[int]:
    """The nodes a copy passes between `source` and `destination` along a directed HC (both excluded)."""
    where = {int(v): i for i, v in enumerate(cycle)}
    start, hops = where[source], (where[destination] - where[source]) % len(cycle)
    return [int(cycle[(start + k) % len(cycle)]) for k in range(1, hops)]


def copy_links(cycle: np.ndarray, source: int, destination: int) -> list[tuple[int, int]]:
    """The directed links a copy crosses from `source` to `destination` along a directed HC."""
    path = [source, *copy_path(cycle, source, destination), destination]
    return list(zip(path, path[1:]))


def smallest_node_cut(paths: list[list[int]]) -> list[int] | None:
    """A smallest set of nodes that meets every path (by exhaustion), or None if a path has no inner node
    (a direct link no crash can cut)."""
    if any(not path for path in paths):
        return None
    nodes = sorted(set().union(*paths))
    for size in range(1, len(paths) + 1):
        for cut in combinations(nodes, size):
            if all(set(path) & set(cut) for path in paths):
                return list(cut)
    raise AssertionError("unreachable: one node from each path meets them all")
