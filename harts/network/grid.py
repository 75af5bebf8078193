"""Rectangular grids of any number of dimensions: the open mesh and the torus (wrap-around mesh).

A torus whose sides are all equal is the k-ary n-cube; paper 004 (Peters & Syska, "Circuit-Switched
Broadcasting in Torus Networks") and paper 002 (Al-Dubai et al., broadcast on 2-D meshes) use these.
With sides d_0..d_{k-1}, node i_0 + d_0*(i_1 + d_1*(i_2 + ...)) sits at (i_0, i_1, ...), axis 0 varying
fastest. Port a moves +1 along axis a and port k+a moves -1; a mesh has no link past its edges, a torus
wraps. A torus side must be at least 3: a ring of 2 would join the same pair of nodes twice.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel_part
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

MIN_MESH_SIDE = 2
MIN_TORUS_SIDE = 3


def mesh(dims) -> Topology:
    """The open k-dimensional mesh with the given side lengths (each >= 2)."""
    return _grid("mesh", require_dims(dims, "mesh dims", MIN_MESH_SIDE), wrap=False)


def torus(dims) -> Topology:
    """The k-dimensional torus with the given side lengths (each >= 3)."""
    return _grid("torus", require_dims(dims, "torus dims", MIN_TORUS_SIDE), wrap=True)


@jit_offsets
def mesh_offsets(src, dst, shape, table, out):
    hops = 0
    for axis in range(shape.shape[0]):
        side = shape[axis]
        out[axis] = dst % side - src % side
        hops += abs(out[axis])
        src //= side
        dst //= side
    return hops


@jit_offsets
def torus_offsets(src, dst, shape, table, out):
    """Per axis the shorter way round the ring; half-way round on an even ring goes the positive way."""
    hops = 0
    for axis in range(shape.shape[0]):
        side = shape[axis]
        forward = (dst % side - src % side) % side
        out[axis] = forward - side if forward > side // 2 else forward
        hops += abs(out[axis])
        src //= side
        dst //= side
    return hops


_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@kernel_part
def tie_goes_negative(key, uid, axis):
    """Whether packet uid goes the - way on `axis` when its destination is half-way round: one bit of
    splitmix64 of (key, uid, axis), so every packet and axis draws independently of the order events run in."""
    z = np.uint64(key) + np.uint64(uid) * _GOLDEN_GAMMA + np.uint64(axis + 1)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return ((z ^ (z >> np.uint64(31))) & np.uint64(1)) != 0


@kernel_part
def destination_offsets(offsets, machine, tie_key, node, destination, uid, out):
    """Packet uid's route offsets from node to destination, by the network's offsets function, into out; with
    a tie_key (routing.torus_tie: random), each half-way-round axis (offset +side/2 on an even torus side)
    turns to -side/2 when tie_goes_negative draws it. Returns the hops of the route (either way round a tie)."""
    shape = machine.shape
    hops = offsets(node, destination, shape, machine.offset_table, out)
    if tie_key == 0:
        return hops
    for axis in range(shape.shape[0]):
        side = shape[axis]
        if side % 2 == 0 and out[axis] == side // 2 and tie_goes_negative(tie_key, uid, axis):
            out[axis] = -out[axis]
    return hops


def torus_tie_key(config) -> int:
    """The key packets' half-way ties are drawn from (tie_goes_negative): 0, all + (routing.torus_tie:
    positive, or not a torus), else odd and fixed by run.seed."""
    if config.topology_spec.get("kind") != "torus" or config["routing.torus_tie"] != "random":
        return 0
    return 2 * config["run.seed"] + 1


def grid_coordinates(dims: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Coordinates (i_0, i_1, ...) of each node, shape (len(nodes), k)."""
    return (np.asarray(nodes, dtype=np.int64)[:, None] // _strides(dims)[None, :]) % dims[None, :]


def _strides(dims: np.ndarray) -> np.ndarray:
    """Node-number change of one step along each axis."""
    return np.concatenate(([1], np.cumprod(dims)[:-1])).astype(np.int64)


def require_dims(dims, what: str, minimum: int) -> list[int]:
    if not isinstance(dims, (list, tuple, np.ndarray)) or len(dims) == 0:
        raise ValueError(f"{what} must be a non-empty list of side lengths, got {dims!r}")
    return [require_int(side, f"{what} entry {i}", minimum) for i, side in enumerate(dims)]


def _grid(kind: str, dims: list[int], wrap: bool) -> Topology:
    k = len(dims)
    shape = int64_array(dims)
    n_nodes = int(np.prod(shape))
    nodes = np.arange(n_nodes, dtype=np.int64)
    coords = grid_coordinates(shape, nodes)
    strides = _strides(shape)
    neighbours = np.empty((n_nodes, 2 * k), dtype=np.int64)
    for axis, side in enumerate(dims):
        for port, step in ((axis, 1), (k + axis, -1)):
            target = coords[:, axis] + step
            moved = nodes + ((target % side) - coords[:, axis]) * strides[axis]
            neighbours[:, port] = moved if wrap else np.where((target >= 0) & (target < side), moved, -1)
    return Topology(
        kind=kind,
        name=f"{kind} " + "x".join(map(str, dims)),
        shape=shape,
        neighbours=neighbours,
        in_port=arrival_ports(neighbours),
        opposite=int64_array((np.arange(2 * k) + k) % (2 * k)),
        axis_positive=int64_array(np.arange(k)),
        axis_negative=int64_array(np.arange(k, 2 * k)),
        offset_table=np.zeros((1, k), dtype=np.int64),
        offsets_function=torus_offsets if wrap else mesh_offsets,
        port_names=tuple(f"{sign}x{axis}" for sign in "+-" for axis in range(k)),
    )


def _label(shape: np.ndarray, v: int) -> str:
    return "(" + ",".join(map(str, grid_coordinates(shape, np.array([v]))[0])) + ")"


def _positions(topology: Topology) -> np.ndarray:
    """Axes alternate between x and y; each further axis on x (or y) repeats the block drawn so far with
    one empty column (or row) between copies, so a 3-D grid shows as a row of 2-D layers."""
    coords = grid_coordinates(topology.shape, np.arange(topology.n_nodes))
    xy = np.zeros((topology.n_nodes, 2))
    stride = [1.0, 1.0]
    for axis in range(coords.shape[1]):
        direction = axis % 2
        xy[:, direction] += coords[:, axis] * stride[direction]
        stride[direction] = xy[:, direction].max() + 2.0
    return xy


def _wraps(topology: Topology) -> np.ndarray:
    """A torus link wraps if it joins the two ends of its axis, where the coordinate jumps by side - 1."""
    k = topology.n_axes
    nodes = np.arange(topology.n_nodes)
    coords = grid_coordinates(topology.shape, nodes)
    wraps = np.empty(topology.neighbours.shape, dtype=bool)
    for port in range(2 * k):
        axis = port % k
        jump = grid_coordinates(topology.shape, topology.neighbours[:, port])[:, axis] - coords[:, axis]
        wraps[:, port] = np.abs(jump) > 1
    return wraps


register_views("mesh", _label, _positions)
register_views("torus", _label, _positions, _wraps)
register_pair_distance_sum("mesh", lambda t: product_pair_distance_sum(t.n_nodes, t.shape.tolist(), [False] * len(t.shape)))
register_pair_distance_sum("torus", lambda t: product_pair_distance_sum(t.n_nodes, t.shape.tolist(), [True] * len(t.shape)))
