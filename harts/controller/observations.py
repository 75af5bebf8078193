"""What both kernels observe of a run as it happens, whether or not the run keeps its log rows: the sums the summary
needs and the per-packet invariants, added up as each delivery and each packet record completes, the latencies
of the measured deliveries, and what the measurement window saw at each node (logs.window). A run that keeps no
rows (`keep=False`: benchmarks, sweeps) then writes no delivery or packet rows and drains only the latencies; a run
that keeps them writes the rows as well (controller/logs.py, flits/logs.py), and its observations are the same (tests/test_observations.py checks them against numpy's sums
over the kept rows). Adding a record where the kernel has it costs a few cache lines it already holds; summing
the rows after a drain read back 42 fields a packet (bench/SPEED.md, the stop of 28 November, 01:22-04:22).

`logs.observed[OB_*]` holds the counts, over the whole run; the run's checks (machine/invariants.py) read them at
its end. Four of its slots are the run's settings, written once before the kernel starts (OB_WARMUP,
OB_HOPS_ARE_BYTES, OB_WINDOW_MIDDLE, OB_WINDOW_END)."""

from ..jit import kernel_part
from .records import (
    CONTENTION_BLOCKED,
    CONTENTION_QUEUED,
    CONTENTION_RETRIED,
    CONTENTION_STORED,
    DROP_BMU_OVERFLOW,
    LT_HOPS,
    LT_QUEUEING,
    LT_TOTAL,
    NP_UID_BASE,
    ROUTE_DESTINATION,
    WN_EJECTED_FIRST,
    WN_INJECTED_FIRST,
    WN_LOST_FIRST,
)

# ---- the run's settings -----------------------------------------------------------------------------------------
OB_WARMUP = 0  # ticks: the latencies of deliveries of packets created before this are not measured
OB_HOPS_ARE_BYTES = 1  # 1: a record puts length x its own hops bytes (flits) on links; 0: circuit switching,
# whose probes may cross links several times before the last attempt's path
# ---- latencies: rows of logs.latencies since the last drain --------------------------------------------------------
OB_LATENCY_ROWS = 2
# ---- the summary's sums ---------------------------------------------------------------------------------------
OB_DELIVERIES = 3  # copies delivered to NPs
OB_RECORDS = 4  # packet records completed
OB_UNICAST_PACKETS = 5  # traffic unicasts completed
OB_UNICAST_HOPS = 6
OB_UNICAST_STORES = 7
OB_UNICAST_DROPPED = 8
OB_LINK_HOPS = 9  # links crossed by all records, each its own hops: the packet-hops
OB_COPY_LENGTH = 10  # length x copies delivered, over all records
OB_CONTENDED = 11  # records carrying a contention mark
OB_STORED = 12  # ... records carrying each mark (records.CONTENTION_*)
OB_RETRIED = 13
OB_QUEUED = 14
OB_BLOCKED = 15
OB_WAIT_KIND = 16  # the earliest wait of a record itself (ties: the lower uid): its CONTENTION_* mark, 0 if none
OB_WAIT_AT = 17  # ... its tick
OB_WAIT_UID = 18
OB_WAIT_NODE = 19
# ---- the invariants: how many records broke each, then three fields of the first that did (_violation) ----------
OB_BYTES_SENT = 20  # bytes (flits) all records put on links
OB_LOST_BYTES = 21  # records whose bytes sent differ from those received (or swallowed by a fault at the far end)
OB_LOST_UID = 22
OB_LOST_SENT = 23
OB_LOST_RECEIVED = 24
OB_BYTES_NOT_HOPS = 25  # records that sent other than length x own hops bytes (OB_HOPS_ARE_BYTES)
OB_NOT_ONCE = 26  # unicasts neither delivered exactly once nor dropped by a fault (and then never delivered)
OB_NOT_ONCE_UID = 27
OB_NOT_ONCE_DELIVERIES = 28
OB_NOT_ONCE_DROPPED = 29
OB_NOT_SHORTEST = 30  # delivered unicasts whose own hops are not their sender's distance to their destination
OB_WRONG_NODE = 31  # unicast copies delivered elsewhere than their destination
OB_WRONG_UID = 32
OB_WRONG_AT = 33
OB_WRONG_DEST = 34
# ---- the measurement window's settings: it runs from OB_WARMUP to OB_WINDOW_END, in two halves -------------------
OB_WINDOW_MIDDLE = 35  # ticks: the second half starts here
OB_WINDOW_END = 36  # ticks: run.cycles
OB_ROWS = 37



@kernel_part
def log_rows_free(logs, delivered, logged, hop_rows):
    """Rows the logs can still take; `delivered`, `logged`, `hop_rows`: where the kernel counts the delivery, packet
    and hop logs' rows in logs.stats. Every log a run writes has the latencies' rows (records.empty_logs), and one it
    does not write counts none."""
    stats = logs.stats
    used = max(stats[delivered], stats[logged], stats[hop_rows], logs.observed[OB_LATENCY_ROWS])
    return logs.latencies.shape[1] - used


@kernel_part
def observe_delivery(logs, uid, route, node, dest, source, length, create, injected, hops, tick):
    """A copy of packet `uid` (`length` bytes or flits, from `source`, created at `create`, taken from its source's NP
    at `injected`, `hops` links crossed) reaches the NP of `node` at `tick`."""
    observed = logs.observed
    observed[OB_DELIVERIES] += 1
    if route != ROUTE_DESTINATION:
        return
    if node != dest:
        _violation(observed, OB_WRONG_NODE, uid, node, dest)
    if uid >= NP_UID_BASE:
        return
    start = observed[OB_WARMUP]
    if create >= start:
        row = observed[OB_LATENCY_ROWS]
        latencies = logs.latencies
        latencies[LT_TOTAL, row] = tick - create
        latencies[LT_QUEUEING, row] = injected - create
        latencies[LT_HOPS, row] = hops
        observed[OB_LATENCY_ROWS] = row + 1
    middle, end = observed[OB_WINDOW_MIDDLE], observed[OB_WINDOW_END]
    window = logs.window
    if start <= tick < end:
        window[node, WN_EJECTED_FIRST + (tick >= middle)] += length
    if start <= injected < end:
        window[source, WN_INJECTED_FIRST + (injected >= middle)] += length


@kernel_part
def observe_packet(logs, uid, route, source, length, create, hops, hops_inherited, stores, bytes_sent, bytes_received,
                   dropped, contention, copies, contended_kind, contended_at, contended_node, distance):
    """A packet record completes. `distance`: for a unicast, the hops of a shortest route from its sender to its
    destination."""
    observed = logs.observed
    observed[OB_RECORDS] += 1
    own_hops = hops - hops_inherited
    if uid < NP_UID_BASE and route == ROUTE_DESTINATION:
        observed[OB_UNICAST_PACKETS] += 1
        observed[OB_UNICAST_HOPS] += hops
        observed[OB_UNICAST_STORES] += stores
        observed[OB_UNICAST_DROPPED] += dropped != 0
        # what a named fault swallowed never leaves its source's backlog otherwise (a full BMU's drops are the
        # network's own loss, and count against it)
        if dropped != 0 and dropped != DROP_BMU_OVERFLOW and observed[OB_WARMUP] <= create < observed[OB_WINDOW_END]:
            logs.window[source, WN_LOST_FIRST + (create >= observed[OB_WINDOW_MIDDLE])] += length
    observed[OB_LINK_HOPS] += own_hops
    observed[OB_COPY_LENGTH] += length * copies
    if contention != 0:
        observed[OB_CONTENDED] += 1
        observed[OB_STORED] += (contention & CONTENTION_STORED) != 0
        observed[OB_RETRIED] += (contention & CONTENTION_RETRIED) != 0
        observed[OB_QUEUED] += (contention & CONTENTION_QUEUED) != 0
        observed[OB_BLOCKED] += (contention & CONTENTION_BLOCKED) != 0
    if contended_kind != 0:
        at = observed[OB_WAIT_AT]
        if observed[OB_WAIT_KIND] == 0 or contended_at < at or (contended_at == at and uid < observed[OB_WAIT_UID]):
            observed[OB_WAIT_KIND] = contended_kind
            observed[OB_WAIT_AT] = contended_at
            observed[OB_WAIT_UID] = uid
            observed[OB_WAIT_NODE] = contended_node
    # every byte put on a link is taken in at the far end (or swallowed by the fault there), and only once
    observed[OB_BYTES_SENT] += bytes_sent
    if bytes_sent != bytes_received:
        _violation(observed, OB_LOST_BYTES, uid, bytes_sent, bytes_received)
    if observed[OB_HOPS_ARE_BYTES] != 0 and bytes_sent != own_hops * length:
        observed[OB_BYTES_NOT_HOPS] += 1
    if route == ROUTE_DESTINATION:
        # a unicast is delivered exactly once unless a named fault dropped it, and then never ...
        if copies != (0 if dropped != 0 else 1):
            _violation(observed, OB_NOT_ONCE, uid, copies, dropped)
        # ... over a shortest path: the route offsets only ever shrink
        if dropped == 0 and own_hops != distance:
            observed[OB_NOT_SHORTEST] += 1


@kernel_part
def _violation(observed, count, first, second, third):
    """One more record breaks the invariant counted at observed[count]; the first to break it leaves three of its
    fields in the slots after the count."""
    if observed[count] == 0:
        observed[count + 1] = first
        observed[count + 2] = second
        observed[count + 3] = third
    observed[count] += 1
