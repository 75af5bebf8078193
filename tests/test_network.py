"""The topology builders, checked against networkx graphs built from each network's mathematical
definition (written out here, independently of harts.network) and from the built neighbour tables."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from harts.network import KINDS, Topology, build_topology, node_count
from harts.network.grid import mesh, torus
from harts.network.hexmesh import hex_mesh
from harts.network.hypercube import hypercube
from harts.network.mesh_hypercube import mesh_hypercube


def hex_spec(n):
    return {"kind": "hex", "size": n}


def grid_spec(kind, *dims):
    return {"kind": kind, "dims": list(dims)}


def cube_spec(m):
    return {"kind": "hypercube", "dimension": m}


def mh_spec(m, n):
    return {"kind": "mesh_hypercube", "levels": m, "cube": n}


SPECS = ([hex_spec(n) for n in range(3, 10)]
         + [grid_spec("mesh", *dims) for dims in ((5,), (2, 3), (3, 5), (4, 4), (5, 10), (8, 8), (3, 4, 5))]
         + [grid_spec("torus", *dims) for dims in ((6,), (7,), (3, 5), (4, 4), (5, 10), (8, 8), (3, 4, 5))]
         + [cube_spec(m) for m in range(1, 8)]
         + [mh_spec(m, n) for m, n in ((1, 2), (3, 8), (9, 8), (4, 16))])
# Too big for all pairs: routes are checked from a few sources only.
LARGE_SPECS = [hex_spec(15), grid_spec("torus", 16, 20), grid_spec("mesh", 6, 7, 8), cube_spec(10), mh_spec(16, 32)]


def spec_id(spec):
    return "-".join(str(v) for v in spec.values()).replace(" ", "").replace("[", "").replace("]", "")


@pytest.fixture(scope="module")
def topologies():
    """Each network is built once for the whole module."""
    return {spec_id(spec): build_topology(spec) for spec in SPECS + LARGE_SPECS}


# --- The definitions, written out from the papers -------------------------------------------------

def grid_node(dims, coords):
    """Node number of a grid point, axis 0 varying fastest."""
    return sum(c * math.prod(dims[:a]) for a, c in enumerate(coords))


def grid_points(dims):
    return [tuple(reversed(p)) for p in itertools.product(*(range(d) for d in reversed(dims)))]


def definition_ports(spec):
    """Expected neighbours[v, p] (-1 where no link) from the documented port numbering of each kind."""
    kind = spec["kind"]
    if kind == "hex":
        n = spec["size"]
        N = 3 * n * (n - 1) + 1
        # Paper 000: directions 0..5 move by +1, +(3n-1), +(3n-2), -1, -(3n-1), -(3n-2) mod N.
        moves = [1, 3 * n - 1, 3 * n - 2, -1, -(3 * n - 1), -(3 * n - 2)]
        return np.array([[(s + d) % N for d in moves] for s in range(N)])
    if kind in ("mesh", "torus"):
        dims = spec["dims"]
        table = {}
        for point in grid_points(dims):
            row = []
            for sign in (1, -1):
                for a, d in enumerate(dims):
                    moved = list(point)
                    moved[a] += sign
                    if kind == "torus":
                        moved[a] %= d
                    row.append(grid_node(dims, moved) if 0 <= moved[a] < d else -1)
            table[grid_node(dims, point)] = row
        return np.array([table[v] for v in range(len(table))])
    if kind == "hypercube":
        m = spec["dimension"]
        return np.array([[v ^ (1 << i) for i in range(m)] for v in range(2 ** m)])
    m, n = spec["levels"], spec["cube"]

    def number(level, x):
        return (level - 1) * n + x

    rows = []
    for level in range(1, m + 1):
        for x in range(n):
            rows.append([number(level + 1, x) if level < m else -1, number(level - 1, x) if level > 1 else -1]
                        + [number(level, x ^ (1 << i)) for i in range(n.bit_length() - 1)])
    return np.array(rows)


def definition_graph(spec):
    """The network as the papers define adjacency, tested on every pair of nodes."""
    kind = spec["kind"]
    g = nx.Graph()
    if kind == "hex":
        n = spec["size"]
        N = 3 * n * (n - 1) + 1
        steps = {1, 3 * n - 1, 3 * n - 2, N - 1, N - (3 * n - 1), N - (3 * n - 2)}
        g.add_nodes_from(range(N))
        g.add_edges_from((s, t) for s, t in itertools.combinations(range(N), 2) if (t - s) % N in steps)
    elif kind in ("mesh", "torus"):
        dims = spec["dims"]

        def linked(p, q):
            diff = [a for a in range(len(dims)) if p[a] != q[a]]
            if len(diff) != 1:
                return False
            gap = abs(p[diff[0]] - q[diff[0]])
            return gap == 1 or (kind == "torus" and gap == dims[diff[0]] - 1)

        points = grid_points(dims)
        g.add_nodes_from(grid_node(dims, p) for p in points)
        g.add_edges_from((grid_node(dims, p), grid_node(dims, q))
                         for p, q in itertools.combinations(points, 2) if linked(p, q))
    elif kind == "hypercube":
        N = 2 ** spec["dimension"]
        g.add_nodes_from(range(N))
        g.add_edges_from((u, v) for u, v in itertools.combinations(range(N), 2) if (u ^ v).bit_count() == 1)
    else:
        # Paper 003: (L1, X) - (L2, Y) iff X = Y and |L1 - L2| = 1, or L1 = L2 and X, Y differ in one bit.
        m, n = spec["levels"], spec["cube"]
        nodes = [(level, x) for level in range(1, m + 1) for x in range(n)]
        g.add_nodes_from((level - 1) * n + x for level, x in nodes)
        g.add_edges_from(((a[0] - 1) * n + a[1], (b[0] - 1) * n + b[1])
                         for a, b in itertools.combinations(nodes, 2)
                         if (a[1] == b[1] and abs(a[0] - b[0]) == 1)
                         or (a[0] == b[0] and (a[1] ^ b[1]).bit_count() == 1))
    return g


def expected_diameter(spec):
    kind = spec["kind"]
    if kind == "hex":
        return spec["size"] - 1
    if kind == "mesh":
        return sum(d - 1 for d in spec["dims"])
    if kind == "torus":
        return sum(d // 2 for d in spec["dims"])
    if kind == "hypercube":
        return spec["dimension"]
    return spec["levels"] - 1 + spec["cube"].bit_length() - 1


def expected_offsets(spec, sources, destinations):
    """The documented offset convention of each kind, from coordinates (hex is checked by brute force)."""
    kind = spec["kind"]
    if kind in ("mesh", "torus"):
        dims = spec["dims"]
        at = {grid_node(dims, p): p for p in grid_points(dims)}
        if kind == "mesh":
            return [[b - a for a, b in zip(at[s], at[d])] for s, d in zip(sources, destinations)]
        # The shorter way round; exactly half-way round an even ring goes the positive way.
        return [[(b - a) % n if (b - a) % n <= n // 2 else (b - a) % n - n for a, b, n in zip(at[s], at[d], dims)]
                for s, d in zip(sources, destinations)]

    def bits(s, d, count):
        return [0 if (s ^ d) >> i & 1 == 0 else (1 if d >> i & 1 else -1) for i in range(count)]

    if kind == "hypercube":
        return [bits(s, d, spec["dimension"]) for s, d in zip(sources, destinations)]
    n = spec["cube"]
    return [[d // n - s // n] + bits(s % n, d % n, n.bit_length() - 1) for s, d in zip(sources, destinations)]


def table_graph(topo):
    g = nx.Graph()
    g.add_nodes_from(range(topo.n_nodes))
    g.add_edges_from((v, int(u)) for v, row in enumerate(topo.neighbours) for u in row if u >= 0)
    return g


def follow(topo, src, offsets):
    """Where the offsets lead, axis by axis and hop by hop through the neighbour table."""
    node = np.array(src, dtype=np.int64)
    for a in range(offsets.shape[1]):
        t = offsets[:, a]
        port = np.where(t > 0, topo.axis_positive[a], topo.axis_negative[a])
        for hop in range(int(np.abs(t).max(initial=0))):
            moving = np.abs(t) > hop
            node[moving] = topo.neighbours[node[moving], port[moving]]
            assert (node >= 0).all(), "a route crosses a missing link"
    return node


def all_pairs(topo):
    N = topo.n_nodes
    return np.repeat(np.arange(N), N), np.tile(np.arange(N), N)


# --- Structure ------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", SPECS + LARGE_SPECS, ids=spec_id)
def test_arrays_and_conventions(spec, topologies):
    topo = topologies[spec_id(spec)]
    assert isinstance(topo, Topology) and topo.kind == spec["kind"]
    N, P, A = topo.n_nodes, topo.n_ports, topo.n_axes
    assert N == node_count(spec)
    for array, shape in ((topo.neighbours, (N, P)), (topo.in_port, (N, P)), (topo.opposite, (P,)),
                         (topo.axis_positive, (A,)), (topo.axis_negative, (A,)), (topo.offset_table, None),
                         (topo.shape, None)):
        assert array.dtype == np.int64 and array.flags.c_contiguous
        assert shape is None or array.shape == shape
    assert topo.offset_table.ndim == 2 and topo.offset_table.shape[1] == A
    assert len(topo.port_names) == P == len(set(topo.port_names))
    v, p = np.nonzero(topo.neighbours >= 0)
    u = topo.neighbours[v, p]
    # Every link is undone through the opposite port, and arrives on the receiver of its direction.
    assert (topo.neighbours[u, topo.opposite[p]] == v).all()
    assert (topo.opposite[topo.opposite] == np.arange(P)).all()
    assert (topo.in_port == np.where(topo.neighbours >= 0, np.arange(P), -1)).all()
    assert (topo.neighbours >= -1).all() and (topo.neighbours < N).all() and (u != v).all()
    assert len(topo.links()) == len(v) and (topo.links() == np.column_stack((v, p, u))).all()


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_ports_match_the_definition(spec, topologies):
    """Port by port, including -1 exactly where the definition has no link."""
    topo = topologies[spec_id(spec)]
    assert topo.neighbours.tolist() == definition_ports(spec).tolist()


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_graph_matches_the_definition(spec, topologies):
    topo = topologies[spec_id(spec)]
    built, defined = table_graph(topo), definition_graph(spec)
    assert set(built.nodes) == set(defined.nodes) == set(range(topo.n_nodes))
    assert {frozenset(e) for e in built.edges} == {frozenset(e) for e in defined.edges}
    degrees = (topo.neighbours >= 0).sum(axis=1)
    assert degrees.tolist() == [defined.degree[v] for v in range(topo.n_nodes)]
    # Without duplicate links, each node's existing ports lead to distinct nodes.
    assert all(len(set(row[row >= 0])) == len(row[row >= 0]) for row in topo.neighbours)


def test_hex_e3_neighbour_table():
    """E-3 (N = 19, steps 1, 8, 7) written out from the paper's definition."""
    assert hex_mesh(3).neighbours.tolist() == [
        [1, 8, 7, 18, 11, 12], [2, 9, 8, 0, 12, 13], [3, 10, 9, 1, 13, 14], [4, 11, 10, 2, 14, 15],
        [5, 12, 11, 3, 15, 16], [6, 13, 12, 4, 16, 17], [7, 14, 13, 5, 17, 18], [8, 15, 14, 6, 18, 0],
        [9, 16, 15, 7, 0, 1], [10, 17, 16, 8, 1, 2], [11, 18, 17, 9, 2, 3], [12, 0, 18, 10, 3, 4],
        [13, 1, 0, 11, 4, 5], [14, 2, 1, 12, 5, 6], [15, 3, 2, 13, 6, 7], [16, 4, 3, 14, 7, 8],
        [17, 5, 4, 15, 8, 9], [18, 6, 5, 16, 9, 10], [0, 7, 6, 17, 10, 11]]
    topo = hex_mesh(3)
    assert topo.route_offsets([0, 0, 0, 0], [8, 9, 10, 5]).tolist() == [[0, 1, 0], [1, 1, 0], [-1, -1, 0],
                                                                        [0, 0, -2]]


# --- Routes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_offsets_are_shortest_routes_for_all_pairs(spec, topologies):
    topo = topologies[spec_id(spec)]
    src, dst = all_pairs(topo)
    offsets = topo.route_offsets(src, dst)
    assert offsets.shape == (len(src), topo.n_axes) and offsets.dtype == np.int64
    assert (follow(topo, src, offsets) == dst).all()
    bfs = dict(nx.all_pairs_shortest_path_length(table_graph(topo)))
    hops = topo.distance(src, dst)
    assert (hops == np.abs(offsets).sum(axis=1)).all()
    assert hops.tolist() == [bfs[s][d] for s, d in zip(src.tolist(), dst.tolist())]
    assert int(hops.max()) == nx.diameter(definition_graph(spec)) == expected_diameter(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if node_count(s) > 1], ids=spec_id)
def test_mean_distance_is_the_mean_over_all_pairs_of_distinct_nodes(spec, topologies):
    topo = topologies[spec_id(spec)]
    expected = nx.average_shortest_path_length(definition_graph(spec))
    assert topo.mean_distance() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("spec", LARGE_SPECS, ids=spec_id)
def test_offsets_are_shortest_routes_from_a_few_sources(spec, topologies):
    topo = topologies[spec_id(spec)]
    g = table_graph(topo)
    N = topo.n_nodes
    for source in (0, N // 3, N - 1):
        src, dst = np.full(N, source), np.arange(N)
        offsets = topo.route_offsets(src, dst)
        assert (follow(topo, src, offsets) == dst).all()
        bfs = nx.single_source_shortest_path_length(g, source)
        assert topo.distance(src, dst).tolist() == [bfs[d] for d in range(N)]
        assert int(topo.distance(src, dst).max()) <= expected_diameter(spec)
    assert nx.eccentricity(g, 0) == expected_diameter(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s["kind"] != "hex"], ids=spec_id)
def test_offsets_follow_the_documented_convention(spec, topologies):
    topo = topologies[spec_id(spec)]
    src, dst = all_pairs(topo)
    assert topo.route_offsets(src, dst).tolist() == expected_offsets(spec, src.tolist(), dst.tolist())


@pytest.mark.parametrize("n", range(3, 10))
def test_hex_offsets_are_the_unique_minimal_triples(n, topologies):
    """Brute force over every triple of per-axis hop counts up to the diameter: each node difference has
    exactly one cheapest triple, and it is the one the mesh routes by."""
    N = 3 * n * (n - 1) + 1
    span = range(-(n - 1), n)
    triples = np.array(list(itertools.product(span, span, span)))
    lands_on = triples @ np.array([1, 3 * n - 1, 3 * n - 2]) % N
    cost = np.abs(triples).sum(axis=1)
    cheapest = np.full(N, cost.max() + 1)
    np.minimum.at(cheapest, lands_on, cost)
    minimal = cost == cheapest[lands_on]
    assert (np.bincount(lands_on[minimal], minlength=N) == 1).all()
    by_difference = np.empty((N, 3), dtype=np.int64)
    by_difference[lands_on[minimal]] = triples[minimal]
    topo = topologies[spec_id(hex_spec(n))]
    src, dst = all_pairs(topo)
    assert (topo.route_offsets(src, dst) == by_difference[(dst - src) % N]).all()


# --- The rest of the interface --------------------------------------------------------------------

def test_node_numbers_are_checked():
    topo = build_topology(grid_spec("torus", 4, 4))
    with pytest.raises(ValueError, match="source"):
        topo.route_offsets([16], [0])
    with pytest.raises(ValueError, match="destination"):
        topo.distance(0, -1)
    with pytest.raises(ValueError, match="node"):
        topo.coordinates(16)


def test_distance_of_plain_ints_is_an_int():
    topo = build_topology(hex_spec(5))
    assert type(topo.distance(0, 7)) is int and topo.distance(0, 0) == 0
    assert isinstance(topo.distance([0, 1], [7, 1]), np.ndarray)
    assert topo.route_offsets([], []).shape == (0, 3)


def test_walk():
    topo = build_topology(hex_spec(4))
    N = topo.n_nodes
    # Algorithm A of paper 000: N-1 hops along one direction visit every node and end next to the start.
    assert topo.walk(0, 0, N - 1) == N - 1
    assert topo.walk([0, 5, 9], [1, 4, 2], [2, 0, 1]).tolist() == [2 * (3 * 4 - 1), 5, 9 + 3 * 4 - 2]
    grid = build_topology(grid_spec("mesh", 4, 3))
    assert grid.walk([0, 1], 0, [3, 2]).tolist() == [3, 3]
    with pytest.raises(ValueError, match="without a link"):
        grid.walk(0, 0, 4)


@pytest.mark.parametrize("spec, node, label", [
    (hex_spec(5), 7, "7"),
    (grid_spec("mesh", 4, 6), 5, "(1,1)"),
    (grid_spec("torus", 3, 4, 5), 59, "(2,3,4)"),
    (cube_spec(4), 5, "0101"),
    (mh_spec(3, 8), 13, "(2,101)"),
], ids=["hex", "mesh", "torus-3d", "hypercube", "mh"])
def test_coordinates(spec, node, label):
    assert build_topology(spec).coordinates(node) == label


@pytest.mark.parametrize("spec", SPECS, ids=spec_id)
def test_positions_are_distinct_points(spec, topologies):
    topo = topologies[spec_id(spec)]
    xy = topo.positions()
    assert xy.shape == (topo.n_nodes, 2) and xy.dtype == float
    assert len({tuple(p) for p in np.round(xy, 6).tolist()}) == topo.n_nodes


def test_positions_by_kind():
    hexagon = build_topology(hex_spec(4))
    xy = hexagon.positions()
    # Node 0 in the middle, its six neighbours around it at unit distance.
    assert np.allclose(xy[0], 0) and np.allclose(np.linalg.norm(xy[hexagon.neighbours[0]], axis=1), 1)
    assert build_topology(grid_spec("mesh", 4, 6)).positions()[5].tolist() == [1, 1]
    assert build_topology(mh_spec(3, 8)).positions()[13].tolist() == [5, 2]
    # Horizontally or vertically adjacent hypercube positions are linked.
    cube = build_topology(cube_spec(5))
    g = table_graph(cube)
    at = {tuple(p): v for v, p in enumerate(cube.positions().astype(int).tolist())}
    for (x, y), v in at.items():
        for right in ((x + 1, y), (x, y + 1)):
            if right in at:
                assert g.has_edge(v, at[right])


@pytest.mark.parametrize("spec, count", [
    (hex_spec(5), 6 * (2 * 5 - 1)),  # rim nodes have two ports leaving the hexagon, its corners three
    (grid_spec("torus", 5, 4), 2 * 4 + 2 * 5),  # two per ring
    (grid_spec("torus", 3, 4, 5), 2 * (4 * 5 + 3 * 5 + 3 * 4)),
    (grid_spec("mesh", 4, 6), 0), (cube_spec(4), 0), (mh_spec(3, 8), 0),
], ids=["hex", "torus", "torus-3d", "mesh", "hypercube", "mh"])
def test_wrap_links(spec, count):
    topo = build_topology(spec)
    wraps = topo.wrap_links()
    assert wraps.shape == topo.neighbours.shape and wraps.dtype == bool and int(wraps.sum()) == count
    assert not wraps[topo.neighbours < 0].any()
    if spec["kind"] == "hex" or spec.get("dims") == [5, 4]:
        # drawn in the plane, the links that wrap are exactly those not between neighbouring points
        node, port, far = topo.links().T
        xy = topo.positions()
        assert (~np.isclose(np.linalg.norm(xy[far] - xy[node], axis=1), 1)).tolist() == wraps[node, port].tolist()


@pytest.mark.parametrize("spec, name", [
    (hex_spec(5), "E-5"), (grid_spec("mesh", 4, 6), "mesh 4x6"), (grid_spec("torus", 8, 8), "torus 8x8"),
    (cube_spec(6), "Q6"), (mh_spec(9, 8), "MH(9,8)"),
])
def test_names(spec, name):
    assert build_topology(spec).name == name


# --- Specs ----------------------------------------------------------------------------------------

def test_node_count_does_not_build():
    assert node_count(hex_spec(10 ** 6)) == 3 * 10 ** 6 * (10 ** 6 - 1) + 1
    assert node_count(grid_spec("torus", 10 ** 5, 10 ** 5, 10 ** 5)) == 10 ** 15
    assert node_count(cube_spec(62)) == 2 ** 62
    assert node_count(mh_spec(10 ** 6, 2 ** 20)) == 10 ** 6 * 2 ** 20
    assert KINDS == ("hex", "mesh", "torus", "hypercube", "mesh_hypercube")


@pytest.mark.parametrize("function", [build_topology, node_count])
@pytest.mark.parametrize("spec, words", [
    ([("kind", "hex")], ["mapping"]),
    ({"size": 5}, ["'kind'", "hex, mesh, torus, hypercube, mesh_hypercube"]),
    ({"kind": "ring"}, ["unknown", "'ring'", "hex, mesh, torus, hypercube, mesh_hypercube"]),
    ({"kind": "hex"}, ["'size'", "missing"]),
    ({"kind": "mesh_hypercube", "levels": 3}, ["'cube'", "missing"]),
    ({"kind": "hex", "size": 5, "dims": [3]}, ["'size'", "'dims'"]),
    ({"kind": "hex", "size": True}, ["'size'", "integer"]),
    ({"kind": "hex", "size": 5.0}, ["'size'", "integer"]),
    ({"kind": "hex", "size": 2}, ["'size'", ">= 3"]),
    ({"kind": "mesh", "dims": 4}, ["'dims'", "list"]),
    ({"kind": "mesh", "dims": []}, ["'dims'", "non-empty"]),
    ({"kind": "mesh", "dims": [4, 1]}, ["'dims' entry 1", ">= 2"]),
    ({"kind": "torus", "dims": [4, 2]}, ["'dims' entry 1", ">= 3"]),
    ({"kind": "torus", "dims": [4, "4"]}, ["'dims' entry 1", "integer"]),
    ({"kind": "hypercube", "dimension": 0}, ["'dimension'", "1..62"]),
    ({"kind": "hypercube", "dimension": 63}, ["'dimension'", "1..62"]),
    ({"kind": "mesh_hypercube", "levels": 0, "cube": 8}, ["'levels'", ">= 1"]),
    ({"kind": "mesh_hypercube", "levels": 3, "cube": 1}, ["'cube'", ">= 2"]),
    ({"kind": "mesh_hypercube", "levels": 3, "cube": 6}, ["'cube'", "power of two"]),
])
def test_bad_specs(function, spec, words):
    with pytest.raises(ValueError) as error:
        function(spec)
    message = str(error.value)
    assert all(word in message for word in words), message
    assert "\n" not in message


@pytest.mark.parametrize("build, args, words", [
    (hex_mesh, (2,), "hex mesh size"),
    (mesh, ([3, 1],), "mesh dims entry 1"),
    (torus, ((),), "torus dims"),
    (hypercube, (False,), "hypercube dimension"),
    (mesh_hypercube, (2, 12), "power of two"),
])
def test_builders_check_their_arguments(build, args, words):
    with pytest.raises(ValueError, match=words):
        build(*args)
