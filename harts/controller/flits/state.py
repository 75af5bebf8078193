"""The flit-level kernel's state: its tables (int64, but the inputs with their buffer slots: ROW_DTYPE), their field
layout, and the named bundles the kernel takes.

Times are cycles (one tick a cycle). With C NP channels (flow.np_channels), inputs are numbered
node * NI + i with NI = P*V + C*J: i = port*V + vc for the link inputs, P*V + c*J + j for injection context j
of injection channel c (J = flow.injection_vcs; its "VC" in input_vc is j).
Physical inputs and outputs are numbered node * (P+C) + j, j = P + c being injection channel c (inputs)
or ejection channel c (outputs). Output VCs are numbered (node * P + port) * V + vc.

What the kernel shares with the cut-through kernel (the traffic it is handed, NP events and sends, the
delivery, packet and hop logs) is laid out in controller/records.py; the tables here are its own.
"""

import mmap
from collections import namedtuple

import numpy as np

from ...jit import kernel_part
from ..lines import line_columns

NEVER = np.int64(2**62)
EARLY = np.int64(-(2**31))  # a slot freed "long ago": its credit is back (the least ROW_DTYPE value; MAX_DELAY)
WHEEL = 32  # cycles ahead the contexts' wheel spans (wheel.py); slots fit in the low bits of one word
KEY_SPAN = np.int64(2**24)  # inputs and nodes per run; heap keys (cycle * KEY_SPAN + id) stay below 2^63

# ---- inputs: one row per input (link VC or injection), its binding, its micro-sequencer context and its buffer -----
IN_OUT = 0  # output it is bound to (0..P-1 a link, P + c an ejection channel), -1 unbound
IN_DOWN = 1  # the input its flits land in (its VC of the link's far end), -1: an ejection channel, or a lost link
IN_BOUND_FROM = 2  # cycle from which its flits may be granted
IN_FIRST = 3  # ring index of the oldest flit (link inputs)
IN_COUNT = 4  # flits in the ring or on the way to it
CX_PKT = 5  # the packet record its context handles, -1
IN_TEE = 6  # the ejection output a teed input also sends every flit to (P + c), -1 when not teeing
IN_WAIT_FOR = 7  # input it was last seen waiting for (a full downstream VC, or a VC's owner), -1
# (the eight above are what the allocator reads of an input, and of the input downstream, every cycle: its
# first cache line; the context's own fields follow)
IN_LISTED = 8  # 1 while its bit is set in the bitmap of bound inputs (Run.bound_bits): a copy of that bit in the
# row bind writes anyway (dropped for a test of the bitmap word, with the wheel's marking sharing a set-bit helper,
# the 8x8 mesh at 0.1 ran 67.1-68.6 ms against 61.2-63.4 in two alternating pairs)
CX_STATE = 9  # CX_IDLE, CX_RUN (an instruction is due at CX_DUE), CX_WAIT_TAIL
CX_PC = 10
CX_DUE = 11
CX_FREE_FROM = 12  # cycle from which an idle context can start on the next packet
CX_TAIL_AT = 13  # cycle the current packet's last flit was granted here, -1 before
IN_OVC = 14  # the downstream VC it sends into
CX_PARK_NEXT = 15  # CX_PARKED: the next context parked on the same output, -1 the last
IN_SLOTS = 16  # the fields above take the row's first cache line (of ROW_DTYPE); its buffer slots follow (slot_field)

CX_IDLE = 0
CX_RUN = 1
CX_WAIT_TAIL = 2
CX_PARKED = 3  # a refused forward ('else: retry') waits for a VC of its output to be freed (MODEL.md)

# ---- visits: per input, what the hop record and the contention certificate need of the packet it handles --------
# (apart from the input rows, which the allocator reads every cycle: their fields stay in one cache line)
# The first line's fields serve every run; the second line's feed only the hop record, kept when the run keeps
# one (PR_HOP_LOG), and the occupancy counters (PR_COUNTERS): a run without them never writes that line, and reads
# it only on a nack or a lost flit, for a hop record it then does not write.
VI_UPSTREAM = 0  # the input whose grant brought the current packet's head here, -1 for an injection input
VI_HOPS_AT = 1  # links the head had crossed when it got here
VI_VALUE_AT = 2  # its payload value when its head got here (an altering node downstream changes it later)
VI_CORRUPT_AT = 3  # whether its payload was damaged when its head got here
VI_MARKED_BLOCKED = 4  # 1 once the packet has been marked blocked here (its record is touched once a visit)
VI_WAITS_ON = 5  # the output row (port table) of the port its last forward was refused at
VI_WANTS = 6  # the VCs of that port it could take: low + (high << WANT_SHIFT), + WANTS_WHOLE_PORT for a circuit
VI_REUSABLE_AT = 7  # when it could take what it wants there, had no input owned it: a VC a tail released that is
# not yet reusable (flow.vc_reuse_cycles); NEVER when what it wants is owned
VI_ARRIVED = 8  # cycle the current packet's head was usable here (injection: ready to leave the NP)
VI_FIRST_OUT = 9  # cycle its first flit was granted here, -1 before
VI_REFUSED_AT = 10  # cycle a forward of it was first refused here (no free VC), -1
VI_BLOCKED_OUTPUT = 11  # cycles it waited here for a VC, a link held by another packet, or the switch
VI_BLOCKED_CREDIT = 12  # cycles a flit of it waited here for a slot another packet's flit held downstream
VI_OCCUPANCY = 13  # flit-cycles held (IN_COUNT summed over cycles, when counters are kept)
VI_OCCUPANCY_AT = 14  # cycle VI_OCCUPANCY was last brought up to date
VI_COLUMNS = 16  # two whole cache lines

# ---- buffer slots: per input, a ring of B flit slots, in its row after its fields (slot_field) ---------------------
SL_PACKET = 0  # packet record of the flit in the slot (or last in it), -1 never used
SL_FLIT = 1  # that flit's number in its packet (0: the head)
SL_USABLE = 2  # cycle the flit is usable at the front of the buffer (it has crossed the link)
SL_FREED = 3  # cycle the slot was last freed (its credit leaves upstream then), EARLY never used
SL_ROWS = 4

# ---- physical ports: one row per node and physical input/output j in 0..P+C-1 -----------------------------------
PT_BUSY_UNTIL = 0  # output j: its link (or the ejection bus) is free from this cycle
PT_OUT_PTR = 1  # output j: round-robin pointer over physical inputs
PT_IN_PTR = 2  # input j: round-robin pointer over its VCs
PT_FLITS = 3  # output j: flits sent through it
PT_LAST_PACKET = 4  # output j: the packet record of the last flit granted through it
PT_PARKED = 5  # output j: the first context parked until one of its VCs is freed (CX_PARK_NEXT), -1 none
PT_TAKE_FROM = 6  # input j, an NP channel: the cycle from which a context of it may start on the next packet, once
# the channel has carried the flits of the one before (flow.injection_vcs > 1)
PT_NEXT_VC = 7  # output j, a link: the VC a round-robin choice (flow.vc_choice) tries first
PT_LAST_TAKER = 8  # output j, a link: the input that last took one of its VCs, -1 none (flow.vc_arbitration)
PT_WOKEN = 9  # output j, a link (vc_arbitration round_robin): the input due to take a VC being freed, -1 none
PT_WOKEN_AT = 10  # the cycle it tries: the others leave that VC to it until then, if it comes first in turn
PT_ROWS = 11

WANT_SHIFT = 16
WANTS_WHOLE_PORT = 1 << 32

# ---- nodes: the network processor ------------------------------------------------------------------------------
ND_QUEUE_HEAD = 0  # packets its NP made that no injection channel has taken yet, oldest first, -1 empty
ND_QUEUE_TAIL = 1
ND_NP_FREE = 2  # cycle from which the NP can take new work
ND_INBOX_HEAD = 3  # NP events waiting for the NP, by cycle, then packet uid, then kind
ND_INBOX_TAIL = 4
ND_WAKE = 5  # cycle it is in the NP heap for, NEVER when not
ND_FAULT = 6  # records.FAULT_*
ND_ROWS = 7

# ---- packet records: a pool, recycled once the last holder lets go -----------------------------------------------
PK_FLITS = 0  # flits it sends: M data flits, plus the probe in circuit switching
PK_SENT = 1  # flits granted at the source
PK_READY = 2  # cycle it may leave its NP's queue (in it + n_s, or after a nack)
PK_DIR = 3  # the port of its last hop (its first port while it has not left)
PK_HOPS = 4  # links its head has crossed (with those of the copy it was sent from)
PK_WRAPPED = 5  # bit a: it has taken the wrap-around link of axis a
PK_LINK_FLITS = 6  # flits it put on links (each hop's)
PK_LANDED_FLITS = 7  # ... taken in at the far end, or swallowed by the fault there
# (the eight above are read or written as its flits move: one cache line)
PK_UID = 8
PK_ORIGIN = 9  # uid of the traffic record it descends from
PK_SOURCE = 10  # node whose NP sent it
PK_DEST = 11  # destination node (routed by destination; for segments, where the route ends)
PK_LENGTH = 12  # M, its data flits
PK_ROUTE = 13  # records.ROUTE_DESTINATION (route offsets) or ROUTE_SEGMENTS (the header's segments)
PK_NOTIFY = 14  # records.NOTIFY_* bits
PK_PARENT = 15  # serial of the delivery whose NP event sent it, -1
PK_CREATE = 16  # cycle the NP made it (its procedure ran; a traffic unicast: its creation)
PK_NEXT = 17  # next record in its NP queue, or in the free list
PK_EJECTED = 18  # data flits granted to ejection channels (every copy's)
PK_DELIVERED = 19  # cycle the destination's NP has it, -1 before
PK_ATTEMPTS = 20  # circuit: probes sent
PK_COPIES = 21  # copies of it the NPs got (tees and its delivery)
PK_HOLDERS = 22  # contexts working on it, plus one while any flit of it is still to be consumed
PK_VALUE = 23  # the payload's value
PK_CORRUPT = 24  # 1: the payload was damaged on a link
PK_DROPPED = 25  # records.DROP_* if a fault swallowed it, else 0
PK_CONTENTION = 26  # records.CONTENTION_* bits (with those of the copy it was sent from)
PK_CONTENDED_AT = 27  # cycle it first waited itself, -1
PK_CONTENDED_NODE = 28
PK_CONTENDED_KIND = 29
PK_FORGED = 30
PK_HOPS_INHERITED = 31
PK_STORES = 32  # NP restarts: re-sends by NPs along its ancestry
PK_ACKED = 33  # circuit: cycle the acknowledgment reaches the source (NEVER before)
PK_RELEASED = 34  # the latest cycle a holder let go
PK_LOST_AT = 35  # cycle its head was swallowed by a fault, -1
PK_DISTANCE = 36  # ROUTE_DESTINATION: hops of a shortest route from its source to its destination (the checks')
PK_INJECTED = 37  # cycle an injection context first took it from its NP's queue, -1 before
PK_REFUSED_BY = 38  # circuit set-up that retries: the record of the packet whose circuit held the link its probe was
# last refused (and nacked) at; the livelock report follows these (MODEL.md, Deadlock and livelock)
PK_NACKED_AT = 39  # ... and the cycle of that nack (0 before any)
PK_ROWS = 40
PK_COLUMNS = 40  # padded to five whole cache lines: a grant reads and counts in the first (fields 0-7)

# ---- run-wide scalars -----------------------------------------------------------------------------------------
ST_TIME = 0
ST_ERROR = 1
ST_ERROR_INPUT = 2
ST_ERROR_PC = 3
ST_NEXT_TRAFFIC = 4  # first record of the traffic table not yet handed to its NP
ST_PAUSED = 5  # PAUSE_*
ST_LAST_PROGRESS = 6  # the last cycle something moved that no nack takes back (the detector's clock, MODEL.md)
ST_GRANTS = 7  # flits granted anywhere
ST_ACTIVE = 8  # inputs in the bitmap of bound inputs
ST_HEAP = 9  # entries in the context heap
ST_INSTRUCTIONS = 10
ST_RAN_UP_TO = 11  # in the current cycle, the contexts of inputs up to this one have run (-1 none yet, KEY_SPAN all)
ST_PEAK = 12  # most flits any input held
ST_NACKS = 13
ST_EJECTED = 14  # data flits ejected
ST_BIRTHS = 15  # sends waiting in the births heap for the cycle they join their NP queue
ST_NP_HEAP = 16  # nodes waiting in the NP heap
ST_DELIVERIES = 17  # rows in the delivery log
ST_DELIVERY_SERIAL = 18
ST_LOGGED = 19  # rows in the packet log
ST_HOP_ROWS = 20  # rows in the hop log
ST_UID_NEXT = 21
ST_FREE_HEAD = 22  # packet pool free list
ST_FREE_COUNT = 23
ST_IN_FLIGHT = 24
ST_IN_FLIGHT_PEAK = 25
ST_EVENT_FREE_HEAD = 26
ST_EVENT_FREE_COUNT = 27
ST_DROPS = 28  # packets swallowed by faults (and initiations at crashed nodes)
ST_CORRUPTED = 29
ST_FORGED = 30
ST_RANDOM = 31  # state of the kernel's random generator (link corruption)
ST_LOST_FLITS = 32  # flits swallowed by faults
ST_ERROR_DETAIL = 33
ST_PHASE = 34  # PHASE_*: how far the current cycle has got (a pause resumes there)
ST_POOL_TOP = 35  # packet records from here up have never been used
ST_WHEELED = 36  # bits set in the contexts' wheel (wheel.py)
ST_WHEEL_SLOTS = 37  # bit s: wheel slot s has a bit set
ST_WHEEL_FROM = 38  # the first cycle the wheel takes: the current one until its contexts have run, then the next
ST_PARKED = 39  # contexts in CX_PARKED
ST_LAST_NACK = 40  # cycle of the last nack (a livelock: nacks, but no progress in ST_LAST_PROGRESS's sense)
ST_ROWS = 41

PHASE_ROOM = 0  # a new cycle: make sure the logs and pools have room for its contexts and grants
PHASE_ARRIVALS = 1  # births, traffic and NP events of the cycle (each resumes where it paused)

PAUSE_NONE = 0
PAUSE_SLICE = 1
PAUSE_ROOM = 2
PAUSE_TRAFFIC = 3

ERR_NONE = 0
ERR_NO_ROUTE = 1  # forward with no hop left
ERR_NO_LINK = 2  # forward onto a port without a link
ERR_DEADLOCK = 3
ERR_CYCLE_LIMIT = 4
ERR_BAD_CONTEXT = 5  # deliver/ack/nack where it has no meaning (e.g. at the injection input)
ERR_TWICE = 6  # a packet delivered twice
ERR_OVERFLOW = 7  # a flit was sent into a full buffer
ERR_STALLED = 8  # packets in flight, yet nothing left to happen
ERR_TOO_MANY_SENDS = 9  # an NP procedure returned more sends than fit
ERR_BAD_SEND = 10  # an NP procedure asked for a route or length the flit-level controller cannot send
ERR_LOOP = 11  # a context's private instructions came round to one again on one packet (contexts.loops)
ERR_CYCLE_RANGE = 12  # a cycle past HELD_CYCLE_LIMIT was to be held in an input or slot row (ST_ERROR_DETAIL: it)

# ---- parameters --------------------------------------------------------------------------------------------------
PR_PORTS = 0
PR_VCS = 1
PR_DEPTH = 2
PR_FLIT_CYCLES = 3
PR_LINK_LATENCY = 4
PR_CREDIT_DELAY = 5
PR_ACK_HOP = 6
PR_NP_SEND = 7
PR_EJECT_DELAY = 8  # b + k + n_d: last flit granted to the ejection .. the NP has it
PR_ENTRY_RECEIVE = 9
PR_ENTRY_INJECT = 10
PR_AXES = 11
PR_CIRCUIT = 12  # 1: circuit switching
PR_SETUP_RETRIES = 13  # 1: circuit switching whose blocked probes nack and retry (flow.circuit_setup)
PR_RETRY_CYCLES = 14
PR_DEADLOCK_CYCLES = 15
PR_LAST_CYCLE = 16
PR_ESCAPES = 17  # escape VCs of 'vc: escape' (2 with wrap links, else 1)
PR_CLASS_SPLIT = 18  # first VC of dateline class 1 (V when the network has no wrap links)
PR_PAUSE_AT = 19  # return after this cycle (progress, an observer)
PR_NP_CHANNELS = 20  # C: injection and ejection channels per node
PR_HALF = 21  # ceil(V/2): the first VC of 'vc: upper'
PR_SEGMENT_WORD = 22  # header word of the segment index; segment s is (port, hops, code) at the words after
PR_SEGMENTS = 23  # segment slots of the microprogram's header
PR_HEADER_WORDS = 24  # words of a header: route words, then the NP program's fields
PR_FLIT_BYTES = 25  # F: an NP send's length in bytes is ceil(bytes / F) flits
PR_NP_RECEIVE = 26  # cycles a delivered copy that runs the procedure occupies the NP
PR_TRAFFIC_MORE = 27  # 1: more traffic follows the current table
PR_HOP_LOG = 28  # 1: write the hop log
PR_COUNTERS = 29  # 1: keep the buffer occupancy integrals
PR_CORRUPTION_PER_MILLION = 30
PR_ROOM = 31  # free records and NP events one NP event or traffic record may need
PR_TIE_KEY = 32  # routing.torus_tie: 0, a tie half-way round a torus ring goes +; else drawn from this key
PR_WHOLE_AXIS = 33  # flow.dateline: 1, class 1 on every hop of an axis whose route crosses its wrap link
PR_IMMEDIATE_TURNAROUND = 34  # flow.context_turnaround: 1, wait_tail and done cost no cycle
PR_INJECTION_VCS = 35  # J: injection contexts per NP channel
PR_ALTERING = 36  # 1: some node alters the payloads it passes on (faults: alter)
PR_RUN_AHEAD = 37  # 1: a starting context runs its first private instructions at once (0 while an observer traces pcs)
PR_INPUTS_PER_NODE = 38  # NI
PR_INPUT_NODE_MULTIPLIER = 39  # the node of input i is (i * this) >> PR_INPUT_NODE_SHIFT (divider.node_divider)
PR_INPUT_NODE_SHIFT = 40
PR_VC_ROUND_ROBIN = 41  # flow.vc_choice: 1, a forward tries the port's VCs from the one after the last it gave
PR_VC_ARBITRATION_ROUND_ROBIN = 42  # flow.vc_arbitration: 1, a freed VC wakes one waiting input, round-robin
PR_VC_REUSE = 43  # flow.vc_reuse_cycles: a VC a tail releases at t can be taken from t + this
PR_ROWS = 44

# What an input is follows from its number: its node is i // NI (input_node, a multiply and a shift), and the rest
# from its number within the node, l = i - node * NI, through tables of NI entries: local_row[l], its physical
# input's row among the node's P+C (its row in the port table is node * (P+C) + that); local_vc[l], its VC (an
# injection context: its number j in its channel); local_ejection[l], the ejection output (P + c) it delivers
# through, -1 for an injection input. (Per-input columns of these, a line for every two inputs, were 1.4 MB on
# the 64x64 torus, read for every bound input every cycle: bench/SPEED.md, the stop of 28 November, 08:35-11:35.)
# downstream[node * P + port]: the first input VC its link feeds (add the VC), -1 without a link or when a fault
# swallows what it sends; lost[node * P + port]: records.DROP_* of that fault (a dead link, a crashed or dropping
# node at the far end), else 0.
Machine = namedtuple("Machine", ["code", "params", "neighbours", "in_port", "axis_positive", "axis_negative",
                                 "port_axis", "wraps", "local_row", "local_vc", "local_ejection", "downstream",
                                 "lost", "shape", "offset_table"])
# inputs[input]: IN_* and CX_* fields, then its B buffer slots (slot_field): the allocator's check of an input reads its
# fields and the slot downstream from one row; owner[output VC]: owning input, -1 free; reusable[output VC]: the
# first cycle a forward may take it once free (flow.vc_reuse_cycles); regs[input]: the header a deliver or tee saw
# there (for its copy); visits[input]: VI_* of the packet it handles
Switch = namedtuple("Switch", ["inputs", "ports", "owner", "reusable", "nodes", "regs", "visits"])
# table[record]; header and origin_header[record, word]: the route words (and the NP program's fields) as they
# are now, and as the NP sent them (a nacked probe starts again from these)
Packets = namedtuple("Packets", ["table", "header", "origin_header"])
# wheel_bits, wheel_top: the contexts' wheel, per slot a bitmap over the inputs and its summary (wheel.py);
# heap: keys due * KEY_SPAN + input of contexts due beyond the wheel; np_heap:
# wake * KEY_SPAN + node; births: (cycle, uid, record) of sends that join their NP queue later; bound_bits,
# bound_top: the bound inputs, a bitmap over the inputs and its summary (as a wheel slot's), so that the allocator
# takes them router by router; in_choice, out_choice: per physical input and output of the router being allocated
# (0..P+C-1), its allocator's choices (-1 none), cleared before the next router's: a few words that stay in the
# cache, where a table over every router's ports missed on the 64x64 torus (bench/SPEED.md, the stop of 28 November,
# 06:46-09:46)
Run = namedtuple("Run", ["stats", "wheel_bits", "wheel_top", "heap", "np_heap", "birth_cycle", "birth_uid",
                         "birth_record", "bound_bits", "bound_top", "in_choice", "out_choice"])


# The inputs and their buffer slots, the table the allocator reads every cycle, are int32: half the bytes of int64
# (the 64x64 torus's, with the per-input columns Machine then had, went from 15.8 to 7.9 MB), which ran the
# 64x64 torus faster in 6 of 8 alternating pairs (inputs and slots) and then in 8 of 8 (the columns), and the 8x8
# and 16x16 networks within the noise (bench/SPEED.md, the stop of 06:37-09:37).
# Every cycle written into an input or slot row is checked against HELD_CYCLE_LIMIT (held_cycle): past it the run
# stops with ERR_CYCLE_RANGE (MODEL.md, Time). The slots then moved into their input's row: the allocator's credit
# check, which reads the downstream input's count and then the slot it points to, reads one row, and the 8x8 mesh
# and torus, the 16x16 torus and the 64x64 torus ran faster in 27 of 28 alternating pairs (bench/SPEED.md, the
# stop of 06:37-09:37).
ROW_DTYPE = np.int32
HELD_CYCLE_LIMIT = 2**31 - 1
MAX_DELAY = 2**30  # cycles a link's credit may take: EARLY + MAX_DELAY < 0, the first cycle (machine/flits.py)


def input_columns(depth: int) -> int:
    """Columns of an input's row with `depth` buffer slots, to whole cache lines (a row never shares a line)."""
    return line_columns(IN_SLOTS + depth * SL_ROWS, ROW_DTYPE)


def slots_of(inputs: np.ndarray, depth: int) -> np.ndarray:
    """The buffer slots of the inputs' rows as [input, slot, SL_*], a view (for code outside the kernel)."""
    size = inputs.itemsize
    return np.lib.stride_tricks.as_strided(inputs[:, IN_SLOTS:], shape=(inputs.shape[0], depth, SL_ROWS),
                                           strides=(inputs.strides[0], SL_ROWS * size, size))


@kernel_part
def input_node(machine, i):
    """The node input i belongs to."""
    params = machine.params
    return (i * params[PR_INPUT_NODE_MULTIPLIER]) >> params[PR_INPUT_NODE_SHIFT]


@kernel_part
def input_local(machine, i):
    """Input i's number within its node: what the local_* tables are indexed by."""
    return i - input_node(machine, i) * machine.params[PR_INPUTS_PER_NODE]


@kernel_part
def is_injection(machine, i):
    """Whether input i is an injection context (its node's inputs from P*V on)."""
    params = machine.params
    return input_local(machine, i) >= params[PR_PORTS] * params[PR_VCS]


@kernel_part
def input_row(machine, i):
    """The row in the port table of input i's physical input."""
    params = machine.params
    node = input_node(machine, i)
    return node * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + machine.local_row[i - node * params[PR_INPUTS_PER_NODE]]


@kernel_part
def input_vc(machine, i):
    """Input i's VC, or for an injection context its number in its channel."""
    return machine.local_vc[input_local(machine, i)]


@kernel_part
def ejection_of(machine, i):
    """The ejection output (P + c) input i delivers through, -1 for an injection input."""
    return machine.local_ejection[input_local(machine, i)]


@kernel_part
def slot_field(slot, field):
    """The column of field SL_* of buffer slot `slot` in its input's row."""
    return IN_SLOTS + slot * SL_ROWS + field


@kernel_part
def held_cycle(stats, cycle):
    """`cycle`, which an input or slot row is to hold: past HELD_CYCLE_LIMIT the run stops with ERR_CYCLE_RANGE
    (unless it already stopped for another error) at the end of the cycle, before the row's value could matter."""
    if cycle > HELD_CYCLE_LIMIT and stats[ST_ERROR] == 0:
        stats[ST_ERROR] = ERR_CYCLE_RANGE
        stats[ST_ERROR_DETAIL] = cycle
    return cycle


def mapped_zeros(shape: tuple[int, ...]) -> np.ndarray:
    """int64 zeros in pages of their own, which the system maps (cleared) only as they are first touched: room
    that a run may never use costs address space, not time. (The heap's memory, which a process keeps for its
    next run (simulation.keep_freed_memory), would be cleared whole when allocated.) Page-aligned, so line-aligned."""
    count = int(np.prod(shape))
    # private: shared memory would not take huge pages (a mapping cannot be empty)
    pages = mmap.mmap(-1, 8 * max(count, 1), flags=mmap.MAP_PRIVATE)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        # as numpy asks for its own large arrays: a busy run's pool takes one fault and one TLB entry per 2 MB
        pages.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(pages, np.int64, count).reshape(shape)


def empty_pool(capacity: int, words: int) -> Packets:
    """Records never used: the kernel takes them from ST_POOL_TOP up once no recycled one is free, so memory
    is touched as packets are made (a pool chained in advance would touch all of it at once)."""
    return Packets(mapped_zeros((capacity, PK_COLUMNS)), mapped_zeros((capacity, max(words, 1))),
                   mapped_zeros((capacity, max(words, 1))))


def grow_pool(packets: Packets, stats: np.ndarray) -> Packets:
    """Twice the records; the new half above the used ones."""
    old = packets.table.shape[0]
    used = stats[ST_POOL_TOP]
    bigger = empty_pool(2 * old, packets.header.shape[1])
    bigger.table[:used] = packets.table[:used]
    bigger.header[:used] = packets.header[:used]
    bigger.origin_header[:used] = packets.origin_header[:used]
    stats[ST_FREE_COUNT] += old
    return bigger
