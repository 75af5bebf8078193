"""The H-tree broadcast of paper 004 (Peters & Syska, section 5, Figs. 9-10) on the (2^k - 1) x (2^k - 1) torus,
pipelined, as a send plan.

The trees. In coordinates relative to the originator, the X H-tree of a block of side 2^j - 1 centred at c is:
c sends vertically to c + (0, +-h), h = 2^(j-2); each of those sends horizontally to c + (+-h, +-h), the centres
of the four quadrant blocks of side 2^(j-1) - 1 around the cross through c; each centre roots the X H-tree of
its quadrant (the recursive definition of section 5: four smaller H-trees around a cross, their centres joined
by a new "H"). A 3x3 block's H-tree ends at its four corners. The Y H-tree is the X H-tree turned by 90 degrees
(horizontal first). Every send goes to the end of its straight path, so a node the path only passes through
is not informed. The union of all paths of the two trees is arc-disjoint (tests check it for every size).

The schedule as printed: in phase 1 the originator sends X vertically and Y horizontally; in phase 2 it does
"the opposite", which is read here as the same two routes with the parts swapped: X to (+-2^(k-2), 0), the ends
of the Y tree's first paths, and Y to (0, +-2^(k-2)) (in the 3x3 torus of Fig. 9b these are its neighbours).
Every other node forwards the part it received to its two children in the next phase: 2k - 2 tree phases.
Pipelined, each originator port alternates: X piece m, then Y piece m on a vertical port (Y, then X on a
horizontal one), each send waiting for the delivery of the one before it on that port; relays forward a piece
when it reaches them. So the originator's ports carry every piece of both parts, and a round of both parts'
pieces costs it two sends of 2^(k-2) hops.

The fill phase (claim 1). The paper: "every node that is not informed by the H-tree has two informed neighbors,
so one more phase is sufficient", each of them holding X and Y. After the tree phases the nodes holding X are,
by the numbers of trailing zero bits (a, b) of their two coordinates, those with a = b (the centres of all
levels, the originator, every (odd, odd) node) or a = b + 1 (the ends of the vertical paths), counting k - 1
zero bits for the coordinate 0, and (+-2^(k-2), 0); Y's are the same turned. `fill_phase_claim` counts, per
size, the nodes that lack a part and whether one phase of single-hop sends can give each its missing parts from
distinct neighbours. From 15x15 up it cannot ((0, 2) lacks X, and its neighbours hold only Y or nothing), and
from 31x31 up some nodes, such as (0, 4), have no informed neighbour at all.

How the plan completes anyway. It keeps one fill phase, the paper's phase count: a node that no holder
reaches in one hop needs a longer path or another phase, and a longer path costs delta per extra hop where
another phase costs alpha + B tau more. Each missing (node, part) gets a path of 1 or 2 hops from a node
holding that part (a 2-hop path passes a node that does not hold it), all fill paths arc-disjoint from each
other and from every path of both trees, so that pipelined pieces never meet. The paths are found by search:
the missing parts that could compete for an arc form small independent groups, and each group is solved by
depth-first search, the part with fewest open options first, 1-hop options before 2-hop ones. A group is
first solved with only the options that keep its nodes within 2^k - 1 arcs of the originator (the printed
switching term; a part that reached its sender by the originator's second send on a port counts that port's
first send, 2^(k-2) arcs, as waited for); only a group with no such solution may use 2-hop paths from the last
tree phase's nodes, 2^k - 2 arcs deep. On 7x7 every fill path has 1 hop; on 15x15 some have 2, all from early
senders; from 31x31 up some groups need the deep ones (X at (0, 2): its only holders within two free hops are
(odd, odd) nodes), so the deepest node is 2^k arcs from the originator.

The cost (claim 2). `formula_cycles` is T(B) as printed: (2k-1) alpha + (2^k - 1) delta + (2k-1) B tau for the
first packets, plus (L/(2B) - 1)(alpha + 2^(k-2) delta + B tau) for the others; the printed simplification
(`formula_cycles_simplified`) is the same function. But the originator's ports alternate, two sends of
2^(k-2) hops per round instead of one, so the schedule takes (`schedule_cycles`, derived by hand)
    first + 2 (L/(2B) - 1)(alpha + 2^(k-2) delta + B tau),
first = (2k-1) alpha + d delta + (2k-1) B tau, d = 2^k - 1 on 7x7 and 15x15 and 2^k from 31x31 up (the fill
above); on 3x3 nothing is left to fill and first = 2 (alpha + delta + B tau). The printed remaining-packets
term is half the schedule's, and for long messages the time tends to L tau, not L tau / 2.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from ..network.topology import Topology, require_int
from .send_plan import TRIGGER_COPY, TRIGGER_DELIVERED, TRIGGER_START, Send, SendPlan
from .torus_moves import (
    PORT_OF_MOVE,
    arcs,
    node_number,
    segments,
    torus_side,
    unit_move,
    walk,
)

X, Y = 0, 1  # the two halves of the message
PART_NAMES = ("X", "Y")
UNIT_MOVES = tuple(PORT_OF_MOVE)  # in port order
TOPOLOGY = "(2^k - 1) x (2^k - 1) torus with k >= 2"


@dataclass(frozen=True)
class TreeEdge:
    """One send of one round (piece m of X and of Y), in coordinates relative to the originator."""
    sender: tuple[int, int]
    destination: tuple[int, int]
    legs: tuple[tuple[tuple[int, int], int], ...]  # (unit move, hops), in route order
    part: int  # X or Y
    parent: int  # index of the edge that brought the sender this part; -1 for the originator's sends
    phase: int
    slot: int = -1  # the originator's sends: 0 = first on its port in a round, 1 = second


def order_of(size) -> int:
    """k of a (2^k - 1) x (2^k - 1) torus, given k or the torus."""
    if isinstance(size, Topology):
        side = torus_side(size, "htree")
        if (side + 1) & side or side < 3:
            raise ValueError(f"htree needs a {TOPOLOGY}, not {size.name}")
        return (side + 1).bit_length() - 1
    return require_int(size, "the htree order k", 2)


def _turn(move, part):
    """The X tree's move as the Y tree makes it (turned by 90 degrees)."""
    return move if part == X else (-move[1], move[0])


@lru_cache(maxsize=None)
def tree_edges(k: int) -> tuple[TreeEdge, ...]:
    """The originator's sends of one round (slot 0, then slot 1) and both H-trees' relays, in phase order."""
    side, reach = 2 ** k - 1, 2 ** (k - 2)
    shape = (side, side)
    up, right = (0, 1), (1, 0)
    origin = (0, 0)
    edges: list[TreeEdge] = []
    for slot, first_move in ((0, up), (1, right)):  # X's own first paths, then X along Y's first paths
        for part in (X, Y):
            move = _turn(first_move, part)
            for sign in (1, -1):
                legs = (((sign * move[0], sign * move[1]), reach),)
                edges.append(TreeEdge(origin, walk(origin, legs, shape), legs, part, -1, 1 + slot, slot))
    # the edges whose destinations forward in the next phase
    frontier = [i for i, edge in enumerate(edges) if edge.slot == 0]
    for level in range(k - 1):
        reach = 2 ** (k - 2 - level)
        for across, phase in ((False, 2 * level + 1), (True, 2 * level + 2)):
            if level == 0 and not across:
                continue  # the originator's first paths, above
            newest = []
            for parent in frontier:
                edge = edges[parent]
                move = _turn(right if across else up, edge.part)
                for sign in (1, -1):
                    legs = (((sign * move[0], sign * move[1]), reach),)
                    edges.append(TreeEdge(edge.destination, walk(edge.destination, legs, shape), legs, edge.part,
                                          parent, phase))
                    newest.append(len(edges) - 1)
            frontier = newest
    return tuple(edges)


def _delivered(edges, side):
    """Per part: node -> (index of the edge that brought it, arcs it waited for from the originator's start).
    A slot-1 send also waits for the slot-0 send before it on the same port (2^(k-2) arcs)."""
    reached = [{(0, 0): (-1, 0)}, {(0, 0): (-1, 0)}]
    for i, edge in enumerate(edges):
        hops = sum(h for _, h in edge.legs)
        if edge.parent >= 0:
            before = reached[edge.part][edge.sender][1]
        else:
            before = edge.slot * hops
        reached[edge.part][edge.destination] = (i, before + hops)
    return reached


def _neighbours(node, side):
    return [walk(node, ((move, 1),), (side, side)) for move in UNIT_MOVES]


def _fill_options(k, edges):
    """Per missing (node, part): its candidate fill routes, each (nodes from the sender, arcs, how many arcs
    from the originator's start the node then is), 1-hop routes first."""
    side = 2 ** k - 1
    reached = _delivered(edges, side)
    tree_arcs = {arc for edge in edges for arc in arcs(edge.sender, edge.legs, (side, side))}
    demands = []
    for y in range(side):
        for x in range(side):
            node = (x, y)
            for part in (X, Y):
                holders = reached[part]
                if node in holders:
                    continue
                options = []
                for relay in _neighbours(node, side):
                    if (relay, node) in tree_arcs:
                        continue
                    if relay in holders:
                        options.append((relay, node))
                        continue
                    for sender in _neighbours(relay, side):
                        if sender != node and sender in holders and (sender, relay) not in tree_arcs:
                            options.append((sender, relay, node))
                routes = sorted(((path, list(zip(path, path[1:])), reached[part][path[0]][1] + len(path) - 1)
                                 for path in options), key=lambda option: len(option[0]))
                demands.append((node, part, routes))
    return demands, reached


def _solve_group(group, demands, allowed):
    """Depth-first search for one route per demand of the group, no arc used twice; None if there is none."""
    taken: set = set()
    chosen: dict[int, tuple] = {}

    def open_options(d):
        return [route for route in demands[d][2] if allowed(route) and not any(a in taken for a in route[1])]

    def search(left: list[int]) -> bool:
        if not left:
            return True
        scarcest = min(left, key=lambda d: len(open_options(d)))
        rest = [d for d in left if d != scarcest]
        for route in open_options(scarcest):
            taken.update(route[1])
            chosen[scarcest] = route
            if search(rest):
                return True
            taken.difference_update(route[1])
        chosen.pop(scarcest, None)
        return False

    return chosen if search(list(group)) else None


def _groups(demands):
    """Demands linked by an arc that routes of both could take, as lists of demand indices."""
    parent = list(range(len(demands)))

    def root(d):
        while parent[d] != d:
            parent[d] = parent[parent[d]]
            d = parent[d]
        return d

    first_user = {}
    for d, (_, _, routes) in enumerate(demands):
        for route in routes:
            for arc in route[1]:
                other = first_user.setdefault(arc, d)
                parent[root(d)] = root(other)
    members = defaultdict(list)
    for d in range(len(demands)):
        members[root(d)].append(d)
    return [members[r] for r in sorted(members)]


@lru_cache(maxsize=None)
def round_edges(k: int) -> tuple[TreeEdge, ...]:
    """One round's sends: the originator's, both trees' relays, then the fill phase."""
    edges = list(tree_edges(k))
    demands, reached = _fill_options(k, edges)
    limit = 2 ** k - 1
    fill = {}
    for group in _groups(demands):
        chosen = (_solve_group(group, demands, lambda route: route[2] <= limit)
                  or _solve_group(group, demands, lambda route: True))
        if chosen is None:
            node, part, _ = demands[group[0]]
            raise RuntimeError(f"htree: no fill of at most 2 hops for {PART_NAMES[part]} at {node} on k = {k}")
        fill.update(chosen)
    side = 2 ** k - 1
    for d in sorted(fill):
        _, part, _ = demands[d]
        path = fill[d][0]
        legs = tuple((unit_move(a, b, (side, side)), 1) for a, b in zip(path, path[1:]))
        edges.append(TreeEdge(path[0], path[-1], legs, part, reached[part][path[0]][0], 2 * k - 1))
    return tuple(edges)


def plan(topology: Topology, source: int, packets: int = 1) -> SendPlan:
    """X goes as pieces 0..packets-1, Y as pieces packets..2*packets-1; B = L / (2 packets)."""
    k = order_of(topology)
    source = require_int(source, "the htree source", 0, topology.n_nodes - 1)
    packets = require_int(packets, "the htree packet count", 1)
    side = 2 ** k - 1
    origin = (source % side, source // side)
    edges = round_edges(k)
    # the originator's send on the same port in the other slot of a round
    originators = [i for i, edge in enumerate(edges) if edge.slot >= 0]
    other_slot = {i: j for i in originators for j in originators
                  if edges[j].slot != edges[i].slot and edges[j].legs[0][0] == edges[i].legs[0][0]}
    sends: list[Send] = []
    for m in range(packets):
        base = m * len(edges)
        for i, edge in enumerate(edges):
            if edge.slot == 1:
                trigger, parent = TRIGGER_DELIVERED, base + other_slot[i]
            elif edge.slot == 0 and m == 0:
                trigger, parent = TRIGGER_START, -1
            elif edge.slot == 0:
                trigger, parent = TRIGGER_DELIVERED, base - len(edges) + other_slot[i]
            else:
                trigger, parent = TRIGGER_COPY, base + edge.parent
            piece = m if edge.part == X else packets + m
            sends.append(Send(node_number(edge.sender, origin, (side, side)), trigger, parent,
                              node_number(edge.destination, origin, (side, side)), segments(edge.legs), piece))
    return SendPlan("htree", topology, source, tuple(sends), pieces=2 * packets)


def phases(topology: Topology, packets: int = 1) -> int:
    """Steps of the pipelined plan: 2k - 2 tree phases and the fill phase (none on 3x3) for the first round,
    and two more per further round (the originator's ports alternate X and Y)."""
    k = order_of(topology)
    packets = require_int(packets, "the htree packet count", 1)
    return 2 * k - 2 + (k > 2) + 2 * (packets - 1)


def fill_phase_claim(size) -> dict:
    """Claim 1 on one size: the nodes left after the 2k - 2 tree phases, and this plan's fill phase."""
    k = order_of(size)
    side = 2 ** k - 1
    edges = round_edges(k)
    reached = _delivered([edge for edge in edges if edge.phase < 2 * k - 1], side)
    lacking = {}
    for y in range(side):
        for x in range(side):
            missing = [part for part in (X, Y) if (x, y) not in reached[part]]
            if missing:
                lacking[(x, y)] = missing

    def holders_around(node, wanted):
        return [q for q in _neighbours(node, side) if wanted(q in reached[X], q in reached[Y])]

    def served_by_distinct_neighbours(node, missing):
        around = _neighbours(node, side)
        holds = [[q for q in around if q in reached[part]] for part in missing]
        return all(holds) if len(missing) == 1 else any(a != b for a in holds[0] for b in holds[1])

    unserved = sum(not served_by_distinct_neighbours(node, missing) for node, missing in lacking.items())
    fill = [edge for edge in edges if edge.phase == 2 * k - 1]
    waited = _delivered(edges, side)
    return {
        "side": side,
        "tree_phases": 2 * k - 2,
        "nodes_lacking_a_part": len(lacking),
        "nodes_lacking_both": sum(len(missing) == 2 for missing in lacking.values()),
        "without_two_informed_neighbours": sum(
            len(holders_around(node, lambda x, y: x or y)) < 2 for node in lacking),
        "without_two_complete_neighbours": sum(
            len(holders_around(node, lambda x, y: x and y)) < 2 for node in lacking),
        "without_neighbour_per_missing_part": unserved,
        "one_phase_of_single_hops_suffices": unserved == 0,
        "fill_paths_1_hop": sum(len(edge.legs) == 1 for edge in fill),
        "fill_paths_2_hops": sum(len(edge.legs) == 2 for edge in fill),
        # the last node's first piece: arcs crossed from the originator, or waited for at its ports
        "deepest_node_arcs": max(arcs for part in (X, Y) for _, arcs in waited[part].values()),
    }


# --------------------------------------------------------------------------------------------- the costs

def _b(length_flits, packets):
    return Fraction(length_flits, 2 * packets)


def formula_cycles(size, length_flits, alpha, delta, tau, packets) -> Fraction:
    """T(B) of section 5 as printed, B = L / (2 packets): (2k-1) alpha + (2^k - 1) delta + (2k-1) B tau for
    the first packets of X and Y, plus (L/(2B) - 1)(alpha + 2^(k-2) delta + B tau) for the others."""
    k = order_of(size)
    b = _b(length_flits, packets)
    first = (2 * k - 1) * alpha + (2 ** k - 1) * delta + (2 * k - 1) * b * tau
    return first + (Fraction(length_flits) / (2 * b) - 1) * (alpha + 2 ** (k - 2) * delta + b * tau)


def formula_cycles_simplified(size, length_flits, alpha, delta, tau, packets) -> Fraction:
    """The printed simplification: (2k + L/(2B) - 2)(alpha + B tau) + (2^(k-2)(L/(2B) + 3) - 1) delta."""
    k = order_of(size)
    b = _b(length_flits, packets)
    rounds = Fraction(length_flits) / (2 * b)
    return (2 * k + rounds - 2) * (alpha + b * tau) + (2 ** (k - 2) * (rounds + 3) - 1) * delta


def b_opt(size, length_flits, alpha, delta, tau) -> float:
    """The printed optimal packet length sqrt((alpha + 2^(k-2) delta) L / (4 (k-1) tau))."""
    k = order_of(size)
    return math.sqrt((alpha + 2 ** (k - 2) * delta) * length_flits / (4 * (k - 1) * tau))


def formula_cycles_at_b_opt(size, length_flits, alpha, delta, tau) -> float:
    """The printed T(B_opt) = (sqrt(2(k-1)(alpha + 2^(k-2) delta)) + sqrt(L tau / 2))^2
    - ((2k-5) 2^(k-2) + 1) delta."""
    k = order_of(size)
    root = math.sqrt(2 * (k - 1) * (alpha + 2 ** (k - 2) * delta)) + math.sqrt(length_flits * tau / 2)
    return root ** 2 - ((2 * k - 5) * 2 ** (k - 2) + 1) * delta


def short_message_cycles(size, alpha, delta) -> int:
    """The printed time for very short messages, (2k - 1) alpha + (2^k - 1) delta."""
    k = order_of(size)
    return (2 * k - 1) * alpha + (2 ** k - 1) * delta


def schedule_cycles(size, packets, packet_flits, alpha, delta, tau) -> int:
    """The completion of the printed schedule as this plan runs it, derived by hand (module docstring): the
    last round leaves the originator after 2 (packets - 1) sends of 2^(k-2) hops and then takes as long as
    the first. B = packet_flits, L = 2 packets B."""
    k = order_of(size)
    b = packet_flits
    if k == 2:
        first = 2 * (alpha + delta + b * tau)
    else:
        deepest = 2 ** k - 1 if k <= 4 else 2 ** k
        first = (2 * k - 1) * (alpha + b * tau) + deepest * delta
    return first + 2 * (packets - 1) * (alpha + 2 ** (k - 2) * delta + b * tau)


def best_packets(topology, length_flits, alpha, delta, tau) -> int:
    """Packets per half message for the printed B_opt, rounded (at least 1, each of at least one flit)."""
    ideal = length_flits / (2 * b_opt(topology, length_flits, alpha, delta, tau))
    return max(1, min(length_flits // 2, round(ideal)))
