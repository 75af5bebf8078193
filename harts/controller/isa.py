"""Encoding of the receiver micro-instruction set, shared by the assembler and the kernel.

microcode/ISA.md documents what every instruction does; this module only fixes numbers.
"""

from .records import ROUTE_NAMES

OP_WAIT_HEADER = 0
OP_BRANCH = 1
OP_JUMP = 2
OP_SET = 3
OP_ADD = 4
OP_OR = 5
OP_AND = 6
OP_FORWARD = 7
OP_TEE = 8
OP_DELIVER = 9
OP_STORE = 10
OP_WAIT_TAIL = 11
OP_WAIT = 12
OP_DONE = 13
OP_ACK = 14
OP_NACK = 15

OPCODES = {
    "wait_header": OP_WAIT_HEADER,
    "branch": OP_BRANCH,
    "jump": OP_JUMP,
    "set": OP_SET,
    "add": OP_ADD,
    "or": OP_OR,
    "and": OP_AND,
    "forward": OP_FORWARD,
    "tee": OP_TEE,
    "deliver": OP_DELIVER,
    "store": OP_STORE,
    "wait_tail": OP_WAIT_TAIL,
    "wait": OP_WAIT,
    "done": OP_DONE,
    "ack": OP_ACK,
    "nack": OP_NACK,
}
OPCODE_NAMES = {v: k for k, v in OPCODES.items()}
FIELD_OPS = ("set", "add", "or", "and")

# Instructions that touch shared state (transmitters, the bus, the BMU, the NP, the receiver's FIFO)
# execute at their own tick in the tick's order; all others only read and write the context's own
# registers and can run ahead of the clock (PR_RUN_AHEAD).
SHARED = (OP_FORWARD, OP_TEE, OP_DELIVER, OP_STORE, OP_DONE, OP_ACK, OP_NACK)
# A context that executes this many private instructions in a row on one packet is stopped as looping: far
# more than any bounded loop over a header value needs (Algorithm A's distance on E-41 is 4,920).
LOOP_LIMIT = 1_000_000

COND_ARRIVED = 0
COND_LOCAL = 1
COND_COMPARE = 2
COND_SETUP_RETRIES = 3  # circuit switching: the config says a blocked probe gives up and retries (flow.circuit_setup)
CONDITIONS = {"arrived": COND_ARRIVED, "local": COND_LOCAL, "setup_retries": COND_SETUP_RETRIES}

CMP_EQ = 0
CMP_NE = 1
CMP_LT = 2
CMP_LE = 3
CMP_GT = 4
CMP_GE = 5
CMP_BITS = 6  # field & value != 0
COMPARISONS = {"==": CMP_EQ, "!=": CMP_NE, "<": CMP_LT, "<=": CMP_LE, ">": CMP_GT, ">=": CMP_GE, "&": CMP_BITS}


def compared(x, compare, value):
    """``x OP value`` for the CMP_* code OP: the kernels' comparison (conditions.compare compiles it) and the
    assembler's, which pre-decodes the branches on a packet's route kind."""
    if compare == CMP_EQ:
        return x == value
    if compare == CMP_NE:
        return x != value
    if compare == CMP_LT:
        return x < value
    if compare == CMP_LE:
        return x <= value
    if compare == CMP_GT:
        return x > value
    if compare == CMP_GE:
        return x >= value
    return x & value != 0  # CMP_BITS


# Pseudo-fields a condition may read besides the declared header words.
FIELD_ROUTE = -1  # the packet's route kind (state.ROUTE_*)
FIELD_SEGMENT_CODE = -2  # code of the current segment of a source-routed packet, -1 when none is left
PSEUDO_FIELDS = {"route": FIELD_ROUTE, "segment_code": FIELD_SEGMENT_CODE}

VIA_ADAPTIVE = 0  # productive ports by the route offsets, the axis with most hops left first
VIA_DIMENSION_ORDER = 1  # the lowest axis with hops left, and no other
VIA_STRAIGHT = 2  # the direction the packet travels in
VIA_SEGMENT = 3  # the port of the current segment of a source-routed packet
VIA_TABLE = 4  # the port the packet's route table gives for this node
VIAS = {"adaptive": VIA_ADAPTIVE, "dimension_order": VIA_DIMENSION_ORDER, "straight": VIA_STRAIGHT,
        "segment": VIA_SEGMENT, "table": VIA_TABLE}

# How a packet is switched: the microprogram's `switching` key. Cut-through runs on the closed-form engine
# (harts.controller.engine); wormhole and circuit on the flit-level one (harts.controller.flits).
SWITCHING_CUT_THROUGH = 0
SWITCHING_WORMHOLE = 1
SWITCHING_CIRCUIT = 2
SWITCHINGS = {"cut_through": SWITCHING_CUT_THROUGH, "wormhole": SWITCHING_WORMHOLE, "circuit": SWITCHING_CIRCUIT}
# Instructions each switching has no meaning for (the assembler refuses them).
NOT_IN = {SWITCHING_CUT_THROUGH: ("ack", "nack"), SWITCHING_WORMHOLE: ("store", "ack", "nack"),
          SWITCHING_CIRCUIT: ("tee", "store")}

# Which virtual channels of the chosen port a flit-level forward may take (its `vc` operand).
VC_ANY = 0  # any free VC, the lowest first
VC_DATELINE = 1  # class 0 before the packet crosses the wrap-around link of the axis it travels, class 1 after
VC_CIRCUIT = 2  # every VC of the port: a circuit holds the whole link
VC_ESCAPE = 3  # the escape VCs of minimal adaptive routing: VC 0 (and VC 1 past the dateline on a torus)
VC_ADAPTIVE = 4  # the VCs above the escape VCs
VC_LOWER = 5  # VCs 0..ceil(V/2)-1: one class of traffic (cpr.yaml: unicasts) ...
VC_UPPER = 6  # ... and VCs ceil(V/2)..V-1, another (cpr.yaml: coded paths), so the two never wait for each other
VCS = {"any": VC_ANY, "dateline": VC_DATELINE, "circuit": VC_CIRCUIT, "escape": VC_ESCAPE, "adaptive": VC_ADAPTIVE,
       "lower": VC_LOWER, "upper": VC_UPPER}

# Rows of the assembled program (one column per micro-instruction).
CODE_OP = 0
CODE_ARG = 1  # branch: condition; forward/tee: via
CODE_NEGATE = 2  # branch: 1 for 'unless'
CODE_TARGET = 3  # branch/jump target, or the failure target of forward/tee (RETRY: stall and try again)
CODE_CYCLES = 4
CODE_FIELD = 5  # header word (or pseudo-field) a field instruction or comparison reads
CODE_VALUE = 6  # the constant of a field instruction or comparison
CODE_COMPARE = 7  # CMP_*
CODE_UNTIL = 8  # tee: header word that stops the forward at 0 (only delivers), -1 for none
CODE_SHARED = 9  # 1 for the instructions in SHARED
CODE_VC = 10  # flit-level forward: VC_*
# Pre-decoded at assembly (microcode.py): a wait_header and the branches after it that test only the packet's
# route kind or `arrived`, which the header fixes, run as one step on the cut-through kernel. Row
# CODE_HEADER_RUN + 2 * route + arrived of the wait_header's column holds where that run ends for a packet of that
# route kind (records.ROUTE_*) and arrival, packed by microcode._header_run; NO_HEADER_RUN where the step does not
# apply.
CODE_HEADER_RUN = 11
ROUTE_KINDS = len(ROUTE_NAMES)
CODE_ROWS = CODE_HEADER_RUN + 2 * ROUTE_KINDS
NO_HEADER_RUN = -1
RUN_FIELD_BITS = 15  # each of a header run's four numbers is below 2^15, or the run is not pre-decoded
RUN_FIELD_MASK = (1 << RUN_FIELD_BITS) - 1
RETRY = -1
