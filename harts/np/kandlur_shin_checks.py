"""The kandlur_shin NP program's own invariants, checked after every run that kept its logs.

Every send_packet worm is teed at consecutive nodes of its line from its sender, and stops only at
distance 0 or where its forward failed (the copy there is marked), and then its NP sent exactly one
continuation. On a fault-free network a k-BCAST gives every node but the source exactly k copies.
"""

from __future__ import annotations

import numpy as np

from ..controller import records as R
from ..controller.records import TRAFFIC_INITIATE


def problems(result, copies_of_algorithm: dict[int, int], marked: int) -> list[str]:
    """The violations found in a run kept with its logs; `copies_of_algorithm` (initiation argument -> copies
    each node gets) and `marked` (the flags bit of a copy whose forward failed) are the program's."""
    dl, pl, topo = result.deliveries, result.packets, result.topology
    copies = np.nonzero(dl[R.DL_ROUTE] == R.ROUTE_DIRECTION)[0]
    if not len(copies):
        return []
    found = []
    uid_order = np.argsort(pl[R.PL_UID])
    record = uid_order[np.searchsorted(pl[R.PL_UID, uid_order], dl[R.DL_UID, copies])]
    direction = pl[R.PL_DIR, record]
    index = dl[R.DL_HOPS, copies] - pl[R.PL_HOPS_INHERITED, record]  # 1 for the first node after the sender
    expected = topo.walk(dl[R.DL_SENDER, copies], direction, index)
    wrong = np.nonzero(expected != dl[R.DL_NODE, copies])[0]
    if len(wrong):
        w = copies[wrong[0]]
        found.append(f"{len(wrong)} worm copies reached a node off their worm's line "
                     f"(packet {dl[R.DL_UID, w]} at node {dl[R.DL_NODE, w]})")
    worms = np.nonzero(pl[R.PL_ROUTE] == R.ROUTE_DIRECTION)[0]
    count = np.bincount(record, minlength=pl.shape[1])[worms]
    deepest = np.zeros(pl.shape[1], dtype=np.int64)
    np.maximum.at(deepest, record, index)
    deepest = deepest[worms]
    # a worm a fault swallowed on its first link reached no node; any other reached at least one
    if (count != deepest).any() or ((count == 0) & (pl[R.PL_DROPPED, worms] == 0)).any():
        found.append("a worm skipped a node of its line or reached none")
    # Where a worm stopped short, its last copy must be marked and continued by exactly one re-send.
    distance = result.header("distance")[copies]
    initial = np.zeros(pl.shape[1], dtype=np.int64)
    initial[record] = distance + index
    last = np.full(pl.shape[1], -1, dtype=np.int64)
    order = np.lexsort((index, record))
    ends = np.r_[np.nonzero(np.diff(record[order]))[0], len(order) - 1]
    last[record[order[ends]]] = copies[order[ends]]
    short = worms[(deepest < initial[worms]) & (count > 0) & (pl[R.PL_DROPPED, worms] == 0)]
    if len(short):
        children = np.nonzero((pl[R.PL_PARENT] >= 0) & (pl[R.PL_ROUTE] == R.ROUTE_DIRECTION)
                              & (pl[R.PL_FORGED] == 0))[0]
        keys, counts = np.unique(pl[R.PL_PARENT, children] * 8 + pl[R.PL_DIR, children], return_counts=True)
        d = last[short]
        wanted = dl[R.DL_SERIAL, d] * 8 + pl[R.PL_DIR, short]
        at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        continuations = np.where((len(keys) > 0) & (keys[at] == wanted), counts[at], 0)
        was_marked = result.header("flags")[d] & marked != 0
        bad = np.nonzero((continuations != 1) | ~was_marked)[0]
        if len(bad):
            q, dd = short[bad[0]], d[bad[0]]
            found.append(f"{len(bad)} worms stopped short without exactly one continuation "
                         f"(packet {pl[R.PL_UID, q]} at node {dl[R.DL_NODE, dd]}, distance "
                         f"{result.header('distance')[dd]} left)")
    traffic = result.traffic
    faults = result.faults
    if traffic is None or faults.node_fault.any() or faults.dead_transmitters.any():
        return found
    broadcasts = np.isin(traffic.argument, list(copies_of_algorithm))
    starts = np.nonzero((traffic.kind == TRAFFIC_INITIATE) & broadcasts)[0]
    if len(starts):
        n = topo.n_nodes
        rows, which = result.copies_of(starts)
        per_node = np.bincount(which * n + dl[R.DL_NODE, rows], minlength=len(starts) * n).reshape(len(starts), n)
        expected_copies = np.array([copies_of_algorithm[int(a)] for a in traffic.argument[starts]])[:, None] \
            * np.ones(n, dtype=np.int64)
        expected_copies[np.arange(len(starts)), traffic.source[starts]] = 0
        wrong = np.argwhere(per_node != expected_copies)
        if len(wrong):
            i, v = wrong[0]
            found.append(f"{len(np.unique(wrong[:, 0]))} broadcasts gave a node the wrong number of copies "
                         f"(broadcast {int(starts[i])}: node {int(v)} got {int(per_node[i, v])}, "
                         f"expected {int(expected_copies[i, v])})")
    return found
