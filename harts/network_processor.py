"""Network processor (NP): hands the node's packets to the BMU and takes the copies the BMU delivers.

The NP is one serial processor per node. Sending costs PR_NP_SEND cycles per packet and taking a
delivered broadcast copy costs PR_NP_RECEIVE; a broadcast copy delivered with the 'marked' header flag
(its forward reservation failed) is sent on by the NP in the direction it was travelling, with the
distance left in its header, which completes the RELAY primitive.
"""


from .bmu import bmu_enqueue
from .jit import kernel_part
from .state import (
    DL_CUTS,
    DL_DIR,
    DL_DIST,
    DL_FLAGS,
    DL_HOPS,
    DL_NEXT,
    DL_NODE,
    DL_PKT,
    DL_STORES,
    DL_TIME,
    ERR_LOG_FULL,
    ERR_POOL_FULL,
    FLAG_MARKED,
    KIND_BROADCAST,
    ND_INBOX_HEAD,
    ND_INBOX_TAIL,
    ND_NP_FREE,
    ND_NP_WAKE,
    NEVER,
    PK_BCAST,
    PK_CREATE,
    PK_CUTS,
    PK_DELIVERIES,
    PK_DIR,
    PK_DIST,
    PK_DST,
    PK_HOPS,
    PK_KIND,
    PK_LEN,
    PK_NEXT,
    PK_PARENT,
    PK_READY,
    PK_ROWS,
    PK_SRC,
    PK_STEP,
    PK_STORES,
    PK_TAG,
    PR_BMU_SETUP,
    PR_NP_FORWARDS_MARKED,
    PR_NP_RECEIVE,
    PR_NP_SEND,
    ST_DELIVERIES,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_ERROR_PACKET,
    ST_LAST_PROGRESS,
    ST_PACKETS,
)


@kernel_part
def np_send(node, pkt, ctx, params, v, p, c):
    """The NP of node v is asked at tick c to send packet p; it reaches the BMU's ready queue in order."""
    start = max(c, node[ND_NP_FREE, v])
    handed = start + params[PR_NP_SEND]
    node[ND_NP_FREE, v] = handed
    pkt[PK_READY, p] = handed + params[PR_BMU_SETUP]
    bmu_enqueue(node, pkt, ctx, params, v, p, c)


@kernel_part
def log_delivery(dlog, node, pkt, stats, params, v, p, time, hops, cuts, stores, dist, flags, direction, c):
    """Record that a copy of packet p reaches the NP of node v at byte-time `time`."""
    d = stats[ST_DELIVERIES]
    if d >= dlog.shape[1]:
        stats[ST_ERROR] = ERR_LOG_FULL
        stats[ST_ERROR_CYCLE] = c
        stats[ST_ERROR_PACKET] = p
        return
    stats[ST_DELIVERIES] = d + 1
    stats[ST_LAST_PROGRESS] = c
    dlog[DL_PKT, d] = p
    dlog[DL_NODE, d] = v
    dlog[DL_TIME, d] = time
    dlog[DL_HOPS, d] = hops
    dlog[DL_CUTS, d] = cuts
    dlog[DL_STORES, d] = stores
    dlog[DL_DIST, d] = dist
    dlog[DL_FLAGS, d] = flags
    dlog[DL_DIR, d] = direction
    dlog[DL_NEXT, d] = -1
    pkt[PK_DELIVERIES, p] += 1
    if pkt[PK_KIND, p] == KIND_BROADCAST:
        # Broadcast copies wait in the NP's inbox in the order they complete.
        prev = -1
        cur = node[ND_INBOX_HEAD, v]
        while cur >= 0 and dlog[DL_TIME, cur] <= time:
            prev = cur
            cur = dlog[DL_NEXT, cur]
        dlog[DL_NEXT, d] = cur
        if prev < 0:
            node[ND_INBOX_HEAD, v] = d
        else:
            dlog[DL_NEXT, prev] = d
        if cur < 0:
            node[ND_INBOX_TAIL, v] = d
        node[ND_NP_WAKE, v] = min(node[ND_NP_WAKE, v], max(c + 1, time))


@kernel_part
def np_step(node, pkt, ctx, dlog, stats, params, v, c):
    """Let the NP of node v handle the delivered broadcast copies that have arrived by tick c."""
    while True:
        d = node[ND_INBOX_HEAD, v]
        if d < 0:
            node[ND_NP_WAKE, v] = NEVER
            return
        start = max(dlog[DL_TIME, d], node[ND_NP_FREE, v])
        if start > c:
            node[ND_NP_WAKE, v] = start
            return
        node[ND_INBOX_HEAD, v] = dlog[DL_NEXT, d]
        if dlog[DL_NEXT, d] < 0:
            node[ND_INBOX_TAIL, v] = -1
        node[ND_NP_FREE, v] = c + params[PR_NP_RECEIVE]
        if (params[PR_NP_FORWARDS_MARKED] != 0 and dlog[DL_FLAGS, d] & FLAG_MARKED != 0
                and dlog[DL_DIST, d] > 0):
            parent = dlog[DL_PKT, d]
            q = new_packet(pkt, stats, c)
            if q < 0:
                return
            pkt[PK_SRC, q] = v
            pkt[PK_DST, q] = -1
            pkt[PK_LEN, q] = pkt[PK_LEN, parent]
            pkt[PK_KIND, q] = KIND_BROADCAST
            pkt[PK_DIST, q] = dlog[DL_DIST, d]
            pkt[PK_DIR, q] = dlog[DL_DIR, d]
            pkt[PK_STEP, q] = pkt[PK_STEP, parent]
            pkt[PK_TAG, q] = pkt[PK_TAG, parent]
            pkt[PK_BCAST, q] = pkt[PK_BCAST, parent]
            pkt[PK_PARENT, q] = d
            pkt[PK_HOPS, q] = dlog[DL_HOPS, d]
            pkt[PK_CUTS, q] = dlog[DL_CUTS, d]
            pkt[PK_STORES, q] = dlog[DL_STORES, d] + 1
            np_send(node, pkt, ctx, params, v, q, node[ND_NP_FREE, v])


@kernel_part
def new_packet(pkt, stats, c):
    """A fresh packet record from the preallocated pool, or -1 (and an error) when the pool is exhausted."""
    q = stats[ST_PACKETS]
    if q >= pkt.shape[1]:
        stats[ST_ERROR] = ERR_POOL_FULL
        stats[ST_ERROR_CYCLE] = c
        return -1
    stats[ST_PACKETS] = q + 1
    for row in range(PK_ROWS):
        pkt[row, q] = 0
    pkt[PK_NEXT, q] = -1
    pkt[PK_PARENT, q] = -1
    pkt[PK_CREATE, q] = c
    return q
