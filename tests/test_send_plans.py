"""The send plans of paper 002 (PCP on coded paths, and its baseline Recursive Doubling) and paper 003 (the
mesh-hypercube broadcast), walked with `expected_copies` and held against the papers' claims and against
routes derived by hand."""

from collections import Counter

import networkx as nx
import pytest

from harts.network.build import build_topology
from harts.np import coded_path, mesh_hypercube, recursive_doubling
from harts.np.coded_path import coded_segments
from harts.np.send_plan import (
    ABSORB_AND_PASS,
    PASS,
    TRIGGER_START,
    expected_copies,
    send_steps,
    shared_links_by_step,
)


def mesh(nx_, ny):
    return build_topology({"kind": "mesh", "dims": [nx_, ny]})


def mh(m, n):
    return build_topology({"kind": "mesh_hypercube", "levels": m, "cube": n})


def assert_each_node_once(plan):
    """Every node but the source gets exactly one copy; the source gets none."""
    copies = Counter(copy.node for copy in expected_copies(plan))
    assert copies == Counter(v for v in range(plan.topology.n_nodes) if v != plan.source)


def routes(plan):
    """Each send's whole route: the path to its last copy (the route's end always takes one)."""
    longest = {}
    for copy in expected_copies(plan):
        if len(copy.path) > len(longest.get(copy.send, ())):
            longest[copy.send] = copy.path
    return [longest[i] for i in range(len(plan.sends))]


def links(route):
    return list(zip(route, route[1:]))


def shared_links(plan, step):
    """Directed links more than one send of `step` takes."""
    use = Counter(link for s, route in zip(send_steps(plan), routes(plan)) if s == step for link in links(route))
    return [link for link, count in use.items() if count > 1]


# ---------------------------------------------------------------------------------------------------- PCP

PCP_SIZES = [(2, 2), (2, 5), (4, 4), (5, 7), (8, 8), (10, 8)]  # 10x8: the size of the paper's Fig. 3


def allowed(nx_, ny, sx, sy):
    """A partition is refused when the source is on one of its sides but not at a corner."""
    corner = sx in (0, nx_ - 1) and sy in (0, ny - 1)
    return [p for p, on_side in (("horizontal", sy in (0, ny - 1)), ("vertical", sx in (0, nx_ - 1)))
            if corner or not on_side]


def pcp_cases(sizes):
    return [(size, source, partition) for size in sizes for source in range(size[0] * size[1])
            for partition in allowed(*size, source % size[0], source // size[0])]


@pytest.mark.parametrize("size", PCP_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_pcp_reaches_every_node_once_in_two_steps_by_link_disjoint_worms(size):
    nx_, ny = size
    topology = mesh(nx_, ny)
    for (_, _), source, partition in pcp_cases([size]):
        plan = coded_path.plan(topology, source, partition=partition)
        assert_each_node_once(plan)
        # Theorem 1: two steps; with only two rows (columns) across, the sides are the whole mesh
        across = ny if partition == "horizontal" else nx_
        assert max(send_steps(plan)) == (2 if across >= 3 else 1)
        first = [send for send in plan.sends if send.trigger == TRIGGER_START]
        assert len(first) == 2 and first[0].segments[0][0] != first[1].segments[0][0]
        assert shared_links(plan, 1) == [] and shared_links(plan, 2) == []
        assert set(shared_links_by_step(plan).values()) == {0}


@pytest.mark.parametrize("size", PCP_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_pcp_refuses_a_partition_whose_side_holds_the_source_off_its_corners(size):
    nx_, ny = size
    topology = mesh(nx_, ny)
    for source in range(nx_ * ny):
        for partition in {"horizontal", "vertical"} - set(allowed(nx_, ny, source % nx_, source // nx_)):
            with pytest.raises(ValueError, match=partition):
                coded_path.plan(topology, source, partition=partition)


@pytest.mark.parametrize("xy, chosen", [
    ((4, 1), "horizontal"),  # row 1 is 1 from its side, column 4 is 4 from its side
    ((1, 3), "vertical"),  # column 1 is 1 away, row 3 is 3 away
    ((3, 3), "horizontal"),  # 3 both ways: the tie goes to horizontal
    ((5, 0), "vertical"),  # on row 0 off the corners: horizontal is refused, so vertical
    ((0, 5), "horizontal"),  # on column 0 off the corners
])
def test_pcp_default_takes_the_allowed_partition_with_nearer_sides(xy, chosen):
    topology = mesh(10, 8)
    source = xy[0] + 10 * xy[1]
    assert coded_path.plan(topology, source).sends == coded_path.plan(topology, source, partition=chosen).sends


def test_pcp_worms_from_3_2_on_10x8_as_derived_by_hand():
    """Horizontal partitioning from (3, 2): worm 1 -x 3 hops, -y 2 hops to (0, 0), then +x along row 0;
    worm 2 +x 6 hops, +y 5 hops to (9, 7), then -x along row 7. The column worm from (3, 0) covers rows
    1..3 of the lower half and passes the source at (3, 2) without taking a copy."""
    plan = coded_path.plan(mesh(10, 8), 3 + 10 * 2, partition="horizontal")
    worm_1, worm_2 = plan.sends[:2]
    assert (worm_1.destination, worm_1.segments) == (9, ((2, 3, PASS), (3, 2, PASS), (0, 9, ABSORB_AND_PASS)))
    assert (worm_2.destination, worm_2.segments) == (70, ((0, 6, PASS), (1, 5, PASS), (2, 9, ABSORB_AND_PASS)))
    column_3 = next(send for send in plan.sends if send.sender == 3 and send.segments[0][0] == 1)
    assert (column_3.destination, column_3.segments) == (33, ((1, 2, ABSORB_AND_PASS), (1, 1, PASS)))
    # the upper half is rows 4..7: row 7's worms run -y 3 hops, to row 4
    column_0_down = next(send for send in plan.sends if send.sender == 70)
    assert (column_0_down.destination, column_0_down.segments) == (40, ((3, 3, ABSORB_AND_PASS),))


def test_pcp_on_an_odd_side_the_lower_half_takes_the_middle_row():
    """5x7, horizontal from (2, 3): the lower half is y < 7/2, rows 0..3, so row 0's worms run +y to row 3
    and row 6's run -y to row 4; column 2's lower worm passes the source (2, 3) and so ends at (2, 2)."""
    plan = coded_path.plan(mesh(5, 7), 2 + 5 * 3, partition="horizontal")
    worms = {send.sender: (send.destination, send.segments) for send in plan.sends[2:]}
    assert worms[0] == (0 + 5 * 3, ((1, 3, ABSORB_AND_PASS),))
    assert worms[30] == (0 + 5 * 4, ((3, 2, ABSORB_AND_PASS),))
    assert worms[2] == (2 + 5 * 2, ((1, 2, ABSORB_AND_PASS),))


def test_pcp_corner_source_sends_its_column_worm_after_its_worm_across():
    """From (0, 0), horizontal: worm 1 along row 0; worm 2 +y to (0, 7) and along row 7; the source's own
    column worm also leaves by +y, so it waits until worm 2 has left (step 2, not step 1)."""
    plan = coded_path.plan(mesh(10, 8), 0, partition="horizontal")
    assert plan.sends[0].segments == ((0, 9, ABSORB_AND_PASS),)
    assert plan.sends[1].segments == ((1, 7, PASS), (0, 9, ABSORB_AND_PASS))
    own = [(i, send) for i, send in enumerate(plan.sends) if send.sender == 0][2:]
    assert len(own) == 1 and own[0][1].parent == 1 and send_steps(plan)[own[0][0]] == 2


def test_coded_segments_merge_hops_and_code_by_the_node_that_leaves():
    topology = mesh(5, 5)
    # L-shaped: +x 2 hops passing, then +y 3 hops with (2, 1) and (2, 2) absorbing and (2, 3) the end
    absorb = {2 + 5 * 1, 2 + 5 * 2}
    assert coded_segments(topology, 0, [(0, 2), (1, 3)], absorb) == (17, ((0, 2, PASS), (1, 1, PASS),
                                                                         (1, 2, ABSORB_AND_PASS)))
    # the sender's hop takes the next hop's code
    assert coded_segments(topology, 0, [(0, 4)], {1, 2, 3}) == (4, ((0, 4, ABSORB_AND_PASS),))
    assert coded_segments(topology, 0, [(1, 1)], set()) == (5, ((1, 1, PASS),))


def dependency_graph(route_list):
    """The channel dependency graph: an edge from directed link a to b when a route takes b right after a."""
    graph = nx.DiGraph()
    for route in route_list:
        route_links = links(route)
        graph.add_nodes_from(route_links)
        graph.add_edges_from(zip(route_links, route_links[1:]))
    return graph


@pytest.mark.parametrize("size", [(4, 4), (5, 7), (8, 8)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_pcp_worms_of_one_broadcast_have_no_cyclic_channel_dependency(size):
    """Theorem 2, for the coded worms in their own VC class: the dependencies among one broadcast's worms
    are acyclic."""
    topology = mesh(*size)
    for _, source, partition in pcp_cases([size]):
        plan = coded_path.plan(topology, source, partition=partition)
        assert nx.is_directed_acyclic_graph(dependency_graph(routes(plan))), (source, partition)


def xy_route(nx_, a, b):
    """The dimension-order (x first) route from node a to node b of an nx_-wide mesh."""
    (ay, ax), (by, bx) = divmod(a, nx_), divmod(b, nx_)
    xs = range(ax, bx, 1 if bx > ax else -1)
    ys = range(ay, by, 1 if by > ay else -1)
    return [x + nx_ * ay for x in xs] + [bx + nx_ * y for y in ys] + [b]


def test_pcp_worms_and_xy_unicasts_in_one_vc_class_can_deadlock():
    """Why cpr.yaml gives coded worms their own VC class: on 4x4 with horizontal partitioning from (1, 1),
    worm 1 turns from -y to +x at (0, 0) and worm 2 from +y to -x at (3, 3), turns XY routing never
    takes. With XY unicasts' turns (+x to +y at (3, 0), -x to -y at (0, 3)) they close the perimeter
    cycle: +x along row 0, +y up column 3, -x along row 3, -y down column 0."""
    plan = coded_path.plan(mesh(4, 4), 1 + 4 * 1, partition="horizontal")
    unicasts = [xy_route(4, a, b) for a in range(16) for b in range(16) if a != b]
    assert nx.is_directed_acyclic_graph(dependency_graph(routes(plan)))
    assert nx.is_directed_acyclic_graph(dependency_graph(unicasts))
    both = dependency_graph(routes(plan) + unicasts)
    assert not nx.is_directed_acyclic_graph(both)
    perimeter = [0, 1, 2, 3, 7, 11, 15, 14, 13, 12, 8, 4, 0]
    cycle = links(perimeter)
    assert all(both.has_edge(a, b) for a, b in zip(cycle, cycle[1:] + cycle[:1]))


# ----------------------------------------------------------------------------------------------------- RD

def rd_cases():
    cases = [(k, source) for k in (1, 2, 3) for source in range(4 ** k)]
    return cases + [(k, source) for k in (4, 5) for source in (0, 4 ** k - 1, 4 ** k // 2 + 2 ** k // 2 - 3)]


@pytest.mark.parametrize("k, source", rd_cases())
def test_rd_takes_2k_one_port_steps_that_double_the_informed_nodes(k, source):
    side = 2 ** k
    plan = recursive_doubling.plan(mesh(side, side), source)
    assert_each_node_once(plan)
    steps = send_steps(plan)
    assert max(steps) == 2 * k
    # every informed node sends once per step: 2^(t-1) sends in step t, no node twice
    assert Counter(steps) == {t: 2 ** (t - 1) for t in range(1, 2 * k + 1)}
    assert len({(t, send.sender) for t, send in zip(steps, plan.sends)}) == len(plan.sends)
    # first along the source's row, halving the row: step t sends side / 2^t hops
    for t, send in zip(steps, plan.sends):
        axis_stride, hops = (1, side >> t) if t <= k else (side, side >> (t - k))
        assert send.segments == () and abs(send.destination - send.sender) == hops * axis_stride
        if t <= k:
            assert send.sender // side == send.destination // side == source // side


def test_rd_on_a_rectangle_takes_log2_n_steps():
    plan = recursive_doubling.plan(mesh(8, 2), 5)
    assert_each_node_once(plan)
    assert max(send_steps(plan)) == 4


# ----------------------------------------------------------------------------------------------------- MH

# Paper 003, "An illustrative example": MH(9,8) from (6,000), the senders of each step and their
# destinations as printed (the source's send to (6,011) in step 2 is in the paragraph "First").
PAPER_EXAMPLE = {
    1: {"(6,000)": ["(3,000)", "(8,000)", "(6,001)", "(6,010)", "(6,100)"]},
    2: {"(6,000)": ["(6,011)"],
        "(3,000)": ["(1,000)", "(4,000)", "(3,001)", "(3,010)", "(3,100)"],
        "(6,100)": ["(6,101)", "(6,110)"],
        "(8,000)": ["(7,000)", "(9,000)", "(8,001)", "(8,010)", "(8,100)"]},
    3: {"(1,000)": ["(2,000)", "(1,001)", "(1,010)", "(1,100)"],
        "(3,000)": ["(3,011)"],
        "(3,100)": ["(3,101)", "(3,110)"],
        "(4,000)": ["(5,000)", "(4,001)", "(4,010)", "(4,100)"],
        "(6,100)": ["(6,111)"],
        "(7,000)": ["(7,001)", "(7,010)", "(7,100)"],
        "(8,000)": ["(8,011)"],
        "(8,100)": ["(8,101)", "(8,110)"],
        "(9,000)": ["(9,001)", "(9,010)", "(9,100)"]},
    4: {"(1,000)": ["(1,011)"],
        "(1,100)": ["(1,101)", "(1,110)"],
        "(2,000)": ["(2,001)", "(2,010)", "(2,100)"],
        "(3,100)": ["(3,111)"],
        "(4,000)": ["(4,011)"],
        "(4,100)": ["(4,101)", "(4,110)"],
        "(5,000)": ["(5,001)", "(5,010)", "(5,100)"],
        "(7,000)": ["(7,011)"],
        "(7,100)": ["(7,101)", "(7,110)"],
        "(8,100)": ["(8,111)"],
        "(9,000)": ["(9,011)"],
        "(9,100)": ["(9,101)", "(9,110)"]},
    5: {"(1,100)": ["(1,111)"],
        "(2,000)": ["(2,011)"],
        "(2,100)": ["(2,101)", "(2,110)"],
        "(4,100)": ["(4,111)"],
        "(5,000)": ["(5,011)"],
        "(5,100)": ["(5,101)", "(5,110)"],
        "(7,100)": ["(7,111)"],
        "(9,100)": ["(9,111)"]},
    6: {"(2,100)": ["(2,111)"],
        "(5,100)": ["(5,111)"]},
}


def test_mh_reproduces_the_papers_mh_9_8_example_from_6_000():
    topology = mh(9, 8)
    node = {topology.coordinates(v): v for v in range(topology.n_nodes)}
    plan = mesh_hypercube.plan(topology, node["(6,000)"])
    assert plan.source == 40
    # the paper lists the destinations of one step in address order; they are sent at once, so compare sets
    got = {step: {topology.coordinates(sender): sorted(map(topology.coordinates, destinations))
                  for sender, destinations in senders}
           for step, senders in mesh_hypercube.senders_by_step(plan).items()}
    paper = {step: {sender: sorted(d) for sender, d in senders.items()} for step, senders in PAPER_EXAMPLE.items()}
    assert got == paper
    printed = [d for senders in PAPER_EXAMPLE.values() for destinations in senders.values() for d in destinations]
    assert len(printed) == 71 == len(set(printed)) and "(6,000)" not in printed
    assert_each_node_once(plan)


@pytest.mark.parametrize("n", [4, 8])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 9])
def test_mh_reaches_every_node_once_without_sharing_a_link_in_a_step(m, n):
    """Proposition 1 holds for n <= 8: no link carries two messages of one step."""
    topology = mh(m, n)
    for source in range(topology.n_nodes):
        plan = mesh_hypercube.plan(topology, source)
        assert_each_node_once(plan)
        assert set(shared_links_by_step(plan).values()) == {0}


@pytest.mark.parametrize("n", [16, 32])
@pytest.mark.parametrize("m", [1, 4])
def test_mh_with_more_subcubes_still_reaches_every_node_once_but_shares_links(m, n):
    """For n >= 16 the source's n/4 - 1 sends to other subcubes take dimension-order routes through the
    same first links (to S XOR 4 and to S XOR 12 both leave by bit 2), so Proposition 1 fails as printed."""
    topology = mh(m, n)
    for source in range(topology.n_nodes):
        plan = mesh_hypercube.plan(topology, source)
        assert_each_node_once(plan)
        assert max(shared_links_by_step(plan).values()) > 0


def test_shared_links_by_step_counts_links_as_derived_by_hand():
    """MH(1,16) from 0. Step 1: to 4, 8, 12 (route 0-4-12), 1, 2: link 0->4 is taken twice. Step 2:
    0 to 3 by 0-1-3, and 4, 8, 12 each to their XOR 1 and XOR 2: no link twice. Step 3: 4, 8, 12 each to
    their XOR 3: none."""
    plan = mesh_hypercube.plan(mh(1, 16), 0)
    assert shared_links_by_step(plan) == {1: 1, 2: 0, 3: 0}
    assert shared_links(plan, 1) == [(0, 4)]


# -------------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("algorithm, spec, options, message", [
    (coded_path, {"kind": "torus", "dims": [4, 4]}, {}, "2-D mesh"),
    (coded_path, {"kind": "mesh", "dims": [8]}, {}, "2-D mesh"),
    (coded_path, {"kind": "mesh", "dims": [4, 4, 4]}, {}, "2-D mesh"),
    (coded_path, {"kind": "mesh", "dims": [4, 4]}, {"partition": "diagonal"}, "diagonal"),
    (coded_path, {"kind": "mesh", "dims": [4, 4]}, {"pieces": 2}, "pieces"),
    (recursive_doubling, {"kind": "mesh", "dims": [6, 4]}, {}, "powers of two"),
    (recursive_doubling, {"kind": "mesh", "dims": [4, 3]}, {}, "powers of two"),
    (recursive_doubling, {"kind": "torus", "dims": [6, 4]}, {}, "powers of two"),
    (recursive_doubling, {"kind": "hypercube", "dimension": 4}, {}, "2-D mesh or torus"),
    (recursive_doubling, {"kind": "mesh", "dims": [4, 4]}, {"partition": "vertical"}, "no options"),
    (mesh_hypercube, {"kind": "mesh_hypercube", "levels": 3, "cube": 2}, {}, "at least 4"),
    (mesh_hypercube, {"kind": "mesh", "dims": [4, 4]}, {}, "mesh-hypercube"),
])
def test_unsupported_topologies_and_options_are_refused(algorithm, spec, options, message):
    with pytest.raises(ValueError, match=message):
        algorithm.plan(build_topology(spec), 0, **options)


@pytest.mark.parametrize("algorithm, spec", [
    (coded_path, {"kind": "mesh", "dims": [4, 4]}),
    (recursive_doubling, {"kind": "mesh", "dims": [4, 4]}),
    (mesh_hypercube, {"kind": "mesh_hypercube", "levels": 2, "cube": 4}),
])
def test_a_source_outside_the_network_is_refused(algorithm, spec):
    with pytest.raises(ValueError, match="source"):
        algorithm.plan(build_topology(spec), 16)
