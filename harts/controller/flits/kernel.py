"""The flit-level kernel: one loop over the cycles in which something can happen, in MODEL.md's order.

Each cycle: sends born in it join their NP queues, the traffic created in it reaches its NPs, the NPs take
the events due (running the NP program's procedure), contexts with an instruction due run it (the timing
wheel, wheel.py, gives them in input order), then the switch allocator grants at most one flit per physical input
and per output. Cost follows the work: the allocator visits only bound inputs, contexts and NPs only run
when due, and idle stretches with nothing bound are skipped. The loop returns to its caller to show
progress (PR_PAUSE_AT), when a pool or log needs room (PAUSE_ROOM, before any work that could overflow it),
when the traffic table is used up and more follows (PAUSE_TRAFFIC), when everything is done, or on an
error; calling it again resumes exactly where it stopped.
"""

from numba.cpython.unsafe.numbers import trailing_zeros

from ...jit import kernel_call, kernel_entry, kernel_part, prefetch
from ...np.program import EVENT_ARRIVED, EVENT_SENT
from .. import isa
from ..observations import log_rows_free
from ..records import (
    ACT_DELIVERED,
    ACT_DROPPED,
    ACT_FORWARDED,
    ACT_INJECTED,
    ACT_NACKED,
    ACT_TEED,
    CONTENTION_BLOCKED,
    CONTENTION_RETRIED,
    FAULT_ALTER,
    NOTIFY_ARRIVED,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    TR_CREATE,
    VALUE_ALTERED,
)
from .contexts import enqueue, is_private, loops, offer, private_step, try_start
from .heaps import pop, pop_birth
from .logs import contend, log_copy, log_hop
from .pool import release
from .processor import np_copy, np_inject, np_notice, np_run
from .routing import bind, forward, release_output
from .state import (
    CX_DUE,
    CX_FREE_FROM,
    CX_IDLE,
    CX_PC,
    CX_PKT,
    CX_RUN,
    CX_STATE,
    CX_TAIL_AT,
    CX_WAIT_TAIL,
    ERR_BAD_CONTEXT,
    ERR_CYCLE_LIMIT,
    ERR_DEADLOCK,
    ERR_OVERFLOW,
    ERR_STALLED,
    ERR_TWICE,
    IN_BOUND_FROM,
    IN_COUNT,
    IN_DOWN,
    IN_FIRST,
    IN_LISTED,
    IN_OUT,
    IN_OVC,
    IN_SLOTS,
    IN_TEE,
    IN_WAIT_FOR,
    KEY_SPAN,
    ND_FAULT,
    ND_QUEUE_HEAD,
    ND_QUEUE_TAIL,
    ND_WAKE,
    NEVER,
    PAUSE_NONE,
    PAUSE_ROOM,
    PAUSE_SLICE,
    PAUSE_TRAFFIC,
    PHASE_ARRIVALS,
    PHASE_ROOM,
    PK_ACKED,
    PK_ATTEMPTS,
    PK_COPIES,
    PK_CORRUPT,
    PK_DELIVERED,
    PK_DIR,
    PK_DROPPED,
    PK_EJECTED,
    PK_FLITS,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_LANDED_FLITS,
    PK_LINK_FLITS,
    PK_LOST_AT,
    PK_NACKED_AT,
    PK_NEXT,
    PK_NOTIFY,
    PK_READY,
    PK_REFUSED_BY,
    PK_SENT,
    PK_SOURCE,
    PK_UID,
    PK_VALUE,
    PK_WRAPPED,
    PR_ACK_HOP,
    PR_ALTERING,
    PR_CIRCUIT,
    PR_CORRUPTION_PER_MILLION,
    PR_COUNTERS,
    PR_CREDIT_DELAY,
    PR_DEADLOCK_CYCLES,
    PR_DEPTH,
    PR_EJECT_DELAY,
    PR_FLIT_CYCLES,
    PR_HEADER_WORDS,
    PR_HOP_LOG,
    PR_IMMEDIATE_TURNAROUND,
    PR_INJECTION_VCS,
    PR_LAST_CYCLE,
    PR_LINK_LATENCY,
    PR_NP_CHANNELS,
    PR_PAUSE_AT,
    PR_PORTS,
    PR_RETRY_CYCLES,
    PR_ROOM,
    PR_SETUP_RETRIES,
    PR_TRAFFIC_MORE,
    PR_VC_ARBITRATION_ROUND_ROBIN,
    PR_VC_REUSE,
    PR_VCS,
    PT_BUSY_UNTIL,
    PT_FLITS,
    PT_IN_PTR,
    PT_LAST_PACKET,
    PT_OUT_PTR,
    SL_FLIT,
    SL_FREED,
    SL_PACKET,
    SL_USABLE,
    ST_ACTIVE,
    ST_BIRTHS,
    ST_CORRUPTED,
    ST_DELIVERIES,
    ST_DROPS,
    ST_EJECTED,
    ST_ERROR,
    ST_ERROR_INPUT,
    ST_ERROR_PC,
    ST_EVENT_FREE_COUNT,
    ST_FREE_COUNT,
    ST_GRANTS,
    ST_HEAP,
    ST_HOP_ROWS,
    ST_IN_FLIGHT,
    ST_INSTRUCTIONS,
    ST_LAST_NACK,
    ST_LAST_PROGRESS,
    ST_LOGGED,
    ST_LOST_FLITS,
    ST_NACKS,
    ST_NEXT_TRAFFIC,
    ST_NP_HEAP,
    ST_PARKED,
    ST_PAUSED,
    ST_PEAK,
    ST_PHASE,
    ST_RAN_UP_TO,
    ST_RANDOM,
    ST_TIME,
    ST_WHEEL_FROM,
    ST_WHEELED,
    VI_ARRIVED,
    VI_BLOCKED_CREDIT,
    VI_BLOCKED_OUTPUT,
    VI_FIRST_OUT,
    VI_MARKED_BLOCKED,
    VI_OCCUPANCY,
    VI_OCCUPANCY_AT,
    VI_REFUSED_AT,
    VI_UPSTREAM,
    ejection_of,
    held_cycle,
    input_local,
    input_node,
    input_row,
    input_vc,
    is_injection,
    slot_field,
)
from .wheel import next_due, next_wheel_cycle, park, schedule, take_from_heap

# ---- buffers ----------------------------------------------------------------------------------------------------

# Rings (an input's flit slots, round-robin pointers) step without the modulo: a division costs tens of cycles
# on every candidate and grant.

@kernel_part
def ring_next(k, size):
    """The position after k (0 <= k < size) on a ring of `size`."""
    k += 1
    return 0 if k == size else k


@kernel_part
def ring_add(k, steps, size):
    """(k + steps) % size for 0 <= k, steps < size."""
    k += steps
    return k - size if k >= size else k


@kernel_part
def ring_distance(start, k, size):
    """(k - start) % size for positions 0 <= start, k < size: how far round from start k is."""
    k -= start
    return k + size if k < 0 else k



@kernel_part
def _occupancy(machine, switch, i, t):
    """Bring input i's occupancy integral up to cycle t (before its flit count changes), if counters are kept."""
    if machine.params[PR_COUNTERS] != 0:
        switch.visits[i, VI_OCCUPANCY] += switch.inputs[i, IN_COUNT] * (t - switch.visits[i, VI_OCCUPANCY_AT])
        switch.visits[i, VI_OCCUPANCY_AT] = t


@kernel_part
def _remove_oldest(machine, switch, run, i, c):
    inputs = switch.inputs
    _occupancy(machine, switch, i, c)
    slot = inputs[i, IN_FIRST]
    inputs[i, slot_field(slot, SL_FREED)] = held_cycle(run.stats, c)
    inputs[i, IN_FIRST] = ring_next(slot, machine.params[PR_DEPTH])
    inputs[i, IN_COUNT] -= 1


@kernel_part
def _in_port(machine, i):
    """The receiver input i belongs to, -1 for an injection channel."""
    return -1 if is_injection(machine, i) else machine.local_row[input_local(machine, i)]


@kernel_part
def _input_vc(machine, i):
    """Input i's VC, or for an injection channel its channel number."""
    if not is_injection(machine, i):
        return input_vc(machine, i)
    return machine.local_row[input_local(machine, i)] - machine.params[PR_PORTS]


@kernel_part
def _visit(machine, switch, packets, logs, i, out_port, out_vc, last_in, last_out, action):
    """The hop record of the packet input i handles, as it leaves (or gives up at) this node."""
    if machine.params[PR_HOP_LOG] == 0:
        return
    inputs = switch.inputs
    pkt = inputs[i, CX_PKT]
    first_out = switch.visits[i, VI_FIRST_OUT] if switch.visits[i, VI_FIRST_OUT] >= 0 else last_out
    log_hop(logs, machine.params, packets.table[pkt, PK_UID], input_node(machine, i), _in_port(machine, i), out_port,
            _input_vc(machine, i), out_vc, switch.visits[i, VI_ARRIVED], last_in, first_out, last_out, action,
            switch.visits[i, VI_BLOCKED_OUTPUT], switch.visits[i, VI_BLOCKED_CREDIT], 0)


@kernel_part
def _abandon(machine, switch, packets, logs, run, j, c):
    """Input j lets go of the probe it forwarded (a nack, or the probe lost to a fault further on): its outputs
    are free, its context idle from c."""
    inputs = switch.inputs
    pkt = inputs[j, CX_PKT]
    release_output(machine, switch, run, j, c, c)
    inputs[j, CX_STATE] = CX_IDLE
    inputs[j, CX_FREE_FROM] = held_cycle(run.stats, c)
    inputs[j, CX_PKT] = -1
    release(packets, logs, pkt, c)


@kernel_call
def _nack(machine, switch, packets, logs, run, i, c):
    """A probe gives up at input i: its slot is freed, every link of its partial circuit is released, and the
    packet goes back to the head of its source's NP queue, ready once the nack is home and the back-off has
    passed."""
    params = machine.params
    inputs = switch.inputs
    pkt = inputs[i, CX_PKT]
    table = packets.table
    tail_in = inputs[i, slot_field(inputs[i, IN_FIRST], SL_USABLE)]
    _remove_oldest(machine, switch, run, i, c)
    _visit(machine, switch, packets, logs, i, -2, 0, tail_in, c, ACT_NACKED)
    made = table[pkt, PK_HOPS] - table[pkt, PK_HOPS_INHERITED]
    source = table[pkt, PK_SOURCE]
    # the refused forward named the link's owner: whose circuit refused this one, for a livelock's report
    owner = inputs[i, IN_WAIT_FOR]
    table[pkt, PK_REFUSED_BY] = inputs[owner, CX_PKT] if owner >= 0 else -1
    table[pkt, PK_NACKED_AT] = c
    j = switch.visits[i, VI_UPSTREAM]
    while j >= 0:
        _visit(machine, switch, packets, logs, j, inputs[j, IN_OUT], inputs[j, IN_OVC], switch.visits[j, VI_ARRIVED],
               switch.visits[j, VI_FIRST_OUT] + params[PR_FLIT_CYCLES], ACT_NACKED)
        _abandon(machine, switch, packets, logs, run, j, c)
        j = -1 if is_injection(machine, j) else switch.visits[j, VI_UPSTREAM]
    table[pkt, PK_SENT] = 0
    table[pkt, PK_HOPS] = table[pkt, PK_HOPS_INHERITED]
    table[pkt, PK_WRAPPED] = 0
    table[pkt, PK_ACKED] = NEVER
    table[pkt, PK_ATTEMPTS] += 1
    for w in range(params[PR_HEADER_WORDS]):
        packets.header[pkt, w] = packets.origin_header[pkt, w]
    run.stats[ST_NACKS] += 1
    nodes = switch.nodes
    table[pkt, PK_READY] = c + made * params[PR_ACK_HOP] + params[PR_RETRY_CYCLES]
    table[pkt, PK_NEXT] = nodes[source, ND_QUEUE_HEAD]
    if table[pkt, PK_NEXT] < 0:
        nodes[source, ND_QUEUE_TAIL] = pkt
    nodes[source, ND_QUEUE_HEAD] = pkt
    # the abandoned inputs take their next packets (the source's channels the nacked one, now first again)
    offer(machine, switch, packets, run, source)
    j = switch.visits[i, VI_UPSTREAM]
    while j >= 0 and not is_injection(machine, j):
        try_start(machine, switch, packets, run, j)
        j = switch.visits[j, VI_UPSTREAM]


@kernel_part
def _execute(machine, switch, packets, logs, run, i, t):
    """Run the context of input i from its instruction due at t: private instructions run ahead, and the
    context stops at the next shared one that lies in the future (or stalls, or finishes)."""
    params = machine.params
    code = machine.code
    inputs = switch.inputs
    stats = run.stats
    local = is_injection(machine, i)
    pkt = inputs[i, CX_PKT]
    pc = inputs[i, CX_PC]
    c = t
    private = 0  # private instructions in a row
    while True:
        op = code[isa.CODE_OP, pc]
        cycles = code[isa.CODE_CYCLES, pc]
        # done only frees this context (a later head starts at max(its arrival, c + cycles) either way), and a
        # stalled wait_tail is woken by the tail's grant: neither needs to wait for its cycle; the others do
        if c > t and code[isa.CODE_SHARED, pc] != 0 and op != isa.OP_DONE:
            inputs[i, CX_PC] = pc
            schedule(run, inputs, i, c)
            return
        stats[ST_INSTRUCTIONS] += 1
        if is_private(op):
            private += 1
            if loops(code, stats, i, pc, private):
                return
            pc = private_step(machine, packets, pkt, local, pc)
            c += cycles
            continue
        if op == isa.OP_WAIT_TAIL:
            if inputs[i, CX_TAIL_AT] < 0:
                inputs[i, CX_PC] = pc
                inputs[i, CX_STATE] = CX_WAIT_TAIL
                inputs[i, CX_DUE] = held_cycle(stats, c)
                return
            # its tail is through: it waits for nothing and changes nothing, so it counts towards a loop
            private += 1
            if loops(code, stats, i, pc, private):
                return
            pc += 1
            if params[PR_IMMEDIATE_TURNAROUND] == 0:
                c += cycles
        elif op == isa.OP_FORWARD or op == isa.OP_TEE:
            private = 0
            if op == isa.OP_TEE:
                if local:
                    stats[ST_ERROR] = ERR_BAD_CONTEXT
                    stats[ST_ERROR_INPUT] = i
                    stats[ST_ERROR_PC] = pc
                    return
                _keep_header(switch, packets, params, i, pkt)
            taken = forward(machine, switch, packets, run, i, pc, c)
            if taken < 0:
                stats[ST_ERROR_INPUT] = i
                stats[ST_ERROR_PC] = pc
                return
            if taken == 1:
                if op == isa.OP_TEE:
                    inputs[i, IN_TEE] = ejection_of(machine, i)
                if params[PR_HOP_LOG] != 0 and switch.visits[i, VI_REFUSED_AT] >= 0:
                    switch.visits[i, VI_BLOCKED_OUTPUT] += c - switch.visits[i, VI_REFUSED_AT]
                    switch.visits[i, VI_REFUSED_AT] = -1
                if params[PR_SETUP_RETRIES] == 0:  # a probe that may yet be nacked has not moved for good
                    stats[ST_LAST_PROGRESS] = c
                pc += 1
                c += cycles
            else:
                contend(packets, pkt, CONTENTION_RETRIED, input_node(machine, i), c)
                if code[isa.CODE_TARGET, pc] == isa.RETRY:
                    if params[PR_HOP_LOG] != 0 and switch.visits[i, VI_REFUSED_AT] < 0:
                        switch.visits[i, VI_REFUSED_AT] = c
                    if code[isa.CODE_ARG, pc] != isa.VIA_ADAPTIVE:
                        # one output was tried: nothing changes for the retry until a VC of it is freed
                        park(switch, run, i, pc, c, params[PR_VC_ARBITRATION_ROUND_ROBIN] != 0)
                        return
                    c += 1
                else:
                    pc = code[isa.CODE_TARGET, pc]
                    c += cycles
        elif op == isa.OP_DELIVER or op == isa.OP_ACK or op == isa.OP_NACK:
            private = 0
            if local:
                stats[ST_ERROR] = ERR_BAD_CONTEXT
                stats[ST_ERROR_INPUT] = i
                stats[ST_ERROR_PC] = pc
                return
            if op == isa.OP_NACK:
                stats[ST_LAST_NACK] = c
            else:
                stats[ST_LAST_PROGRESS] = c
            if op == isa.OP_DELIVER:
                _keep_header(switch, packets, params, i, pkt)
                bind(machine, switch, run, i, ejection_of(machine, i), ejection_of(machine, i) - params[PR_PORTS], c)
            elif op == isa.OP_ACK:
                _remove_oldest(machine, switch, run, i, c)
                made = packets.table[pkt, PK_HOPS] - packets.table[pkt, PK_HOPS_INHERITED]
                packets.table[pkt, PK_ACKED] = c + made * params[PR_ACK_HOP]
            else:
                _nack(machine, switch, packets, logs, run, i, c)
                # the probe is gone: wait_tail has nothing to wait for
                inputs[i, CX_TAIL_AT] = held_cycle(stats, c)
            pc += 1
            c += cycles
        elif op == isa.OP_DONE:
            if params[PR_SETUP_RETRIES] == 0:  # with retries a done may follow a nack (after a tail it adds nothing)
                stats[ST_LAST_PROGRESS] = c
            inputs[i, CX_STATE] = CX_IDLE
            free = c if params[PR_IMMEDIATE_TURNAROUND] != 0 else c + cycles
            inputs[i, CX_FREE_FROM] = held_cycle(stats, free)
            inputs[i, CX_PKT] = -1
            release(packets, logs, pkt, c)
            try_start(machine, switch, packets, run, i)
            return


@kernel_part
def _keep_header(switch, packets, params, i, pkt):
    """The header as it reached input i: what the copy a deliver or tee leaves here carries."""
    for w in range(params[PR_HEADER_WORDS]):
        switch.regs[i, w] = packets.header[pkt, w]


# ---- the switch allocator -------------------------------------------------------------------------------------

WAITS = 0  # not a candidate: unbound, no flit usable yet, or a circuit's data waiting for its acknowledgment
CANDIDATE = 1
HELD_OWN = 2  # its output (or the credit it needs) is held by its own packet's earlier flit: zero-load pacing
HELD_OUTPUT = 3  # its link or ejection channel carries another packet's flit
HELD_CREDIT = 4  # the next downstream slot is held by (or not yet credited back from) another packet's flit


@kernel_part
def _candidate(machine, switch, packets, i, base, t):
    """Whether input i (bound, of the router whose physical rows start at base) can have its oldest flit granted
    its output (and a tee's ejection) at cycle t, and if not, what holds it."""
    params = machine.params
    inputs = switch.inputs
    if inputs[i, IN_BOUND_FROM] > t:
        return WAITS
    pkt = inputs[i, CX_PKT]
    if is_injection(machine, i):
        table = packets.table
        if table[pkt, PK_READY] > t:
            return WAITS
        if params[PR_CIRCUIT] != 0 and table[pkt, PK_SENT] >= 1 and table[pkt, PK_ACKED] > t:
            return WAITS
    elif inputs[i, IN_COUNT] == 0 or inputs[i, slot_field(inputs[i, IN_FIRST], SL_USABLE)] > t:
        return WAITS
    output = inputs[i, IN_OUT]
    if switch.ports[base + output, PT_BUSY_UNTIL] > t:
        return HELD_OWN if switch.ports[base + output, PT_LAST_PACKET] == pkt else HELD_OUTPUT
    tee = inputs[i, IN_TEE]
    if tee >= 0 and switch.ports[base + tee, PT_BUSY_UNTIL] > t:
        return HELD_OWN if switch.ports[base + tee, PT_LAST_PACKET] == pkt else HELD_OUTPUT
    d = inputs[i, IN_DOWN]
    if d >= 0:
        count = inputs[d, IN_COUNT]
        depth = params[PR_DEPTH]
        slot = ring_add(inputs[d, IN_FIRST], count, depth)
        if count >= depth or inputs[d, slot_field(slot, SL_FREED)] + params[PR_CREDIT_DELAY] > t:
            inputs[i, IN_WAIT_FOR] = d
            return HELD_OWN if inputs[d, slot_field(slot, SL_PACKET)] == pkt else HELD_CREDIT
    return CANDIDATE


@kernel_part
def _held(machine, packets, switch, i, status, t):
    """Input i's packet waits this cycle for another packet (HELD_OUTPUT, HELD_CREDIT, or it lost the switch:
    CANDIDATE): counted for its hop record (when the run keeps them), and marked."""
    if machine.params[PR_HOP_LOG] != 0:
        if status == HELD_CREDIT:
            switch.visits[i, VI_BLOCKED_CREDIT] += 1
        else:
            switch.visits[i, VI_BLOCKED_OUTPUT] += 1
    # the first blocked cycle of a visit is the earliest there: later ones would not change the packet's marks
    if switch.visits[i, VI_MARKED_BLOCKED] == 0:
        switch.visits[i, VI_MARKED_BLOCKED] = 1
        contend(packets, switch.inputs[i, CX_PKT], CONTENTION_BLOCKED, input_node(machine, i), t)


@kernel_part
def _random(stats):
    """xorshift64*: a small deterministic generator whose state lives in stats[ST_RANDOM]."""
    x = stats[ST_RANDOM]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    stats[ST_RANDOM] = x
    return (x * 2685821657736338717) >> 33 & 0x7FFFFFFF


@kernel_call
def _lose(machine, switch, packets, logs, run, i, o, flit, last, t):
    """Input i's flit went out through port o into a fault (a dead link, a crashed or dropping node beyond): it
    is swallowed. A lost probe takes its circuit down and the packet is dropped; a lost worm is dropped when its
    tail is gone."""
    params = machine.params
    inputs = switch.inputs
    table = packets.table
    stats = run.stats
    node = input_node(machine, i)
    pkt = inputs[i, CX_PKT]
    reason = machine.lost[node * params[PR_PORTS] + o]
    stats[ST_LOST_FLITS] += 1
    if flit == 0:
        table[pkt, PK_DROPPED] = reason
        table[pkt, PK_LOST_AT] = t + params[PR_LINK_LATENCY]
    far = machine.neighbours[node, o]
    if params[PR_CIRCUIT] != 0 and flit == 0:
        # the probe never reaches the far end: no acknowledgment will come, so the circuit is taken down
        log_hop(logs, params, table[pkt, PK_UID], far, machine.in_port[node, o], -2, inputs[i, IN_OVC], 0,
                table[pkt, PK_LOST_AT], table[pkt, PK_LOST_AT], table[pkt, PK_LOST_AT], table[pkt, PK_LOST_AT],
                ACT_DROPPED, 0, 0, reason)
        j = i
        while j >= 0:
            upstream = -1 if is_injection(machine, j) else switch.visits[j, VI_UPSTREAM]
            _visit(machine, switch, packets, logs, j, inputs[j, IN_OUT], inputs[j, IN_OVC], switch.visits[j, VI_ARRIVED],
                   t + params[PR_FLIT_CYCLES], ACT_INJECTED if is_injection(machine, j) else ACT_FORWARDED)
            _abandon(machine, switch, packets, logs, run, j, t)
            try_start(machine, switch, packets, run, j)
            j = upstream
        stats[ST_DROPS] += 1
        stats[ST_LAST_PROGRESS] = t  # the packet is done with (its probe's grant may not have counted)
        release(packets, logs, pkt, t)
        return True
    if last:
        log_hop(logs, params, table[pkt, PK_UID], far, machine.in_port[node, o], -2, inputs[i, IN_OVC], 0,
                table[pkt, PK_LOST_AT], t + params[PR_LINK_LATENCY], t + params[PR_LINK_LATENCY],
                t + params[PR_LINK_LATENCY], ACT_DROPPED, 0, 0, reason)
        stats[ST_DROPS] += 1
        release(packets, logs, pkt, t)
    return False


@kernel_part
def _take_output(switch, orow, pkt, pointer, free):
    """Output row orow carries a flit of packet pkt until `free`; its round-robin pointer moves to `pointer`."""
    switch.ports[orow, PT_BUSY_UNTIL] = free
    switch.ports[orow, PT_OUT_PTR] = pointer
    switch.ports[orow, PT_FLITS] += 1
    switch.ports[orow, PT_LAST_PACKET] = pkt


@kernel_part
def _to_link(machine, switch, packets, logs, run, i, pkt, flit, last, t):
    """Input i's flit crosses its output link into the buffer downstream, or into the fault that swallows what the
    link sends. Returns False when the grant must stop (an error, or a lost probe took its circuit down)."""
    params = machine.params
    inputs = switch.inputs
    table = packets.table
    stats = run.stats
    o = inputs[i, IN_OUT]
    table[pkt, PK_LINK_FLITS] += 1
    if flit == 0:
        table[pkt, PK_HOPS] += 1
        table[pkt, PK_DIR] = o
        if params[PR_ALTERING] != 0 and switch.nodes[input_node(machine, i), ND_FAULT] == FAULT_ALTER:
            table[pkt, PK_VALUE] = VALUE_ALTERED
        if params[PR_CORRUPTION_PER_MILLION] > 0 and \
                _random(stats) % 1000000 < params[PR_CORRUPTION_PER_MILLION]:
            table[pkt, PK_CORRUPT] = 1
            stats[ST_CORRUPTED] += 1
    d = inputs[i, IN_DOWN]
    if d < 0:  # a fault swallows what this port sends
        table[pkt, PK_LANDED_FLITS] += 1
        return not _lose(machine, switch, packets, logs, run, i, o, flit, last, t)
    count = inputs[d, IN_COUNT]
    depth = params[PR_DEPTH]
    if count >= depth:
        stats[ST_ERROR] = ERR_OVERFLOW
        stats[ST_ERROR_INPUT] = d
        return False
    _occupancy(machine, switch, d, t)
    slot = ring_add(inputs[d, IN_FIRST], count, depth)
    inputs[d, slot_field(slot, SL_PACKET)] = pkt
    inputs[d, slot_field(slot, SL_FLIT)] = flit
    inputs[d, slot_field(slot, SL_USABLE)] = held_cycle(stats, t + params[PR_LINK_LATENCY])
    inputs[d, IN_COUNT] = count + 1
    table[pkt, PK_LANDED_FLITS] += 1
    if count + 1 > stats[ST_PEAK]:
        stats[ST_PEAK] = count + 1
    if flit == 0:
        switch.visits[d, VI_UPSTREAM] = i
        if count == 0:
            try_start(machine, switch, packets, run, d)
    return True


@kernel_part
def _to_ejection(machine, switch, packets, logs, run, processor, i, pkt, o, delivering, last, t):
    """Input i's flit goes to ejection channel o: the packet's delivery there (`delivering`), or a tee's copy.
    The last flit makes the copy, which the NP has eject_delay later. Returns False on an error."""
    params = machine.params
    table = packets.table
    stats = run.stats
    stats[ST_EJECTED] += 1
    table[pkt, PK_EJECTED] += 1
    if last:
        at = t + params[PR_EJECT_DELAY]
        node = input_node(machine, i)
        port = _in_port(machine, i)
        serial = log_copy(switch, packets, logs, params, i, pkt, node, port, at)
        table[pkt, PK_COPIES] += 1
        if delivering:
            if table[pkt, PK_DELIVERED] >= 0:
                stats[ST_ERROR] = ERR_TWICE
                stats[ST_ERROR_INPUT] = i
                return False
            table[pkt, PK_DELIVERED] = at
        # NP events are rare beside flits: their code stays out of line, called only when asked for
        if table[pkt, PK_NOTIFY] & NOTIFY_DELIVERED != 0:
            np_copy(machine, switch, packets, logs, run, processor, i, pkt, node, port, at, serial)
        if delivering and table[pkt, PK_NOTIFY] & NOTIFY_ARRIVED != 0:
            np_notice(machine, switch, packets, logs, run, processor, pkt, EVENT_ARRIVED, table[pkt, PK_SOURCE], at)
    return True


@kernel_part
def _grant(machine, switch, packets, logs, run, processor, i, node, base, prow, t):
    """Input i, physical input row prow of router `node` (whose physical rows start at base), sends its oldest flit
    at cycle t."""
    params = machine.params
    inputs = switch.inputs
    table = packets.table
    stats = run.stats
    ports = params[PR_PORTS]
    span = ports + params[PR_NP_CHANNELS]
    vcs = params[PR_VCS]
    k = params[PR_FLIT_CYCLES]
    injection = is_injection(machine, i)
    output = inputs[i, IN_OUT]
    tee = inputs[i, IN_TEE]
    pkt = inputs[i, CX_PKT]
    tail_in = 0  # the flit's arrival here, for the hop record of the last one
    if injection:
        flit = table[pkt, PK_SENT]
        table[pkt, PK_SENT] += 1
        switch.ports[prow, PT_IN_PTR] = ring_next(input_vc(machine, i), params[PR_INJECTION_VCS])
    else:
        slot = inputs[i, IN_FIRST]
        flit = inputs[i, slot_field(slot, SL_FLIT)]
        tail_in = inputs[i, slot_field(slot, SL_USABLE)]
        _remove_oldest(machine, switch, run, i, t)
        switch.ports[prow, PT_IN_PTR] = ring_next(input_vc(machine, i), vcs)
    stats[ST_GRANTS] += 1
    if flit != 0 or params[PR_SETUP_RETRIES] == 0:  # a probe that may yet be nacked has not moved for good
        stats[ST_LAST_PROGRESS] = t
    inputs[i, IN_WAIT_FOR] = -1
    last = flit == table[pkt, PK_FLITS] - 1
    if params[PR_HOP_LOG] != 0:
        # the first flit granted here is the head, or (a circuit's destination, whose ack consumed the probe) flit 1
        if flit <= 1 and switch.visits[i, VI_FIRST_OUT] < 0:
            switch.visits[i, VI_FIRST_OUT] = t
        if injection:
            tail_in = switch.visits[i, VI_ARRIVED]
    # the output, then (a tee) the ejection channel too: straight-line code for the common single output
    _take_output(switch, base + output, pkt, ring_next(prow - base, span), t + k)
    if output < ports:
        if not _to_link(machine, switch, packets, logs, run, i, pkt, flit, last, t):
            return
    elif not _to_ejection(machine, switch, packets, logs, run, processor, i, pkt, output, True, last, t):
        return
    if tee >= 0:
        _take_output(switch, base + tee, pkt, ring_next(prow - base, span), t + k)
        if not _to_ejection(machine, switch, packets, logs, run, processor, i, pkt, tee, False, last, t):
            return
    if last:
        action = ACT_FORWARDED
        if injection:
            action = ACT_INJECTED
        elif output >= ports:
            action = ACT_DELIVERED
        elif tee >= 0:
            action = ACT_TEED
        out_port = output if output < ports else -1
        _visit(machine, switch, packets, logs, i, out_port, inputs[i, IN_OVC], tail_in, t + k, action)
        release_output(machine, switch, run, i, t, t + machine.params[PR_VC_REUSE])
        if injection and table[pkt, PK_NOTIFY] & NOTIFY_SENT != 0:
            np_notice(machine, switch, packets, logs, run, processor, pkt, EVENT_SENT, node, t + k)
        inputs[i, CX_TAIL_AT] = held_cycle(stats, t)
        if inputs[i, CX_STATE] == CX_WAIT_TAIL:
            if t < inputs[i, CX_DUE]:
                # the wait_tail, due after this grant, ran ahead of it: executed in its cycle it would have found
                # the tail granted and gone on, so it did not wait, and counts once (when it runs again now)
                stats[ST_INSTRUCTIONS] -= 1
            schedule(run, inputs, i, max(inputs[i, CX_DUE], t + 1))
        if output >= ports:
            release(packets, logs, pkt, t)  # the last flit is consumed where the packet ends


@kernel_part
def _request(machine, switch, run, i, p, base, o):
    """Input i, at physical input p of the router whose rows start at base, asks its output o, which keeps the
    asker first round from its pointer."""
    out_choice = run.out_choice
    held = out_choice[o]
    if held < 0:
        out_choice[o] = i
        return
    span = machine.params[PR_PORTS] + machine.params[PR_NP_CHANNELS]
    pointer = switch.ports[base + o, PT_OUT_PTR]
    if ring_distance(pointer, p, span) < ring_distance(pointer, input_row(machine, held) - base, span):
        out_choice[o] = i


@kernel_part
def _switch(machine, switch, packets, logs, run, processor, node, base, picked, teeing, t):
    """The outputs of router `node` (its rows from base) pick among the inputs its physical inputs picked
    (run.in_choice; bit p of `picked`: physical input p picked one), and the winners are granted in physical input
    order. Outputs pick in two rounds: every input asks its output (a teeing input its link); then a teeing input
    that its link picked asks its ejection channel too, so two teeing inputs can never each hold one of the other's
    outputs for ever. A teeing input is granted only if both picked it. A lone pick wins its outputs unopposed.
    (_grant inlines much, so it has this one call site.)"""
    inputs = switch.inputs
    in_choice = run.in_choice
    out_choice = run.out_choice
    lone = picked & (picked - 1) == 0
    asked = 0  # bit o: output o was asked
    if not lone:
        m = picked
        while m != 0:
            p = trailing_zeros(m)
            m &= m - 1
            i = in_choice[p]
            _request(machine, switch, run, i, p, base, inputs[i, IN_OUT])
            asked |= 1 << inputs[i, IN_OUT]
        if teeing:
            m = picked
            while m != 0:
                p = trailing_zeros(m)
                m &= m - 1
                i = in_choice[p]
                if inputs[i, IN_TEE] >= 0 and out_choice[inputs[i, IN_OUT]] == i:
                    _request(machine, switch, run, i, p, base, inputs[i, IN_TEE])
                    asked |= 1 << inputs[i, IN_TEE]
    m = picked
    while m != 0:
        p = trailing_zeros(m)
        m &= m - 1
        i = in_choice[p]
        in_choice[p] = -1
        tee = inputs[i, IN_TEE]
        if lone or (out_choice[inputs[i, IN_OUT]] == i and (tee < 0 or out_choice[tee] == i)):
            _grant(machine, switch, packets, logs, run, processor, i, node, base, base + p, t)
            if run.stats[ST_ERROR] != 0:
                return
        else:
            _held(machine, packets, switch, i, CANDIDATE, t)
    while asked != 0:
        out_choice[trailing_zeros(asked)] = -1
        asked &= asked - 1


@kernel_part
def _prefetch_downstream(inputs, i):
    """Ask for the row of the input bound input i sends into (another router's), which _candidate reads for
    its credit: on a large network a miss, which the input before it now overlaps."""
    d = inputs[i, IN_DOWN]
    if d >= 0:
        prefetch(inputs, d, 0)
        prefetch(inputs, d, IN_SLOTS)
        prefetch(inputs, d, inputs.shape[1] - 1)


@kernel_part
def _allocate(machine, switch, packets, logs, run, processor, t):
    """One cycle of the separable input-first allocator (MODEL.md), router by router in node order (routers do not
    affect each other within a cycle: a granted flit lands and a freed slot's credit arrives in a later cycle, and
    VCs are owned per router): each physical input picks one candidate VC round-robin, then the router's outputs
    pick (_switch). A packet whose flit was ready but waited for another packet's (a link, a credit, the switch) is
    marked blocked. The bound inputs come from their bitmap in input order, so a router's come together."""
    params = machine.params
    inputs = switch.inputs
    vcs = params[PR_VCS]
    span = params[PR_PORTS] + params[PR_NP_CHANNELS]
    stats = run.stats
    in_choice = run.in_choice
    tops = run.bound_top.shape[0]
    s = -1  # the bitmap walk: summary word s, its bits still to visit (top), bitmap word `word` and its bits
    top = 0
    word = 0
    bits = 0
    node = -1
    base = 0  # node * span: the router's first physical row
    picked = 0  # bit p: physical input base + p of `node` picked a VC
    teeing = False
    while True:
        while bits == 0 and (top != 0 or s + 1 < tops):
            if top == 0:
                s += 1
                top = run.bound_top[s]
                continue
            word = (s << 6) + trailing_zeros(top)
            top &= top - 1
            bits = run.bound_bits[word]
        i = -1  # past the last bound input: the last router's outputs still pick
        if bits != 0:
            i = (word << 6) + trailing_zeros(bits)
            bits &= bits - 1
            if bits != 0:
                _prefetch_downstream(inputs, (word << 6) + trailing_zeros(bits))
            if inputs[i, IN_OUT] < 0:  # unbound since: off the bitmap
                inputs[i, IN_LISTED] = 0
                run.bound_bits[word] &= ~(1 << (i & 63))
                if run.bound_bits[word] == 0:
                    run.bound_top[s] &= ~(1 << (word & 63))
                stats[ST_ACTIVE] -= 1
                continue
        at = input_node(machine, i) if i >= 0 else -1
        if at != node or i < 0:
            if picked != 0:
                _switch(machine, switch, packets, logs, run, processor, node, base, picked, teeing, t)
                if stats[ST_ERROR] != 0:
                    return
            if i < 0:
                return
            node = at
            base = node * span
            picked = 0
            teeing = False
        status = _candidate(machine, switch, packets, i, base, t)
        if status != CANDIDATE:
            if status >= HELD_OUTPUT:
                _held(machine, packets, switch, i, status, t)
            continue
        teeing |= inputs[i, IN_TEE] >= 0
        prow = input_row(machine, i)
        p = prow - base
        held = in_choice[p]
        if held < 0:
            in_choice[p] = i
            picked |= 1 << p
            continue
        ring = params[PR_INJECTION_VCS] if is_injection(machine, i) else vcs
        pointer = switch.ports[prow, PT_IN_PTR]
        if ring_distance(pointer, input_vc(machine, i), ring) < ring_distance(pointer, input_vc(machine, held), ring):
            in_choice[p] = i
            _held(machine, packets, switch, held, CANDIDATE, t)
        else:
            _held(machine, packets, switch, i, CANDIDATE, t)


# ---- the loop ------------------------------------------------------------------------------------------------------

@kernel_part
def _room_for(logs, run, records, rows):
    """Whether the pools can take `records` more packet records and NP events, the NP events and logs `rows`
    more (a cycle's contexts and grants write at most a few rows each, so `rows` covers the bound inputs and
    the contexts due as well)."""
    stats = run.stats
    rows += 4 * (stats[ST_ACTIVE] + stats[ST_HEAP] + stats[ST_WHEELED])
    return (stats[ST_FREE_COUNT] >= records and stats[ST_EVENT_FREE_COUNT] >= records + rows
            and run.birth_cycle.shape[0] - stats[ST_BIRTHS] >= records + 2
            and log_rows_free(logs, ST_DELIVERIES, ST_LOGGED, ST_HOP_ROWS) >= rows)


@kernel_part
def _pause(stats, reason, t):
    stats[ST_PAUSED] = reason
    stats[ST_TIME] = t


@kernel_entry
def run_flits(offsets, procedure, machine, switch, packets, logs, run, processor, traffic):
    """Simulate until the traffic and everything it caused is done, an error, or a pause (stats[ST_PAUSED] says
    why); calling again resumes."""
    params = machine.params
    stats = run.stats
    inputs = switch.inputs
    room = params[PR_ROOM]
    n_traffic = traffic.shape[1]
    stats[ST_PAUSED] = PAUSE_NONE
    t = stats[ST_TIME]
    while True:
        if stats[ST_WHEEL_FROM] < t:
            stats[ST_WHEEL_FROM] = t  # a new cycle: its contexts are still to run
        if stats[ST_PHASE] == PHASE_ROOM:
            if not _room_for(logs, run, 0, room):
                _pause(stats, PAUSE_ROOM, t)
                return
            stats[ST_PHASE] = PHASE_ARRIVALS
        while stats[ST_BIRTHS] > 0 and run.birth_cycle[0] <= t:
            q = pop_birth(run, ST_BIRTHS)
            enqueue(machine, switch, packets, run, q, packets.table[q, PK_SOURCE], t)
        i = stats[ST_NEXT_TRAFFIC]
        while i < n_traffic and traffic[TR_CREATE, i] <= t:
            if not _room_for(logs, run, room, room):
                _pause(stats, PAUSE_ROOM, t)
                return
            np_inject(offsets, procedure, machine, switch, packets, logs, run, processor, traffic, i, t)
            i += 1
            stats[ST_NEXT_TRAFFIC] = i
            if stats[ST_ERROR] != 0:
                stats[ST_TIME] = t
                return
        if i >= n_traffic and params[PR_TRAFFIC_MORE] != 0:
            _pause(stats, PAUSE_TRAFFIC, t)
            return
        while stats[ST_NP_HEAP] > 0 and run.np_heap[0] // KEY_SPAN <= t:
            if not _room_for(logs, run, room, room):
                _pause(stats, PAUSE_ROOM, t)
                return
            v = pop(run.np_heap, stats, ST_NP_HEAP) % KEY_SPAN
            if switch.nodes[v, ND_WAKE] != t:  # stale: the NP ran for an earlier wake-up and was woken again
                continue
            np_run(offsets, procedure, machine, switch, packets, logs, run, processor, v, t)
            if stats[ST_ERROR] != 0:
                stats[ST_TIME] = t
                return
        # the contexts due at t, in input order
        take_from_heap(run, t)
        stats[ST_RAN_UP_TO] = -1
        while True:
            i = next_due(run, t)
            if i < 0:
                break
            if inputs[i, CX_STATE] != CX_RUN or inputs[i, CX_DUE] != t:
                continue
            stats[ST_RAN_UP_TO] = i
            _execute(machine, switch, packets, logs, run, i, t)
            if stats[ST_ERROR] != 0:
                stats[ST_TIME] = t
                return
        stats[ST_WHEEL_FROM] = t + 1
        stats[ST_RAN_UP_TO] = KEY_SPAN
        _allocate(machine, switch, packets, logs, run, processor, t)
        stats[ST_PHASE] = PHASE_ROOM
        if stats[ST_ERROR] != 0:
            stats[ST_TIME] = t
            return
        # packets in the network (in flight, not waiting to be born) and none has moved for the bound: a
        # deadlock, or with nacks since, a livelock (machine/flits.py tells them apart and names the cycle)
        if t - stats[ST_LAST_PROGRESS] > params[PR_DEADLOCK_CYCLES] and stats[ST_IN_FLIGHT] > stats[ST_BIRTHS]:
            stats[ST_ERROR] = ERR_DEADLOCK
            stats[ST_TIME] = t
            return
        following = t + 1
        if stats[ST_ACTIVE] == 0:
            following = next_wheel_cycle(run, t, NEVER)
            if stats[ST_HEAP] > 0:
                following = min(following, run.heap[0] // KEY_SPAN)
            if stats[ST_NEXT_TRAFFIC] < n_traffic:
                following = min(following, traffic[TR_CREATE, stats[ST_NEXT_TRAFFIC]])
            if stats[ST_BIRTHS] > 0:
                following = min(following, run.birth_cycle[0])
            if stats[ST_NP_HEAP] > 0:
                following = min(following, run.np_heap[0] // KEY_SPAN)
            if stats[ST_PARKED] > 0:
                # parked contexts would have retried every cycle: to the deadlock check, or past the last cycle
                following = min(following, stats[ST_LAST_PROGRESS] + params[PR_DEADLOCK_CYCLES] + 1,
                                max(t + 1, params[PR_LAST_CYCLE]))
            elif stats[ST_LAST_NACK] > stats[ST_LAST_PROGRESS]:
                # every probe is backing off: perhaps a lull of a livelock, whose check is not to be stepped over
                following = min(following, stats[ST_LAST_PROGRESS] + params[PR_DEADLOCK_CYCLES] + 1)
            if following == NEVER:
                stats[ST_TIME] = t
                if stats[ST_IN_FLIGHT] != 0:
                    stats[ST_ERROR] = ERR_STALLED
                return
            following = max(following, t + 1)
        if following > params[PR_LAST_CYCLE]:
            stats[ST_ERROR] = ERR_CYCLE_LIMIT
            stats[ST_TIME] = t
            return
        stats[ST_TIME] = following
        if t >= params[PR_PAUSE_AT]:
            stats[ST_PAUSED] = PAUSE_SLICE
            return
        t = following



def compiled_flit_kernel():
    """run_flits compiled once (or loaded from numba's disk cache) with the topology's offsets function and the NP
    procedure as first-class function arguments, so every topology and NP program shares it."""
    if not run_flits.signatures:
        run_flits.compile(_signature())
        # Calls must convert the dispatchers they pass to the first-class function types compiled for,
        # not compile a kernel of their own for each.
        run_flits.disable_compile()
    return run_flits


def flit_kernel_is_cached() -> bool:
    from ...kernel_cache import kernel_is_cached
    return bool(run_flits.signatures) or kernel_is_cached("controller/flits", "kernel.run_flits")


def _signature():
    import numpy as np
    from numba import typeof, types

    from ...network.topology import OFFSETS_SIGNATURE
    from ...np.program import PROCEDURE_SIGNATURE
    from ..records import Logs, Processor, System
    from .state import ROW_DTYPE, Machine, Packets, Run, Switch

    one = np.zeros(1, np.int64)
    two = np.zeros((1, 1), np.int64)
    bundles = (Machine(two, one, two, two, one, one, one, two, one, one, one, one, one, one, two),
               Switch(two.astype(ROW_DTYPE), two, one, one, two, two, two),
               Packets(two, two, two), Logs(one, two, two, two, two, two, one, two),
               Run(one, one, one, one, one, one, one, one, one, one, one, one),
               Processor(two, two, two, System(one, two, two, one, one)), two)
    return (types.FunctionType(OFFSETS_SIGNATURE), types.FunctionType(PROCEDURE_SIGNATURE),
            *(typeof(b) for b in bundles))
