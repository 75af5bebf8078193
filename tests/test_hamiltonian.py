"""The Hamiltonian decompositions of paper 001 (section III), checked on graphs networkx builds from the
definitions, not from harts' port tables."""

import networkx as nx
import numpy as np
import pytest

from harts.network import build_topology
from harts.network.hamiltonian import cycle_ports, directed_cycles, hamiltonian_cycles
from harts.reference.ihc import copy_links, copy_path, senders, smallest_node_cut


def hex_graph(n: int) -> nx.Graph:
    """Paper 000's definition: s is joined to s +- 1, s +- (3n-1), s +- (3n-2), mod 3n(n-1)+1."""
    size = 3 * n * (n - 1) + 1
    return nx.Graph((s, (s + step) % size) for s in range(size) for step in (1, 3 * n - 1, 3 * n - 2))


def torus_graph(m: int) -> nx.Graph:
    grid = nx.grid_2d_graph(m, m, periodic=True)  # nodes (x, y)
    return nx.relabel_nodes(grid, {(x, y): x + m * y for x, y in grid})


def hypercube_graph(m: int) -> nx.Graph:
    cube = nx.hypercube_graph(m)  # nodes are bit tuples, most significant first
    return nx.relabel_nodes(cube, {bits: int("".join(map(str, bits)), 2) for bits in cube})


CASES = ([("hex", {"kind": "hex", "size": n}, hex_graph(n)) for n in range(3, 9)]
         + [("torus", {"kind": "torus", "dims": [m, m]}, torus_graph(m)) for m in range(3, 13)]
         + [("hypercube", {"kind": "hypercube", "dimension": m}, hypercube_graph(m)) for m in (2, 4, 6, 8, 10, 12)])


@pytest.mark.parametrize("kind, spec, graph", CASES, ids=[f"{k}-{len(g)}" for k, _, g in CASES])
def test_the_cycles_are_hamiltonian_edge_disjoint_and_use_every_link(kind, spec, graph):
    topology = build_topology(spec)
    cycles = hamiltonian_cycles(topology)
    gamma = 2 * len(cycles)
    assert all(degree == gamma for _, degree in graph.degree())
    used = []
    for cycle in cycles:
        assert sorted(cycle.tolist()) == sorted(graph.nodes)
        edges = [frozenset((int(a), int(b))) for a, b in zip(cycle, np.roll(cycle, -1))]
        assert all(graph.has_edge(*e) for e in edges)
        used += edges
    assert len(used) == len(set(used)) == graph.number_of_edges()


@pytest.mark.parametrize("kind, spec, graph", CASES[::3] + CASES[-4:-3],
                         ids=[f"{k}-{len(g)}" for k, _, g in CASES[::3] + CASES[-4:-3]])
def test_the_directed_cycles_use_every_directed_link_once(kind, spec, graph):
    topology = build_topology(spec)
    links = []
    for cycle in directed_cycles(topology):
        ports = cycle_ports(topology, cycle)
        assert (topology.neighbours[cycle, ports] == np.roll(cycle, -1)).all()
        links += list(zip(cycle.tolist(), ports.tolist()))
    assert len(links) == len(set(links)) == 2 * graph.number_of_edges()


def test_a_network_without_a_decomposition_is_refused_in_one_sentence():
    for spec in ({"kind": "torus", "dims": [4, 6]}, {"kind": "hypercube", "dimension": 5},
                 {"kind": "mesh", "dims": [4, 4]}):
        with pytest.raises(ValueError, match="no Hamiltonian decomposition for"):
            hamiltonian_cycles(build_topology(spec))


# IHC's copies (paper 001): one along each directed HC. They are link-disjoint, but not node-disjoint.
SMALLEST = [{"kind": "hex", "size": 3}, {"kind": "torus", "dims": [4, 4]}, {"kind": "hypercube", "dimension": 4}]


@pytest.mark.parametrize("spec", SMALLEST, ids=lambda s: s["kind"])
def test_every_node_starts_once_per_directed_cycle_and_every_pair_gets_gamma_link_disjoint_copies(spec):
    topology = build_topology(spec)
    cycles = directed_cycles(topology)
    for cycle in cycles:
        for eta in (1, 2, 3):
            started = np.concatenate([senders(cycle, eta, stage) for stage in range(eta)])
            assert sorted(started.tolist()) == list(range(topology.n_nodes))
    for u in range(topology.n_nodes):
        for v in range(topology.n_nodes):
            if u != v:
                links = [link for cycle in cycles for link in copy_links(cycle, u, v)]
                assert len(links) == len(set(links))  # gamma - 1 dead links leave a copy


@pytest.mark.parametrize("spec, pair, cut", [
    ({"kind": "hex", "size": 3}, (0, 4), [1, 7]),
    ({"kind": "torus", "dims": [4, 4]}, (0, 2), [1, 3]),
    ({"kind": "hypercube", "dimension": 4}, (0, 3), [1, 2]),
], ids=["hex", "torus", "hypercube"])
def test_two_crashed_nodes_can_stop_every_copy_of_one_pair(spec, pair, cut):
    """Paper 001 says its algorithms send through gamma node-disjoint paths; IHC's copies along the
    gamma directed HCs are only link-disjoint, so two crashes (fewer than gamma - 1 = 3 or 5) can cut
    all of one pair's copies, and no single node can."""
    topology = build_topology(spec)
    paths = [copy_path(cycle, *pair) for cycle in directed_cycles(topology)]
    assert all(set(path) & set(cut) for path in paths)
    assert smallest_node_cut(paths) is not None and len(smallest_node_cut(paths)) == 2


@pytest.mark.parametrize("spec, cut_pairs, pairs", [
    ({"kind": "hex", "size": 3}, 228, 342),
    ({"kind": "torus", "dims": [4, 4]}, 176, 240),
    ({"kind": "hypercube", "dimension": 4}, 176, 240),
], ids=["hex", "torus", "hypercube"])
def test_fewer_than_gamma_crashes_cut_some_pairs_by_exhaustion(spec, cut_pairs, pairs):
    """EXPERIMENTS.md (IHC's copies are link-disjoint): the ordered pairs whose gamma copies fewer than gamma
    crashed nodes can all stop. A pair joined by a link has a copy with no inner node, which no crash stops."""
    topology = build_topology(spec)
    cycles = directed_cycles(topology)
    n = topology.n_nodes
    cuts = [smallest_node_cut([copy_path(cycle, u, v) for cycle in cycles])
            for u in range(n) for v in range(n) if u != v]
    assert len(cuts) == pairs
    assert sum(cut is not None and len(cut) < len(cycles) for cut in cuts) == cut_pairs


def test_a_switch_joins_cycles_and_keeps_or_cuts_one_by_the_order_of_its_links():
    """The bookkeeping `switch_to_cycles` relies on, against networkx's count of components."""
    from harts.network.hamiltonian import _cycle_change, _cycles

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(6, 14))
        order = rng.permutation(n)
        cut = int(rng.integers(0, n - 2)) if rng.random() < 0.5 else 0  # sometimes two cycles
        rings = [order[:cut + 3], order[cut + 3:]] if cut and n - cut - 3 >= 3 else [order]
        factor = np.zeros((n, 2), dtype=np.int64)
        for ring in rings:
            factor[ring, 0], factor[ring, 1] = np.roll(ring, 1), np.roll(ring, -1)
        p1 = int(rng.integers(n))
        p2 = int(factor[p1, rng.integers(2)])
        p3 = int(rng.choice([v for v in range(n) if v not in (p1, p2)]))
        p4 = int(factor[p3, rng.integers(2)])
        if p4 in (p1, p2):
            continue
        graph = nx.Graph((v, int(w)) for v in range(n) for w in factor[v])
        graph.remove_edges_from([(p1, p2), (p3, p4)])
        graph.add_edges_from([(p2, p3), (p4, p1)])
        assert _cycle_change(_cycles(factor), p1, p2, p3, p4) == (
            nx.number_connected_components(graph) - len(rings)), (rings, p1, p2, p3, p4)
