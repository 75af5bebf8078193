"""Receivers: the microprogrammed heart of the routing controller.

Every node has P link receivers (one per incoming link, indexed by the direction the packets on it
travel) and B BMU bus interfaces that run the same microprogram on packets leaving the BMU. A
context's micro-sequencer is started by the event that gives it work and executes one instruction per
cycle; an instruction taking k cycles lets the next one execute k cycles later.

Instructions that touch shared state (isa.SHARED: forward, tee, deliver, store, done) execute at their
own tick, in the tick's order (clock.py). The others only read and write the context's own registers,
so a context runs them ahead of the clock as soon as it knows when they execute (PR_RUN_AHEAD): one
event per shared instruction instead of one per instruction, with identical results.

A context's header registers are its packet's header row (packets.header[p], words up to PR_REGISTER_WORDS):
the context that last ran wait_header on a packet owns them until its stream starts, and the assembler refuses a
program that could touch them after that (microcode.py, ISA.md). So no copy goes in at wait_header or out at a
forward; a refused route update is undone, and a tee saves the registers its delivered copy carries before its
forward hands them to the next holder (controller.tee_registers).
"""

from ..jit import kernel_call, kernel_part, prefetch
from ..np.processor import np_deliver, np_notice
from ..np.program import EVENT_SENT
from . import isa
from .bmu import (
    bmu_change,
    bmu_end_promise,
    bmu_next_look,
    bmu_pop_ready,
    bmu_store,
    bmu_turn_used,
    bmu_wait_for_output,
)
from .clock import held_tick, schedule
from .conditions import compare, current_segment_code
from .link import arrives_on, carry, far_end
from .logs import log_visit
from .packets import mark_contention, release
from .records import (
    ACT_CUT_THROUGH,
    ACT_DELIVERED,
    ACT_DROPPED,
    ACT_INJECTED,
    ACT_STORED,
    ACT_TEED,
    CONTENTION_QUEUED,
    CONTENTION_RETRIED,
    ROUTE_DESTINATION,
    ROUTE_SEGMENTS,
)
from .state import (
    CX_ARRIVE,
    CX_DIR,
    CX_DONE_TICK,
    CX_FROM_STORE,
    CX_HEADER,
    CX_IDLE_FROM,
    CX_PC,
    CX_PENDING_HEAD,
    CX_PENDING_TAIL,
    CX_PKT,
    CX_PRIVATE_RUN,
    CX_REFUSED_AT,
    CX_RESUME_TICK,
    CX_RETRY,
    CX_RETRY_PORT,
    CX_STREAM_START,
    CX_STREAMING,
    CX_TAKEN,
    ERR_BAD_CONTEXT,
    ERR_DROPPED,
    ERR_FIFO_OVERFLOW,
    ERR_LOOP,
    ERR_NO_HEADER,
    ERR_NO_LINK,
    ERR_NO_ROUTE,
    ERR_TRUNCATED,
    ERR_TWO_STREAMS,
    ND_INTERFACE_BLOCKED,
    ND_INTERFACE_BUSY,
    NEVER,
    PK_ARRIVE,
    PK_BUS_TICKS,
    PK_BYTES_RECEIVED,
    PK_CUTS,
    PK_DIR,
    PK_DROPPED,
    PK_HOPS,
    PK_IN_BMU,
    PK_INJECTED,
    PK_LEN,
    PK_NEXT,
    PK_REFUSED_AT,
    PK_ROUTE,
    PK_STORED_AT,
    PK_STORES,
    PK_UID,
    PK_VISIT_IN,
    PK_VISIT_PORT,
    PK_WAITS_FOR,
    PR_AXES,
    PR_BMU_PER_OUTPUT,
    PR_BMU_SETUP,
    PR_BUS_DELAY,
    PR_BUS_INTERFACES,
    PR_BYTES_PER_CYCLE,
    PR_DELIVER,
    PR_ENTRY_INJECT,
    PR_ENTRY_RECEIVE,
    PR_FIFO_BYTES,
    PR_HEADER_BYTES,
    PR_HOP_LOG,
    PR_LINK_DELAY,
    PR_PORTS,
    PR_REGISTER_WORDS,
    PR_RUN_AHEAD,
    PR_SEGMENT_WORD,
    PR_SEGMENTS,
    PR_TABLE_WORD,
    ST_CURRENT,
    ST_CUT_THROUGHS,
    ST_ERROR,
    ST_ERROR_CONTEXT,
    ST_ERROR_CYCLE,
    ST_ERROR_DETAIL,
    ST_ERROR_PACKET,
    ST_ERROR_PC,
    ST_FIFO_PEAK,
    ST_INSTRUCTIONS,
    ST_LAST_PROGRESS,
    ST_LATEST,
    ST_STORED_OUT,
    TX_FREE,
)
from .transmitter import NO_LINK, REFUSED_BUSY, REFUSED_FULL, transmit


@kernel_part
def _accept(ctx, packets, params, stats, ci, e, p, v, arrive, now):
    """Packet p, sent at tick `now`, reaches link receiver ci (event id e) of node v from tick `arrive`. Returns the
    tick from which the receiver runs its microprogram on it, or -1 if the receiver is busy (p waits in
    its FIFO, oldest first)."""
    pk = packets.table
    held_tick(stats, arrive)  # the tick _begin writes, now or when the receiver takes p from its FIFO
    if ctx[ci, CX_PKT] < 0:
        _begin(ctx, pk, params, ci, p, arrive)
        done = ctx[ci, CX_DONE_TICK]
        if now < done or (now == done and stats[ST_CURRENT] < e):
            # The receiver's last 'done' ran ahead of the clock and comes after this arrival: the packet
            # waits for it, as it would have in the receiver's FIFO.
            return _waited_behind(pk, params, p, v, ctx[ci, CX_RESUME_TICK], arrive)
        # Another part's signal raised at tick `now` is seen at now + 1 at the earliest.
        return max(now + 1, arrive)
    # The receiver is still finishing the previous packet: this one waits in the receiver FIFO.
    pk[p, PK_ARRIVE] = arrive
    pk[p, PK_NEXT] = -1
    tail = ctx[ci, CX_PENDING_TAIL]
    if tail < 0:
        ctx[ci, CX_PENDING_HEAD] = p
    else:
        pk[tail, PK_NEXT] = p
    ctx[ci, CX_PENDING_TAIL] = p
    return -1


@kernel_part
def _waited_behind(pk, params, p, v, free, arrive):
    """The tick a receiver of node v that is free from `free` starts on packet p arriving at `arrive`.
    Starting after p's header is in delays it (a receiver can do nothing with a packet before), so p has
    queued behind the packet before it, from the tick its header was in."""
    start = max(free, arrive)
    header_in = arrive + params[PR_HEADER_BYTES]
    if start > header_in:
        mark_contention(pk, p, CONTENTION_QUEUED, v, header_in)
    return start


@kernel_part
def _begin(ctx, pk, params, ci, p, arrive):
    """Start link receiver ci on packet p whose first byte arrives at tick `arrive`."""
    ctx[ci, CX_PKT] = p
    ctx[ci, CX_ARRIVE] = arrive
    ctx[ci, CX_PC] = params[PR_ENTRY_RECEIVE]
    ctx[ci, CX_HEADER] = 0
    ctx[ci, CX_STREAMING] = 0
    ctx[ci, CX_DIR] = pk[p, PK_DIR]
    ctx[ci, CX_PRIVATE_RUN] = 0


@kernel_part
def _next_pending(ctx, packets, params, ci, v, free):
    """After `done`, take the oldest packet that arrived while busy and return the tick the receiver starts
    on it (it is free from `free`), or go idle (returns -1)."""
    pk = packets.table
    p = ctx[ci, CX_PENDING_HEAD]
    if p < 0:
        ctx[ci, CX_PKT] = -1
        return -1
    ctx[ci, CX_PENDING_HEAD] = pk[p, PK_NEXT]
    if pk[p, PK_NEXT] < 0:
        ctx[ci, CX_PENDING_TAIL] = -1
    pk[p, PK_NEXT] = -1
    _begin(ctx, pk, params, ci, p, pk[p, PK_ARRIVE])
    return _waited_behind(pk, params, p, v, free, pk[p, PK_ARRIVE])


@kernel_part
def _fail(stats, code, ci, pc, uid, c, detail):
    stats[ST_ERROR] = code
    stats[ST_ERROR_CONTEXT] = ci
    stats[ST_ERROR_PC] = pc
    stats[ST_ERROR_PACKET] = uid
    stats[ST_ERROR_CYCLE] = c
    stats[ST_ERROR_DETAIL] = detail


@kernel_part
def _segment_code(header, params, p):
    """Code of the current segment of source-routed packet p, -1 when no segment is left."""
    return current_segment_code(header, p, params[PR_SEGMENT_WORD], params[PR_SEGMENTS])


@kernel_part
def _arrived(header, pk, params, p):
    """The route has no hop left: all offsets 0, or no segment left (never for other routes, whose
    microprograms count hops in a header field of their own)."""
    route = pk[p, PK_ROUTE]
    if route == ROUTE_DESTINATION:
        left = 0
        for a in range(params[PR_AXES]):
            left |= header[p, a]  # not a branch per axis: whether an axis is done is as random as the route
        return left == 0
    if route == ROUTE_SEGMENTS:
        return _segment_code(header, params, p) < 0
    return False


@kernel_part
def _condition(code, pc, p, local, header, pk, params):
    kind = code[isa.CODE_ARG, pc]
    if kind == isa.COND_ARRIVED:
        return _arrived(header, pk, params, p)
    if kind == isa.COND_LOCAL:
        return local
    field = code[isa.CODE_FIELD, pc]
    if field == isa.FIELD_ROUTE:
        x = pk[p, PK_ROUTE]
    elif field == isa.FIELD_SEGMENT_CODE:
        x = _segment_code(header, params, p)
    else:
        x = header[p, field]
    return compare(x, code[isa.CODE_COMPARE, pc], code[isa.CODE_VALUE, pc])


@kernel_part
def tail_time(ci, p, local, ctx, pk, params):
    """Tick at which the packet's last byte has passed this context.

    A BMU context is done when the last byte has left the transmitter. A link receiver empties its FIFO
    onto the bus at PR_SLOT_BYTES per cycle, faster than the link fills it, so once streaming it catches
    up and the last byte is on the bus as soon as it has arrived (or, for a short packet that started
    late, when the bus has carried it all).
    """
    length = pk[p, PK_LEN]
    if local:
        return ctx[ci, CX_STREAM_START] + length
    arrived = ctx[ci, CX_ARRIVE] + length
    if ctx[ci, CX_STREAMING] == 0:
        return arrived
    return max(arrived, ctx[ci, CX_STREAM_START] + pk[p, PK_BUS_TICKS])


@kernel_part
def _begin_stream(ci, p, local, c, ctx, pk, node, stats, params, v):
    """The receiver starts writing packet p on the bus at tick c. Returns False on FIFO overflow."""
    ctx[ci, CX_STREAMING] = 1
    stats[ST_LAST_PROGRESS] = c
    if local:
        return True
    backlog = c - ctx[ci, CX_ARRIVE]
    stats[ST_FIFO_PEAK] = max(stats[ST_FIFO_PEAK], backlog)
    ctx[ci, CX_STREAM_START] = held_tick(stats, c)
    bmu_end_promise(node, params, v, pk[p, PK_LEN], c)
    return backlog <= params[PR_FIFO_BYTES]


@kernel_part
def _prefetch_far_end(controller, clock, u, receiver):
    """Ask for the rows a send to receiver context `receiver` of node u reads there (its BMU, the receiver, the
    receiver's event id), so that on a large network their misses overlap instead of following one another."""
    if u < 0:
        return
    prefetch(controller.node, u, 0)
    prefetch(controller.ctx, receiver, 0)
    prefetch(clock.entry, receiver + u + 1, 0)


@kernel_part
def _try_port(machine, controller, packets, logs, clock, ci, p, v, port, c, now):
    """Start packet p on `port` of node v at tick c, its header already written. Returns the tick its first
    byte leaves, or a refusal (transmitter.REFUSED_*, NO_LINK). A receiver at the far end that was idle
    starts on it at once."""
    params = machine.params
    pk = packets.table
    u, receiver = far_end(machine, v, port)
    _prefetch_far_end(controller, clock, u, receiver)
    first = transmit(machine, controller, packets, logs.stats, v, port, p, c)
    if first < 0:
        return first
    if pk[p, PK_DROPPED] == 0:
        arrive = carry(machine, packets, p, first)
        start = _accept(controller.ctx, packets, params, logs.stats, receiver, receiver + u + 1, p, u, arrive, now)
        if start >= 0:
            advance(machine, controller, packets, logs, clock, receiver, u, False, start, now)
    elif params[PR_HOP_LOG] != 0:
        # swallowed at the far end: where it would have come in
        arrive = first + params[PR_LINK_DELAY]
        log_visit(logs, pk[p, PK_UID], u, arrives_on(machine, v, port), -2, arrive,
                  arrive + pk[p, PK_LEN], -1, -1, ACT_DROPPED, 0, 0, pk[p, PK_DROPPED])
    return first


@kernel_part
def _retry_tick(refusal, tx, params, v, port, c):
    """First tick a refused reservation could succeed: when the transmitter's idle gap ends, or (when the
    next BMU was full) a cycle later, since BMU room is freed by other nodes' progress."""
    if refusal == REFUSED_FULL:
        return c + params[PR_BYTES_PER_CYCLE]
    return tx[v * params[PR_PORTS] + port, TX_FREE] - params[PR_BUS_DELAY]


@kernel_part
def _forward(machine, controller, packets, logs, clock, ci, p, v, via, c):
    """Reserve a transmitter by the route `via` and start the packet on it.

    Returns the tick the first byte leaves; -1 when no transmitter could be reserved (then CX_RETRY holds
    the first tick one of those tried could be, and CX_RETRY_PORT its port); NO_LINK after recording a
    run-time error. 'adaptive'
    tries the productive ports, the axis with the most hops left first (ties: the lower axis); the other
    routes name one port. The route's update (an offset one hop closer, a segment's hops) is written into the
    header before the transmitter is tried, since a far-end receiver that starts at once reads it, and undone
    when the transmitter refuses.
    """
    params = machine.params
    header = packets.header
    ctx = controller.ctx
    stats = logs.stats
    retry = NEVER
    tried = 0
    # the header word the route's update changed and what it held, and a segment's index when the update used up
    # its hops (every route but 'adaptive' makes one attempt, and 'adaptive' sets them in each)
    changed = -1
    held = 0
    also_changed = -1
    for attempt in range(params[PR_AXES]):
        port = -1
        if via == isa.VIA_ADAPTIVE:
            # Chosen with selects, not branches: which axis has the most hops left follows the packets' random
            # destinations, which no branch predictor learns (bench/SPEED.md, the stop of 27 November, 22:36-01:36).
            best = -1
            most = 0
            for a in range(params[PR_AXES]):
                left = abs(header[p, a]) if (tried >> a) & 1 == 0 else 0
                best = a if left > most else best
                most = max(most, left)
            if best < 0:
                break
            tried |= 1 << best
            changed = best
            held = header[p, best]
            port = machine.axis_positive[best] if held > 0 else machine.axis_negative[best]
            header[p, best] = held - 1 if held > 0 else held + 1
        elif attempt > 0:
            break
        elif via == isa.VIA_STRAIGHT:
            port = ctx[ci, CX_DIR]
        elif via == isa.VIA_DIMENSION_ORDER:
            for a in range(params[PR_AXES]):
                if header[p, a] != 0:
                    changed = a
                    held = header[p, a]
                    port = machine.axis_positive[a] if held > 0 else machine.axis_negative[a]
                    header[p, a] = held - 1 if held > 0 else held + 1
                    break
        elif via == isa.VIA_SEGMENT:
            if _segment_code(header, params, p) >= 0:
                word = params[PR_SEGMENT_WORD]
                k = header[p, word]
                port = header[p, word + 1 + 3 * k]
                changed = word + 2 + 3 * k
                held = header[p, changed]
                header[p, changed] = held - 1
                if held == 1:
                    also_changed = word
                    header[p, word] = k + 1
        else:  # VIA_TABLE
            word = params[PR_TABLE_WORD]
            if word >= 0:
                route_table = header[p, word]
                if 0 <= route_table < machine.route_tables.shape[0]:
                    port = machine.route_tables[route_table, v]
        if port < 0:
            break
        first = _try_port(machine, controller, packets, logs, clock, ci, p, v, port, c, c)
        if first >= 0:
            return first
        if first == NO_LINK:
            _fail(stats, ERR_NO_LINK, ci, ctx[ci, CX_PC], packets.table[p, PK_UID], c, port)
            return NO_LINK
        if changed >= 0:
            header[p, changed] = held
        if also_changed >= 0:
            header[p, also_changed] -= 1
        tick = _retry_tick(first, controller.tx, params, v, port, c)
        if tick < retry:
            retry = tick
            ctx[ci, CX_RETRY_PORT] = port
    if retry == NEVER:
        # no port at all: the packet has no hop left on this route
        _fail(stats, ERR_NO_ROUTE, ci, ctx[ci, CX_PC], packets.table[p, PK_UID], c, -1)
        return NO_LINK
    ctx[ci, CX_RETRY] = held_tick(stats, max(c + 1, retry))
    return -1


@kernel_part
def _deliver(machine, controller, packets, logs, clock, processor, ci, p, v, c, hops, cuts, stores, teed):
    """The packet streams into the BMU and on to the NP; the copy counts when its last byte is there. A
    teed packet's visit is the transmission's (_log_sent)."""
    params = machine.params
    pk = packets.table
    tick = tail_time(ci, p, False, controller.ctx, pk, params) + params[PR_BUS_DELAY] + params[PR_DELIVER]
    if params[PR_HOP_LOG] != 0 and not teed:
        arrive = controller.ctx[ci, CX_ARRIVE]
        pk[p, PK_REFUSED_AT] = -1
        log_visit(logs, pk[p, PK_UID], v, ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES]), -1, arrive,
                  arrive + pk[p, PK_LEN], c + params[PR_BUS_DELAY], tick, ACT_DELIVERED, 0, 0, 0)
    np_deliver(machine, controller, packets, logs, clock, processor, ci, p, v, tick, hops, cuts, stores, teed, c)


@kernel_call
def _log_sent(ctx, packets, logs, params, ci, p, v, local, teed, first, c):
    """The visit of packet p to node v ends in a transmission whose first byte leaves at `first`, the
    reservation made at tick c: its hop record, now that every time of it is known."""
    pk = packets.table
    length = pk[p, PK_LEN]
    refused = pk[p, PK_REFUSED_AT]
    pk[p, PK_REFUSED_AT] = -1
    stored = 0
    if local:
        in_port = pk[p, PK_VISIT_PORT]
        first_in = pk[p, PK_VISIT_IN]
        if ctx[ci, CX_FROM_STORE] != 0:
            action = ACT_STORED
            last_in = first_in + length
            stored = first - pk[p, PK_STORED_AT]
        else:
            action = ACT_INJECTED
            last_in = first_in
    else:
        in_port = ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES])
        first_in = ctx[ci, CX_ARRIVE]
        last_in = first_in + length
        action = ACT_TEED if teed else ACT_CUT_THROUGH
    log_visit(logs, pk[p, PK_UID], v, in_port, pk[p, PK_DIR], first_in, last_in, first, first + length, action,
              stored, c - refused if refused >= 0 else 0, 0)


@kernel_part
def _private(machine, controller, packets, logs, ci, p, local, run_ahead, pc, t):
    """Execute the private instruction at `pc` from tick t. Returns (tick, pc, start): when the next one
    executes, its pc, and the tick this one executed; or, for a stall, (the tick it can proceed, the same pc,
    -1); tick -1 after an error. Running ahead, a wait does not stall: it executes when it ends. Counting
    instructions and storing the pc are left to the caller, which keeps them in locals (numba cannot tell its
    int64 tables apart, so every store would force the others to be reloaded)."""
    params = machine.params
    code = machine.code
    ctx = controller.ctx
    header = packets.header
    pk = packets.table
    op = code[isa.CODE_OP, pc]
    following = pc + 1
    if op == isa.OP_WAIT_HEADER:
        if not local:
            header_time = ctx[ci, CX_ARRIVE] + params[PR_HEADER_BYTES]
            if t < header_time:
                if not run_ahead:
                    return header_time, pc, -1
                t = header_time
        ctx[ci, CX_HEADER] = 1
    elif op == isa.OP_WAIT_TAIL:
        tail = tail_time(ci, p, local, ctx, pk, params)
        if t < tail:
            if not run_ahead:
                return tail, pc, -1
            t = tail
    elif op == isa.OP_JUMP:
        following = code[isa.CODE_TARGET, pc]
    elif op == isa.OP_WAIT:
        pass
    else:
        # branch and the field instructions read the header registers
        if ctx[ci, CX_HEADER] == 0:
            _fail(logs.stats, ERR_NO_HEADER, ci, pc, pk[p, PK_UID], t, -1)
            return -1, pc, -1
        if op == isa.OP_BRANCH:
            taken = _condition(code, pc, p, local, header, pk, params)
            if taken != (code[isa.CODE_NEGATE, pc] != 0):
                following = code[isa.CODE_TARGET, pc]
        else:
            field = code[isa.CODE_FIELD, pc]
            value = code[isa.CODE_VALUE, pc]
            if op == isa.OP_SET:
                header[p, field] = value
            elif op == isa.OP_ADD:
                header[p, field] += value
            elif op == isa.OP_OR:
                header[p, field] |= value
            else:  # OP_AND
                header[p, field] &= value
    return t + code[isa.CODE_CYCLES, pc] * params[PR_BYTES_PER_CYCLE], following, t


@kernel_part
def _execute_header_run(machine, controller, packets, ci, p, local, pc, t):
    """Run the wait_header at `pc`, from tick t, and the branches after it on the route kind and `arrived`, as the
    assembler pre-decoded them (isa.CODE_HEADER_RUN) for this packet. Returns (the tick the instruction after the
    run executes, its pc, the instructions executed, the tick the last of them started)."""
    params = machine.params
    pk = packets.table
    if not local:
        t = max(t, controller.ctx[ci, CX_ARRIVE] + params[PR_HEADER_BYTES])
    controller.ctx[ci, CX_HEADER] = 1
    arrived = 1 if _arrived(packets.header, pk, params, p) else 0
    run = machine.code[isa.CODE_HEADER_RUN + 2 * pk[p, PK_ROUTE] + arrived, pc]
    ticks = params[PR_BYTES_PER_CYCLE]
    if run == isa.NO_HEADER_RUN:  # the wait_header alone
        return t + machine.code[isa.CODE_CYCLES, pc] * ticks, pc + 1, 1, t
    bits = isa.RUN_FIELD_BITS
    mask = isa.RUN_FIELD_MASK
    following = run & mask
    executed = (run >> bits) & mask
    last = t + ((run >> 2 * bits) & mask) * ticks
    return t + ((run >> 3 * bits) & mask) * ticks, following, executed, last


@kernel_part
def _save_tee_registers(controller, header, params, p):
    """The registers a tee's delivered copy carries, saved before its forward: a far-end receiver that starts on
    the packet at once owns them from then on, and its private instructions may rewrite them before the copy is
    delivered."""
    for w in range(params[PR_REGISTER_WORDS]):
        controller.tee_registers[w] = header[p, w]


@kernel_part
def _shared(machine, controller, packets, logs, clock, processor, ci, p, v, local, c):
    """Execute the shared instruction at the context's pc at tick c (its own tick). Returns the tick the
    next instruction executes, or -1 if the context rescheduled itself, went idle or failed."""
    params = machine.params
    code = machine.code
    ctx = controller.ctx
    header = packets.header
    pk = packets.table
    stats = logs.stats
    pc = ctx[ci, CX_PC]
    op = code[isa.CODE_OP, pc]
    cycles = code[isa.CODE_CYCLES, pc] * params[PR_BYTES_PER_CYCLE]
    length = pk[p, PK_LEN]
    ctx[ci, CX_PRIVATE_RUN] = 0

    if op == isa.OP_DONE:
        if not _done_checks(code, ctx, pk, params, stats, ci, p, local, pc, c):
            return -1
        if local:
            stats[ST_LAST_PROGRESS] = c
            stats[ST_INSTRUCTIONS] += 1
            if ctx[ci, CX_FROM_STORE] != 0:
                bmu_change(controller.node, v, c, -length, 0)
            else:
                np_notice(machine, controller, packets, logs, clock, processor, p, EVENT_SENT, v, c, c)
            ctx[ci, CX_PKT] = -1
            release(packets, logs, p, c)
            # Look for the next ready packet from the next cycle on (the instruction's own cycles).
            ctx[ci, CX_IDLE_FROM] = held_tick(stats, c + cycles)
            controller.node[v, ND_INTERFACE_BUSY] += c + cycles - ctx[ci, CX_TAKEN]
            return c + cycles
        return _receiver_done(ctx, packets, logs, params, ci, p, v, c, cycles)

    # forward, tee, deliver, store: the packet starts streaming somewhere
    if ctx[ci, CX_HEADER] == 0:
        _fail(stats, ERR_NO_HEADER, ci, pc, pk[p, PK_UID], c, -1)
        return -1
    if ctx[ci, CX_STREAMING] != 0:
        _fail(stats, ERR_TWO_STREAMS, ci, pc, pk[p, PK_UID], c, -1)
        return -1
    if local and op != isa.OP_FORWARD:
        _fail(stats, ERR_BAD_CONTEXT, ci, pc, pk[p, PK_UID], c, -1)
        return -1
    until = code[isa.CODE_UNTIL, pc]
    following = pc + 1
    hops, cuts, stores = pk[p, PK_HOPS], pk[p, PK_CUTS], pk[p, PK_STORES]
    delivers = op == isa.OP_DELIVER
    teed = False  # sent on and delivered at once
    if op == isa.OP_FORWARD or (op == isa.OP_TEE and (until < 0 or header[p, until] != 0)):
        if op == isa.OP_TEE:
            _save_tee_registers(controller, header, params, p)
        first = _forward(machine, controller, packets, logs, clock, ci, p, v, code[isa.CODE_ARG, pc], c)
        if first == NO_LINK:
            return -1
        if first < 0:
            mark_contention(pk, p, CONTENTION_RETRIED, v, c)
            if params[PR_HOP_LOG] != 0 and pk[p, PK_REFUSED_AT] < 0:
                pk[p, PK_REFUSED_AT] = c
            following = code[isa.CODE_TARGET, pc]
            if following == isa.RETRY:
                if local and params[PR_BMU_PER_OUTPUT] != 0:
                    # the packet waits in the BMU for its output; the interface moves on
                    ctx[ci, CX_IDLE_FROM] = held_tick(stats, c + cycles)
                    t = v * params[PR_PORTS] + ctx[ci, CX_RETRY_PORT]
                    bmu_wait_for_output(controller, packets, logs, clock, params, ci, v, p, t, ctx[ci, CX_RETRY], c)
                    stats[ST_INSTRUCTIONS] += 1
                    return c + cycles
                # Hold the packet and execute this instruction again when a transmitter frees.
                if local and ctx[ci, CX_REFUSED_AT] < 0:
                    ctx[ci, CX_REFUSED_AT] = held_tick(stats, c)
                schedule(clock, stats, ci + v + 1, ctx[ci, CX_RETRY])
                return -1
        else:
            if not _begin_stream(ci, p, local, c, ctx, pk, controller.node, stats, params, v):
                _fail(stats, ERR_FIFO_OVERFLOW, ci, pc, pk[p, PK_UID], c, -1)
                return -1
            if local:
                ctx[ci, CX_STREAM_START] = held_tick(stats, first)
                if ctx[ci, CX_FROM_STORE] != 0:
                    stats[ST_STORED_OUT] += length
                if ctx[ci, CX_REFUSED_AT] >= 0:
                    controller.node[v, ND_INTERFACE_BLOCKED] += c - ctx[ci, CX_REFUSED_AT]
                waited_for = pk[p, PK_WAITS_FOR]
                if waited_for >= 0:
                    free = _retry_tick(REFUSED_BUSY, controller.tx, params, v, waited_for - v * params[PR_PORTS], c)
                    bmu_turn_used(controller, packets, logs, clock, params, v, p, free, c)
            else:
                pk[p, PK_CUTS] += 1
                stats[ST_CUT_THROUGHS] += 1
            teed = op == isa.OP_TEE
            delivers = teed
            if params[PR_HOP_LOG] != 0:
                _log_sent(ctx, packets, logs, params, ci, p, v, local, teed, first, c)
    else:
        # deliver, store, or a tee whose `until` field ran out (RELAY: delivered, not sent further)
        if not _begin_stream(ci, p, local, c, ctx, pk, controller.node, stats, params, v):
            _fail(stats, ERR_FIFO_OVERFLOW, ci, pc, pk[p, PK_UID], c, -1)
            return -1
        if op != isa.OP_STORE:
            delivers = True
        else:
            # whole in the BMU, ready for a bus interface once its last byte is across the bus
            ready = tail_time(ci, p, local, ctx, pk, params) + params[PR_BUS_DELAY] + params[PR_BMU_SETUP]
            bmu_store(controller, packets, logs, clock, params, ci, v, p, ready, c)
    if delivers:
        _deliver(machine, controller, packets, logs, clock, processor, ci, p, v, c, hops, cuts, stores, teed)
    stats[ST_INSTRUCTIONS] += 1
    ctx[ci, CX_PC] = following
    return c + cycles


@kernel_part
def _receiver_done(ctx, packets, logs, params, ci, p, v, t, cycles):
    """A link receiver's 'done' at tick t: it lets go of its packet and takes the next one waiting in its
    FIFO, which starts `cycles` later (returned), or goes idle (-1). Run ahead of the clock, t may be a
    future tick: CX_DONE_TICK and CX_RESUME_TICK let a packet that arrives before it wait as it would."""
    stats = logs.stats
    packets.table[p, PK_BYTES_RECEIVED] += packets.table[p, PK_LEN]
    stats[ST_LAST_PROGRESS] = max(stats[ST_LAST_PROGRESS], t)
    stats[ST_INSTRUCTIONS] += 1
    stats[ST_LATEST] = max(stats[ST_LATEST], t)
    release(packets, logs, p, t)
    ctx[ci, CX_DONE_TICK] = held_tick(stats, t)
    ctx[ci, CX_RESUME_TICK] = held_tick(stats, t + cycles)
    return _next_pending(ctx, packets, params, ci, v, t + cycles)


@kernel_part
def _done_checks(code, ctx, pk, params, stats, ci, p, local, pc, t):
    """The run-time errors of 'done': nothing streamed (the packet would be dropped), or bytes not passed
    yet. Returns False after recording one."""
    if ctx[ci, CX_STREAMING] == 0:
        _fail(stats, ERR_DROPPED, ci, pc, pk[p, PK_UID], t, -1)
        return False
    if t < tail_time(ci, p, local, ctx, pk, params):
        _fail(stats, ERR_TRUNCATED, ci, pc, pk[p, PK_UID], t, -1)
        return False
    return True


@kernel_part
def advance(machine, controller, packets, logs, clock, ci, v, local, t, now):
    """Context ci of node v (a BMU bus interface if `local`, else a link receiver): its next instruction executes
    at tick t >= now. Run private instructions ahead of the clock (if allowed) and schedule the context for the
    first shared one."""
    params = machine.params
    code = machine.code
    ctx = controller.ctx
    stats = logs.stats
    run_ahead = params[PR_RUN_AHEAD] != 0
    e = ci + v + 1
    executed = 0
    latest = 0
    p = ctx[ci, CX_PKT]
    pc = ctx[ci, CX_PC]
    while True:
        if p < 0:
            # an idle BMU context looks at the ready queue then; an idle receiver waits for a packet
            schedule(clock, stats, e, bmu_next_look(controller.node, packets, stats, v, t) if local else NEVER)
            break
        op = code[isa.CODE_OP, pc]
        if t > now and not run_ahead:
            schedule(clock, stats, e, t)
            break
        if op == isa.OP_DONE and not local:
            # Nothing else reads a link receiver's state before its 'done' except a packet arriving on
            # its link, which link_arrive makes wait for CX_RESUME_TICK as it would have.
            if not _done_checks(code, ctx, packets.table, params, stats, ci, p, local, pc, t):
                break
            ctx[ci, CX_PC] = pc
            t = _receiver_done(ctx, packets, logs, params, ci, p, v, t,
                               code[isa.CODE_CYCLES, pc] * params[PR_BYTES_PER_CYCLE])
            if t < 0:
                break
            p = ctx[ci, CX_PKT]
            pc = ctx[ci, CX_PC]
            continue
        if code[isa.CODE_SHARED, pc] != 0:
            schedule(clock, stats, e, t)
            break
        if run_ahead and op == isa.OP_WAIT_HEADER and ctx[ci, CX_PRIVATE_RUN] < isa.LOOP_LIMIT - isa.RUN_FIELD_MASK:
            # a header run executes at most RUN_FIELD_MASK instructions: from here none reaches the loop limit
            t, pc, ran, latest = _execute_header_run(machine, controller, packets, ci, p, local, pc, t)
            executed += ran
            ctx[ci, CX_PRIVATE_RUN] += ran
            continue
        t, pc, start = _private(machine, controller, packets, logs, ci, p, local, run_ahead, pc, t)
        if t < 0:
            break
        if start >= 0:
            executed += 1
            latest = start
            ctx[ci, CX_PRIVATE_RUN] += 1
            if ctx[ci, CX_PRIVATE_RUN] >= isa.LOOP_LIMIT:
                _fail(stats, ERR_LOOP, ci, pc, packets.table[p, PK_UID], start, -1)
                break
    if p >= 0:
        ctx[ci, CX_PC] = pc
    stats[ST_INSTRUCTIONS] += executed
    stats[ST_LATEST] = max(stats[ST_LATEST], latest)


@kernel_part
def proceed(machine, controller, packets, logs, clock, processor, ci, v, now):
    """Context ci of node v, its event at tick `now`: execute its instruction, then advance to the next."""
    params = machine.params
    code = machine.code
    ctx = controller.ctx
    local = ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES]) >= params[PR_PORTS]
    p = ctx[ci, CX_PKT]
    if p < 0:
        # An idle BMU bus interface takes the next ready packet from the BMU.
        p, ready = bmu_pop_ready(controller.node, packets, v, now)
        if p < 0:
            schedule(clock, logs.stats, ci + v + 1, ready)
            return
        pk = packets.table
        ctx[ci, CX_PKT] = p
        ctx[ci, CX_PC] = params[PR_ENTRY_INJECT]
        ctx[ci, CX_HEADER] = 0
        ctx[ci, CX_STREAMING] = 0
        ctx[ci, CX_DIR] = pk[p, PK_DIR]
        ctx[ci, CX_FROM_STORE] = pk[p, PK_IN_BMU]
        ctx[ci, CX_PRIVATE_RUN] = 0
        ctx[ci, CX_TAKEN] = held_tick(logs.stats, now)
        ctx[ci, CX_REFUSED_AT] = -1
        pk[p, PK_IN_BMU] = 0
        if pk[p, PK_INJECTED] < 0:  # its first time out of a BMU is at its sender: later ones store it in transit
            pk[p, PK_INJECTED] = ctx[ci, CX_TAKEN]
    t = now
    if code[isa.CODE_SHARED, ctx[ci, CX_PC]] != 0:
        t = _shared(machine, controller, packets, logs, clock, processor, ci, p, v, local, now)
    if t >= 0:
        advance(machine, controller, packets, logs, clock, ci, v, local, t, now)
