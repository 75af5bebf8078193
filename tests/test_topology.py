"""The hex mesh and its routing tags, checked against networkx on a graph built only from the neighbour table."""

import itertools

import networkx as nx
import numpy as np
import pytest

from harts.topology import hex_mesh

SIZES = range(3, 16)


def graph(topo):
    g = nx.Graph()
    g.add_nodes_from(range(topo.n_nodes))
    g.add_edges_from((v, int(w)) for v, row in enumerate(topo.neighbours) for w in row)
    return g


def end_node(topo, src, tags):
    """Where the tags lead when followed hop by hop through the neighbour table."""
    v = src
    for a, t in enumerate(tags):
        direction = topo.axis_positive[a] if t > 0 else topo.axis_negative[a]
        for _ in range(abs(int(t))):
            v = int(topo.neighbours[v, direction])
    return v


@pytest.mark.parametrize("n", SIZES)
def test_shape_and_neighbours(n):
    topo = hex_mesh(n)
    N = 3 * n * (n - 1) + 1
    assert topo.name == f"hexmesh-{n}" and topo.size == n
    assert (topo.n_nodes, topo.n_ports, topo.n_axes) == (N, 6, 3)
    assert topo.neighbours.shape == (N, 6) and topo.neighbours.dtype == np.int64
    assert topo.opposite.tolist() == [3, 4, 5, 0, 1, 2]
    assert topo.axis_positive.tolist() == [0, 1, 2] and topo.axis_negative.tolist() == [3, 4, 5]
    assert topo.neighbours.min() >= 0 and topo.neighbours.max() < N
    assert all(len(set(row)) == 6 for row in topo.neighbours.tolist())
    assert not (topo.neighbours == np.arange(N)[:, None]).any()
    v = np.arange(N)[:, None]
    assert (topo.neighbours[topo.neighbours, topo.opposite[None, :]] == v).all()
    assert (topo.neighbours[v, 1] == topo.neighbours[topo.neighbours[v, 0], 2]).all()


@pytest.mark.parametrize("n", SIZES)
def test_connected_with_diameter_n_minus_1(n):
    g = graph(hex_mesh(n))
    assert nx.is_connected(g)
    assert nx.diameter(g) == n - 1


@pytest.mark.parametrize("n", SIZES)
def test_tags_are_shortest_routes(n):
    topo = hex_mesh(n)
    g = graph(topo)
    for src in (0, topo.n_nodes // 2):
        bfs = nx.single_source_shortest_path_length(g, src)
        dst = np.arange(topo.n_nodes)
        many = topo.routing_tags_many(np.full(topo.n_nodes, src), dst)
        assert many.shape == (topo.n_nodes, 3) and many.dtype == np.int64
        for d in range(topo.n_nodes):
            tags = topo.routing_tags(src, d)
            assert tags.tolist() == many[d].tolist()
            assert end_node(topo, src, tags) == d
            assert np.count_nonzero(tags) <= 2
            assert np.abs(tags).sum() == bfs[d] == topo.distance(src, d)


@pytest.mark.parametrize("n", SIZES)
def test_minimal_tags_are_unique(n):
    """No ties exist, so no tie-breaking rule is needed: every offset has exactly one minimal triple."""
    topo = hex_mesh(n)
    N = topo.n_nodes
    axis_step = np.array([1, 3 * n - 1, 3 * n - 2])
    distance = np.abs(topo.routing_tags_many(np.zeros(N, dtype=np.int64), np.arange(N))).sum(axis=1)
    minimal = {}
    magnitudes = range(-(n - 1), n)
    for a, b in itertools.combinations(range(3), 2):
        for ta, tb in itertools.product(magnitudes, magnitudes):
            tags = np.zeros(3, dtype=np.int64)
            tags[a], tags[b] = ta, tb
            offset = int(tags @ axis_step) % N
            if abs(ta) + abs(tb) == distance[offset]:
                minimal.setdefault(offset, set()).add(tuple(tags.tolist()))
    assert sorted(minimal) == list(range(N))
    assert all(len(triples) == 1 for triples in minimal.values())


def test_many_agrees_with_single_on_random_pairs():
    topo = hex_mesh(9)
    rng = np.random.default_rng(1)
    src = rng.integers(0, topo.n_nodes, size=500)
    dst = rng.integers(0, topo.n_nodes, size=500)
    many = topo.routing_tags_many(src, dst)
    assert [topo.routing_tags(int(s), int(d)).tolist() for s, d in zip(src, dst)] == many.tolist()
    assert topo.routing_tags_many(src[:0], dst[:0]).shape == (0, 3)


def test_returned_tags_do_not_alias_the_shared_table():
    topo = hex_mesh(4)
    tags = topo.routing_tags(0, 5)
    before = tags.tolist()
    tags[:] = 99
    assert topo.routing_tags(0, 5).tolist() == before
    assert hex_mesh(4).routing_tags(0, 5).tolist() == before


def test_out_of_range_nodes_are_rejected():
    topo = hex_mesh(3)
    with pytest.raises(ValueError, match="source"):
        topo.routing_tags(-1, 0)
    with pytest.raises(ValueError, match="destination"):
        topo.routing_tags_many(np.array([0]), np.array([topo.n_nodes]))


@pytest.mark.parametrize("n", [2, 0, -4, 3.0, True])
def test_bad_mesh_size(n):
    with pytest.raises(ValueError, match="mesh size must be an integer >= 3"):
        hex_mesh(n)
