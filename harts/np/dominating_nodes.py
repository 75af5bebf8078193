"""EDN, Tsai & McKinley's extended dominating node broadcast on the all-port 2^k x 2^k mesh, as a send plan.

This is a reconstruction: paper 002 only names the algorithm and its k + 1 message-passing steps, and the
original paper is not available, so the design below is ours, made to have that step count.

The mesh is cut recursively into aligned square blocks. The dominating node of a block of side s >= 8 is
p(s) = (s/2 - 1, s/2 - 1) from the block's lower-left corner, of a 4 x 4 block p(4) = (1, 0). Step 1: the
source sends the message to p(2^k) of the whole mesh (X then Y). A node at p(s), s >= 8, sends it to the
dominating nodes of the four quadrants of its block by L-routes that leave through its four different
ports and share no link, so a level takes one step. A 4 x 4 block ends in two steps with its perfect
dominating set {(1, 0), (0, 2), (2, 3), (3, 1)}: (1, 0) sends to the other three (step A), then each of
the four sends to its in-block neighbours (step B). From a corner source: 1 + (k - 2) + 2 = k + 1 steps.

A send to a node that already has the message is left out; a node with a role still plays it, once it has
the message and after its own earlier sends (the source after its step-1 send). Every route is unicast:
code PASS on every segment, only the route's end takes a copy.

``schedule_sends`` and ``edn_role`` are shared with NP-D (network_partitioning), which runs this schedule
inside each of its sub-meshes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..network.topology import Topology, require_int
from .send_plan import PASS, TRIGGER_COPY, TRIGGER_SENT, TRIGGER_START, Send, SendPlan

PLUS_X, PLUS_Y, MINUS_X, MINUS_Y = 0, 1, 2, 3
MIN_ORDER = 2  # one 4 x 4 block, whose perfect dominating set ends every broadcast
TOPOLOGY = f"2^k x 2^k mesh with k >= {MIN_ORDER}"

Point = tuple[int, int]
Legs = tuple[tuple[int, int], ...]  # ((port, hops), ...)
Route = tuple[Point, Legs]  # (target, legs from the sender)
Target = tuple[int, tuple[tuple[int, int, int], ...], int]  # (destination node, segments, piece)

# The 4 x 4 block's perfect dominating set: step A from (1, 0) to the other three, then step B from each
# of the four to its in-block neighbours; every node of the block is one of them or a neighbour of one.
_BLOCK4_STEP_A: tuple[Route, ...] = (((0, 2), ((MINUS_X, 1), (PLUS_Y, 2))),
                                     ((3, 1), ((PLUS_X, 2), (PLUS_Y, 1))),
                                     ((2, 3), ((PLUS_Y, 3), (PLUS_X, 1))))
_BLOCK4_NEIGHBOURS: dict[Point, tuple[Point, ...]] = {(1, 0): ((0, 0), (2, 0), (1, 1)),
                                                      (0, 2): ((0, 1), (0, 3), (1, 2)),
                                                      (2, 3): ((1, 3), (3, 3), (2, 2)),
                                                      (3, 1): ((3, 0), (3, 2), (2, 1))}
_ONE_HOP_PORT = {(1, 0): PLUS_X, (0, 1): PLUS_Y, (-1, 0): MINUS_X, (0, -1): MINUS_Y}


def dominating_offset(side: int) -> Point:
    """p(side): where a block's dominating node sits, from the block's lower-left corner."""
    return (1, 0) if side == 4 else (side // 2 - 1, side // 2 - 1)


def mesh_order(topology: Topology, minimum: int, algorithm: str) -> int:
    """k of the 2^k x 2^k mesh the algorithm runs on, or ValueError."""
    side = int(topology.shape[0])
    if (topology.kind != "mesh" or topology.shape.tolist() != [side, side] or side & (side - 1)
            or side < 2 ** minimum):
        raise ValueError(f"{algorithm} runs on a 2^k x 2^k mesh with k >= {minimum}, not on {topology.name}")
    return side.bit_length() - 1


def x_then_y(start: Point, end: Point) -> Legs:
    """The legs of the dimension-order route: along x, then along y (a leg of no hops left out)."""
    dx, dy = end[0] - start[0], end[1] - start[1]
    legs = ((PLUS_X if dx > 0 else MINUS_X, abs(dx)), (PLUS_Y if dy > 0 else MINUS_Y, abs(dy)))
    return tuple(leg for leg in legs if leg[1])


def unicast(legs: Legs, scale: int = 1) -> tuple[tuple[int, int, int], ...]:
    """The segments of a route that only its end takes a copy of; scale stretches every hop."""
    return tuple((port, hops * scale, PASS) for port, hops in legs)


def edn_role(side: int, x: int, y: int) -> list[list[Route]]:
    """The groups of sends node (x, y) of a side x side mesh makes in turn once it has the message (each
    group one step after the one before); [] for a node without a role."""
    s = side
    while s >= 8:
        if (x % s, y % s) == dominating_offset(s):
            return [_quadrant_routes(x, y, s)]
        s //= 2
    local = (x % 4, y % 4)
    if local not in _BLOCK4_NEIGHBOURS:
        return []
    corner = (x - local[0], y - local[1])

    def in_block(routes):
        return [((corner[0] + tx, corner[1] + ty), legs) for (tx, ty), legs in routes]

    step_b = in_block(((t, ((_ONE_HOP_PORT[t[0] - local[0], t[1] - local[1]], 1),))
                       for t in _BLOCK4_NEIGHBOURS[local]))
    return [in_block(_BLOCK4_STEP_A), step_b] if local == (1, 0) else [step_b]


def _quadrant_routes(x: int, y: int, side: int) -> list[Route]:
    """From p(side) at (x, y) to the quadrants' dominating nodes, leaving by -x, -y, +y and +x; each
    route's second leg runs along a row or column of its own quadrant, so the four share no link."""
    h = side // 2
    px, py = dominating_offset(h)
    left, right, down, up = h - 1 - px, px + 1, h - 1 - py, py + 1  # hops to the quadrants' p(h)
    return [((x - left, y - down), ((MINUS_X, left), (MINUS_Y, down))),
            ((x + right, y - down), ((MINUS_Y, down), (PLUS_X, right))),
            ((x - left, y + up), ((PLUS_Y, up), (MINUS_X, left))),
            ((x + right, y + up), ((PLUS_X, right), (PLUS_Y, up)))]


def schedule_sends(source: int, pieces: int, source_groups: list[list[Target]],
                   reactions: Callable[[int, int], list[list[Target]]]) -> tuple[Send, ...]:
    """The sends of a broadcast in step order. The source makes its groups in turn from the start; a node
    makes reactions(node, piece) in turn once it first gets that piece. Each group waits for the node's
    last send of the group before (TRIGGER_SENT), the first for the copy that started it (TRIGGER_COPY).
    A send to a node that already has its piece is left out; a group left empty passes its trigger on."""
    sends: list[Send] = []
    held = {(source, piece) for piece in range(pieces)}
    pending = deque([(source, source_groups, TRIGGER_START, -1)])  # steps never decrease along it
    while pending:
        node, groups, trigger, parent = pending.popleft()
        made = []
        for destination, segments, piece in groups[0]:
            if (destination, piece) in held:
                continue
            held.add((destination, piece))
            made.append(len(sends))
            sends.append(Send(node, trigger, parent, destination, segments, piece))
            if reaction := reactions(destination, piece):
                pending.append((destination, reaction, TRIGGER_COPY, made[-1]))
        if len(groups) > 1:
            if made:
                pending.append((node, groups[1:], TRIGGER_SENT, made[-1]))
            else:
                pending.appendleft((node, groups[1:], trigger, parent))
    return tuple(sends)


def order_of(topology: Topology) -> int:
    """k of the 2^k x 2^k mesh EDN runs on, or ValueError."""
    return mesh_order(topology, MIN_ORDER, "edn")


def plan(topology: Topology, source: int) -> SendPlan:
    k = order_of(topology)
    side = 2 ** k
    source = require_int(source, "source", 0, topology.n_nodes - 1)

    def groups(node: int) -> list[list[Target]]:
        return [[(tx + side * ty, unicast(legs), 0) for (tx, ty), legs in group]
                for group in edn_role(side, node % side, node // side)]

    start, root = (source % side, source // side), dominating_offset(side)
    to_root = [(root[0] + side * root[1], unicast(x_then_y(start, root)), 0)]
    sends = schedule_sends(source, 1, [to_root, *groups(source)], lambda node, _piece: groups(node))
    return SendPlan("edn", topology, source, sends)
