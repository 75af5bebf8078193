"""Starting the micro-sequencers: a link input's context starts on the packet whose head is at the front of its
buffer; an injection channel's takes the packet at the head of its node's NP queue. Packets join that queue
when their NP makes them (MODEL.md, Flow-controlled switching: a packet's life)."""

from ...jit import kernel_part
from ..records import CONTENTION_QUEUED
from .logs import contend
from .pool import hold
from .state import (
    CX_DUE,
    CX_FREE_FROM,
    CX_IDLE,
    CX_PARK_NEXT,
    CX_PARKED,
    CX_PC,
    CX_PKT,
    CX_STATE,
    CX_TAIL_AT,
    IN_COUNT,
    IN_FIRST,
    ND_QUEUE_HEAD,
    ND_QUEUE_TAIL,
    PK_CORRUPT,
    PK_HOPS,
    PK_NEXT,
    PK_READY,
    PK_VALUE,
    PR_ENTRY_INJECT,
    PR_ENTRY_RECEIVE,
    PR_INJECTION_VCS,
    PR_NP_CHANNELS,
    PR_NP_SEND,
    PR_PORTS,
    PR_VCS,
    PT_PARKED,
    SL_FLIT,
    SL_PACKET,
    SL_USABLE,
    ST_INSTRUCTIONS,
    ST_LAST_PROGRESS,
    ST_PARKED,
    ST_RAN_UP_TO,
    VI_ARRIVED,
    VI_BLOCKED_CREDIT,
    VI_BLOCKED_OUTPUT,
    VI_CORRUPT_AT,
    VI_FIRST_OUT,
    VI_HOPS_AT,
    VI_MARKED_BLOCKED,
    VI_REFUSED_AT,
    VI_VALUE_AT,
    VI_WAITS_ON,
)
from .wheel import schedule


@kernel_part
def try_start(machine, buffers, switch, packets, run, i):
    """An idle context starts on the next packet: a link input's, when the head is at the front of its buffer;
    an injection channel's, the packet at the head of its node's NP queue, which it takes out of the queue.
    A packet that could have started earlier but for the packet before it is marked queued."""
    params = machine.params
    inputs = switch.inputs
    if inputs[i, CX_STATE] != CX_IDLE:
        return
    node = machine.input_node[i]
    if machine.injection[i] != 0:
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
        if buffers.slots[i, slot, SL_FLIT] != 0:
            return
        pkt = buffers.slots[i, slot, SL_PACKET]
        arrived = buffers.slots[i, slot, SL_USABLE]
        inputs[i, CX_PC] = params[PR_ENTRY_RECEIVE]
    start = max(arrived, inputs[i, CX_FREE_FROM])
    if start > arrived:
        contend(packets, pkt, CONTENTION_QUEUED, node, arrived)
    hold(packets, pkt)
    table = packets.table
    inputs[i, CX_PKT] = pkt
    inputs[i, CX_TAIL_AT] = -1
    switch.visits[i, VI_ARRIVED] = arrived
    switch.visits[i, VI_HOPS_AT] = table[pkt, PK_HOPS]
    switch.visits[i, VI_VALUE_AT] = table[pkt, PK_VALUE]
    switch.visits[i, VI_CORRUPT_AT] = table[pkt, PK_CORRUPT]
    switch.visits[i, VI_FIRST_OUT] = -1
    switch.visits[i, VI_REFUSED_AT] = -1
    switch.visits[i, VI_BLOCKED_OUTPUT] = 0
    switch.visits[i, VI_BLOCKED_CREDIT] = 0
    switch.visits[i, VI_MARKED_BLOCKED] = 0
    schedule(run, inputs, i, start)


@kernel_part
def offer(machine, buffers, switch, packets, run, node):
    """Every idle injection channel of the node, in channel order, takes the next packet of its NP queue."""
    params = machine.params
    contexts = params[PR_NP_CHANNELS] * params[PR_INJECTION_VCS]
    first = node * (params[PR_PORTS] * params[PR_VCS] + contexts) + params[PR_PORTS] * params[PR_VCS]
    for c in range(contexts):
        try_start(machine, buffers, switch, packets, run, first + c)


@kernel_part
def enqueue(machine, buffers, switch, packets, run, pkt, node, t):
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
    run.stats[ST_LAST_PROGRESS] = t
    offer(machine, buffers, switch, packets, run, node)


@kernel_part
def park(switch, run, i, pc, c):
    """Context i's forward at pc was refused at cycle c and says 'else: retry': rather than run it again every
    cycle, the context waits on the output it was refused at (VI_WAITS_ON) until a VC of that port is freed."""
    inputs = switch.inputs
    inputs[i, CX_PC] = pc
    inputs[i, CX_STATE] = CX_PARKED
    inputs[i, CX_DUE] = c
    row = switch.visits[i, VI_WAITS_ON]
    inputs[i, CX_PARK_NEXT] = switch.ports[row, PT_PARKED]
    switch.ports[row, PT_PARKED] = i
    run.stats[ST_PARKED] += 1


@kernel_part
def unpark(switch, run, row, c):
    """A VC of output row `row` was freed at cycle c: every context parked on it runs its forward again when it
    would have retried it next, at c if its input comes later in this cycle's order (contexts run in input order),
    else at c + 1; the retries it was spared, each refused, are counted as executed."""
    inputs = switch.inputs
    stats = run.stats
    i = switch.ports[row, PT_PARKED]
    switch.ports[row, PT_PARKED] = -1
    while i >= 0:
        following = inputs[i, CX_PARK_NEXT]
        inputs[i, CX_PARK_NEXT] = -1
        due = c if i > stats[ST_RAN_UP_TO] else c + 1
        stats[ST_INSTRUCTIONS] += due - 1 - inputs[i, CX_DUE]
        stats[ST_PARKED] -= 1
        schedule(run, inputs, i, due)
        i = following
