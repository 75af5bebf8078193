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
    PK_BYTES_SENT,
    PK_DIR,
    PK_HOPS,
    PK_LEN,
    PR_BUS_DELAY,
    PR_IDLE_GAP_BYTES,
    PR_PORTS,
    TX_BYTES,
    TX_FREE,
    TX_PACKETS,
)


@kernel_part
def transmit(tx, node, ctx, pkt, stats, params, nbr, v, direction, p, c):
    """Try to send packet p from node v in `direction`, its first byte on the bus at tick c.

    Returns the byte-time the first byte leaves; -1 if the transmitter is busy; -2 if the next node's BMU
    cannot promise room for the whole packet (virtual cut-through flow control).
    """
    t = v * params[PR_PORTS] + direction
    out_start = c + params[PR_BUS_DELAY]
    if tx[TX_FREE, t] > out_start:
        return -1
    u = nbr[v, direction]
    length = pkt[PK_LEN, p]
    if bmu_free_bytes(node, params, u) < length:
        return -2
    tx[TX_FREE, t] = out_start + length + params[PR_IDLE_GAP_BYTES]
    tx[TX_BYTES, t] += length
    tx[TX_PACKETS, t] += 1
    bmu_change(node, u, c, 0, length)
    pkt[PK_HOPS, p] += 1
    pkt[PK_BYTES_SENT, p] += length
    pkt[PK_DIR, p] = direction
    link_arrive(ctx, pkt, node, stats, params, u, direction, p, out_start, c)
    return out_start
