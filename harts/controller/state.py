"""The cut-through kernel's state: plain int64 tables, their field layout, and the named bundles the kernel
takes. The records it shares with the flit-level kernel (traffic, NP events, the logs) are in records.py.

The kernel's working tables are record-major, ``table[index, FIELD]`` (a context, a packet record, a
transmitter, a node, an NP event, a header): the kernel handles one record at a time, and a record's
fields then share cache lines. The logs the caller drains are field-major, ``log[FIELD, index]``, because
the caller analyses whole columns at once. All times are ticks, the byte time of a link; a controller
cycle is ``bytes_per_cycle`` ticks. The field constants below are the only place the layout is defined;
numba folds them as compile-time constants.

The tables travel as a few named tuples (``Machine``, ``Controller``, ``Packets``, ``Logs``, ``Clock``,
``Processor``), so adding a table touches its bundle and its allocation, not every function signature.
"""

from collections import namedtuple

import numpy as np

from .lines import line_table

NEVER = np.int64(2**62)  # a tick that never comes

# ---- packet records: a pool, recycled once a record's last holder lets go --------------------------------
# The 16 fields a cut-through hop may read or write come first and fill the record's first two cache lines (the
# table's rows start on a line, line_table): on E-41, whose packets in flight outgrow a 1 MiB cache, a hop then
# misses on two lines of its packet's record, not on the four or five its fields spread over before (bench/SPEED.md,
# the stop of 27 November, 17:17-20:17).
PK_UID = 0  # serial number: the traffic index for traffic packets, then in order of creation
PK_LEN = 1  # length in bytes, header included
PK_ROUTE = 2  # ROUTE_*: how the microprogram is meant to route it
PK_DIR = 3  # direction it travels in (each transmitter sets it; before the first hop, the port it was sent to)
PK_NEXT = 4  # link in whichever list holds it (free list, BMU ready queue, receiver pending list)
PK_ARRIVE = 5  # tick its first byte reaches the receiver it is pending at
PK_HOLDERS = 6  # contexts and queues holding the record; at 0 it is complete and recycled
PK_RELEASED = 7  # the latest tick a holder let go (releases run ahead of the clock may come out of order)
PK_HOPS = 8  # links traversed so far (inherited from the copy an NP sent it from)
PK_CUTS = 9  # nodes cut through so far (likewise)
PK_STORES = 10  # store-and-forward restarts so far: BMU stores and NP re-sends (likewise)
PK_BYTES_SENT = 11  # bytes put on links by this record
PK_BYTES_RECEIVED = 12  # bytes taken in by receivers, or swallowed by a fault at the far end
PK_DROPPED = 13  # DROP_* reason if a fault or a full BMU swallowed it, else 0
PK_BUS_TICKS = 14  # ticks a receiver's slot of the time-sliced bus takes to carry it (ceil(length / slot))
PK_REFUSED_AT = 15  # tick a forward of it was first refused at the node it is at; -1: not refused
PK_ORIGIN = 16  # uid of the traffic record it descends from (a broadcast's initiation, or itself)
PK_SENDER = 17  # node whose NP sent it
PK_DEST = 18  # destination node (ROUTE_DESTINATION), else -1
PK_NOTIFY = 19  # NOTIFY_* bits
PK_PARENT = 20  # serial of the delivery whose NP event sent it, -1 if none
PK_CREATE = 21  # tick the NP was asked to send it
PK_READY = 22  # tick from which the BMU may hand it to a bus interface
PK_IN_BMU = 23  # 1 from 'store' until a bus interface takes it from the ready queue
PK_VALUE = 24  # the payload's value (what a receiving node decides on)
PK_CORRUPT = 25  # 1: the payload was damaged on a link, its checksum fails
PK_CONTENTION = 26  # CONTENTION_* bits: what it waited for (inherited from the copy it was sent from)
PK_DELIVERIES = 27  # copies delivered to NPs
PK_FORGED = 28  # 1: forged by a Byzantine node (never answered with more forgeries)
PK_HOPS_INHERITED = 29  # the hops it started with (those of the copy an NP sent it from)
PK_PREV = 30  # the record before it in the BMU ready queue
PK_WAITS_FOR = 31  # per-output BMU queues: the transmitter whose queue it waits in, or was let out of; -1 none
# where and when it first waited itself (packets.mark_contention); PK_CONTENDED_KIND 0: it never has
PK_CONTENDED_AT = 32
PK_CONTENDED_NODE = 33
PK_CONTENDED_KIND = 34  # the CONTENTION_* mark of that wait
# what the hop record of its visit to a node needs once the context that took it in has let go (written only
# with PR_HOP_LOG): the BMU that holds it sends it later
PK_VISIT_PORT = 35  # the receiver it came in on; -1: from this node's NP
PK_VISIT_IN = 36  # tick its first byte reached that receiver; from the NP: the tick it was ready in the BMU
PK_STORED_AT = 37  # tick of the receiver's 'store'
PK_DISTANCE = 38  # ROUTE_DESTINATION: hops of a shortest route from its sender to its destination (the checks')
PK_INJECTED = 39  # tick a bus interface of its sender's BMU first took it from the ready queue, -1 before
PK_ROWS = 40

# ---- contexts: P link receivers then B BMU bus interfaces per node ----------------------------------------
# A context row is one 64-byte line (a line-aligned table of 16 int32): the four columns only a link receiver uses
# (its pending list, its last 'done' and when it resumes) share their places with the four only a bus interface
# uses, so that an event reads one line where 18 columns took two (bench/SPEED.md, the stop of 28 November,
# 04:44-07:44).
CX_PC = 0
CX_PKT = 1  # packet record being handled, -1 when idle
CX_ARRIVE = 2  # tick the packet's first byte arrived (link receivers)
CX_STREAM_START = 3  # tick the receiver began writing the packet on the bus / its first byte left the BMU
CX_STREAMING = 4  # 1 once forward/tee/deliver/store has started
CX_HEADER = 5  # 1 once wait_header made the header registers (the packet's header words) readable
CX_DIR = 6  # direction the packet travels in, for 'via: straight'
CX_RETRY = 7  # first tick a failed forward/tee could succeed ('else: retry' sleeps until then)
CX_PRIVATE_RUN = 8  # private instructions executed on the packet since its last shared one
CX_RETRY_PORT = 9  # after a refused forward: the port of the transmitter that frees first (CX_RETRY)
# link receivers only:
CX_PENDING_HEAD = 10  # packets that arrived while busy, oldest first
CX_PENDING_TAIL = 11
CX_DONE_TICK = 12  # tick of the last 'done', which may lie ahead of the clock (run-ahead)
CX_RESUME_TICK = 13  # ... and the tick a packet that arrived before that 'done' can start
# BMU bus interfaces only, in the same places:
CX_FROM_STORE = 10  # the packet was stored here in transit (its bytes are freed at 'done')
CX_TAKEN = 11  # tick the packet was taken from the queue
CX_IDLE_FROM = 12  # tick from which an idle interface can take a packet (after its 'done')
CX_REFUSED_AT = 13  # tick its forward was first refused while held (-1: not refused)
CX_ROWS = 16
# Context rows are int32, half the bytes of int64: they were the largest table the kernel reads at random (E-41:
# 59,052 rows, 8.1 of its 17.1 MB), and E-9 to E-41 ran faster in int32 in 15 of 16 alternating pairs (README,
# Speed). Every tick written into one is checked against CX_TICK_LIMIT: past it the run stops with ERR_TICK_RANGE
# (MODEL.md, Time).
CX_DTYPE = np.int32
CX_TICK_LIMIT = 2**31 - 1

# ---- transmitters: one per node and port -------------------------------------------------------------------
TX_FREE = 0  # tick from which the next packet may start (after the forced idle gap)
TX_BYTES = 1  # bytes sent
TX_PACKETS = 2
TX_DEAD = 3  # 1: what this transmitter sends is lost on the link
TX_UID = 4  # uid of the packet it sent last (for traces)
TX_START = 5  # tick that packet's first byte left
# the BMU's per-output queue for this transmitter (bmu.queues: per_output): packets that were refused it
TX_WAIT_HEAD = 6
TX_WAIT_TAIL = 7
TX_WAIT_TURN = 8  # the packet of that queue now back in the ready queue for its turn, -1 none
TX_ROWS = 9

# ---- nodes: BMU and network processor ------------------------------------------------------------------------
ND_BMU_USED = 0  # bytes of transit packets stored
ND_BMU_CREDIT = 1  # bytes promised to packets streaming in (virtual cut-through flow control)
ND_BMU_PEAK = 2  # peak of used + credit
ND_BMU_INTEGRAL = 3  # sum over ticks of bytes used, for the utilisation
ND_BMU_CHANGED = 4  # tick ND_BMU_INTEGRAL was last brought up to date
ND_QUEUE_HEAD = 5  # BMU ready queue, ordered by PK_READY
ND_QUEUE_TAIL = 6
ND_QUEUE_LEN = 7
ND_NP_FREE = 8  # tick from which the NP can take new work
ND_INBOX_HEAD = 9  # NP events waiting for the NP, in time order
ND_INBOX_TAIL = 10
ND_FAULT = 11  # FAULT_*
ND_INTERFACE_BUSY = 12  # ticks the BMU's bus interfaces held a packet (taken .. its 'done' finished, or given back)
ND_INTERFACE_BLOCKED = 13  # ... of which the packet waited for a refused transmitter ('else: retry')
ND_QUEUE_INTEGRAL = 14  # sum over ticks of the ready queue's length
ND_QUEUE_CHANGED = 15  # tick ND_QUEUE_INTEGRAL was last brought up to date
ND_LOOKS_SKIPPED = 16  # latest tick a bus interface skipped its look at the ready queue at (bmu_next_look); -1 none
ND_ROWS = 17

# ---- run-wide scalars -------------------------------------------------------------------------------------------
ST_TIME = 0  # the tick being (or last) processed
ST_ERROR = 1
ST_ERROR_CONTEXT = 2
ST_ERROR_PC = 3
ST_ERROR_CYCLE = 4
ST_ERROR_PACKET = 5  # uid
ST_ERROR_DETAIL = 6  # e.g. the port of a missing link
ST_DELIVERIES = 7  # rows in the delivery log
ST_DELIVERY_SERIAL = 8  # deliveries so far
ST_LOGGED = 9  # rows in the packet log
ST_UID_NEXT = 10
ST_FREE_HEAD = 11  # packet pool free list
ST_FREE_COUNT = 12
ST_IN_FLIGHT = 13  # packet records in use
ST_IN_FLIGHT_PEAK = 14
ST_EVENT_FREE_HEAD = 15  # NP event pool free list
ST_EVENT_FREE_COUNT = 16
ST_STORED_IN = 17  # bytes written into BMUs as transit packets
ST_STORED_OUT = 18  # bytes of stored transit packets sent on
ST_FIFO_PEAK = 19
ST_INSTRUCTIONS = 20
ST_LAST_PROGRESS = 21
ST_NEXT_TRAFFIC = 22  # first record of the traffic table not yet handed to its NP
ST_CUT_THROUGHS = 23
ST_PAUSED = 24  # PAUSE_*: why the kernel returned
ST_DROPS = 25  # packets swallowed by a crashed node, a dead link, a Byzantine node or a full BMU
ST_CORRUPTED = 26  # link transmissions that damaged the payload
ST_FORGED = 27  # packets forged by Byzantine nodes
ST_RANDOM = 28  # state of the kernel's random generator (link corruption)
ST_OVERFLOWS = 29  # packets dropped because the BMU that had to store them was full
ST_HOPS = 30  # packet-hops: link transmissions
ST_CURRENT = 31  # event id being processed in this tick, -1 before the first
ST_EVENTS = 32  # events processed
ST_HEAP_SIZE = 33  # far-future events in the clock's overflow heap
ST_STARTED = 34  # 1 once the first tick began
ST_LATEST = 35  # the latest tick an instruction executed at, which may lie ahead of the clock (run-ahead)
ST_TICKS = 36  # ticks the clock stopped at (ticks with work)
ST_HOP_ROWS = 37  # rows in the hop log (records.HR_*)
ST_NEXT_DUE = 38  # the id due after ST_CURRENT in this tick, as last looked up (-1: none), or DUE_UNKNOWN
ST_ROWS = 39
DUE_UNKNOWN = -2

PAUSE_NONE = 0
PAUSE_SLICE = 1  # reached PR_PAUSE_AT: show progress, honour Ctrl-C, or let an observer look
PAUSE_ROOM = 2  # a pool or log is nearly full: grow or drain it
PAUSE_TRAFFIC = 3  # the traffic table is used up and more traffic follows

# error codes (ST_ERROR)
ERR_NONE = 0
ERR_FIFO_OVERFLOW = 1
ERR_TRUNCATED = 2
ERR_DROPPED = 3
ERR_BAD_CONTEXT = 4
ERR_NO_HEADER = 5
ERR_TWO_STREAMS = 6
ERR_NO_LINK = 7  # a packet sent onto a port without a link
ERR_NO_ROUTE = 8  # forward by a route the packet does not have (arrived, no segment left, no table entry)
ERR_DEADLOCK = 9
ERR_CYCLE_LIMIT = 10
ERR_TOO_MANY_SENDS = 11  # an NP procedure returned more sends than fit
ERR_LOOP = 12  # a context ran LOOP_LIMIT private instructions in a row on one packet
ERR_TICK_RANGE = 13  # a tick past CX_TICK_LIMIT was to be held in a context row (ST_ERROR_DETAIL: the tick)

# ---- parameters (durations in ticks) --------------------------------------------------------------------------
PR_BYTES_PER_CYCLE = 0
PR_HEADER_BYTES = 1
PR_IDLE_GAP_BYTES = 2
PR_BUS_DELAY = 3
PR_LINK_DELAY = 4
PR_FIFO_BYTES = 5
PR_BMU_CAPACITY = 6
PR_BMU_SETUP = 7
PR_NP_SEND = 8
PR_NP_RECEIVE = 9
PR_DELIVER = 10
PR_PORTS = 11
PR_BUS_INTERFACES = 12
PR_LAST_TICK = 13
PR_DEADLOCK_TICKS = 14
PR_ENTRY_RECEIVE = 15
PR_ENTRY_INJECT = 16
PR_SLOT_BYTES = 17
PR_PAUSE_AT = 18  # return before processing a tick past this one
PR_CORRUPTION_PER_MILLION = 19  # probability that a link transmission damages the payload, x 1e6
PR_BMU_DROPS_WHEN_FULL = 20  # 1: a full BMU drops a packet it should store; 0: cut-through credit flow control
PR_HEADER_WORDS = 21  # W: words of a packet header (route words, then fields)
PR_AXES = 22  # A: route offsets, header words 0..A-1
PR_SEGMENT_WORD = 23  # header word of the current segment index, -1 without segment routing
PR_SEGMENTS = 24  # K: segment slots; segment k is (port, hops, code) at words SEGMENT_WORD+1+3k..
PR_TABLE_WORD = 25  # header word holding a table-routed packet's route table, -1 without
PR_RUN_AHEAD = 26  # 1: a context runs its private instructions in one event (0: one event per instruction)
PR_TRAFFIC_MORE = 27  # 1: more traffic follows the current table
PR_ROOM = 28  # free records, NP events and log rows one event may need
PR_REGISTER_WORDS = 29  # R: header words the microprogram may read or write (route words, its fields);
# the words after them belong to the NP program and go from packet to packet untouched
PR_FAULTS = 30  # 1: some node or link is faulty or links damage payloads (else the checks are skipped)
PR_BMU_PER_OUTPUT = 31  # 1: a bus interface refused a transmitter gives its packet back to wait for that output
PR_HOP_LOG = 32  # 1: write the hop log (records.HR_*) and what it needs in the packet records
PR_TIE_KEY = 33  # routing.torus_tie: 0, a tie half-way round a torus ring goes +; else drawn from this key
PR_ID_NODE_MULTIPLIER = 34  # the node of event id e is (e * this) >> PR_ID_NODE_SHIFT (divider.node_divider)
PR_ID_NODE_SHIFT = 35
PR_ROWS = 36

# ---- the clock: a timing wheel of event ids (NP of node v: v*(S+1); its context slot s: v*(S+1)+1+s) -------------
WHEEL_TICKS = 4096  # ticks the wheel spans; later events wait in an overflow heap
# where an id waits, in the low two bits of its clock.entry (clock._entry)
EV_IDLE = 0  # nowhere: not due (its entry is EV_IDLE itself)
EV_WHEEL = 1
EV_TICK = 2  # in the list of this tick
EV_HEAP = 3

# ---- bundles --------------------------------------------------------------------------------------------------
# links: link_table's row per node, its neighbours and the in-ports their links arrive on, in one line
Machine = namedtuple("Machine", ["code", "params", "links", "axis_positive", "axis_negative",
                                 "shape", "offset_table", "route_tables"])
# Header tables are record-major (header[record, word]) so that one header is a contiguous row.
# tee_registers: the header registers a tee's delivered copy carries, saved before its forward (receiver.py)
Controller = namedtuple("Controller", ["ctx", "tee_registers", "tx", "node"])
Packets = namedtuple("Packets", ["table", "header"])
# clock.entry: the tick each id is due at, with where it waits (clock._entry); clock.next, clock.prev: its links in
# its wheel bucket; clock.due: a bit per id due in the current tick, clock.due_words: a bit per non-zero word of
# clock.due
Clock = namedtuple("Clock", ["entry", "next", "prev", "bucket", "bits", "due", "due_words", "heap_time",
                             "heap_id"])
# The per-id arrays that hold event ids or contexts are int32, half the bytes: E-41's clock tables went
# from 3.5 to 2.2 MB, and E-25 and E-41 ran faster in 13 of 16 alternating pairs (bench/SPEED.md, the stop of
# 04:14-06:25). Event ids stay below 2^31 because a network with more is refused (MAX_EVENT_IDS).
CLOCK_ID_DTYPE = np.int32
MAX_EVENT_IDS = 2**31


def table(rows: int, columns: int, fill: int = 0) -> np.ndarray:
    return np.full((rows, columns), fill, dtype=np.int64)


def link_table(neighbours: np.ndarray, in_port: np.ndarray) -> np.ndarray:
    """Node v's links in one row: links[v, d] the node at the far end of port d (-1: none), links[v, P + d] the
    port its link arrives on there (P ports). int32 and line-aligned, so that a forward finds its far end in one
    line where two int64 tables of 48-byte rows (E-n's six ports) took two to four (bench/SPEED.md, the stop of 28
    November, 04:44-07:44). Node numbers fit: a network has fewer nodes than event ids (MAX_EVENT_IDS)."""
    nodes, ports = neighbours.shape
    links = line_table(nodes, 2 * ports, np.int32)
    links[:, :ports] = neighbours
    links[:, ports:2 * ports] = in_port
    return links


def empty_clock(nodes: int, contexts_per_node: int) -> Clock:
    n_events = nodes * (contexts_per_node + 1)
    words = -(-n_events // 64)
    return Clock(entry=np.full(n_events, EV_IDLE, np.int64),
                 next=np.full(n_events, -1, CLOCK_ID_DTYPE), prev=np.full(n_events, -1, CLOCK_ID_DTYPE),
                 bucket=np.full(WHEEL_TICKS, -1, np.int64), bits=np.zeros(WHEEL_TICKS // 64, np.int64),
                 due=np.zeros(words, np.int64), due_words=np.zeros(-(-words // 64), np.int64),
                 heap_time=np.zeros(n_events + 16, np.int64),
                 heap_id=np.zeros(n_events + 16, CLOCK_ID_DTYPE))


def packet_pool(capacity: int, header_words: int) -> Packets:
    """A pool of free records, chained through PK_NEXT (the kernel takes them from the head)."""
    pool = line_table(capacity, PK_ROWS)
    pool[:, PK_NEXT] = np.arange(1, capacity + 1)
    pool[-1, PK_NEXT] = -1
    return Packets(pool, line_table(capacity, header_words))


def grow_packets(packets: Packets, stats: np.ndarray) -> Packets:
    """Twice the records; the new half joins the free list."""
    old = packets.table.shape[0]
    bigger = packet_pool(2 * old, packets.header.shape[1])
    bigger.table[:old] = packets.table
    bigger.header[:old] = packets.header
    bigger.table[2 * old - 1, PK_NEXT] = stats[ST_FREE_HEAD]
    stats[ST_FREE_HEAD] = old
    stats[ST_FREE_COUNT] += old
    return bigger




