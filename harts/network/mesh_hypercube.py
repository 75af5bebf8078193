"""The mesh-hypercube MH(m, n): m levels, each a hypercube of n nodes, stacked into linear meshes.

Al-Mahadeen & Omari, "A Broadcast Algorithm for All-port Wormhole-routed Mesh-hypercube Network": node
(L, X) with level 1 <= L <= m and cube address 0 <= X < n (n a power of two); (L1, X) and (L2, Y) are
linked iff X == Y and |L1 - L2| == 1, or L1 == L2 and X, Y differ in exactly one bit. N = m*n.
Node (L, X) is numbered (L-1)*n + X. Port 0 goes up a level (L+1), port 1 down (L-1), port 2+i flips
cube bit i. Axis 0 is the level (signed level difference); axis 1+i is cube bit i, as in the hypercube.
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

MIN_LEVELS = 1
MIN_CUBE = 2


def require_power_of_two(value: int, what: str) -> int:
    if value & (value - 1):
        raise ValueError(f"{what} must be a power of two, got {value}")
    return value


def mesh_hypercube(levels: int, cube: int) -> Topology:
    """MH(levels, cube) for levels >= 1 and cube a power of two >= 2."""
    m = require_int(levels, "mesh-hypercube levels", MIN_LEVELS)
    n = require_power_of_two(require_int(cube, "mesh-hypercube cube", MIN_CUBE), "mesh-hypercube cube")
    bits = n.bit_length() - 1
    nodes = np.arange(m * n, dtype=np.int64)
    level = nodes // n + 1
    neighbours = np.empty((m * n, 2 + bits), dtype=np.int64)
    neighbours[:, 0] = np.where(level < m, nodes + n, -1)
    neighbours[:, 1] = np.where(level > 1, nodes - n, -1)
    neighbours[:, 2:] = nodes[:, None] ^ (1 << np.arange(bits, dtype=np.int64))[None, :]
    cube_ports = np.arange(2, 2 + bits)
    return Topology(
        kind="mesh_hypercube",
        name=f"MH({m},{n})",
        shape=int64_array([m, n]),
        neighbours=neighbours,
        in_port=arrival_ports(neighbours),
        opposite=int64_array([1, 0, *cube_ports]),
        axis_positive=int64_array([0, *cube_ports]),
        axis_negative=int64_array([1, *cube_ports]),
        offset_table=np.zeros((1, 1 + bits), dtype=np.int64),
        offsets_function=mesh_hypercube_offsets,
        port_names=("up", "down", *(f"bit {i}" for i in range(bits))),
    )


@jit_offsets
def mesh_hypercube_offsets(src, dst, shape, table, out):
    """Level difference on axis 0, then the cube bits as in the hypercube: the two parts of a route are
    independent because a level hop keeps the cube address and a cube hop keeps the level."""
    # The bit loop is not shared with hypercube_offsets: numba's disk cache keys a function on its own
    # file only, so a jitted helper from another module could leave stale machine code behind.
    cube = shape[1]
    out[0] = dst // cube - src // cube
    hops = abs(out[0])
    bit = 0
    while (1 << bit) < cube:
        if (src ^ dst) >> bit & 1:
            out[1 + bit] = 1 if dst >> bit & 1 else -1
            hops += 1
        else:
            out[1 + bit] = 0
        bit += 1
    return hops


def _label(shape: np.ndarray, v: int) -> str:
    cube = int(shape[1])
    return f"({v // cube + 1},{v % cube:0{cube.bit_length() - 1}b})"


def _positions(topology: Topology) -> np.ndarray:
    nodes = np.arange(topology.n_nodes)
    cube = int(topology.shape[1])
    return np.column_stack((nodes % cube, nodes // cube + 1))


def _pair_distance_sum(topology: Topology) -> int:
    """The levels form a line; each cube bit a line of two positions."""
    levels, cube = (int(x) for x in topology.shape)
    bits = cube.bit_length() - 1
    return product_pair_distance_sum(topology.n_nodes, [levels] + [2] * bits, [False] * (1 + bits))


register_views("mesh_hypercube", _label, _positions)
register_pair_distance_sum("mesh_hypercube", _pair_distance_sum)
