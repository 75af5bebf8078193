"""Encoding of the receiver micro-instruction set shared by the assembler and the numba kernel.

The meaning of every instruction is documented in microcode/ISA.md; this module only fixes numbers.
"""

OP_WAIT_HEADER = 0
OP_BRANCH = 1
OP_JUMP = 2
OP_DEC_DISTANCE = 3
OP_MARK = 4
OP_FORWARD = 5
OP_TEE = 6
OP_DELIVER = 7
OP_STORE = 8
OP_WAIT_TAIL = 9
OP_WAIT = 10
OP_DONE = 11

OPCODES = {
    "wait_header": OP_WAIT_HEADER,
    "branch": OP_BRANCH,
    "jump": OP_JUMP,
    "dec_distance": OP_DEC_DISTANCE,
    "mark": OP_MARK,
    "forward": OP_FORWARD,
    "tee": OP_TEE,
    "deliver": OP_DELIVER,
    "store": OP_STORE,
    "wait_tail": OP_WAIT_TAIL,
    "wait": OP_WAIT,
    "done": OP_DONE,
}
OPCODE_NAMES = {v: k for k, v in OPCODES.items()}

COND_BROADCAST = 0
COND_ARRIVED = 1
COND_DISTANCE_ZERO = 2
COND_MARKED = 3
COND_LOCAL = 4

CONDITIONS = {
    "broadcast": COND_BROADCAST,
    "arrived": COND_ARRIVED,
    "distance_zero": COND_DISTANCE_ZERO,
    "marked": COND_MARKED,
    "local": COND_LOCAL,
}

VIA_ROUTE = 0
VIA_STRAIGHT = 1

VIAS = {"route": VIA_ROUTE, "straight": VIA_STRAIGHT}

# Rows of the assembled program array (one column per micro-instruction).
CODE_OP = 0
CODE_ARG = 1  # condition, via, or wait length
CODE_NEGATE = 2  # branch: 1 for 'unless'
CODE_TARGET = 3  # branch/jump target, or the failure target of forward/tee (RETRY: stall and try again)
RETRY = -1
CODE_CYCLES = 4
CODE_ROWS = 5
