"""The broadcast algorithms: the reference model against the paper's claims, the engine against the
reference model copy for copy, and the zero-load latencies against Table I."""

from collections import Counter

import networkx as nx
import numpy as np
import pytest

from harts.broadcasts.kandlur_shin import run_broadcast
from harts.controller import records as R
from harts.reference.kandlur_shin import best_case_latency, broadcast_copies
from harts.tools.calibrate import calibrate

from .helpers import config

K_BCAST = {"2bcast": 2, "3bcast": 3, "4bcast": 4, "5bcast": 5, "6bcast": 6}
ALL = ["sbcast", *K_BCAST, "hamiltonian"]
SIZES = range(3, 16)


def paper_graph(n):
    """The C-wrapped hexagonal mesh straight from the paper's definition (section 1), for networkx."""
    N = 3 * n * (n - 1) + 1
    G = nx.Graph()
    for s in range(N):
        for step in (1, 3 * n - 1, 3 * n - 2):
            G.add_edge(s, (s + step) % N)
    return G


@pytest.fixture(scope="module")
def model():
    cal = calibrate(config(5))
    return cal.S, cal.r, cal.d


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("algorithm", list(K_BCAST))
def test_k_bcast_gives_k_node_disjoint_copies(algorithm, n):
    k = K_BCAST[algorithm]
    G = paper_graph(n)
    by_node = {}
    for copy in broadcast_copies(algorithm, n, source=0):
        by_node.setdefault(copy.node, []).append(copy.path)
    assert 0 not in by_node  # no copy returns to the source
    assert set(by_node) == set(G.nodes) - {0}
    for node, paths in by_node.items():
        assert len(paths) == k
        for path in paths:
            assert path[0] == 0 and path[-1] == node
            assert nx.is_simple_path(G, list(path))
        inner = [set(p[1:-1]) for p in paths]
        for i in range(k):
            for j in range(i + 1, k):
                assert not inner[i] & inner[j], (node, paths[i], paths[j])


@pytest.mark.parametrize("algorithm", ["sbcast", "hamiltonian"])
@pytest.mark.parametrize("n", SIZES)
def test_single_copy_broadcasts_reach_every_node_once(algorithm, n):
    G = paper_graph(n)
    copies = broadcast_copies(algorithm, n, source=0)
    assert sorted(c.node for c in copies) == sorted(set(G.nodes) - {0})
    assert all(nx.is_simple_path(G, list(c.path)) for c in copies)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("algorithm", ALL)
def test_engine_delivers_the_reference_copies_at_zero_load(algorithm, n, model):
    S, r, d = model
    source = 3 * n * (n - 1) // 2  # any node; the mesh is node-symmetric
    run = run_broadcast(config(n), algorithm, source=source, length=128)
    reference = broadcast_copies(algorithm, n, source=source)
    engine = Counter((c.node, c.path, c.transmissions, c.cut_throughs) for c in run.copies)
    assert engine == Counter((c.node, c.path, c.transmissions, c.cut_throughs) for c in reference)
    for c in run.copies:
        assert c.arrival == c.transmissions * (S + r * 128) + c.cut_throughs * d
        assert not c.marked
        assert c.contention == 0  # a zero-load broadcast is contention-free: every copy took its formula time
    assert run.summary()["first_contention"] is None


@pytest.mark.parametrize("n", [3, 6, 11])
def test_sfbcast_is_sbcast_tree_stored_at_every_hop(n, model):
    S, r, d = model
    run = run_broadcast(config(n), "sfbcast", length=64)
    reference = broadcast_copies("sbcast", n)
    assert Counter((c.node, c.path) for c in run.copies) == Counter((c.node, c.path) for c in reference)
    for c in run.copies:
        hops = len(c.path) - 1
        assert (c.transmissions, c.cut_throughs) == (hops, 0)
        assert c.arrival == hops * (S + r * 64)


def printed_table_one(algorithm, n, S, r, d, M):
    """Table I of the paper as printed, plus SFBCAST and Algorithm A from section 5's text."""
    t = S + r * M
    return {
        "sbcast": 2 * t + (n - 3) * d,
        "2bcast": 2 * t + 2 * (n - 2) * d,
        "3bcast": 2 * t + 2 * (n - 2) * d,
        "4bcast": 3 * t + (n - 3) * d,
        "5bcast": 3 * t + (2 * n - 5) * d,
        "6bcast": 3 * t + (2 * n - 5) * d,
        "sfbcast": (n - 1) * t,
        "hamiltonian": t + (3 * n * (n - 1) - 1) * d,
    }[algorithm]


@pytest.mark.parametrize("M", [64, 128, 512])
@pytest.mark.parametrize("n", [5, 7, 9])
@pytest.mark.parametrize("algorithm", ALL + ["sfbcast"])
def test_table_one_to_the_tick(algorithm, n, M, model):
    S, r, d = model
    run = run_broadcast(config(n), algorithm, length=M)
    tree = "sbcast" if algorithm == "sfbcast" else algorithm
    if algorithm == "sfbcast":
        expected = max((len(c.path) - 1) * (S + r * M) for c in broadcast_copies(tree, n))
    else:
        expected = best_case_latency(broadcast_copies(tree, n), S, r, d, M)
    assert run.latency == expected
    printed = printed_table_one(algorithm, n, S, r, d, M)
    if algorithm == "4bcast":
        # The printed row omits copies with 2 transmissions and 2(n-2) cut-throughs (INDEX.md).
        assert run.latency == max(printed, 2 * (S + r * M) + 2 * (n - 2) * d)
        assert (run.latency > printed) == (S + r * M < (n - 1) * d)
    else:
        assert run.latency == printed


def test_np_processing_time_adds_once_per_relay_on_the_slowest_path(model):
    S, r, d = model
    n = 6
    slow = run_broadcast(config(n, timing__np_receive_cycles=4), "sbcast", length=64)
    assert slow.latency == 2 * (S + r * 64) + (n - 3) * d + 4


def test_broadcast_over_background_traffic_still_delivers_k_copies(model):
    S, r, d = model
    cfg = config(5, traffic__uniform__load=0.6, run__cycles=3000, run__warmup_cycles=1500)
    run = run_broadcast(cfg, "3bcast", length=512)
    counts = run.copies_per_node()
    assert set(counts.values()) == {3} and len(counts) == 60
    assert run.latency > 2 * (S + r * 512) + 2 * (5 - 2) * d  # it met other packets on the way
    assert any(c.marked for c in run.copies)  # some tee found its transmitter busy
    summary = run.summary()
    assert not summary["contention_free"]
    # the first of the broadcast's own packets to wait, after it began and before its last copy arrived
    first = summary["first_contention"]
    packet = run.result.packet(first["uid"])
    mark = next(bit for bit, name in R.CONTENTION_NAMES.items() if name == first["kind"])
    assert packet[R.PL_ORIGIN] == run.origin and packet[R.PL_CONTENTION] & mark
    assert 0 <= first["cycle"] < run.latency and 0 <= first["node"] < 61
    assert packet[R.PL_CONTENDED_AT] == (1500 + first["cycle"]) * cfg.bytes_per_cycle


def test_the_plot_centres_the_hexagon_on_the_source():
    from harts.network.hexmesh import UNIT
    from harts.tools.plot import positions
    run = run_broadcast(config(4), "sbcast", source=5)
    xy = positions(run)
    topo = run.result.topology
    assert np.allclose(xy[5], 0)
    assert np.allclose(xy[topo.neighbours[5]] - xy[5], UNIT)
    assert len({tuple(p) for p in np.round(xy, 6).tolist()}) == topo.n_nodes
