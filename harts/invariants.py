"""End-of-run invariants: every packet delivered once where it should be, no byte lost or duplicated,
no buffer over capacity, nothing left behind. Checked after every run; a violation is a SimulationError."""

from __future__ import annotations

import numpy as np

from . import state as S
from .errors import SimulationError


def check_invariants(result, ctx: np.ndarray) -> None:
    problems: list[str] = []
    traffic = result.traffic
    pk = result.packets
    dl = result.deliveries
    topo = result.topology
    n_traffic = len(traffic)

    # Every unicast packet is delivered exactly once, at its destination, over a shortest path.
    unicast = np.nonzero(traffic.kind == S.KIND_UNICAST)[0]
    delivered_to = np.full(n_traffic, -1)
    counts = np.bincount(dl[S.DL_PKT], minlength=pk.shape[1])
    is_unicast_delivery = pk[S.PK_KIND, dl[S.DL_PKT]] == S.KIND_UNICAST
    delivered_to[dl[S.DL_PKT, is_unicast_delivery]] = dl[S.DL_NODE, is_unicast_delivery]
    wrong_count = unicast[counts[unicast] != 1]
    if len(wrong_count):
        p = int(wrong_count[0])
        problems.append(f"{len(wrong_count)} unicast packets not delivered exactly once "
                        f"(packet {p}: {int(counts[p])} times)")
    wrong_node = unicast[(counts[unicast] == 1) & (delivered_to[unicast] != traffic.destination[unicast])]
    if len(wrong_node):
        p = int(wrong_node[0])
        problems.append(f"{len(wrong_node)} unicast packets delivered to the wrong node "
                        f"(packet {p} to {delivered_to[p]}, destination {traffic.destination[p]})")
    if len(unicast):
        shortest = np.abs(topo.routing_tags_many(traffic.source[unicast], traffic.destination[unicast])).sum(axis=1)
        longer = unicast[pk[S.PK_HOPS, unicast] != shortest]
        if len(longer):
            problems.append(f"{len(longer)} unicast packets took a path that is not a shortest one")

    # Each broadcast worm (with the NP's re-sends of its marked copies) reaches each node on its line once.
    worms = np.nonzero(traffic.kind == S.KIND_BROADCAST)[0]
    if len(worms):
        bcast_of_delivery = pk[S.PK_BCAST, dl[S.DL_PKT]]
        for b, w in enumerate(worms):
            got = np.sort(dl[S.DL_NODE, bcast_of_delivery == b])
            line = []
            v = int(traffic.source[w])
            for _ in range(int(traffic.distance[w])):
                v = int(topo.neighbours[v, traffic.direction[w]])
                line.append(v)
            if not np.array_equal(got, np.sort(np.asarray(line, dtype=np.int64))):
                problems.append(f"broadcast worm {w} reached nodes {got.tolist()}, expected {sorted(line)}")
                break

    # Bytes: every byte put on a link is taken in by the receiver at the far end, and only once.
    unequal = np.nonzero(pk[S.PK_BYTES_SENT] != pk[S.PK_BYTES_RECEIVED])[0]
    if len(unequal):
        p = int(unequal[0])
        problems.append(f"{len(unequal)} packets lost or duplicated bytes on links (packet {p}: sent "
                        f"{int(pk[S.PK_BYTES_SENT, p])}, received {int(pk[S.PK_BYTES_RECEIVED, p])})")
    if int(result.transmitters[S.TX_BYTES].sum()) != int(pk[S.PK_BYTES_SENT].sum()):
        problems.append("transmitter byte counters disagree with the packets' byte counts")
    if int(pk[S.PK_BYTES_SENT].sum()) != int((pk[S.PK_HOPS] * pk[S.PK_LEN]).sum()
                                              - _inherited_hop_bytes(pk, dl)):
        problems.append("bytes sent do not equal hops times length")
    stats = result.stats
    if stats[S.ST_STORED_IN] != stats[S.ST_STORED_OUT]:
        problems.append(f"BMUs took in {int(stats[S.ST_STORED_IN])} transit bytes but sent on "
                        f"{int(stats[S.ST_STORED_OUT])}")

    # Buffers: never over capacity, and empty at the end.
    nodes = result.nodes
    capacity = result.config["bmu.capacity_bytes"]
    if nodes[S.ND_BMU_PEAK].max() > capacity:
        problems.append(f"a BMU held {int(nodes[S.ND_BMU_PEAK].max())} bytes, capacity {capacity}")
    if stats[S.ST_FIFO_PEAK] > result.config["timing.receiver_fifo_bytes"]:
        problems.append("a receiver FIFO exceeded its depth")
    if nodes[S.ND_BMU_USED].any() or nodes[S.ND_BMU_CREDIT].any() or nodes[S.ND_QUEUE_LEN].any():
        problems.append("BMUs are not empty at the end of the run")
    if (ctx[S.CX_PKT] >= 0).any() or (ctx[S.CX_PENDING_HEAD] >= 0).any():
        problems.append("receivers still hold packets at the end of the run")

    if problems:
        raise SimulationError("invariant violated: " + "; ".join(problems))


def _inherited_hop_bytes(pk: np.ndarray, dl: np.ndarray) -> int:
    """NP re-sends start counting hops from the copy they continue; those earlier hops were sent by the parent."""
    resent = np.nonzero(pk[S.PK_PARENT] >= 0)[0]
    if not len(resent):
        return 0
    return int((dl[S.DL_HOPS, pk[S.PK_PARENT, resent]] * pk[S.PK_LEN, resent]).sum())
