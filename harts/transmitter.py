"""Transmitters: reservation of an outgoing link and the start of a packet's transmission on it.

Reservation and start are one step: a transmitter is free for a packet when its forced idle gap after the
previous packet has ended by the time the bus delivers the packet's first byte. A context whose
reservation failed can retry at exactly that tick, so a stream of packets from the BMU runs back to back,
byte-exact, at the link rate.
"""


from .bmu import bmu_change, bmu_free_bytes
from .jit import kernel_part
from .link import link_arrive
from .state import (
    DROP_BYZANTINE_NODE,
    DROP_CRASHED_NODE,
    DROP_DEAD_LINK,
    FAULT_ALTER,
    FAULT_CRASH,
    FAULT_DROP,
    FLAG_CORRUPT,
    ND_FAULT,
    PK_BYTES_RECEIVED,
    PK_BYTES_SENT,
    PK_DIR,
    PK_DROPPED,
    PK_FLAGS,
    PK_HOPS,
    PK_LEN,
    PK_VALUE,
    PR_BMU_DROPS_WHEN_FULL,
    PR_BUS_DELAY,
    PR_CORRUPTION_PER_MILLION,
    PR_IDLE_GAP_BYTES,
    PR_PORTS,
    ST_CORRUPTED,
    ST_DROPS,
    ST_RANDOM,
    TX_BYTES,
    TX_DEAD,
    TX_FREE,
    TX_PACKET,
    TX_PACKETS,
    VALUE_ALTERED,
)


@kernel_part
def transmit(tx, node, ctx, pkt, stats, params, nbr, v, direction, p, c):
    """Try to send packet p from node v in `direction`, its first byte on the bus at tick c.

    Returns the tick the first byte leaves; -1 if the transmitter is busy; -2 if the next node's BMU cannot
    promise room for the whole packet (virtual cut-through flow control, unless full BMUs drop instead).
    """
    t = v * params[PR_PORTS] + direction
    out_start = c + params[PR_BUS_DELAY]
    if tx[TX_FREE, t] > out_start:
        return -1
    u = nbr[v, direction]
    length = pkt[PK_LEN, p]
    lost = _lost_on_arrival(tx, node, t, u)
    credit = lost == 0 and params[PR_BMU_DROPS_WHEN_FULL] == 0
    if credit and bmu_free_bytes(node, params, u) < length:
        return -2
    tx[TX_FREE, t] = out_start + length + params[PR_IDLE_GAP_BYTES]
    tx[TX_BYTES, t] += length
    tx[TX_PACKETS, t] += 1
    tx[TX_PACKET, t] = p
    pkt[PK_HOPS, p] += 1
    pkt[PK_BYTES_SENT, p] += length
    pkt[PK_DIR, p] = direction
    if node[ND_FAULT, v] == FAULT_ALTER:
        pkt[PK_VALUE, p] = VALUE_ALTERED
    if params[PR_CORRUPTION_PER_MILLION] > 0 and _random(stats) % 1000000 < params[PR_CORRUPTION_PER_MILLION]:
        pkt[PK_FLAGS, p] |= FLAG_CORRUPT
        stats[ST_CORRUPTED] += 1
    if lost != 0:
        # The bytes go out on the link and are swallowed by the fault at the far end.
        pkt[PK_BYTES_RECEIVED, p] += length
        pkt[PK_DROPPED, p] = lost
        stats[ST_DROPS] += 1
        return out_start
    if credit:
        bmu_change(node, u, c, 0, length)
    link_arrive(ctx, pkt, node, stats, params, u, direction, p, out_start, c)
    return out_start


@kernel_part
def _lost_on_arrival(tx, node, t, u):
    """DROP_* if a packet sent by transmitter t never reaches a working receiver at node u, else 0."""
    if tx[TX_DEAD, t] != 0:
        return DROP_DEAD_LINK
    if node[ND_FAULT, u] == FAULT_CRASH:
        return DROP_CRASHED_NODE
    if node[ND_FAULT, u] == FAULT_DROP:
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
