"""The tiling broadcast of paper 004 (Peters & Syska, section 4) on the 2-D torus, as a send plan.

5^k x 5^k (Theorem 2, Figs 1-4), 2k phases. Numbering the phases last to first as the proof does, in phase j
every informed node (x, y) sends to (x + u, y + v), (x - u, y - v), (x + v, y - u) and (x - v, y + u), where
with m = floor((j - 1) / 2) the offset (u, v) is (0, 5^m) for odd j (to the four neighbours, scaled) and
(5^m, 2 * 5^m) for even j (the knight's moves of Fig. 1, scaled); the paper prints the exponent as (j - 1) / 2, which
for even j is not a whole number. The four destinations are one offset turned by 0, 90, 180 and 270 degrees, and
so are the routes: the route to (u, v) runs v hops along +y and then u hops along +x, and the other three are
its quarter turns, so a sender's four routes leave by its four ports (the short leg first would do as well; the
paper does not say which). Dimension-order routes would not do: x first, the routes to (u, v) and (v, -u) both
leave by +x. In an even phase the senders are the nodes of the lattice 5^(m+1) Z^2 and every route stays within
2 * 5^m hops of its sender, so routes of different senders never meet; in an odd phase every route is a straight
run of 5^m hops and two senders on one row or column are at least 5^(m+1) apart. Hence the routes of a phase are
arc-disjoint.

10 x 10, three ways (the paragraphs after Theorem 2):
- "slanting" (the default): every node of a 5 x 5 torus becomes a 2 x 2 block whose lower left node is
  its boss. The S_1 broadcast reaches the bosses over routes twice as long, then each boss (i, j) sends to
  (i - 1, j) and (i, j + 1) directly and to (i + 1, j + 1) through (i + 1, j): the "slanting" blocks.
  3 alpha + 10 delta + 3 L tau.
- "square_blocks": the same, but the last phase fills the square block: the boss (i, j) sends to
  (i + 1, j) directly, to (i + 1, j + 1) through (i, j + 1), and to (i, j + 1) through (i - 1, j) and
  (i - 1, j + 1), since its +x and +y ports are taken. 3 alpha + 11 delta + 3 L tau.
- "four_squares" (Fig. 6): four S_1 squares whose bosses are the source and the nodes 5 hops along x, y
  and both; the source sends to the three other bosses, then each runs the S_1 broadcast.
  3 alpha + 14 delta + 3 L tau. The paper leaves the 10-hop route to (5, 5) open; ours keeps off the
  links that the bosses (5, 0) and (0, 5), informed half-way through it, use for their S_1 broadcasts.

5 x 10 (torus([10, 5])): each node of a 5 x 5 torus becomes two nodes side by side, so the S_1 broadcast
reaches the left nodes over routes whose x hops are doubled, and in the last phase every left node sends
to its right neighbour. 3 alpha + 8 delta + 3 L tau. torus([5, 10]) is the same turned a quarter, with
the blocks along y.

The nodes that hold the message keep in step phase by phase: a node informed in the previous phase sends once
its copy arrives, a node that sent in the previous phase sends once its longest send of that phase is delivered.
Where the routes of a phase differ in length (four squares, 5 x 10) some nodes so start the next phase early,
and the routes are chosen so that no link is then held by two circuits at once. The plan is built for a source
at the origin and moved to the real source, the torus being vertex-transitive. Routes go by source routing,
every leg passing through (only a circuit's end takes a copy).
"""

from __future__ import annotations

from ..network.topology import Topology, require_int
from .send_plan import TRIGGER_COPY, TRIGGER_DELIVERED, TRIGGER_START, Send, SendPlan
from .torus_moves import MOVE_OF_PORT, node_number, segments, walk

PLUS_X, PLUS_Y, MINUS_X, MINUS_Y = 0, 1, 2, 3
VARIANTS_10X10 = ("slanting", "square_blocks", "four_squares")
TOPOLOGY = "2-D torus of 5^k x 5^k (k >= 1), 10 x 10 or 5 x 10 (either way round)"

Route = tuple[tuple[int, int], ...]  # legs (port, hops) from the sender

SLANTING_BLOCK = (((MINUS_X, 1),), ((PLUS_Y, 1),), ((PLUS_X, 1), (PLUS_Y, 1)))
SQUARE_BLOCK = (((PLUS_X, 1),), ((PLUS_Y, 1), (PLUS_X, 1)), ((MINUS_X, 1), (PLUS_Y, 1), (PLUS_X, 1)))
# The bosses (5, 0) and (0, 5) start their S_1 broadcasts while the route to (5, 5) is still up, so that
# route keeps off every link of theirs: by -x and then -y it would share (5, 0) -> (5, 9) with the knight's
# move of (5, 0) towards (4, 8).
FOUR_BOSSES = (((PLUS_X, 5),), ((PLUS_Y, 5),), ((MINUS_X, 4), (MINUS_Y, 5), (MINUS_X, 1)))


def plan(topology: Topology, source: int, variant: str | None = None) -> SendPlan:
    phase_routes = _phase_routes(topology, variant)
    source = require_int(source, "the tiling source", 0, topology.n_nodes - 1)
    return SendPlan("tiling", topology, source, tuple(_sends(topology, source, phase_routes)))


def phases(topology: Topology, variant: str | None = None) -> int:
    return len(_phase_routes(topology, variant))


def formula_cycles(topology: Topology, length_flits: int, alpha: int, delta: int, tau: int,
                   variant: str | None = None) -> int:
    """The paper's broadcast time: Theorem 2 for 5^k x 5^k, the 10 x 10 and 5 x 10 paragraphs otherwise."""
    kind, k = _size(topology, variant)
    if kind == "5^k":
        return 2 * k * alpha + (5 ** k - 1) * delta + 2 * k * length_flits * tau
    switching = {"slanting": 10, "square_blocks": 11, "four_squares": 14, "5x10": 8}[kind]
    return 3 * alpha + switching * delta + 3 * length_flits * tau


def require_topology(topology: Topology) -> None:
    """ValueError unless the tiling runs on the network (in one variant or more)."""
    _size(topology, None)


def _size(topology: Topology, variant: str | None) -> tuple[str, int]:
    """("5^k", k), or (the 10 x 10 variant, 0), or ("5x10", 0)."""
    shape = [int(side) for side in topology.shape]
    square_power_of_5 = len(shape) == 2 and shape[0] == shape[1] and _power_of_5(shape[0]) > 0
    if topology.kind != "torus" or not (square_power_of_5 or shape == [10, 10] or sorted(shape) == [5, 10]):
        raise ValueError(f"the tiling broadcast runs on a {TOPOLOGY}, not on {topology.name}")
    if shape == [10, 10]:
        if variant not in (None, *VARIANTS_10X10):
            raise ValueError(f"the 10 x 10 tiling variant must be one of {', '.join(VARIANTS_10X10)}, "
                             f"not {variant!r}")
        return variant or "slanting", 0
    if variant is not None:
        raise ValueError(f"tiling variants are for the 10 x 10 torus only, not for {topology.name}")
    if shape[0] == shape[1]:
        return "5^k", _power_of_5(shape[0])
    return "5x10", 0


def _power_of_5(side: int) -> int:
    """k if side is 5^k with k >= 1, else 0."""
    k = 0
    while side > 1 and side % 5 == 0:
        side //= 5
        k += 1
    return k if side == 1 else 0


def _phase_routes(topology: Topology, variant: str | None) -> list[tuple[Route, ...]]:
    """Each phase's routes from every sender of that phase, first phase first."""
    kind, k = _size(topology, variant)
    if kind == "5^k":
        return _square_phases(k)
    if kind == "four_squares":
        return [FOUR_BOSSES, *_square_phases(1)]
    if kind == "5x10":
        along_x = int(topology.shape[0]) == 10  # the two nodes of a block lie along the axis of 10
        stretched = _stretched(_square_phases(1), 2 if along_x else 1, 1 if along_x else 2)
        return [*stretched, (((PLUS_X if along_x else PLUS_Y, 1),),)]
    last = SLANTING_BLOCK if kind == "slanting" else SQUARE_BLOCK
    return [*_stretched(_square_phases(1), 2, 2), last]


def _square_phases(k: int) -> list[tuple[Route, ...]]:
    """Theorem 2's phases j = 2k .. 1: the quarter turns of the route to (u_j, v_j), long leg first."""
    phase_routes = []
    for j in range(2 * k, 0, -1):
        scale = 5 ** ((j - 1) // 2)
        to_offset = ((PLUS_Y, scale),) if j % 2 else ((PLUS_Y, 2 * scale), (PLUS_X, scale))
        phase_routes.append(tuple(tuple(((port + turn) % 4, hops) for port, hops in to_offset)
                                  for turn in range(4)))
    return phase_routes


def _stretched(phase_routes: list[tuple[Route, ...]], x_factor: int, y_factor: int) -> list[tuple[Route, ...]]:
    """The phases on a torus whose nodes were each expanded to an x_factor x y_factor block."""
    return [tuple(tuple((port, hops * (y_factor if port % 2 else x_factor)) for port, hops in route)
                  for route in routes) for routes in phase_routes]


def _sends(topology: Topology, source: int, phase_routes: list[tuple[Route, ...]]) -> list[Send]:
    width, height = shape = tuple(int(side) for side in topology.shape)
    origin = (source % width, source // width)
    sends: list[Send] = []
    waits_for = {(0, 0): (TRIGGER_START, -1)}  # informed node (offset from the source) -> its next trigger
    for routes in phase_routes:
        next_waits = {}
        for sender, (trigger, parent) in waits_for.items():
            first = len(sends)
            for route in routes:
                legs = tuple((MOVE_OF_PORT[port], hops) for port, hops in route)
                destination = walk(sender, legs, shape)
                sends.append(Send(node_number(sender, origin, shape), trigger, parent,
                                  node_number(destination, origin, shape), segments(legs)))
                next_waits[destination] = (TRIGGER_COPY, len(sends) - 1)
            longest = max(range(first, len(sends)), key=lambda i: sum(hops for _, hops, _ in sends[i].segments))
            next_waits[sender] = (TRIGGER_DELIVERED, longest)
        waits_for = next_waits
    return sends
