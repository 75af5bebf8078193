"""Encoding of the receiver micro-instruction set, shared by the assembler and the kernel.

microcode/ISA.md documents what every instruction does; this module only fixes numbers.
"""

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
}
OPCODE_NAMES = {v: k for k, v in OPCODES.items()}
FIELD_OPS = ("set", "add", "or", "and")

# Instructions that touch shared state (transmitters, the bus, the BMU, the NP, the receiver's FIFO)
# execute at their own tick in the tick's order; all others only read and write the context's own
# registers and can run ahead of the clock (PR_RUN_AHEAD).
SHARED = (OP_FORWARD, OP_TEE, OP_DELIVER, OP_STORE, OP_DONE)
# A context that executes this many private instructions in a row on one packet is stopped as looping: far
# more than any bounded loop over a header value needs (Algorithm A's distance on E-41 is 4,920).
LOOP_LIMIT = 1_000_000

COND_ARRIVED = 0
COND_LOCAL = 1
COND_COMPARE = 2
CONDITIONS = {"arrived": COND_ARRIVED, "local": COND_LOCAL}

CMP_EQ = 0
CMP_NE = 1
CMP_LT = 2
CMP_LE = 3
CMP_GT = 4
CMP_GE = 5
CMP_BITS = 6  # field & value != 0
COMPARISONS = {"==": CMP_EQ, "!=": CMP_NE, "<": CMP_LT, "<=": CMP_LE, ">": CMP_GT, ">=": CMP_GE, "&": CMP_BITS}

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
CODE_ROWS = 10
RETRY = -1
