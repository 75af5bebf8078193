"""`harts run --packet-trace`: the Chrome/Perfetto trace read back against what the packets did."""

import json
from collections import defaultdict
from fractions import Fraction

from harts.cli import main
from harts.machine.config import load_config
from harts.controller import records as R
from harts.machine.simulation import Simulation

CONFIG = """\
topology: {kind: hex, size: 5}
bmu: {bus_interfaces: 1}
traffic:
  packets:
    - {cycle: 0, source: 0, destination: 1, length: 512}
    - {cycle: 0, source: 60, destination: 1, length: 1024}
    - {cycle: 100, source: 0, destination: 60, length: 64}
"""
US_PER_BYTE = Fraction(3, 2) / 6  # 1.5 us cycles, 6 bytes a cycle


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
        assert abs(duration - float(1024 * US_PER_BYTE)) < 1e-9

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
        assert abs(event["ts"] - float(dl[R.DL_TICK, column] * US_PER_BYTE)) < 1e-9


def test_every_transmission_arrives_once_and_no_track_holds_two_packets_at_once(tmp_path):
    _, events = _trace(tmp_path)
    sent = [e for e in events if e["ph"] == "X" and e["args"].get("sent")]
    assert len(sent) == 4  # packet-hops: 1 + 2 + 1
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == ends and len(starts) == 4
    tracks = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in tracks.values():
        spans.sort()
        assert all(later[0] >= earlier[1] for earlier, later in zip(spans, spans[1:]))
