"""Packet records of the flit-level kernel: taken from a recycled pool when an NP makes a packet, returned
when the last holder lets go (every context that worked on it has run `done`, and its last flit has been
consumed by its destination or by a fault), and then written to the packet log. So the pool holds the
packets in flight, not every packet of the run."""

from ...jit import kernel_part
from .logs import log_packet
from .state import (
    NEVER,
    PK_ACKED,
    PK_ATTEMPTS,
    PK_CONTENDED_AT,
    PK_CONTENDED_NODE,
    PK_CREATE,
    PK_DELIVERED,
    PK_DEST,
    PK_HOLDERS,
    PK_INJECTED,
    PK_LOST_AT,
    PK_NEXT,
    PK_PARENT,
    PK_RELEASED,
    PK_ROWS,
    PK_UID,
    ST_FREE_COUNT,
    ST_FREE_HEAD,
    ST_IN_FLIGHT,
    ST_IN_FLIGHT_PEAK,
    ST_POOL_TOP,
)


@kernel_part
def new_record(packets, stats, uid, t):
    """A cleared record, a recycled one if any is free (the caller made sure there is one: PR_ROOM), held once
    until its last flit is consumed."""
    pk = packets.table
    p = stats[ST_FREE_HEAD]
    if p >= 0:
        stats[ST_FREE_HEAD] = pk[p, PK_NEXT]
    else:
        p = stats[ST_POOL_TOP]
        stats[ST_POOL_TOP] = p + 1
    stats[ST_FREE_COUNT] -= 1
    stats[ST_IN_FLIGHT] += 1
    stats[ST_IN_FLIGHT_PEAK] = max(stats[ST_IN_FLIGHT_PEAK], stats[ST_IN_FLIGHT])
    for row in range(PK_ROWS):
        pk[p, row] = 0
    pk[p, PK_UID] = uid
    pk[p, PK_NEXT] = -1
    pk[p, PK_PARENT] = -1
    pk[p, PK_DEST] = -1
    pk[p, PK_CREATE] = t
    pk[p, PK_DELIVERED] = -1
    pk[p, PK_ACKED] = NEVER
    pk[p, PK_ATTEMPTS] = 1
    pk[p, PK_CONTENDED_AT] = -1
    pk[p, PK_CONTENDED_NODE] = -1
    pk[p, PK_LOST_AT] = -1
    pk[p, PK_INJECTED] = -1
    pk[p, PK_HOLDERS] = 1
    return p


@kernel_part
def hold(packets, p):
    packets.table[p, PK_HOLDERS] += 1


@kernel_part
def release(packets, logs, p, t):
    """One holder lets go of record p at cycle t; the last one completes it: logged, and back to the pool."""
    pk = packets.table
    pk[p, PK_HOLDERS] -= 1
    pk[p, PK_RELEASED] = max(pk[p, PK_RELEASED], t)
    if pk[p, PK_HOLDERS] == 0:
        stats = logs.stats
        log_packet(packets, logs, p, pk[p, PK_RELEASED])
        pk[p, PK_NEXT] = stats[ST_FREE_HEAD]
        stats[ST_FREE_HEAD] = p
        stats[ST_FREE_COUNT] += 1
        stats[ST_IN_FLIGHT] -= 1
