"""Transmitters: reservation of an outgoing link and the start of a packet's transmission on it.

Reservation and start are one step: a transmitter is free for a packet when its forced idle gap after the
previous packet has ended by the time the bus delivers the packet's first byte. A context whose
reservation failed can retry at exactly that tick, so a stream of packets from the BMU runs back to back,
byte-exact, at the link rate. What a fault does to a transmission (a dead link, a crashed or dropping
neighbour, an altering sender, a damaged payload) happens here, on the link.
"""

from ..jit import kernel_part
from .bmu import bmu_change, bmu_free_bytes
from .link import link_arrive
from .state import (
    DROP_BYZANTINE_NODE,
    DROP_CRASHED_NODE,
    DROP_DEAD_LINK,
    FAULT_ALTER,
    FAULT_CRASH,
    FAULT_DROP,
    ND_FAULT,
    PK_BYTES_RECEIVED,
    PK_BYTES_SENT,
    PK_CORRUPT,
    PK_DIR,
    PK_DROPPED,
    PK_HOPS,
    PK_LEN,
    PK_UID,
    PK_VALUE,
    PR_BMU_DROPS_WHEN_FULL,
    PR_BUS_DELAY,
    PR_CORRUPTION_PER_MILLION,
    PR_FAULTS,
    PR_IDLE_GAP_BYTES,
    PR_INJECTORS,
    PR_PORTS,
    ST_CORRUPTED,
    ST_DROPS,
    ST_HOPS,
    ST_RANDOM,
    TX_BYTES,
    TX_DEAD,
    TX_FREE,
    TX_PACKETS,
    TX_START,
    TX_UID,
    VALUE_ALTERED,
)

REFUSED_BUSY = -1  # the transmitter is still sending, or in its idle gap
REFUSED_FULL = -2  # the next node's BMU cannot promise room for the whole packet
NO_LINK = -3  # the port has no link


@kernel_part
def transmit(machine, controller, packets, stats, v, direction, p, c):
    """Try to send packet p from node v through port `direction`, its first byte on the bus at tick c.

    Returns (first, ci, start): the tick the first byte leaves (or REFUSED_BUSY, REFUSED_FULL, NO_LINK),
    and when the receiver at the far end is idle, its context and the tick it starts on p (else -1, -1).
    """
    params = machine.params
    tx = controller.tx
    node = controller.node
    pk = packets.table
    u = machine.neighbours[v, direction]
    if u < 0:
        return NO_LINK, -1, -1
    t = v * params[PR_PORTS] + direction
    out_start = c + params[PR_BUS_DELAY]
    if tx[t, TX_FREE] > out_start:
        return REFUSED_BUSY, -1, -1
    length = pk[p, PK_LEN]
    faults = params[PR_FAULTS] != 0
    lost = _lost_on_arrival(tx, node, t, u) if faults else 0
    credit = lost == 0 and params[PR_BMU_DROPS_WHEN_FULL] == 0
    if credit and bmu_free_bytes(node, params, u) < length:
        return REFUSED_FULL, -1, -1
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
        if node[v, ND_FAULT] == FAULT_ALTER:
            pk[p, PK_VALUE] = VALUE_ALTERED
        if params[PR_CORRUPTION_PER_MILLION] > 0 and \
                _random(stats) % 1000000 < params[PR_CORRUPTION_PER_MILLION]:
            pk[p, PK_CORRUPT] = 1
            stats[ST_CORRUPTED] += 1
    if lost != 0:
        # The bytes go out on the link and are swallowed by the fault at the far end.
        pk[p, PK_BYTES_RECEIVED] += length
        pk[p, PK_DROPPED] = lost
        stats[ST_DROPS] += 1
        return out_start, -1, -1
    if credit:
        bmu_change(node, u, c, 0, length)
    ci = u * (params[PR_PORTS] + params[PR_INJECTORS]) + machine.in_port[v, direction]
    start = link_arrive(controller.ctx, packets, params, stats, ci, ci + u + 1, p, out_start, c)
    if start < 0:
        return out_start, -1, -1
    return out_start, ci, start


@kernel_part
def _lost_on_arrival(tx, node, t, u):
    """DROP_* if a packet sent by transmitter t never reaches a working receiver at node u, else 0."""
    if tx[t, TX_DEAD] != 0:
        return DROP_DEAD_LINK
    if node[u, ND_FAULT] == FAULT_CRASH:
        return DROP_CRASHED_NODE
    if node[u, ND_FAULT] == FAULT_DROP:
        return DROP_BYZANTINE_NODE
    return 0


@kernel_part
def _random(stats):
    """xorshift64*: a small deterministic generator whose state lives in stats[ST_RANDOM]."""
    x = stats[ST_RANDOM]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    stats[ST_RANDOM] = x
    return (x * 2685821657736338717) >> 33 & 0x7FFFFFFF
