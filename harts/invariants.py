"""End-of-run invariants: every packet delivered once where it should be, no byte lost or duplicated,
no buffer over capacity, nothing left behind. Checked after every run; a violation is a SimulationError."""

from __future__ import annotations

import numpy as np

from . import state as S
from .errors import SimulationError
from .relay import COPIES


def check_invariants(result, ctx: np.ndarray) -> None:
    problems: list[str] = []
    traffic = result.traffic
    pk = result.packets
    dl = result.deliveries
    topo = result.topology
    n_traffic = len(traffic)

    # Every unicast packet is delivered exactly once, at its destination, over a shortest path, unless a
    # named fault swallowed it (then never).
    dropped = pk[S.PK_DROPPED] != 0
    unicast = np.nonzero(traffic.kind == S.KIND_UNICAST)[0]
    delivered_to = np.full(n_traffic, -1)
    counts = np.bincount(dl[S.DL_PKT], minlength=pk.shape[1])
    is_unicast_delivery = pk[S.PK_KIND, dl[S.DL_PKT]] == S.KIND_UNICAST
    delivered_to[dl[S.DL_PKT, is_unicast_delivery]] = dl[S.DL_NODE, is_unicast_delivery]
    wrong_count = unicast[counts[unicast] != np.where(dropped[unicast], 0, 1)]
    if len(wrong_count):
        p = int(wrong_count[0])
        problems.append(f"{len(wrong_count)} unicast packets neither delivered exactly once nor dropped by a "
                        f"fault (packet {p}: delivered {int(counts[p])} times, dropped: {bool(dropped[p])})")
    wrong_node = unicast[(counts[unicast] == 1) & (delivered_to[unicast] != traffic.destination[unicast])]
    if len(wrong_node):
        p = int(wrong_node[0])
        problems.append(f"{len(wrong_node)} unicast packets delivered to the wrong node "
                        f"(packet {p} to {delivered_to[p]}, destination {traffic.destination[p]})")
    if len(unicast):
        shortest = np.abs(topo.routing_tags_many(traffic.source[unicast], traffic.destination[unicast])).sum(axis=1)
        longer = unicast[(pk[S.PK_HOPS, unicast] != shortest) & ~dropped[unicast]]
        if len(longer):
            problems.append(f"{len(longer)} unicast packets took a path that is not a shortest one")

    problems.extend(_broadcast_problems(result))

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


def _broadcast_problems(result) -> list[str]:
    """Every send_packet worm is teed at consecutive nodes of its line, from its sender, and stops only
    at distance 0 or where its forward failed (marked), and then its NP sent exactly one continuation.
    A k-BCAST gives every node but the source exactly k copies."""
    pk, dl, topo = result.packets, result.deliveries, result.topology
    copies = np.nonzero(pk[S.PK_KIND, dl[S.DL_PKT]] == S.KIND_BROADCAST)[0]
    if not len(copies):
        return []
    problems = []
    record = dl[S.DL_PKT, copies]
    index = pk[S.PK_DIST0, record] - dl[S.DL_DIST, copies]  # 1 for the first node after the sender
    expected = topo.walk(pk[S.PK_SRC, record], pk[S.PK_DIR, record], index)
    wrong = np.nonzero(expected != dl[S.DL_NODE, copies])[0]
    if len(wrong):
        w = copies[wrong[0]]
        problems.append(f"{len(wrong)} broadcast copies reached a node off their worm's line "
                        f"(packet {int(dl[S.DL_PKT, w])} at node {int(dl[S.DL_NODE, w])})")
    records = np.nonzero(pk[S.PK_KIND] == S.KIND_BROADCAST)[0]
    count = np.bincount(record, minlength=pk.shape[1])[records]
    deepest = np.zeros(pk.shape[1], dtype=np.int64)
    np.maximum.at(deepest, record, index)
    deepest = deepest[records]
    # a worm a fault swallowed on its first link reached no node; any other reached at least one
    if (count != deepest).any() or ((count == 0) & (pk[S.PK_DROPPED, records] == 0)).any():
        problems.append("a broadcast worm skipped a node of its line or reached none")
    # Where a worm stopped short, its last copy must be marked and continued by exactly one re-send.
    order = np.lexsort((index, record))
    ends = np.r_[np.nonzero(np.diff(record[order]))[0], len(order) - 1]
    last = np.full(pk.shape[1], -1, dtype=np.int64)
    last[record[order[ends]]] = copies[order[ends]]
    short = records[(deepest < pk[S.PK_DIST0, records]) & (count > 0) & (pk[S.PK_DROPPED, records] == 0)]
    if len(short):
        # a continuation is a record of the same broadcast procedure sent from that delivery, in the same
        # direction, with the distance left (a Byzantine node's forgeries have no procedure)
        children = np.nonzero(pk[S.PK_PARENT] >= 0)[0]
        child_keys = _key(pk[S.PK_PARENT, children], pk[S.PK_DIR, children], pk[S.PK_ALGORITHM, children],
                          pk[S.PK_DIST0, children])
        keys, counts = np.unique(child_keys, return_counts=True)
        d = last[short]
        wanted = _key(d, pk[S.PK_DIR, short], pk[S.PK_ALGORITHM, short], dl[S.DL_DIST, d])
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        found = np.where((len(keys) > 0) & (keys[at] == wanted), counts[at], 0)
        bad = np.nonzero((found != 1) | (dl[S.DL_FLAGS, d] & S.FLAG_MARKED == 0))[0]
        if len(bad):
            q, dd = short[bad[0]], d[bad[0]]
            problems.append(f"{len(bad)} broadcast worms stopped short without exactly one continuation "
                            f"(worm {int(q)} at node {int(dl[S.DL_NODE, dd])}, distance {int(dl[S.DL_DIST, dd])} left)")
    initiations = np.nonzero(result.traffic.kind == S.KIND_INITIATE)[0]
    faults = result.faults
    if len(initiations) and not (faults.node_fault.any() or faults.dead_transmitters.any()):
        n = topo.n_nodes
        rows, which = result.broadcast_copies(initiations)
        per_node = np.bincount(which * n + dl[S.DL_NODE, rows],
                               minlength=len(initiations) * n).reshape(len(initiations), n)
        expected = np.array([COPIES[int(a)] for a in result.traffic.algorithm[initiations]])[:, None] \
            * np.ones(n, dtype=np.int64)
        expected[np.arange(len(initiations)), result.traffic.source[initiations]] = 0
        wrong = np.argwhere(per_node != expected)
        if len(wrong):
            i, v = wrong[0]
            problems.append(f"{len(np.unique(wrong[:, 0]))} broadcasts gave a node the wrong number of copies "
                            f"(broadcast {int(initiations[i])}: node {int(v)} got {int(per_node[i, v])}, "
                            f"expected {int(expected[i, v])})")
    return problems


def _key(parent, direction, algorithm, distance):
    return ((np.asarray(parent, np.int64) * 8 + direction) * 16 + algorithm) * (1 << 24) + distance


def _inherited_hop_bytes(pk: np.ndarray, dl: np.ndarray) -> int:
    """NP re-sends start counting hops from the copy they continue; those earlier hops were sent by the parent."""
    resent = np.nonzero(pk[S.PK_PARENT] >= 0)[0]
    if not len(resent):
        return 0
    return int((dl[S.DL_HOPS, pk[S.PK_PARENT, resent]] * pk[S.PK_LEN, resent]).sum())
