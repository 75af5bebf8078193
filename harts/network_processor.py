"""Network processor (NP): hands the node's packets to the BMU and runs the broadcast procedures on the
copies the BMU delivers.

The NP is one serial processor per node: each delivered broadcast copy occupies it for PR_NP_RECEIVE
ticks, in the order the copies arrive. It then runs the copy's relay procedure (harts.relay) and, if
the copy arrived *marked* (its forward reservation failed), also sends it on in the direction it was
travelling with the distance left, which completes the RELAY primitive. send_packet is non-blocking:
a packet reaches the BMU PR_NP_SEND ticks after the NP issued it, without holding the NP, and all the
send_packets of one procedure run go together, so the six links transmit in parallel.
"""

from .bmu import bmu_enqueue
from .jit import kernel_part
from .relay import (
    NO_PROCEDURE,
    SEND_DIRECTION,
    SEND_DISTANCE,
    SEND_STEP,
    SEND_TAG,
    bcast_init,
    relay,
)
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
    DL_VALUE,
    ERR_LOG_FULL,
    ERR_POOL_FULL,
    FAULT_BOGUS,
    FLAG_CORRUPT,
    FLAG_MARKED,
    KIND_BROADCAST,
    ND_FAULT,
    ND_INBOX_HEAD,
    ND_INBOX_TAIL,
    ND_NP_FREE,
    ND_NP_WAKE,
    NEVER,
    PK_ALGORITHM,
    PK_BCAST,
    PK_CREATE,
    PK_CUTS,
    PK_DIR,
    PK_DIST,
    PK_DIST0,
    PK_DST,
    PK_FLAGS,
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
    PK_VALUE,
    PR_BMU_SETUP,
    PR_MESH_SIZE,
    PR_NP_RECEIVE,
    PR_NP_SEND,
    PR_PORTS,
    ST_BOGUS,
    ST_DELIVERIES,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_ERROR_PACKET,
    ST_LAST_PROGRESS,
    ST_PACKETS,
    VALUE_ALTERED,
)


@kernel_part
def _hand_over(node, pkt, ctx, params, v, p, handed, c):
    pkt[PK_READY, p] = handed + params[PR_BMU_SETUP]
    bmu_enqueue(node, pkt, ctx, params, v, p, c)


@kernel_part
def np_send(node, pkt, ctx, params, v, p, c):
    """The NP of node v issues send_packet for unicast packet p at tick c."""
    _hand_over(node, pkt, ctx, params, v, p, c + params[PR_NP_SEND], c)


@kernel_part
def np_initiate(node, pkt, ctx, stats, params, scratch, v, init, c):
    """The NP of node v starts broadcast `init` (a KIND_INITIATE traffic record) with BCAST_INIT."""
    handed = c + params[PR_NP_SEND]
    count = bcast_init(pkt[PK_ALGORITHM, init], params[PR_MESH_SIZE], scratch)
    _send_all(node, pkt, ctx, stats, params, scratch, count, v, init, pkt[PK_ALGORITHM, init],
              pkt[PK_VALUE, init], 0, -1, 0, 0, 0, handed, c)


@kernel_part
def _send_all(node, pkt, ctx, stats, params, scratch, count, v, model, algorithm, value, flags, parent, hops,
              cuts, stores, handed, c):
    """Create one packet record per row of scratch (length and broadcast id from `model`) and hand them
    all to the BMU at `handed`."""
    for s in range(count):
        q = new_packet(pkt, stats, c)
        if q < 0:
            return
        pkt[PK_SRC, q] = v
        pkt[PK_DST, q] = -1
        pkt[PK_LEN, q] = pkt[PK_LEN, model]
        pkt[PK_KIND, q] = KIND_BROADCAST
        pkt[PK_ALGORITHM, q] = algorithm
        pkt[PK_BCAST, q] = pkt[PK_BCAST, model]
        pkt[PK_VALUE, q] = value
        pkt[PK_FLAGS, q] = flags
        pkt[PK_DIR, q] = scratch[s, SEND_DIRECTION]
        pkt[PK_DIST, q] = scratch[s, SEND_DISTANCE]
        pkt[PK_DIST0, q] = scratch[s, SEND_DISTANCE]
        pkt[PK_STEP, q] = scratch[s, SEND_STEP]
        pkt[PK_TAG, q] = scratch[s, SEND_TAG]
        pkt[PK_PARENT, q] = parent
        pkt[PK_HOPS, q] = hops
        pkt[PK_CUTS, q] = cuts
        pkt[PK_STORES, q] = stores
        _hand_over(node, pkt, ctx, params, v, q, handed, c)


@kernel_part
def log_delivery(dlog, node, pkt, stats, params, v, p, time, hops, cuts, stores, dist, flags, direction, c):
    """Record that a copy of packet p reaches the NP of node v at tick `time`."""
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
    dlog[DL_VALUE, d] = pkt[PK_VALUE, p]
    dlog[DL_NEXT, d] = -1
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
def np_step(node, pkt, ctx, dlog, stats, params, scratch, v, c):
    """Let the NP of node v run the procedures for the broadcast copies delivered by tick c."""
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
        decided = c + params[PR_NP_RECEIVE]
        p = dlog[DL_PKT, d]
        distance = dlog[DL_DIST, d]
        direction = dlog[DL_DIR, d]
        count = 0
        if dlog[DL_FLAGS, d] & FLAG_MARKED != 0 and distance > 0:
            # RELAY's forward failed at the link level: the NP sends the copy on itself.
            scratch[0, SEND_DIRECTION] = direction
            scratch[0, SEND_DISTANCE] = distance
            scratch[0, SEND_STEP] = pkt[PK_STEP, p]
            scratch[0, SEND_TAG] = pkt[PK_TAG, p]
            count = 1
        count += relay(pkt[PK_ALGORITHM, p], pkt[PK_STEP, p], pkt[PK_TAG, p], distance, direction,
                       params[PR_MESH_SIZE], scratch[count:])
        node[ND_NP_FREE, v] = decided
        handed = decided + params[PR_NP_SEND]
        if count > 0:
            # The NP passes on what it received: a damaged payload stays damaged.
            _send_all(node, pkt, ctx, stats, params, scratch, count, v, p, pkt[PK_ALGORITHM, p],
                      dlog[DL_VALUE, d], dlog[DL_FLAGS, d] & FLAG_CORRUPT, d, dlog[DL_HOPS, d],
                      dlog[DL_CUTS, d], dlog[DL_STORES, d] + 1, handed, c)
        if node[ND_FAULT, v] == FAULT_BOGUS and pkt[PK_ALGORITHM, p] != NO_PROCEDURE:
            # A Byzantine node forges a copy for every neighbour per genuine copy it gets, claiming the
            # same broadcast (forgeries are not answered with more forgeries, or two such nodes would
            # feed each other forever).
            ports = params[PR_PORTS]
            for direction in range(ports):
                scratch[direction, SEND_DIRECTION] = direction
                scratch[direction, SEND_DISTANCE] = 1
                scratch[direction, SEND_STEP] = pkt[PK_STEP, p]
                scratch[direction, SEND_TAG] = 0
            stats[ST_BOGUS] += ports
            _send_all(node, pkt, ctx, stats, params, scratch, ports, v, p, NO_PROCEDURE, VALUE_ALTERED, 0, d,
                      dlog[DL_HOPS, d], dlog[DL_CUTS, d], dlog[DL_STORES, d] + 1, handed, c)


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
