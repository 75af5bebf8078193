"""The speed-of-light model of the cut-through kernel on its reference workload.

What it models, exactly: uniform unicasts on the hexagonal mesh E-n with the default config, that is
harts.yaml's minimal adaptive routing (the productive axis with the most hops left first, ties the lower
axis, then the other productive ones), virtual cut-through with the BMU (one ready queue, six bus
interfaces that hold a refused packet and retry when its transmitter frees, dropping what does not fit in
bmu.capacity_bytes) and the default timing. Everything the engine reads from the microprogram and the config is folded into
constants here (all but the BMU's capacity, which stays a parameter so that a test can make BMUs overflow), so
it is the same machine with nothing interpreted: given the same packets, every delivery tick must equal the
engine's (tests/test_cut_through_limit.py).

The engine's timing, in ticks (one byte time; 6 a cycle), as harts.yaml and the defaults make it:
* a packet created at tick c is ready in its BMU at c + 12 (np_send + bmu_setup); an idle bus interface takes
  the head of the ready queue and runs wait_header and a branch (12 ticks) before its forward;
* a forward at tick T reserves a transmitter whose idle gap has ended by T + 6 (bus delay): the first byte
  leaves at T + 6 and arrives at once (no wire delay); the transmitter is free again at T + 6 + length + 8;
* a link receiver starts on a packet when it arrives or when the receiver's last 'done' allows, whichever
  is later, has the header 6 ticks after the first byte, and executes wait_header and two branches before
  its shared instruction (forward, or deliver at the destination) 18 ticks after the header decision
  started; a refused forward is followed by 'store' 6 ticks later;
* a receiver's stream ends (tail) at max(first byte + length, stream start + length / 2) (the bus slot
  carries 12 bytes a cycle); a delivery reaches the NP at tail + 12, a stored packet is ready at tail + 12,
  and the receiver's 'done' is at max(shared + 6, tail) + 6, after which it takes its next packet 6 later;
* a bus interface's forward is followed by wait_tail until the last byte has left (first + length), 'done'
  6 ticks after that (which frees a stored packet's bytes) and a look at the ready queue 6 ticks later; a
  refused forward runs again when the first transmitter it tried frees;
* events of one tick run node by node, receivers 0..5 before bus interfaces 0..5 (the engine's bus-slot
  order); the traffic created in a tick reaches its BMU before them. A packet queued in the BMU wakes the
  first idle interface that is not already due to look at the queue by the time the packet is ready.

What the engine does that never changes a delivery here is left out: the NP (a uniform unicast asks for no
NP event), the receivers' private instructions (they are arithmetic on the times above), a receiver's
'deliver' (nothing else reads it, so it is computed when the receiver starts the packet) and a bus
interface's 'done' (nothing reads an interface between its forward and its next look at the queue except
that look; the bytes it frees are applied when a store next checks the BMU's room), nor that look itself while
the queue stays empty (it would find nothing; a packet queued before it puts it back on the wheel). Events of
one tick run in id order, as in the engine.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from harts.jit import index_without_wraparound

index_without_wraparound("bench.limits")  # indexed as the engine is (harts/jit.py)

# ---- the default timing, in ticks ---------------------------------------------------------------------
CYCLE = 6  # ticks per controller cycle: one micro-instruction
HEADER = 6  # header bytes: the header is in one cycle after the first byte
BUS = 6  # bus delay: a forward's first byte leaves one cycle after the forward
IDLE_GAP = 8  # forced idle bytes between two packets on a link
READY_AFTER_CREATE = 12  # np_send + bmu_setup
INJECT_DECIDE = 12  # a bus interface's wait_header and branch before its forward
RECEIVE_DECIDE = 18  # a receiver's wait_header and two branches before its forward or deliver
AFTER_TAIL = 12  # bus delay + deliver (to the NP) or + bmu_setup (ready in the BMU)
FIFO_BYTES = 64
PORTS = 6
INTERFACES = 6
SLOTS = PORTS + INTERFACES  # event ids per node: receivers 0..5, then bus interfaces 6..11

NEVER = np.int64(2**62)
WHEEL = 2048  # ticks the event wheel spans; every event is scheduled less than this far ahead (checked)
_MASK = WHEEL - 1

ERR_NONE = 0
ERR_FIFO = 1  # a receiver started streaming with more than FIFO_BYTES waiting: the engine stops there too
ERR_HORIZON = 2  # an event beyond the wheel's span: cannot happen with the default timing

# the config the constants above are: every key the model folds in, at its default
FOLDED_KEYS = ("microcode", "timing.clock_period_us", "timing.link_rate_mbytes_per_s", "timing.idle_gap_bytes",
               "timing.header_bytes", "timing.link_delay_cycles", "timing.bus_delay_cycles",
               "timing.bus_slot_bytes", "timing.receiver_fifo_bytes", "timing.bmu_setup_cycles",
               "timing.np_send_cycles", "timing.deliver_cycles", "bmu.when_full",
               "bmu.bus_interfaces", "bmu.queues")


@njit(cache=True, inline="always", _nrt=False)
def _schedule(e, t, now, ev_time, ev_next, ev_prev, bucket, bits):
    """Event id e is next due at tick t (> now), replacing whatever it was due at. Returns False when t is
    beyond the wheel."""
    old = ev_time[e]
    if old != NEVER:
        # unlink from its bucket
        b = old & _MASK
        nxt = ev_next[e]
        prv = ev_prev[e]
        if prv < 0:
            bucket[b] = nxt
            if nxt < 0:
                bits[b >> 6] &= ~(np.int64(1) << (b & 63))
        else:
            ev_next[prv] = nxt
        if nxt >= 0:
            ev_prev[nxt] = prv
    if t - now >= WHEEL:
        ev_time[e] = NEVER
        return False
    ev_time[e] = t
    b = t & _MASK
    head = bucket[b]
    ev_next[e] = head
    ev_prev[e] = -1
    if head >= 0:
        ev_prev[head] = e
    else:
        bits[b >> 6] |= np.int64(1) << (b & 63)
    bucket[b] = e
    return True


@njit(cache=True, inline="always", _nrt=False)
def _next_tick(now, bits):
    """The first tick after `now` with an event in the wheel; NEVER if none."""
    start = (now + 1) & _MASK
    words = WHEEL >> 6
    first = start >> 6
    low = start & 63
    for k in range(words + 1):
        w = (first + k) & (words - 1)
        word = bits[w]
        if k == 0:
            word &= np.int64(-1) << low
        elif k == words:
            word &= ~(np.int64(-1) << low)
        if word != 0:
            b = (w << 6) + trailing_zeros(word)
            return now + 1 + ((b - start) & _MASK)
    return NEVER


@njit(cache=True, inline="always", _nrt=False)
def _enqueue(v, p, c, running, ready, q_head, q_tail, p_next, p_prev, if_pkt, if_idle, if_lazy, ev_time, ev_next,
             ev_prev, bucket, bits, due, due_top):
    """Packet p (ready[p] set) joins v's ready queue at tick c, after every packet ready no later; the first
    idle bus interface not already due by then is woken for it. `running`: called by an event of tick c (a
    store), not by the traffic, which comes before them.

    An interface's look at the queue after its 'done' is kept off the wheel while the queue is empty
    (IF_LAZY), since it would find nothing; a packet queued before it turns it into an event again."""
    ok = True
    for i in range(INTERFACES):
        k = v * INTERFACES + i
        if if_lazy[k] != 0:
            if_lazy[k] = 0
            e = v * SLOTS + PORTS + i
            t = ev_time[e]
            ev_time[e] = NEVER
            if t > c or (t == c and not running):
                ok = ok and _schedule(e, t, c, ev_time, ev_next, ev_prev, bucket, bits)
            elif t == c:
                # this tick's ids are being taken, a receiver's store before the interface's look: mark it due
                ev_time[e] = c
                w = e >> 6
                due[w] |= np.int64(1) << (e & 63)
                due_top[w >> 6] |= np.int64(1) << (w & 63)
            # else the look has been, and found the queue empty
    r = ready[p]
    before = q_tail[v]
    while before >= 0 and ready[before] > r:
        before = p_prev[before]
    after = q_head[v] if before < 0 else p_next[before]
    p_prev[p] = before
    p_next[p] = after
    if before < 0:
        q_head[v] = p
    else:
        p_next[before] = p
    if after < 0:
        q_tail[v] = p
    else:
        p_prev[after] = p
    for i in range(INTERFACES):
        k = v * INTERFACES + i
        wake = max(c, r, if_idle[k])
        e = v * SLOTS + PORTS + i
        if if_pkt[k] < 0 and ev_time[e] > wake:
            ok = ok and _schedule(e, wake, c, ev_time, ev_next, ev_prev, bucket, bits)
            break
    return ok


# rows of the state tables simulate() takes (allocated by Limit.prepare, outside the timed run)
PK_OFF0, PK_OFF1, PK_OFF2, PK_NEXT, PK_PREV, PK_ARRIVE, PK_READY, PK_STORED, PK_DELIVER, PK_ROWS = range(10)
RX_PKT, RX_ARRIVE, RX_STORING, RX_RESUME, RX_HEAD, RX_TAIL, RX_TX_FREE, RX_ROWS = range(8)
IF_PKT, IF_IDLE, IF_FREED_AT, IF_FREED, IF_LAZY, IF_ROWS = range(6)
ND_Q_HEAD, ND_Q_TAIL, ND_USED, ND_ROWS = range(4)
EV_TIME, EV_NEXT, EV_PREV, EV_ROWS = range(4)


@njit(cache=True, _nrt=False)
def simulate(create, source, destination, length, route_table, neighbours, capacity, pk, rx, itf, nd, ev, bucket,
             bits, due, due_top):
    """Run the packets (creation ticks in order, sources, destinations, lengths in bytes) on E-n: route
    offsets from route_table[(destination - source) mod N] (the engine's), a packet sent through port d
    arrives on receiver d of neighbours[v, d], BMUs of `capacity` bytes. The tables come from Limit.prepare, initialised. Writes each
    packet's delivery tick (-1: dropped by a full BMU) into pk[PK_DELIVER]; returns (error, packet-hops,
    events)."""
    n_nodes = neighbours.shape[0]
    k_packets = create.shape[0]
    off0 = pk[PK_OFF0]
    off1 = pk[PK_OFF1]
    off2 = pk[PK_OFF2]
    p_next = pk[PK_NEXT]
    p_prev = pk[PK_PREV]
    p_arrive = pk[PK_ARRIVE]
    ready = pk[PK_READY]
    stored = pk[PK_STORED]  # 1 from a store until a bus interface sends it on
    deliver = pk[PK_DELIVER]
    # link receivers, and the transmitter of the same port
    rx_pkt = rx[RX_PKT]  # packet whose forward or store is pending, -1 none
    rx_arrive = rx[RX_ARRIVE]
    rx_storing = rx[RX_STORING]  # 1: the pending instruction is the store after a refused forward
    rx_resume = rx[RX_RESUME]  # tick from which the receiver can start its next packet
    rx_head = rx[RX_HEAD]  # packets waiting in its FIFO, oldest first
    rx_tail = rx[RX_TAIL]
    tx_free = rx[RX_TX_FREE]
    # BMU bus interfaces and queues
    if_pkt = itf[IF_PKT]
    if_idle = itf[IF_IDLE]
    if_freed_at = itf[IF_FREED_AT]  # 'done' of a stored packet: its bytes leave the BMU
    if_freed = itf[IF_FREED]  # ... this many, not yet taken off bmu_used
    if_lazy = itf[IF_LAZY]  # 1: its look at the queue at IF_IDLE is not on the wheel (the queue is empty)
    q_head = nd[ND_Q_HEAD]
    q_tail = nd[ND_Q_TAIL]
    bmu_used = nd[ND_USED]
    # the event wheel: one pending tick per id, ids of a tick run in increasing order
    ev_time = ev[EV_TIME]
    ev_next = ev[EV_NEXT]
    ev_prev = ev[EV_PREV]

    hops = 0
    events = 0
    error = ERR_NONE
    now = -1
    i = 0
    while True:
        t = _next_tick(now, bits)
        if i < k_packets and create[i] < t:
            t = create[i]
        if t == NEVER:
            break
        now = t
        # the traffic of this tick reaches its BMUs first
        while i < k_packets and create[i] <= now:
            v = source[i]
            row = (destination[i] - v) % n_nodes
            off0[i] = route_table[row, 0]
            off1[i] = route_table[row, 1]
            off2[i] = route_table[row, 2]
            ready[i] = now + READY_AFTER_CREATE
            if not _enqueue(v, i, now, False, ready, q_head, q_tail, p_next, p_prev, if_pkt, if_idle, if_lazy,
                            ev_time, ev_next, ev_prev, bucket, bits, due, due_top):
                return ERR_HORIZON, hops, events
            i += 1
        # this tick's ids, in increasing order: marked in a two-level bitmap, taken lowest first (nothing is
        # scheduled for the tick being run, so the marks are complete)
        b = now & _MASK
        e = bucket[b]
        while e >= 0:
            w = e >> 6
            due[w] |= np.int64(1) << (e & 63)
            due_top[w >> 6] |= np.int64(1) << (w & 63)
            e = ev_next[e]
        bucket[b] = -1
        bits[b >> 6] &= ~(np.int64(1) << (b & 63))
        for s in range(due_top.shape[0]):
            while due_top[s] != 0:
                w = (s << 6) + trailing_zeros(due_top[s])
                e = (w << 6) + trailing_zeros(due[w])
                due[w] &= due[w] - 1
                if due[w] == 0:
                    due_top[s] &= due_top[s] - 1
                ev_time[e] = NEVER
                events += 1
                v = e // SLOTS
                slot = e - v * SLOTS
                if slot < PORTS:
                    # ---- link receiver: its forward, or the store after a refused one ----
                    r = v * PORTS + slot
                    p = rx_pkt[r]
                    arrive = rx_arrive[r]
                    if arrive + FIFO_BYTES < now:
                        return ERR_FIFO, hops, events
                    size = length[p]
                    tail = max(arrive + size, now + (size + 1) // 2)
                    if rx_storing[r] == 0:
                        port = _reserve(v, p, now, pk, tx_free, size)
                        if port < 0:
                            rx_storing[r] = 1
                            if not _schedule(e, now + CYCLE, now, ev_time, ev_next, ev_prev, bucket, bits):
                                return ERR_HORIZON, hops, events
                            continue
                        hops += 1
                        error = _arrive(neighbours[v, port] * PORTS + port, p, now + BUS, now, off0, off1, off2, length,
                                        deliver, p_next, p_arrive, rx_pkt, rx_arrive, rx_storing, rx_resume, rx_head,
                                        rx_tail, ev_time, ev_next, ev_prev, bucket, bits)
                        if error != ERR_NONE:
                            return error, hops, events
                    else:
                        # store: whole in the BMU, unless it does not fit
                        for q in range(v * INTERFACES, v * INTERFACES + INTERFACES):
                            if if_freed[q] != 0 and if_freed_at[q] < now:
                                bmu_used[v] -= if_freed[q]
                                if_freed[q] = 0
                        if capacity - bmu_used[v] < size:
                            deliver[p] = -1
                        else:
                            bmu_used[v] += size
                            stored[p] = 1
                            ready[p] = tail + AFTER_TAIL
                            if not _enqueue(v, p, now, True, ready, q_head, q_tail, p_next, p_prev, if_pkt, if_idle,
                                            if_lazy, ev_time, ev_next, ev_prev, bucket, bits, due, due_top):
                                return ERR_HORIZON, hops, events
                    rx_pkt[r] = -1
                    rx_resume[r] = max(now + CYCLE, tail) + 2 * CYCLE
                    error = _take_next(r, length, off0, off1, off2, deliver, p_next, p_arrive, rx_pkt, rx_arrive,
                                       rx_storing, rx_resume, rx_head, rx_tail, now, ev_time, ev_next, ev_prev, bucket,
                                       bits)
                    if error != ERR_NONE:
                        return error, hops, events
                else:
                    # ---- BMU bus interface ----
                    k = v * INTERFACES + slot - PORTS
                    p = if_pkt[k]
                    if p < 0:
                        # idle: take the head of the ready queue if it is ready
                        p = q_head[v]
                        if p < 0:
                            continue
                        if ready[p] > now:
                            if not _schedule(e, ready[p], now, ev_time, ev_next, ev_prev, bucket, bits):
                                return ERR_HORIZON, hops, events
                            continue
                        following = p_next[p]
                        q_head[v] = following
                        if following < 0:
                            q_tail[v] = -1
                        else:
                            p_prev[following] = -1
                        if_pkt[k] = p
                        if not _schedule(e, now + INJECT_DECIDE, now, ev_time, ev_next, ev_prev, bucket, bits):
                            return ERR_HORIZON, hops, events
                        continue
                    size = length[p]
                    port = _reserve(v, p, now, pk, tx_free, size)
                    if port < 0:
                        # hold the packet; try again when the first of the transmitters tried frees
                        retry = _first_free(v, p, off0, off1, off2, tx_free) - BUS
                        if not _schedule(e, max(now + 1, retry), now, ev_time, ev_next, ev_prev, bucket, bits):
                            return ERR_HORIZON, hops, events
                        continue
                    hops += 1
                    first = now + BUS
                    if stored[p] != 0:
                        stored[p] = 0
                        # the bytes leave the BMU at the interface's 'done'
                        if if_freed[k] != 0:
                            bmu_used[v] -= if_freed[k]
                        if_freed[k] = size
                        if_freed_at[k] = first + size + CYCLE
                    if_pkt[k] = -1
                    if_idle[k] = first + size + 2 * CYCLE
                    if q_head[v] >= 0:
                        if not _schedule(e, if_idle[k], now, ev_time, ev_next, ev_prev, bucket, bits):
                            return ERR_HORIZON, hops, events
                    else:
                        ev_time[e] = if_idle[k]
                        if_lazy[k] = 1
                    error = _arrive(neighbours[v, port] * PORTS + port, p, first, now, off0, off1, off2, length, deliver,
                                    p_next, p_arrive, rx_pkt, rx_arrive, rx_storing, rx_resume, rx_head, rx_tail, ev_time,
                                    ev_next, ev_prev, bucket, bits)
                    if error != ERR_NONE:
                        return error, hops, events
    return error, hops, events


@njit(cache=True, inline="always", _nrt=False)
def _reserve(v, p, now, pk, tx_free, size):
    """harts.yaml's adaptive forward at tick `now`: the productive ports, the axis with the most hops left
    first (ties: the lower axis); the first whose transmitter is free by now + BUS is reserved and the
    packet's offset on that axis moves one hop closer. Returns the port, or -1. The axis is chosen with
    selects, not branches: it follows the packet's random offsets, which no branch predictor knows."""
    a0 = abs(pk[PK_OFF0, p])
    a1 = abs(pk[PK_OFF1, p])
    a2 = abs(pk[PK_OFF2, p])
    out = now + BUS
    for _ in range(3):
        # the untried productive axis with the most hops left, the lower on a tie
        best = 0 if a0 > 0 else -1
        most = a0
        best = 1 if a1 > most else best
        most = max(most, a1)
        best = 2 if a2 > most else best
        if best < 0:
            return -1
        a0 = 0 if best == 0 else a0
        a1 = 0 if best == 1 else a1
        a2 = 0 if best == 2 else a2
        o = pk[PK_OFF0 + best, p]  # the three offsets' rows follow one another
        port = best + (3 if o < 0 else 0)
        t = v * PORTS + port
        if tx_free[t] <= out:
            tx_free[t] = out + size + IDLE_GAP
            pk[PK_OFF0 + best, p] = o - (1 if o > 0 else -1)
            return port
    return -1


@njit(cache=True, inline="always", _nrt=False)
def _first_free(v, p, off0, off1, off2, tx_free):
    """The earliest tick one of packet p's productive transmitters at v is free again."""
    first = NEVER
    if off0[p] != 0:
        first = min(first, tx_free[v * PORTS + (0 if off0[p] > 0 else 3)])
    if off1[p] != 0:
        first = min(first, tx_free[v * PORTS + (1 if off1[p] > 0 else 4)])
    if off2[p] != 0:
        first = min(first, tx_free[v * PORTS + (2 if off2[p] > 0 else 5)])
    return first


@njit(cache=True, inline="always", _nrt=False)
def _start(r, p, start, arrive, length, off0, off1, off2, deliver, rx_pkt, rx_arrive, rx_storing, rx_resume, now,
           ev_time, ev_next, ev_prev, bucket, bits):
    """Receiver r starts on packet p (first byte in at `arrive`) at `start`. At its destination the delivery
    is computed at once and the receiver is free again (returns True); otherwise its forward is scheduled
    (returns False). Returns the error code second."""
    shared = max(start, arrive + HEADER) + RECEIVE_DECIDE
    if off0[p] == 0 and off1[p] == 0 and off2[p] == 0:
        if arrive + FIFO_BYTES < shared:
            return True, ERR_FIFO
        size = length[p]
        tail = max(arrive + size, shared + (size + 1) // 2)
        deliver[p] = tail + AFTER_TAIL
        rx_resume[r] = max(shared + CYCLE, tail) + 2 * CYCLE
        return True, ERR_NONE
    rx_pkt[r] = p
    rx_arrive[r] = arrive
    rx_storing[r] = 0
    e = (r // PORTS) * SLOTS + r % PORTS
    if not _schedule(e, shared, now, ev_time, ev_next, ev_prev, bucket, bits):
        return False, ERR_HORIZON
    return False, ERR_NONE


@njit(cache=True, inline="always", _nrt=False)
def _arrive(r, p, arrive, now, off0, off1, off2, length, deliver, p_next, p_arrive, rx_pkt, rx_arrive, rx_storing,
            rx_resume, rx_head, rx_tail, ev_time, ev_next, ev_prev, bucket, bits):
    """Packet p's first byte reaches receiver r at `arrive` (sent at tick now): it starts on it, or the packet
    waits in its FIFO."""
    if rx_pkt[r] >= 0:
        p_arrive[p] = arrive
        p_next[p] = -1
        if rx_tail[r] < 0:
            rx_head[r] = p
        else:
            p_next[rx_tail[r]] = p
        rx_tail[r] = p
        return ERR_NONE
    _, error = _start(r, p, max(arrive, rx_resume[r]), arrive, length, off0, off1, off2, deliver, rx_pkt,
                      rx_arrive, rx_storing, rx_resume, now, ev_time, ev_next, ev_prev, bucket, bits)
    return error


@njit(cache=True, inline="always", _nrt=False)
def _take_next(r, length, off0, off1, off2, deliver, p_next, p_arrive, rx_pkt, rx_arrive, rx_storing, rx_resume,
               rx_head, rx_tail, now, ev_time, ev_next, ev_prev, bucket, bits):
    """Receiver r, free from rx_resume[r], takes the packets waiting in its FIFO until one needs a forward."""
    while True:
        p = rx_head[r]
        if p < 0:
            return ERR_NONE
        rx_head[r] = p_next[p]
        if p_next[p] < 0:
            rx_tail[r] = -1
        free, error = _start(r, p, max(p_arrive[p], rx_resume[r]), p_arrive[p], length, off0, off1, off2, deliver,
                             rx_pkt, rx_arrive, rx_storing, rx_resume, now, ev_time, ev_next, ev_prev, bucket, bits)
        if error != ERR_NONE or not free:
            return error


# ---- the Python side: the workload, the check that the config is the one folded in ---------------------------

def check_config(config) -> None:
    """Refuse a config the constants above are not: the model is this one machine."""
    from harts.faults.fault_set import faults_from_config
    from harts.machine.config import defaults
    from harts.network import build_topology

    base = defaults()
    different = [key for key in FOLDED_KEYS if config[key] != base[key]]
    if different:
        raise ValueError(f"the cut-through limit models the default config only; these keys differ: "
                         f"{', '.join(different)}")
    if config.topology_spec.get("kind") != "hex":
        raise ValueError("the cut-through limit models the hexagonal mesh E-n only")
    if faults_from_config(config, build_topology(config.topology_spec)).any():
        raise ValueError("the cut-through limit models a fault-free network")


def workload(config):
    """The config's uniform traffic, whole, in creation order: what the engine runs (packet i has uid i)."""
    from harts.machine.traffic import Traffic, build_traffic
    from harts.network import build_topology

    topology = build_topology(config.topology_spec)
    return Traffic.concatenate(list(build_traffic(config, topology).chunks()))


class Limit:
    """The model for one config's network: ``run(traffic)`` gives every packet's delivery tick."""

    def __init__(self, config):
        from harts.network import build_topology

        check_config(config)
        self.config = config
        self.topology = build_topology(config.topology_spec)
        if not (self.topology.in_port == np.arange(PORTS)[None, :]).all():
            raise ValueError("the limit assumes a packet sent through port d arrives on receiver d")
        self.neighbours = np.ascontiguousarray(self.topology.neighbours, dtype=np.int64)
        self.route_table = np.ascontiguousarray(self.topology.offset_table, dtype=np.int64)
        self.ticks_per_cycle = config.bytes_per_cycle
        if self.ticks_per_cycle != CYCLE:
            raise ValueError(f"the limit assumes {CYCLE} bytes per cycle")

    def prepare(self, traffic) -> tuple:
        """simulate()'s arguments: the packets and every state table, allocated and initialised here, outside
        the timed run (as the engine's are)."""
        k = len(traffic)
        n = self.topology.n_nodes
        # np.full writes every page now, so the timed run does not take their first-touch faults
        pk = np.full((PK_ROWS, k), 0, np.int64)
        pk[[PK_NEXT, PK_PREV]] = -1
        rx = np.full((RX_ROWS, n * PORTS), 0, np.int64)
        rx[[RX_PKT, RX_HEAD, RX_TAIL]] = -1
        itf = np.full((IF_ROWS, n * INTERFACES), 0, np.int64)
        itf[IF_PKT] = -1
        nd = np.full((ND_ROWS, n), 0, np.int64)
        nd[[ND_Q_HEAD, ND_Q_TAIL]] = -1
        ev = np.full((EV_ROWS, n * SLOTS), 0, np.int64)
        ev[EV_TIME] = NEVER
        ev[[EV_NEXT, EV_PREV]] = -1
        return (np.ascontiguousarray(traffic.create * CYCLE, dtype=np.int64),
                np.ascontiguousarray(traffic.source, dtype=np.int64),
                np.ascontiguousarray(traffic.destination, dtype=np.int64),
                np.ascontiguousarray(traffic.length, dtype=np.int64), self.route_table, self.neighbours,
                self.config["bmu.capacity_bytes"], pk, rx, itf, nd, ev, np.full(WHEEL, -1, np.int64),
                np.zeros(WHEEL >> 6, np.int64),
                np.zeros((n * SLOTS + 63) >> 6, np.int64), np.zeros((n * SLOTS + 4095) >> 12, np.int64))

    def run(self, traffic) -> tuple[np.ndarray, int, int]:
        """Every packet's delivery tick (-1: dropped by a full BMU), the packet-hops and the events."""
        from harts.controller.records import TRAFFIC_UNICAST

        if (traffic.kind != TRAFFIC_UNICAST).any():
            raise ValueError("the cut-through limit models unicast packets only")
        arrays = self.prepare(traffic)
        error, hops, events = simulate(*arrays)
        if error == ERR_FIFO:
            raise RuntimeError("a receiver FIFO overflowed (the engine stops with an error there too)")
        if error == ERR_HORIZON:
            raise RuntimeError(f"an event was scheduled {WHEEL} ticks or more ahead")
        return arrays[7][PK_DELIVER].copy(), int(hops), int(events)
