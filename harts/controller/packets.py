"""Packet records: taken from a recycled pool when an NP sends a packet, returned when the last holder
(a receiver, a link, a BMU bus interface, the BMU ready queue) lets go, and then written to the
packet log. So the pool holds the packets in flight, not every packet of the run.
"""

from ..jit import kernel_part
from .logs import log_packet
from .state import (
    PK_BUS_TICKS,
    PK_CONTENDED_AT,
    PK_CONTENDED_KIND,
    PK_CONTENDED_NODE,
    PK_CONTENTION,
    PK_CREATE,
    PK_DEST,
    PK_HOLDERS,
    PK_INJECTED,
    PK_LEN,
    PK_NEXT,
    PK_PARENT,
    PK_REFUSED_AT,
    PK_RELEASED,
    PK_ROWS,
    PK_UID,
    PK_VISIT_IN,
    PK_VISIT_PORT,
    PK_WAITS_FOR,
    PR_BYTES_PER_CYCLE,
    PR_HOP_LOG,
    PR_SLOT_BYTES,
    ST_FREE_COUNT,
    ST_FREE_HEAD,
    ST_IN_FLIGHT,
    ST_IN_FLIGHT_PEAK,
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
    pk[p, PK_WAITS_FOR] = -1
    pk[p, PK_PARENT] = -1
    pk[p, PK_DEST] = -1
    pk[p, PK_INJECTED] = -1
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
def handed_over(pk, params, p, ready):
    """Record p, which an NP hands to its BMU, is ready there at `ready`: where its first visit begins, if
    the run keeps a hop log."""
    if params[PR_HOP_LOG] != 0:
        pk[p, PK_VISIT_PORT] = -1
        pk[p, PK_VISIT_IN] = ready
        pk[p, PK_REFUSED_AT] = -1


@kernel_part
def mark_contention(pk, p, kind, v, tick):
    """Packet p waits itself, for the reason `kind` (CONTENTION_*), at node v from `tick`: it carries the
    mark, and the earliest such wait is kept (PK_CONTENDED_*)."""
    pk[p, PK_CONTENTION] |= kind
    if pk[p, PK_CONTENDED_KIND] == 0 or tick < pk[p, PK_CONTENDED_AT]:
        pk[p, PK_CONTENDED_AT] = tick
        pk[p, PK_CONTENDED_NODE] = v
        pk[p, PK_CONTENDED_KIND] = kind


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
    """Record p is done with at tick c: logged, and back to the pool."""
    pk = packets.table
    stats = logs.stats
    log_packet(packets, logs, p, c)
    pk[p, PK_NEXT] = stats[ST_FREE_HEAD]
    stats[ST_FREE_HEAD] = p
    stats[ST_FREE_COUNT] += 1
    stats[ST_IN_FLIGHT] -= 1
