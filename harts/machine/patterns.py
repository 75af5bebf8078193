"""Synthetic traffic patterns for flit-level (wormhole) load experiments, and their channel-load bounds.

A pattern is a destination matrix P: P[s, d] is the probability that a packet created at node s goes to
node d. A row sums to 1 for a node that sends and is all zero for a node that never sends (the transpose
pattern's diagonal, whose nodes would send to themselves). The patterns (Dally & Towles, "Principles and
Practices of Interconnection Networks", ch. 3):

- ``uniform``: uniform over the other N-1 nodes.
- ``transpose``: (x, y) -> (y, x) on a square 2-D mesh or torus; on a hypercube of even dimension m, the
  same with x the low m/2 bits and y the high m/2 bits (swap the halves of the address).
- ``bit_complement``: every grid coordinate x_a -> side_a - 1 - x_a (on a 2^a x 2^b grid this complements
  the node number's bits); on a hypercube, every bit complemented. A node that maps to itself (only
  possible when every side is odd) sends nothing.
- ``hotspot``: with probability ``hotspot_fraction`` to one of the hotspot nodes (uniformly among them,
  never to itself), otherwise uniform over the other N-1 nodes (hotspots included). A hotspot node that is
  the only hotspot has no other hotspot to favour, so all of its traffic is uniform.
- ``tornado``: every grid coordinate x_a -> (x_a + ceil(side_a/2) - 1) mod side_a, each axis with its own
  side (BookSim2's TornadoTrafficPattern, whose shift is (k+1)/2 - 1 in integer arithmetic). On a hypercube
  every axis has side 2 and the shift is 0: no node moves, and the pattern is refused.
- ``neighbor``: every grid coordinate x_a -> (x_a + 1) mod side_a (BookSim2's NeighborTrafficPattern); on a
  hypercube, every bit complemented.
- ``bit_reverse``: the node number's log2(N) bits reversed (BookSim2's BitRevTrafficPattern).
- ``shuffle``: the log2(N)-bit node number rotated left by one bit (BookSim2's ShuffleTrafficPattern).
- ``bit_rotation``: the log2(N)-bit node number rotated right by one bit (gem5 Garnet's bit_rotation: even s
  -> s/2, odd s -> (s-1)/2 + N/2), the inverse of shuffle.
  The three bit patterns need N a power of two (BookSim2's BitPermutationTrafficPattern).
- ``diagonal``: every packet from s to (s+1) mod N. BookSim2's DiagonalTrafficPattern sends a packet there with
  probability 1/3 and to its own source with probability 2/3; a packet to its own node never enters a network,
  so harts sends only the third that does: harts' diagonal at offered load L is BookSim2's diagonal at 3L (as
  harts' uniform, which never picks the source, is BookSim2's uniform at N/(N-1) times the load).
- ``random_permutation``: a random permutation of the nodes, fixed by ``permutation_seed`` (BookSim2's
  randperm with its perm_seed), drawn by a generator of its own that no other random stream shares.

Every pattern but uniform and hotspot is a permutation: a node mapped to itself sends nothing, and a
permutation in which no node would send is refused. MODEL.md ("Traffic patterns and their channel-load
bounds") derives each pattern's bound by hand.

Channel loads (``channel_loads``) are those of dimension-order routing: the route offsets of
``Topology.route_offsets`` taken axis by axis, lowest axis first, a positive offset through the axis's
positive port and a negative one through its negative port. They are computed by walking every (s, d)
pair with P[s, d] > 0 through the neighbours table, independently of the simulator's routing code. The bounds
(``throughput_bound``) take them from ``pattern_loads``, which gives the same loads without an N x N matrix:
uniform traffic on a grid is summed axis by axis, a permutation walks its N pairs (tests hold the two equal).

Load basis of the bounds (``throughput_bound``, ``Bound``): offered load and throughput are in flits per
node per cycle **averaged over all N nodes of the network**, whether or not a node sends. At offered load
lambda the N_send sending nodes each inject lambda * N / N_send flits per cycle (for transpose on a k x k
grid, N / N_send = k^2 / (k^2 - k)), so one unit of offered load puts gamma * N / N_send on a link whose
per-sender load (``channel_loads``) is gamma, and N / N_send on each sender's injection channel. For the
patterns in which every node sends (all but transpose, bit complement on all-odd grids, the palindromes of
bit_reverse, the all-0 and all-1 nodes of shuffle and bit_rotation, and the fixed points of a random
permutation) the two bases coincide. ``Bound.throughput_per_sending_node`` gives the other reading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..network.grid import grid_coordinates
from ..network.topology import Topology, require_int

PATTERNS = ("uniform", "transpose", "bit_complement", "hotspot", "tornado", "neighbor", "bit_reverse", "shuffle",
            "bit_rotation", "diagonal", "random_permutation")
ROUTINGS = ("dimension_order",)
TORUS_TIES = ("random", "positive")  # routing.torus_tie
LOAD_BASIS = "flits per node per cycle, averaged over all N nodes (non-sending nodes included)"

# Loads within this relative distance of the largest count as tied for the bottleneck; the first one in
# (links in (node, port) order, then ejection, then injection) is reported, so float rounding of loads that
# are equal in exact arithmetic cannot change which one is named.
_TIE = 1e-9
ROW_BLOCK = 1 << 22  # entries of P (32 MB), or pairs walked, held at a time: memory stays linear in the nodes


def destination_matrix(topology: Topology, pattern: str, hotspot_nodes=None,
                       hotspot_fraction: float = 0.2, permutation_seed: int = 1) -> np.ndarray:
    """P[s, d], float (N, N): the probability that a packet created at s goes to d.

    Rows sum to 1 for nodes that send and are 0 for nodes that never send; the diagonal is always 0. See the
    module docstring for the patterns. ``hotspot_nodes`` (hotspot only): node numbers, default the centre
    node (``default_hotspot``: node 36 of an 8x8 grid); ``hotspot_fraction`` in [0, 1];
    ``permutation_seed`` (random_permutation only): an integer >= 0 that fixes the permutation.
    """
    kind, detail = _pattern(topology, pattern, hotspot_nodes, hotspot_fraction, permutation_seed)
    n = topology.n_nodes
    if kind == "permutation":
        return _permutation(n, detail)
    return _rows(n, kind, detail, np.arange(n))


def _pattern(topology: Topology, pattern: str, hotspot_nodes, hotspot_fraction, permutation_seed=1):
    """The pattern, checked, in a size linear in the nodes: ("uniform", None), ("hotspot", (is_hot, fraction))
    or ("permutation", destination of each node)."""
    if topology.n_nodes < 2:
        raise ValueError("a traffic pattern needs at least 2 nodes")
    if pattern == "uniform":
        return "uniform", None
    if pattern == "hotspot":
        return "hotspot", _hotspots(topology, hotspot_nodes, hotspot_fraction)
    permutations = {"transpose": _transpose, "bit_complement": _bit_complement, "tornado": _tornado,
                    "neighbor": _neighbor, "bit_reverse": _bit_reverse, "shuffle": _shuffle,
                    "bit_rotation": _bit_rotation, "diagonal": _diagonal}
    if pattern in permutations:
        destination = permutations[pattern](topology)
    elif pattern == "random_permutation":
        destination = _random_permutation(topology, permutation_seed)
    else:
        raise ValueError(f"unknown traffic pattern {pattern!r}; expected one of {', '.join(PATTERNS)}")
    if (destination == np.arange(topology.n_nodes)).all():
        raise ValueError(f"{pattern} on {topology.name} maps every node to itself: no node would send")
    return "permutation", destination


def default_hotspot(topology: Topology) -> int:
    """The node at coordinates (side_a // 2 for every axis) of a mesh or torus (node 36 = (4, 4) of 8x8);
    node 0 for other kinds (every node of a hypercube is alike)."""
    if topology.kind in ("mesh", "torus"):
        strides = np.concatenate(([1], np.cumprod(topology.shape)[:-1]))
        return int(((topology.shape // 2) * strides).sum())
    return 0


def draw_destinations(P, sources, rng) -> np.ndarray:
    """One destination per entry of ``sources``, drawn from row P[source] (vectorised, int64).

    ``rng`` is a numpy Generator or a seed for one; exactly one uniform variate is drawn per source, so a
    given seed gives the same destinations. Destination d is the first index whose row-cumulative
    probability exceeds the variate, found by a vectorised binary search; an entry with P[s, d] == 0 is
    never drawn. Rows are normalised by their sum; a source whose row is all zero (it never sends) is an
    error.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P must be a square matrix, got shape {P.shape}")
    if not np.isfinite(P).all() or (P < 0).any():
        raise ValueError("P must hold finite non-negative probabilities")
    n = P.shape[0]
    sources = np.asarray(sources, dtype=np.int64)
    flat = sources.ravel()
    if flat.size and (flat.min() < 0 or flat.max() >= n):
        raise ValueError(f"source node out of range 0..{n - 1}")
    rng = np.random.default_rng(rng)
    u = rng.random(flat.size)
    if flat.size == 0:
        return np.zeros(sources.shape, dtype=np.int64)
    rows = np.unique(flat)
    return _first_above(_cumulative(P[rows], rows), np.searchsorted(rows, flat), u).reshape(sources.shape)


def _cumulative(P_rows, rows) -> np.ndarray:
    """The rows' cumulative probabilities, each normalised by its sum, from their last positive entry on exactly 1
    (so every variate in [0, 1) lands on a positive entry)."""
    n = P_rows.shape[1]
    cdf = np.cumsum(P_rows, axis=1)
    total = cdf[:, -1]
    if (total <= 0).any():
        silent = rows[total <= 0]
        raise ValueError(f"node {int(silent[0])} never sends (its row of P is zero) but is asked to")
    # Dividing by the same sum the cumulative sum ends in keeps every row non-decreasing and <= 1
    cdf /= total[:, None]
    last = n - 1 - np.argmax(P_rows[:, ::-1] > 0, axis=1)
    cdf[np.arange(n)[None, :] >= last[:, None]] = 1.0
    return cdf


def _first_above(cdf, row_of, u) -> np.ndarray:
    """Per variate u[k], the first j with cdf[row_of[k], j] > u[k], by a vectorised binary search."""
    lo = np.zeros(u.size, dtype=np.int64)
    hi = np.full(u.size, cdf.shape[1] - 1, dtype=np.int64)
    while (lo < hi).any():  # invariant: the answer, the first j with cdf[j] > u, is in [lo, hi]
        mid = (lo + hi) // 2
        below = cdf[row_of, mid] <= u
        lo = np.where(below, mid + 1, lo)
        hi = np.where(below, hi, mid)
    return lo


def channel_loads(topology: Topology, P, routing: str = "dimension_order", torus_tie: str = "random") -> np.ndarray:
    """gamma[node, port], float (N, ports): the expected flits per cycle crossing the directed link leaving
    ``node`` through ``port`` when every sending node injects 1 flit per cycle with destinations drawn from
    P (rows are used as given; a row should sum to 1 or 0).

    Dimension-order routing: the route offsets are taken axis by axis, lowest axis first, each hop through
    ``axis_positive[a]`` for a positive offset and ``axis_negative[a]`` for a negative one, following the
    neighbours table. Every (s, d) pair with P[s, d] > 0 is walked. Only "dimension_order" is supported.
    On a torus, a destination half-way round a ring of even side goes the + way (torus_tie "positive") or
    either way with probability 1/2 (torus_tie "random", as routing.torus_tie: random draws it).
    """
    if routing not in ROUTINGS:
        raise ValueError(f"unknown routing {routing!r}; expected one of {', '.join(ROUTINGS)}")
    if torus_tie not in TORUS_TIES:
        raise ValueError(f"unknown torus_tie {torus_tie!r}; expected one of {', '.join(TORUS_TIES)}")
    P = np.asarray(P, dtype=float)
    n = topology.n_nodes
    if P.shape != (n, n):
        raise ValueError(f"P must have shape {(n, n)} for {topology.name}, got {P.shape}")
    src, dst = np.nonzero(P > 0)
    return _walk(topology, src, dst, P[src, dst], torus_tie)


def _walk(topology: Topology, src, dst, weight, torus_tie: str, gamma=None) -> np.ndarray:
    """channel_loads of the traffic `weight[k]` from src[k] to dst[k], walked pair by pair (added to `gamma`)."""
    offsets = topology.route_offsets(src, dst)
    if torus_tie == "random" and topology.kind == "torus":
        for axis, side in enumerate(int(s) for s in topology.shape):
            tie = offsets[:, axis] * 2 == side
            if tie.any():  # each tied pair walks both ways at half its weight
                other = offsets[tie]
                other[:, axis] = -other[:, axis]
                src, dst = np.concatenate([src, src[tie]]), np.concatenate([dst, dst[tie]])
                weight = np.concatenate([np.where(tie, weight / 2, weight), weight[tie] / 2])
                offsets = np.concatenate([offsets, other])
    if gamma is None:
        gamma = np.zeros(topology.neighbours.shape, dtype=float)
    node = np.array(src, dtype=np.int64)
    for axis in range(topology.n_axes):
        t = offsets[:, axis]
        port = np.where(t > 0, topology.axis_positive[axis], topology.axis_negative[axis])
        for hop in range(int(np.abs(t).max(initial=0))):
            moving = np.abs(t) > hop
            here, through = node[moving], port[moving]
            np.add.at(gamma, (here, through), weight[moving])
            node[moving] = topology.neighbours[here, through]
            if (node[moving] < 0).any():
                raise ValueError(f"a dimension-order route leaves {topology.name} through a port without a link")
    if not np.array_equal(node, dst):
        raise ValueError(f"the dimension-order walk of {topology.name}'s route offsets misses a destination")
    return gamma


def pattern_loads(topology: Topology, pattern: str, torus_tie: str = "random", hotspot_nodes=None,
                  hotspot_fraction: float = 0.2, permutation_seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(channel_loads, ejection loads, which nodes send) of a pattern, as destination_matrix and channel_loads give
    them, in memory linear in the nodes: no N x N matrix. A permutation walks its N pairs. Uniform traffic on a mesh,
    torus or hypercube is summed axis by axis (_uniform_grid_loads); on other networks its pairs are walked a block
    of sources at a time. Hotspot traffic is its uniform part plus the pairs to the hotspots."""
    if torus_tie not in TORUS_TIES:
        raise ValueError(f"unknown torus_tie {torus_tie!r}; expected one of {', '.join(TORUS_TIES)}")
    kind, detail = _pattern(topology, pattern, hotspot_nodes, hotspot_fraction, permutation_seed)
    n = topology.n_nodes
    nodes = np.arange(n)
    if kind == "permutation":
        moves = detail != nodes
        gamma = _walk(topology, nodes[moves], detail[moves], np.ones(int(moves.sum())), torus_tie)
        return gamma, np.bincount(detail[moves], minlength=n).astype(float), moves
    gamma = _uniform_loads(topology, torus_tie)
    ejection = np.ones(n)
    if kind == "hotspot":
        is_hot, fraction = detail
        hot = np.flatnonzero(is_hot)
        # a source with no other hotspot (the only hotspot itself) keeps all of its traffic uniform (_rows)
        lone = hot if len(hot) == 1 else hot[:0]
        gamma *= 1 - fraction
        ejection *= 1 - fraction
        for source in lone:  # its uniform row at full weight: add back the fraction taken from it
            others = nodes[nodes != source]
            _walk(topology, np.full(n - 1, source), others, np.full(n - 1, fraction / (n - 1)), torus_tie, gamma)
            ejection[others] += fraction / (n - 1)
        for target in hot:
            senders = nodes[(nodes != target) & ~np.isin(nodes, lone)]
            targets = len(hot) - is_hot[senders]  # the hotspots other than the sender itself
            share = fraction / targets
            _walk(topology, senders, np.full(len(senders), target), share, torus_tie, gamma)
            ejection[target] += share.sum()
    return gamma, ejection, np.ones(n, dtype=bool)


def channel_shares(topology: Topology, pattern: str, channel: tuple[int, int], torus_tie: str = "random",
                   **pattern_args) -> np.ndarray:
    """Per node, the flits that cross `channel` (node, port) for each flit the node offers, under dimension-order
    routing with torus ties as channel_loads: 1 for a sender whose route crosses it, 1/2 for one tied half-way
    round a ring (torus_tie random), 0 otherwise. A permutation pattern only. The channel's load is the nodes'
    offered rates times these shares, so a sender's injection times its share is what it puts through it."""
    kind, detail = _pattern(topology, pattern, pattern_args.get("hotspot_nodes"),
                            pattern_args.get("hotspot_fraction", 0.2), pattern_args.get("permutation_seed", 1))
    if kind != "permutation":
        raise ValueError(f"channel_shares takes a permutation; {pattern} is not one")
    node, port = channel
    shares = np.zeros(topology.n_nodes)
    for source in np.flatnonzero(detail != np.arange(topology.n_nodes)):
        walked = _walk(topology, np.array([source]), detail[[source]], np.ones(1), torus_tie)
        shares[source] = walked[node, port]
    return shares


def _uniform_loads(topology: Topology, torus_tie: str) -> np.ndarray:
    """channel_loads of uniform traffic (1/(N-1) from every node to every other)."""
    if topology.kind in ("mesh", "torus", "hypercube"):
        return _uniform_grid_loads(topology, torus_tie)
    n = topology.n_nodes
    gamma = np.zeros(topology.neighbours.shape, dtype=float)
    block = max(1, ROW_BLOCK // n)
    for first in range(0, n, block):
        sources = np.arange(first, min(n, first + block))
        src = np.repeat(sources, n)
        dst = np.tile(np.arange(n), len(sources))
        keep = src != dst
        _walk(topology, src[keep], dst[keep], np.full(int(keep.sum()), 1.0 / (n - 1)), torus_tie, gamma)
    return gamma


def _uniform_grid_loads(topology: Topology, torus_tie: str) -> np.ndarray:
    """Uniform traffic's channel loads on a mesh, torus or hypercube (sides of 2, no wrap), axis by axis.

    Dimension order takes axis a after the lower axes: a packet from s to d crosses axis a on the line whose lower
    coordinates are d's and whose higher ones are s's, from s_a to d_a. A link of that line from position i is crossed
    by the pairs (u, v) of positions whose one-axis route crosses it, times every choice of s's lower coordinates and
    d's higher ones: N / side_a of them. Each pair carries 1 / (N - 1)."""
    n = topology.n_nodes
    sides = [2] * int(topology.shape[0]) if topology.kind == "hypercube" else [int(s) for s in topology.shape]
    gamma = np.zeros(topology.neighbours.shape, dtype=float)
    stride = 1
    for axis, side in enumerate(sides):
        position = (np.arange(n) // stride) % side
        stride *= side
        up, down = _line_crossings(side, topology.kind == "torus", torus_tie)
        scale = (n // side) / (n - 1)
        gamma[np.arange(n), topology.axis_positive[axis]] += up[position] * scale
        gamma[np.arange(n), topology.axis_negative[axis]] += down[position] * scale
    return gamma


def _line_crossings(side: int, ring: bool, torus_tie: str) -> tuple[np.ndarray, np.ndarray]:
    """On a line (or ring) of `side` positions, how many ordered pairs (u, v) route over the link from i to i + 1
    (up[i]) and from i to i - 1 (down[i]), the shorter way round a ring, a tie half-way round going up
    (torus_tie "positive") or half each way ("random"), as the torus's route offsets and channel_loads take them."""
    u, v = (a.ravel() for a in np.meshgrid(np.arange(side), np.arange(side), indexing="ij"))
    forward = (v - u) % side if ring else v - u
    if ring:
        forward = np.where(forward > side // 2, forward - side, forward)
    tie = ring and side % 2 == 0 and torus_tie == "random"
    half = (np.abs(forward) * 2 == side) if tie else np.zeros(len(u), dtype=bool)
    weight = np.where(half, 0.5, 1.0)
    up, down = np.zeros(2 * side + 1), np.zeros(2 * side + 1)
    # a route of t > 0 hops up from u crosses the links from u, ..., u + t - 1 (mod side): a difference array over
    # two laps, folded back
    going_up = forward > 0
    np.add.at(up, u[going_up], weight[going_up])
    np.add.at(up, u[going_up] + forward[going_up], -weight[going_up])
    going_down = (forward < 0) | half  # a tie's other half goes down
    hops = np.abs(forward[going_down])
    start = u[going_down] - hops + 1 + side  # the links from u, u - 1, ..., u - t + 1 (their start positions)
    np.add.at(down, start, weight[going_down])
    np.add.at(down, start + hops, -weight[going_down])
    up, down = np.cumsum(up), np.cumsum(down)
    up = up[:side] + up[side:2 * side]
    down = down[:side] + down[side:2 * side]
    return up, down


@dataclass(frozen=True)
class Bound:
    """The channel-load throughput bound of a pattern under dimension-order routing.

    Every load is per unit of offered load in the basis ``load_basis`` (flits per node per cycle averaged
    over all N nodes); a channel carries at most 1 flit per ``flit_cycles`` cycles, so
    throughput = 1 / (flit_cycles * max(max_channel_load, max_ejection_load, injection_load)).
    """

    pattern: str
    max_channel_load: float  # gamma_max: flits/cycle on the most loaded link per unit offered load
    bottleneck: tuple  # (node, port) of a most loaded link, or ("ejection", node) / ("injection", node)
    throughput: float  # offered load (flits/node/cycle, over all N nodes) at which the bottleneck saturates
    max_ejection_load: float  # flits/cycle into the most loaded node's ejection channel per unit offered load
    injection_load: float  # flits/cycle each sending node injects per unit offered load: N / N_send
    n_nodes: int
    sending_nodes: int
    flit_cycles: int
    load_basis: str = LOAD_BASIS

    @property
    def throughput_per_sending_node(self) -> float:
        """The same saturation point as flits per cycle injected by each sending node."""
        return self.throughput * self.n_nodes / self.sending_nodes


def throughput_bound(topology: Topology, pattern: str, flit_cycles: int = 1, torus_tie: str = "random",
                     **pattern_args) -> Bound:
    """The largest offered load (flits/node/cycle averaged over all N nodes, see the module docstring) that
    no link, ejection channel or injection channel exceeds its capacity of 1 flit per ``flit_cycles``
    cycles at, under dimension-order routing with ties half-way round a torus ring as ``torus_tie`` (see
    channel_loads). ``pattern_args`` go to ``destination_matrix``.

    The bottleneck is the first of the most loaded resources (within a relative 1e-9) in the order: links in
    (node, port) order, then ejection channels by node, then injection channels by node.
    """
    flit_cycles = require_int(flit_cycles, "flit_cycles", 1)
    links, ejection, sending = pattern_loads(topology, pattern, torus_tie, **pattern_args)
    n, n_send = topology.n_nodes, int(sending.sum())
    scale = n / n_send
    links = links * scale
    ejection = ejection * scale
    worst = float(max(links.max(), ejection.max(), scale))
    tied = worst * (1 - _TIE)
    if links.max() >= tied:
        node, port = np.argwhere(links >= tied)[0]  # argwhere is in row-major (node, port) order
        bottleneck = (int(node), int(port))
    elif ejection.max() >= tied:
        bottleneck = ("ejection", int(np.flatnonzero(ejection >= tied)[0]))
    else:
        bottleneck = ("injection", int(np.flatnonzero(sending)[0]))
    return Bound(pattern=pattern, max_channel_load=float(links.max()), bottleneck=bottleneck,
                 throughput=1.0 / (flit_cycles * worst), max_ejection_load=float(ejection.max()),
                 injection_load=scale, n_nodes=n, sending_nodes=n_send, flit_cycles=flit_cycles)


def _hotspots(topology: Topology, hotspot_nodes, fraction) -> tuple[np.ndarray, float]:
    n = topology.n_nodes
    if hotspot_nodes is None:
        hotspot_nodes = (default_hotspot(topology),)
    hot = np.atleast_1d(np.asarray(hotspot_nodes))
    if hot.ndim != 1 or hot.size == 0 or not np.issubdtype(hot.dtype, np.integer):
        raise ValueError(f"hotspot_nodes must be a non-empty list of node numbers, got {hotspot_nodes!r}")
    if hot.min() < 0 or hot.max() >= n:
        raise ValueError(f"hotspot node out of range 0..{n - 1}")
    if np.unique(hot).size != hot.size:
        raise ValueError(f"hotspot_nodes repeats a node: {hotspot_nodes!r}")
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer, np.floating)) \
            or not 0.0 <= fraction <= 1.0:
        raise ValueError(f"hotspot_fraction must be a number in [0, 1], got {fraction!r}")
    is_hot = np.zeros(n, dtype=bool)
    is_hot[hot] = True
    return is_hot, float(fraction)


def _rows(n: int, kind: str, detail, rows: np.ndarray) -> np.ndarray:
    """P[rows] of the uniform or hotspot pattern, computed as the whole matrix would be, entry by entry."""
    r = np.arange(len(rows))
    P = np.full((len(rows), n), 1.0 / (n - 1))
    P[r, rows] = 0.0
    if kind == "uniform":
        return P
    is_hot, fraction = detail
    # hot_targets[k, d]: d is a hotspot other than rows[k]
    hot_targets = np.broadcast_to(is_hot, (len(rows), n)).copy()
    hot_targets[r, rows] = False
    n_targets = hot_targets.sum(axis=1, keepdims=True)
    # a source with no other hotspot (the only hotspot itself) sends all of its traffic uniformly
    share = np.where(n_targets > 0, fraction, 0.0)
    return (1.0 - share) * P + share * hot_targets / np.maximum(n_targets, 1)


def _permutation(n: int, destination: np.ndarray) -> np.ndarray:
    """The matrix of a permutation pattern; a node mapped to itself sends nothing."""
    P = np.zeros((n, n))
    nodes = np.arange(n)
    moves = destination != nodes
    P[nodes[moves], destination[moves]] = 1.0
    return P


def _transpose(topology: Topology) -> np.ndarray:
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    if topology.kind in ("mesh", "torus"):
        if topology.shape.size != 2 or topology.shape[0] != topology.shape[1]:
            raise ValueError(f"transpose needs a square 2-D grid, not {topology.name}")
        coords = grid_coordinates(topology.shape, nodes)
        return coords[:, 1] + topology.shape[0] * coords[:, 0]
    if topology.kind == "hypercube":
        m = int(topology.shape[0])
        if m % 2:
            raise ValueError(f"transpose needs a hypercube of even dimension, not {topology.name}")
        half = m // 2
        low = nodes & ((1 << half) - 1)
        return (low << half) | (nodes >> half)
    raise ValueError(f"transpose is defined on square 2-D meshes and tori and on even hypercubes, "
                     f"not on {topology.kind}")


def _bit_complement(topology: Topology) -> np.ndarray:
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    if topology.kind in ("mesh", "torus"):
        coords = topology.shape[None, :] - 1 - grid_coordinates(topology.shape, nodes)
        strides = np.concatenate(([1], np.cumprod(topology.shape)[:-1]))
        return coords @ strides
    if topology.kind == "hypercube":
        return nodes ^ (topology.n_nodes - 1)
    raise ValueError(f"bit_complement is defined on meshes, tori and hypercubes, not on {topology.kind}")


def _digit_shift(topology: Topology, pattern: str, shift) -> np.ndarray:
    """Every grid coordinate x_a -> (x_a + shift(side_a)) mod side_a, BookSim2's digit permutations; on a hypercube
    every bit is a coordinate of side 2."""
    if topology.kind in ("mesh", "torus"):
        sides = topology.shape
    elif topology.kind == "hypercube":
        sides = np.full(int(topology.shape[0]), 2, dtype=np.int64)
    else:
        raise ValueError(f"{pattern} is defined on meshes, tori and hypercubes, not on {topology.kind}")
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    coords = (grid_coordinates(sides, nodes) + shift(sides)[None, :]) % sides[None, :]
    return coords @ np.concatenate(([1], np.cumprod(sides)[:-1])).astype(np.int64)


def _tornado(topology: Topology) -> np.ndarray:
    # BookSim2's shift (k + 1) / 2 - 1 in integer arithmetic: ceil(k/2) - 1
    return _digit_shift(topology, "tornado", lambda sides: (sides + 1) // 2 - 1)


def _neighbor(topology: Topology) -> np.ndarray:
    return _digit_shift(topology, "neighbor", lambda sides: np.ones_like(sides))


def _address_bits(topology: Topology, pattern: str) -> int:
    """log2(N) of a topology whose node count is a power of two."""
    n = int(topology.n_nodes)
    if n & (n - 1):
        raise ValueError(f"{pattern} needs a power-of-two number of nodes, {topology.name} has {n}")
    return n.bit_length() - 1


def _bit_reverse(topology: Topology) -> np.ndarray:
    bits = _address_bits(topology, "bit_reverse")
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    destination = np.zeros_like(nodes)
    for bit in range(bits):
        destination |= ((nodes >> bit) & 1) << (bits - 1 - bit)
    return destination


def _shuffle(topology: Topology) -> np.ndarray:
    bits = _address_bits(topology, "shuffle")
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    return ((nodes << 1) & (topology.n_nodes - 1)) | (nodes >> (bits - 1))


def _bit_rotation(topology: Topology) -> np.ndarray:
    bits = _address_bits(topology, "bit_rotation")
    nodes = np.arange(topology.n_nodes, dtype=np.int64)
    return (nodes >> 1) | ((nodes & 1) << (bits - 1))


def _diagonal(topology: Topology) -> np.ndarray:
    return (np.arange(topology.n_nodes, dtype=np.int64) + 1) % topology.n_nodes


# The random permutation's generator is seeded with [permutation_seed, this], a stream no other draw uses
_PERMUTATION_STREAM = 0x7065726D  # "perm"


def _random_permutation(topology: Topology, seed) -> np.ndarray:
    seed = require_int(seed, "permutation_seed", 0)
    return np.random.default_rng([seed, _PERMUTATION_STREAM]).permutation(topology.n_nodes).astype(np.int64)


PROCESSES = ("poisson", "bernoulli")  # traffic.synthetic.process


class RateTooHigh(ValueError):
    """An offered load that Bernoulli injection, at most one packet per node per cycle, cannot make."""


def synthetic_packets(topology: Topology, pattern: str, rate: float, packet_flits, cycles: int, seed: int,
                      process: str = "poisson", packet_weights=(), **pattern_args):
    """Packets at offered load ``rate`` (flits per node per cycle over all N nodes, the bounds' basis) for
    ``cycles`` cycles, destinations drawn from the pattern: (create, source, destination, flits) arrays in
    creation order. ``packet_flits`` is one size or a list of them, each packet's drawn with
    ``packet_weights`` (empty: equal weights), so each sending node makes rate * N / N_send / mean size
    packets per cycle: as a Poisson process (``process`` poisson; creation cycles are whole, arrivals in one
    cycle keep their draw order) or, every cycle, one packet with that probability (bernoulli, BookSim2's
    injection process; RateTooHigh if that is above 1)."""
    if process not in PROCESSES:
        raise ValueError(f"unknown injection process {process!r}; expected one of {', '.join(PROCESSES)}")
    kind, detail = _pattern(topology, pattern, pattern_args.get("hotspot_nodes"),
                            pattern_args.get("hotspot_fraction", 0.2), pattern_args.get("permutation_seed", 1))
    n = topology.n_nodes
    senders = np.nonzero(detail != np.arange(n))[0] if kind == "permutation" else np.arange(n)
    sizes = np.atleast_1d(np.asarray(packet_flits, dtype=np.int64))
    weights = np.asarray(packet_weights, dtype=float) if len(packet_weights) else np.ones(len(sizes))
    if len(weights) != len(sizes) or (sizes < 1).any() or (weights < 0).any() or not weights.sum() > 0:
        raise ValueError(f"packet sizes {sizes.tolist()} and weights {weights.tolist()}: expected sizes >= 1 and "
                         f"as many non-negative weights, not all 0")
    # one size: its own value, so that the arrivals are those drawn before sizes could vary
    mean_flits = float(sizes[0]) if len(sizes) == 1 else float(sizes @ weights / weights.sum())
    rng = np.random.default_rng(seed)
    per_sender = rate * topology.n_nodes / len(senders) / mean_flits
    if process == "poisson":
        counts = rng.poisson(per_sender * cycles, len(senders))
        source = np.repeat(senders, counts)
        create = np.floor(rng.uniform(0, cycles, len(source))).astype(np.int64)
    else:
        if per_sender > 1:
            raise RateTooHigh(f"Bernoulli injection makes at most one packet per sending node per cycle (of "
                              f"{mean_flits:g} flits on average), so it offers at most "
                              f"{mean_flits * len(senders) / n:g} flits per node per cycle, not {rate:g}")
        create, source = _bernoulli(rng, senders, per_sender, cycles)
    order = np.argsort(create, kind="stable")
    source, create = source[order], create[order]
    destination = _draw(n, kind, detail, source, rng)
    if len(sizes) == 1:
        return create, source, destination, np.full(len(create), sizes[0], np.int64)
    return create, source, destination, sizes[rng.choice(len(sizes), size=len(create), p=weights / weights.sum())]


def _bernoulli(rng, senders: np.ndarray, p: float, cycles: int) -> tuple[np.ndarray, np.ndarray]:
    """The cycles before `cycles` in which each sender makes a packet, each with probability p: the gaps between
    a sender's packets are geometric, drawn for all senders at once, a block of them enough for most senders'
    whole run at a time. (create, source) in creation order, by source within a cycle."""
    creates, sources = [], []
    last = np.full(len(senders), -1, np.int64)  # each sender's latest packet so far
    active = np.arange(len(senders)) if p > 0 else np.zeros(0, np.int64)
    while active.size:
        remaining = cycles - 1 - int(last[active].min())
        gaps = rng.geometric(p, size=(active.size, int(p * remaining + 6 * np.sqrt(p * remaining) + 16)))
        times = last[active, None] + np.cumsum(gaps, axis=1)
        last[active] = times[:, -1]
        rows, columns = np.nonzero(times < cycles)
        creates.append(times[rows, columns])
        sources.append(senders[active[rows]])
        active = active[last[active] < cycles - 1]
    create, source = np.concatenate(creates + [np.zeros(0, np.int64)]), np.concatenate(sources + [senders[:0]])
    order = np.lexsort((source, create))
    return create[order], source[order]


def _draw(n: int, kind: str, detail, sources: np.ndarray, rng) -> np.ndarray:
    """draw_destinations(destination_matrix(...), sources, rng) in memory linear in nodes and packets: the same
    variates against the same cumulative rows, so the same destinations."""
    u = rng.random(sources.size)
    if kind == "permutation":
        return detail[sources].astype(np.int64)
    if kind == "uniform":
        # Row s is the cumulative sum of (n - 1) entries 1/(n-1) with a 0 at s, which adds exactly nothing: its
        # entry j is a[j + 1] before s and a[j] from s on, where a[m] is the sum of m entries over the sum of
        # all, a[n - 1] exactly 1. The first j with a value above u is then m - 1 or m, m the first with a[m] > u.
        total = np.cumsum(np.full(n - 1, 1.0 / (n - 1)))
        a = np.concatenate(([0.0], total / total[-1]))
        a[-1] = 1.0
        m = np.searchsorted(a, u, side="right")
        return np.where(m <= sources, m - 1, m).astype(np.int64)
    out = np.empty(sources.size, dtype=np.int64)
    rows = np.unique(sources)
    row_of = np.searchsorted(rows, sources)
    block = max(1, ROW_BLOCK // n)
    for start in range(0, len(rows), block):
        chunk = rows[start:start + block]
        mine = np.nonzero((row_of >= start) & (row_of < start + len(chunk)))[0]
        out[mine] = _first_above(_cumulative(_rows(n, kind, detail, chunk), chunk), row_of[mine] - start, u[mine])
    return out
