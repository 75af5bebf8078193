"""The EDN and NP-D broadcasts that paper 002 compares PCP with (reconstructions, see their modules), held
against the paper's step counts (EDN k + 1, NP-D k + 2 on the 2^k x 2^k mesh) and hand-derived layouts."""

from collections import Counter

import networkx as nx
import pytest

from harts.network.build import build_topology
from harts.np import dominating_nodes, network_partitioning
from harts.np.send_plan import expected_copies, send_steps


def square_mesh(k):
    return build_topology({"kind": "mesh", "dims": [2 ** k, 2 ** k]})


def route_links(topology, send):
    """The directed links (node, port) a send's route takes, in order."""
    node, links = send.sender, []
    for port, hops, _ in send.segments:
        for _ in range(hops):
            links.append((node, port))
            node = int(topology.neighbours[node, port])
    return links


def copies_per_holder(plan):
    return Counter((copy.node, plan.sends[copy.send].piece) for copy in expected_copies(plan))


def assert_every_piece_reaches_every_other_node_once(plan):
    everyone_else = {(node, piece) for node in range(plan.topology.n_nodes) for piece in range(plan.pieces)
                     if node != plan.source}
    copies = copies_per_holder(plan)
    assert set(copies) == everyone_else
    assert set(copies.values()) == {1}


def targets_by_step(plan, side):
    by_step = {}
    for send, step in zip(plan.sends, send_steps(plan)):
        by_step.setdefault(step, set()).add((send.destination % side, send.destination // side))
    return by_step


def test_edn_on_4x4_from_the_corner_is_the_perfect_dominating_set():
    plan = dominating_nodes.plan(square_mesh(2), 0)
    everyone = {(x, y) for x in range(4) for y in range(4)}
    dominating = {(1, 0), (0, 2), (2, 3), (3, 1)}
    assert targets_by_step(plan, 4) == {1: {(1, 0)}, 2: dominating - {(1, 0)}, 3: everyone - dominating - {(0, 0)}}


def test_edn_on_8x8_from_the_corner_goes_through_the_centre_then_the_quadrants():
    by_step = targets_by_step(dominating_nodes.plan(square_mesh(3), 0), 8)
    assert by_step[1] == {(3, 3)}
    assert by_step[2] == {(1, 0), (5, 0), (1, 4), (5, 4)}


@pytest.mark.parametrize("k", range(2, 7))
def test_edn_from_the_corner_takes_k_plus_1_steps_and_reaches_every_node_once(k):
    plan = dominating_nodes.plan(square_mesh(k), 0)
    assert max(send_steps(plan)) == k + 1
    assert_every_piece_reaches_every_other_node_once(plan)


@pytest.mark.parametrize("k", range(2, 7))
def test_edn_from_the_corner_uses_no_link_twice_in_a_step(k):
    plan = dominating_nodes.plan(square_mesh(k), 0)
    uses = Counter((step, link) for send, step in zip(plan.sends, send_steps(plan))
                   for link in route_links(plan.topology, send))
    assert max(uses.values()) == 1


def test_edn_quadrant_routes_of_each_level_are_link_disjoint_on_32x32():
    """Each dominating node p(s) = (s/2 - 1, s/2 - 1) of an s-block leaves by all four ports, and no two
    routes of one level share a directed link."""
    plan = dominating_nodes.plan(square_mesh(5), 0)
    for s in (32, 16, 8):
        level = [send for send in plan.sends
                 if (send.sender % 32 % s, send.sender // 32 % s) == (s // 2 - 1, s // 2 - 1)]
        assert len(level) == 4 * (32 // s) ** 2
        first_ports = {}
        for send in level:
            first_ports.setdefault(send.sender, set()).add(send.segments[0][0])
        assert all(ports == {0, 1, 2, 3} for ports in first_ports.values())
        links = [link for send in level for link in route_links(plan.topology, send)]
        assert len(links) == len(set(links))


@pytest.mark.parametrize("k", [2, 3])
def test_edn_from_every_source_reaches_every_node_once(k):
    # measured: at most k + 1 steps from every source (k from the mesh's own dominating node); sources other
    # than the corner can share a link within a step (2 of 64 on 8x8, 13 of 256 on 16x16)
    topology = square_mesh(k)
    for source in range(topology.n_nodes):
        plan = dominating_nodes.plan(topology, source)
        assert max(send_steps(plan)) <= k + 2
        assert_every_piece_reaches_every_other_node_once(plan)


def test_edn_channel_dependencies_from_the_corner_on_16x16_have_no_cycle():
    plan = dominating_nodes.plan(square_mesh(4), 0)
    dependencies = nx.DiGraph()
    for send in plan.sends:
        links = route_links(plan.topology, send)
        dependencies.add_nodes_from(links)
        dependencies.add_edges_from(zip(links, links[1:]))
    assert nx.is_directed_acyclic_graph(dependencies)


def test_npd_on_8x8_sends_each_piece_to_its_sub_mesh_leader_first():
    # p(4) = (1, 0) of each 4 x 4 sub-mesh G_ab is mesh node (2 + a, b)
    plan = network_partitioning.plan(square_mesh(3), 0)
    first = {(send.piece, send.destination % 8, send.destination // 8)
             for send, step in zip(plan.sends, send_steps(plan)) if step == 1}
    assert first == {(0, 2, 0), (1, 3, 0), (2, 2, 1), (3, 3, 1)}


@pytest.mark.parametrize("k", range(3, 7))
def test_npd_from_the_corner_takes_k_plus_2_steps_and_delivers_every_piece_once(k):
    plan = network_partitioning.plan(square_mesh(k), 0)
    assert plan.pieces == 4
    assert max(send_steps(plan)) == k + 2
    assert_every_piece_reaches_every_other_node_once(plan)


def test_npd_from_every_source_of_8x8_delivers_every_piece_once():
    topology = square_mesh(3)
    for source in range(topology.n_nodes):
        plan = network_partitioning.plan(topology, source)
        assert max(send_steps(plan)) == 5
        assert_every_piece_reaches_every_other_node_once(plan)


@pytest.mark.parametrize("module, spec", [
    (dominating_nodes, {"kind": "mesh", "dims": [8, 4]}),
    (dominating_nodes, {"kind": "mesh", "dims": [6, 6]}),
    (dominating_nodes, {"kind": "mesh", "dims": [2, 2]}),
    (dominating_nodes, {"kind": "torus", "dims": [8, 8]}),
    (network_partitioning, {"kind": "mesh", "dims": [16, 8]}),
    (network_partitioning, {"kind": "mesh", "dims": [12, 12]}),
    (network_partitioning, {"kind": "mesh", "dims": [4, 4]}),
    (network_partitioning, {"kind": "torus", "dims": [8, 8]}),
])
def test_only_a_square_power_of_two_mesh_is_accepted(module, spec):
    with pytest.raises(ValueError, match="2\\^k x 2\\^k mesh"):
        module.plan(build_topology(spec), 0)
