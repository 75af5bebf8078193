"""Transmitters: reservation of an outgoing link and the start of a packet's transmission on it.

Reservation and start are one step: a transmitter is free for a packet when its forced idle gap after the
previous packet has ended by the time the bus delivers the packet's first byte. A context whose
reservation failed can retry at exactly that tick, so a stream of packets from the BMU runs back to back,
byte-exact, at the link rate.
"""

from ..faults.injection import damage, lost_on_arrival
from ..jit import kernel_part
from .bmu import bmu_reserve
from .state import (
    PK_BYTES_RECEIVED,
    PK_BYTES_SENT,
    PK_DIR,
    PK_DROPPED,
    PK_HOPS,
    PK_LEN,
    PK_UID,
    PR_BUS_DELAY,
    PR_FAULTS,
    PR_IDLE_GAP_BYTES,
    PR_PORTS,
    ST_DROPS,
    ST_HOPS,
    TX_BYTES,
    TX_FREE,
    TX_PACKETS,
    TX_START,
    TX_UID,
)

REFUSED_BUSY = -1  # the transmitter is still sending, or in its idle gap
REFUSED_FULL = -2  # the next node's BMU cannot promise room for the whole packet
NO_LINK = -3  # the port has no link


@kernel_part
def transmit(machine, controller, packets, stats, v, direction, p, c):
    """Try to send packet p from node v through port `direction`, its first byte on the bus at tick c.

    Returns the tick the first byte leaves, or REFUSED_BUSY, REFUSED_FULL, NO_LINK. A packet a fault
    swallows on the way leaves too (its bytes are counted as taken in by the fault) and is marked dropped.
    """
    params = machine.params
    tx = controller.tx
    node = controller.node
    pk = packets.table
    u = machine.links[v, direction]
    if u < 0:
        return NO_LINK
    t = v * params[PR_PORTS] + direction
    out_start = c + params[PR_BUS_DELAY]
    if tx[t, TX_FREE] > out_start:
        return REFUSED_BUSY
    length = pk[p, PK_LEN]
    faults = params[PR_FAULTS] != 0
    lost = lost_on_arrival(tx, node, t, u) if faults else 0
    if lost == 0 and not bmu_reserve(node, params, u, length, c):
        return REFUSED_FULL
    tx[t, TX_FREE] = out_start + length + params[PR_IDLE_GAP_BYTES]
    tx[t, TX_BYTES] += length
    tx[t, TX_PACKETS] += 1
    tx[t, TX_UID] = pk[p, PK_UID]
    tx[t, TX_START] = out_start
    stats[ST_HOPS] += 1
    pk[p, PK_HOPS] += 1
    pk[p, PK_BYTES_SENT] += length
    pk[p, PK_DIR] = direction
    if faults:
        damage(node, pk, stats, params, v, p)
    if lost != 0:
        # The bytes go out on the link and are swallowed by the fault at the far end.
        pk[p, PK_BYTES_RECEIVED] += length
        pk[p, PK_DROPPED] = lost
        stats[ST_DROPS] += 1
    return out_start
