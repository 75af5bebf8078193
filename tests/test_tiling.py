"""The tiling broadcast of paper 004 (Peters & Syska, section 4) as a send plan, held against the offsets,
routes and times printed in the paper, and checked a second way with networkx."""

from collections import Counter
from dataclasses import replace
from functools import lru_cache
from itertools import combinations

import networkx as nx
import pytest

from harts.network.grid import mesh, torus
from harts.np import tiling
from harts.np.send_plan import (
    PASS,
    circuit_schedule,
    dimension_order_path,
    expected_copies,
    route_copies,
    send_steps,
    shared_links_by_step,
)

# (dims, variant) -> the paper's time as (alpha, delta, L tau) coefficients, copied from its text
PAPER_TIMES = {
    ((5, 5), None): (2, 4, 2),  # Fig. 1: 2 alpha + 4 delta + 2 L tau
    ((25, 25), None): (4, 24, 4),  # Theorem 2, k = 2: 2k alpha + (5^k - 1) delta + 2k L tau
    ((125, 125), None): (6, 124, 6),  # k = 3
    ((10, 10), "slanting"): (3, 10, 3),
    ((10, 10), "square_blocks"): (3, 11, 3),  # 2 alpha + 8 delta + 2 L tau, then alpha + 3 delta + L tau
    ((10, 10), "four_squares"): (3, 14, 3),
    ((10, 5), None): (3, 8, 3),
    ((5, 10), None): (3, 8, 3),
}
CASES = list(PAPER_TIMES)
# (alpha, delta, tau, L): each term of the time shows up on its own in at least one of them
PARAMETERS = [(4, 7, 1, 1), (4, 8, 1, 100), (100, 3, 2, 5), (1, 50, 1, 3)]

# Theorem 2's (u_j, v_j), first phase to last (j = 2k .. 1), worked out by hand from the proof
PRINTED_OFFSETS = {
    5: [(1, 2), (0, 1)],
    25: [(5, 10), (0, 5), (1, 2), (0, 1)],
    125: [(25, 50), (0, 25), (5, 10), (0, 5), (1, 2), (0, 1)],
}


def sources(dims):
    n = dims[0] * dims[1]
    return [0, n - 1] if n > 1000 else [0, 7, n // 2 + 3, n - 1]


@lru_cache(maxsize=None)
def make(dims, variant, source):
    topology = torus(list(dims))
    return tiling.plan(topology, source, variant)


@lru_cache(maxsize=None)
def routes(dims, variant, source):
    plan = make(dims, variant, source)
    return [route_copies(plan.topology, send)[-1][1] for send in plan.sends]


def cases_with_sources():
    return [(dims, variant, source) for dims, variant in CASES for source in sources(dims)]


def offset(dims, a, b):
    """b - a in torus coordinates (axis 0 first), each in 0 .. side - 1."""
    return tuple(((b // stride) - (a // stride)) % side for side, stride in zip(dims, (1, dims[0])))


def torus_offset(dims, dx, dy):
    return dx % dims[0], dy % dims[1]


@pytest.mark.parametrize("dims, variant, source", cases_with_sources())
def test_every_node_but_the_source_gets_exactly_one_copy(dims, variant, source):
    plan = make(dims, variant, source)
    copies = Counter(copy.node for copy in expected_copies(plan))
    assert copies == Counter(v for v in range(dims[0] * dims[1]) if v != source)
    assert all(code == PASS for send in plan.sends for _, _, code in send.segments)


@pytest.mark.parametrize("dims, variant, source", cases_with_sources())
def test_phases_are_arc_disjoint(dims, variant, source):
    phases = PAPER_TIMES[dims, variant][0]  # one alpha per phase
    shared = shared_links_by_step(make(dims, variant, source))
    assert shared == {step: 0 for step in range(1, phases + 1)}
    assert tiling.phases(torus(list(dims)), variant) == phases


@pytest.mark.parametrize("dims, variant, source", cases_with_sources())
@pytest.mark.parametrize("alpha, delta, tau, flits", PARAMETERS)
def test_completion_is_the_papers_time(dims, variant, source, alpha, delta, tau, flits):
    a, d, p = PAPER_TIMES[dims, variant]
    paper = a * alpha + d * delta + p * flits * tau
    completion = max(delivered for _, delivered in circuit_schedule(make(dims, variant, source),
                                                                      alpha, delta, tau, flits))
    assert completion == paper
    assert tiling.formula_cycles(torus(list(dims)), flits, alpha, delta, tau, variant) == paper


@pytest.mark.parametrize("dims, variant", CASES)
@pytest.mark.parametrize("alpha, delta, tau, flits", PARAMETERS)
def test_no_link_is_held_by_two_circuits_at_once(dims, variant, alpha, delta, tau, flits):
    """Nodes start their next phase on their own, so sends of different phases can be up together (four
    squares: the bosses (5, 0) and (0, 5) start while the route to (5, 5) is up); they must not meet."""
    times = circuit_schedule(make(dims, variant, 0), alpha, delta, tau, flits)
    holders: dict[tuple[int, int], list[int]] = {}
    for i, route in enumerate(routes(dims, variant, 0)):
        for link in zip(route, route[1:]):
            holders.setdefault(link, []).append(i)
    for link, sends in holders.items():
        for i, j in combinations(sends, 2):
            assert times[i][1] <= times[j][0] or times[j][1] <= times[i][0], (link, i, j)


@pytest.mark.parametrize("side", [5, 25, 125])
def test_each_phase_sends_the_printed_offsets_over_u_plus_v_hops(side):
    dims = (side, side)
    plan = make(dims, None, 0)
    steps = send_steps(plan)
    by_sender_and_step: dict[tuple[int, int], list[int]] = {}
    for i, (send, step) in enumerate(zip(plan.sends, steps)):
        by_sender_and_step.setdefault((send.sender, step), []).append(i)
    for (sender, step), sends in by_sender_and_step.items():
        u, v = PRINTED_OFFSETS[side][step - 1]
        expected = {torus_offset(dims, x, y) for x, y in [(u, v), (-u, -v), (v, -u), (-v, u)]}
        assert {offset(dims, sender, plan.sends[i].destination) for i in sends} == expected
        assert {len(routes(dims, None, 0)[i]) - 1 for i in sends} == {u + v}
        assert sorted(plan.sends[i].segments[0][0] for i in sends) == [0, 1, 2, 3]


def test_10x10_block_phases_follow_the_printed_routes():
    """The last phase of the 10 x 10 block variants: the boss (i, j) reaches each node of its block by the
    route the paper prints, as offsets (dx, dy) from the boss."""
    dims = (10, 10)
    printed = {
        "slanting": {(-1, 0): [], (0, 1): [], (1, 1): [(1, 0)]},
        "square_blocks": {(1, 0): [], (1, 1): [(0, 1)], (0, 1): [(-1, 0), (-1, 1)]},
    }
    for variant, block in printed.items():
        plan = make(dims, variant, 0)
        last = [i for i, step in enumerate(send_steps(plan)) if step == 3]
        seen = Counter()
        for i in last:
            sender = plan.sends[i].sender
            route = routes(dims, variant, 0)[i]
            through = [offset(dims, sender, node) for node in route[1:-1]]
            destination = offset(dims, sender, route[-1])
            expected = {torus_offset(dims, *d): [torus_offset(dims, *n) for n in via] for d, via in block.items()}
            assert expected[destination] == through
            seen[destination] += 1
        assert set(seen.values()) == {25}  # every one of the 25 bosses
        # the bosses are the nodes with both coordinates even (Fig. 5: the lower left of each block)
        assert {plan.sends[i].sender for i in last} == {x + 10 * y for x in range(0, 10, 2) for y in range(0, 10, 2)}


@pytest.mark.parametrize("dims, variant, lengths", [
    ((10, 10), "slanting", [{6}, {2}, {1, 2}]),
    ((10, 10), "square_blocks", [{6}, {2}, {1, 2, 3}]),
    ((10, 10), "four_squares", [{5, 10}, {3}, {1}]),
    ((10, 5), None, [{4, 5}, {1, 2}, {1}]),
    ((5, 10), None, [{4, 5}, {1, 2}, {1}]),
])
def test_route_lengths_of_each_phase(dims, variant, lengths):
    plan = make(dims, variant, 0)
    found: dict[int, set[int]] = {}
    for step, route in zip(send_steps(plan), routes(dims, variant, 0)):
        found.setdefault(step, set()).add(len(route) - 1)
    assert [found[step] for step in sorted(found)] == lengths


def test_default_10x10_variant_is_slanting():
    assert make((10, 10), None, 0).sends == make((10, 10), "slanting", 0).sends


@pytest.mark.parametrize("dims, variant", [((25, 25), None), ((10, 10), "four_squares"), ((5, 10), None)])
def test_another_source_is_the_origin_plan_moved(dims, variant):
    at_origin, moved = make(dims, variant, 0), make(dims, variant, 7)
    for a, b in zip(at_origin.sends, moved.sends):
        assert offset(dims, 0, a.sender) == offset(dims, 7, b.sender)
        assert offset(dims, a.sender, a.destination) == offset(dims, b.sender, b.destination)
        assert (a.trigger, a.parent, a.segments) == (b.trigger, b.parent, b.segments)


# ---------------------------------------------------------------------------------------- with networkx

def nx_node(dims, v):
    return v % dims[0], v // dims[0]


@pytest.mark.parametrize("dims, variant, source", cases_with_sources())
def test_sends_form_a_spanning_arborescence_over_torus_paths(dims, variant, source):
    plan = make(dims, variant, source)
    tree = nx.DiGraph((nx_node(dims, send.sender), nx_node(dims, send.destination)) for send in plan.sends)
    assert tree.number_of_nodes() == dims[0] * dims[1]
    assert nx.is_arborescence(tree)
    assert [node for node, degree in tree.in_degree() if degree == 0] == [nx_node(dims, source)]
    grid = nx.grid_2d_graph(*dims, periodic=True)
    for route in routes(dims, variant, source):
        path = [nx_node(dims, v) for v in route]
        assert nx.is_simple_path(grid, path)


def test_knight_routes_of_the_first_phase_are_node_and_arc_disjoint():
    """The source's four routes of 15 hops in the 25 x 25 torus: four arc-disjoint and four node-disjoint
    ways from the source to a sink joined to their ends, in the graph of their links alone."""
    dims = (25, 25)
    plan = make(dims, None, 0)
    first = [i for i, step in enumerate(send_steps(plan)) if step == 1]
    assert len(first) == 4
    graph = nx.DiGraph()
    for i in first:
        route = routes(dims, None, 0)[i]
        nx.add_path(graph, route)
        graph.add_edge(route[-1], "sink")
    nx.set_edge_attributes(graph, 1, "capacity")
    assert nx.maximum_flow_value(graph, 0, "sink") == 4
    assert nx.node_connectivity(graph, 0, "sink") == 4


def links_used_twice(plan, step):
    """Directed links that more than one send of `step` takes, counted on a networkx multigraph."""
    graph = nx.MultiDiGraph()
    for send_step, send in zip(send_steps(plan), plan.sends):
        if send_step == step:
            nx.add_path(graph, route_copies(plan.topology, send)[-1][1])
    return sum(graph.number_of_edges(a, b) > 1 for a, b in set(graph.edges()))


@pytest.mark.parametrize("dims", [(5, 5), (25, 25)])
def test_networkx_count_of_shared_links_agrees(dims):
    plan = make(dims, None, 0)
    x_first = replace(plan, sends=tuple(replace(send, segments=()) for send in plan.sends))
    for step in range(1, tiling.phases(plan.topology) + 1):
        assert links_used_twice(plan, step) == shared_links_by_step(plan)[step] == 0
        assert links_used_twice(x_first, step) == shared_links_by_step(x_first)[step]


# ------------------------------------------------------------------------------------- the rotation rule

def test_x_first_knight_routes_would_share_a_port():
    """Routed x first, the knight's moves to (1, 2) and (2, -1) both leave the source by +x; the plan's
    quarter-turned routes leave by four different ports."""
    topology = torus([5, 5])
    knights = [(1, 2), (-1, -2), (2, -1), (-2, 1)]
    first_hops = Counter(tuple(dimension_order_path(topology, 0, x % 5 + 5 * (y % 5))[:2]) for x, y in knights)
    assert first_hops[(0, 1)] == 2  # node 1 is (1, 0)
    plan = make((5, 5), None, 0)
    x_first = replace(plan, sends=tuple(replace(send, segments=()) for send in plan.sends))
    assert shared_links_by_step(x_first)[1] > 0
    assert sorted(send.segments[0][0] for send in plan.sends[:4]) == [0, 1, 2, 3]


# ------------------------------------------------------------------------------------------- bad sizes

@pytest.mark.parametrize("topology, variant", [
    (torus([6, 6]), None), (torus([15, 15]), None), (torus([20, 20]), None), (torus([5, 25]), None),
    (torus([10, 20]), None), (torus([5, 5, 5]), None), (mesh([5, 5]), None),
    (torus([10, 10]), "diagonal"), (torus([5, 5]), "slanting"), (torus([10, 5]), "square_blocks"),
])
def test_other_sizes_and_variants_are_refused(topology, variant):
    sizes = "5\\^k x 5\\^k" if variant is None else "tiling"
    for call in (lambda: tiling.plan(topology, 0, variant), lambda: tiling.phases(topology, variant),
                 lambda: tiling.formula_cycles(topology, 1, 1, 1, 1, variant)):
        with pytest.raises(ValueError, match=sizes):
            call()
