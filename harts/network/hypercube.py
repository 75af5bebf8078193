"""The binary hypercube Q_m: 2^m nodes, node v linked to v XOR 2^i through port i.

Paper 001 (Lee & Shin, "Interleaved All-to-All Reliable Broadcast on Meshes and Hypercubes") runs its
broadcasts on it. Each bit is an axis, crossed in either direction through the same port, so
axis_positive and axis_negative are both [0..m-1] and every port is its own opposite.
"""

from __future__ import annotations

import numpy as np

from .topology import (
    Topology,
    arrival_ports,
    int64_array,
    jit_offsets,
    product_pair_distance_sum,
    register_pair_distance_sum,
    register_views,
    require_int,
)

MIN_DIMENSION = 1
# Node numbers are int64.
MAX_DIMENSION = 62


def hypercube(m: int) -> Topology:
    """Q_m for m >= 1."""
    m = require_int(m, "hypercube dimension", MIN_DIMENSION, MAX_DIMENSION)
    nodes = np.arange(2 ** m, dtype=np.int64)
    neighbours = int64_array(nodes[:, None] ^ (1 << np.arange(m, dtype=np.int64))[None, :])
    ports = np.arange(m)
    return Topology(
        kind="hypercube",
        name=f"Q{m}",
        shape=int64_array([m]),
        neighbours=neighbours,
        in_port=arrival_ports(neighbours),
        opposite=int64_array(ports),
        axis_positive=int64_array(ports),
        axis_negative=int64_array(ports),
        offset_table=np.zeros((1, m), dtype=np.int64),
        offsets_function=hypercube_offsets,
        port_names=tuple(f"bit {i}" for i in ports),
    )


@jit_offsets
def hypercube_offsets(src, dst, shape, table, out):
    """+1 on the axis of a bit to set, -1 of a bit to clear: the sign only records which way the bit
    changes, both go through the same port."""
    hops = 0
    for bit in range(shape[0]):
        if (src ^ dst) >> bit & 1:
            out[bit] = 1 if dst >> bit & 1 else -1
            hops += 1
        else:
            out[bit] = 0
    return hops


def _label(shape: np.ndarray, v: int) -> str:
    return format(v, f"0{shape[0]}b")


def gray_rank(codes: np.ndarray) -> np.ndarray:
    """Position of each Gray code in the Gray sequence, so that neighbouring positions differ in one bit."""
    rank = np.array(codes, dtype=np.int64)
    shift = rank >> 1
    while shift.any():
        rank ^= shift
        shift >>= 1
    return rank


def _positions(topology: Topology) -> np.ndarray:
    """Low half of the bits along x and high half along y, each in Gray order: every link between
    horizontally or vertically adjacent positions is a hypercube link."""
    m = int(topology.shape[0])
    low_bits = (m + 1) // 2
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    return np.column_stack((gray_rank(nodes & ((1 << low_bits) - 1)), gray_rank(nodes >> low_bits)))


register_views("hypercube", _label, _positions)
# each bit is a line of two positions
register_pair_distance_sum("hypercube", lambda t: product_pair_distance_sum(t.n_nodes, [2] * int(t.shape[0]),
                                                                          [False] * int(t.shape[0])))
