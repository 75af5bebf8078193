"""The event-driven engine against the tick-scanning engine it replaced.

tests/golden/engine_v1.* were recorded by the engine of commit e18e2b4 (every visited tick scanned every
node), an independent implementation of the same model, with tests/golden/e18e2b4-interface-wake.patch
applied (an idle BMU interface asleep until the head of the ready queue is ready also wakes for a packet
queued later that is ready sooner; both engines had missed it): for 15 runs on the hexagonal mesh (uniform load
from light to far past saturation, waiting and dropping BMUs, store-and-forward microcode, two BMU
contexts, faults with corruption, and broadcasts of five algorithms over background traffic, with slow
NPs, Byzantine alter and bogus nodes, waiting BMUs), the exact traffic and, per packet and per broadcast
copy, what happened to it. The new engine must reproduce every number.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from harts.controller import records as R
from harts.controller import state as S
from harts.machine.config import hex_config
from harts.machine.simulation import Simulation
from harts.machine.traffic import Traffic

GOLDEN = Path(__file__).parent / "golden"
META = json.loads((GOLDEN / "engine_v1.json").read_text())
ARRAYS = np.load(GOLDEN / "engine_v1.npz")
OLD_UNICAST, OLD_WORM = 0, 1  # the old engine's traffic kinds; 2 was a broadcast initiation


def old_traffic(name: str) -> Traffic:
    create, source, destination, length, kind, direction, distance, algorithm = ARRAYS[f"{name}/traffic"]
    unicast = kind == OLD_UNICAST
    return Traffic(create, source, destination, length,
                   np.where(unicast, R.TRAFFIC_UNICAST, R.TRAFFIC_INITIATE),
                   direction, distance, np.where(kind == OLD_WORM, 0, algorithm))


def config(name: str):
    overrides = dict(META[name]["config"])
    size = overrides.pop("mesh__size")
    # keys the old engine had under other names
    if "bmu__injection_contexts" in overrides:
        overrides["bmu__bus_interfaces"] = overrides.pop("bmu__injection_contexts")
    # the old engine drew random faults from every node: it had no faults.spare
    return hex_config(size, faults__spare=[], **overrides)


@pytest.mark.parametrize("name", sorted(META))
def test_every_packet_and_copy_as_the_tick_scanning_engine_had_it(name):
    traffic = old_traffic(name)
    result = Simulation(config(name)).run(traffic)
    dl, pl = result.deliveries, result.packets

    expected = ARRAYS[f"{name}/unicast"]  # index, delivery tick (-1), hops, cut-throughs, stores, drop reason
    uids = expected[0]
    traffic_packets = pl[:, pl[R.PL_UID] < R.NP_UID_BASE]
    column = np.argsort(traffic_packets[R.PL_UID])
    assert np.array_equal(traffic_packets[R.PL_UID, column], uids)
    tick = np.full(len(traffic), -1, dtype=np.int64)
    unicast_rows = dl[R.DL_UID] < R.NP_UID_BASE
    tick[dl[R.DL_UID, unicast_rows]] = dl[R.DL_TICK, unicast_rows]
    got = np.stack([uids, tick[uids], traffic_packets[R.PL_HOPS, column], traffic_packets[R.PL_CUTS, column],
                    traffic_packets[R.PL_STORES, column], traffic_packets[R.PL_DROPPED, column]])
    assert np.array_equal(got, expected)

    expected = ARRAYS[f"{name}/copies"]  # broadcast, node, tick, T, C, marked, corrupt, value, direction, distance
    starts = np.nonzero((traffic.kind == R.TRAFFIC_INITIATE) & (traffic.argument != 0))[0]
    rows, which = result.copies_of(starts)
    got = np.stack([starts[which], dl[R.DL_NODE, rows], dl[R.DL_TICK, rows], dl[R.DL_STORES, rows] + 1,
                    dl[R.DL_CUTS, rows], result.header("flags")[rows] & 1, 2 * dl[R.DL_CORRUPT, rows],
                    dl[R.DL_VALUE, rows], dl[R.DL_DIR, rows], result.header("distance")[rows]])
    got = got[:, np.lexsort(got[::-1])] if got.shape[1] else got.reshape(10, 0)
    assert np.array_equal(got, expected)

    stats, nodes, tx = result.stats, result.network.nodes, result.network.transmitters
    scalars = META[name]["scalars"]
    assert {
        "ST_TIME": int(stats[S.ST_TIME]), "ST_DELIVERIES": int(stats[S.ST_DELIVERY_SERIAL]),
        "ST_FIFO_PEAK": int(stats[S.ST_FIFO_PEAK]), "ST_INSTRUCTIONS": int(stats[S.ST_INSTRUCTIONS]),
        "ST_CUT_THROUGHS": int(stats[S.ST_CUT_THROUGHS]), "ST_DROPS": int(stats[S.ST_DROPS]),
        "ST_CORRUPTED": int(stats[S.ST_CORRUPTED]), "ST_BOGUS": int(stats[S.ST_FORGED]),
        "ST_OVERFLOWS": int(stats[S.ST_OVERFLOWS]), "ST_STORED_IN": int(stats[S.ST_STORED_IN]),
        "bmu_peak": int(nodes[:, S.ND_BMU_PEAK].max()), "bmu_peak_sum": int(nodes[:, S.ND_BMU_PEAK].sum()),
        "bmu_integral": int(nodes[:, S.ND_BMU_INTEGRAL].sum()), "tx_bytes": int(tx[:, S.TX_BYTES].sum()),
        "tx_packets": int(tx[:, S.TX_PACKETS].sum()),
    } == scalars
