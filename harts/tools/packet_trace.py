"""Every packet's hops as a Chrome/Perfetto trace (JSON trace-event format; open it at ui.perfetto.dev), read
from a run's hop records (harts.machine.hops), the topology and the clock period alone, for either kernel.

Each node is a process; a visit of a packet to a node (records.HR_*) draws on the tracks of the links it
used, each a resource one packet holds at a time:

* the link it left by, from its first byte (flit) out to its last: "out <port>" on the cut-through kernel,
  "out <port> vc <c>" for the virtual channel it took on the flit-level kernel; the slice says what the
  node did (cut through, stored, injected, forwarded, teed) and how long the forward was blocked;
* the link it came in on, from its first byte (head flit) in to its last: "in <port>", or "in <port> vc
  <c>"; a packet a fault swallowed (or a probe nacked) ends here, and the slice says so.

What can overlap goes on the node's async tracks: "stored" (from the 'store' until its first byte leaves the
BMU) and "delivered" (into the NP: from its first byte into the BMU, or its head flit into an NP channel,
until the NP has it; a teed copy, which goes to the NP as it goes on, for its transmission). A flow arrow
joins each transmission to its arrival at the next node, and a packet a crashed source never sent is an
instant at that node. Times are clock cycles: the viewer's microsecond is one cycle (the file's otherData says
so). A window of cycles and a set of nodes keep the visits that touch them; a flow arrow is kept when both its
ends are.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..controller import records as R
from ..machine.hops import HopRecords
from ..network.topology import Topology
from ..output import replacing


def packet_name(uid: int) -> str:
    return f"packet {uid}" if uid < R.NP_UID_BASE else f"NP packet {uid - R.NP_UID_BASE}"


class _Tracks:
    """The thread ids of a node's link tracks, and their names, announced the first time each is used."""

    def __init__(self, hops: HopRecords, topology: Topology):
        rows = hops.rows
        self.flit = hops.kernel == "flit"
        self.names = topology.port_names
        self.ports = topology.n_ports
        links = np.concatenate([rows[R.HR_VC, rows[R.HR_IN_PORT] >= 0], rows[R.HR_OUT_VC, rows[R.HR_OUT_PORT] >= 0]])
        self.vcs = int(links.max(initial=0)) + 1
        self.named: set[tuple[int, int]] = set()

    def link(self, v: int, side: int, port: int, vc: int):
        """(metadata events, tid) of the output (side 0) or input (side 1) link `port` of node v."""
        name = f"{'out' if side == 0 else 'in'} {self.names[port]}" + (f" vc {vc}" if self.flit else "")
        tid = 1 + (side * self.ports + port) * self.vcs + (vc if self.flit else 0)
        metadata = []
        if (v, tid) not in self.named:
            self.named.add((v, tid))
            metadata.append({"ph": "M", "name": "thread_name", "pid": v + 1, "tid": tid, "args": {"name": name}})
        return metadata, tid


def trace_events(hops: HopRecords, topology: Topology, cycles: tuple[int, int] | None = None,
                 nodes: list[int] | None = None):
    """The trace events of a run's hop records, packet by packet, in cycles; only the visits at `nodes` (None:
    all) whose time at the node meets the window `cycles` (first, last; None: the whole run)."""
    rows = hops.rows
    first_in, last_in, first_out, last_out, stored = (
        hops.cycles(f) for f in (R.HR_FIRST_IN, R.HR_LAST_IN, R.HR_FIRST_OUT, R.HR_LAST_OUT, R.HR_STORED))
    kept = np.ones(rows.shape[1], bool)
    if nodes is not None:
        kept &= np.isin(rows[R.HR_NODE], nodes)
    if cycles is not None:
        came = rows[R.HR_IN_PORT] >= 0
        start = np.where(came, first_in, first_out)
        end = np.maximum(np.maximum(start, np.where(came, last_in, start)),
                         np.where(rows[R.HR_OUT_PORT] >= 0, last_out, start))
        delivered = np.isin(rows[R.HR_ACTION], (R.ACT_DELIVERED, R.ACT_TEED))
        end = np.where(delivered, np.maximum(end, last_out), end)
        kept &= (start <= cycles[1]) & (end >= cycles[0])
    blocked, credit = hops.cycles(R.HR_BLOCKED_OUTPUT), hops.cycles(R.HR_BLOCKED_CREDIT)
    tracks = _Tracks(hops, topology)
    for v in np.unique(rows[R.HR_NODE, kept]).tolist():  # the nodes the trace shows: a window stays small
        yield {"ph": "M", "name": "process_name", "pid": v + 1,
               "args": {"name": f"node {v} ({topology.coordinates(v)})"}}
        yield {"ph": "M", "name": "process_sort_index", "pid": v + 1, "args": {"sort_index": v}}

    for uid, visits in hops.by_packet():
        name = packet_name(uid)
        for k, i in enumerate(visits):
            if not kept[i]:
                continue
            v, q, d, action = (int(rows[f, i]) for f in (R.HR_NODE, R.HR_IN_PORT, R.HR_OUT_PORT, R.HR_ACTION))
            pid = v + 1
            ending = {}
            if action == R.ACT_DROPPED:
                ending["dropped"] = R.DROP_NAMES[int(rows[R.HR_FAULT, i])]
            elif action == R.ACT_NACKED:
                ending["nacked"] = True
            if q >= 0:
                metadata, tid = tracks.link(v, 1, q, int(rows[R.HR_VC, i]))
                yield from metadata
                yield {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": first_in[i],
                       "dur": last_in[i] - first_in[i], "args": {"uid": uid, **ending}}
                if k > 0 and kept[visits[k - 1]] and _arrives(rows, visits[k - 1], i, topology):
                    yield {"ph": "f", "bp": "e", "name": "hop", "cat": "hop", "id": int(visits[k - 1]), "pid": pid,
                           "tid": tid, "ts": first_in[i]}
            elif ending:
                yield {"ph": "i", "s": "p", "name": name, "pid": pid, "ts": first_in[i], "args": {"uid": uid, **ending}}
            if d >= 0:
                metadata, tid = tracks.link(v, 0, d, int(rows[R.HR_OUT_VC, i]))
                yield from metadata
                args = {"uid": uid, "sent": R.ACT_NAMES[action]}
                if tracks.flit and q == -1:
                    args["np_channel"] = int(rows[R.HR_VC, i])
                if blocked[i] > 0:
                    args["blocked_cycles"] = blocked[i]
                if credit[i] > 0:
                    args["blocked_on_credit_cycles"] = credit[i]
                yield {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": first_out[i],
                       "dur": last_out[i] - first_out[i], "args": args}
                if k + 1 < len(visits) and kept[visits[k + 1]] and _arrives(rows, i, visits[k + 1], topology):
                    yield {"ph": "s", "name": "hop", "cat": "hop", "id": int(i), "pid": pid, "tid": tid,
                           "ts": first_out[i]}
            if action == R.ACT_STORED:
                yield from _async(name, "stored", i, pid, first_out[i] - stored[i], first_out[i], {"uid": uid})
            if action in (R.ACT_DELIVERED, R.ACT_TEED):
                args = {"uid": uid, "receiver": topology.port_names[q] if q >= 0 else "NP"}
                if action == R.ACT_TEED:
                    args["teed"] = True
                elif tracks.flit:
                    args["np_channel"] = int(rows[R.HR_OUT_VC, i])
                yield from _async(name, "delivered", i, pid, first_out[i], last_out[i], args)


def _arrives(rows: np.ndarray, sent: int, arrived: int, topology: Topology) -> bool:
    """Whether visit `arrived` is where the transmission of visit `sent` came in."""
    v, d = rows[R.HR_NODE, sent], rows[R.HR_OUT_PORT, sent]
    return d >= 0 and rows[R.HR_NODE, arrived] == topology.neighbours[v, d] and \
        rows[R.HR_IN_PORT, arrived] == topology.in_port[v, d]


def _async(name: str, category: str, i: int, pid: int, start: float, end: float, args: dict):
    yield {"ph": "b", "name": name, "cat": category, "id": int(i), "pid": pid, "ts": start, "args": args}
    yield {"ph": "e", "name": name, "cat": category, "id": int(i), "pid": pid, "ts": end}


TIME_UNIT = "cycles: a microsecond in the viewer is one clock cycle"


def write_packet_trace(hops: HopRecords, topology: Topology, path: str | Path, cycles: tuple[int, int] | None = None,
                       nodes: list[int] | None = None) -> int:
    """Write the trace of a run's hop records to `path` (trace_events' window); returns the number of events."""
    count = 0
    with replacing(path) as temporary, open(temporary, "w") as out:
        out.write('{"otherData": {"time_unit": "%s"}, "traceEvents": [\n' % TIME_UNIT)
        for event in trace_events(hops, topology, cycles, nodes):
            out.write(("," if count else "") + json.dumps(event, separators=(",", ":")) + "\n")
            count += 1
        out.write("]}\n")
    return count
