"""The flit-level kernel as one machine with the cut-through one: NP programs and their events, faults, hop
records and the contention certificate, all checked against hand-derived timings and the closed forms."""

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from harts.controller import records as R
from harts.machine.config import defaults
from harts.machine.flits import DeadlockError
from harts.machine.results import Result
from harts.machine.simulation import Simulation
from harts.machine.traffic import Traffic, initiations, unicast
from harts.np.program import load_program
from harts.reference import flits as reference

HERE = Path(__file__).resolve().parent
PINGER = load_program(HERE / "programs" / "pinger.py")
MESH = {"kind": "mesh", "dims": [4, 4]}  # ports 0 +x, 1 +y, 2 -x, 3 -y; node = x + 4y


def machine(microcode="wormhole", spec=MESH, program=None, **values):
    return Simulation(defaults().with_values(topology=spec, microcode=microcode, **values), program=program)


def by_uid(result: Result, table, field):
    """A log field of every record, indexed by uid (traffic packets: their traffic index)."""
    out = np.full(int(table[R.PL_UID if table.shape[0] == R.PL_ROWS else R.DL_UID].max()) + 1, -1, np.int64)
    out[table[R.PL_UID if table.shape[0] == R.PL_ROWS else R.DL_UID]] = table[field]
    return out


# ---- one front door -----------------------------------------------------------------------------------------

def test_simulation_picks_the_kernel_and_both_return_one_result_type_with_their_own_fields():
    cut = Simulation(defaults().with_values(topology=MESH)).run(unicast(0, 0, 5, 64))
    flit = machine().run(unicast(0, 0, 5, 48))
    assert type(cut) is type(flit) is Result
    assert (cut.kernel, cut.switching, cut.length_unit) == ("cut_through", "cut_through", "bytes")
    assert (flit.kernel, flit.switching, flit.length_unit) == ("flit", "wormhole", "flits")
    a, b = cut.summary(), flit.summary()
    common = {"packets", "latency_mean_cycles", "latency_p99_cycles", "latency_max_cycles", "mean_hops",
              "link_utilisation", "packet_hops", "microinstructions", "contention_free", "first_contention",
              "packets_retried", "packets_queued", "dropped_by_faults", "corrupted_transmissions",
              "forged_packets", "simulated_cycles"}
    assert common <= set(a) and common <= set(b)
    # what does not apply is absent, not zero
    assert {"bmu_utilisation", "cut_throughs", "packets_stored", "dropped_by_bmu_overflow"} <= set(a) - set(b)
    assert {"virtual_channels", "peak_buffer_flits", "packets_blocked", "flits_granted"} <= set(b) - set(a)
    assert a["packets"] == b["packets"] == 1 and a["mean_hops"] == b["mean_hops"] == 2


# ---- NP programs on the flit-level kernel --------------------------------------------------------------------

def test_an_np_program_hears_deliveries_sends_arrivals_and_timers_at_the_cycles_of_the_closed_form():
    """4x4 mesh, wormhole.yaml, defaults (k 1, b 1, w 0: Lk 2; n_s 1, n_d 1). Node 0 starts at cycle 10 and sends
    3 flits (18 bytes) to node 2, two hops: the closed form is 9 + 4(h - 1) + (M - 1) = 15, so node 2 has it at
    25 and answers at once; its answer is in node 0's NP 15 later, at 40. Node 0's head is granted at
    10 + n_s + 1 = 12 (wait_header, forward), its tail at 14, so the sent-notice comes at 14 + k = 15; the
    arrival notice at 25, the delivery; the timer 50 after the procedure ran, at 60."""
    sim = machine(program=PINGER)
    result = sim.run(initiations(10, 0, 2, 18))
    assert reference.zero_load_latency_wormhole(sim.params, 2, 3) == 15
    state = result.np_state
    assert state[2, :2].tolist() == [1, 25]  # node 2 got the copy at 25
    assert state[0, 2:].tolist() == [15, 25, 5, 60]  # node 0: sent at 15, arrived at 25, the timer at 60
    dl = result.deliveries
    assert sorted(dl[R.DL_TICK].tolist()) == [25, 40] and sorted(dl[R.DL_NODE].tolist()) == [0, 2]


def test_a_route_the_flit_level_controller_cannot_follow_is_a_run_time_error_in_one_line():
    explorer = load_program(HERE / "programs" / "explorer.py")
    with pytest.raises(Exception) as caught:
        machine(program=explorer).run(initiations(0, 0, 2, 18, direction=0, distance=2))
    assert "routes by destination or by segments" in str(caught.value) and "\n" not in str(caught.value)


# ---- faults -------------------------------------------------------------------------------------------------

FAULTS = {"crash": {"faults__crashed": [1]},
          "dead link": {"faults__dead_links": [{"node": 0, "direction": 0}]},
          "drop": {"faults__byzantine": [{"node": 1, "behaviour": "drop"}]}}
REASON = {"crash": R.DROP_CRASHED_NODE, "dead link": R.DROP_DEAD_LINK, "drop": R.DROP_BYZANTINE_NODE}


@pytest.mark.parametrize("microcode", ["wormhole", "circuit"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_fault_on_the_route_drops_the_packet_by_name_and_the_rest_arrive(microcode, fault):
    """Node 1 is crashed or a dropping Byzantine node, or the link 0 -> 1 is dead (one way). Packets: 0 -> 2
    (through 0 -> 1: lost there), 2 -> 0 (through 1: lost unless only 0 -> 1 is dead), 4 -> 6 (row 1: clear),
    1 -> 5 (from node 1: a crashed node originates nothing, a dropping one and a dead link do not stop it).
    Each is delivered once or dropped with the fault's name; nothing hangs, every buffer empties (the run
    checks it)."""
    sim = machine(microcode, **FAULTS[fault], faults__spare=[], run__deadlock_cycles=2000)
    result = sim.run(unicast([0, 0, 0, 0], [0, 2, 4, 1], [2, 0, 6, 5], 24), hops=True)
    dropped = by_uid(result, result.packets, R.PL_DROPPED)
    expected = {"crash": [REASON[fault], REASON[fault], 0, R.DROP_CRASHED_NODE],
                "dead link": [REASON[fault], 0, 0, 0],
                "drop": [REASON[fault], REASON[fault], 0, 0]}[fault]
    assert dropped.tolist() == expected
    delivered = set(result.deliveries[R.DL_UID].tolist())
    assert delivered == {uid for uid, why in enumerate(expected) if why == 0}
    # the hop records name where: the node at the far end of the lost link, on the receiver it came in on
    hops = result.hops
    lost = np.nonzero(hops[R.HR_ACTION] == R.ACT_DROPPED)[0]
    where = {(int(hops[R.HR_UID, c]), int(hops[R.HR_NODE, c]), int(hops[R.HR_FAULT, c])) for c in lost}
    assert (0, 1, REASON[fault]) in where
    assert result.summary()["dropped_by_faults"] == sum(1 for why in expected if why)


def test_an_altering_node_changes_what_the_copies_beyond_it_carry():
    """Node 1 alters what it forwards: 0 -> 2 passes it and arrives altered; 4 -> 6 does not and arrives true."""
    sim = machine(faults__byzantine=[{"node": 1, "behaviour": "alter"}], faults__spare=[])
    result = sim.run(unicast([0, 0], [0, 4], [2, 6], 24))
    assert by_uid(result, result.deliveries, R.DL_VALUE).tolist() == [R.VALUE_ALTERED, R.VALUE_TRUE]


def test_a_bogus_node_forges_an_answer_to_every_genuine_copy():
    """Node 2 is Byzantine 'bogus': the pinger's copy from node 0 reaches it; it answers as the program says and
    forges one more answer (EVENT_FORGE). Node 0 gets both; the forgery carries the altered value."""
    sim = machine(program=PINGER, faults__byzantine=[{"node": 2, "behaviour": "bogus"}], faults__spare=[])
    result = sim.run(initiations(0, 0, 2, 18))
    dl, pl = result.deliveries, result.packets
    at_zero = np.nonzero(dl[R.DL_NODE] == 0)[0]
    assert sorted(dl[R.DL_VALUE, at_zero].tolist()) == [R.VALUE_TRUE, R.VALUE_ALTERED]
    assert int(pl[R.PL_FORGED].sum()) == 1 and result.summary()["forged_packets"] == 1


def test_a_corrupting_link_marks_payloads_and_the_run_is_the_same_for_the_same_seed():
    sim = machine(faults__corruption_probability=0.3, run__seed=3)
    traffic = unicast(np.arange(40) * 5, np.arange(40) % 16, (np.arange(40) + 5) % 16, 24)
    first, second = sim.run(traffic), sim.run(traffic)
    corrupt = by_uid(first, first.deliveries, R.DL_CORRUPT)
    assert 0 < corrupt.sum() < 40 and corrupt.tolist() == by_uid(second, second.deliveries, R.DL_CORRUPT).tolist()
    assert first.summary()["corrupted_transmissions"] >= corrupt.sum()


def test_with_no_fault_tolerance_a_dead_link_on_every_route_still_ends_the_run():
    """A ring of 4 whose every link is dead one way: every packet is dropped, none waits for ever."""
    spec = {"kind": "torus", "dims": [4, 3]}
    dead = [{"node": v, "direction": 0} for v in range(12)]
    sim = machine(spec=spec, faults__dead_links=dead, flow__buffer_flits=2)
    ring = np.arange(4)
    result = sim.run(unicast(0, ring, (ring + 1) % 4, 48))
    assert (result.packets[R.PL_DROPPED] == R.DROP_DEAD_LINK).all()


# ---- the packet pool ---------------------------------------------------------------------------------------------

def test_traffic_given_whole_reserves_a_record_per_unicast_and_holds_only_those_in_flight(monkeypatch):
    """MODEL.md, Memory: an 8x8 mesh (wormhole, 2 VCs x 8 flits) at 0.1 flits/node/cycle of 8-flit packets for 20,000
    cycles, as bench/flits_limit.py runs it, reserves 16,035 records (a Poisson count of mean 16,000) and holds at
    most 52 at once. The peak is counted again from the packet log: records alive from creation to completion."""
    from harts.controller.flits import state as FS
    from harts.machine.patterns import synthetic_packets

    reserved, empty_pool = [], FS.empty_pool

    def pool(capacity, words):
        reserved.append(capacity)
        return empty_pool(capacity, words)
    monkeypatch.setattr(FS, "empty_pool", pool)
    sim = machine(spec={"kind": "mesh", "dims": [8, 8]}, flow__virtual_channels=2, flow__buffer_flits=8)
    create, source, destination, flits = synthetic_packets(sim.topology, "uniform", 0.1, 8, 20_000, 1)
    result = sim.run(unicast(create, source, destination, flits * sim.params.flit_bytes))
    assert abs(len(create) - 0.1 * 64 * 20_000 / 8) < 3 * 16_000 ** 0.5
    assert reserved == [len(create)] == [16_035]
    made, done = result.packets[R.PL_CREATE], result.packets[R.PL_COMPLETE]
    change = np.concatenate([np.ones_like(made), -np.ones_like(done)])
    order = np.lexsort((change, np.concatenate([made, done])))  # at one cycle, records let go before new ones
    alive = np.cumsum(change[order]).max()
    assert result.summary()["packets_in_flight_peak"] == alive == 52


# ---- hop records and the contention certificate --------------------------------------------------------------

def random_unicasts(n_nodes, count, seed, spread, flit_bytes=6):
    rng = np.random.default_rng(seed)
    source = rng.integers(0, n_nodes, count)
    destination = (source + rng.integers(1, n_nodes, count)) % n_nodes
    flits = rng.integers(1, 7, count)
    return unicast(np.sort(rng.integers(0, spread, count)), source, destination, flits * flit_bytes), flits


@pytest.mark.parametrize("microcode", ["wormhole", "circuit"])
def test_hop_records_give_every_hop_of_every_packet_and_no_track_holds_two_packets_at_once(microcode):
    spec = {"kind": "torus", "dims": [5, 4]}
    sim = machine(microcode, spec=spec, flow__buffer_flits=3)
    traffic, flits = random_unicasts(20, 120, 5, 200)
    result = sim.run(traffic, hops=True)
    hops, topology = result.hops, sim.topology
    assert hops.kernel == "flit" and hops.ticks_per_cycle == 1
    distance = topology.distance(traffic.source, traffic.destination)
    for uid in range(len(traffic)):
        path = hops.path(uid)
        assert path[0] == traffic.source[uid] and path[-1] == traffic.destination[uid]
        assert len(path) == distance[uid] + 1
        assert all(b in topology.neighbours[a] for a, b in zip(path, path[1:]))
    final = hops[R.HR_ACTION] != R.ACT_NACKED
    assert (hops[R.HR_FIRST_IN] <= hops[R.HR_FIRST_OUT]).all() and (hops[R.HR_FIRST_OUT] < hops[R.HR_LAST_OUT]).all()
    links = final & (hops[R.HR_OUT_PORT] >= 0)
    assert int(links.sum()) == int(distance.sum())  # one visit leaving by a link per hop
    delivered = np.nonzero(hops[R.HR_ACTION] == R.ACT_DELIVERED)[0]
    assert sorted(hops[R.HR_UID, delivered].tolist()) == list(range(len(traffic)))
    tracks = defaultdict(list)
    for c in range(len(hops)):
        if hops[R.HR_IN_PORT, c] >= 0:
            tracks["in", hops[R.HR_NODE, c], hops[R.HR_IN_PORT, c], hops[R.HR_VC, c]].append(
                (hops[R.HR_FIRST_IN, c], hops[R.HR_LAST_IN, c]))
        if hops[R.HR_OUT_PORT, c] >= 0:
            tracks["out", hops[R.HR_NODE, c], hops[R.HR_OUT_PORT, c], hops[R.HR_OUT_VC, c]].append(
                (hops[R.HR_FIRST_OUT, c], hops[R.HR_LAST_OUT, c]))
    for spans in tracks.values():
        spans.sort()
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))


@pytest.mark.parametrize("microcode", ["wormhole", "circuit"])
@pytest.mark.parametrize("timing", [{}, {"flow__flit_bytes": 12, "timing__link_delay_cycles": 1}], ids=["k1", "k2w1"])
def test_a_packet_the_certificate_calls_contention_free_took_exactly_its_zero_load_time(microcode, timing):
    """The certificate's claim on the flit-level kernel (MODEL.md): a packet that never waited for another one
    (no refused VC, no head queued behind another packet, no flit held by another packet's link, credit or
    switch win) took its closed form. Dense random traffic makes both kinds; with two cycles a flit (k 2) a
    link is busy across cycles, so a flit can find it held by another packet's."""
    sim = machine(microcode, flow__buffer_flits=4, **timing)
    traffic, flits = random_unicasts(16, 150, 9, 300, flit_bytes=sim.params.flit_bytes)
    result = sim.run(traffic)
    pl, dl = result.packets, result.deliveries
    marks = by_uid(result, pl, R.PL_CONTENTION)
    latency = by_uid(result, dl, R.DL_TICK) - traffic.create
    hops = sim.topology.distance(traffic.source, traffic.destination)
    closed = reference.zero_load_latency_circuit if microcode == "circuit" else reference.zero_load_latency_wormhole
    zero = np.array([closed(sim.params, int(h), int(m)) for h, m in zip(hops, flits)])
    free = marks == 0
    assert 10 < free.sum() < len(traffic)
    assert (latency[free] == zero[free]).all()
    assert (latency[~free] >= zero[~free]).all() and (latency[~free] > zero[~free]).any()
    summary = result.summary()
    assert not summary["contention_free"]
    first = summary["first_contention"]
    waited = np.nonzero(by_uid(result, pl, R.PL_CONTENDED_AT) >= 0)[0]
    assert first["cycle"] == by_uid(result, pl, R.PL_CONTENDED_AT)[waited].min()
    assert first["kind"] in ("retried", "queued", "blocked")


def test_two_packets_meeting_on_a_link_name_where_the_first_waited():
    """4x4 mesh: A 0 -> 3 and B 1 -> 3 both at cycle 0, both need link 1 -> 2 (+x). B's head gets there first
    (it starts one hop nearer); A's head, 2 cycles later, finds VC 0 owned and takes VC 1 (no wait), and the two
    then share the link flit by flit: the first wait is a flit held by the other packet at node 1."""
    result = machine().run(unicast(0, [0, 1], [3, 3], 48))
    first = result.summary()["first_contention"]
    assert first["node"] == 1 and first["kind"] == "blocked"
    assert result.summary()["packets_blocked"] >= 1


def test_a_deadlock_is_still_named_with_faults_switched_on():
    """Faults do not hide a deadlock: the ring of test_flits, with a corrupting link (faults on, no loss)."""
    from harts.machine.config import MICROCODE_DIR
    any_vc = HERE / "programs" / "_wormhole_any.yaml"
    any_vc.write_text((MICROCODE_DIR / "wormhole.yaml").read_text().replace("vc: dateline", "vc: any"))
    try:
        sim = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 3]}, microcode=str(any_vc),
                                                flow__virtual_channels=1, flow__buffer_flits=2,
                                                run__deadlock_cycles=500, faults__corruption_probability=0.1,
                                                routing__torus_tie="positive"))  # all half-way, all +: a ring
        ring = np.arange(4)
        with pytest.raises(DeadlockError):
            sim.run(Traffic.concatenate([unicast(0, ring, (ring + 2) % 4, 48)]))
    finally:
        any_vc.unlink()


@pytest.mark.parametrize("dateline, expected", [
    ("from_wrap", {0: [0, 0], 1: [0, 1], 2: [1, 1]}),
    ("whole_axis", {0: [0, 0], 1: [1, 1], 2: [1, 1]}),
])
def test_flow_dateline_says_which_hops_of_a_crossing_axis_travel_in_class_1(dateline, expected):
    """A 5-node ring (row 0 of a 5x3 torus), 2 VCs, one packet at a time: 0 -> 2
    (+ twice, no wrap), 3 -> 0 (+ via 4, then the wrap 4 -> 0), 4 -> 1 (the wrap 4 -> 0 first, then 0 -> 1).
    from_wrap puts a hop in class 1 (VC 1) from the wrap on; whole_axis puts every hop of an axis that wraps
    there, from its first, as BookSim2's dim_order_torus does. The VCs per hop are read off the hop records."""
    sim = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [5, 3]}, microcode="wormhole",
                                            flow__virtual_channels=2, flow__dateline=dateline))
    result = sim.run(unicast([0, 100, 200], [0, 3, 4], [2, 0, 1], 24), hops=True)
    hops = result.hops
    links = np.nonzero(hops[R.HR_OUT_PORT] >= 0)[0]
    links = links[np.lexsort((hops[R.HR_FIRST_OUT, links], hops[R.HR_UID, links]))]
    taken = {uid: [int(hops[R.HR_OUT_VC, c]) for c in links if hops[R.HR_UID, c] == uid] for uid in range(3)}
    assert taken == expected
