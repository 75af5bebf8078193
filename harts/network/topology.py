"""The network description every topology builder returns and the simulation kernel reads.

A network is a table of numbered ports per node plus a shortest-route rule. A route is a vector of signed
per-axis hop counts ("route offsets"): offset t on axis a asks for |t| hops through port axis_positive[a]
if t > 0, through axis_negative[a] if t < 0, and the hops may be taken axis by axis. Each topology supplies
the rule as a numba function with the fixed signature ``OFFSETS_SIGNATURE`` so the kernel can call it
through a first-class function argument; ``_offsets_many`` is the one loop that Python uses to call it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import types

from ..jit import cached_when_asked

# (src, dst, shape, offset_table, out) -> hop distance; writes the offsets into out[0:n_axes].
OFFSETS_SIGNATURE = types.int64(types.int64, types.int64, types.int64[::1], types.int64[:, ::1],
                                types.int64[::1])

# The kernel is compiled without numba's reference-counting runtime; compiling the offsets functions the
# same way makes any allocation in them a compile error instead of a crash inside the kernel. They are
# compiled (after the first run: loaded from numba's disk cache) for their one signature by the first
# Topology that uses one, not at import, so that a run loads only its own network's (`compiled`).
jit_offsets = cached_when_asked(_nrt=False)
_OFFSETS_MANY_SIGNATURE = types.void(types.FunctionType(OFFSETS_SIGNATURE), types.int64[::1], types.int64[::1],
                                     types.int64[::1], types.int64[:, ::1], types.int64[:, ::1])


@cached_when_asked(_nrt=False)
def _offsets_many(function, src, dst, shape, table, out):
    for k in range(src.shape[0]):
        function(src[k], dst[k], shape, table, out[k])


def compiled(dispatcher, signature):
    """`dispatcher` compiled for `signature` alone, as an explicit signature in the decorator would make it."""
    if not dispatcher.signatures:
        dispatcher.compile(signature)
        dispatcher.disable_compile()
    return dispatcher


# Per kind: (label of one node, drawing coordinates of all nodes, which links wrap around that drawing or
# None if none do); filled in by each builder module so the kind-specific presentation stays next to the
# kind's definition.
_VIEWS: dict[str, tuple[Callable[[np.ndarray, int], str], Callable[[Topology], np.ndarray],
                        Callable[[Topology], np.ndarray] | None]] = {}


def register_views(kind: str, label: Callable[[np.ndarray, int], str],
                   positions: Callable[[Topology], np.ndarray],
                   wraps: Callable[[Topology], np.ndarray] | None = None) -> None:
    _VIEWS[kind] = (label, positions, wraps)


# Per kind: the sum of hop distances over all ordered pairs of nodes, computed from the kind's structure
# so that it costs nothing like N^2 distance evaluations on a large network.
_PAIR_DISTANCE_SUMS: dict[str, Callable[[Topology], int]] = {}


def register_pair_distance_sum(kind: str, pair_distance_sum: Callable[[Topology], int]) -> None:
    _PAIR_DISTANCE_SUMS[kind] = pair_distance_sum


def line_pair_distance_sum(side: int, wrap: bool) -> int:
    """Sum of hop distances over all ordered pairs of positions on a line of `side` positions (wrap: a ring)."""
    d = np.arange(1, side, dtype=np.int64)
    if wrap:
        # from each of the `side` positions, the one d steps on is min(d, side - d) hops away
        return side * int(np.minimum(d, side - d).sum())
    # side - d pairs are d apart, taken in both orders
    return int((2 * (side - d) * d).sum())


def product_pair_distance_sum(n_nodes: int, sides, wraps) -> int:
    """The pair distance sum of a product of lines and rings (a node's distance is the sum over the factors):
    each factor's own sum, times the ways to choose the other coordinates of both nodes."""
    return sum((n_nodes // side) ** 2 * line_pair_distance_sum(side, wrap) for side, wrap in zip(sides, wraps))


@dataclass(frozen=True, eq=False)
class Topology:
    """A network: port tables, the axis/port convention of route offsets, and the offsets rule.

    All arrays are C-contiguous int64 so the kernel can take them as they are. Equality is by identity
    (``eq=False``) because element-wise array comparison has no single truth value.
    """

    kind: str
    name: str
    shape: np.ndarray
    neighbours: np.ndarray
    in_port: np.ndarray
    opposite: np.ndarray
    axis_positive: np.ndarray
    axis_negative: np.ndarray
    offset_table: np.ndarray
    offsets_function: object  # a jit_offsets function
    port_names: tuple

    def __post_init__(self):
        compiled(self.offsets_function, OFFSETS_SIGNATURE)

    @property
    def n_nodes(self) -> int:
        return self.neighbours.shape[0]

    @property
    def n_ports(self) -> int:
        return self.neighbours.shape[1]

    @property
    def n_axes(self) -> int:
        return self.axis_positive.shape[0]

    def route_offsets(self, src, dst) -> np.ndarray:
        """Offsets of the shortest routes from each ``src`` to the matching ``dst``, shape (K, n_axes).

        Node numbers are checked because an out-of-range one would otherwise turn silently into a valid
        but wrong route.
        """
        src = self._nodes(src, "source")
        dst = self._nodes(dst, "destination")
        if src.shape != dst.shape:
            raise ValueError(f"{src.size} sources but {dst.size} destinations")
        out = np.empty((src.size, self.n_axes), dtype=np.int64)
        compiled(_offsets_many, _OFFSETS_MANY_SIGNATURE)(self.offsets_function, src, dst, self.shape,
                                                         self.offset_table, out)
        return out

    def distance(self, src, dst):
        """Hop count of the shortest routes; an int for two plain node numbers, else an int64 array."""
        offsets = self.route_offsets(src, dst)
        # column by column: numpy's sum over a short last axis takes eight times as long on large arrays
        hops = np.abs(offsets[:, 0])
        for axis in range(1, offsets.shape[1]):
            hops += np.abs(offsets[:, axis])
        if np.ndim(src) == 0 and np.ndim(dst) == 0:
            return int(hops[0])
        return hops

    def mean_distance(self) -> float:
        """Mean hop count of the shortest routes between two distinct nodes: uniform traffic's mean route."""
        return _PAIR_DISTANCE_SUMS[self.kind](self) / (self.n_nodes * (self.n_nodes - 1))

    def walk(self, start, port, steps) -> np.ndarray:
        """Node reached from each ``start`` after ``steps`` hops through ``port`` (vectorised)."""
        start, port, steps = np.broadcast_arrays(*(np.asarray(a, dtype=np.int64) for a in (start, port, steps)))
        node = start.copy()
        for s in range(int(steps.max(initial=0))):
            moving = steps > s
            node[moving] = self.neighbours[node[moving], port[moving]]
            # A -1 would index the last row on the next hop and continue from a wrong node.
            if (node[moving] < 0).any():
                raise ValueError(f"the walk leaves {self.name} through a port without a link")
        return node

    def links(self) -> np.ndarray:
        """Every existing directed link as a row (node, port, neighbour), shape (L, 3)."""
        node, port = np.nonzero(self.neighbours >= 0)
        return np.column_stack((node, port, self.neighbours[node, port])).astype(np.int64)

    def coordinates(self, v: int) -> str:
        """The node's address as people write it for this kind of network."""
        v = int(self._nodes(v, "node")[0])
        return _VIEWS[self.kind][0](self.shape, v)

    def positions(self) -> np.ndarray:
        """Drawing coordinates of every node, float (N, 2)."""
        return np.asarray(_VIEWS[self.kind][1](self), dtype=float)

    def wrap_links(self) -> np.ndarray:
        """Bool (N, ports): the links that wrap around the drawing of ``positions()`` (over the edges of
        the hexagon or of the torus), which a picture shows as stubs at both ends rather than as lines
        across it; False where a port has no link."""
        wraps = _VIEWS[self.kind][2]
        return np.zeros(self.neighbours.shape, dtype=bool) if wraps is None else wraps(self)

    def _nodes(self, nodes, what: str) -> np.ndarray:
        nodes = np.ascontiguousarray(np.atleast_1d(nodes), dtype=np.int64)
        if nodes.ndim != 1:
            raise ValueError(f"{what} nodes must be a number or a flat array, got shape {nodes.shape}")
        if nodes.size and (nodes.min() < 0 or nodes.max() >= self.n_nodes):
            raise ValueError(f"{what} node out of range 0..{self.n_nodes - 1}")
        return nodes


def int64_array(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.int64)


def arrival_ports(neighbours: np.ndarray) -> np.ndarray:
    """The in_port table: receivers are indexed by the direction a packet travels, so port p arrives on p."""
    ports = np.broadcast_to(np.arange(neighbours.shape[1], dtype=np.int64), neighbours.shape)
    return int64_array(np.where(neighbours >= 0, ports, -1))


def require_int(value, what: str, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int, or ValueError naming ``what``; bool is refused although it is an int subclass."""
    if (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum
            or (maximum is not None and value > maximum)):
        expected = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise ValueError(f"{what} must be an integer {expected}, got {value!r}")
    return int(value)
