"""`harts run --packet-trace`: the Chrome/Perfetto trace read back against the hop records and what the
packets did, on both kernels."""

import json
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from harts.cli import main
from harts.controller import records as R
from harts.machine.config import hex_config, load_config
from harts.machine.hops import HopRecords
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.network import build_topology
from harts.tools.packet_trace import packet_name, write_packet_trace

CONFIG = """\
topology: {kind: hex, size: 5}
bmu: {bus_interfaces: 1}
traffic:
  packets:
    - {cycle: 0, source: 0, destination: 1, length: 512}
    - {cycle: 0, source: 60, destination: 1, length: 1024}
    - {cycle: 100, source: 0, destination: 60, length: 64}
"""
CYCLES_PER_BYTE = Fraction(1, 6)  # the trace is in cycles, 6 bytes a cycle
REPO = Path(__file__).resolve().parent.parent


def _trace(tmp_path):
    path = tmp_path / "three.yaml"
    path.write_text(CONFIG)
    out = tmp_path / "trace.json"
    assert main(["run", str(path), "--packet-trace", str(out)]) == 0
    return path, json.loads(out.read_text())["traceEvents"]


def test_the_trace_shows_each_packet_leave_arrive_wait_and_be_delivered_where_it_did(tmp_path):
    path, events = _trace(tmp_path)
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M" and "name" in e["args"]}
    slices = defaultdict(list)  # packet -> (node, track name, start, duration)
    for e in events:
        if e["ph"] == "X":
            slices[e["name"]].append((e["pid"] - 1, names[e["pid"], e["tid"]], e["ts"], e["dur"]))
    # E-5: 60 -> 0 -> 1 is two hops in direction 0 ("+1"); 0 -> 60 one hop in direction 3
    assert [(v, track) for v, track, _, _ in sorted(slices["packet 1"], key=lambda s: s[2])] == \
        [(60, "out +1"), (0, "in +1"), (0, "out +1"), (1, "in +1")]
    assert [(v, track) for v, track, _, _ in sorted(slices["packet 2"], key=lambda s: s[2])] == \
        [(0, "out -1"), (60, "in -1")]
    for _, _, _, duration in slices["packet 1"]:
        assert abs(duration - float(1024 * CYCLES_PER_BYTE)) < 1e-9

    # packet 1 found node 0's transmitter busy with packet 0: stored there until it left node 0's BMU
    stored = {e["ph"]: e for e in events if e.get("cat") == "stored" and e["name"] == "packet 1"}
    leaves = min(ts for v, track, ts, _ in slices["packet 1"] if v == 0 and track.startswith("out"))
    assert stored["b"]["pid"] == 1 and stored["e"]["ts"] == leaves

    # delivered: one per packet, ending when the delivery log says the NP had it
    result = Simulation(load_config(path)).run()
    delivered = {e["name"]: e for e in events if e.get("cat") == "delivered" and e["ph"] == "e"}
    assert sorted(delivered) == ["packet 0", "packet 1", "packet 2"]
    dl = result.deliveries
    for column in range(dl.shape[1]):
        event = delivered[f"packet {dl[R.DL_UID, column]}"]
        assert event["pid"] - 1 == dl[R.DL_NODE, column]
        assert abs(event["ts"] - float(dl[R.DL_TICK, column] * CYCLES_PER_BYTE)) < 1e-9


def test_every_transmission_arrives_once_and_no_track_holds_two_packets_at_once(tmp_path):
    _, events = _trace(tmp_path)
    sent = [e for e in events if e["ph"] == "X" and e["args"].get("sent")]
    assert len(sent) == 4  # packet-hops: 1 + 2 + 1
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == ends and len(starts) == 4
    assert_no_track_holds_two_slices_at_once(events)


LOADED = """\
topology: {kind: hex, size: 5}
bmu: {queues: per_output}
traffic:
  uniform: {load: 0.6}
  broadcasts:
    - {cycle: 50, source: 0, direction: 0, distance: 8, length: 256}
    - {cycle: 60, source: 30, direction: 2, distance: 12, length: 128}
run: {cycles: 600}
"""
FAULTY = """\
topology: {kind: hex, size: 4}
bmu: {capacity_bytes: 1024, when_full: drop}
faults:
  crashed: [5]
  dead_links: [{node: 0, direction: 0}]
traffic:
  uniform: {load: 0.8}
run: {cycles: 400}
"""


def _run_and_trace(tmp_path, text):
    """The config run in Python with every log kept, and its trace written by `harts run`."""
    path = tmp_path / "run.yaml"
    path.write_text(text)
    out = tmp_path / "trace.json"
    assert main(["run", str(path), "--packet-trace", str(out)]) == 0
    return Simulation(load_config(path)).run(hops=True), json.loads(out.read_text())["traceEvents"]


def _check_visits(result):
    """Each packet's visits form its path from its sender's NP to where it ended, as the packet and delivery
    logs have it: transmissions (its own hops), cut-throughs, stores, deliveries, drops; and each link
    delivers what its transmitter sent, the wire's delay later."""
    hops, topology = result.hops, result.topology
    rows, pl, dl = hops.rows, result.packets, result.deliveries
    wire = result.config["timing.link_delay_cycles"] * hops.ticks_per_cycle
    serial_row = {int(s): k for k, s in enumerate(dl[R.DL_SERIAL])}
    assert sorted(hops.uids().tolist()) == sorted(pl[R.PL_UID].tolist())
    for column in range(pl.shape[1]):
        uid = int(pl[R.PL_UID, column])
        visits = hops.of_packet(uid)
        node, inn, out, action = (rows[f, visits] for f in (R.HR_NODE, R.HR_IN_PORT, R.HR_OUT_PORT, R.HR_ACTION))
        assert node[0] == pl[R.PL_SENDER, column] and inn[0] == -1
        for k in range(len(visits) - 1):
            v, d = node[k], out[k]
            assert d >= 0 and node[k + 1] == topology.neighbours[v, d] and inn[k + 1] == topology.in_port[v, d]
        assert out[-1] in (-1, -2) and (out[:-1] >= 0).all()
        first_in, last_in, first_out, last_out = (rows[f, visits] for f in (R.HR_FIRST_IN, R.HR_LAST_IN, R.HR_FIRST_OUT,
                                                                             R.HR_LAST_OUT))
        assert (first_in[1:] == first_out[:-1] + wire).all() and (last_in[1:] == last_out[:-1] + wire).all()
        sent = out >= 0
        assert (last_out[sent] - first_out[sent] == pl[R.PL_LEN, column]).all()
        assert (rows[R.HR_BLOCKED_OUTPUT, visits[sent]] <= first_out[sent] - first_in[sent]).all()
        assert first_in[0] == last_in[0]
        assert np.count_nonzero(out >= 0) == pl[R.PL_HOPS, column] - pl[R.PL_HOPS_INHERITED, column]
        # what it inherited from the copy its NP sent it on: cut-throughs, and stores plus the NP's restart
        parent = serial_row.get(int(pl[R.PL_PARENT, column]))
        cuts, stores = (0, 0) if parent is None else (dl[R.DL_CUTS, parent], dl[R.DL_STORES, parent] + 1)
        assert np.isin(action, (R.ACT_CUT_THROUGH, R.ACT_TEED)).sum() == pl[R.PL_CUTS, column] - cuts
        assert np.count_nonzero(action == R.ACT_STORED) == pl[R.PL_STORES, column] - stores
        stored = visits[action == R.ACT_STORED]
        assert (rows[R.HR_STORED, stored] > 0).all()
        assert (rows[R.HR_FIRST_OUT, stored] - rows[R.HR_STORED, stored] > rows[R.HR_FIRST_IN, stored]).all()
        copies = np.flatnonzero(dl[R.DL_UID] == uid)
        delivered = visits[np.isin(action, (R.ACT_DELIVERED, R.ACT_TEED))]
        assert sorted(rows[R.HR_NODE, delivered].tolist()) == sorted(dl[R.DL_NODE, copies].tolist())
        assert len(delivered) == pl[R.PL_DELIVERIES, column]
        ends = {int(dl[R.DL_NODE, k]): int(dl[R.DL_TICK, k]) for k in copies}
        for i in visits[action == R.ACT_DELIVERED]:
            assert rows[R.HR_LAST_OUT, i] == ends[rows[R.HR_NODE, i]]
        dropped = action[-1] == R.ACT_DROPPED
        assert dropped == (pl[R.PL_DROPPED, column] != 0)
        assert rows[R.HR_FAULT, visits[-1]] == pl[R.PL_DROPPED, column]
        assert np.count_nonzero(action == R.ACT_DROPPED) == dropped


def test_the_hop_records_say_how_long_a_packet_was_stored_and_how_long_its_forward_was_blocked():
    """harts.yaml on E-5, timed from its listing: a receiver forwards three cycles after a packet's header is
    in (wait_header, two branches) and, refused, stores it a cycle later; a bus interface forwards two
    cycles after the packet is ready (wait_header, branch) and, refused, retries until the link is free."""
    cfg = hex_config(5)
    sim = Simulation(cfg)
    bpc, gap = cfg.bytes_per_cycle, cfg["timing.idle_gap_bytes"]
    bus, setup = cfg["timing.bus_delay_cycles"] * bpc, cfg["timing.bmu_setup_cycles"] * bpc
    # node 0 sends 512 and 64 bytes to node 1 at once: both forwards are tried at one tick, the second waits
    both = sim.run(unicast([0, 0], [0, 0], [1, 1], [512, 64]), hops=True).hops
    rows = both.rows
    first, second = both.of_packet(0)[0], both.of_packet(1)[0]
    assert rows[R.HR_ACTION, [first, second]].tolist() == [R.ACT_INJECTED] * 2
    assert rows[R.HR_BLOCKED_OUTPUT, first] == 0
    assert rows[R.HR_BLOCKED_OUTPUT, second] == rows[R.HR_FIRST_OUT, second] - rows[R.HR_FIRST_OUT, first] == 512 + gap
    # node 1 sends 512 bytes to node 2 as node 0's 64 bytes pass it for node 2: stored at node 1
    crossing = sim.run(unicast([0, 0], [1, 0], [2, 2], [512, 64]), hops=True).hops
    rows = crossing.rows
    blocker, stored = crossing.of_packet(0)[0], crossing.of_packet(1)[1]
    assert rows[[R.HR_NODE, R.HR_ACTION], stored].tolist() == [1, R.ACT_STORED]
    assert rows[R.HR_FIRST_OUT, stored] == rows[R.HR_LAST_OUT, blocker] + gap
    store = rows[R.HR_FIRST_IN, stored] + cfg["timing.header_bytes"] + 4 * bpc
    assert rows[R.HR_STORED, stored] == rows[R.HR_FIRST_OUT, stored] - store
    retried_from = rows[R.HR_LAST_IN, stored] + bus + setup + 2 * bpc
    assert rows[R.HR_BLOCKED_OUTPUT, stored] == rows[R.HR_FIRST_OUT, stored] - bus - retried_from > 0


def assert_no_track_holds_two_slices_at_once(events):
    """Every Perfetto track (pid, tid) is one port, VC or NP: its slices ("X") may touch but never overlap."""
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in tracks.values():
        spans.sort()
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))


def _track_names(events):
    return {(e["pid"], e.get("tid")): e["args"]["name"] for e in events if e["ph"] == "M" and "name" in e["args"]}


def _check_trace_holds_every_visit(result, events):
    """Every transmission and every arrival of the hop records is a slice on its node's track, at its time,
    joined by a flow arrow; every store and delivery is on the async tracks; no track holds two packets at
    once."""
    hops, topology = result.hops, result.topology
    rows = hops.rows
    cycles_per_tick = 1 / hops.ticks_per_cycle
    names = _track_names(events)
    slices = Counter()
    for e in events:
        if e["ph"] == "X":
            slices[e["name"], e["pid"] - 1, names[e["pid"], e["tid"]], round(e["ts"], 6), round(e["dur"], 6)] += 1
    expected = Counter()
    for i in range(len(hops)):
        name, v = packet_name(int(rows[R.HR_UID, i])), int(rows[R.HR_NODE, i])
        for side, port, vc, first, last in (("out", R.HR_OUT_PORT, R.HR_OUT_VC, R.HR_FIRST_OUT, R.HR_LAST_OUT),
                                            ("in", R.HR_IN_PORT, R.HR_VC, R.HR_FIRST_IN, R.HR_LAST_IN)):
            if rows[port, i] >= 0:
                track = f"{side} {topology.port_names[rows[port, i]]}" + (
                    f" vc {rows[vc, i]}" if hops.kernel == "flit" else "")
                expected[name, v, track, round(rows[first, i] * cycles_per_tick, 6),
                         round((rows[last, i] - rows[first, i]) * cycles_per_tick, 6)] += 1
    assert slices == expected
    transmissions = np.count_nonzero(rows[R.HR_OUT_PORT] >= 0)
    if hops.kernel == "cut_through":
        assert transmissions == result.counts["packet_hops"]
    flows = Counter(e["ph"] for e in events if e.get("cat") == "hop")
    assert flows["s"] == flows["f"] == transmissions
    asynchronous = Counter((e.get("cat"), e["ph"]) for e in events if e["ph"] in "be")
    action = rows[R.HR_ACTION]
    assert asynchronous["stored", "b"] == asynchronous["stored", "e"] == np.count_nonzero(action == R.ACT_STORED)
    assert asynchronous["delivered", "b"] == asynchronous["delivered", "e"] == \
        np.count_nonzero(np.isin(action, (R.ACT_DELIVERED, R.ACT_TEED))) == result.deliveries.shape[1]
    assert_no_track_holds_two_slices_at_once(events)


def test_a_loaded_run_with_worms_has_every_hop_of_every_packet_in_its_trace(tmp_path):
    """E-5 at load 0.6 with two send_packet worms (teed at every node) and BMUs whose refused packets wait
    per output: packets cut through, are stored, injected, delivered and teed."""
    result, events = _run_and_trace(tmp_path, LOADED)
    action = result.hops.rows[R.HR_ACTION]
    for kind in (R.ACT_CUT_THROUGH, R.ACT_STORED, R.ACT_INJECTED, R.ACT_DELIVERED, R.ACT_TEED):
        assert (action == kind).any(), R.ACT_NAMES[kind]
    _check_visits(result)
    _check_trace_holds_every_visit(result, events)


@pytest.mark.parametrize("name", ["wormhole_torus_8x8", "circuit_mesh_8x8"])
def test_a_flit_level_run_has_every_hop_of_every_packet_in_its_trace(tmp_path, name):
    """The shipped wormhole torus and circuit mesh (whose probes are nacked and sent again) under synthetic
    traffic: a track per virtual channel."""
    config = (REPO / "configs" / f"{name}.yaml").read_text()
    # 400 cycles, and a warm-up inside them: one past them would measure nothing, and is refused
    short = config.replace("cycles: 20000", "cycles: 400").replace("warmup_cycles: 2000", "warmup_cycles: 100")
    result, events = _run_and_trace(tmp_path, short)
    assert result.hops.kernel == "flit" and len(result.hops) > 500
    _check_trace_holds_every_visit(result, events)


def test_drops_show_in_the_trace_where_the_fault_was(tmp_path):
    """Node 5 crashed, the link from node 0 in direction 0 (+1, to node 1) dead, BMUs that drop when full:
    each dropped packet ends at the receiver it would have come in on, named by its fault (a crashed
    node's own packets where they were made)."""
    result, events = _run_and_trace(tmp_path, FAULTY)
    _check_visits(result)
    _check_trace_holds_every_visit(result, events)
    names = _track_names(events)
    drops = Counter()
    for e in events:
        fault = e.get("args", {}).get("dropped")
        if fault is None:
            continue
        where = names[e["pid"], e["tid"]] if e["ph"] == "X" else "made"
        drops[fault] += 1
        if fault == "dead link":
            assert (e["pid"] - 1, where) == (1, "in +1")
        elif fault == "crashed node":
            assert e["pid"] - 1 == 5
        else:
            assert fault == "BMU overflow" and where.startswith("in ")
    assert min(drops["dead link"], drops["crashed node"], drops["BMU overflow"]) > 0
    assert sum(drops.values()) == result.summary()["dropped_by_faults"] + result.summary()["dropped_by_bmu_overflow"]
    made = [e for e in events if e["ph"] == "i"]
    assert made and all(e["pid"] - 1 == 5 for e in made)


def _visit(uid, node, in_port, out_port, vc, out_vc, first_in, last_in, first_out, last_out, action, blocked=0,
           credit=0):
    column = np.zeros(R.HR_ROWS, np.int64)
    column[[R.HR_UID, R.HR_NODE, R.HR_IN_PORT, R.HR_OUT_PORT, R.HR_VC, R.HR_OUT_VC, R.HR_FIRST_IN, R.HR_LAST_IN,
            R.HR_FIRST_OUT, R.HR_LAST_OUT, R.HR_ACTION, R.HR_BLOCKED_OUTPUT, R.HR_BLOCKED_CREDIT]] = \
        [uid, node, in_port, out_port, vc, out_vc, first_in, last_in, first_out, last_out, action, blocked, credit]
    return column


def test_flit_level_hop_records_are_traced_on_a_track_per_virtual_channel(tmp_path):
    """Hand-made hop records of a flit-level run on a 3x3 mesh (ports +x0, +x1, -x0, -x1; a cycle a tick):
    packet 7 from node 0's NP channel 0 through node 1 (VC 1 in, VC 0 out, blocked) to node 4's NP channel
    1; packet 8 from node 1 on VC 1 of the same link as packet 7 at once, a probe nacked at node 4; packet 9
    teed at node 4 on its way from node 3 to node 5. Deliveries go on the async track, where several can
    overlap."""
    hops = HopRecords(np.stack([
        _visit(7, 0, -1, 0, 0, 1, 0, 4, 2, 7, R.ACT_INJECTED),
        _visit(7, 1, 0, 1, 1, 0, 3, 8, 5, 12, R.ACT_FORWARDED, blocked=1, credit=2),
        _visit(7, 4, 1, -1, 0, 1, 6, 13, 7, 14, R.ACT_DELIVERED),
        _visit(8, 1, -1, 1, 0, 1, 2, 6, 4, 9, R.ACT_INJECTED),
        _visit(8, 4, 1, -2, 1, 0, 5, 10, -1, -1, R.ACT_NACKED),
        _visit(9, 3, -1, 0, 0, 0, 0, 3, 1, 5, R.ACT_INJECTED),
        _visit(9, 4, 0, 0, 0, 0, 2, 6, 3, 7, R.ACT_TEED),
        _visit(9, 5, 0, -1, 0, 0, 4, 8, 5, 9, R.ACT_DELIVERED),
    ], axis=1), 1, "flit")
    topology = build_topology({"kind": "mesh", "dims": [3, 3]})
    assert hops.path(7) == [0, 1, 4] and hops.path(9) == [3, 4, 5]
    out = tmp_path / "flit.json"
    write_packet_trace(hops, topology, out)
    events = json.loads(out.read_text())["traceEvents"]
    names = _track_names(events)
    slices = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            slices[e["name"]].append((e["pid"] - 1, names[e["pid"], e["tid"]], e["ts"], e["dur"], e["args"]))
    assert [s[:4] for s in sorted(slices["packet 7"], key=lambda s: (s[2], s[1]))] == [
        (0, "out +x0 vc 1", 2, 5), (1, "in +x0 vc 1", 3, 5), (1, "out +x1 vc 0", 5, 7),
        (4, "in +x1 vc 0", 6, 7)]
    assert slices["packet 7"][0][4] == {"uid": 7, "sent": "injected", "np_channel": 0}
    forwarded = next(s[4] for s in slices["packet 7"] if s[1] == "out +x1 vc 0")
    assert forwarded == {"uid": 7, "sent": "forwarded", "blocked_cycles": 1.0, "blocked_on_credit_cycles": 2.0}
    assert [(s[0], s[1], s[4].get("nacked")) for s in slices["packet 8"]] == [
        (1, "out +x1 vc 1", None), (4, "in +x1 vc 1", True)]
    delivered = [(e["name"], e["ph"], e["pid"] - 1, e["ts"], e.get("args")) for e in events
                 if e.get("cat") == "delivered"]
    assert sorted(delivered, key=lambda e: (e[0], e[3])) == [
        ("packet 7", "b", 4, 7, {"uid": 7, "receiver": "+x1", "np_channel": 1}), ("packet 7", "e", 4, 14, None),
        ("packet 9", "b", 4, 3, {"uid": 9, "receiver": "+x0", "teed": True}),
        ("packet 9", "b", 5, 5, {"uid": 9, "receiver": "+x0", "np_channel": 0}), ("packet 9", "e", 4, 7, None),
        ("packet 9", "e", 5, 9, None)]
    flows = [(e["ph"], e["pid"] - 1, names[e["pid"], e["tid"]]) for e in events if e.get("cat") == "hop"]
    assert Counter(flows) == Counter([
        ("s", 0, "out +x0 vc 1"), ("f", 1, "in +x0 vc 1"), ("s", 1, "out +x1 vc 0"), ("f", 4, "in +x1 vc 0"),
        ("s", 1, "out +x1 vc 1"), ("f", 4, "in +x1 vc 1"), ("s", 3, "out +x0 vc 0"), ("f", 4, "in +x0 vc 0"),
        ("s", 4, "out +x0 vc 0"), ("f", 5, "in +x0 vc 0")])
    assert_no_track_holds_two_slices_at_once(events)
    assert json.loads(out.read_text())["otherData"]["time_unit"].startswith("cycles")

    # node 4 alone: its visits of packets 7, 8 and 9, no arrow (the other ends are cut off)
    write_packet_trace(hops, topology, out, nodes=[4])
    events = json.loads(out.read_text())["traceEvents"]
    assert {(e["name"], e["pid"] - 1) for e in events if e["ph"] == "X"} == {("packet 7", 4), ("packet 8", 4),
                                                                             ("packet 9", 4)}
    assert not [e for e in events if e.get("cat") == "hop"]
    # cycles 0-1: only packet 9's visit of node 3 has begun by cycle 1 (it leaves at 1; packet 7 leaves node 0 at
    # 2); its arrow into node 4 is not kept, since that visit begins at 2, after the window
    write_packet_trace(hops, topology, out, cycles=(0, 1))
    events = json.loads(out.read_text())["traceEvents"]
    assert {(e["name"], e["pid"] - 1) for e in events if e["ph"] == "X"} == {("packet 9", 3)}
    assert not [e for e in events if e.get("cat") == "hop"]
    # a window names only the nodes it shows: the file stays small on a large network
    assert {e["pid"] - 1 for e in events if e["ph"] == "M"} == {3}


@pytest.mark.parametrize("name, algorithm", [("explicit_e5", "6bcast"), ("t3d_mesh_8x8", "pcp"),
                                             ("circuit_torus_16x16", "dc")])
def test_a_broadcast_on_a_shipped_config_has_every_hop_in_its_trace_and_a_link_map(tmp_path, name, algorithm):
    """harts broadcast --packet-trace --link-map on each switching: paper 000's 6-BCAST over explicit_e5's own
    packets on the cut-through kernel, PCP's coded paths by wormhole and divide-and-conquer's circuits on the
    idle configs that harts run refuses (nothing to run)."""
    from harts.broadcasts.runner import run_broadcast
    config = REPO / "configs" / f"{name}.yaml"
    out, drawn = tmp_path / "trace.json", tmp_path / "map.png"
    assert main(["broadcast", "--config", str(config), "--algorithm", algorithm, "--packet-trace", str(out),
                 "--link-map", str(drawn), "--json"]) == 0
    assert drawn.stat().st_size > 10_000
    result = run_broadcast(load_config(config), algorithm, hops=True).result
    assert len(result.hops) >= result.topology.n_nodes - 1  # every other node got the message by some hop
    _check_trace_holds_every_visit(result, json.loads(out.read_text())["traceEvents"])
