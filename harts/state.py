"""Struct-of-arrays layout of the engine state: every table is a 2-D int64 array ``table[FIELD, index]``.

All times are ticks: the byte time of a link (1/bytes_per_cycle of a controller cycle). Durations given
in cycles in a config are converted to ticks once, when the parameters are built.

Each row is one field stored contiguously, so the numba kernel touches whole fields at a time and the
whole machine state is a handful of arrays allocated once per run. The row constants below are the only
place the layout is defined; numba folds them as compile-time constants.
"""

import numpy as np

NEVER = np.int64(2**62)  # a wake-up cycle that never comes

# ---- packets (one column per packet record: a unicast packet, or one send_packet worm) -----------------
PK_SRC = 0  # node whose NP sent this packet record
PK_DST = 1  # destination node (unicast) or -1
PK_LEN = 2  # length M in bytes, header included
PK_KIND = 3  # KIND_UNICAST or KIND_BROADCAST
PK_DIST = 4  # broadcast: remaining distance as written in the header
PK_DIR = 5  # direction it travels in (set by each transmitter; a broadcast's send direction before that)
PK_FLAGS = 6  # header flag bits (FLAG_MARKED)
PK_STEP = 7  # broadcast step field (NP layer)
PK_TAG = 8  # broadcast tag field (NP layer)
PK_BCAST = 9  # broadcast id, -1 for unicast
PK_PARENT = 10  # the delivery (log index) whose NP sent this record, -1 if none
PK_CREATE = 11  # tick at which the NP was asked to send it
PK_READY = 12  # tick from which the BMU may hand it to an injection context
PK_NEXT = 13  # link in whichever queue holds the packet (BMU ready queue, receiver pending list)
PK_ARRIVE = 14  # tick its first byte reaches the receiver it is pending at
PK_HOPS = 15  # links traversed so far
PK_CUTS = 16  # nodes cut through so far
PK_STORES = 17  # times stored whole in a BMU on the way
PK_BYTES_SENT = 18  # bytes put on links (M per hop)
PK_BYTES_RECEIVED = 19  # bytes taken in by receivers (M per hop when nothing is lost)
PK_IN_BMU = 20  # 1 from 'store' until an injection context takes it from the ready queue
PK_ALGORITHM = 21  # broadcast procedure the NPs run on its copies (relay.ALGORITHMS), 0 for none
PK_DIST0 = 22  # distance it was sent with
PK_VALUE = 23  # the payload's value (what a receiving node decides on)
PK_DROPPED = 24  # DROP_* reason if a fault swallowed it on a link, else 0
PK_ROWS = 25

KIND_UNICAST = 0
KIND_BROADCAST = 1  # a send_packet worm
KIND_INITIATE = 2  # traffic only: the NP runs BCAST_INIT of PK_ALGORITHM (never put on a link itself)
FLAG_MARKED = 1
FLAG_CORRUPT = 2  # the payload was damaged on a link: its checksum fails

VALUE_TRUE = 1  # the value every broadcast sends
VALUE_ALTERED = 2  # what Byzantine nodes substitute (all the same: the worst case, colluding)

# node faults (ND_FAULT)
FAULT_NONE = 0
FAULT_CRASH = 1  # receives and forwards nothing
FAULT_ALTER = 2  # Byzantine: forwards and relays everything with an altered payload
FAULT_DROP = 3  # Byzantine: swallows everything that reaches it
FAULT_BOGUS = 4  # Byzantine: forwards correctly but sends a bogus copy to every neighbour per copy it gets

# why a packet was dropped (PK_DROPPED)
DROP_CRASHED_NODE = 1
DROP_DEAD_LINK = 2
DROP_BYZANTINE_NODE = 3
DROP_BMU_OVERFLOW = 4  # to be stored in a full BMU (bmu.when_full: drop)

# ---- receiver contexts: P link receivers then B BMU injection contexts per node --------------------
CX_PC = 0
CX_WAKE = 1  # next tick this context executes
CX_PKT = 2  # packet being handled, -1 when idle
CX_ARRIVE = 3  # tick the packet's first byte arrived (link receivers)
CX_STREAM_START = 4  # tick the receiver began writing the packet on the bus / its first byte left the BMU
CX_STREAMING = 5  # 1 once forward/tee/deliver/store has started
CX_DIST = 6  # header registers: distance
CX_FLAGS = 7  # header registers: flags
CX_HEADER = 8  # 1 once wait_header loaded the header registers
CX_DIR = 9  # direction the packet travels in (link receivers: the port), for 'straight'
CX_PENDING_HEAD = 10  # packets that arrived while busy, oldest first
CX_PENDING_TAIL = 11
CX_FROM_STORE = 12  # BMU contexts: the packet was stored here in transit (its bytes are freed at 'done')
CX_RETRY = 13  # first tick a failed forward/tee could succeed ('else: retry' sleeps until then)
CX_ROWS = 14

# ---- transmitters: one per node and link direction -------------------------------------------------------
TX_FREE = 0  # tick from which the next packet may start (after the forced idle gap)
TX_BYTES = 1  # payload bytes sent
TX_PACKETS = 2
TX_DEAD = 3  # 1: what this transmitter sends is lost on the link
TX_PACKET = 4  # the packet it sent last (for traces)
TX_ROWS = 5

# ---- nodes: BMU and network processor ---------------------------------------------------------------
ND_BMU_USED = 0  # bytes of transit packets stored
ND_BMU_CREDIT = 1  # bytes promised to packets streaming in (virtual cut-through flow control)
ND_BMU_PEAK = 2  # peak of used + credit
ND_BMU_INTEGRAL = 3  # sum over ticks of bytes used, for the utilisation
ND_BMU_CHANGED = 4  # tick ND_BMU_INTEGRAL was last brought up to date
ND_QUEUE_HEAD = 5  # BMU ready queue, ordered by PK_READY
ND_QUEUE_TAIL = 6
ND_QUEUE_LEN = 7
ND_NP_FREE = 8  # tick from which the NP can take new work
ND_INBOX_HEAD = 9  # deliveries waiting for the NP (delivery-log indices), in delivery order
ND_INBOX_TAIL = 10
ND_NP_WAKE = 11
ND_WAKE = 12  # earliest wake-up among this node's contexts and NP: idle nodes are skipped
ND_FAULT = 13  # FAULT_*
ND_ROWS = 14

# ---- delivery log: one column per copy delivered to a node -------------------------------------------
DL_PKT = 0
DL_NODE = 1
DL_TIME = 2  # tick the last byte reached the NP
DL_HOPS = 3
DL_CUTS = 4
DL_STORES = 5
DL_DIST = 6  # distance field of the delivered header
DL_FLAGS = 7
DL_DIR = 8  # direction the copy was travelling in
DL_NEXT = 9  # link in the NP inbox
DL_VALUE = 10  # payload value of the delivered copy
DL_ROWS = 11

# ---- run-wide scalars ---------------------------------------------------------------------------------
ST_TIME = 0  # last simulated tick
ST_ERROR = 1
ST_ERROR_CONTEXT = 2
ST_ERROR_PC = 3
ST_ERROR_CYCLE = 4
ST_ERROR_PACKET = 5
ST_DELIVERIES = 6
ST_PACKETS = 7  # packet records in use
ST_STORED_IN = 8  # bytes written into BMUs as transit packets
ST_STORED_OUT = 9  # bytes of stored transit packets sent on
ST_FIFO_PEAK = 10
ST_INSTRUCTIONS = 11
ST_LAST_PROGRESS = 12
ST_NEXT_TRAFFIC = 13  # first traffic packet not yet handed to its NP
ST_CUT_THROUGHS = 14
ST_WOKEN = 15  # earliest wake-up given this tick to a node the clock had already passed
ST_PAUSED = 16  # 1: returned at PR_PAUSE_AT; 2: returned to have its tables grown; ST_TIME is then the next tick
ST_DROPS = 17  # packets swallowed by a crashed node, a dead link or a Byzantine node
ST_CORRUPTED = 18  # link transmissions that damaged the payload
ST_BOGUS = 19  # bogus copies sent by Byzantine nodes
ST_RANDOM = 20  # state of the kernel's random generator (link corruption)
ST_OVERFLOWS = 21  # packets dropped because the BMU that had to store them was full
ST_ROWS = 22

# error codes (ST_ERROR)
ERR_NONE = 0
ERR_FIFO_OVERFLOW = 1
ERR_TRUNCATED = 2
ERR_DROPPED = 3
ERR_BAD_CONTEXT = 4
ERR_NO_HEADER = 5
ERR_TWO_STREAMS = 6
ERR_POOL_FULL = 7
ERR_LOG_FULL = 8
ERR_DEADLOCK = 9
ERR_CYCLE_LIMIT = 10

# ---- parameters (durations in ticks) ------------------------------------------------------------------
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
PR_INJECTORS = 12
PR_LAST_TICK = 13
PR_DEADLOCK_TICKS = 14
PR_ENTRY_RECEIVE = 15
PR_ENTRY_INJECT = 16
PR_SLOT_BYTES = 17
PR_PAUSE_AT = 18  # return (to show progress, or be interrupted) before simulating past this tick
PR_MESH_SIZE = 19  # n, which the broadcast procedures use
PR_CORRUPTION_PER_MILLION = 20  # probability that a link transmission damages the payload, x 1e6
PR_BMU_DROPS_WHEN_FULL = 21  # 1: a full BMU drops a packet it should store; 0: cut-through credit flow control
PR_ROWS = 22


def table(rows: int, columns: int, fill: int = 0) -> np.ndarray:
    return np.full((rows, columns), fill, dtype=np.int64)
