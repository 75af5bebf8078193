"""Links: a packet put on a link reaches the receiver at the far end, which takes it now or when it is free.

Receivers are indexed by the direction a packet travels (the topology's in-port table says which receiver
of the neighbour a link arrives on). A busy receiver keeps arriving packets in its FIFO, oldest first.
"""

from ..jit import kernel_part
from .packets import hold
from .state import (
    CONTENTION_QUEUED,
    CX_ARRIVE,
    CX_DIR,
    CX_DONE_TICK,
    CX_HEADER,
    CX_PC,
    CX_PENDING_HEAD,
    CX_PENDING_TAIL,
    CX_PKT,
    CX_RESUME_TICK,
    CX_STREAMING,
    PK_ARRIVE,
    PK_CONTENTION,
    PK_DIR,
    PK_NEXT,
    PR_ENTRY_RECEIVE,
    PR_HEADER_BYTES,
    PR_LINK_DELAY,
    ST_CURRENT,
)


@kernel_part
def link_arrive(ctx, packets, params, stats, ci, e, p, out_start, now):
    """Packet p starts leaving a transmitter at tick `now` + bus delay (out_start) towards receiver context
    ci (event id e). Returns the tick from which that receiver runs its microprogram on it, or -1 if the
    receiver is busy (p waits in its FIFO)."""
    pk = packets.table
    hold(packets, p)
    arrive = out_start + params[PR_LINK_DELAY]
    if ctx[ci, CX_PKT] < 0:
        receiver_begin(ctx, pk, params, ci, p, arrive)
        done = ctx[ci, CX_DONE_TICK]
        if now < done or (now == done and stats[ST_CURRENT] < e):
            # The receiver's last 'done' ran ahead of the clock and comes after this arrival: the packet
            # waits for it, as it would have in the receiver's FIFO.
            return waited_behind(pk, params, p, ctx[ci, CX_RESUME_TICK], arrive)
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
def waited_behind(pk, params, p, free, arrive):
    """The tick a receiver that is free from `free` starts on packet p arriving at `arrive`. Starting
    after p's header is in delays it (a receiver can do nothing with a packet before), so p has queued
    behind the packet before it."""
    start = max(free, arrive)
    if start > arrive + params[PR_HEADER_BYTES]:
        pk[p, PK_CONTENTION] |= CONTENTION_QUEUED
    return start


@kernel_part
def receiver_begin(ctx, pk, params, ci, p, arrive):
    """Start link receiver ci on packet p whose first byte arrives at tick `arrive`."""
    ctx[ci, CX_PKT] = p
    ctx[ci, CX_ARRIVE] = arrive
    ctx[ci, CX_PC] = params[PR_ENTRY_RECEIVE]
    ctx[ci, CX_HEADER] = 0
    ctx[ci, CX_STREAMING] = 0
    ctx[ci, CX_DIR] = pk[p, PK_DIR]


@kernel_part
def receiver_next_pending(ctx, packets, params, ci, free):
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
    receiver_begin(ctx, pk, params, ci, p, pk[p, PK_ARRIVE])
    return waited_behind(pk, params, p, free, pk[p, PK_ARRIVE])
