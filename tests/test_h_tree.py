"""Paper 004's H-tree broadcast (section 5, Figs. 9-10) as a pipelined send plan on the (2^k - 1) x (2^k - 1)
torus, and the two claims of the text it tests: the single fill phase of one-hop sends (it fails from 15x15
up) and the pipelined cost T(B) (its remaining-packets term is half what the printed schedule takes).

The H-trees are rebuilt here from the recursive definition of the text, independently of the module."""

import math
from collections import Counter, defaultdict

import networkx as nx
import pytest

from harts.network.grid import mesh, torus
from harts.np import h_tree as ht
from harts.np.send_plan import (
    circuit_schedule,
    expected_copies,
    links_held_at_once,
    send_steps,
    shared_links_by_step,
)

ORDERS = [2, 3, 4, 5, 6]  # 3x3 .. 63x63
COSTS = [(4, 7, 1), (100, 3, 2), (1, 50, 1)]  # (alpha, delta, tau): each term large in turn


def h_torus(k):
    return torus([2 ** k - 1, 2 ** k - 1])


def centred(v, side):
    """Coordinates in -(side-1)/2 .. (side-1)/2."""
    half = side // 2
    return tuple((c + half) % side - half for c in (v % side, v // side))


def node_at(x, y, side):
    return x % side + side * (y % side)


def x_h_tree(k):
    """The X H-tree of the text as (sender, destination) pairs in centred coordinates: the centre of a block
    of side 2^j - 1 sends vertically 2^(j-2) hops, those nodes horizontally as far, reaching the centres of
    the four quadrant blocks of side 2^(j-1) - 1, which do the same."""
    pairs = []

    def block(centre, j):
        if j < 2:
            return
        h = 2 ** (j - 2)
        for sy in (1, -1):
            middle = (centre[0], centre[1] + sy * h)
            pairs.append((centre, middle))
            for sx in (1, -1):
                corner = (centre[0] + sx * h, centre[1] + sy * h)
                pairs.append((middle, corner))
                block(corner, j - 1)

    block((0, 0), k)
    return pairs


def turned(point):
    x, y = point
    return -y, x


def holders_after_tree_phases(k):
    """Nodes holding X and holding Y after the 2k - 2 tree phases: the H-tree's nodes, and the originator's
    phase-2 sends ("the opposite": X along Y's first paths to (+-2^(k-2), 0), Y to (0, +-2^(k-2)))."""
    h = 2 ** (k - 2)
    x_holders = {(0, 0), (h, 0), (-h, 0)} | {b for _, b in x_h_tree(k)}
    return x_holders, {turned(p) for p in x_holders}


def trailing_zeros(c, k):
    """Of a centred coordinate; 0 counts as k - 1, one more than any other coordinate of the torus can have."""
    return k - 1 if c == 0 else (c & -c).bit_length() - 1


def neighbours(p, side):
    half = side // 2
    return [tuple((c + d + half) % side - half for c, d in zip(p, step)) for step in ((1, 0), (0, 1), (-1, 0),
                                                                                      (0, -1))]


def tree_edges(k):
    """Per piece of a one-packet plan (0: X, 1: Y), its tree's (sender, destination) pairs: the H-tree and
    the originator's phase-2 sends."""
    h = 2 ** (k - 2)
    x_tree = set(x_h_tree(k)) | {((0, 0), (h, 0)), ((0, 0), (-h, 0))}
    return {0: x_tree, 1: {(turned(a), turned(b)) for a, b in x_tree}}


def split_sends(plan, k):
    """The sends of a one-packet plan that are tree edges, and the others (the fill), as
    (send index, (sender, destination) in centred coordinates, route)."""
    side = 2 ** k - 1
    route = {copy.send: copy.path for copy in expected_copies(plan)}
    trees = tree_edges(k)
    tree, fill = [], []
    for i, send in enumerate(plan.sends):
        edge = (centred(send.sender, side), centred(send.destination, side))
        (tree if edge in trees[send.piece] else fill).append((i, edge, route[i]))
    return tree, fill


def schedule_by_hand(k, b, packets, alpha, delta, tau):
    """The printed schedule worked by hand. The originator's port alternates X and Y pieces, so the last
    round leaves it after 2 (packets - 1) sends of 2^(k-2) hops; that round then takes as long as the first:
    on 3x3 two 1-hop phases (nothing is left to fill); from 7x7 on 2k - 2 tree phases of 2^k - 2 hops in all
    and the fill phase, its deepest route 1 hop past a last-phase node (7x7, and 15x15 where the 2-hop fill
    paths start at early nodes) or 2 hops past one (31x31 up, where X at (0, 2) has no other holder)."""
    if k == 2:
        first = 2 * (alpha + delta + b * tau)
    else:
        first = (2 * k - 1) * (alpha + b * tau) + (2 ** k - 1 + (k >= 5)) * delta
    return first + 2 * (packets - 1) * (alpha + 2 ** (k - 2) * delta + b * tau)


def printed_t(k, b, packets, alpha, delta, tau):
    """Section 5, as printed: (2k-1) alpha + (2^k - 1) delta + (2k-1) B tau + (L/(2B) - 1)(alpha
    + 2^(k-2) delta + B tau)."""
    return ((2 * k - 1) * alpha + (2 ** k - 1) * delta + (2 * k - 1) * b * tau
            + (packets - 1) * (alpha + 2 ** (k - 2) * delta + b * tau))


def completion(plan, alpha, delta, tau, b):
    return max(end for _, end in circuit_schedule(plan, alpha, delta, tau, b))


# --------------------------------------------------------------------------------------------- the plan

@pytest.mark.parametrize("k, packets, source", [(k, 1, 0) for k in ORDERS] + [(2, 3, 4), (3, 2, 20), (4, 3, 100),
                                                                               (5, 2, 500), (6, 1, 2000)])
def test_every_node_but_the_source_gets_every_piece_once(k, packets, source):
    plan = ht.plan(h_torus(k), source, packets)
    got = Counter((copy.node, plan.sends[copy.send].piece) for copy in expected_copies(plan))
    side = 2 ** k - 1
    assert got == Counter((v, m) for v in range(side * side) if v != source for m in range(2 * packets))
    assert plan.pieces == 2 * packets and plan.algorithm == "htree"


@pytest.mark.parametrize("k, packets", [(2, 1), (2, 3), (3, 1), (3, 4), (4, 2), (5, 1), (6, 2)])
def test_steps(k, packets):
    """2k - 2 tree phases and one fill phase (none on 3x3) for the first round, two steps per further round."""
    plan = ht.plan(h_torus(k), 0, packets)
    expected = 2 * packets if k == 2 else 2 * k - 1 + 2 * (packets - 1)
    assert max(send_steps(plan)) == expected == ht.phases(h_torus(k), packets)


@pytest.mark.parametrize("k", ORDERS)
def test_the_tree_phases_are_the_papers_h_trees(k):
    """Piece 0 (X) and piece 1 (Y) of a one-packet plan: besides every H-tree edge (a straight path) and the
    originator's phase-2 sends, the plan has only fill paths of 1 or 2 hops, one into each node the trees left
    without that part, on links no tree path uses."""
    side = 2 ** k - 1
    plan = ht.plan(h_torus(k), 0)
    tree, fill = split_sends(plan, k)
    for piece, edges in tree_edges(k).items():
        assert sorted(edge for i, edge, _ in tree if plan.sends[i].piece == piece) == sorted(edges)
    for i, (a, b), path in tree:
        assert len(path) - 1 == abs(b[0] - a[0]) + abs(b[1] - a[1]) and len(plan.sends[i].segments) == 1
    tree_links = {link for _, _, path in tree for link in zip(path, path[1:])}
    everything = {centred(v, side) for v in range(side * side)}
    for piece, holders in enumerate(holders_after_tree_phases(k)):
        assert sorted(b for i, (_, b), _ in fill if plan.sends[i].piece == piece) == sorted(everything - holders)
    for _, _, path in fill:
        assert len(path) - 1 in (1, 2) and not set(zip(path, path[1:])) & tree_links


def test_the_tree_holders_follow_the_trailing_zero_rule():
    """The module docstring's description: X at (x, y) iff tz(x) = tz(y) or tz(x) = tz(y) + 1 (tz(0) = k - 1),
    or (x, y) = (+-2^(k-2), 0)."""
    for k in ORDERS:
        side, h = 2 ** k - 1, 2 ** (k - 2)
        half = side // 2
        rule = {(x, y) for x in range(-half, half + 1) for y in range(-half, half + 1)
                if trailing_zeros(x, k) - trailing_zeros(y, k) in (0, 1) or (abs(x), y) == (h, 0)}
        assert holders_after_tree_phases(k)[0] == rule


@pytest.mark.parametrize("k, packets", [(k, 1) for k in ORDERS] + [(3, 3), (5, 2)])
def test_every_piece_forms_a_spanning_arborescence_rooted_at_the_source(k, packets):
    source = 7
    plan = ht.plan(h_torus(k), source, packets)
    for m in range(2 * packets):
        tree = nx.DiGraph([(s.sender, s.destination) for s in plan.sends if s.piece == m])
        assert nx.is_arborescence(tree)
        assert tree.number_of_nodes() == (2 ** k - 1) ** 2
        assert [v for v, d in tree.in_degree() if d == 0] == [source]


@pytest.mark.parametrize("k", ORDERS)
def test_links(k):
    """Within a piece no link is used twice (the two trees and the fill all at once); per step neither; and in
    the circuit timing no link is held by two circuits at once. Only the originator's routes carry both
    parts, one after the other."""
    packets = 3 if k < 6 else 2
    plan = ht.plan(h_torus(k), 0, packets)
    route = {copy.send: copy.path for copy in expected_copies(plan)}
    per_piece = defaultdict(Counter)
    for i, path in route.items():
        per_piece[plan.sends[i].piece].update(zip(path, path[1:]))
    assert all(count == 1 for links in per_piece.values() for count in links.values())
    x_links = set().union(*(per_piece[m] for m in range(packets)))
    y_links = set().union(*(per_piece[m] for m in range(packets, 2 * packets)))
    shared = {a for link in x_links & y_links for a in link}
    assert shared == {0} | {node_at(x, y, 2 ** k - 1) for x, y in
                            [(s * d, 0) for s in (1, -1) for d in range(1, 2 ** (k - 2) + 1)]
                            + [(0, s * d) for s in (1, -1) for d in range(1, 2 ** (k - 2) + 1)]}
    assert set(shared_links_by_step(plan).values()) == {0}
    for alpha, delta, tau in COSTS:
        for flits in (1, 4):
            assert links_held_at_once(plan, alpha, delta, tau, flits) == []


@pytest.mark.parametrize("k", ORDERS)
def test_deepest_node(k):
    """Arcs from the originator to the deepest node of piece 0: 2 on 3x3, 2^k - 1 on 7x7 and 15x15, 2^k from
    31x31 up."""
    plan = ht.plan(h_torus(k), 0)
    route = {copy.send: copy.path for copy in expected_copies(plan)}
    depth = {0: 0}
    for i, send in enumerate(plan.sends):
        if send.piece == 0:
            depth[send.destination] = depth[send.sender] + len(route[i]) - 1
    assert max(depth.values()) == (2 if k == 2 else 2 ** k - 1 if k <= 4 else 2 ** k)
    assert ht.fill_phase_claim(k)["deepest_node_arcs"] == max(depth.values())


def test_why_31x31_needs_a_2_hop_fill_path_from_a_last_phase_node():
    """X at (0, 2): every X holder two free hops away (not through another holder) is an (odd, odd) node,
    informed in the last tree phase 2^k - 2 arcs from the originator. Tree links from the plan's tree sends."""
    k, side = 5, 31
    x_holders, _ = holders_after_tree_phases(k)
    tree, _ = split_sends(ht.plan(h_torus(k), 0), k)
    tree_links = {tuple(centred(v, side) for v in link) for _, _, path in tree for link in zip(path, path[1:])}
    target = (0, 2)
    assert target not in x_holders and not any(q in x_holders for q in neighbours(target, side))
    starts = {q for r in neighbours(target, side) if (r, target) not in tree_links
              for q in neighbours(r, side) if q in x_holders and (q, r) not in tree_links}
    assert starts and all(x % 2 and y % 2 for x, y in starts)


# --------------------------------------------------------------------------------------------- claim 1

@pytest.mark.parametrize("k", ORDERS)
def test_claim_1_counts(k):
    """fill_phase_claim against the trees rebuilt here."""
    side = 2 ** k - 1
    half = side // 2
    x_holders, y_holders = holders_after_tree_phases(k)
    everything = [(x, y) for y in range(-half, half + 1) for x in range(-half, half + 1)]
    lacking = {p: [h for h in (x_holders, y_holders) if p not in h] for p in everything}
    lacking = {p: missing for p, missing in lacking.items() if missing}

    def informed_neighbours(p, complete):
        return sum((q in x_holders and q in y_holders) if complete else (q in x_holders or q in y_holders)
                   for q in neighbours(p, side))

    def one_hop_fill(p, missing):
        around = neighbours(p, side)
        options = [[q for q in around if q in holders] for holders in missing]
        return all(options) if len(missing) == 1 else any(a != b for a in options[0] for b in options[1])

    claim = ht.fill_phase_claim(h_torus(k))
    unserved = sum(not one_hop_fill(p, missing) for p, missing in lacking.items())
    assert claim["side"] == side and claim["tree_phases"] == 2 * k - 2
    assert claim["nodes_lacking_a_part"] == len(lacking)
    assert claim["nodes_lacking_both"] == sum(len(missing) == 2 for missing in lacking.values())
    assert claim["without_two_informed_neighbours"] == sum(informed_neighbours(p, False) < 2 for p in lacking)
    assert claim["without_two_complete_neighbours"] == sum(informed_neighbours(p, True) < 2 for p in lacking)
    assert claim["without_neighbour_per_missing_part"] == unserved
    assert claim["one_phase_of_single_hops_suffices"] == (unserved == 0)
    _, fill = split_sends(ht.plan(h_torus(k), 0), k)
    fill_hops = Counter(len(path) - 1 for _, _, path in fill)
    assert (claim["fill_paths_1_hop"], claim["fill_paths_2_hops"]) == (fill_hops[1], fill_hops[2])
    assert sum(fill_hops.values()) == len(lacking) + claim["nodes_lacking_both"]


def test_claim_1_verdict():
    """One phase of single hops completes the broadcast on 3x3 and 7x7 only; every uninformed node has two
    informed neighbours (holding anything) up to 15x15 only; (0, 2) on 15x15 and (0, 4) on 31x31 show why."""
    claims = {k: ht.fill_phase_claim(k) for k in ORDERS}
    assert [claims[k]["one_phase_of_single_hops_suffices"] for k in ORDERS] == [True, True, False, False, False]
    assert [claims[k]["without_two_informed_neighbours"] == 0 for k in ORDERS] == [True, True, True, False, False]
    x15, y15 = holders_after_tree_phases(4)
    assert (0, 2) not in x15 and not any(q in x15 for q in neighbours((0, 2), 15))
    x31, y31 = holders_after_tree_phases(5)
    assert not any(q in x31 or q in y31 for q in [(0, 4)] + neighbours((0, 4), 31))


# --------------------------------------------------------------------------------------------- claim 2

@pytest.mark.parametrize("k", ORDERS)
def test_claim_2_completion_against_the_printed_t_of_b(k):
    """The plan's circuit timing is the schedule worked by hand; it exceeds the printed T(B) by one more
    originator send per further round, (packets - 1)(alpha + 2^(k-2) delta + B tau), plus delta from 31x31 up
    (the deeper fill) and less one phase on 3x3 (no fill phase)."""
    for packets in (1, 2, 5):
        plan = ht.plan(h_torus(k), 0, packets)
        for alpha, delta, tau in COSTS:
            for b in (1, 4):
                measured = completion(plan, alpha, delta, tau, b)
                printed = printed_t(k, b, packets, alpha, delta, tau)
                assert printed == ht.formula_cycles(h_torus(k), 2 * packets * b, alpha, delta, tau, packets)
                assert measured == schedule_by_hand(k, b, packets, alpha, delta, tau)
                assert measured == ht.schedule_cycles(k, packets, b, alpha, delta, tau)
                remaining = (packets - 1) * (alpha + 2 ** (k - 2) * delta + b * tau)
                deeper_fill = delta if k >= 5 else 0
                no_fill_phase = alpha + delta + b * tau if k == 2 else 0
                assert measured - printed == remaining + deeper_fill - no_fill_phase


def test_claim_2_worked_by_hand_on_15x15():
    """k = 4, B = 4, 5 packets per half, alpha 4, delta 7, tau 1. First round: 7*4 + 15*7 + 7*4 = 161;
    each further round two originator sends of 4 hops, 2 (4 + 28 + 4) = 72: 161 + 4 * 72 = 449. Printed:
    161 + 4 * 36 = 305."""
    plan = ht.plan(h_torus(4), 0, 5)
    assert completion(plan, 4, 7, 1, 4) == 449
    assert ht.formula_cycles(4, 40, 4, 7, 1, 5) == 305


def test_claim_2_long_messages_cost_l_tau_not_l_tau_over_2():
    """Each further round adds two originator sends, so the time per flit of the message tends to tau."""
    k, b, alpha, delta, tau = 4, 8, 100, 3, 2
    topology = h_torus(k)
    ends = [completion(ht.plan(topology, 0, packets), alpha, delta, tau, b) for packets in (3, 4)]
    assert ends[1] - ends[0] == 2 * (alpha + 2 ** (k - 2) * delta + b * tau)  # L grows by 2B
    printed = [ht.formula_cycles(k, 2 * p * b, alpha, delta, tau, p) for p in (3, 4)]
    assert printed[1] - printed[0] == alpha + 2 ** (k - 2) * delta + b * tau


def test_claim_2_short_messages():
    """The printed short-message time (2k-1) alpha + (2^k - 1) delta holds on 7x7 and 15x15 (tau = 0); it
    is delta short from 31x31 up and one phase (alpha + delta) long on 3x3."""
    for k in ORDERS:
        for alpha, delta, _ in COSTS:
            measured = completion(ht.plan(h_torus(k), 0), alpha, delta, 0, 1)
            printed = ht.short_message_cycles(k, alpha, delta)
            assert printed == (2 * k - 1) * alpha + (2 ** k - 1) * delta
            assert measured - printed == {2: -(alpha + delta), 3: 0, 4: 0}.get(k, delta)


def test_claim_2_printed_algebra_is_consistent():
    """The printed simplification equals the printed sum, and the printed B_opt and T(B_opt) belong to it:
    the algebra is right, the schedule is what it misdescribes."""
    for k in ORDERS:
        for alpha, delta, tau in COSTS:
            for length, packets in ((8, 1), (40, 5), (9, 2), (1000, 7)):
                assert ht.formula_cycles(k, length, alpha, delta, tau, packets) == \
                    ht.formula_cycles_simplified(k, length, alpha, delta, tau, packets)
            length = 20000

            def t(b):
                return ((2 * k - 1) * alpha + (2 ** k - 1) * delta + (2 * k - 1) * b * tau
                        + (length / (2 * b) - 1) * (alpha + 2 ** (k - 2) * delta + b * tau))

            best = ht.b_opt(k, length, alpha, delta, tau)
            assert math.isclose(best, math.sqrt((alpha + 2 ** (k - 2) * delta) * length / (4 * (k - 1) * tau)))
            assert t(best) < t(best * 1.01) and t(best) < t(best * 0.99)
            assert math.isclose(ht.formula_cycles_at_b_opt(k, length, alpha, delta, tau), t(best))
    assert ht.best_packets(h_torus(3), 1000, 100, 3, 1) == 4  # B_opt = sqrt(106 * 1000 / 8) = 115: 500 / 115


# --------------------------------------------------------------------------------------------- input

@pytest.mark.parametrize("source", [1, 24, 48])
def test_another_source_is_the_same_plan_moved(source):
    side = 7
    at_origin, moved = ht.plan(h_torus(3), 0, 2), ht.plan(h_torus(3), source, 2)
    sx, sy = source % side, source // side

    def move(v):
        return (v % side + sx) % side + side * ((v // side + sy) % side)

    assert moved.source == source
    assert [(move(a.sender), move(a.destination), a.segments, a.trigger, a.parent, a.piece)
            for a in at_origin.sends] == [(b.sender, b.destination, b.segments, b.trigger, b.parent, b.piece)
                                          for b in moved.sends]


@pytest.mark.parametrize("topology, words", [(torus([5, 5]), "(2^k - 1) x (2^k - 1)"), (torus([7, 5]), "square"),
                                             (mesh([7, 7]), "2-D torus"), (torus([8, 8]), "(2^k - 1) x (2^k - 1)"),
                                             (torus([3, 3, 3]), "2-D torus")])
def test_other_sizes_are_refused_in_one_sentence(topology, words):
    with pytest.raises(ValueError) as error:
        ht.plan(topology, 0)
    message = str(error.value)
    assert words in message and topology.name in message and ". " not in message


def test_bad_packets_and_sources_are_refused():
    with pytest.raises(ValueError, match="packet count"):
        ht.plan(h_torus(2), 0, 0)
    with pytest.raises(ValueError, match="source"):
        ht.plan(h_torus(2), 9)
