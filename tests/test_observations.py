"""The kernels' observations (harts/controller/observations.py) against numpy's whole-column expressions of the same
sums and checks: on made-up records where every case is frequent (NP packets, every route kind, drops, contention
marks, waits with tied ticks, lost bytes, wrong nodes, routes longer than the shortest), and on real runs of both
kernels, whose kept rows numpy sums again."""

import numpy as np
import pytest

from harts.controller import observations as O
from harts.controller import records as R
from harts.controller.observations import observe_delivery, observe_packet
from harts.faults.fault_set import FaultSet
from harts.machine.config import defaults, hex_config
from harts.machine.invariants import RunChecks
from harts.machine.results import earliest_wait
from harts.machine.simulation import Simulation
from harts.machine.traffic import initiations
from harts.np.kandlur_shin import ALGORITHMS

WARMUP = 300
MIDDLE = 750
END = 1200
NODES = 61  # E-5's


def random_records(seed: int, topology, rows: int = 400):
    """Packet and delivery log columns of made-up records, every invariant broken by a few of them."""
    n_nodes = topology.n_nodes
    rng = np.random.default_rng(seed)
    pl = np.zeros((R.PL_ROWS, rows), np.int64)
    pl[R.PL_UID] = np.where(rng.random(rows) < 0.2, R.NP_UID_BASE, 0) + rng.permutation(rows)
    pl[R.PL_ROUTE] = rng.choice([R.ROUTE_DESTINATION, R.ROUTE_DIRECTION, R.ROUTE_SEGMENTS], rows, p=[0.7, 0.2, 0.1])
    pl[R.PL_SENDER] = rng.integers(0, n_nodes, rows)
    pl[R.PL_DEST] = rng.integers(0, n_nodes, rows)
    pl[R.PL_LEN] = rng.integers(1, 100, rows)
    pl[R.PL_HOPS_INHERITED] = np.where(rng.random(rows) < 0.2, rng.integers(0, 3, rows), 0)
    distance = topology.distance(pl[R.PL_SENDER], pl[R.PL_DEST])
    # mostly shortest, some longer
    pl[R.PL_HOPS] = pl[R.PL_HOPS_INHERITED] + distance + np.where(rng.random(rows) < 0.1, 2, 0)
    pl[R.PL_STORES] = rng.integers(0, 3, rows)
    pl[R.PL_DROPPED] = np.where(rng.random(rows) < 0.1, rng.integers(1, 4, rows), 0)
    pl[R.PL_DELIVERIES] = np.where(rng.random(rows) < 0.8, pl[R.PL_DROPPED] == 0, rng.integers(0, 3, rows))
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
    pl[R.PL_CREATE] = rng.integers(0, 1000, rows)
    dl[R.DL_SENDER] = pl[R.PL_SENDER]
    dl[R.DL_LENGTH] = pl[R.PL_LEN]
    dl[R.DL_HOPS] = pl[R.PL_HOPS]
    dl[R.DL_CREATE] = pl[R.PL_CREATE]
    dl[R.DL_INJECTED] = dl[R.DL_CREATE] + rng.integers(0, 300, rows)
    dl[R.DL_TICK] = dl[R.DL_INJECTED] + rng.integers(0, 500, rows)
    return pl, dl, distance


def observed_of(pl, dl, distance, hops_are_bytes):
    """The observations of these records, each handed to the kernels' observation functions as it would complete:
    the observed counts, the measured deliveries' rows and the window's counts."""
    observed = np.zeros(O.OB_ROWS, np.int64)
    observed[O.OB_WARMUP] = WARMUP
    observed[O.OB_HOPS_ARE_BYTES] = hops_are_bytes
    observed[O.OB_WINDOW_MIDDLE] = MIDDLE
    observed[O.OB_WINDOW_END] = END
    logs = R.empty_logs(np.zeros(1, np.int64), observed, dl.shape[1], 1, False, False, R.window_table(NODES))
    for i in range(dl.shape[1]):
        observe_delivery(logs, *(int(dl[f, i]) for f in (R.DL_UID, R.DL_ROUTE, R.DL_NODE, R.DL_DEST, R.DL_SENDER,
                                                          R.DL_LENGTH, R.DL_CREATE, R.DL_INJECTED, R.DL_HOPS,
                                                          R.DL_TICK)))
    for i in range(pl.shape[1]):
        observe_packet(logs, *(int(pl[f, i]) for f in (
            R.PL_UID, R.PL_ROUTE, R.PL_SENDER, R.PL_LEN, R.PL_CREATE, R.PL_HOPS, R.PL_HOPS_INHERITED, R.PL_STORES,
            R.PL_BYTES_SENT, R.PL_BYTES_RECEIVED, R.PL_DROPPED, R.PL_CONTENTION, R.PL_DELIVERIES, R.PL_CONTENDED_KIND,
            R.PL_CONTENDED_AT, R.PL_CONTENDED_NODE)), int(distance[i]))
    return observed, logs.latencies[:, :observed[O.OB_LATENCY_ROWS]], logs.window


def numpys_sums(pl):
    """What the summary sums over a packet log, as whole-column expressions."""
    unicast = (pl[R.PL_UID] < R.NP_UID_BASE) & (pl[R.PL_ROUTE] == R.ROUTE_DESTINATION)
    contention = pl[R.PL_CONTENTION]
    return {O.OB_RECORDS: pl.shape[1], O.OB_UNICAST_PACKETS: unicast.sum(),
            O.OB_UNICAST_HOPS: pl[R.PL_HOPS][unicast].sum(), O.OB_UNICAST_STORES: pl[R.PL_STORES][unicast].sum(),
            O.OB_UNICAST_DROPPED: np.count_nonzero(pl[R.PL_DROPPED][unicast]),
            O.OB_LINK_HOPS: (pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]).sum(),
            O.OB_COPY_LENGTH: (pl[R.PL_LEN] * pl[R.PL_DELIVERIES]).sum(),
            O.OB_CONTENDED: np.count_nonzero(contention), O.OB_STORED: np.count_nonzero(contention & 1),
            O.OB_RETRIED: np.count_nonzero(contention & 2), O.OB_QUEUED: np.count_nonzero(contention & 4),
            O.OB_BLOCKED: np.count_nonzero(contention & 8), O.OB_BYTES_SENT: pl[R.PL_BYTES_SENT].sum()}


def traffic_unicasts(log, uid, route):
    return (log[uid] < R.NP_UID_BASE) & (log[route] == R.ROUTE_DESTINATION)


def numpys_latencies(dl, warmup):
    """Per measured delivery: creation to delivery, creation to injection, hops (records.LT_* rows)."""
    measured = traffic_unicasts(dl, R.DL_UID, R.DL_ROUTE) & (dl[R.DL_CREATE] >= warmup)
    return np.stack([dl[R.DL_TICK] - dl[R.DL_CREATE], dl[R.DL_INJECTED] - dl[R.DL_CREATE], dl[R.DL_HOPS]])[:, measured]


def numpys_window(pl, dl, nodes, start, middle, end):
    """records.WN_* per node: what traffic unicasts delivered, injected and lost to faults in each half."""
    window = np.zeros((nodes, R.WN_COLUMNS), np.int64)
    delivered = traffic_unicasts(dl, R.DL_UID, R.DL_ROUTE)
    lost = traffic_unicasts(pl, R.PL_UID, R.PL_ROUTE) & (pl[R.PL_DROPPED] != 0) & \
        (pl[R.PL_DROPPED] != R.DROP_BMU_OVERFLOW)
    for column, log, mask, node, tick in (
            (R.WN_EJECTED_FIRST, dl, delivered, R.DL_NODE, R.DL_TICK),
            (R.WN_INJECTED_FIRST, dl, delivered, R.DL_SENDER, R.DL_INJECTED),
            (R.WN_LOST_FIRST, pl, lost, R.PL_SENDER, R.PL_CREATE)):
        length = R.DL_LENGTH if log is dl else R.PL_LEN
        for half, (low, high) in enumerate(((start, middle), (middle, end))):
            mine = mask & (log[tick] >= low) & (log[tick] < high)
            np.add.at(window[:, column + half], log[node, mine], log[length, mine])
    return window


def brute_force_first_wait(pl):
    waited = np.flatnonzero(pl[R.PL_CONTENDED_KIND])
    if waited.size == 0:
        return None
    first = min(waited, key=lambda i: (pl[R.PL_CONTENDED_AT, i], pl[R.PL_UID, i]))
    return tuple(int(pl[row, first]) for row in (R.PL_CONTENDED_AT, R.PL_UID, R.PL_CONTENDED_NODE,
                                                 R.PL_CONTENDED_KIND))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hops_are_bytes", [True, False])
def test_observed_records_are_numpys(seed, hops_are_bytes):
    topology = Simulation(hex_config(5)).topology
    pl, dl, distance = random_records(seed, topology)
    observed, latencies, window = observed_of(pl, dl, distance, hops_are_bytes)
    for row, value in numpys_sums(pl).items():
        assert observed[row] == value, row
    assert observed[O.OB_DELIVERIES] == dl.shape[1]
    assert np.array_equal(latencies, numpys_latencies(dl, WARMUP))
    expected = numpys_window(pl, dl, NODES, WARMUP, MIDDLE, END)
    assert np.array_equal(window, expected)
    assert all(expected[:, column].any() for column in range(R.WN_LOST_SECOND + 1))  # every count had something
    wait = tuple(int(observed[row]) for row in (O.OB_WAIT_AT, O.OB_WAIT_UID, O.OB_WAIT_NODE, O.OB_WAIT_KIND))
    assert wait == brute_force_first_wait(pl) == earliest_wait(pl)

    def first(bad, *rows):
        return len(bad), *(int(log[row, bad[0]]) for log, row in rows)

    own = pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]
    lost = np.flatnonzero(pl[R.PL_BYTES_SENT] != pl[R.PL_BYTES_RECEIVED])
    assert tuple(observed[[O.OB_LOST_BYTES, O.OB_LOST_UID, O.OB_LOST_SENT, O.OB_LOST_RECEIVED]]) == first(
        lost, (pl, R.PL_UID), (pl, R.PL_BYTES_SENT), (pl, R.PL_BYTES_RECEIVED))
    not_hops = np.count_nonzero(pl[R.PL_BYTES_SENT] != own * pl[R.PL_LEN]) if hops_are_bytes else 0
    assert observed[O.OB_BYTES_NOT_HOPS] == not_hops
    routed = pl[R.PL_ROUTE] == R.ROUTE_DESTINATION
    dropped = pl[R.PL_DROPPED] != 0
    not_once = np.flatnonzero(routed & (pl[R.PL_DELIVERIES] != np.where(dropped, 0, 1)))
    assert tuple(observed[[O.OB_NOT_ONCE, O.OB_NOT_ONCE_UID, O.OB_NOT_ONCE_DELIVERIES, O.OB_NOT_ONCE_DROPPED]]) == \
        first(not_once, (pl, R.PL_UID), (pl, R.PL_DELIVERIES), (pl, R.PL_DROPPED))
    arrived = np.flatnonzero(routed & ~dropped)
    shortest = topology.distance(pl[R.PL_SENDER, arrived], pl[R.PL_DEST, arrived])
    assert observed[O.OB_NOT_SHORTEST] == np.count_nonzero(own[arrived] != shortest) > 0
    wrong = np.flatnonzero((dl[R.DL_ROUTE] == R.ROUTE_DESTINATION) & (dl[R.DL_NODE] != dl[R.DL_DEST]))
    assert tuple(observed[[O.OB_WRONG_NODE, O.OB_WRONG_UID, O.OB_WRONG_AT, O.OB_WRONG_DEST]]) == first(
        wrong, (dl, R.DL_UID), (dl, R.DL_NODE), (dl, R.DL_DEST))
    assert min(len(lost), len(not_once), len(wrong)) > 0  # every check had something to find


def test_run_checks_name_the_first_offending_packet():
    """RunChecks reports each kind of violation with its count and its first packet, from the kernel's counts."""
    topology = Simulation(hex_config(5)).topology
    pl, dl, distance = random_records(0, topology)
    observed, _, _ = observed_of(pl, dl, distance, True)
    checks = RunChecks()
    checks.take(observed)
    lost = np.flatnonzero(pl[R.PL_BYTES_SENT] != pl[R.PL_BYTES_RECEIVED])
    i = lost[0]
    assert checks.problems[0] == (f"{len(lost)} packets lost or duplicated bytes on links (packet {pl[R.PL_UID, i]}: "
                                  f"sent {pl[R.PL_BYTES_SENT, i]}, received {pl[R.PL_BYTES_RECEIVED, i]})")
    assert [p.split(" ", 1)[1].split(" (")[0] for p in checks.problems[1:]] == [
        "packets sent other than length x hops bytes",
        "unicast packets neither delivered exactly once nor dropped by a fault",
        "unicast packets took a path that is not a shortest one",
        "unicast packets delivered to the wrong node"]
    clean = np.zeros(O.OB_ROWS, np.int64)
    checks = RunChecks()
    checks.take(clean)
    assert checks.problems == []


def crashed_and_byzantine(sim):
    faults = FaultSet.none(sim.topology)
    faults.node_fault[[3, 11]] = R.FAULT_CRASH
    faults.node_fault[[7]] = R.FAULT_ALTER
    return faults


RUNS = {
    "cut-through, uniform past warm-up": (hex_config(5, traffic__uniform__load=0.5, run__cycles=3000,
                                                     run__warmup_cycles=500), None, None),
    "cut-through, random faults": (hex_config(5, traffic__uniform__load=0.5, run__cycles=3000,
                                              faults__random_crashed=3, faults__random_dead_links=4,
                                              faults__corruption_probability=0.01, faults__seed=3), None, None),
    "cut-through, a broadcast among crashed and Byzantine nodes": (
        hex_config(5), initiations([0, 400], [0, 30], [ALGORITHMS["3bcast"], ALGORITHMS["6bcast"]], [64, 64]),
        crashed_and_byzantine),
    "wormhole, 6x6 torus": (defaults().with_values(
        topology={"kind": "torus", "dims": [6, 6]}, microcode="wormhole", run__cycles=3000, run__warmup_cycles=300,
        traffic__synthetic__pattern="uniform", traffic__synthetic__rate=0.2, traffic__synthetic__packet_flits=8),
        None, None),
    "wormhole, random faults": (defaults().with_values(
        topology={"kind": "torus", "dims": [6, 6]}, microcode="wormhole", run__cycles=3000,
        traffic__synthetic__pattern="uniform", traffic__synthetic__rate=0.2, traffic__synthetic__packet_flits=8,
        faults__random_crashed=2, faults__random_dead_links=3, faults__corruption_probability=0.01, faults__seed=3),
        None, None),
    "circuit, 6x6 mesh": (defaults().with_values(
        topology={"kind": "mesh", "dims": [6, 6]}, microcode="circuit", flow__circuit_setup="retry",
        flow__retry_cycles=8, run__cycles=3000, run__warmup_cycles=300,
        traffic__synthetic__pattern="transpose", traffic__synthetic__rate=0.02,
        traffic__synthetic__packet_flits=8), None, None),
}


@pytest.mark.parametrize("name", list(RUNS))
def test_a_run_observes_what_its_kept_rows_show(name):
    """On both kernels, the summary's sums, latencies and first wait, which the kernel observes as records complete,
    are numpy's over the rows the run keeps; and a run that keeps no rows gives the same summary."""
    config, traffic, faults = RUNS[name]
    sim = Simulation(config)
    faults = faults(sim) if faults else None
    kept = sim.run(traffic, faults=faults)
    t = kept.logs.tally
    pl, dl = kept.logs.packets, kept.logs.deliveries
    assert pl.shape[1] > 20 and t.records == pl.shape[1] and t.deliveries == dl.shape[1]
    sums = numpys_sums(pl)
    assert (t.unicast_packets, t.unicast_hops, t.unicast_stores, t.unicast_dropped, t.link_hops, t.copy_length,
            t.contended_records, *t.contention.values()) == tuple(
        sums[row] for row in (O.OB_UNICAST_PACKETS, O.OB_UNICAST_HOPS, O.OB_UNICAST_STORES, O.OB_UNICAST_DROPPED,
                              O.OB_LINK_HOPS, O.OB_COPY_LENGTH, O.OB_CONTENDED, O.OB_STORED, O.OB_RETRIED,
                              O.OB_QUEUED, O.OB_BLOCKED))
    tpc = sim.ticks_per_cycle
    total, queueing, hops = numpys_latencies(dl, config["run.warmup_cycles"] * tpc)
    assert t.measured == total.size
    assert total.size > 0 or "broadcast" in name  # a broadcast's copies are not unicasts
    assert t.unicast_dropped > 0 or "faults" not in name
    for counted, expected in ((t.latencies, total), (t.queueing, queueing), (t.network, total - queueing),
                              (t.hops, hops)):
        assert np.array_equal(np.repeat(*counted.merged()), np.sort(expected))
    assert (queueing >= 0).all() and (total > queueing).all()
    window = numpys_window(pl, dl, sim.topology.n_nodes, config["run.warmup_cycles"] * tpc,
                           kept.logs.window.middle * tpc, config["run.cycles"] * tpc)
    assert np.array_equal(kept.logs.window_counts, window)
    assert window.any() or "broadcast" in name
    assert t.first_wait == earliest_wait(pl)
    timing = ("wall_seconds", "kernel_startup_seconds", "cycles_per_second", "node_cycles_per_second",
              "packet_hops_per_second")
    summary = {k: v for k, v in kept.summary().items() if k not in timing}
    bare = sim.run(traffic, faults=faults, keep=False)
    assert bare.logs.packets is None
    assert {k: v for k, v in bare.summary().items() if k not in timing} == summary
