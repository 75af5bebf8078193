"""The divide-and-conquer broadcast of paper 004 (Peters & Syska, section 5, Figs. 7-8) on the 2^k x 2^k torus,
pipelined, as a send plan.

Phases 1..k-1: every node informed in phase i-1 (in phase 0, the source) sends to its four diagonal nodes
(x +- l, y +- l), l = 2^(k-i-1), by L-paths of 2l hops. The four L-paths of one sender are rotations of each
other, each going l hops and then turning left: to (+l, +l) by +x then +y, to (-l, +l) by +y then -x, to
(-l, -l) by -x then -y, to (+l, -l) by -y then +x, so they leave by four different ports and enter by four
different ports. Relative to the source, after phase k-1 exactly the nodes whose two coordinates have the
same number of trailing zero bits (fewer than k-1), and the source, hold the message: all (odd, odd) nodes,
which phase k-1 informed, and a few (even, even) ones. The union of the paths of phases 1..k-1 is arc-disjoint
(tests check it for every size).

Phase k (Fig. 7): the (odd, odd) nodes are the "cross centres"; each node with one odd coordinate (a cross
arm) lies between two of them, and each uninformed (even, even) node is diagonal to four of them. Every arm
takes one arc from one of its two centres; the other centre's arc into the arm is the redundant transmission,
and it is rerouted one hop further, turning into an uninformed (even, even) neighbour of the arm. So every
uninformed (even, even) node is matched to an arm next to it, no arm serving two. No earlier path passes
through an (odd, odd) node (the paths run along even rows and columns, except the last hop of a phase-(k-1)
path, which ends at one), so arcs out of centres are always free; but the arc from an arm into an (even, even)
node can be on an earlier path (Fig. 8: "the path that goes left from b and
then down uses an arc that was used during the first phase"), so the matching only offers arms whose arc into
the node is free; it is found by augmenting paths, trying the arm above, right, below, left in that order.
The paper's "it is always possible to find paths that are arc-disjoint from the paths of all previous
phases" holds for every size built here: the matching is perfect, and tests check the union of all paths.
Phase-k paths have 1 arc (to an arm) or 2 (to an (even, even) node); all phase-k senders were informed in
phase k-1, so a leaf is 2^k - 1 or 2^k arcs from the source.

Pipelining: the message goes as `packets` pieces, each over the same tree. The source sends piece m+1 to a
child once its send of piece m to that child has been delivered; every other node forwards piece m to its
children as soon as piece m reaches it. Because every path of the tree is used at once, the union of one
piece's paths must be arc-disjoint, and in the circuit timing no link may be held by two sends at once
(`links_held_at_once`).

T(B) (section 5) is hand-coded in `formula_cycles`: the first packet crosses k phases and 2^k arcs, and each
further packet adds the source's longest send, alpha + 2^(k-1) delta + B tau.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..network.topology import Topology, require_int
from .send_plan import TRIGGER_COPY, TRIGGER_DELIVERED, TRIGGER_START, Send, SendPlan
from .torus_moves import arcs, node_number, segments, torus_side, unit_move, walk

# the four L-paths of a phase: (first leg, second leg), each turning left after its first leg
L_PATH_LEGS = (((1, 0), (0, 1)), ((0, 1), (-1, 0)), ((-1, 0), (0, -1)), ((0, -1), (1, 0)))
# where an uninformed (even, even) node looks for the arm that relays to it, in order of preference
ARM_PREFERENCE = ((0, 1), (1, 0), (0, -1), (-1, 0))
TOPOLOGY = "2^k x 2^k torus with k >= 2"


@dataclass(frozen=True)
class TreeEdge:
    """One send of one piece's broadcast tree, in coordinates relative to the source."""
    sender: tuple[int, int]
    destination: tuple[int, int]
    legs: tuple[tuple[tuple[int, int], int], ...]  # (unit move, hops), in route order
    parent: int  # index of the edge that brought the sender the piece; -1 for the source's sends
    phase: int


def order_of(size) -> int:
    """k of a 2^k x 2^k torus, given k or the torus."""
    if isinstance(size, Topology):
        side = torus_side(size, "dc")
        if side & (side - 1) or side < 4:
            raise ValueError(f"dc needs a {TOPOLOGY}, not {size.name}")
        return side.bit_length() - 1
    return require_int(size, "the dc order k", 2)


@lru_cache(maxsize=None)
def tree(k: int) -> tuple[TreeEdge, ...]:
    """One piece's broadcast tree on the 2^k x 2^k torus, source at (0, 0), in phase order."""
    side = 1 << k
    shape = (side, side)
    edges: list[TreeEdge] = []
    informed_by = {(0, 0): -1}  # node -> the edge that informed it
    newest = [(0, 0)]
    for phase in range(1, k):
        reach = 1 << (k - phase - 1)
        senders, newest = newest, []
        for sender in senders:
            for first, second in L_PATH_LEGS:
                legs = ((first, reach), (second, reach))
                destination = walk(sender, legs, shape)
                edges.append(TreeEdge(sender, destination, legs, informed_by[sender], phase))
                informed_by[destination] = len(edges) - 1
                newest.append(destination)
    used = {arc for edge in edges for arc in arcs(edge.sender, edge.legs, shape)}
    for sender, arm, hops_on in _last_phase_routes(side, set(informed_by), used):
        legs = ((unit_move(sender, arm, shape), 1),) + (((hops_on, 1),) if hops_on else ())
        edges.append(TreeEdge(sender, walk(sender, legs, shape), legs, informed_by[sender], k))
    return tuple(edges)


def _last_phase_routes(side: int, informed: set, used: set):
    """(cross centre, arm, None or the move from the arm on) for every phase-k send."""
    shape = (side, side)

    def plus(node, move):
        return walk(node, ((move, 1),), shape)

    uninformed_even = [(x, y) for y in range(0, side, 2) for x in range(0, side, 2) if (x, y) not in informed]
    options = {node: [plus(node, d) for d in ARM_PREFERENCE if (plus(node, d), node) not in used]
               for node in uninformed_even}
    relay_of: dict[tuple[int, int], tuple[int, int]] = {}  # arm -> the (even, even) node it relays to

    def augment(node, seen) -> bool:
        for arm in options[node]:
            if arm not in seen:
                seen.add(arm)
                if arm not in relay_of or augment(relay_of[arm], seen):
                    relay_of[arm] = node
                    return True
        return False

    for node in uninformed_even:
        if not augment(node, set()):
            raise RuntimeError(f"dc: no free arm for node {node} of the {side}x{side} torus in phase k")
    routes = []
    for y in range(side):
        for x in range(side):
            arm = (x, y)
            if (x + y) % 2 == 0:
                continue
            along = (1, 0) if x % 2 == 0 else (0, 1)  # the axis on which the arm's two centres lie
            if arm in relay_of:
                target = relay_of[arm]
                into = unit_move(arm, target, shape)
                # the relaying centre is the one whose route turns left at the arm, like the L-paths; the
                # other centre informs the arm
                behind = (-into[1], into[0])
                relaying = plus(arm, behind)
                informing = plus(arm, (-behind[0], -behind[1]))
                routes.append((relaying, arm, into))
            else:
                informing = plus(arm, (-along[0], -along[1]))
            routes.append((informing, arm, None))
    routes.sort(key=lambda route: (route[0][1], route[0][0]))
    return routes


def plan(topology: Topology, source: int, packets: int = 1) -> SendPlan:
    k = order_of(topology)
    source = require_int(source, "the dc source", 0, topology.n_nodes - 1)
    packets = require_int(packets, "the dc packet count", 1)
    return pipelined_plan("dc", topology, source, tree(k), packets)


def pipelined_plan(algorithm: str, topology: Topology, source: int, edges, packets: int) -> SendPlan:
    """The plan sending `packets` pieces over the same tree: the source sends piece m+1 on an edge once piece m
    on it is delivered, relays forward a piece when it reaches them."""
    side = int(topology.shape[0])
    shape = (side, side)
    origin = (source % side, source // side)
    sends: list[Send] = []
    for piece in range(packets):
        base = piece * len(edges)
        for i, edge in enumerate(edges):
            if edge.parent >= 0:
                trigger, parent = TRIGGER_COPY, base + edge.parent
            elif piece == 0:
                trigger, parent = TRIGGER_START, -1
            else:
                trigger, parent = TRIGGER_DELIVERED, base - len(edges) + i
            sends.append(Send(node_number(edge.sender, origin, shape), trigger, parent,
                              node_number(edge.destination, origin, shape), segments(edge.legs), piece))
    return SendPlan(algorithm, topology, source, tuple(sends), pieces=packets)


def phases(topology: Topology, packets: int = 1) -> int:
    """Steps of the pipelined plan: k for the first piece, one more for each further piece."""
    return order_of(topology) + require_int(packets, "the dc packet count", 1) - 1


def formula_cycles(size, length_flits, alpha, delta, tau, packets) -> Fraction:
    """T(B) of section 5 as printed, B = L / packets: k alpha + 2^k delta + k B tau for the first packet,
    plus (L/B - 1)(alpha + 2^(k-1) delta + B tau) for the others."""
    k = order_of(size)
    b = Fraction(length_flits, packets)
    first = k * alpha + 2 ** k * delta + k * b * tau
    return first + (Fraction(length_flits) / b - 1) * (alpha + 2 ** (k - 1) * delta + b * tau)


def formula_cycles_simplified(size, length_flits, alpha, delta, tau, packets) -> Fraction:
    """The printed simplification: (k + L/B - 1)(alpha + B tau) + 2^(k-1)(L/B + 1) delta."""
    k = order_of(size)
    b = Fraction(length_flits, packets)
    ratio = Fraction(length_flits) / b
    return (k + ratio - 1) * (alpha + b * tau) + 2 ** (k - 1) * (ratio + 1) * delta


def b_opt(size, length_flits, alpha, delta, tau) -> float:
    """The printed optimal packet length sqrt((alpha + 2^(k-1) delta) L / ((k-1) tau))."""
    k = order_of(size)
    return math.sqrt((alpha + 2 ** (k - 1) * delta) * length_flits / ((k - 1) * tau))


def formula_cycles_at_b_opt(size, length_flits, alpha, delta, tau) -> float:
    """The printed T(B_opt) = (sqrt((k-1)(alpha + 2^(k-1) delta)) + sqrt(L tau))^2 - (k-2) 2^(k-1) delta."""
    k = order_of(size)
    root = math.sqrt((k - 1) * (alpha + 2 ** (k - 1) * delta)) + math.sqrt(length_flits * tau)
    return root ** 2 - (k - 2) * 2 ** (k - 1) * delta


def best_packets(topology, length_flits, alpha, delta, tau) -> int:
    """Packets for the printed B_opt, rounded (at least 1, each of at least one flit)."""
    ideal = length_flits / b_opt(topology, length_flits, alpha, delta, tau)
    return max(1, min(length_flits, round(ideal)))


# ------------------------------------------------------------------------------------ checks shared with h_tree
