"""Packet records: taken from a recycled pool when an NP sends a packet, returned when the last holder
(a receiver, a BMU injection context, the BMU ready queue) lets go, and then written to the packet log.

So the pool holds the packets in flight, not every packet of the run; the logs are drained by the caller
whenever they fill (state.PAUSE_ROOM) and at the end.
"""

from ..jit import kernel_part
from .state import (
    PK_BUS_TICKS,
    PK_BYTES_RECEIVED,
    PK_BYTES_SENT,
    PK_CONTENTION,
    PK_CREATE,
    PK_CUTS,
    PK_DELIVERIES,
    PK_DEST,
    PK_DIR,
    PK_DROPPED,
    PK_FORGED,
    PK_HOLDERS,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_LEN,
    PK_NEXT,
    PK_ORIGIN,
    PK_PARENT,
    PK_RELEASED,
    PK_ROUTE,
    PK_ROWS,
    PK_SENDER,
    PK_STORES,
    PK_UID,
    PL_BYTES_RECEIVED,
    PL_BYTES_SENT,
    PL_COMPLETE,
    PL_CONTENTION,
    PL_CREATE,
    PL_CUTS,
    PL_DELIVERIES,
    PL_DEST,
    PL_DIR,
    PL_DROPPED,
    PL_FORGED,
    PL_HOPS,
    PL_HOPS_INHERITED,
    PL_LEN,
    PL_ORIGIN,
    PL_PARENT,
    PL_ROUTE,
    PL_SENDER,
    PL_STORES,
    PL_UID,
    PR_BYTES_PER_CYCLE,
    PR_SLOT_BYTES,
    ST_FREE_COUNT,
    ST_FREE_HEAD,
    ST_IN_FLIGHT,
    ST_IN_FLIGHT_PEAK,
    ST_LOGGED,
    ST_UID_NEXT,
)


@kernel_part
def new_record(packets, stats, c):
    """A cleared record from the free list (the caller made sure there is one: state.PR_ROOM)."""
    pk = packets.table
    p = stats[ST_FREE_HEAD]
    stats[ST_FREE_HEAD] = pk[p, PK_NEXT]
    stats[ST_FREE_COUNT] -= 1
    stats[ST_IN_FLIGHT] += 1
    stats[ST_IN_FLIGHT_PEAK] = max(stats[ST_IN_FLIGHT_PEAK], stats[ST_IN_FLIGHT])
    for row in range(PK_ROWS):
        pk[p, row] = 0
    pk[p, PK_NEXT] = -1
    pk[p, PK_PARENT] = -1
    pk[p, PK_DEST] = -1
    pk[p, PK_CREATE] = c
    pk[p, PK_UID] = stats[ST_UID_NEXT]
    stats[ST_UID_NEXT] += 1
    return p


@kernel_part
def set_length(pk, params, p, length):
    """A record's length, and the ticks a receiver's bus slot takes to carry it (PR_SLOT_BYTES a cycle)."""
    pk[p, PK_LEN] = length
    pk[p, PK_BUS_TICKS] = -(-length * params[PR_BYTES_PER_CYCLE] // params[PR_SLOT_BYTES])


@kernel_part
def hold(packets, p):
    packets.table[p, PK_HOLDERS] += 1


@kernel_part
def release(packets, logs, p, c):
    """One holder lets go of record p; the last one completes it: logged, and back to the pool."""
    pk = packets.table
    pk[p, PK_HOLDERS] -= 1
    pk[p, PK_RELEASED] = max(pk[p, PK_RELEASED], c)
    if pk[p, PK_HOLDERS] == 0:
        complete(packets, logs, p, pk[p, PK_RELEASED])


@kernel_part
def complete(packets, logs, p, c):
    pk = packets.table
    stats = logs.stats
    log = logs.packets
    i = stats[ST_LOGGED]
    stats[ST_LOGGED] = i + 1
    log[PL_UID, i] = pk[p, PK_UID]
    log[PL_ORIGIN, i] = pk[p, PK_ORIGIN]
    log[PL_SENDER, i] = pk[p, PK_SENDER]
    log[PL_DEST, i] = pk[p, PK_DEST]
    log[PL_LEN, i] = pk[p, PK_LEN]
    log[PL_ROUTE, i] = pk[p, PK_ROUTE]
    log[PL_PARENT, i] = pk[p, PK_PARENT]
    log[PL_CREATE, i] = pk[p, PK_CREATE]
    log[PL_HOPS, i] = pk[p, PK_HOPS]
    log[PL_CUTS, i] = pk[p, PK_CUTS]
    log[PL_STORES, i] = pk[p, PK_STORES]
    log[PL_BYTES_SENT, i] = pk[p, PK_BYTES_SENT]
    log[PL_BYTES_RECEIVED, i] = pk[p, PK_BYTES_RECEIVED]
    log[PL_DROPPED, i] = pk[p, PK_DROPPED]
    log[PL_CONTENTION, i] = pk[p, PK_CONTENTION]
    log[PL_DELIVERIES, i] = pk[p, PK_DELIVERIES]
    log[PL_COMPLETE, i] = c
    log[PL_DIR, i] = pk[p, PK_DIR]
    log[PL_HOPS_INHERITED, i] = pk[p, PK_HOPS_INHERITED]
    log[PL_FORGED, i] = pk[p, PK_FORGED]
    pk[p, PK_NEXT] = stats[ST_FREE_HEAD]
    stats[ST_FREE_HEAD] = p
    stats[ST_FREE_COUNT] += 1
    stats[ST_IN_FLIGHT] -= 1
