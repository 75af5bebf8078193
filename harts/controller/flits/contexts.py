"""Starting the micro-sequencers: a link input's context starts on the packet whose head is at the front of its
buffer; an injection channel's takes the packet at the head of its node's NP queue. Packets join that queue
when their NP makes them (MODEL.md, Flow-controlled switching: a packet's life)."""

from ...jit import kernel_part
from .. import isa
from ..records import CONTENTION_QUEUED
from .logs import contend
from .pool import hold
from .routing import condition
from .state import (
    CX_FREE_FROM,
    CX_IDLE,
    CX_PC,
    CX_PKT,
    CX_STATE,
    CX_TAIL_AT,
    ERR_LOOP,
    IN_COUNT,
    IN_FIRST,
    ND_QUEUE_HEAD,
    ND_QUEUE_TAIL,
    PK_CORRUPT,
    PK_FLITS,
    PK_HOPS,
    PK_INJECTED,
    PK_NEXT,
    PK_READY,
    PK_VALUE,
    PR_ENTRY_INJECT,
    PR_ENTRY_RECEIVE,
    PR_FLIT_CYCLES,
    PR_HOP_LOG,
    PR_INJECTION_VCS,
    PR_NP_CHANNELS,
    PR_NP_SEND,
    PR_PORTS,
    PR_RUN_AHEAD,
    PR_VCS,
    PT_TAKE_FROM,
    SL_FLIT,
    SL_PACKET,
    SL_USABLE,
    ST_BIRTHS,
    ST_ERROR,
    ST_ERROR_INPUT,
    ST_ERROR_PC,
    ST_IN_FLIGHT,
    ST_INSTRUCTIONS,
    ST_LAST_PROGRESS,
    VI_ARRIVED,
    VI_BLOCKED_CREDIT,
    VI_BLOCKED_OUTPUT,
    VI_CORRUPT_AT,
    VI_FIRST_OUT,
    VI_HOPS_AT,
    VI_MARKED_BLOCKED,
    VI_REFUSED_AT,
    VI_VALUE_AT,
    input_node,
    input_row,
    is_injection,
    slot_field,
)
from .wheel import schedule


@kernel_part
def is_private(op):
    """Whether an instruction only moves the context's own pc (a flit-level wait_header never waits: the head is
    at the front of the input when the context starts)."""
    return op == isa.OP_BRANCH or op == isa.OP_JUMP or op == isa.OP_WAIT_HEADER or op == isa.OP_WAIT


@kernel_part
def private_step(machine, packets, pkt, local, pc):
    """The pc after the private instruction at pc."""
    code = machine.code
    op = code[isa.CODE_OP, pc]
    if op == isa.OP_BRANCH:
        taken = condition(machine, packets, pkt, local, pc) != (code[isa.CODE_NEGATE, pc] != 0)
        return code[isa.CODE_TARGET, pc] if taken else pc + 1
    if op == isa.OP_JUMP:
        return code[isa.CODE_TARGET, pc]
    return pc + 1


@kernel_part
def loops(code, stats, i, pc, steps):
    """Whether input i's context, at pc after `steps` private instructions in a row on one packet (or wait_tails
    whose tail is through), loops: more steps than the program has instructions means one came round again, and
    they change nothing that the next pass would read (a flit-level program has no header fields to set), so it
    would come round for ever. Then the run stops with ERR_LOOP at i and pc."""
    if steps <= code.shape[1]:
        return False
    if stats[ST_ERROR] == 0:
        stats[ST_ERROR] = ERR_LOOP
        stats[ST_ERROR_INPUT] = i
        stats[ST_ERROR_PC] = pc
    return True


@kernel_part
def try_start(machine, switch, packets, run, i):
    """An idle context starts on the next packet: a link input's, when the head is at the front of its buffer;
    an injection channel's, the packet at the head of its node's NP queue, which it takes out of the queue.
    A packet that could have started earlier but for the packet before it is marked queued."""
    params = machine.params
    inputs = switch.inputs
    if inputs[i, CX_STATE] != CX_IDLE:
        return
    node = input_node(machine, i)
    injection = is_injection(machine, i)
    if injection:
        nodes = switch.nodes
        pkt = nodes[node, ND_QUEUE_HEAD]
        if pkt < 0:
            return
        following = packets.table[pkt, PK_NEXT]
        nodes[node, ND_QUEUE_HEAD] = following
        if following < 0:
            nodes[node, ND_QUEUE_TAIL] = -1
        arrived = packets.table[pkt, PK_READY]
        inputs[i, CX_PC] = params[PR_ENTRY_INJECT]
    else:
        if inputs[i, IN_COUNT] == 0:
            return
        slot = inputs[i, IN_FIRST]
        if inputs[i, slot_field(slot, SL_FLIT)] != 0:
            return
        pkt = inputs[i, slot_field(slot, SL_PACKET)]
        arrived = inputs[i, slot_field(slot, SL_USABLE)]
        inputs[i, CX_PC] = params[PR_ENTRY_RECEIVE]
    start = max(arrived, inputs[i, CX_FREE_FROM])
    table = packets.table
    if injection:
        # The NP's channel carries one packet after another, a flit a cycle, as BookSim2's injection channel does:
        # another context of it starts on the next packet only once the flits of the one before have crossed
        channel = input_row(machine, i)
        start = max(start, switch.ports[channel, PT_TAKE_FROM])
        switch.ports[channel, PT_TAKE_FROM] = start + table[pkt, PK_FLITS] * params[PR_FLIT_CYCLES]
    if start > arrived:
        contend(packets, pkt, CONTENTION_QUEUED, node, arrived)
    hold(packets, pkt)
    if injection and table[pkt, PK_INJECTED] < 0:  # a circuit's probe sent again after a nack keeps its first
        table[pkt, PK_INJECTED] = start
    inputs[i, CX_PKT] = pkt
    inputs[i, CX_TAIL_AT] = -1
    switch.visits[i, VI_HOPS_AT] = table[pkt, PK_HOPS]
    switch.visits[i, VI_VALUE_AT] = table[pkt, PK_VALUE]
    switch.visits[i, VI_CORRUPT_AT] = table[pkt, PK_CORRUPT]
    switch.visits[i, VI_MARKED_BLOCKED] = 0
    if params[PR_HOP_LOG] != 0:
        switch.visits[i, VI_ARRIVED] = arrived
        switch.visits[i, VI_FIRST_OUT] = -1
        switch.visits[i, VI_REFUSED_AT] = -1
        switch.visits[i, VI_BLOCKED_OUTPUT] = 0
        switch.visits[i, VI_BLOCKED_CREDIT] = 0
    pc = inputs[i, CX_PC]
    if params[PR_RUN_AHEAD] != 0:
        # the private instructions before its first shared one touch nothing shared: run now, with identical
        # results, the context wakes once, for that one
        code = machine.code
        steps = 0
        while is_private(code[isa.CODE_OP, pc]):
            steps += 1
            if loops(code, run.stats, i, pc, steps):
                return
            run.stats[ST_INSTRUCTIONS] += 1
            following = private_step(machine, packets, pkt, injection, pc)
            start += code[isa.CODE_CYCLES, pc]
            pc = following
        inputs[i, CX_PC] = pc
    schedule(run, inputs, i, start)


@kernel_part
def offer(machine, switch, packets, run, node):
    """Every idle injection channel of the node, in channel order, takes the next packet of its NP queue."""
    params = machine.params
    contexts = params[PR_NP_CHANNELS] * params[PR_INJECTION_VCS]
    first = node * (params[PR_PORTS] * params[PR_VCS] + contexts) + params[PR_PORTS] * params[PR_VCS]
    for c in range(contexts):
        try_start(machine, switch, packets, run, first + c)


@kernel_part
def enqueue(machine, switch, packets, run, pkt, node, t):
    """Packet record pkt joins the back of its node's NP queue at cycle t, ready to leave n_s later."""
    table = packets.table
    nodes = switch.nodes
    table[pkt, PK_READY] = t + machine.params[PR_NP_SEND]
    table[pkt, PK_NEXT] = -1
    tail = nodes[node, ND_QUEUE_TAIL]
    if tail < 0:
        nodes[node, ND_QUEUE_HEAD] = pkt
    else:
        table[tail, PK_NEXT] = pkt
    nodes[node, ND_QUEUE_TAIL] = pkt
    stats = run.stats
    if stats[ST_IN_FLIGHT] - stats[ST_BIRTHS] == 1:
        # the only packet in the network: its wait starts the detector's clock. Joining a queue is not progress
        # otherwise, or a network stuck while its NPs still make packets would never be found out
        stats[ST_LAST_PROGRESS] = t
    offer(machine, switch, packets, run, node)
