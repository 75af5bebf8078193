"""Receivers: the microprogrammed heart of the routing controller.

Every node has P link receivers (one per incoming link, indexed by the direction the packets on it
travel) and B BMU injection contexts that run the same microprogram on packets leaving the BMU. Each
context executes one micro-instruction per cycle it is awake; an instruction taking k cycles wakes it
again k cycles later. Contexts are visited in bus-slot order (link receivers 0..P-1, then the BMU
contexts), which is also the priority when two of them reserve the same transmitter in one cycle.
"""


from . import isa
from .bmu import bmu_change, bmu_enqueue, bmu_free_bytes, bmu_pop_ready
from .jit import kernel_part
from .link import receiver_next_pending
from .network_processor import log_delivery
from .state import (
    CX_ARRIVE,
    CX_DIR,
    CX_DIST,
    CX_FLAGS,
    CX_FROM_STORE,
    CX_HEADER,
    CX_PC,
    CX_PKT,
    CX_RETRY,
    CX_STREAM_START,
    CX_STREAMING,
    CX_WAKE,
    DROP_BMU_OVERFLOW,
    ERR_BAD_CONTEXT,
    ERR_DROPPED,
    ERR_FIFO_OVERFLOW,
    ERR_NO_HEADER,
    ERR_TRUNCATED,
    ERR_TWO_STREAMS,
    FLAG_MARKED,
    KIND_BROADCAST,
    NEVER,
    PK_BYTES_RECEIVED,
    PK_CUTS,
    PK_DIR,
    PK_DIST,
    PK_DROPPED,
    PK_FLAGS,
    PK_HOPS,
    PK_IN_BMU,
    PK_KIND,
    PK_LEN,
    PK_READY,
    PK_STORES,
    PR_BMU_DROPS_WHEN_FULL,
    PR_BMU_SETUP,
    PR_BUS_DELAY,
    PR_BYTES_PER_CYCLE,
    PR_DELIVER,
    PR_ENTRY_INJECT,
    PR_FIFO_BYTES,
    PR_HEADER_BYTES,
    PR_INJECTORS,
    PR_PORTS,
    PR_SLOT_BYTES,
    ST_CUT_THROUGHS,
    ST_DROPS,
    ST_ERROR,
    ST_ERROR_CONTEXT,
    ST_ERROR_CYCLE,
    ST_ERROR_PACKET,
    ST_ERROR_PC,
    ST_FIFO_PEAK,
    ST_INSTRUCTIONS,
    ST_LAST_PROGRESS,
    ST_OVERFLOWS,
    ST_STORED_IN,
    ST_STORED_OUT,
    TX_FREE,
)
from .transmitter import transmit


@kernel_part
def _fail(stats, code, ci, pc, p, c):
    stats[ST_ERROR] = code
    stats[ST_ERROR_CONTEXT] = ci
    stats[ST_ERROR_PC] = pc
    stats[ST_ERROR_PACKET] = p
    stats[ST_ERROR_CYCLE] = c


@kernel_part
def _condition(cond, ci, p, local, ctx, ctx_tags, pkt):
    if cond == isa.COND_BROADCAST:
        return pkt[PK_KIND, p] == KIND_BROADCAST
    if cond == isa.COND_ARRIVED:
        for a in range(ctx_tags.shape[0]):
            if ctx_tags[a, ci] != 0:
                return False
        return True
    if cond == isa.COND_DISTANCE_ZERO:
        return ctx[CX_DIST, ci] == 0
    if cond == isa.COND_MARKED:
        return ctx[CX_FLAGS, ci] & FLAG_MARKED != 0
    return local  # COND_LOCAL


@kernel_part
def tail_time(ci, p, local, ctx, pkt, params):
    """Tick at which the packet's last byte has passed this context.

    A BMU context is done when the last byte has left the transmitter. A link receiver empties its FIFO
    onto the bus at PR_SLOT_BYTES per cycle, faster than the link fills it, so once streaming it catches
    up and the last byte is on the bus as soon as it has arrived (or, for a short packet that started
    late, when the bus has carried it all).
    """
    length = pkt[PK_LEN, p]
    if local:
        return ctx[CX_STREAM_START, ci] + length
    arrived = ctx[CX_ARRIVE, ci] + length
    if ctx[CX_STREAMING, ci] == 0:
        return arrived
    bpc = params[PR_BYTES_PER_CYCLE]
    slot = params[PR_SLOT_BYTES]
    return max(arrived, ctx[CX_STREAM_START, ci] + -(-length * bpc // slot))


@kernel_part
def _write_header(ci, p, ctx, ctx_tags, pkt, tags):
    """The header registers, possibly rewritten by the microprogram, become the packet's header."""
    pkt[PK_DIST, p] = ctx[CX_DIST, ci]
    pkt[PK_FLAGS, p] = ctx[CX_FLAGS, ci]
    for a in range(ctx_tags.shape[0]):
        tags[a, p] = ctx_tags[a, ci]


@kernel_part
def _begin_stream(ci, p, local, c, ctx, pkt, node, stats, params, v):
    """The receiver starts writing packet p on the bus at tick c. Returns False on FIFO overflow."""
    ctx[CX_STREAMING, ci] = 1
    stats[ST_LAST_PROGRESS] = c
    if local:
        return True
    backlog = c - ctx[CX_ARRIVE, ci]
    if backlog > stats[ST_FIFO_PEAK]:
        stats[ST_FIFO_PEAK] = backlog
    ctx[CX_STREAM_START, ci] = c
    # The BMU's promise of room for this packet ends: the bytes now go to a transmitter or into the BMU.
    if params[PR_BMU_DROPS_WHEN_FULL] == 0:
        bmu_change(node, v, c, 0, -pkt[PK_LEN, p])
    return backlog <= params[PR_FIFO_BYTES]


@kernel_part
def _forward(ci, p, v, via, c, ctx, ctx_tags, pkt, tags, tx, node, stats, params, nbr, axis_pos, axis_neg):
    """Reserve a transmitter (the productive directions, or straight on) and start the packet on it.

    Returns the tick the first byte leaves, or -1 when no transmitter was free; then CX_RETRY holds the
    first tick one of the tried transmitters could be reserved. Among productive directions the
    one with the most hops left on its axis is tried first (ties: lower axis), spreading the two routes.
    """
    retry = NEVER
    if via == isa.VIA_STRAIGHT:
        direction = ctx[CX_DIR, ci]
        _write_header(ci, p, ctx, ctx_tags, pkt, tags)
        out_start = transmit(tx, node, ctx, pkt, stats, params, nbr, v, direction, p, c)
        if out_start >= 0:
            return out_start
        retry = _retry_cycle(out_start, tx, params, v, direction, c)
    else:
        axes = ctx_tags.shape[0]
        tried = 0
        for _ in range(axes):
            best = -1
            for a in range(axes):
                if ctx_tags[a, ci] != 0 and tried & (1 << a) == 0:
                    if best < 0 or abs(ctx_tags[a, ci]) > abs(ctx_tags[best, ci]):
                        best = a
            if best < 0:
                break
            tried |= 1 << best
            tag = ctx_tags[best, ci]
            direction = axis_pos[best] if tag > 0 else axis_neg[best]
            step = 1 if tag > 0 else -1
            ctx_tags[best, ci] = tag - step
            _write_header(ci, p, ctx, ctx_tags, pkt, tags)
            ctx_tags[best, ci] = tag
            out_start = transmit(tx, node, ctx, pkt, stats, params, nbr, v, direction, p, c)
            if out_start >= 0:
                ctx_tags[best, ci] = tag - step
                return out_start
            retry = min(retry, _retry_cycle(out_start, tx, params, v, direction, c))
    ctx[CX_RETRY, ci] = max(c + 1, retry)
    return -1


@kernel_part
def _retry_cycle(refusal, tx, params, v, direction, c):
    """First time a refused reservation could succeed: when the transmitter's idle gap ends, or (when the
    next BMU was full) a cycle later, since BMU room is freed by other nodes' progress."""
    if refusal == -2:
        return c + params[PR_BYTES_PER_CYCLE]
    return tx[TX_FREE, v * params[PR_PORTS] + direction] - params[PR_BUS_DELAY]


@kernel_part
def step(ci, c, code, ctx, ctx_tags, pkt, tags, tx, node, dlog, stats, params, nbr, axis_pos, axis_neg):
    """Run context ci at tick c: one micro-instruction (which takes its cycles times bytes-per-cycle
    ticks), or a stall check."""
    ports = params[PR_PORTS]
    per_node = ports + params[PR_INJECTORS]
    v = ci // per_node
    local = ci % per_node >= ports
    bpc = params[PR_BYTES_PER_CYCLE]
    p = ctx[CX_PKT, ci]
    if p < 0:
        # An idle BMU injection context takes the next ready packet from the BMU.
        p, ready = bmu_pop_ready(node, pkt, v, c)
        if p < 0:
            ctx[CX_WAKE, ci] = ready
            return
        ctx[CX_PKT, ci] = p
        ctx[CX_PC, ci] = params[PR_ENTRY_INJECT]
        ctx[CX_HEADER, ci] = 0
        ctx[CX_STREAMING, ci] = 0
        ctx[CX_DIR, ci] = pkt[PK_DIR, p]
        ctx[CX_FROM_STORE, ci] = pkt[PK_IN_BMU, p]
        pkt[PK_IN_BMU, p] = 0
    pc = ctx[CX_PC, ci]
    op = code[isa.CODE_OP, pc]
    following = pc + 1
    length = pkt[PK_LEN, p]

    if op == isa.OP_WAIT_HEADER:
        if not local:
            header_time = ctx[CX_ARRIVE, ci] + params[PR_HEADER_BYTES]
            if c < header_time:
                ctx[CX_WAKE, ci] = header_time
                return
        ctx[CX_DIST, ci] = pkt[PK_DIST, p]
        ctx[CX_FLAGS, ci] = pkt[PK_FLAGS, p]
        for a in range(ctx_tags.shape[0]):
            ctx_tags[a, ci] = tags[a, p]
        ctx[CX_HEADER, ci] = 1

    elif op == isa.OP_WAIT_TAIL:
        tail = tail_time(ci, p, local, ctx, pkt, params)
        if c < tail:
            ctx[CX_WAKE, ci] = tail
            return

    elif op == isa.OP_JUMP:
        following = code[isa.CODE_TARGET, pc]

    elif op == isa.OP_WAIT:
        pass

    elif op == isa.OP_DONE:
        if ctx[CX_STREAMING, ci] == 0:
            _fail(stats, ERR_DROPPED, ci, pc, p, c)
            return
        if c < tail_time(ci, p, local, ctx, pkt, params):
            _fail(stats, ERR_TRUNCATED, ci, pc, p, c)
            return
        stats[ST_LAST_PROGRESS] = c
        stats[ST_INSTRUCTIONS] += 1
        if local:
            if ctx[CX_FROM_STORE, ci] != 0:
                bmu_change(node, v, c, -length, 0)
            ctx[CX_PKT, ci] = -1
            # Look for the next ready packet from the next cycle on (the instruction's own cycles).
            ctx[CX_WAKE, ci] = c + code[isa.CODE_CYCLES, pc] * bpc
        else:
            pkt[PK_BYTES_RECEIVED, p] += length
            receiver_next_pending(ctx, pkt, params, ci, c + code[isa.CODE_CYCLES, pc] * bpc - 1)
        return

    else:
        # Every remaining instruction reads or writes the header registers.
        if ctx[CX_HEADER, ci] == 0:
            _fail(stats, ERR_NO_HEADER, ci, pc, p, c)
            return
        if op == isa.OP_BRANCH:
            taken = _condition(code[isa.CODE_ARG, pc], ci, p, local, ctx, ctx_tags, pkt)
            if taken != (code[isa.CODE_NEGATE, pc] != 0):
                following = code[isa.CODE_TARGET, pc]
        elif op == isa.OP_DEC_DISTANCE:
            ctx[CX_DIST, ci] -= 1
        elif op == isa.OP_MARK:
            ctx[CX_FLAGS, ci] |= FLAG_MARKED
        else:
            # forward, tee, deliver, store: the packet starts streaming somewhere
            if ctx[CX_STREAMING, ci] != 0:
                _fail(stats, ERR_TWO_STREAMS, ci, pc, p, c)
                return
            if local and op != isa.OP_FORWARD:
                _fail(stats, ERR_BAD_CONTEXT, ci, pc, p, c)
                return
            if op == isa.OP_FORWARD or (op == isa.OP_TEE and ctx[CX_DIST, ci] != 0):
                hops, cuts, stores = pkt[PK_HOPS, p], pkt[PK_CUTS, p], pkt[PK_STORES, p]
                out_start = _forward(ci, p, v, code[isa.CODE_ARG, pc], c, ctx, ctx_tags, pkt, tags, tx, node,
                                     stats, params, nbr, axis_pos, axis_neg)
                if out_start < 0:
                    following = code[isa.CODE_TARGET, pc]
                    if following == isa.RETRY:
                        # Hold the packet and execute this instruction again when a transmitter frees.
                        ctx[CX_WAKE, ci] = ctx[CX_RETRY, ci]
                        return
                else:
                    if not _begin_stream(ci, p, local, c, ctx, pkt, node, stats, params, v):
                        _fail(stats, ERR_FIFO_OVERFLOW, ci, pc, p, c)
                        return
                    if local:
                        ctx[CX_STREAM_START, ci] = out_start
                        if ctx[CX_FROM_STORE, ci] != 0:
                            stats[ST_STORED_OUT] += length
                    else:
                        pkt[PK_CUTS, p] += 1
                        stats[ST_CUT_THROUGHS] += 1
                    if op == isa.OP_TEE:
                        _deliver(ci, p, v, c, hops, cuts, stores, ctx, pkt, node, dlog, stats, params)
            else:
                # deliver, store, or a tee whose distance ran out (RELAY: delivered, not sent further)
                _write_header(ci, p, ctx, ctx_tags, pkt, tags)
                if not _begin_stream(ci, p, local, c, ctx, pkt, node, stats, params, v):
                    _fail(stats, ERR_FIFO_OVERFLOW, ci, pc, p, c)
                    return
                if op != isa.OP_STORE:
                    _deliver(ci, p, v, c, pkt[PK_HOPS, p], pkt[PK_CUTS, p], pkt[PK_STORES, p], ctx, pkt, node,
                             dlog, stats, params)
                elif params[PR_BMU_DROPS_WHEN_FULL] != 0 and bmu_free_bytes(node, params, v) < length:
                    pkt[PK_DROPPED, p] = DROP_BMU_OVERFLOW  # the bytes still arrive, and are thrown away
                    stats[ST_OVERFLOWS] += 1
                    stats[ST_DROPS] += 1
                else:
                    # the whole packet goes into the BMU and is sent on when a transmitter frees
                    bmu_change(node, v, c, length, 0)
                    pkt[PK_IN_BMU, p] = 1
                    pkt[PK_STORES, p] += 1
                    stats[ST_STORED_IN] += length
                    pkt[PK_READY, p] = tail_time(ci, p, local, ctx, pkt, params) + params[PR_BUS_DELAY] \
                        + params[PR_BMU_SETUP]
                    bmu_enqueue(node, pkt, ctx, params, v, p, c)

    stats[ST_INSTRUCTIONS] += 1
    ctx[CX_PC, ci] = following
    ctx[CX_WAKE, ci] = c + code[isa.CODE_CYCLES, pc] * bpc


@kernel_part
def _deliver(ci, p, v, c, hops, cuts, stores, ctx, pkt, node, dlog, stats, params):
    """The packet streams into the BMU and on to the NP; the copy counts when its last byte is there."""
    time = tail_time(ci, p, False, ctx, pkt, params) + params[PR_BUS_DELAY] + params[PR_DELIVER]
    log_delivery(dlog, node, pkt, stats, params, v, p, time, hops, cuts, stores, ctx[CX_DIST, ci],
                 ctx[CX_FLAGS, ci], ctx[CX_DIR, ci], c)
