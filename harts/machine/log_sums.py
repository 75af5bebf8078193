"""What a drain takes from the kernel's logs, each log read in one compiled pass: the sums the summary keeps
(results.Recorder) and the per-packet invariants (invariants.RunChecks). numpy made a pass over the columns, and a
temporary array, for each quantity: 80-90 ns a packet on E-9, twice what a drain takes now (bench/SPEED.md, the
stop of 18:55-21:55). Both kernels' logs have the same rows (controller/records.py). The compiled passes write
into arrays their Python callers allocate, so they need no allocator of their own, as the kernels do not, and each
is compiled for one signature, which every layout of a log converts to: one compiled function, not one for each
layout a process meets first (a run's first drain would otherwise compile or load another in its timing)."""

import numpy as np
from numba import types

from ..controller import records as R
from ..jit import cached_when_asked
from ..network.topology import OFFSETS_SIGNATURE, compiled

# packet_sums' out: what the summary sums over the packet log, then the earliest wait of a packet itself
(SUM_UNICAST_PACKETS, SUM_UNICAST_HOPS, SUM_UNICAST_STORES, SUM_UNICAST_DROPPED, SUM_LINK_HOPS, SUM_COPY_LENGTH,
 SUM_CONTENDED, SUM_STORED, SUM_RETRIED, SUM_QUEUED, SUM_BLOCKED, WAIT_AT, WAIT_UID, WAIT_NODE, WAIT_KIND,
 PACKET_SUMS) = range(16)
# packet_checks' out: counts of packets breaking each invariant, and the first of them (-1: none)
(CHECK_BYTES_SENT, CHECK_LOST_BYTES, CHECK_LOST_BYTES_FIRST, CHECK_BYTES_NOT_HOPS, CHECK_NOT_ONCE, CHECK_NOT_ONCE_FIRST,
 CHECK_NOT_SHORTEST, CHECK_WRONG_NODE, CHECK_WRONG_NODE_FIRST, PACKET_CHECKS) = range(10)


_LOG = types.int64[:, :]  # any layout: a drain's view of a log's first columns is C-contiguous when it holds one
_VECTOR = types.int64[::1]


def delivery_latencies(deliveries: np.ndarray, warmup_ticks: int) -> np.ndarray:
    """The latencies (ticks) of the traffic's unicast deliveries created from `warmup_ticks` on, in log order."""
    out = np.empty(deliveries.shape[1], np.int64)
    n = compiled(_delivery_latencies, types.int64(_LOG, types.int64, _VECTOR))(deliveries, warmup_ticks, out)
    return out[:n]


def packet_sums(packets: np.ndarray) -> np.ndarray:
    """The packet log's sums (SUM_*) and its earliest wait of a packet itself (WAIT_*: tick, uid, node and
    CONTENTION_* mark; ties: the lower uid; WAIT_KIND 0 if none waited)."""
    out = np.empty(PACKET_SUMS, np.int64)
    compiled(_packet_sums, types.void(_LOG, _VECTOR))(packets, out)
    return out


@cached_when_asked(_nrt=False)
def _delivery_latencies(deliveries, warmup_ticks, out):
    n = 0
    for i in range(deliveries.shape[1]):
        if deliveries[R.DL_UID, i] < R.NP_UID_BASE and deliveries[R.DL_ROUTE, i] == R.ROUTE_DESTINATION \
                and deliveries[R.DL_CREATE, i] >= warmup_ticks:
            out[n] = deliveries[R.DL_TICK, i] - deliveries[R.DL_CREATE, i]
            n += 1
    return n


@cached_when_asked(_nrt=False)
def _packet_sums(packets, out):
    # the sums in locals, which LLVM keeps in registers, where a store to `out` could be to `packets`
    unicast = unicast_hops = unicast_stores = unicast_dropped = link_hops = copy_length = 0
    contended = stored = retried = queued = blocked = 0
    wait_at = wait_uid = wait_node = wait_kind = 0
    for i in range(packets.shape[1]):
        uid = packets[R.PL_UID, i]
        hops = packets[R.PL_HOPS, i]
        if uid < R.NP_UID_BASE and packets[R.PL_ROUTE, i] == R.ROUTE_DESTINATION:
            unicast += 1
            unicast_hops += hops
            unicast_stores += packets[R.PL_STORES, i]
            unicast_dropped += packets[R.PL_DROPPED, i] != 0
        link_hops += hops - packets[R.PL_HOPS_INHERITED, i]
        copy_length += packets[R.PL_LEN, i] * packets[R.PL_DELIVERIES, i]
        contention = packets[R.PL_CONTENTION, i]
        if contention != 0:
            contended += 1
            stored += (contention & R.CONTENTION_STORED) != 0
            retried += (contention & R.CONTENTION_RETRIED) != 0
            queued += (contention & R.CONTENTION_QUEUED) != 0
            blocked += (contention & R.CONTENTION_BLOCKED) != 0
        kind = packets[R.PL_CONTENDED_KIND, i]
        if kind != 0:
            at = packets[R.PL_CONTENDED_AT, i]
            if wait_kind == 0 or at < wait_at or (at == wait_at and uid < wait_uid):
                wait_at, wait_uid, wait_node, wait_kind = at, uid, packets[R.PL_CONTENDED_NODE, i], kind
    out[SUM_UNICAST_PACKETS] = unicast
    out[SUM_UNICAST_HOPS] = unicast_hops
    out[SUM_UNICAST_STORES] = unicast_stores
    out[SUM_UNICAST_DROPPED] = unicast_dropped
    out[SUM_LINK_HOPS] = link_hops
    out[SUM_COPY_LENGTH] = copy_length
    out[SUM_CONTENDED] = contended
    out[SUM_STORED] = stored
    out[SUM_RETRIED] = retried
    out[SUM_QUEUED] = queued
    out[SUM_BLOCKED] = blocked
    out[WAIT_AT] = wait_at
    out[WAIT_UID] = wait_uid
    out[WAIT_NODE] = wait_node
    out[WAIT_KIND] = wait_kind


def packet_checks(topology, packets: np.ndarray, deliveries: np.ndarray, hops_are_bytes: bool) -> np.ndarray:
    """The per-packet invariants over a drained log (CHECK_*): bytes sent and received, a packet's bytes against its
    length times its own hops (when `hops_are_bytes`), a unicast delivered exactly once unless a fault dropped it,
    over a shortest route of `topology`, and at its destination."""
    out = np.empty(PACKET_CHECKS, np.int64)
    scratch = np.empty(topology.n_axes, np.int64)
    compiled(_packet_checks, _PACKET_CHECKS_SIGNATURE)(topology.offsets_function, topology.shape,
                                                        topology.offset_table, scratch, packets, deliveries,
                                                        hops_are_bytes, out)
    return out


_PACKET_CHECKS_SIGNATURE = types.void(types.FunctionType(OFFSETS_SIGNATURE), _VECTOR, types.int64[:, ::1], _VECTOR,
                                      _LOG, _LOG, types.boolean, _VECTOR)


@cached_when_asked(_nrt=False)
def _packet_checks(offsets, shape, table, scratch, packets, deliveries, hops_are_bytes, out):
    # counts in locals, as in packet_sums
    bytes_sent = lost = bytes_not_hops = not_once = not_shortest = wrong_node = 0
    lost_first = not_once_first = wrong_node_first = -1
    for i in range(packets.shape[1]):
        sent = packets[R.PL_BYTES_SENT, i]
        bytes_sent += sent
        if sent != packets[R.PL_BYTES_RECEIVED, i]:
            lost += 1
            if lost_first < 0:
                lost_first = i
        own_hops = packets[R.PL_HOPS, i] - packets[R.PL_HOPS_INHERITED, i]
        if hops_are_bytes and sent != own_hops * packets[R.PL_LEN, i]:
            bytes_not_hops += 1
        if packets[R.PL_ROUTE, i] == R.ROUTE_DESTINATION:
            dropped = packets[R.PL_DROPPED, i] != 0
            if packets[R.PL_DELIVERIES, i] != (0 if dropped else 1):
                not_once += 1
                if not_once_first < 0:
                    not_once_first = i
            if not dropped:
                not_shortest += own_hops != offsets(packets[R.PL_SENDER, i], packets[R.PL_DEST, i], shape, table,
                                                    scratch)
    for i in range(deliveries.shape[1]):
        if deliveries[R.DL_ROUTE, i] == R.ROUTE_DESTINATION and deliveries[R.DL_NODE, i] != deliveries[R.DL_DEST, i]:
            wrong_node += 1
            if wrong_node_first < 0:
                wrong_node_first = i
    out[CHECK_BYTES_SENT] = bytes_sent
    out[CHECK_LOST_BYTES] = lost
    out[CHECK_LOST_BYTES_FIRST] = lost_first
    out[CHECK_BYTES_NOT_HOPS] = bytes_not_hops
    out[CHECK_NOT_ONCE] = not_once
    out[CHECK_NOT_ONCE_FIRST] = not_once_first
    out[CHECK_NOT_SHORTEST] = not_shortest
    out[CHECK_WRONG_NODE] = wrong_node
    out[CHECK_WRONG_NODE_FIRST] = wrong_node_first
