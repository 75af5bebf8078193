"""Every packet's hops as a Chrome/Perfetto trace (JSON trace-event format; open it at ui.perfetto.dev).

Each node is a process with one track per transmitter ("out <port>": a slice from a packet's first byte
out to its last, named by the packet and saying whether it cut through or left the BMU) and one per
receiver ("in <port>": first byte in to last byte in). What can overlap goes on async tracks of the
node: "stored" (from the receiver's 'store' until the packet leaves this node's BMU) and "delivered"
(from the 'deliver' or 'tee' until the NP has it). A flow arrow joins each transmission to its arrival
at the next node. Times are microseconds of the modelled hardware (timing.clock_period_us per cycle).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..controller import records as R

from ..controller import state as S

_HOW = {S.HOP_CUT: "cut-through", S.HOP_SEND: "from the BMU"}


def packet_name(uid: int) -> str:
    return f"packet {uid}" if uid < R.NP_UID_BASE else f"NP packet {uid - R.NP_UID_BASE}"


def trace_events(result):
    """The trace events of a run kept with run(hops=True), in the order of the hop log."""
    topology = result.topology
    ports = topology.n_ports
    us_per_tick = result.config["timing.clock_period_us"] / result.ticks_per_cycle
    hops = result.hops
    kind, uid, node, port = (hops[S.HL_KIND], hops[S.HL_UID], hops[S.HL_NODE], hops[S.HL_PORT])
    start, end = hops[S.HL_START] * us_per_tick, hops[S.HL_END] * us_per_tick

    for v in range(topology.n_nodes):
        pid = v + 1
        yield {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"node {v} ({topology.coordinates(v)})"}}
        yield {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": v}}
        for q, label in enumerate(topology.port_names):
            yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1 + q, "args": {"name": f"out {label}"}}
            yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": 1 + ports + q, "args": {"name": f"in {label}"}}

    # a stored packet leaves this node's BMU with its next transmission from here
    departures = defaultdict(list)
    for i in np.nonzero(kind == S.HOP_SEND)[0]:
        departures[int(uid[i]), int(node[i])].append(int(i))
    for i in range(hops.shape[1]):
        k, u, v, q = int(kind[i]), int(uid[i]), int(node[i]), int(port[i])
        name = packet_name(u)
        if k in _HOW:
            yield {"ph": "X", "name": name, "pid": v + 1, "tid": 1 + q, "ts": start[i], "dur": end[i] - start[i],
                   "args": {"uid": u, "sent": _HOW[k]}}
            if i + 1 < hops.shape[1] and kind[i + 1] == S.HOP_RECEIVE and uid[i + 1] == u:
                yield {"ph": "s", "name": "hop", "cat": "hop", "id": i, "pid": v + 1, "tid": 1 + q, "ts": start[i]}
        elif k == S.HOP_RECEIVE:
            yield {"ph": "X", "name": name, "pid": v + 1, "tid": 1 + ports + q, "ts": start[i],
                   "dur": end[i] - start[i], "args": {"uid": u}}
            yield {"ph": "f", "bp": "e", "name": "hop", "cat": "hop", "id": i - 1, "pid": v + 1,
                   "tid": 1 + ports + q, "ts": start[i]}
        elif k == S.HOP_STORE:
            sends = departures[u, v]
            after = bisect_right(sends, i)
            leaves = start[sends[after]] if after < len(sends) else end[i]
            yield {"ph": "b", "name": name, "cat": "stored", "id": i, "pid": v + 1, "ts": start[i],
                   "args": {"uid": u, "ready": end[i]}}
            yield {"ph": "e", "name": name, "cat": "stored", "id": i, "pid": v + 1, "ts": leaves}
        elif k == S.HOP_DELIVER:
            yield {"ph": "b", "name": name, "cat": "delivered", "id": i, "pid": v + 1, "ts": start[i],
                   "args": {"uid": u, "receiver": topology.port_names[q]}}
            yield {"ph": "e", "name": name, "cat": "delivered", "id": i, "pid": v + 1, "ts": end[i]}


def write_packet_trace(result, path: str | Path) -> int:
    """Write the trace of a run kept with run(hops=True) to `path`; returns the number of events."""
    count = 0
    with open(path, "w") as out:
        out.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
        for event in trace_events(result):
            out.write(("," if count else "") + json.dumps(event, separators=(",", ":")) + "\n")
            count += 1
        out.write("]}\n")
    return count
