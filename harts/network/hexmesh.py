"""The C-wrapped hexagonal mesh E-n of HARTS.

Kandlur & Shin, "Reliable Broadcast Algorithms for HARTS" (1991): the mesh E-n of size n >= 3 has
N = 3n(n-1)+1 nodes labelled 0..N-1; the six directions (ports) move by +1, +(3n-1), +(3n-2), -1,
-(3n-1), -(3n-2) (mod N), and direction d is undone by direction (d+3) mod 6. A route has three signed
offsets, one per axis: offset a > 0 asks for |t_a| hops along direction a, offset a < 0 for |t_a| hops
along direction a+3.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from .topology import (
    Topology,
    arrival_ports,
    int64_array,
    jit_offsets,
    register_pair_distance_sum,
    register_views,
    require_int,
)

MIN_SIZE = 3

# Per direction, the offsets of a single hop along it; row d for direction d.
_HOP_OFFSETS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1],
                         [-1, 0, 0], [0, -1, 0], [0, 0, -1]], dtype=np.int64)

# Unit vectors of the six directions, counterclockwise as in the paper's Fig. 3a (direction 0 is +1).
UNIT = np.array([(math.cos(math.pi / 3 * d), math.sin(math.pi / 3 * d)) for d in range(6)])


def hex_node_count(n: int) -> int:
    return 3 * n * (n - 1) + 1


def hex_mesh(n: int) -> Topology:
    """The C-wrapped hexagonal mesh E-n, defined by the paper for n >= 3."""
    n = require_int(n, "hex mesh size", MIN_SIZE)
    n_nodes = hex_node_count(n)
    step = _HOP_OFFSETS @ _axis_offsets(n)
    neighbours = int64_array((np.arange(n_nodes, dtype=np.int64)[:, None] + step[None, :]) % n_nodes)
    return Topology(
        kind="hex",
        name=f"E-{n}",
        shape=int64_array([n]),
        neighbours=neighbours,
        in_port=arrival_ports(neighbours),
        opposite=int64_array((np.arange(6) + 3) % 6),
        axis_positive=int64_array([0, 1, 2]),
        axis_negative=int64_array([3, 4, 5]),
        # A private writable copy: numba's int64[:, ::1] in OFFSETS_SIGNATURE does not accept read-only arrays.
        offset_table=np.array(_hex_offset_table(n)),
        offsets_function=hex_offsets,
        port_names=("+1", "+(3n-1)", "+(3n-2)", "-1", "-(3n-1)", "-(3n-2)"),
    )


@jit_offsets
def hex_offsets(src, dst, shape, table, out):
    """Row (dst - src) mod N of the table: valid for every src because the mesh is circulant."""
    row = (dst - src) % table.shape[0]
    hops = 0
    for axis in range(3):
        out[axis] = table[row, axis]
        hops += abs(table[row, axis])
    return hops


def _axis_offsets(n: int) -> np.ndarray:
    """Node-number change of one positive hop along each axis; axis 1 is the sum of axes 0 and 2."""
    return np.array([1, 3 * n - 1, 3 * n - 2], dtype=np.int64)


@cache
def _hex_offset_table(n: int) -> np.ndarray:
    """Route offsets for every node difference (dst - src) mod N of mesh E-n, shape (N, 3), read-only.

    A shortest route never mixes non-adjacent directions (hops in opposite directions cancel, and a
    hop in each of two directions 120 degrees apart equals one hop in the direction between them), so
    it is i hops along some direction s and j along s+1 with i + j <= n-1, the diameter. Those
    (s, i, j) cover the radius-(n-1) hexagon, which maps onto the N differences one-to-one; the only
    repeats are the i = 0 or j = 0 rims shared by neighbouring sectors, and they carry identical offsets,
    so plain assignment fills the table, and the minimal offsets are unique: no tie-breaking is needed.
    Read-only because every call for this size shares the cached array.
    """
    n_nodes = hex_node_count(n)
    i, j = np.nonzero(np.add.outer(np.arange(n), np.arange(n)) < n)
    offsets = np.concatenate([i[:, None] * _HOP_OFFSETS[s] + j[:, None] * _HOP_OFFSETS[(s + 1) % 6]
                              for s in range(6)])
    table = np.zeros((n_nodes, 3), dtype=np.int64)
    table[(offsets @ _axis_offsets(n)) % n_nodes] = offsets
    table.setflags(write=False)
    return table


def _label(shape: np.ndarray, v: int) -> str:
    return str(v)


def _positions(topology: Topology) -> np.ndarray:
    """The hexagon of radius n-1 around node 0, each node placed by its route from node 0."""
    offsets = topology.route_offsets(np.zeros(topology.n_nodes, dtype=np.int64), np.arange(topology.n_nodes))
    return offsets @ UNIT[topology.axis_positive]


def _pair_distance_sum(topology: Topology) -> int:
    """The mesh is node-symmetric (a circulant graph): every node sees node 0's distances."""
    n = topology.n_nodes
    return n * int(topology.distance(np.zeros(n, dtype=np.int64), np.arange(n)).sum())


def _wraps(topology: Topology) -> np.ndarray:
    """A link wraps if its far end is not one unit step away in its direction."""
    xy = _positions(topology)
    return ~np.isclose(xy[topology.neighbours] - xy[:, None, :], UNIT[None, :, :]).all(axis=2)


register_views("hex", _label, _positions, _wraps)
register_pair_distance_sum("hex", _pair_distance_sum)
