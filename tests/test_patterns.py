"""Synthetic traffic patterns and their channel-load bounds (harts/patterns.py).

Every expected value is derived by hand in the comments. Grid conventions: node = x + k*y; ports of a 2-D
grid are 0 = +x, 1 = +y, 2 = -x, 3 = -y. Dimension-order routing (DOR) moves along x first, then y. All
loads are per unit injection rate; the bounds are in flits per node per cycle averaged over all N nodes.
"""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest

from harts.machine.patterns import (
    channel_shares,
    LOAD_BASIS,
    PATTERNS,
    channel_loads,
    default_hotspot,
    destination_matrix,
    draw_destinations,
    pattern_loads,
    synthetic_packets,
    throughput_bound,
)
from harts.network import build_topology

PLUS_X, PLUS_Y, MINUS_X, MINUS_Y = 0, 1, 2, 3


def grid(kind, k):
    return build_topology({"kind": kind, "dims": [k, k]})


def node(x, y, k=8):
    return x + k * y


# --- destination matrices ---------------------------------------------------------------------------


BIT_PATTERNS = ("bit_reverse", "shuffle", "bit_rotation")


@pytest.mark.parametrize("spec, refused", [
    ({"kind": "mesh", "dims": [8, 8]}, ()),
    ({"kind": "torus", "dims": [5, 5]}, BIT_PATTERNS),  # 25 nodes is no power of two
    ({"kind": "hypercube", "dimension": 4}, ("tornado",)),  # every side 2: a shift of 0, nobody moves
    # transpose needs a square 2-D grid, and 24 nodes is no power of two
    ({"kind": "mesh", "dims": [4, 2, 3]}, ("transpose",) + BIT_PATTERNS),
])
def test_rows_are_distributions_and_nobody_sends_to_itself(spec, refused):
    topo = build_topology(spec)
    for pattern in PATTERNS:
        if pattern in refused:
            with pytest.raises(ValueError, match=pattern):
                destination_matrix(topo, pattern)
            continue
        P = destination_matrix(topo, pattern)
        assert (P >= 0).all()
        assert np.diag(P).sum() == 0
        sums = P.sum(axis=1)
        assert np.allclose(sums[sums > 0], 1.0, rtol=0, atol=1e-12)


def test_uniform_row_is_one_over_n_minus_one():
    P = destination_matrix(grid("mesh", 4), "uniform")
    assert np.allclose(P + np.eye(16) / 15, 1 / 15)


def test_transpose_swaps_coordinates_and_the_diagonal_is_silent():
    P = destination_matrix(grid("mesh", 8), "transpose")
    assert P[node(2, 5), node(5, 2)] == 1
    assert P[node(7, 0), node(0, 7)] == 1
    silent = np.flatnonzero(P.sum(axis=1) == 0)
    assert silent.tolist() == [node(i, i) for i in range(8)]  # 0, 9, 18, ..., 63


def test_bit_complement_complements_the_node_number_bits():
    # on 8x8 (x, y) -> (7 - x, 7 - y) is node n -> 63 - n = n XOR 0b111111
    P = destination_matrix(grid("torus", 8), "bit_complement")
    assert (np.argmax(P, axis=1) == np.arange(64) ^ 63).all()
    cube = destination_matrix(build_topology({"kind": "hypercube", "dimension": 5}), "bit_complement")
    assert (np.argmax(cube, axis=1) == np.arange(32) ^ 31).all()


def test_bit_complement_centre_of_an_odd_grid_is_silent():
    # on 5x5 (2, 2) -> (4 - 2, 4 - 2) is itself
    P = destination_matrix(grid("mesh", 5), "bit_complement")
    assert np.flatnonzero(P.sum(axis=1) == 0).tolist() == [node(2, 2, 5)]


def test_hotspot_rows_by_hand():
    topo = grid("mesh", 8)
    assert default_hotspot(topo) == 36  # (4, 4)
    P = destination_matrix(topo, "hotspot", hotspot_fraction=0.2)
    # a non-hotspot source: 0.2 to node 36 plus 0.8 spread over its 63 other nodes
    assert P[0, 36] == pytest.approx(0.2 + 0.8 / 63, abs=1e-15)
    assert P[0, 1] == pytest.approx(0.8 / 63, abs=1e-15)
    # the only hotspot has no other hotspot to favour: uniform
    assert np.allclose(np.delete(P[36], 36), 1 / 63)
    # two hotspots: each favours the other with the whole fraction
    P2 = destination_matrix(topo, "hotspot", hotspot_nodes=(27, 36), hotspot_fraction=0.2)
    assert P2[0, 27] == pytest.approx(0.1 + 0.8 / 63, abs=1e-15)
    assert P2[27, 36] == pytest.approx(0.2 + 0.8 / 63, abs=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda: destination_matrix(grid("mesh", 4), "zigzag"), "unknown traffic pattern"),
    (lambda: destination_matrix(build_topology({"kind": "mesh", "dims": [4, 3]}), "transpose"), "square"),
    (lambda: destination_matrix(build_topology({"kind": "hypercube", "dimension": 3}), "transpose"), "even"),
    (lambda: destination_matrix(build_topology({"kind": "hex", "size": 3}), "bit_complement"), "hex"),
    (lambda: destination_matrix(grid("mesh", 4), "hotspot", hotspot_nodes=(16,)), "out of range"),
    (lambda: destination_matrix(grid("mesh", 4), "hotspot", hotspot_fraction=1.5), "hotspot_fraction"),
    (lambda: channel_loads(grid("mesh", 4), np.zeros((16, 16)), routing="valiant"), "unknown routing"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- channel loads -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [{"kind": "mesh", "dims": [6, 6]}, {"kind": "torus", "dims": [6, 5]},
                                  {"kind": "hypercube", "dimension": 5}])
@pytest.mark.parametrize("pattern", ["uniform", "hotspot", "bit_complement"])
def test_total_link_load_is_mean_shortest_path_by_networkx(spec, pattern):
    """DOR is minimal, so the loads of all links add up to sum P[s, d] * (hops from s to d), with the hops
    taken from networkx's breadth-first search of the same neighbours table."""
    topo = build_topology(spec)
    P = destination_matrix(topo, pattern)
    graph = nx.DiGraph((int(u), int(v)) for u, _, v in topo.links())
    hops = dict(nx.all_pairs_shortest_path_length(graph))
    expected = sum(P[s, d] * hops[s][d] for s, d in zip(*np.nonzero(P)))
    gamma = channel_loads(topo, P)
    assert gamma.sum() == pytest.approx(expected, rel=1e-12)
    assert (gamma[topo.neighbours < 0] == 0).all()


@pytest.mark.parametrize("k, plus, minus", [
    # A + x-link i -> i+1 of row y carries the packets of row y whose x offset is +f (f = 1..k/2, the
    # half-way tie going +) and whose span covers it: f sources for each f, so sum_{f=1}^{k/2} f =
    # (k/2)(k/2+1)/2 (x-pairs), times k destination rows, each pair with probability 1/(k^2-1).
    # A - link takes f = 1..k/2-1: (k/2-1)(k/2)/2 x-pairs. The y-links are the same by symmetry (the
    # packets in column x come from any of the k source columns).
    # In closed form the + links carry k^2 (k+2) / (8 (k^2-1)), which tends to k/8.
    # k = 4: + : 3 * 4 / 15 = 4/5,  - : 1 * 4 / 15 = 4/15
    # k = 8: + : 10 * 8 / 63 = 80/63 ~ 1.27,  - : 6 * 8 / 63 = 48/63
    (4, Fraction(4, 5), Fraction(4, 15)),
    (8, Fraction(80, 63), Fraction(48, 63)),
])
def test_uniform_torus_plus_links_carry_more(k, plus, minus):
    topo = grid("torus", k)
    gamma = channel_loads(topo, destination_matrix(topo, "uniform"), torus_tie="positive")
    assert np.allclose(gamma[:, [PLUS_X, PLUS_Y]], float(plus), rtol=1e-12, atol=0)
    assert np.allclose(gamma[:, [MINUS_X, MINUS_Y]], float(minus), rtol=1e-12, atol=0)


@pytest.mark.parametrize("k, load", [
    # With the half-way tie drawn, both ways of a ring carry f = 1..k/2-1 in full and f = k/2 at half:
    # ((k/2-1)(k/2)/2 + k/4) x-pairs, times k rows, over k^2-1 = k^3 / (8 (k^2-1)) on every link, which
    # tends to k/8 as with the + rule, but balanced.
    # k = 4: (1 + 1) * 4 / 15 = 8/15;  k = 8: (6 + 2) * 8 / 63 = 64/63
    (4, Fraction(8, 15)),
    (8, Fraction(64, 63)),
])
def test_uniform_torus_with_drawn_ties_loads_both_ways_alike(k, load):
    topo = grid("torus", k)
    gamma = channel_loads(topo, destination_matrix(topo, "uniform"), torus_tie="random")
    assert np.allclose(gamma, float(load), rtol=1e-12, atol=0)


def test_uniform_mesh_profile_peaks_at_the_bisection():
    # + x-link (i, y) -> (i+1, y): sources x <= i of row y (i+1 of them), destinations x >= i+1 in any row
    # ((7-i) * 8 of them), each pair 1/63: (i+1)(7-i) * 8/63; the - link (i+1, y) -> (i, y) the same; the
    # y-links the same by symmetry. Peak at i = 3 (the bisection): 4 * 4 * 8 / 63 = 128/63, in general
    # (k/2)^2 k / (k^2-1) = k^3 / (4 (k^2-1)) ~ k/4 = 2.
    topo = grid("mesh", 8)
    gamma = channel_loads(topo, destination_matrix(topo, "uniform"))
    for i in range(7):
        load = (i + 1) * (7 - i) * 8 / 63
        for y in range(8):
            assert gamma[node(i, y), PLUS_X] == pytest.approx(load, rel=1e-12)
            assert gamma[node(i + 1, y), MINUS_X] == pytest.approx(load, rel=1e-12)
            assert gamma[node(y, i), PLUS_Y] == pytest.approx(load, rel=1e-12)
            assert gamma[node(y, i + 1), MINUS_Y] == pytest.approx(load, rel=1e-12)
    assert gamma.max() == pytest.approx(128 / 63, rel=1e-12)


def test_bit_complement_mesh_x_profile():
    # row y: node x goes to 7-x; the + link i -> i+1 is crossed by the x <= i whose 7-x >= i+1, i.e.
    # x <= min(i, 6-i): min(i+1, 7-i) packets; all 4 of x = 0..3 cross the middle link 3 -> 4.
    topo = grid("mesh", 8)
    gamma = channel_loads(topo, destination_matrix(topo, "bit_complement"))
    for i in range(7):
        assert gamma[node(i, 5), PLUS_X] == min(i + 1, 7 - i)
    assert gamma.max() == 4


def test_hotspot_mesh_link_into_the_hotspot_from_below():
    # link (4,3) -> (4,4) carries, from the 32 sources of rows 0..3: the hotspot share 0.2 each, plus the
    # uniform share 0.8/63 for each of the 4 destinations (4, 4..7): 32 * 0.2 + 128 * 0.8/63 ~ 8.025.
    topo = grid("mesh", 8)
    gamma = channel_loads(topo, destination_matrix(topo, "hotspot", hotspot_nodes=(36,)))
    assert gamma[node(4, 3), PLUS_Y] == pytest.approx(32 * 0.2 + 128 * 0.8 / 63, rel=1e-12)


# --- bounds ------------------------------------------------------------------------------------------

# pattern, kind, throughput (flits/node/cycle over all 64 nodes), bottleneck, max link load per unit
# offered load. Hand derivations:
# mesh uniform: links 128/63 > ejection 1 = injection 1 -> 63/128; first bisection link (3,0) +x = (3, 0).
# torus uniform: + links 80/63 -> 63/80; every + link ties, the first is node 0 port +x.
# mesh bit_complement: 4 (above) -> 1/4 at (3,0) +x; node 3 is the first with a load-4 link.
# torus bit_complement: in a ring of 8, x -> 7-x has forward distance (7-2x) mod 8 = 7,5,3,1,7,5,3,1, so
#   offsets -1,-3,+3,+1,-1,-3,+3,+1; link 0 -> 7 (node 0 port -x) is crossed by x = 0 (0->7) and
#   x = 1 (1->0->7->6): 2, and no link by more (-: {0,1},{1},{1},{4,5},{5},{5}; +: the mirror image).
#   Node 0's +x (0->1: x = 6 only) and +y links carry 1, so the first load-2 link is (0, -x) -> 1/2.
# mesh transpose: 56 senders. Row 7's link (6,7) -> (7,7) carries all 7 senders of row 7 (they go to
#   column 7); column 0's link (0,0) -> (0,1) carries all 7 senders (x, 0), x >= 1 (they reach (0,0) and
#   go up): 7 per sending node's unit rate, the first such link is (0, +y). Per unit offered load over all
#   64 nodes each sender injects 64/56 = 8/7: 7 * 8/7 = 8 -> 1/8 (= 1/7 per sending node).
# torus transpose: row y's 7 senders go to column y; + link (y-1) -> y carries the 4 at forward distance
#   1..4, - link (y+1) -> y the 3 at distance 5..7 (going -3..-1). Column c then fans out from (c, c) the
#   same way: the + link out of (c, c) carries 4; (0,0) +y is the first. 4 * 8/7 = 32/7 -> 7/32.
#   With the tie drawn (routing.torus_tie: random), the sender at distance 4 goes either way at half: both
#   links into (y, y) carry 3.5, and so do both links out of (c, c) in the column; (0,0)'s +x carries
#   nothing (row 0 ends at (0,0)), so (0,0) +y is again the first: 3.5 * 8/7 = 4 -> 1/4.
# torus uniform, tie drawn: every link 64/63 (test above) -> 63/64, first node 0 port +x.
# torus bit_complement has odd distances only, so no ties: the same either way.
# hotspot, one hotspot at node 36 = (4,4), fraction 0.2: node 36 receives from each of the 63 others
#   0.2 + 0.8/63, i.e. 63 * 0.2 + 0.8 = 1 + 62 * 0.2 = 13.4 (in general 1 + (N-2) f: the N f_eff of the
#   "1/(N f_eff)" rule); the busiest link (into 36 from below) carries ~8.03 (mesh) < 13.4, so the
#   ejection channel of 36 saturates first -> 1/13.4 = 5/67 on both mesh and torus.
BOUNDS = [
    ("uniform", "mesh", "random", Fraction(63, 128), (3, PLUS_X), Fraction(128, 63)),
    ("uniform", "torus", "positive", Fraction(63, 80), (0, PLUS_X), Fraction(80, 63)),
    ("uniform", "torus", "random", Fraction(63, 64), (0, PLUS_X), Fraction(64, 63)),
    ("bit_complement", "mesh", "random", Fraction(1, 4), (3, PLUS_X), Fraction(4)),
    ("bit_complement", "torus", "positive", Fraction(1, 2), (0, MINUS_X), Fraction(2)),
    ("bit_complement", "torus", "random", Fraction(1, 2), (0, MINUS_X), Fraction(2)),
    ("transpose", "mesh", "random", Fraction(1, 8), (0, PLUS_Y), Fraction(8)),
    ("transpose", "torus", "positive", Fraction(7, 32), (0, PLUS_Y), Fraction(32, 7)),
    ("transpose", "torus", "random", Fraction(1, 4), (0, PLUS_Y), Fraction(4)),
    ("hotspot", "mesh", "random", Fraction(5, 67), ("ejection", 36), None),
    ("hotspot", "torus", "positive", Fraction(5, 67), ("ejection", 36), None),
    ("hotspot", "torus", "random", Fraction(5, 67), ("ejection", 36), None),
]


@pytest.mark.parametrize("pattern, kind, torus_tie, throughput, bottleneck, link", BOUNDS)
def test_bounds_on_8x8(pattern, kind, torus_tie, throughput, bottleneck, link):
    bound = throughput_bound(grid(kind, 8), pattern, torus_tie=torus_tie)
    assert bound.pattern == pattern
    assert bound.load_basis == LOAD_BASIS
    assert bound.throughput == pytest.approx(float(throughput), rel=1e-12)
    assert bound.bottleneck == bottleneck
    if link is not None:
        assert bound.max_channel_load == pytest.approx(float(link), rel=1e-12)


def test_transpose_bound_counts_every_node():
    bound = throughput_bound(grid("mesh", 8), "transpose")
    assert (bound.n_nodes, bound.sending_nodes) == (64, 56)
    assert bound.injection_load == pytest.approx(64 / 56)
    assert bound.throughput_per_sending_node == pytest.approx(1 / 7, rel=1e-12)


def test_hotspot_ejection_bound_with_two_hotspots():
    # hotspot 27 receives f/2 + 0.8/63 from each of the 62 non-hotspots and f + 0.8/63 from hotspot 36:
    # 62 * 0.1 + 0.2 + 63 * 0.8/63 = 1 + 62 * 0.1 = 7.2 (the links stay below: the busiest carries the
    # 0.1 hotspot share of at most 32 sources per hotspot plus small uniform traffic).
    bound = throughput_bound(grid("mesh", 8), "hotspot", hotspot_nodes=(27, 36), hotspot_fraction=0.2)
    assert bound.throughput == pytest.approx(1 / 7.2, rel=1e-12)
    assert bound.bottleneck == ("ejection", 27)


def test_small_torus_uniform_is_limited_by_the_end_channels():
    # 4x4 torus: + links 4/5 < 1, so ejection (1 per node, tied with injection, reported first) limits.
    bound = throughput_bound(grid("torus", 4), "uniform")
    assert bound.throughput == pytest.approx(1.0, rel=1e-12)
    assert bound.bottleneck == ("ejection", 0)


def test_flit_cycles_divide_the_throughput():
    one = throughput_bound(grid("mesh", 8), "uniform")
    three = throughput_bound(grid("mesh", 8), "uniform", flit_cycles=3)
    assert three.throughput == pytest.approx(one.throughput / 3, rel=1e-12)
    assert three.bottleneck == one.bottleneck


# --- sampling ----------------------------------------------------------------------------------------


def test_draw_destinations_matches_P():
    """Counts of each (source, destination) cell are binomial(n, P[s, d]); every cell must be within 5
    standard deviations (a cell misses with probability ~6e-7, so ~1e-4 for the 16 x 16 cells together);
    zero-probability cells are never drawn."""
    topo = grid("mesh", 4)
    P = destination_matrix(topo, "hotspot", hotspot_nodes=(5, 10), hotspot_fraction=0.3)
    per_source = 20_000
    rng = np.random.default_rng(12345)
    sources = rng.permutation(np.repeat(np.arange(16), per_source))  # any order of sources
    drawn = draw_destinations(P, sources, rng)
    assert drawn.dtype == np.int64 and drawn.shape == sources.shape
    counts = np.zeros((16, 16))
    np.add.at(counts, (sources, drawn), 1)
    expected = per_source * P
    sigma = np.sqrt(per_source * P * (1 - P))
    assert (np.abs(counts - expected) <= 5 * sigma + 1e-9).all()
    assert (counts[P == 0] == 0).all()


def test_draw_destinations_is_deterministic_for_a_seed():
    P = destination_matrix(grid("torus", 4), "uniform")
    sources = np.arange(16).repeat(50)
    a = draw_destinations(P, sources, np.random.default_rng(7))
    b = draw_destinations(P, sources, 7)
    c = draw_destinations(P, sources, np.random.default_rng(8))
    assert (a == b).all()
    assert (a != c).any()
    assert (a != sources).all()


def test_draw_destinations_of_a_permutation_is_exact_and_silent_sources_are_refused():
    P = destination_matrix(grid("mesh", 8), "transpose")
    sources = np.array([1, 8, 62])
    # (1, 0) -> (0, 1) = 8, (0, 1) -> (1, 0) = 1, (6, 7) -> (7, 6) = 7 + 8 * 6 = 55
    assert draw_destinations(P, sources, 0).tolist() == [8, 1, 55]
    with pytest.raises(ValueError, match="never sends"):
        draw_destinations(P, [0], 0)


@pytest.mark.parametrize("spec", [{"kind": "torus", "dims": [4, 4]}, {"kind": "mesh", "dims": [5, 5]},
                                  {"kind": "hypercube", "dimension": 4}])
@pytest.mark.parametrize("pattern, args", [("uniform", {}), ("transpose", {}), ("bit_complement", {}),
                                           ("hotspot", {}), ("hotspot", {"hotspot_nodes": (0, 3),
                                                                         "hotspot_fraction": 0.4})])
def test_synthetic_packets_draw_what_the_whole_matrix_draws(spec, pattern, args, monkeypatch):
    """synthetic_packets never builds P: its destinations must be those drawn from P row by row with the same
    generator (golden runs depend on them), here also with the hotspot rows taken a few at a time."""
    import harts.machine.patterns as patterns

    topo = build_topology(spec)
    monkeypatch.setattr(patterns, "ROW_BLOCK", 3 * topo.n_nodes)
    P = destination_matrix(topo, pattern, **args)
    for seed in (1, 2):
        create, source, destination, _ = synthetic_packets(topo, pattern, 0.6, 2, 400, seed, **args)
        rng = np.random.default_rng(seed)
        senders = np.nonzero(P.sum(axis=1) > 0)[0]
        counts = rng.poisson(0.6 * topo.n_nodes / len(senders) / 2 * 400, len(senders))
        expected_source = np.repeat(senders, counts)
        expected_create = np.floor(rng.uniform(0, 400, len(expected_source))).astype(np.int64)
        order = np.argsort(expected_create, kind="stable")
        assert create.tolist() == expected_create[order].tolist()
        assert source.tolist() == expected_source[order].tolist()
        assert destination.tolist() == draw_destinations(P, expected_source[order], rng).tolist()
        assert len(create) > 1000


def test_synthetic_packets_on_a_large_torus_hold_no_n_by_n_matrix():
    import tracemalloc

    topo = grid("torus", 64)  # P would be 4096 x 4096 doubles: 134 MB, and its cumulative rows as much again
    tracemalloc.start()
    create, source, destination, _ = synthetic_packets(topo, "uniform", 0.1, 8, 200, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(create) > 5000 and (destination != source).all()
    assert peak < 8_000_000


# --- the BookSim2 and Garnet patterns ------------------------------------------------------------------


def mapped(P):
    """d(s) of a permutation pattern's matrix: each row's one destination, s itself for a row that never sends."""
    assert ((P == 0) | (P == 1)).all() and (P.sum(axis=0) <= 1).all() and (P.sum(axis=1) <= 1).all()
    return np.where(P.sum(axis=1) > 0, P.argmax(axis=1), np.arange(len(P)))


def cube(m):
    return build_topology({"kind": "hypercube", "dimension": m})


# BookSim2's src/traffic.cpp and gem5's GarnetSyntheticTraffic.cc, line by line (C's / on non-negative ints is //)


def booksim_tornado(source, k, n, xr=1):  # TornadoTrafficPattern::dest
    offset, result = 1, 0
    for _ in range(n):
        result += offset * (((source // offset) % (xr * k) + ((xr * k + 1) // 2 - 1)) % (xr * k))
        offset *= xr * k
    return result


def booksim_neighbor(source, k, n, xr=1):  # NeighborTrafficPattern::dest
    offset, result = 1, 0
    for _ in range(n):
        result += offset * (((source // offset) % (xr * k) + 1) % (xr * k))
        offset *= xr * k
    return result


def booksim_bitrev(source, nodes):  # BitRevTrafficPattern::dest
    result, n = 0, nodes
    while n > 1:
        result = (result << 1) | (source % 2)
        source >>= 1
        n >>= 1
    return result


def booksim_shuffle(source, nodes):  # ShuffleTrafficPattern::dest
    shifted = source << 1
    return (shifted & (nodes - 1)) | int(bool(shifted & nodes))


def garnet_bit_rotation(source, num_destinations):  # generatePkt, BIT_ROTATION_
    return source // 2 if source % 2 == 0 else source // 2 + num_destinations // 2


def booksim_diagonal(source, nodes, draw):  # DiagonalTrafficPattern::dest, draw = RandomInt(2): 0, 1 or 2
    return (source + 1) % nodes if draw == 0 else source


@pytest.mark.parametrize("kind", ["mesh", "torus"])
def test_tornado_shifts_every_coordinate_by_its_own_sides_ceil_half_minus_one(kind):
    # 8x8: ceil(8/2) - 1 = 3 on both axes; 5x4: ceil(5/2) - 1 = 2 on x, ceil(4/2) - 1 = 1 on y
    eight = mapped(destination_matrix(grid(kind, 8), "tornado"))
    assert eight.tolist() == [node((x + 3) % 8, (y + 3) % 8) for y in range(8) for x in range(8)]
    five_four = mapped(destination_matrix(build_topology({"kind": kind, "dims": [5, 4]}), "tornado"))
    assert five_four.tolist() == [(x + 2) % 5 + 5 * ((y + 1) % 4) for y in range(4) for x in range(5)]
    assert five_four[19] == 1  # (4, 3) -> (6 mod 5, 4 mod 4) = (1, 0)


def test_neighbor_adds_one_to_every_coordinate_and_complements_a_hypercubes_bits():
    for kind in ("mesh", "torus"):
        P = mapped(destination_matrix(grid(kind, 8), "neighbor"))
        assert P.tolist() == [node((x + 1) % 8, (y + 1) % 8) for y in range(8) for x in range(8)]
    # on Q6 every bit is a coordinate of side 2: x -> x + 1 mod 2 flips it, s -> s XOR 0b111111
    assert mapped(destination_matrix(cube(6), "neighbor")).tolist() == [s ^ 63 for s in range(64)]


def test_bit_reverse_by_hand():
    P = destination_matrix(cube(6), "bit_reverse")
    d = mapped(P)
    # 000001 -> 100000, 000110 -> 011000, 101011 -> 110101
    assert (d[1], d[6], d[43]) == (32, 24, 53)
    # the palindromes b0 b1 b2 b2 b1 b0 = 33 b0 + 18 b1 + 12 b2 send nothing
    assert np.flatnonzero(P.sum(axis=1) == 0).tolist() == [0, 12, 18, 30, 33, 45, 51, 63]
    # on 8x8, x the low 3 bits and y the high 3: (x, y) -> (r(y), r(x)), r reversing 3 bits
    r = [0, 4, 2, 6, 1, 5, 3, 7]
    grid_map = mapped(destination_matrix(grid("mesh", 8), "bit_reverse"))
    assert grid_map.tolist() == [node(r[y], r[x]) for y in range(8) for x in range(8)]


def test_shuffle_and_bit_rotation_by_hand():
    shuffle = destination_matrix(cube(6), "shuffle")
    left = mapped(shuffle)
    # rotate left: 000001 -> 000010, 100000 -> 000001, 100001 -> 000011, 101011 -> 010111
    assert (left[1], left[32], left[33], left[43]) == (2, 1, 3, 23)
    rotation = destination_matrix(cube(6), "bit_rotation")
    right = mapped(rotation)
    # rotate right (Garnet: even s -> s/2, odd s -> (s-1)/2 + 32): 1 -> 32, 2 -> 1, 44 -> 22, 45 -> 54
    assert (right[1], right[2], right[44], right[45]) == (32, 1, 22, 54)
    assert (right[left] == np.arange(64)).all()  # the inverse of shuffle
    # only 000000 and 111111 are left where they are
    for P in (shuffle, rotation):
        assert np.flatnonzero(P.sum(axis=1) == 0).tolist() == [0, 63]
    # on 8x8 (x the low 3 bits): shuffle (x, y) -> (2x mod 8 + [y >= 4], 2y mod 8 + [x >= 4]),
    # bit_rotation (x, y) -> (x // 2 + 4 (y mod 2), y // 2 + 4 (x mod 2))
    assert mapped(destination_matrix(grid("torus", 8), "shuffle")).tolist() == \
        [node(2 * x % 8 + (y >= 4), 2 * y % 8 + (x >= 4)) for y in range(8) for x in range(8)]
    assert mapped(destination_matrix(grid("torus", 8), "bit_rotation")).tolist() == \
        [node(x // 2 + 4 * (y % 2), y // 2 + 4 * (x % 2)) for y in range(8) for x in range(8)]


def test_diagonal_sends_to_the_next_node_number():
    d = mapped(destination_matrix(grid("mesh", 8), "diagonal"))
    assert d.tolist() == list(range(1, 64)) + [0]


@pytest.mark.parametrize("spec, k, n", [
    ({"kind": "mesh", "dims": [8, 8]}, 8, 2), ({"kind": "torus", "dims": [8, 8]}, 8, 2),
    ({"kind": "torus", "dims": [5, 5]}, 5, 2), ({"kind": "mesh", "dims": [7, 7, 7]}, 7, 3),
    ({"kind": "hypercube", "dimension": 6}, 2, 6),  # BookSim2's hypercube is the 2-ary 6-cube
])
def test_tornado_and_neighbor_are_booksim2s(spec, k, n):
    topo = build_topology(spec)
    N = topo.n_nodes
    assert mapped(destination_matrix(topo, "neighbor")).tolist() == [booksim_neighbor(s, k, n) for s in range(N)]
    tornado = [booksim_tornado(s, k, n) for s in range(N)]
    if spec["kind"] == "hypercube":
        assert tornado == list(range(N))  # (2 + 1) / 2 - 1 = 0: BookSim2 too sends every packet to its source
        with pytest.raises(ValueError, match="tornado on Q6 maps every node to itself"):
            destination_matrix(topo, "tornado")
    else:
        assert mapped(destination_matrix(topo, "tornado")).tolist() == tornado


@pytest.mark.parametrize("spec", [{"kind": "mesh", "dims": [8, 8]}, {"kind": "torus", "dims": [8, 8]},
                                  {"kind": "hypercube", "dimension": 6}, {"kind": "mesh", "dims": [8, 4]}])
def test_bit_patterns_are_booksim2s_and_garnets(spec):
    topo = build_topology(spec)
    N = topo.n_nodes
    assert mapped(destination_matrix(topo, "bit_reverse")).tolist() == [booksim_bitrev(s, N) for s in range(N)]
    assert mapped(destination_matrix(topo, "shuffle")).tolist() == [booksim_shuffle(s, N) for s in range(N)]
    assert mapped(destination_matrix(topo, "bit_rotation")).tolist() == \
        [garnet_bit_rotation(s, N) for s in range(N)]


@pytest.mark.parametrize("spec", [{"kind": "mesh", "dims": [8, 8]}, {"kind": "torus", "dims": [5, 5]},
                                  {"kind": "hypercube", "dimension": 6}])
def test_diagonal_is_the_part_of_booksim2s_that_enters_the_network(spec):
    topo = build_topology(spec)
    N = topo.n_nodes
    booksim = np.zeros((N, N))
    for s in range(N):
        for draw in range(3):  # RandomInt(2) draws 0, 1 and 2 alike
            booksim[s, booksim_diagonal(s, N, draw)] += 1 / 3
    entering = booksim - np.diag(np.diag(booksim))
    assert np.allclose(entering.sum(axis=1), 1 / 3, rtol=0, atol=1e-15)  # a third of BookSim2's load
    assert np.allclose(destination_matrix(topo, "diagonal"), 3 * entering, rtol=0, atol=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda: destination_matrix(grid("torus", 5), "bit_reverse"),
     "^bit_reverse needs a power-of-two number of nodes, torus 5x5 has 25$"),
    (lambda: destination_matrix(grid("torus", 5), "shuffle"), "^shuffle needs a power-of-two .* torus 5x5 has 25$"),
    (lambda: destination_matrix(build_topology({"kind": "hex", "size": 3}), "bit_rotation"),
     "^bit_rotation needs a power-of-two number of nodes, E-3 has 19$"),
    (lambda: destination_matrix(build_topology({"kind": "hex", "size": 3}), "shuffle"), "E-3 has 19"),
    (lambda: destination_matrix(cube(6), "tornado"), "^tornado on Q6 maps every node to itself: no node would send$"),
    (lambda: throughput_bound(cube(3), "tornado"), "^tornado on Q3 maps every node to itself"),
    (lambda: destination_matrix(grid("mesh", 2), "tornado"), "^tornado on mesh 2x2 maps every node to itself"),
    (lambda: destination_matrix(build_topology({"kind": "hex", "size": 3}), "neighbor"),
     "^neighbor is defined on meshes, tori and hypercubes, not on hex$"),
    (lambda: destination_matrix(grid("mesh", 4), "random_permutation", permutation_seed=-1), "permutation_seed"),
    (lambda: destination_matrix(grid("mesh", 4), "random_permutation", permutation_seed=True), "permutation_seed"),
])
def test_patterns_a_network_cannot_have_are_refused_in_one_line(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_random_permutation_is_a_permutation_fixed_by_its_seed():
    topo = grid("mesh", 8)
    maps = {seed: mapped(destination_matrix(topo, "random_permutation", permutation_seed=seed))
            for seed in (1, 2, 3)}
    for d in maps.values():
        assert sorted(d.tolist()) == list(range(64))
    assert (maps[1] != maps[2]).any() and (maps[2] != maps[3]).any()
    assert (mapped(destination_matrix(topo, "random_permutation", permutation_seed=2)) == maps[2]).all()
    assert (mapped(destination_matrix(topo, "random_permutation")) == maps[1]).all()  # the default seed is 1


def test_random_permutation_leaves_other_random_streams_alone():
    np.random.seed(5)
    before = np.random.random(3)
    np.random.seed(5)
    destination_matrix(grid("torus", 4), "random_permutation", permutation_seed=9)
    assert (np.random.random(3) == before).all()
    # synthetic_packets takes permutation_seed with the other pattern arguments, and draws its packets
    # from its own seed: the destinations are the seed's permutation of the sources
    topo = cube(4)
    for seed in (1, 2):
        d = mapped(destination_matrix(topo, "random_permutation", permutation_seed=seed))
        out = synthetic_packets(topo, "random_permutation", 0.5, 2, 300, 7, permutation_seed=seed)
        source, destination = out[1], out[2]
        assert len(source) > 100 and (destination == d[source]).all() and (destination != source).all()


# Bounds of the BookSim2 and Garnet patterns, as MODEL.md ("Traffic patterns and their channel-load bounds")
# derives them: Theta = (N_send / N) / max(C, 1), C the most routes crossing one link (a half-way route on an
# even ring counting 1/2 each way with the tie drawn), and the largest link load per unit offered load
# C * N / N_send. Hypercube ports are bits; e-cube routing corrects bit 0 first.
# tornado, h = ceil(k/2) - 1. 8x8 mesh, h = 3: row 0's + link 2 -> 3 carries sources 0, 1, 2 (to 3, 4, 5),
#   the first link with 3 (links 0 -> 1 and 1 -> 2 carry 1 and 2, node 0's +y link only the packet that
#   came to (0, 0) from x = 5): 1/3 at (2, +x). 8x8 torus: every + link carries the 3 sources behind it: 1/3
#   at (0, +x). 5x5 torus, h = 2: 1/2 at (0, +x).
# neighbor and diagonal: no link carries two routes, so the injection channel (1) binds, tied with the links
#   and ejection; the first loaded link is node 0's first hop (+x on grids, bit 0 on Q6): 1 at (0, 0).
# bit_reverse, 8x8 mesh: the 7 senders of column 0 wait at (0, 0) (row 0's all came there) and all go up:
#   C = 7 on (0, +y), node 0's +x carrying nothing; 56 senders: 7 * 64/56 = 8, Theta = 1/8. 16x16 mesh:
#   C = 15, 240 senders: 15 * 256/240 = 16, Theta = 1/16. 8x8 torus: of those 7 (rows 4, 2, 6, 1, 5, 3, 7 at
#   forward distance 4, 2, 6, 1, 5, 3, 7), 1, 2, 3 go up and 4 half: C = 3.5, 3.5 * 8/7 = 4, Theta = 1/4 at
#   (0, +y); tie positive: C = 4, 32/7, Theta = 7/32. Q6: C = 2^(3-1) = 4 at node 0's bit 3 (node 0's bit 2
#   needs u_3 != u_2), Theta = (7/8)/4 = 7/32 and 4 * 8/7 = 32/7.
# shuffle, 8x8 mesh: column 0 holds rows 0..3's packets for rows 0..7 (two each); the + link (0, 3) -> (0, 4),
#   node 24's +y, carries the 4 for rows 4..7 (no earlier link carries 4: rows carry at most 2, column links
#   below it i + 1 <= 3); 62 senders: 4 * 64/62 = 128/31, Theta = 31/128. Torus: the one for row 7 (from
#   row 3, half-way) goes half each way: C = 3.5, 112/31, Theta = 31/112. Q6: C = 1 on every link, node 0's
#   bit 1 carrying s = 1 (1 -> 0 -> 2) first (node 0's bit 0 carries s = 0, which sends nothing):
#   Theta = 62/64 = 31/32, 64/62 = 32/31.
# bit_rotation, 8x8 mesh: row 0's x = 4..7 go to x // 2 = 2, 2, 3, 3 across the - link 4 -> 3: C = 4 at
#   (4, -x) (the - links out of nodes 1..3 carry 1, 2, 3); torus: x = 7 is half-way (to 3) and goes half
#   each way: 3.5 on (4, -x), 112/31; Theta 31/128 and 31/112 as shuffle's. Q6: the dimension-j link out
#   of u (1 <= j <= 4) carries 2 routes iff u_(j-1) = u_j != u_(j+1); first at node 3 = 000011, j = 1
#   (sources 2 -> 1 and 3 -> 33); nodes 0, 1, 2 have no such j. C = 2: Theta = (62/64)/2 = 31/64, 64/31.
NEW_BOUNDS = [
    ("tornado", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(1, 3), (2, PLUS_X), Fraction(3)),
    ("tornado", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(1, 3), (0, PLUS_X), Fraction(3)),
    ("tornado", {"kind": "torus", "dims": [5, 5]}, "random", Fraction(1, 2), (0, PLUS_X), Fraction(2)),
    ("neighbor", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(1), (0, PLUS_X), Fraction(1)),
    ("neighbor", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(1), (0, PLUS_X), Fraction(1)),
    ("neighbor", {"kind": "hypercube", "dimension": 6}, "random", Fraction(1), (0, 0), Fraction(1)),
    ("bit_reverse", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(1, 8), (0, PLUS_Y), Fraction(8)),
    ("bit_reverse", {"kind": "mesh", "dims": [16, 16]}, "random", Fraction(1, 16), (0, PLUS_Y), Fraction(16)),
    ("bit_reverse", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(1, 4), (0, PLUS_Y), Fraction(4)),
    ("bit_reverse", {"kind": "torus", "dims": [8, 8]}, "positive", Fraction(7, 32), (0, PLUS_Y), Fraction(32, 7)),
    ("bit_reverse", {"kind": "hypercube", "dimension": 6}, "random", Fraction(7, 32), (0, 3), Fraction(32, 7)),
    ("shuffle", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(31, 128), (24, PLUS_Y), Fraction(128, 31)),
    ("shuffle", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(31, 112), (24, PLUS_Y), Fraction(112, 31)),
    ("shuffle", {"kind": "hypercube", "dimension": 6}, "random", Fraction(31, 32), (0, 1), Fraction(32, 31)),
    ("bit_rotation", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(31, 128), (4, MINUS_X),
     Fraction(128, 31)),
    ("bit_rotation", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(31, 112), (4, MINUS_X),
     Fraction(112, 31)),
    ("bit_rotation", {"kind": "hypercube", "dimension": 6}, "random", Fraction(31, 64), (3, 1), Fraction(64, 31)),
    ("diagonal", {"kind": "mesh", "dims": [8, 8]}, "random", Fraction(1), (0, PLUS_X), Fraction(1)),
    ("diagonal", {"kind": "torus", "dims": [8, 8]}, "random", Fraction(1), (0, PLUS_X), Fraction(1)),
    ("diagonal", {"kind": "hypercube", "dimension": 6}, "random", Fraction(1), (0, 0), Fraction(1)),
]


@pytest.mark.parametrize("pattern, spec, torus_tie, throughput, bottleneck, link", NEW_BOUNDS)
def test_bounds_derived_by_hand(pattern, spec, torus_tie, throughput, bottleneck, link):
    bound = throughput_bound(build_topology(spec), pattern, torus_tie=torus_tie)
    assert bound.throughput == pytest.approx(float(throughput), rel=1e-12)
    assert bound.bottleneck == bottleneck
    assert bound.max_channel_load == pytest.approx(float(link), rel=1e-12)


def test_random_permutation_bound_on_q3_by_hand():
    # The permutations numpy draws for seeds 1 and 2 (kept here so that a change of the stream shows), and
    # their e-cube routes, bit 0 first, with the links (node, bit) they cross:
    # seed 1: 0->6 (0,1)(2,2); 1->2 (1,0)(0,1); 2->7 (2,0)(3,2); 3->4 (3,0)(2,1)(0,2); 4->5 (4,0);
    #   5->0 (5,0)(4,2); 6->3 (6,0)(7,2); 7->1 (7,1)(5,2). Only (0, bit 1) is crossed twice: C = 2 and
    #   every node sends: Theta = 1/2 at (0, 1).
    # seed 2: 4 stays; 0->7 (0,0)(1,1)(3,2); 1->0 (1,0); 2->6 (2,2); 3->5 (3,1)(1,2); 5->2 (5,0)(4,1)(6,2);
    #   6->3 (6,0)(7,2); 7->1 (7,1)(5,2): no link twice, C = 1; 7 senders: Theta = 7/8, the links (8/7 per
    #   unit offered load, tied with the end channels) first, (0, 0) first of them.
    topo = cube(3)
    assert mapped(destination_matrix(topo, "random_permutation", permutation_seed=1)).tolist() == \
        [6, 2, 7, 4, 5, 0, 3, 1]
    assert mapped(destination_matrix(topo, "random_permutation", permutation_seed=2)).tolist() == \
        [7, 0, 6, 5, 4, 2, 3, 1]
    one = throughput_bound(topo, "random_permutation", permutation_seed=1)
    assert (one.throughput, one.bottleneck, one.sending_nodes) == (0.5, (0, 1), 8)
    two = throughput_bound(topo, "random_permutation", permutation_seed=2)
    assert two.throughput == pytest.approx(7 / 8, rel=1e-12)
    assert (two.bottleneck, two.sending_nodes) == ((0, 0), 7)


@pytest.mark.parametrize("spec, most", [
    # the most routes a link can carry under any permutation (MODEL.md): k - 1 on a k x k mesh, (k - 1)/2 on
    # a k x k torus with the tie drawn, 2^floor((m-1)/2) on Q_m
    ({"kind": "mesh", "dims": [8, 8]}, 7), ({"kind": "torus", "dims": [8, 8]}, 3.5),
    ({"kind": "hypercube", "dimension": 6}, 4),
])
def test_random_permutation_bounds_lie_between_the_worst_and_the_injection_channel(spec, most):
    topo = build_topology(spec)
    for seed in range(1, 9):
        bound = throughput_bound(topo, "random_permutation", permutation_seed=seed)
        share = bound.sending_nodes / topo.n_nodes
        assert share / most * (1 - 1e-12) <= bound.throughput <= share * (1 + 1e-12)


# --- the bounds in memory linear in the nodes ------------------------------------------------------------------------

LOAD_SPECS = [{"kind": "mesh", "dims": [4, 4]}, {"kind": "torus", "dims": [5, 3]}, {"kind": "mesh", "dims": [3, 5, 2]},
              {"kind": "torus", "dims": [6, 4, 3]}, {"kind": "torus", "dims": [8, 8]},
              {"kind": "hypercube", "dimension": 4}, {"kind": "hex", "size": 4},
              {"kind": "mesh_hypercube", "levels": 3, "cube": 4}]


@pytest.mark.parametrize("spec", LOAD_SPECS, ids=lambda spec: "-".join(str(v) for v in spec.values()))
@pytest.mark.parametrize("torus_tie", ["random", "positive"])
def test_pattern_loads_are_the_walk_of_every_pair_of_the_destination_matrix(spec, torus_tie):
    """pattern_loads sums uniform traffic axis by axis (or walks it a block at a time), hotspot traffic as its
    uniform part plus the pairs to the hotspots: the same loads as walking every pair of P one by one."""
    topo = build_topology(spec)
    cases = [(pattern, {}) for pattern in PATTERNS] + [
        ("hotspot", {"hotspot_nodes": [1, 5]}), ("hotspot", {"hotspot_nodes": [3], "hotspot_fraction": 0.5})]
    compared = 0
    for pattern, args in cases:
        try:
            P = destination_matrix(topo, pattern, **args)
        except ValueError:  # a pattern the network cannot take is refused by both
            with pytest.raises(ValueError):
                pattern_loads(topo, pattern, torus_tie, **args)
            continue
        links, ejection, sending = pattern_loads(topo, pattern, torus_tie, **args)
        np.testing.assert_allclose(links, channel_loads(topo, P, torus_tie=torus_tie), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ejection, P.sum(axis=0), rtol=1e-12)
        assert np.array_equal(sending, P.sum(axis=1) > 0)
        compared += 1
    assert compared >= 4


def test_a_128x128_bound_holds_no_node_by_node_matrix():
    """One N x N matrix of floats on 128 x 128 nodes is 2.1 GB; the bounds take a few MB. Uniform's is 8/k on a k x k
    torus (each of the 4 links of a node carries k/8 of a node's traffic, MODEL.md), times N/(N-1) as the basis
    counts every node."""
    import tracemalloc
    topo = grid("torus", 128)
    tracemalloc.start()
    try:
        bounds = {pattern: throughput_bound(topo, pattern) for pattern in ("uniform", "hotspot", "tornado")}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, peak
    n = 128 * 128
    assert bounds["uniform"].throughput == pytest.approx(8 / 128 * (n - 1) / n, rel=1e-12)


def test_channel_shares_name_the_senders_through_a_channel():
    """By hand: on the 8x8 mesh (node = 8y + x), bit reversal sends (x, 0) to (0, r(x)), so x-first routing takes
    all seven senders of row 0 west to (0, 0) and out of it north; nobody else uses that port. Tornado on an 8-ring
    sends x to x + 3 the + way, so the link out of node 0 the + way carries the senders 6, 7 and 0."""
    mesh = build_topology({"kind": "mesh", "dims": [8, 8]})
    north = int(mesh.axis_positive[1])
    shares = channel_shares(mesh, "bit_reverse", (0, north))
    assert shares.tolist() == [0.0] + [1.0] * 7 + [0.0] * 56
    assert throughput_bound(mesh, "bit_reverse").max_channel_load == pytest.approx(7 * 64 / 56)
    ring = build_topology({"kind": "torus", "dims": [8]})
    east = int(ring.axis_positive[0])
    assert np.flatnonzero(channel_shares(ring, "tornado", (0, east))).tolist() == [0, 6, 7]
    with pytest.raises(ValueError, match="permutation"):
        channel_shares(mesh, "uniform", (0, north))
