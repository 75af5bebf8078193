"""The records both kernels write and read in the same layout: the traffic they are handed, the NP events
and sends of NP programs, and the logs the caller drains (deliveries, packets, hops), with the codes those
records carry (routes, notifications, faults, drops, contention marks, payload values).

Logs are field-major, ``log[FIELD, index]``, because the caller analyses whole columns at once; the NP
event rows are record-major, ``events[event, FIELD]``, because a procedure reads one event at a time. Times
are ticks: a byte time of a link on the cut-through kernel (``bytes_per_cycle`` ticks a cycle), a cycle
on the flit-level kernel (one tick a cycle). The field constants below are the only place the layouts are
defined; numba folds them as compile-time constants.
"""

from collections import namedtuple

import numpy as np

NP_UID_BASE = 1 << 48  # uids of packets NPs send on their own start here; traffic packets: their traffic index

# ---- how a packet is routed (the microprogram reads it as the pseudo-field 'route') ---------------------------
ROUTE_DESTINATION = 0  # by its route offsets towards a destination (unicast)
ROUTE_DIRECTION = 1  # straight on in one direction (HARTS send_packet worms)
ROUTE_SEGMENTS = 2  # source-routed: a list of (port, hops, code) segments in its header
ROUTE_TABLE = 3  # a route table names the port at every node
ROUTE_NAMES = {"destination": ROUTE_DESTINATION, "direction": ROUTE_DIRECTION, "segments": ROUTE_SEGMENTS,
               "table": ROUTE_TABLE}

# ---- what the NP that sent a packet asks to hear of it (bits) -------------------------------------------------
NOTIFY_DELIVERED = 1  # the NP of every node that gets a copy runs its procedure on it
NOTIFY_SENT = 2  # the sending NP hears when its last byte (flit) has left the node
NOTIFY_ARRIVED = 4  # the sending NP hears when the packet is in its destination's NP (an end-to-end acknowledgment)

# ---- why a packet was dropped ---------------------------------------------------------------------------------
DROP_CRASHED_NODE = 1
DROP_DEAD_LINK = 2
DROP_BYZANTINE_NODE = 3
DROP_BMU_OVERFLOW = 4  # to be stored in a full BMU (bmu.when_full: drop)
DROP_NAMES = {DROP_CRASHED_NODE: "crashed node", DROP_DEAD_LINK: "dead link", DROP_BYZANTINE_NODE: "Byzantine node",
              DROP_BMU_OVERFLOW: "BMU overflow"}

# ---- the contention certificate: a packet that never waited took exactly its zero-load time ------------------
CONTENTION_STORED = 1  # a receiver stored it in the BMU because no transmitter was free
CONTENTION_RETRIED = 2  # a transmitter reservation for it failed (else-branch or retry); flit level: a forward
# found no free VC
CONTENTION_QUEUED = 4  # it waited behind another packet: its receiver (input VC) started on it only after its
# header was in, or the BMU ready queue, its NP or its NP's queue held it past its time
CONTENTION_BLOCKED = 8  # flit level: a flit of it ready to go waited for a link another packet's flit held, for
# the credit of a buffer slot another packet's flit held, or lost the switch to another packet
CONTENTION_NAMES = {CONTENTION_STORED: "stored", CONTENTION_RETRIED: "retried", CONTENTION_QUEUED: "queued",
                    CONTENTION_BLOCKED: "blocked"}

# ---- payload values -------------------------------------------------------------------------------------------
VALUE_TRUE = 1  # the value every broadcast sends
VALUE_ALTERED = 2  # what Byzantine nodes substitute (all the same: the worst case, colluding)

# ---- node faults ----------------------------------------------------------------------------------------------
FAULT_NONE = 0
FAULT_CRASH = 1  # receives and forwards nothing
FAULT_ALTER = 2  # Byzantine: forwards and relays everything with an altered payload
FAULT_DROP = 3  # Byzantine: swallows everything that reaches it
FAULT_BOGUS = 4  # Byzantine: forwards correctly, and forges packets in answer to every copy it gets

# ---- NP events: one row each, handed to the NP procedure as it is (see harts.np.program) -----------------------
# The first E_PUBLIC words are what a procedure may read; the header words follow at E_HEADER.
E_KIND = 0  # EVENT_* of harts.np.program
E_NODE = 1
E_TICK = 2  # when it reached the NP (deliveries: the last byte, or flit, in)
E_PORT = 3  # receiver it arrived on, -1
E_DIRECTION = 4  # direction it was travelling in, -1
E_SENDER = 5  # node whose NP sent the packet
E_LENGTH = 6
E_ROUTE = 7  # ROUTE_* of the packet
E_HOPS = 8
E_CUTS = 9
E_STORES = 10
E_ARGUMENT = 11  # initiations: the traffic's argument; timers: the value set; else 0
E_UID = 12
E_ORIGIN = 13
E_SERIAL = 14  # delivery serial number (the parent of what the procedure sends), -1
E_VALUE = 15
E_CORRUPT = 16
E_CONTENTION = 17
E_FORGED = 18  # 1: a forgery (no Byzantine node answers it with more forgeries)
E_DISTANCE = 19  # initiations: the traffic's distance (send_packet worms)
E_NEXT = 20  # kernel: link in the node's inbox
E_HEADER = 21

# ---- delivery log: one column per copy delivered to an NP -----------------------------------------------------------
DL_SERIAL = 0
DL_UID = 1
DL_ORIGIN = 2
DL_NODE = 3
DL_TICK = 4  # tick the last byte (flit) reached the NP
DL_HOPS = 5
DL_CUTS = 6
DL_STORES = 7
DL_PORT = 8  # receiver it arrived on
DL_DIR = 9  # direction it was travelling in
DL_SENDER = 10
DL_DEST = 11
DL_PARENT = 12
DL_CREATE = 13
DL_ROUTE = 14
DL_VALUE = 15
DL_CORRUPT = 16
DL_CONTENTION = 17
DL_LENGTH = 18
DL_INJECTED = 19  # tick its source's router first took it from the NP (its injection)
DL_ROWS = 20

# ---- packet log: one column per packet record, written when it completes -------------------------------------------
PL_UID = 0
PL_ORIGIN = 1
PL_SENDER = 2
PL_DEST = 3
PL_LEN = 4  # bytes (cut-through) or flits (flit level), header included
PL_ROUTE = 5
PL_PARENT = 6
PL_CREATE = 7
PL_HOPS = 8
PL_CUTS = 9
PL_STORES = 10
PL_BYTES_SENT = 11  # bytes (flits) put on links by this record
PL_BYTES_RECEIVED = 12  # ... taken in at the far ends, or swallowed by a fault there
PL_DROPPED = 13
PL_CONTENTION = 14
PL_DELIVERIES = 15
PL_COMPLETE = 16  # tick its last holder let go
PL_DIR = 17  # direction of its last hop (its send port if it never left)
PL_HOPS_INHERITED = 18
PL_FORGED = 19
PL_CONTENDED_AT = 20  # tick it first waited itself (CONTENTION_* marks inherited from a copy do not count), -1
PL_CONTENDED_NODE = 21  # ... the node where it waited, -1
PL_CONTENDED_KIND = 22  # ... the CONTENTION_* mark of that first wait, 0
PL_ROWS = 23

# ---- hop log (only when a tool asks for it): one column per visit of a packet to a node --------------------------
HR_UID = 0  # the packet's uid
HR_NODE = 1
HR_IN_PORT = 2  # the receiver it came in on; -1: handed over by this node's NP
HR_OUT_PORT = 3  # the transmitter it left by; -1: to this node's NP only; -2: nowhere (dropped, or a nacked probe)
HR_VC = 4  # the input VC it held here (the NP channel for a packet from the NP); 0 on the cut-through kernel
HR_OUT_VC = 5  # the VC it took on the link out (the NP channel for a delivery); 0 on the cut-through kernel
HR_FIRST_IN = 6  # its head in: first byte at the receiver, head flit usable in the input VC, or handed over
HR_LAST_IN = 7  # its tail in
HR_FIRST_OUT = 8  # its head out: first byte on the link (or into the BMU for the NP), head flit across the switch;
# -1 where it went nowhere (HR_OUT_PORT -2)
HR_LAST_OUT = 9  # its tail out: last byte on the link (or the NP has it); the tail flit's link time ended; -1 likewise
HR_ACTION = 10  # ACT_*: what this node did with it
HR_STORED = 11  # ticks it was held whole in the BMU (ACT_STORED), else 0
HR_BLOCKED_OUTPUT = 12  # ticks it waited for an output: a refused reservation or VC, a busy link, a lost switch
HR_BLOCKED_CREDIT = 13  # flit level: ticks a flit of it waited for the credit of a slot another packet held
HR_FAULT = 14  # DROP_* where ACT_DROPPED, else 0
HR_ROWS = 15

ACT_CUT_THROUGH = 0  # sent on as it arrived (virtual cut-through)
ACT_STORED = 1  # stored whole in the BMU, then sent on from it
ACT_FORWARDED = 2  # flit level: switched on, flit by flit
ACT_INJECTED = 3  # sent by this node's NP onto a link
ACT_DELIVERED = 4  # handed to this node's NP
ACT_TEED = 5  # sent on and handed to this node's NP at once (RELAY's tee, coded paths' absorb-and-pass)
ACT_DROPPED = 6  # swallowed by a fault (HR_FAULT says which) or a full BMU
ACT_NACKED = 7  # circuit switching: the probe found its link held and gave up here; the source sends it again
ACT_NAMES = {ACT_CUT_THROUGH: "cut through", ACT_STORED: "stored", ACT_FORWARDED: "forwarded",
             ACT_INJECTED: "injected", ACT_DELIVERED: "delivered", ACT_TEED: "teed", ACT_DROPPED: "dropped",
             ACT_NACKED: "nacked"}

# ---- the measured deliveries: logs.latencies[LT_*, row] (observations.py writes them) -----------------------------
LT_TOTAL = 0  # ticks from its creation to its delivery
LT_QUEUEING = 1  # ticks from its creation to its injection: the cycle its source's router took it from the NP
LT_HOPS = 2  # links it crossed
LT_ROWS = 3

# ---- what the window saw at each node: logs.window[node, WN_*], in bytes (cut-through) or flits (flit level) -------
# of traffic unicasts only (uids below NP_UID_BASE, routed by destination)
WN_EJECTED_FIRST = 0  # delivered at this node in the window's first half
WN_EJECTED_SECOND = 1  # ... in its second half
WN_INJECTED_FIRST = 2  # sent by this node and injected in the window's first half (counted at its delivery)
WN_INJECTED_SECOND = 3  # ... in its second half
WN_LOST_FIRST = 4  # sent by this node, created in the window's first half and dropped by a named fault
WN_LOST_SECOND = 5  # ... created in its second half
WN_COLUMNS = 8  # a node's row is one cache line

# ---- the traffic table: what the NPs are asked to send, in creation order ------------------------------------------
TR_CREATE = 0  # tick
TR_SOURCE = 1
TR_DEST = 2  # unicast destination, -1
TR_LENGTH = 3
TR_KIND = 4  # TRAFFIC_*
TR_DIRECTION = 5  # initiations: a direction for the NP procedure (HARTS: a send_packet worm's)
TR_DISTANCE = 6  # initiations: a distance (HARTS: a send_packet worm's)
TR_ARGUMENT = 7  # initiations: the procedure's argument (HARTS: the broadcast algorithm)
TR_UID = 8  # its index in the whole traffic
TR_ROWS = 9

TRAFFIC_UNICAST = 0  # the NP sends it to its destination; no procedure runs on it
TRAFFIC_INITIATE = 1  # the NP runs its procedure's initiation (a broadcast, a worm, a collective)

# ---- bundles both kernels take --------------------------------------------------------------------------------
Logs = namedtuple("Logs", ["stats", "deliveries", "delivery_header", "packets", "hops", "latencies", "observed",
                           "window"])
# delivery_header[row, word]; latencies[LT_*, row] (the measured deliveries'), observed[OB_*] and window[node, WN_*]:
# observations.py


def empty_logs(stats: np.ndarray, observed: np.ndarray, rows: int, header_words: int, keep: bool,
               hops: bool, window: np.ndarray) -> Logs:
    """Logs of at least `rows` rows: the latencies always, the delivery and packet logs only if the run `keep`s
    their rows, the hop log only if it keeps `hops`; with `window`, the measurement window's counts (window_table).
    Zeros, not a fill: the OS maps their pages as rows are written.

    A log is field-major, so a record's fields are a column's length apart. With a power-of-two length (the logs'
    usual 32,768 rows) all 19-23 fields of a record fell in one set of the L1 cache, whose sets repeat every 4 KB and
    hold 8 lines: each record written evicted the lines the one before had written to. The rows are rounded up to an
    odd number of 64-byte lines, which puts the fields in different sets (bench/SPEED.md, the stop of 27 November,
    14:31-17:31)."""
    rows = (-(-rows // 8) | 1) * 8
    kept = rows if keep else 0
    return Logs(stats, np.zeros((DL_ROWS, kept), np.int64), np.zeros((kept, max(header_words, 1)), np.int64),
                np.zeros((PL_ROWS, kept), np.int64), np.zeros((HR_ROWS, rows if hops else 0), np.int64),
                np.zeros((LT_ROWS, rows), np.int64), observed, window)


def window_table(nodes: int) -> np.ndarray:
    """The measurement window's counts of a run, zero: WN_* per node."""
    return np.zeros((nodes, WN_COLUMNS), np.int64)


def grown_logs(logs: Logs, need: int, most: int) -> Logs:
    """Drained logs, for the rest of the run: twice as many rows, up to `most` (or 2 x `need` if one step of the
    kernel may write `need` rows and they hold fewer), or the same logs if they have that many already."""
    capacity = logs.latencies.shape[1]  # every log the run writes has as many rows
    rows = min(2 * capacity, most)
    if capacity < need:
        rows = max(rows, 2 * need)
    if rows <= capacity:
        return logs
    return empty_logs(logs.stats, logs.observed, rows, logs.delivery_header.shape[1], logs.packets.shape[1] > 0,
                      logs.hops.shape[1] > 0, logs.window)


# What an NP procedure may read: its own parameters, the topology, where its header fields are
# (field[i]: header word of its i-th declared field) and where the route words are (harts.np.program).
System = namedtuple("System", ["params", "neighbours", "in_port", "field", "route"])
Processor = namedtuple("Processor", ["events", "state", "sends", "system"])


def event_pool(capacity: int, header_words: int) -> np.ndarray:
    """NP event rows, free ones chained through E_NEXT (the kernel takes them from the head)."""
    events = np.zeros((capacity, E_HEADER + max(header_words, 1)), dtype=np.int64)
    events[:, E_NEXT] = np.arange(1, capacity + 1)
    events[-1, E_NEXT] = -1
    return events


def grow_events(events: np.ndarray, stats: np.ndarray, free_head: int, free_count: int) -> np.ndarray:
    """Twice the event rows; the new half joins the free list whose head and length are stats[free_head] and
    stats[free_count]."""
    old = events.shape[0]
    bigger = event_pool(2 * old, events.shape[1] - E_HEADER)
    bigger[:old] = events
    bigger[2 * old - 1, E_NEXT] = stats[free_head]
    stats[free_head] = old
    stats[free_count] += old
    return bigger
