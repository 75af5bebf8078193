"""The compiled passes over a drained log (harts/machine/log_sums.py) against numpy's whole-column expressions of the
same sums and checks, on random logs where every case is frequent: NP packets, every route kind, drops, contention
marks, waits with tied ticks, lost bytes, wrong nodes, routes longer than the shortest."""

import numpy as np
import pytest

from harts.controller import records as R
from harts.machine import log_sums
from harts.machine.config import hex_config
from harts.machine.invariants import RunChecks
from harts.machine.results import earliest_wait
from harts.machine.simulation import Simulation


def random_logs(seed: int, n_nodes: int, rows: int = 400):
    rng = np.random.default_rng(seed)
    pl = np.zeros((R.PL_ROWS, rows), np.int64)
    pl[R.PL_UID] = np.where(rng.random(rows) < 0.2, R.NP_UID_BASE, 0) + rng.permutation(rows)
    pl[R.PL_ROUTE] = rng.choice([R.ROUTE_DESTINATION, R.ROUTE_DIRECTION, R.ROUTE_SEGMENTS], rows, p=[0.7, 0.2, 0.1])
    pl[R.PL_SENDER] = rng.integers(0, n_nodes, rows)
    pl[R.PL_DEST] = rng.integers(0, n_nodes, rows)
    pl[R.PL_LEN] = rng.integers(1, 100, rows)
    pl[R.PL_HOPS] = rng.integers(0, 9, rows)
    pl[R.PL_HOPS_INHERITED] = np.where(rng.random(rows) < 0.2, rng.integers(0, 3, rows), 0)
    pl[R.PL_STORES] = rng.integers(0, 3, rows)
    pl[R.PL_DROPPED] = np.where(rng.random(rows) < 0.1, rng.integers(1, 4, rows), 0)
    pl[R.PL_DELIVERIES] = rng.integers(0, 3, rows)
    own = pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]
    pl[R.PL_BYTES_SENT] = own * pl[R.PL_LEN] + np.where(rng.random(rows) < 0.05, 1, 0)
    pl[R.PL_BYTES_RECEIVED] = pl[R.PL_BYTES_SENT] - np.where(rng.random(rows) < 0.05, 1, 0)
    pl[R.PL_CONTENTION] = np.where(rng.random(rows) < 0.5, rng.integers(0, 16, rows), 0)
    pl[R.PL_CONTENDED_KIND] = np.where(rng.random(rows) < 0.3, rng.choice([1, 2, 4, 8], rows), 0)
    pl[R.PL_CONTENDED_AT] = rng.integers(0, 20, rows)  # few ticks: many ties, broken by the uid
    pl[R.PL_CONTENDED_NODE] = rng.integers(0, n_nodes, rows)
    dl = np.zeros((R.DL_ROWS, rows), np.int64)
    dl[R.DL_UID] = pl[R.PL_UID]
    dl[R.DL_ROUTE] = pl[R.PL_ROUTE]
    dl[R.DL_DEST] = pl[R.PL_DEST]
    dl[R.DL_NODE] = np.where(rng.random(rows) < 0.05, rng.integers(0, n_nodes, rows), pl[R.PL_DEST])
    dl[R.DL_CREATE] = rng.integers(0, 1000, rows)
    dl[R.DL_TICK] = dl[R.DL_CREATE] + rng.integers(0, 500, rows)
    # the kernels hand over columns of a larger log: non-contiguous views
    return np.hstack([pl, pl])[:, :rows], np.hstack([dl, dl])[:, :rows]


@pytest.mark.parametrize("seed", range(4))
def test_packet_sums_are_numpys(seed):
    pl, _ = random_logs(seed, 50)
    sums = log_sums.packet_sums(pl)
    unicast = (pl[R.PL_UID] < R.NP_UID_BASE) & (pl[R.PL_ROUTE] == R.ROUTE_DESTINATION)
    assert sums[log_sums.SUM_UNICAST_PACKETS] == unicast.sum()
    assert sums[log_sums.SUM_UNICAST_HOPS] == pl[R.PL_HOPS][unicast].sum()
    assert sums[log_sums.SUM_UNICAST_STORES] == pl[R.PL_STORES][unicast].sum()
    assert sums[log_sums.SUM_UNICAST_DROPPED] == np.count_nonzero(pl[R.PL_DROPPED][unicast])
    assert sums[log_sums.SUM_LINK_HOPS] == (pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]).sum()
    assert sums[log_sums.SUM_COPY_LENGTH] == (pl[R.PL_LEN] * pl[R.PL_DELIVERIES]).sum()
    assert sums[log_sums.SUM_CONTENDED] == np.count_nonzero(pl[R.PL_CONTENTION])
    for row, bit in ((log_sums.SUM_STORED, R.CONTENTION_STORED), (log_sums.SUM_RETRIED, R.CONTENTION_RETRIED),
                     (log_sums.SUM_QUEUED, R.CONTENTION_QUEUED), (log_sums.SUM_BLOCKED, R.CONTENTION_BLOCKED)):
        assert sums[row] == np.count_nonzero(pl[R.PL_CONTENTION] & bit)
    waited = np.flatnonzero(pl[R.PL_CONTENDED_KIND])
    first = min(waited, key=lambda i: (pl[R.PL_CONTENDED_AT, i], pl[R.PL_UID, i]))
    expected = tuple(int(pl[row, first]) for row in (R.PL_CONTENDED_AT, R.PL_UID, R.PL_CONTENDED_NODE,
                                                     R.PL_CONTENDED_KIND))
    assert earliest_wait(pl) == expected


@pytest.mark.parametrize("seed", range(4))
def test_delivery_latencies_are_numpys(seed):
    _, dl = random_logs(seed, 50)
    latencies = log_sums.delivery_latencies(dl, 300)
    measured = (dl[R.DL_UID] < R.NP_UID_BASE) & (dl[R.DL_ROUTE] == R.ROUTE_DESTINATION) & (dl[R.DL_CREATE] >= 300)
    assert np.array_equal(latencies, (dl[R.DL_TICK] - dl[R.DL_CREATE])[measured])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hops_are_bytes", [True, False])
def test_packet_checks_are_numpys(seed, hops_are_bytes):
    topology = Simulation(hex_config(5)).topology
    pl, dl = random_logs(seed, topology.n_nodes)
    found = log_sums.packet_checks(topology, pl, dl, hops_are_bytes)

    def first(bad):
        return bad[0] if len(bad) else -1

    own = pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]
    assert found[log_sums.CHECK_BYTES_SENT] == pl[R.PL_BYTES_SENT].sum()
    lost = np.flatnonzero(pl[R.PL_BYTES_SENT] != pl[R.PL_BYTES_RECEIVED])
    assert (found[log_sums.CHECK_LOST_BYTES], found[log_sums.CHECK_LOST_BYTES_FIRST]) == (len(lost), first(lost))
    not_hops = np.count_nonzero(pl[R.PL_BYTES_SENT] != own * pl[R.PL_LEN]) if hops_are_bytes else 0
    assert found[log_sums.CHECK_BYTES_NOT_HOPS] == not_hops
    routed = pl[R.PL_ROUTE] == R.ROUTE_DESTINATION
    dropped = pl[R.PL_DROPPED] != 0
    not_once = np.flatnonzero(routed & (pl[R.PL_DELIVERIES] != np.where(dropped, 0, 1)))
    assert (found[log_sums.CHECK_NOT_ONCE], found[log_sums.CHECK_NOT_ONCE_FIRST]) == (len(not_once), first(not_once))
    arrived = np.flatnonzero(routed & ~dropped)
    shortest = topology.distance(pl[R.PL_SENDER, arrived], pl[R.PL_DEST, arrived])
    assert found[log_sums.CHECK_NOT_SHORTEST] == np.count_nonzero(own[arrived] != shortest) > 0
    wrong = np.flatnonzero((dl[R.DL_ROUTE] == R.ROUTE_DESTINATION) & (dl[R.DL_NODE] != dl[R.DL_DEST]))
    assert (found[log_sums.CHECK_WRONG_NODE], found[log_sums.CHECK_WRONG_NODE_FIRST]) == (len(wrong), first(wrong))
    assert min(len(lost), len(not_once), len(wrong)) > 0  # every check had something to find


def test_run_checks_name_the_first_offending_packet():
    """RunChecks reports each kind of violation with its count and its first packet, from the pass's findings."""
    simulation = Simulation(hex_config(5))
    pl, dl = random_logs(0, simulation.topology.n_nodes)
    checks = RunChecks(simulation)
    checks.take(dl, pl)
    lost = np.flatnonzero(pl[R.PL_BYTES_SENT] != pl[R.PL_BYTES_RECEIVED])
    i = lost[0]
    assert checks.problems[0] == (f"{len(lost)} packets lost or duplicated bytes on links (packet {pl[R.PL_UID, i]}: "
                                  f"sent {pl[R.PL_BYTES_SENT, i]}, received {pl[R.PL_BYTES_RECEIVED, i]})")
    assert [p.split(" ", 1)[1].split(" (")[0] for p in checks.problems[1:]] == [
        "packets sent other than length x hops bytes",
        "unicast packets neither delivered exactly once nor dropped by a fault",
        "unicast packets took a path that is not a shortest one",
        "unicast packets delivered to the wrong node"]
