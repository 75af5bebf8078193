"""The cycle-level engine against closed forms, byte counts and its own invariants."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from harts.controller import records as R
from harts.controller import state as S
from harts.errors import SimulationError
from harts.machine.config import load_config
from harts.machine.results import ValueCounts, earliest_wait, value_counts
from harts.machine.statistics import quantile
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast, worms
from harts.tools.calibrate import calibrate

from .helpers import closed_form, config


@pytest.mark.parametrize("size,overrides", [
    (5, {}),
    (3, {}),
    (7, {"timing__header_bytes": 12, "timing__bus_delay_cycles": 2}),
    (5, {"timing__link_delay_cycles": 2, "timing__np_send_cycles": 0, "timing__bmu_setup_cycles": 3}),
    (5, {"timing__header_bytes": 4, "timing__deliver_cycles": 0, "timing__bus_delay_cycles": 0}),
])
def test_zero_load_latency_is_exactly_the_closed_form(size, overrides):
    cfg = config(size, **overrides)
    cal = calibrate(cfg)
    S_, r, d = closed_form(cfg)
    assert (cal.S, cal.r, cal.d) == (S_, r, d)
    assert cal.max_residual == 0
    # every destination of the mesh, every length, at every hop count up to the diameter
    assert {p["hops"] for p in cal.probes} == set(range(1, size))
    for probe in cal.probes:
        assert probe["latency"] == S_ + r * probe["length"] + (probe["hops"] - 1) * d


def test_default_timing_values():
    cal = calibrate(config(5))
    assert (cal.S, cal.r, cal.d) == (7, Fraction(1, 6), 5)


def test_link_streams_six_bytes_per_cycle_for_any_length():
    """A long stream of back-to-back packets of random lengths leaves one transmitter byte-exactly at
    6 bytes per cycle with the 8-byte forced idle gap between packets."""
    rng = np.random.default_rng(7)
    lengths = rng.integers(6, 600, size=3000)
    cfg = config(3, timing__receiver_fifo_bytes=10**9)
    sim = Simulation(cfg)
    k = len(lengths)
    result = sim.run(unicast(np.zeros(k), np.zeros(k), np.ones(k), lengths))
    first_byte = 6 * (cfg["timing.np_send_cycles"] + cfg["timing.bmu_setup_cycles"] + 2
                      + cfg["timing.bus_delay_cycles"])
    tx = result.network.transmitters[0 * sim.topology.n_ports + 0, S.TX_FREE]
    assert tx == first_byte + int(lengths.sum()) + 8 * k
    assert result.network.transmitters[:, S.TX_BYTES].sum() == lengths.sum()


def test_receiver_keeps_up_with_a_stream_of_packets_of_64_bytes_or_more():
    """Deliveries of a back-to-back stream to a neighbour follow each other by exactly M + 8 byte times:
    the receiver finishes each packet within its own transmission time plus the idle gap. (64 bytes is
    the paper's shortest packet; below about 54 bytes harts.yaml's per-packet microcode takes longer
    than the packet, see MODEL.md.)"""
    rng = np.random.default_rng(3)
    lengths = rng.integers(64, 600, size=2000)
    sim = Simulation(config(4))
    k = len(lengths)
    result = sim.run(unicast(np.zeros(k), np.zeros(k), np.ones(k), lengths))
    # BMU contexts may overtake each other, so compare in delivery order
    order = np.argsort(result.deliveries[R.DL_TICK])
    times = result.deliveries[R.DL_TICK, order]
    delivered_lengths = lengths[result.deliveries[R.DL_UID, order]]
    assert np.array_equal(np.diff(times), delivered_lengths[1:] + 8)


def test_uniform_load_is_deterministic_and_consistent():
    cfg = load_config("configs/uniform_e9.yaml").with_topology(kind="hex", size=5).with_values(run__cycles=4000)
    a = Simulation(cfg).run()
    b = Simulation(cfg).run()
    assert np.array_equal(a.deliveries, b.deliveries)
    assert np.array_equal(a.packets, b.packets)
    c = Simulation(cfg.with_values(run__seed=2)).run()
    assert not np.array_equal(a.deliveries[R.DL_TICK], c.deliveries[R.DL_TICK])
    summary = a.summary()
    assert summary["packets"] == summary["deliveries"] > 1000
    # load 0.3 is the offered mean link utilisation (traffic.uniform.load_basis: link), what the
    # transmitters' byte counts measure
    assert summary["offered_link_load"] == pytest.approx(0.3)
    assert summary["link_utilisation"] == pytest.approx(0.3, rel=0.08)
    assert summary["stores_per_packet"] > 0  # contention happened and was resolved by buffering
    # read per node (load_basis: node), 0.3 of a link's rate per node spreads over 6 links x the mean hops
    per_node = Simulation(cfg.with_values(traffic__uniform__load_basis="node")).run().summary()
    assert per_node["offered_node_load"] == pytest.approx(0.3)
    assert per_node["link_utilisation"] == pytest.approx(0.3 * per_node["mean_hops"] / 6, rel=0.08)


def test_saturating_load_still_delivers_every_packet():
    cfg = config(5, traffic__uniform__load=0.9, run__cycles=3000)
    summary = Simulation(cfg).run().summary()  # invariants are checked inside run()
    assert summary["packets"] == summary["deliveries"]
    assert summary["bmu_peak_bytes"] <= cfg["bmu.capacity_bytes"]


def test_small_bmu_applies_cut_through_flow_control():
    """With room for only a few packets, a BMU fills to exactly its capacity and never beyond."""
    cfg = config(5, traffic__uniform__load=0.8, traffic__uniform__load_basis="node", run__cycles=3000,
                 bmu__capacity_bytes=2048, bmu__when_full="wait")
    result = Simulation(cfg).run()
    assert result.network.nodes[:, S.ND_BMU_PEAK].max() == 2048
    assert result.summary()["dropped_by_bmu_overflow"] == 0


def test_far_past_saturation_full_bmus_drop_and_count_instead_of_deadlocking():
    """E-7 at load 2.0 deadlocks with waiting flow control; with dropping BMUs (the default) it runs to
    the end, and every packet is delivered or counted as a BMU overflow."""
    busy = {"traffic__uniform__load": 2.0, "run__cycles": 20000}
    with pytest.raises(SimulationError, match="deadlock"):
        Simulation(config(7, **busy, bmu__when_full="wait", run__deadlock_cycles=20000)).run()
    result = Simulation(config(7, **busy)).run()
    summary = result.summary()
    assert summary["dropped_by_bmu_overflow"] > 0
    assert summary["deliveries"] + summary["dropped_by_bmu_overflow"] == summary["packets"]
    assert result.network.nodes[:, S.ND_BMU_PEAK].max() <= config()["bmu.capacity_bytes"]


def test_small_waiting_bmus_deadlock_past_saturation():
    """E-5 with 1 KB BMUs at link load 0.8 (past its saturation at 0.7): with waiting flow control a cycle of full
    BMUs blocks, and the engine stops naming the full BMUs (MODEL.md, A full BMU)."""
    busy = config(5, traffic__uniform__load=0.8, run__cycles=5000, bmu__capacity_bytes=1024, run__deadlock_cycles=5000)
    with pytest.raises(SimulationError, match=r"deadlock: no packet moved .* BMUs are within 512 bytes of full"):
        Simulation(busy.with_values(bmu__when_full="wait")).run()


@pytest.mark.parametrize("size, load", [(5, 0.65), (7, 0.7), (9, 0.7)])
def test_below_saturation_dropping_and_waiting_bmus_give_identical_runs(size, load):
    """Just below saturation (0.7 on E-5, 0.75 on E-7 and E-9: EXPERIMENTS.md) no BMU comes within a packet of its
    64 KB, so no packet is dropped and no promise refused: the two policies deliver the same copies at the same ticks.
    The fullest BMU, promises included, holds at most 10.5 KB (MODEL.md, A full BMU)."""
    cfg = config(size, traffic__uniform__load=load, run__cycles=20000)
    drop = Simulation(cfg.with_values(bmu__when_full="drop")).run()
    wait = Simulation(cfg.with_values(bmu__when_full="wait")).run()
    assert np.array_equal(drop.deliveries, wait.deliveries)
    assert drop.summary()["dropped_by_bmu_overflow"] == 0
    longest = max(item.value for item in cfg["traffic.uniform.lengths"].value)  # 512 bytes
    for result in (drop, wait):
        peak = result.summary()["bmu_peak_bytes"]
        assert peak + longest <= cfg["bmu.capacity_bytes"] and peak <= 10.5 * 1024


def test_adaptive_forward_takes_the_axis_with_most_hops_left_lower_axis_on_a_tie():
    """harts.yaml's adaptive route at zero load, where the first port it tries is free: hop by hop, the productive
    axis with the most hops left, the lower axis when two have as many (the choice is made with selects in the
    kernel, so it is checked here against the rule written plainly)."""
    sim = Simulation(config(5))
    topology = sim.topology
    n = topology.n_nodes
    gap = 200  # cycles between packets: each crosses an idle network
    result = sim.run(unicast(np.arange(n - 1) * gap, 0, np.arange(1, n), 64), hops=True)
    ties = 0
    for uid, destination in enumerate(range(1, n)):
        left = [int(x) for x in topology.offset_table[destination]]  # row (destination - 0) mod N
        expected = []
        while any(left):
            axis = max(range(len(left)), key=lambda a: (abs(left[a]), -a))
            ties += sum(abs(x) == abs(left[axis]) for x in left) > 1
            expected.append(int(topology.axis_positive[axis] if left[axis] > 0 else topology.axis_negative[axis]))
            left[axis] -= 1 if left[axis] > 0 else -1
        visits = result.hops.of_packet(uid)
        ports = [int(p) for p in result.hops.rows[R.HR_OUT_PORT, visits]]
        assert ports == expected + [-1], destination
    assert ties > 0  # the tie rule was exercised


def test_broadcast_worm_is_teed_at_every_node_at_zero_load():
    n = 7
    cfg = config(n)
    sim = Simulation(cfg)
    S_, r, d = closed_form(cfg)
    for direction in range(6):
        result = sim.run(worms([0], [5], [direction], [n - 1], [128]))
        dl = result.deliveries
        assert len(dl[R.DL_NODE]) == n - 1
        v = 5
        for hop in range(1, n):
            v = int(sim.topology.neighbours[v, direction])
            row = np.nonzero(dl[R.DL_NODE] == v)[0]
            assert len(row) == 1
            assert Fraction(int(dl[R.DL_TICK, row[0]]), 6) == S_ + r * 128 + (hop - 1) * d
            assert result.header("distance")[row[0]] == n - 1 - hop
            assert result.header("flags")[row[0]] == 0
        assert result.stats[S.ST_CUT_THROUGHS] == n - 2


def test_blocked_relay_delivers_one_marked_copy_and_the_node_forwards_it():
    """Node 2 is busy sending its own long packet in direction 0 when the worm arrives there."""
    sim = Simulation(config(5))
    traffic = unicast([0], [2], [4], [512])
    traffic = traffic.concatenate([traffic, worms([5], [0], [0], [4], [64])])
    result = sim.run(traffic)
    dl, pl = result.deliveries, result.packets
    worm = dl[R.DL_ROUTE] == R.ROUTE_DIRECTION
    nodes = dl[R.DL_NODE, worm]
    assert sorted(nodes.tolist()) == [1, 2, 3, 4]
    at_2 = np.nonzero(worm & (dl[R.DL_NODE] == 2))[0][0]
    assert result.header("flags")[at_2] == 1  # marked
    # node 2's NP sent the rest of the worm as a new packet that continues from there
    resent = np.nonzero(pl[R.PL_PARENT] == dl[R.DL_SERIAL, at_2])[0]
    assert len(resent) == 1
    assert pl[R.PL_SENDER, resent[0]] == 2


def test_store_and_forward_costs_a_whole_packet_time_per_hop():
    cfg = config(6, microcode="store_and_forward")
    cal_like = Simulation(cfg)
    dst_by_hops = {h: h for h in range(1, 6)}  # node h is h hops along direction 0
    lat = {}
    for m in (64, 128, 512):
        for h, dst in dst_by_hops.items():
            r = cal_like.run(unicast([0], [0], [dst], [m]))
            lat[h, m] = r.unicast_latency(0)
            assert r.packet(0)[R.PL_STORES] == h - 1
    per_hop = {m: lat[2, m] - lat[1, m] for m in (64, 128, 512)}
    for m in per_hop:
        for h in range(2, 6):
            assert lat[h, m] - lat[h - 1, m] == per_hop[m]
    # each extra hop costs the whole packet's transmission time: M/6 cycles plus a constant
    assert per_hop[128] - per_hop[64] == Fraction(64, 6)
    assert per_hop[512] - per_hop[128] == Fraction(384, 6)


def write_program(tmp_path, body):
    path = tmp_path / "p.yaml"
    path.write_text("name: t\nentry: {receive: receive, inject: inject}\nprogram:\n" + body + """
  - {label: inject, op: wait_header}
  - {op: forward, via: adaptive, else: retry}
  - {op: wait_tail}
  - {op: done}
""")
    return path


@pytest.mark.parametrize("body,line,words", [
    ("  - {label: receive, op: wait_header}\n  - {op: done}\n", 5,
     "without forward, tee, deliver or store"),
    ("  - {label: receive, op: wait_header}\n  - {op: deliver}\n  - {op: done}\n", 6,
     "before the packet's last byte"),
    ("  - {label: receive, op: wait_header}\n  - {op: wait, cycles: 40}\n  - {op: deliver}\n"
     "  - {op: wait_tail}\n  - {op: done}\n", 6, "FIFO overflow"),
    ("  - {label: receive, op: deliver}\n  - {op: wait_tail}\n  - {op: done}\n", 4, "before 'wait_header'"),
])
def test_microprogram_faults_stop_the_run_naming_the_line(tmp_path, body, line, words):
    path = write_program(tmp_path, body)
    sim = Simulation(config(3, microcode=str(path)))
    with pytest.raises(SimulationError) as err:
        sim.run(unicast([0], [0], [1], [64]))
    assert f"{path}:{line}:" in str(err.value)
    assert words in str(err.value)


def test_invariant_catches_packets_delivered_at_the_wrong_node(tmp_path):
    path = write_program(tmp_path, "  - {label: receive, op: wait_header}\n  - {op: deliver}\n"
                                   "  - {op: wait_tail}\n  - {op: done}\n")
    sim = Simulation(config(4, microcode=str(path)))
    with pytest.raises(SimulationError, match="delivered to the wrong node"):
        sim.run(unicast([0], [0], [2], [64]))


def test_packet_count_and_warmup():
    cfg = config(4, traffic__uniform__load=0.2, run__packets=700, run__warmup_cycles=1000)
    result = Simulation(cfg).run()
    summary = result.summary()
    assert summary["packets"] == 700
    created = result.packets[R.PL_CREATE]
    assert summary["packets_measured"] == int((created >= 1000 * 6).sum()) < 700


def test_running_in_slices_gives_the_same_result():
    """The kernel pauses and resumes to show progress; slicing must not change anything."""
    cfg = config(5, traffic__uniform__load=0.4, run__cycles=5000)
    whole = Simulation(cfg).run(slice_cycles=10**9)
    sliced = Simulation(cfg).run(progress=True, slice_cycles=7)
    assert np.array_equal(whole.deliveries, sliced.deliveries)
    assert whole.ticks == sliced.ticks


@pytest.mark.parametrize("spread", [10, 10**9])
def test_value_counts_are_those_of_counting_one_by_one(spread):
    """Both ways of counting (a count per tick of a narrow range, sorting a wide one) give collections.Counter's."""
    latency = np.random.default_rng(spread).integers(7, 7 + spread, 5000)
    values, counts = value_counts(latency)
    assert dict(zip(values.tolist(), counts.tolist())) == dict(Counter(latency.tolist()))
    assert list(values) == sorted(values)
    assert [a.size for a in value_counts(latency[:0])] == [0, 0]


def test_value_counts_kept_a_drain_at_a_time_are_those_of_all_the_drains():
    """Chunks added one at a time (more than ValueCounts keeps before merging) count as Counter counts them all,
    and give the quantile and the maximum of the whole."""
    rng = np.random.default_rng(3)
    drains = [rng.integers(0, 50 + 40 * k, 300) for k in range(ValueCounts.KEPT + 5)]
    counts = ValueCounts()
    for latency in drains:
        counts.add(latency)
    everything = np.concatenate(drains)
    values, how_many = counts.merged()
    assert dict(zip(values.tolist(), how_many.tolist())) == dict(Counter(everything.tolist()))
    assert counts.max() == everything.max()
    assert quantile(values, how_many, 0.99) == np.sort(everything)[int(np.ceil(0.99 * everything.size)) - 1]


def test_the_earliest_wait_is_the_lowest_tick_then_the_lowest_uid():
    packets = np.zeros((R.PL_ROWS, 5), np.int64)
    packets[R.PL_UID] = [40, 30, 20, 10, 50]
    packets[R.PL_CONTENDED_AT] = [9, 7, 7, 3, 2]
    packets[R.PL_CONTENDED_NODE] = [1, 2, 3, 4, 5]
    packets[R.PL_CONTENDED_KIND] = [R.CONTENTION_QUEUED, R.CONTENTION_STORED, R.CONTENTION_RETRIED, 0, 0]
    assert earliest_wait(packets) == (7, 20, 3, R.CONTENTION_RETRIED)
    packets[R.PL_CONTENDED_KIND] = 0
    assert earliest_wait(packets) is None
