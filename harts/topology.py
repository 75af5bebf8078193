"""The C-wrapped hexagonal mesh of HARTS and its shortest-path routing tags.

Kandlur & Shin, "Reliable Broadcast Algorithms for HARTS" (1991): the mesh E-n of size n >= 3 has
N = 3n(n-1)+1 nodes labelled 0..N-1; the six directions move by +1, +(3n-1), +(3n-2), -1, -(3n-1),
-(3n-2) (mod N), and direction d is undone by direction (d+3) mod 6. A packet carries three signed
routing tags, one per axis: tag a > 0 asks for |t_a| hops along direction a, tag a < 0 for |t_a| hops
along direction a+3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

# Per direction, the tag triple of a single hop along it; row d for direction d.
_HOP_TAGS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1],
                      [-1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=np.int64)


@dataclass(frozen=True, eq=False)
class Topology:
    """A node-symmetric network whose routes are described by per-axis signed hop counts.

    The arrays are plain int64 so the simulation kernel can take them as they are. Equality is by
    identity (``eq=False``) because element-wise array comparison has no single truth value.
    """

    name: str
    size: int
    neighbours: np.ndarray
    opposite: np.ndarray
    axis_positive: np.ndarray
    axis_negative: np.ndarray
    # Row o holds the routing tags from any node v to node (v + o) mod N; valid for every v because
    # the mesh is circulant, which lets one table of N rows serve all N*N pairs.
    _offset_tags: np.ndarray = field(repr=False)

    @property
    def n_nodes(self) -> int:
        return self.neighbours.shape[0]

    @property
    def n_ports(self) -> int:
        return self.neighbours.shape[1]

    @property
    def n_axes(self) -> int:
        return self.axis_positive.shape[0]

    def routing_tags(self, src: int, dst: int) -> np.ndarray:
        """Tags (t0, t1, t2) of the shortest route from ``src`` to ``dst``; see ``routing_tags_many``."""
        return self.routing_tags_many(np.array([src]), np.array([dst]))[0]

    def routing_tags_many(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Tags of the shortest routes for whole arrays of packets at once, shape (K, n_axes).

        At most two tags are non-zero and the sum of their magnitudes is the hop distance. The minimal
        triple is unique, so no tie-breaking rule is needed: the hexagon of radius n-1 around a node
        holds exactly 3n(n-1)+1 = N nodes and the wrap-around maps it onto the mesh one-to-one, so each
        destination has exactly one shortest displacement, i.e. one unordered pair of adjacent
        directions with their hop counts (the tests check this by brute force).

        Node numbers are checked because an out-of-range one would otherwise wrap silently into a
        valid but wrong route.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        n = self.n_nodes
        for what, nodes in (("source", src), ("destination", dst)):
            if nodes.size and (nodes.min() < 0 or nodes.max() >= n):
                raise ValueError(f"{what} node out of range 0..{n - 1}")
        return self._offset_tags[(dst - src) % n]

    def walk(self, start: np.ndarray, direction: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """Node reached from each ``start`` after ``steps`` hops along ``direction`` (vectorised)."""
        node = np.array(start, dtype=np.int64, copy=True)
        direction = np.asarray(direction, dtype=np.int64)
        steps = np.asarray(steps, dtype=np.int64)
        for s in range(int(steps.max(initial=0))):
            moving = steps > s
            node[moving] = self.neighbours[node[moving], direction[moving]]
        return node

    def distance(self, src: int, dst: int) -> int:
        """Hop count of the shortest route from ``src`` to ``dst``."""
        return int(np.abs(self.routing_tags(src, dst)).sum())


def hex_mesh(n: int) -> Topology:
    """The C-wrapped hexagonal mesh E-n, defined by the paper for n >= 3, with N = 3n(n-1)+1 nodes."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"mesh size must be an integer >= 3, got {n!r}")
    n = int(n)
    n_nodes = 3 * n * (n - 1) + 1
    step = _HOP_TAGS @ _axis_offsets(n)
    return Topology(
        name=f"hexmesh-{n}",
        size=n,
        neighbours=(np.arange(n_nodes, dtype=np.int64)[:, None] + step[None, :]) % n_nodes,
        opposite=(np.arange(6, dtype=np.int64) + 3) % 6,
        axis_positive=np.array([0, 1, 2], dtype=np.int64),
        axis_negative=np.array([3, 4, 5], dtype=np.int64),
        _offset_tags=_hex_offset_tags(n),
    )


def _axis_offsets(n: int) -> np.ndarray:
    """Node-number change of one positive hop along each axis; axis 1 is the sum of axes 0 and 2."""
    return np.array([1, 3 * n - 1, 3 * n - 2], dtype=np.int64)


@lru_cache(maxsize=None)
def _hex_offset_tags(n: int) -> np.ndarray:
    """Routing tags for every offset (dst - src) mod N of mesh E-n, shape (N, 3), read-only.

    A shortest route never mixes non-adjacent directions (hops in opposite directions cancel, and a
    hop in each of two directions 120 degrees apart equals one hop in the direction between them), so
    it is i hops along some direction s and j along s+1 with i + j <= n-1, the diameter. Those
    (s, i, j) cover the radius-(n-1) hexagon, which maps onto the N offsets one-to-one; the only
    repeats are the i = 0 or j = 0 rims shared by neighbouring sectors, and they carry identical tags,
    so plain assignment fills the table.
    Read-only because every Topology of this size shares the cached array.
    """
    n_nodes = 3 * n * (n - 1) + 1
    i, j = np.nonzero(np.add.outer(np.arange(n), np.arange(n)) < n)
    tags = np.concatenate([i[:, None] * _HOP_TAGS[s] + j[:, None] * _HOP_TAGS[(s + 1) % 6]
                           for s in range(6)])
    table = np.zeros((n_nodes, 3), dtype=np.int64)
    table[(tags @ _axis_offsets(n)) % n_nodes] = tags
    table.setflags(write=False)
    return table
