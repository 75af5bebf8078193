"""The flit-level kernel: one loop over the cycles in which something can happen, in MODEL.md's order.

Each cycle: packets created in it join their injection queues; contexts with an instruction due run it
(the heap orders them by cycle, node and input); then the switch allocator grants at most one flit per
physical input and per output. Cost follows the work: the allocator visits only bound inputs, contexts
only run when due, and idle stretches with nothing bound are skipped.
"""


from ...jit import kernel_call, kernel_entry, kernel_part
from .. import isa
from ..conditions import compare
from ..records import ROUTE_SEGMENTS
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
    ERR_COPY_LOG,
    ERR_CYCLE_LIMIT,
    ERR_DEADLOCK,
    ERR_NO_LINK,
    ERR_NO_ROUTE,
    ERR_OVERFLOW,
    ERR_STALLED,
    ERR_TWICE,
    IN_ACTIVE,
    IN_BOUND_FROM,
    IN_COUNT,
    IN_FIRST,
    IN_OUT,
    IN_OVC,
    IN_PEAK,
    IN_TEE,
    IN_WAIT_FOR,
    KEY_SPAN,
    NEVER,
    PK_ACKED,
    PK_ATTEMPTS,
    PK_COPIES,
    PK_CREATE,
    PK_DELAY,
    PK_DELIVERED,
    PK_EJECTED,
    PK_FLITS,
    PK_HOPS,
    PK_NEXT,
    PK_READY,
    PK_ROUTE,
    PK_SENT,
    PK_SOURCE,
    PK_STEP,
    PK_TRIGGER,
    PK_WRAPPED,
    PR_ACK_HOP,
    PR_AXES,
    PR_CIRCUIT,
    PR_CLASS_SPLIT,
    PR_CREDIT_DELAY,
    PR_DEADLOCK_CYCLES,
    PR_DEPTH,
    PR_EJECT_DELAY,
    PR_ENTRY_INJECT,
    PR_ENTRY_RECEIVE,
    PR_ESCAPES,
    PR_FLIT_CYCLES,
    PR_HALF,
    PR_LAST_CYCLE,
    PR_LINK_LATENCY,
    PR_NP_CHANNELS,
    PR_NP_SEND,
    PR_PAUSE_AT,
    PR_PORTS,
    PR_RETRY_CYCLES,
    PR_SEGMENT_WORD,
    PR_SEGMENTS,
    PR_SETUP_RETRIES,
    PR_VCS,
    PT_BUSY_UNTIL,
    PT_FLITS,
    PT_IN_PTR,
    PT_OUT_PTR,
    PT_QUEUE_HEAD,
    PT_QUEUE_TAIL,
    ST_ACTIVE,
    ST_BIRTHS,
    ST_COPIES,
    ST_CYCLES,
    ST_DELIVERED,
    ST_EJECTED,
    ST_ERROR,
    ST_ERROR_INPUT,
    ST_ERROR_PC,
    ST_GRANTS,
    ST_HEAP,
    ST_INSTRUCTIONS,
    ST_LAST_PROGRESS,
    ST_NACKS,
    ST_NEXT_TRAFFIC,
    ST_PEAK,
    ST_TIME,
    TRIGGER_COPY,
    TRIGGER_DELIVERED,
    TRIGGER_SENT,
)

# ---- min-heaps of int64 keys: the contexts' (due * KEY_SPAN + input, so equal cycles run in node-then-input
# order) and the triggered packets' births (creation * KEY_SPAN + packet) ------------------------------------

@kernel_part
def _push(heap, stats, count, key):
    n = stats[count]
    heap[n] = key
    while n > 0:
        parent = (n - 1) >> 1
        if heap[parent] <= key:
            break
        heap[n] = heap[parent]
        n = parent
    heap[n] = key
    stats[count] += 1


@kernel_part
def _pop(heap, stats, count):
    top = heap[0]
    n = stats[count] - 1
    stats[count] = n
    last = heap[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


@kernel_part
def _schedule(run, inputs, i, due):
    inputs[i, CX_STATE] = CX_RUN
    inputs[i, CX_DUE] = due
    _push(run.heap, run.stats, ST_HEAP, due * KEY_SPAN + i)


# ---- starting contexts ---------------------------------------------------------------------------------------

@kernel_part
def _try_start(machine, buffers, switch, packets, run, i):
    """An idle context starts on the next packet: a link input's, when the head is at the front of its buffer;
    an injection channel's, the packet at the head of its node's NP queue, which it takes out of the queue."""
    params = machine.params
    inputs = switch.inputs
    if inputs[i, CX_STATE] != CX_IDLE:
        return
    if machine.injection[i] != 0:
        qrow = machine.input_node[i] * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + params[PR_PORTS]
        pkt = switch.ports[qrow, PT_QUEUE_HEAD]
        if pkt < 0:
            return
        following = packets.table[pkt, PK_NEXT]
        switch.ports[qrow, PT_QUEUE_HEAD] = following
        if following < 0:
            switch.ports[qrow, PT_QUEUE_TAIL] = -1
        packets.path[pkt, 0] = i
        start = max(packets.table[pkt, PK_READY], inputs[i, CX_FREE_FROM])
        inputs[i, CX_PC] = params[PR_ENTRY_INJECT]
    else:
        if inputs[i, IN_COUNT] == 0:
            return
        slot = inputs[i, IN_FIRST]
        if buffers.flit[i, slot] != 0:
            return
        pkt = buffers.packet[i, slot]
        start = max(buffers.usable[i, slot], inputs[i, CX_FREE_FROM])
        inputs[i, CX_PC] = params[PR_ENTRY_RECEIVE]
    inputs[i, CX_PKT] = pkt
    inputs[i, CX_TAIL_AT] = -1
    _schedule(run, inputs, i, start)


@kernel_part
def _offer(machine, buffers, switch, packets, run, node):
    """Every idle injection channel of the node, in channel order, takes the next packet of its NP queue."""
    params = machine.params
    first = node * (params[PR_PORTS] * params[PR_VCS] + params[PR_NP_CHANNELS]) + params[PR_PORTS] * params[PR_VCS]
    for c in range(params[PR_NP_CHANNELS]):
        _try_start(machine, buffers, switch, packets, run, first + c)


@kernel_part
def _enqueue(machine, buffers, switch, packets, run, pkt, t):
    """Packet pkt is created at t: it joins the back of its node's NP queue, ready n_s later."""
    params = machine.params
    table = packets.table
    node = table[pkt, PK_SOURCE]
    qrow = node * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + params[PR_PORTS]
    table[pkt, PK_CREATE] = t
    table[pkt, PK_READY] = t + params[PR_NP_SEND]
    table[pkt, PK_NEXT] = -1
    tail = switch.ports[qrow, PT_QUEUE_TAIL]
    if tail < 0:
        switch.ports[qrow, PT_QUEUE_HEAD] = pkt
    else:
        table[tail, PK_NEXT] = pkt
    switch.ports[qrow, PT_QUEUE_TAIL] = pkt
    run.stats[ST_LAST_PROGRESS] = t
    _offer(machine, buffers, switch, packets, run, node)


@kernel_part
def _trigger(packets, run, pkt, kind, node, t):
    """The event `kind` of packet pkt happened at node at cycle t: the packets waiting for it are born."""
    table = packets.table
    for k in range(packets.child_start[pkt], packets.child_start[pkt + 1]):
        child = packets.children[k]
        if table[child, PK_TRIGGER] == kind and table[child, PK_SOURCE] == node and table[child, PK_CREATE] == NEVER:
            born = t + table[child, PK_DELAY]
            table[child, PK_CREATE] = born
            table[child, PK_STEP] = table[pkt, PK_STEP] + 1
            _push(run.births, run.stats, ST_BIRTHS, born * KEY_SPAN + child)


# ---- binding and routing --------------------------------------------------------------------------------------

@kernel_part
def _bind(switch, run, i, output, vc, c):
    inputs = switch.inputs
    inputs[i, IN_WAIT_FOR] = -1
    inputs[i, IN_OUT] = output
    inputs[i, IN_OVC] = vc
    inputs[i, IN_BOUND_FROM] = c
    if inputs[i, IN_ACTIVE] == 0:
        inputs[i, IN_ACTIVE] = 1
        run.active[run.stats[ST_ACTIVE]] = i
        run.stats[ST_ACTIVE] += 1


@kernel_part
def _claim(machine, switch, packets, i, node, port, policy):
    """Take a free VC of this port by the policy; the VC taken, or -1 (the input then waits for the owner of the
    first candidate)."""
    params = machine.params
    vcs = params[PR_VCS]
    pkt = switch.inputs[i, CX_PKT]
    axis = machine.port_axis[port]
    crossing = machine.wraps[node, port] != 0 or (packets.table[pkt, PK_WRAPPED] >> axis) & 1 != 0
    low = 0
    high = vcs
    if policy == isa.VC_DATELINE:
        split = params[PR_CLASS_SPLIT]
        if split < vcs:
            if crossing:
                low = split
            else:
                high = split
    elif policy == isa.VC_ESCAPE:
        low = 1 if params[PR_ESCAPES] == 2 and crossing else 0
        high = low + 1
    elif policy == isa.VC_ADAPTIVE:
        low = params[PR_ESCAPES]
    elif policy == isa.VC_LOWER:
        high = params[PR_HALF]
    elif policy == isa.VC_UPPER:
        low = params[PR_HALF]
    base = (node * params[PR_PORTS] + port) * vcs
    owner = switch.owner
    if policy == isa.VC_CIRCUIT:
        for vc in range(vcs):
            if owner[base + vc] >= 0:
                switch.inputs[i, IN_WAIT_FOR] = owner[base + vc]
                return -1
        for vc in range(vcs):
            owner[base + vc] = i
        return 0
    for vc in range(low, high):
        if owner[base + vc] < 0:
            owner[base + vc] = i
            return vc
    if low < high:
        switch.inputs[i, IN_WAIT_FOR] = owner[base + low]
    return -1


@kernel_part
def _segment_code(params, header, pkt):
    """The code of the packet's current segment, -1 when no segment is left."""
    word = params[PR_SEGMENT_WORD]
    k = header[pkt, word]
    if k >= params[PR_SEGMENTS] or header[pkt, word + 2 + 3 * k] == 0:
        return -1
    return header[pkt, word + 3 + 3 * k]


@kernel_part
def _take_port(machine, switch, packets, run, i, node, port, policy, c):
    """Claim a VC of the port by the policy and bind input i to it: the VC, or -1 if none is free (-2: no link)."""
    if machine.neighbours[node, port] < 0:
        run.stats[ST_ERROR] = ERR_NO_LINK
        return -2
    vc = _claim(machine, switch, packets, i, node, port, policy)
    if vc >= 0:
        _bind(switch, run, i, port, vc, c)
        if machine.wraps[node, port] != 0:
            packets.table[switch.inputs[i, CX_PKT], PK_WRAPPED] |= 1 << machine.port_axis[port]
    return vc


@kernel_part
def _forward(machine, switch, packets, run, i, pc, c):
    """Execute a forward (or a tee's forward) at cycle c: 1 if a VC was taken, 0 if not, -1 on a run-time error."""
    params = machine.params
    code = machine.code
    node = machine.input_node[i]
    pkt = switch.inputs[i, CX_PKT]
    header = packets.header
    via = code[isa.CODE_ARG, pc]
    policy = code[isa.CODE_VC, pc]
    if via == isa.VIA_SEGMENT:
        if _segment_code(params, header, pkt) < 0:
            run.stats[ST_ERROR] = ERR_NO_ROUTE
            return -1
        word = params[PR_SEGMENT_WORD]
        k = header[pkt, word]
        vc = _take_port(machine, switch, packets, run, i, node, header[pkt, word + 1 + 3 * k], policy, c)
        if vc == -2:
            return -1
        if vc < 0:
            return 0
        header[pkt, word + 2 + 3 * k] -= 1
        if header[pkt, word + 2 + 3 * k] == 0:
            header[pkt, word] = k + 1
        return 1
    offsets = header[pkt]
    tried = 0  # bit a: axis a's port was tried
    while True:
        # dimension order: the lowest axis with hops left; adaptive: the axis with the most hops left first
        # (ties: the lower), then the others in that order
        axis = -1
        rank = 0
        for a in range(params[PR_AXES]):
            left = abs(offsets[a])
            if left == 0 or (tried >> a) & 1 != 0:
                continue
            if via == isa.VIA_DIMENSION_ORDER:
                axis = a
                break
            if left > rank:
                axis = a
                rank = left
        if axis < 0:
            break
        port = machine.axis_positive[axis] if offsets[axis] > 0 else machine.axis_negative[axis]
        vc = _take_port(machine, switch, packets, run, i, node, port, policy, c)
        if vc == -2:
            return -1
        if vc >= 0:
            offsets[axis] += -1 if offsets[axis] > 0 else 1
            return 1
        if via == isa.VIA_DIMENSION_ORDER:
            return 0
        tried |= 1 << axis
    if tried == 0:
        run.stats[ST_ERROR] = ERR_NO_ROUTE
        return -1
    return 0


@kernel_part
def _condition(machine, packets, pkt, local, pc):
    code = machine.code
    params = machine.params
    kind = code[isa.CODE_ARG, pc]
    segments = packets.table[pkt, PK_ROUTE] == ROUTE_SEGMENTS
    if kind == isa.COND_ARRIVED:
        if segments:
            return _segment_code(params, packets.header, pkt) < 0
        for a in range(params[PR_AXES]):
            if packets.header[pkt, a] != 0:
                return False
        return True
    if kind == isa.COND_LOCAL:
        return local
    if kind == isa.COND_SETUP_RETRIES:
        return params[PR_SETUP_RETRIES] != 0
    # a flit-level packet has no header fields of its own: only the pseudo-fields have values
    field = code[isa.CODE_FIELD, pc]
    value = -1
    if field == isa.FIELD_ROUTE:
        value = packets.table[pkt, PK_ROUTE]
    elif field == isa.FIELD_SEGMENT_CODE:
        value = _segment_code(params, packets.header, pkt) if segments else -1
    return compare(value, code[isa.CODE_COMPARE, pc], code[isa.CODE_VALUE, pc])


@kernel_part
def _release(machine, switch, i):
    """The input lets go of its output: the VC (a circuit: every VC of the port) is free again."""
    params = machine.params
    inputs = switch.inputs
    output = inputs[i, IN_OUT]
    ports = params[PR_PORTS]
    vcs = params[PR_VCS]
    if output < ports:
        base = (machine.input_node[i] * ports + output) * vcs
        if params[PR_CIRCUIT] != 0:
            for vc in range(vcs):
                switch.owner[base + vc] = -1
        else:
            switch.owner[base + inputs[i, IN_OVC]] = -1
    inputs[i, IN_OUT] = -1
    inputs[i, IN_TEE] = -1


@kernel_part
def _remove_oldest(machine, buffers, inputs, i, c):
    slot = inputs[i, IN_FIRST]
    buffers.freed[i, slot] = c
    inputs[i, IN_FIRST] = (slot + 1) % machine.params[PR_DEPTH]
    inputs[i, IN_COUNT] -= 1


@kernel_call
def _nack(machine, buffers, switch, packets, run, i, c):
    """A probe gives up: its slot is freed, every link of its partial circuit is released, and the packet goes
    back to the head of its source's NP queue, ready once the nack is home and the back-off has passed."""
    params = machine.params
    inputs = switch.inputs
    pkt = inputs[i, CX_PKT]
    table = packets.table
    _remove_oldest(machine, buffers, inputs, i, c)
    hops = table[pkt, PK_HOPS]
    for k in range(hops):
        j = packets.path[pkt, k]
        _release(machine, switch, j)
        inputs[j, CX_STATE] = CX_IDLE
        inputs[j, CX_FREE_FROM] = c
        inputs[j, CX_PKT] = -1
    table[pkt, PK_SENT] = 0
    table[pkt, PK_HOPS] = 0
    table[pkt, PK_WRAPPED] = 0
    table[pkt, PK_READY] = c + hops * params[PR_ACK_HOP] + params[PR_RETRY_CYCLES]
    table[pkt, PK_ATTEMPTS] += 1
    table[pkt, PK_ACKED] = NEVER
    for w in range(packets.header.shape[1]):
        packets.header[pkt, w] = packets.origin_header[pkt, w]
    run.stats[ST_NACKS] += 1
    node = table[pkt, PK_SOURCE]
    qrow = node * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + params[PR_PORTS]
    table[pkt, PK_NEXT] = switch.ports[qrow, PT_QUEUE_HEAD]
    if table[pkt, PK_NEXT] < 0:
        switch.ports[qrow, PT_QUEUE_TAIL] = pkt
    switch.ports[qrow, PT_QUEUE_HEAD] = pkt
    _offer(machine, buffers, switch, packets, run, node)
    for k in range(1, hops):
        _try_start(machine, buffers, switch, packets, run, packets.path[pkt, k])


@kernel_part
def _execute(machine, buffers, switch, packets, run, i, t):
    """Run the context of input i from its instruction due at t: private instructions run ahead, and the
    context stops at the next shared one that lies in the future (or stalls, or finishes)."""
    params = machine.params
    code = machine.code
    inputs = switch.inputs
    stats = run.stats
    local = machine.injection[i] != 0
    pkt = inputs[i, CX_PKT]
    pc = inputs[i, CX_PC]
    c = t
    while True:
        op = code[isa.CODE_OP, pc]
        cycles = code[isa.CODE_CYCLES, pc]
        # done only frees this context (a later head starts at max(its arrival, c + cycles) either way), and a
        # stalled wait_tail is woken by the tail's grant: neither needs to wait for its cycle; the others do
        if c > t and code[isa.CODE_SHARED, pc] != 0 and op != isa.OP_DONE:
            inputs[i, CX_PC] = pc
            _schedule(run, inputs, i, c)
            return
        stats[ST_INSTRUCTIONS] += 1
        if op == isa.OP_BRANCH:
            taken = _condition(machine, packets, pkt, local, pc) != (code[isa.CODE_NEGATE, pc] != 0)
            pc = code[isa.CODE_TARGET, pc] if taken else pc + 1
            c += cycles
        elif op == isa.OP_JUMP:
            pc = code[isa.CODE_TARGET, pc]
            c += cycles
        elif op == isa.OP_WAIT_TAIL:
            if inputs[i, CX_TAIL_AT] < 0:
                inputs[i, CX_PC] = pc
                inputs[i, CX_STATE] = CX_WAIT_TAIL
                inputs[i, CX_DUE] = c
                return
            pc += 1
            c += cycles
        elif op == isa.OP_FORWARD or op == isa.OP_TEE:
            if op == isa.OP_TEE and local:
                stats[ST_ERROR] = ERR_BAD_CONTEXT
                stats[ST_ERROR_INPUT] = i
                stats[ST_ERROR_PC] = pc
                return
            taken = _forward(machine, switch, packets, run, i, pc, c)
            if taken < 0:
                stats[ST_ERROR_INPUT] = i
                stats[ST_ERROR_PC] = pc
                return
            if taken == 1:
                if op == isa.OP_TEE:
                    inputs[i, IN_TEE] = machine.ejection[i]
                stats[ST_LAST_PROGRESS] = c
                pc += 1
                c += cycles
            elif code[isa.CODE_TARGET, pc] == isa.RETRY:
                c += 1
            else:
                pc = code[isa.CODE_TARGET, pc]
                c += cycles
        elif op == isa.OP_DELIVER or op == isa.OP_ACK or op == isa.OP_NACK:
            if local:
                stats[ST_ERROR] = ERR_BAD_CONTEXT
                stats[ST_ERROR_INPUT] = i
                stats[ST_ERROR_PC] = pc
                return
            stats[ST_LAST_PROGRESS] = c
            if op == isa.OP_DELIVER:
                _bind(switch, run, i, machine.ejection[i], 0, c)
            elif op == isa.OP_ACK:
                _remove_oldest(machine, buffers, inputs, i, c)
                packets.table[pkt, PK_ACKED] = c + packets.table[pkt, PK_HOPS] * params[PR_ACK_HOP]
            else:
                _nack(machine, buffers, switch, packets, run, i, c)
                # the probe is gone: wait_tail has nothing to wait for
                inputs[i, CX_TAIL_AT] = c
            pc += 1
            c += cycles
        elif op == isa.OP_DONE:
            stats[ST_LAST_PROGRESS] = c
            inputs[i, CX_STATE] = CX_IDLE
            inputs[i, CX_FREE_FROM] = c + cycles
            inputs[i, CX_PKT] = -1
            _try_start(machine, buffers, switch, packets, run, i)
            return
        else:  # wait_header, wait: the head is already here
            pc += 1
            c += cycles


# ---- the switch allocator -------------------------------------------------------------------------------------

@kernel_part
def _candidate(machine, buffers, switch, packets, i, t):
    """Whether input i's oldest flit can be granted its output (and a tee's ejection) at cycle t."""
    params = machine.params
    inputs = switch.inputs
    output = inputs[i, IN_OUT]
    if output < 0 or inputs[i, IN_BOUND_FROM] > t:
        return False
    ports = params[PR_PORTS]
    node = machine.input_node[i]
    if machine.injection[i] != 0:
        table = packets.table
        pkt = inputs[i, CX_PKT]
        if table[pkt, PK_READY] > t:
            return False
        if params[PR_CIRCUIT] != 0 and table[pkt, PK_SENT] >= 1 and table[pkt, PK_ACKED] > t:
            return False
    elif inputs[i, IN_COUNT] == 0 or buffers.usable[i, inputs[i, IN_FIRST]] > t:
        return False
    base = node * (ports + params[PR_NP_CHANNELS])
    if switch.ports[base + output, PT_BUSY_UNTIL] > t:
        return False
    if inputs[i, IN_TEE] >= 0 and switch.ports[base + inputs[i, IN_TEE], PT_BUSY_UNTIL] > t:
        return False
    if output < ports:
        d = machine.downstream[node * ports + output] + inputs[i, IN_OVC]
        count = inputs[d, IN_COUNT]
        depth = params[PR_DEPTH]
        if count >= depth or buffers.freed[d, (inputs[d, IN_FIRST] + count) % depth] + params[PR_CREDIT_DELAY] > t:
            inputs[i, IN_WAIT_FOR] = d
            return False
    return True


@kernel_part
def _copy(machine, packets, run, pkt, node, t):
    """Node's NP has a copy of pkt from cycle t: log it, and let the packets waiting for it be born."""
    stats = run.stats
    k = stats[ST_COPIES]
    if k >= run.copies.shape[0]:
        stats[ST_ERROR] = ERR_COPY_LOG
        return
    run.copies[k, 0] = pkt
    run.copies[k, 1] = node
    run.copies[k, 2] = t
    stats[ST_COPIES] = k + 1
    packets.table[pkt, PK_COPIES] += 1
    _trigger(packets, run, pkt, TRIGGER_COPY, node, t)


@kernel_part
def _grant(machine, buffers, switch, packets, run, i, t):
    params = machine.params
    inputs = switch.inputs
    table = packets.table
    stats = run.stats
    ports = params[PR_PORTS]
    span = ports + params[PR_NP_CHANNELS]
    vcs = params[PR_VCS]
    depth = params[PR_DEPTH]
    k = params[PR_FLIT_CYCLES]
    node = machine.input_node[i]
    injection = machine.injection[i] != 0
    output = inputs[i, IN_OUT]
    tee = inputs[i, IN_TEE]
    prow = machine.input_row[i]
    base = node * span
    if injection:
        pkt = inputs[i, CX_PKT]
        flit = table[pkt, PK_SENT]
        table[pkt, PK_SENT] += 1
    else:
        slot = inputs[i, IN_FIRST]
        pkt = buffers.packet[i, slot]
        flit = buffers.flit[i, slot]
        _remove_oldest(machine, buffers, inputs, i, t)
        switch.ports[prow, PT_IN_PTR] = (machine.input_vc[i] + 1) % vcs
    stats[ST_GRANTS] += 1
    stats[ST_LAST_PROGRESS] = t
    inputs[i, IN_WAIT_FOR] = -1
    last = flit == table[pkt, PK_FLITS] - 1
    for o in (output, tee):
        if o < 0:
            continue
        orow = base + o
        switch.ports[orow, PT_BUSY_UNTIL] = t + k
        switch.ports[orow, PT_OUT_PTR] = (prow - base + 1) % span
        switch.ports[orow, PT_FLITS] += 1
        if o < ports:
            d = machine.downstream[node * ports + o] + inputs[i, IN_OVC]
            count = inputs[d, IN_COUNT]
            if count >= depth:
                stats[ST_ERROR] = ERR_OVERFLOW
                stats[ST_ERROR_INPUT] = d
                return
            slot = (inputs[d, IN_FIRST] + count) % depth
            buffers.packet[d, slot] = pkt
            buffers.flit[d, slot] = flit
            buffers.usable[d, slot] = t + params[PR_LINK_LATENCY]
            inputs[d, IN_COUNT] = count + 1
            if count + 1 > inputs[d, IN_PEAK]:
                inputs[d, IN_PEAK] = count + 1
                if count + 1 > stats[ST_PEAK]:
                    stats[ST_PEAK] = count + 1
            if flit == 0:
                hops = table[pkt, PK_HOPS] + 1
                table[pkt, PK_HOPS] = hops
                packets.path[pkt, hops] = d
                if count == 0:
                    _try_start(machine, buffers, switch, packets, run, d)
        else:
            stats[ST_EJECTED] += 1
            table[pkt, PK_EJECTED] += 1
            if last:
                if o == output:
                    if table[pkt, PK_DELIVERED] >= 0:
                        stats[ST_ERROR] = ERR_TWICE
                        stats[ST_ERROR_INPUT] = i
                        return
                    table[pkt, PK_DELIVERED] = t + params[PR_EJECT_DELAY]
                    stats[ST_DELIVERED] += 1
                    _trigger(packets, run, pkt, TRIGGER_DELIVERED, table[pkt, PK_SOURCE], t + params[PR_EJECT_DELAY])
                _copy(machine, packets, run, pkt, node, t + params[PR_EJECT_DELAY])
                if stats[ST_ERROR] != 0:
                    return
    if last:
        _release(machine, switch, i)
        if injection:
            _trigger(packets, run, pkt, TRIGGER_SENT, node, t + k)
        inputs[i, CX_TAIL_AT] = t
        if inputs[i, CX_STATE] == CX_WAIT_TAIL:
            _schedule(run, inputs, i, max(inputs[i, CX_DUE], t + 1))


@kernel_part
def _allocate(machine, buffers, switch, packets, run, t):
    """One cycle of the separable input-first allocator (MODEL.md): each physical input picks one candidate VC
    round-robin, each output picks one of the inputs that asked for it round-robin (a teeing input asks its
    link output and its ejection output, and needs both), the winners are granted."""
    params = machine.params
    inputs = switch.inputs
    ports = params[PR_PORTS]
    span = ports + params[PR_NP_CHANNELS]
    vcs = params[PR_VCS]
    stats = run.stats
    in_choice = run.in_choice
    out_choice = run.out_choice
    n_in = 0
    kept = 0
    for k in range(stats[ST_ACTIVE]):
        i = run.active[k]
        if inputs[i, IN_OUT] < 0:
            inputs[i, IN_ACTIVE] = 0
            continue
        run.active[kept] = i
        kept += 1
        if not _candidate(machine, buffers, switch, packets, i, t):
            continue
        prow = machine.input_row[i]
        rank = (machine.input_vc[i] - switch.ports[prow, PT_IN_PTR]) % vcs
        held = in_choice[prow]
        if held < 0:
            run.touched_in[n_in] = prow
            n_in += 1
            in_choice[prow] = i
        elif rank < (machine.input_vc[held] - switch.ports[prow, PT_IN_PTR]) % vcs:
            in_choice[prow] = i
    stats[ST_ACTIVE] = kept
    # outputs pick in two rounds: every input asks its output (a teeing input its link); then a teeing input
    # that its link picked asks its ejection channel too, so two teeing inputs can never each hold one of
    # the other's outputs for ever
    n_out = 0
    for rounds in range(2):
        for k in range(n_in):
            prow = run.touched_in[k]
            i = in_choice[prow]
            base = prow - prow % span
            if rounds == 0:
                orow = base + inputs[i, IN_OUT]
            elif inputs[i, IN_TEE] >= 0 and out_choice[base + inputs[i, IN_OUT]] == i:
                orow = base + inputs[i, IN_TEE]
            else:
                continue
            held = out_choice[orow]
            if held < 0:
                run.touched_out[n_out] = orow
                n_out += 1
                out_choice[orow] = i
            elif (prow - base - switch.ports[orow, PT_OUT_PTR]) % span < \
                    (machine.input_row[held] - base - switch.ports[orow, PT_OUT_PTR]) % span:
                out_choice[orow] = i
    for k in range(n_in):
        in_choice[run.touched_in[k]] = -1
    # every input is granted at the output it is bound to (a teeing input at its link, and only if its
    # ejection channel chose it too); an ejection channel whose choice is a teeing input sends nothing itself
    for k in range(n_out):
        orow = run.touched_out[k]
        i = out_choice[orow]
        base = orow - orow % span
        if orow != base + inputs[i, IN_OUT]:
            continue
        if inputs[i, IN_TEE] >= 0 and out_choice[base + inputs[i, IN_TEE]] != i:
            continue
        _grant(machine, buffers, switch, packets, run, i, t)
    for k in range(n_out):
        out_choice[run.touched_out[k]] = -1


# ---- the loop ------------------------------------------------------------------------------------------------------

@kernel_part
def _create(machine, buffers, switch, packets, run, t):
    """The packets created at t join their NP queues in packet order: those created at a fixed cycle (run.order)
    merged with the triggered ones born at t (the births heap)."""
    stats = run.stats
    table = packets.table
    n = run.order.shape[0]
    while True:
        fixed = -1
        if stats[ST_NEXT_TRAFFIC] < n and table[run.order[stats[ST_NEXT_TRAFFIC]], PK_CREATE] <= t:
            fixed = run.order[stats[ST_NEXT_TRAFFIC]]
        born = -1
        if stats[ST_BIRTHS] > 0 and run.births[0] // KEY_SPAN <= t:
            born = run.births[0] % KEY_SPAN
        if fixed < 0 and born < 0:
            return
        if born < 0 or (fixed >= 0 and fixed < born):
            stats[ST_NEXT_TRAFFIC] += 1
            _enqueue(machine, buffers, switch, packets, run, fixed, t)
        else:
            _pop(run.births, stats, ST_BIRTHS)
            _enqueue(machine, buffers, switch, packets, run, born, t)


@kernel_entry
def run_flits(machine, buffers, switch, packets, run):
    """Simulate until every packet is delivered, an error, or a pause after PR_PAUSE_AT (call again to go on)."""
    params = machine.params
    stats = run.stats
    inputs = switch.inputs
    n = packets.table.shape[0]
    fixed = run.order.shape[0]
    t = stats[ST_TIME]
    while True:
        _create(machine, buffers, switch, packets, run, t)
        while stats[ST_HEAP] > 0 and run.heap[0] // KEY_SPAN <= t:
            i = _pop(run.heap, stats, ST_HEAP) % KEY_SPAN
            if inputs[i, CX_STATE] != CX_RUN or inputs[i, CX_DUE] != t:
                continue
            _execute(machine, buffers, switch, packets, run, i, t)
            if stats[ST_ERROR] != 0:
                stats[ST_TIME] = t
                return
        _allocate(machine, buffers, switch, packets, run, t)
        stats[ST_CYCLES] += 1
        if stats[ST_ERROR] != 0:
            stats[ST_TIME] = t
            return
        if stats[ST_DELIVERED] == n:
            stats[ST_TIME] = t
            return
        if t - stats[ST_LAST_PROGRESS] > params[PR_DEADLOCK_CYCLES]:
            stats[ST_ERROR] = ERR_DEADLOCK
            stats[ST_TIME] = t
            return
        following = t + 1
        if stats[ST_ACTIVE] == 0:
            following = NEVER
            if stats[ST_HEAP] > 0:
                following = run.heap[0] // KEY_SPAN
            if stats[ST_NEXT_TRAFFIC] < fixed:
                following = min(following, packets.table[run.order[stats[ST_NEXT_TRAFFIC]], PK_CREATE])
            if stats[ST_BIRTHS] > 0:
                following = min(following, run.births[0] // KEY_SPAN)
            if following == NEVER:
                stats[ST_ERROR] = ERR_STALLED
                stats[ST_TIME] = t
                return
            following = max(following, t + 1)
        if following > params[PR_LAST_CYCLE]:
            stats[ST_ERROR] = ERR_CYCLE_LIMIT
            stats[ST_TIME] = t
            return
        stats[ST_TIME] = following
        if t >= params[PR_PAUSE_AT]:
            return
        t = following
