"""What k-reliable broadcast tolerates, proved: exhaustively on E-3 with the engine and on E-4 with the
engine's delivery paths (checked against engine runs), by random sampling on E-7."""

from itertools import combinations

import numpy as np
import pytest

from harts.broadcasts.kandlur_shin import run_broadcast
from harts.controller import records as R
from harts.controller import state as S
from harts.faults.fault_set import BEHAVIOURS, FaultSet, random_faults
from harts.faults.reception import decide
from harts.faults.tolerance import deadline_ticks, tolerance
from harts.machine.simulation import Simulation
from harts.machine.traffic import initiations
from harts.np.kandlur_shin import ALGORITHMS

from .helpers import config, nothing_cut_off

K = {"2bcast": 2, "3bcast": 3, "4bcast": 4, "5bcast": 5, "6bcast": 6}
SOURCE = 0


def fault_set(sim, crashed=(), byzantine=(), behaviour="alter"):
    faults = FaultSet.none(sim.topology)
    faults.node_fault[list(crashed)] = R.FAULT_CRASH
    faults.node_fault[list(byzantine)] = BEHAVIOURS[behaviour]
    return faults


DEADLINES = {}


def decisions(sim, algorithm, faults, rule="majority", length=64):
    traffic = initiations([0], [SOURCE], [ALGORITHMS[algorithm]], [length])
    key = (sim.topology.name, algorithm, length)
    if key not in DEADLINES:
        DEADLINES[key] = deadline_ticks(sim, algorithm, length, SOURCE)
    return decide(sim.run(traffic, faults=faults), rule, DEADLINES[key])


@pytest.mark.parametrize("algorithm", list(K))
def test_e3_any_k_minus_1_crashed_nodes_exhaustively(algorithm):
    sim = Simulation(config(3))
    k = K[algorithm]
    others = [v for v in range(sim.topology.n_nodes) if v != SOURCE]
    sets = 0
    for crashed in combinations(others, k - 1):
        d = decisions(sim, algorithm, fault_set(sim, crashed=crashed))
        assert d.all_correct()[0], (algorithm, crashed)
        sets += 1
    assert sets == len(list(combinations(others, k - 1)))


@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
@pytest.mark.parametrize("algorithm", list(K))
def test_e3_any_floor_half_byzantine_nodes_exhaustively(algorithm, behaviour):
    sim = Simulation(config(3))
    f = (K[algorithm] - 1) // 2
    others = [v for v in range(sim.topology.n_nodes) if v != SOURCE]
    for byzantine in combinations(others, f):
        d = decisions(sim, algorithm, fault_set(sim, byzantine=byzantine, behaviour=behaviour))
        assert d.all_correct()[0], (algorithm, behaviour, byzantine)


def path_masks(n, algorithm):
    """Per node, a bitmask of the internal nodes of each copy's path, from the engine at zero load."""
    run = run_broadcast(config(n), algorithm, source=SOURCE, length=64)
    masks = {}
    for copy in run.copies:
        bits = 0
        for v in copy.path[1:-1]:
            bits |= 1 << v
        masks.setdefault(copy.node, []).append(bits)
    return masks


def predicted_correct(masks, k, faulty_bits, byzantine):
    """What the paths say each non-faulty node decides: crashed nodes only remove copies; a Byzantine
    node (alter) turns every copy through it into a wrong vote."""
    correct = {}
    for node, paths in masks.items():
        if faulty_bits >> node & 1:
            continue
        hit = sum(1 for p in paths if p & faulty_bits)
        correct[node] = (2 * hit < k) if byzantine else hit < k
    return correct


@pytest.mark.parametrize("algorithm", list(K))
def test_e4_exhaustively_by_the_engine_paths(algorithm):
    k = K[algorithm]
    n, N = 4, 37
    masks = path_masks(n, algorithm)
    others = np.array([v for v in range(N) if v != SOURCE])
    for size, byzantine in ((k - 1, False), ((k - 1) // 2, True)):
        if size == 0:
            bits = np.zeros(1, np.int64)
        else:
            sets = np.array(list(combinations(others, size)), dtype=np.int64)
            bits = np.bitwise_or.reduce(np.left_shift(np.int64(1), sets), axis=1)
        for node, paths in masks.items():
            hit = np.zeros(len(bits), dtype=np.int64)
            for p in paths:
                hit += (bits & p) != 0
            faulty = (bits >> node) & 1 == 1
            ok = (2 * hit < k) if byzantine else (hit < k)
            assert (ok | faulty).all(), (algorithm, node, byzantine)


@pytest.mark.parametrize("n", [4, 7])
@pytest.mark.parametrize("algorithm", list(K))
def test_engine_decides_what_the_paths_predict(algorithm, n):
    """The path analysis above is what the engine does: random fault sets, node by node."""
    k = K[algorithm]
    sim = Simulation(config(n))
    masks = path_masks(n, algorithm)
    rng = np.random.default_rng(11)
    for trial in range(25):
        byzantine = trial % 2 == 1
        count = int(rng.integers(1, k + 2))
        faults = random_faults(sim.topology, rng, crashed=0 if byzantine else count,
                               byzantine=count if byzantine else 0, spare=[SOURCE])
        bits = sum(1 << int(v) for v in faults.faulty_nodes)
        d = decisions(sim, algorithm, faults)
        expected = predicted_correct(masks, k, bits, byzantine)
        for node, ok in expected.items():
            assert bool(d.correct[0, node]) == ok, (algorithm, n, faults.faulty_nodes, node)


@pytest.mark.parametrize("algorithm", list(K))
def test_e7_random_fault_sets_within_the_bound(algorithm):
    k = K[algorithm]
    sim = Simulation(config(7))
    rng = np.random.default_rng(5)
    for behaviour in BEHAVIOURS:
        for _ in range(15):
            d = decisions(sim, algorithm, random_faults(sim.topology, rng, byzantine=(k - 1) // 2,
                                                        behaviour=behaviour))
            assert d.all_correct()[0]
    for _ in range(40):
        assert decisions(sim, algorithm, random_faults(sim.topology, rng, crashed=k - 1)).all_correct()[0]


def test_one_fault_beyond_the_bound_can_defeat_a_node():
    """The bounds are tight: crashing the k neighbours that feed a node its k copies, or making
    floor((k-1)/2) + 1 of them Byzantine, leaves it without the right value."""
    sim = Simulation(config(5))
    for algorithm, k in K.items():
        run = run_broadcast(sim.config, algorithm, source=SOURCE, length=64)
        node = max(run.copies, key=lambda c: len(c.path)).node
        feeders = sorted({c.path[-2] for c in run.copies if c.node == node})
        assert len(feeders) == k  # node-disjoint paths end on k different links
        assert not decisions(sim, algorithm, fault_set(sim, crashed=feeders)).correct[0, node]
        byzantine = feeders[: (k - 1) // 2 + 1]
        assert not decisions(sim, algorithm, fault_set(sim, byzantine=byzantine)).correct[0, node]


def test_how_decisions_degrade_beyond_the_bound():
    """SBCAST loses nodes to a single crash; two copies cannot outvote one altered copy, so 2-BCAST does
    worse than SBCAST against one Byzantine node; more copies degrade more gracefully."""
    cfg = config(5)
    assert tolerance(cfg, "sbcast", "crash", 1, trials=60)[1].correct_fraction < 1
    two = tolerance(cfg, "2bcast", "byzantine", 1, trials=60)[1].correct_fraction
    one = tolerance(cfg, "sbcast", "byzantine", 1, trials=60)[1].correct_fraction
    assert two < one < 1
    three = [r.correct_fraction for r in tolerance(cfg, "5bcast", "byzantine", 4, trials=60)]
    assert three[:3] == [1.0, 1.0, 1.0] and 1 > three[3] > three[4]


def test_first_valid_decides_exactly_where_an_undamaged_copy_arrived():
    sim = Simulation(config(5))
    faults = FaultSet.none(sim.topology)
    faults.corruption_probability = 0.1
    traffic = initiations([0], [SOURCE], [ALGORITHMS["3bcast"]], [64])
    result = sim.run(traffic, faults=faults)
    assert result.stats[S.ST_CORRUPTED] > 0
    first = decide(result, "first-valid", 10**9)
    major = decide(result, "majority", 10**9)
    dl = result.deliveries
    undamaged = set(dl[R.DL_NODE, dl[R.DL_CORRUPT] == 0].tolist())
    for node in range(sim.topology.n_nodes):
        if node != SOURCE:
            assert bool(first.correct[0, node]) == (node in undamaged)
    assert (first.correct | ~major.correct).all()  # majority is never right where first-valid is not
    assert first.correct_fraction()[0] > major.correct_fraction()[0]


def test_every_packet_is_delivered_or_dropped_by_a_named_fault_under_load():
    cfg = config(5, traffic__uniform__load=0.5, run__cycles=3000, faults__random_crashed=3,
                 faults__random_dead_links=4, faults__corruption_probability=0.01, faults__seed=3)
    result = Simulation(cfg).run()  # the invariants: delivered once, or dropped with a reason
    summary = result.summary()
    pl = result.packets
    dropped = pl[R.PL_DROPPED] != 0
    assert summary["dropped_by_faults"] > 0 and dropped.sum() > 0
    assert set(pl[R.PL_DROPPED, dropped]) <= set(R.DROP_NAMES)  # every drop has a named reason
    assert summary["deliveries"] + int(dropped.sum()) == summary["packets"]


def test_curves_that_coincide_are_found_and_still_drawn(tmp_path):
    from harts.faults.tolerance import ToleranceRow, coinciding_curves, plot_tolerance
    curves = {"sbcast": [1.0, 0.9], "2bcast": [1.0, 1.0], "sfbcast": [1.0, 0.9]}
    rows = [ToleranceRow(algorithm, "E-3", f, "byzantine", "alter", 10, value, 1.0, value)
            for algorithm, values in curves.items() for f, value in enumerate(values)]
    assert coinciding_curves(rows) == {"sbcast": ["sfbcast"], "2bcast": [], "sfbcast": ["sbcast"]}
    out = tmp_path / "tolerance.png"
    plot_tolerance(rows, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and nothing_cut_off(out)
