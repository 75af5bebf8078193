"""Links: a packet put on a link reaches the receiver at the far end, which takes it now or when free."""


from .jit import kernel_part
from .state import (
    CX_ARRIVE,
    CX_DIR,
    CX_HEADER,
    CX_PC,
    CX_PENDING_HEAD,
    CX_PENDING_TAIL,
    CX_PKT,
    CX_STREAMING,
    CX_WAKE,
    ND_WAKE,
    NEVER,
    PK_ARRIVE,
    PK_NEXT,
    PR_ENTRY_RECEIVE,
    PR_INJECTORS,
    PR_LINK_DELAY,
    PR_PORTS,
    ST_WOKEN,
)


@kernel_part
def link_arrive(ctx, pkt, node, stats, params, u, direction, p, out_start, c):
    """Packet p starts leaving a transmitter at tick out_start towards node u, travelling in `direction`."""
    arrive = out_start + params[PR_LINK_DELAY]
    ci = u * (params[PR_PORTS] + params[PR_INJECTORS]) + direction
    if ctx[CX_PKT, ci] < 0:
        receiver_begin(ctx, params, ci, p, arrive, c)
        wake = ctx[CX_WAKE, ci]
        if wake < node[ND_WAKE, u]:
            node[ND_WAKE, u] = wake
        if wake < stats[ST_WOKEN]:
            stats[ST_WOKEN] = wake
    else:
        # The receiver is still finishing the previous packet; its bytes wait in the receiver FIFO.
        pkt[PK_ARRIVE, p] = arrive
        pkt[PK_NEXT, p] = -1
        tail = ctx[CX_PENDING_TAIL, ci]
        if tail < 0:
            ctx[CX_PENDING_HEAD, ci] = p
        else:
            pkt[PK_NEXT, tail] = p
        ctx[CX_PENDING_TAIL, ci] = p


@kernel_part
def receiver_begin(ctx, params, ci, p, arrive, c):
    """Start link receiver ci on packet p whose first byte arrives at tick `arrive`."""
    ctx[CX_PKT, ci] = p
    ctx[CX_ARRIVE, ci] = arrive
    ctx[CX_PC, ci] = params[PR_ENTRY_RECEIVE]
    ctx[CX_HEADER, ci] = 0
    ctx[CX_STREAMING, ci] = 0
    ctx[CX_DIR, ci] = ci % (params[PR_PORTS] + params[PR_INJECTORS])
    # Another node's signal raised at tick c is seen at tick c + 1 at the earliest.
    ctx[CX_WAKE, ci] = max(c + 1, arrive)


@kernel_part
def receiver_next_pending(ctx, pkt, params, ci, c):
    """After `done`, take the oldest packet that arrived while busy, or go idle."""
    p = ctx[CX_PENDING_HEAD, ci]
    if p < 0:
        ctx[CX_PKT, ci] = -1
        ctx[CX_WAKE, ci] = NEVER
        return
    ctx[CX_PENDING_HEAD, ci] = pkt[PK_NEXT, p]
    if pkt[PK_NEXT, p] < 0:
        ctx[CX_PENDING_TAIL, ci] = -1
    pkt[PK_NEXT, p] = -1
    receiver_begin(ctx, params, ci, p, pkt[PK_ARRIVE, p], c)
