"""The flit-level kernel's state: int64 tables, their field layout, and the named bundles the kernel takes.

Times are cycles. With C NP channels (flow.np_channels), inputs are numbered node * NI + i with
NI = P*V + C: i = port*V + vc for the link inputs, P*V + c for injection channel c. Physical inputs and
outputs are numbered node * (P+C) + j, j = P + c being injection channel c (inputs) or ejection channel c
(outputs); a node's NP queue lives in its row j = P. Output VCs are numbered (node * P + port) * V + vc.
"""

from collections import namedtuple

import numpy as np

NEVER = np.int64(2**62)
EARLY = np.int64(-(2**40))  # a slot freed "long ago": its credit is back

# ---- inputs: one row per input (link VC or injection), its binding and its micro-sequencer context ---------
IN_OUT = 0  # output it is bound to (0..P-1 a link, P the ejection), -1 unbound
IN_OVC = 1  # the downstream VC it sends into
IN_BOUND_FROM = 2  # cycle from which its flits may be granted
IN_ACTIVE = 3  # 1 while in the active list (bound)
IN_FIRST = 4  # ring index of the oldest flit (link inputs)
IN_COUNT = 5  # flits in the ring or on the way to it
IN_PEAK = 6  # most flits it ever held (in or on the way)
IN_WAIT_FOR = 7  # input it was last seen waiting for (a full downstream VC, or a VC's owner), -1
CX_STATE = 8  # CX_IDLE, CX_RUN (an instruction is due at CX_DUE), CX_WAIT_TAIL
CX_PC = 9
CX_DUE = 10
CX_PKT = 11  # the packet it handles, -1
CX_FREE_FROM = 12  # cycle from which an idle context can start on the next packet
CX_TAIL_AT = 13  # cycle the current packet's last flit was granted here, -1 before
IN_TEE = 14  # the ejection output a teed input also sends every flit to (P + c), -1 when not teeing
IN_ROWS = 15

CX_IDLE = 0
CX_RUN = 1
CX_WAIT_TAIL = 2

# ---- physical ports: one row per node and physical input/output j in 0..P ----------------------------------------
PT_BUSY_UNTIL = 0  # output j: its link (or the ejection bus) is free from this cycle
PT_OUT_PTR = 1  # output j: round-robin pointer over physical inputs
PT_IN_PTR = 2  # input j: round-robin pointer over its VCs
PT_FLITS = 3  # output j: flits sent through it
PT_QUEUE_HEAD = 4  # row j = P: the node's NP queue of packets not yet taken by a channel, oldest first, -1 empty
PT_QUEUE_TAIL = 5
PT_ROWS = 6

# ---- packets: one row per packet of the run ---------------------------------------------------------------------
PK_SOURCE = 0
PK_DEST = 1
PK_FLITS = 2  # flits it sends: M data flits, plus the probe in circuit switching
PK_CREATE = 3
PK_READY = 4  # cycle it may leave its injection queue (creation + n_s, or after a nack)
PK_SENT = 5  # flits granted at the source
PK_EJECTED = 6  # flits granted to the ejection at the destination
PK_DELIVERED = 7  # cycle the NP has it, -1 before
PK_NEXT = 8  # next packet in its injection queue
PK_WRAPPED = 9  # bit a: it has taken the wrap-around link of axis a
PK_ACKED = 10  # circuit: cycle the acknowledgment reaches the source (NEVER before)
PK_HOPS = 11  # links its head has crossed
PK_ATTEMPTS = 12  # circuit: probes sent
PK_ROUTE = 13  # controller.state.ROUTE_DESTINATION (route offsets) or ROUTE_SEGMENTS (the header's segments)
PK_TRIGGER = 14  # TRIGGER_*: what its creation waits for
PK_DELAY = 15  # a triggered packet is created this many cycles after its trigger
PK_STEP = 16  # 1 for a packet created at a fixed cycle, its parent's step + 1 for a triggered one
PK_COPIES = 17  # copies of it the NPs got (tees and its delivery)
PK_ROWS = 18

TRIGGER_NONE = 0  # created at PK_CREATE
TRIGGER_COPY = 1  # created PK_DELAY after its source node gets a copy of its parent
TRIGGER_SENT = 2  # created PK_DELAY after its parent's last flit has left its source (granted + k)
TRIGGER_DELIVERED = 3  # created PK_DELAY after its parent, sent from its own source, is in the destination's NP

# ---- run-wide scalars -----------------------------------------------------------------------------------------
ST_TIME = 0
ST_ERROR = 1
ST_ERROR_INPUT = 2
ST_ERROR_PC = 3
ST_NEXT_TRAFFIC = 4  # first packet not yet created
ST_DELIVERED = 5
ST_LAST_PROGRESS = 6
ST_GRANTS = 7  # flits granted anywhere
ST_ACTIVE = 8  # inputs in the active list
ST_HEAP = 9  # entries in the context heap
ST_INSTRUCTIONS = 10
ST_CYCLES = 11  # cycles the kernel stepped through
ST_PEAK = 12  # most flits any input held
ST_NACKS = 13
ST_EJECTED = 14  # data flits ejected
ST_BIRTHS = 15  # triggered packets waiting in the births heap for their creation cycle
ST_COPIES = 16  # copies logged
ST_ROWS = 17

ERR_NONE = 0
ERR_NO_ROUTE = 1  # forward with no hop left
ERR_NO_LINK = 2  # forward onto a port without a link
ERR_DEADLOCK = 3
ERR_CYCLE_LIMIT = 4
ERR_BAD_CONTEXT = 5  # deliver/ack/nack where it has no meaning (e.g. at the injection input)
ERR_TWICE = 6  # a packet delivered twice
ERR_OVERFLOW = 7  # a buffer held more than B flits
ERR_STALLED = 8  # nothing left to happen, but triggered packets were never created
ERR_COPY_LOG = 9  # more copies than the log holds

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
PR_SETUP_RETRIES = 13
PR_RETRY_CYCLES = 14
PR_DEADLOCK_CYCLES = 15
PR_LAST_CYCLE = 16
PR_ESCAPES = 17  # escape VCs of 'vc: escape' (2 with wrap links, else 1)
PR_CLASS_SPLIT = 18  # first VC of dateline class 1 (V when the network has no wrap links)
PR_PAUSE_AT = 19  # return after this cycle (progress)
PR_NP_CHANNELS = 20  # C: injection and ejection channels per node
PR_HALF = 21  # ceil(V/2): the first VC of 'vc: upper'
PR_SEGMENT_WORD = 22  # header word of the segment index; segment s is (port, hops, code) at the words after
PR_SEGMENTS = 23  # segment slots of the microprogram's header
PR_ROWS = 24

# Per input, precomputed so the allocator needs no division: its node, its physical input's row in the port
# table, its VC (0 for injection), whether it is an injection input, and the ejection output (P + c) it
# delivers through; downstream[node * P + port]: the first input VC its link feeds (add the VC), -1 without
# a link.
Machine = namedtuple("Machine", ["code", "params", "neighbours", "in_port", "axis_positive", "axis_negative",
                                 "port_axis", "wraps", "input_node", "input_row", "input_vc", "injection",
                                 "ejection", "downstream"])
Buffers = namedtuple("Buffers", ["packet", "flit", "usable", "freed"])  # [input, slot]
Switch = namedtuple("Switch", ["inputs", "ports", "owner"])  # owner[output VC]: owning input, -1 free
# path[packet, k]: inputs entered; children[child_start[p]:child_start[p + 1]]: the packets triggered by p
Packets = namedtuple("Packets", ["table", "header", "origin_header", "path", "child_start", "children"])
# heap: keys due * KEY_SPAN + input; births: keys creation * KEY_SPAN + packet of the triggered packets;
# active: the bound inputs; scratch: per physical port, the allocator's choices in one cycle (-1 none), and
# the list of those touched; copies[k]: (packet, node, cycle) of the k-th copy an NP got
Run = namedtuple("Run", ["stats", "heap", "births", "active", "in_choice", "out_choice", "touched_in",
                         "touched_out", "order", "copies"])
KEY_SPAN = np.int64(2**24)  # inputs (and packets, with triggers) per run; keys stay below 2^63 for cycles < 2^39
