"""The clock: a timing wheel of due work, so that the cost of a run follows its events, not nodes x ticks.

Every piece of a node that can act has an event id: the NP of node v is v*(S+1) and context slot s of v
is v*(S+1)+1+s, with S contexts per node. An id is due at one tick at a time: its ``clock.entry`` holds the
tick and where the id waits (nowhere, the wheel, the current tick or the heap). Within a tick, ids run in
increasing order: node by node, the NP before the contexts, the contexts in bus-slot order, which is the
controller's fixed priority when two of them reserve one transmitter in a tick.

An id scheduled while its tick is being processed runs in this tick if it comes later in that order,
and in the next tick otherwise (a signal raised in a tick is seen by earlier parts one tick later).

The wheel has WHEEL_TICKS buckets of one tick; ids due later wait in a small binary heap and move to
the wheel as the clock approaches them. A bit per bucket lets the clock jump straight to the next
tick with work. The ids due in the current tick are bits of a two-level bitmap over all ids, so they
come out in increasing order without sorting, and one scheduled during the tick is a bit set.
"""

from numba.cpython.unsafe.numbers import trailing_zeros

from ..jit import kernel_call, kernel_part
from .state import (
    CX_TICK_LIMIT,
    DUE_UNKNOWN,
    ERR_TICK_RANGE,
    EV_HEAP,
    EV_IDLE,
    EV_TICK,
    EV_WHEEL,
    NEVER,
    ST_CURRENT,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_ERROR_DETAIL,
    ST_HEAP_SIZE,
    ST_NEXT_DUE,
    ST_TICKS,
    ST_TIME,
    WHEEL_TICKS,
)

_MASK = WHEEL_TICKS - 1
_STATE_SHIFT = 2  # clock.entry holds the tick above this many bits of where the id waits (EV_*)
_STATE_BITS = (1 << _STATE_SHIFT) - 1


@kernel_part
def held_tick(stats, t):
    """t, which a context row or the clock is to hold: past CX_TICK_LIMIT the run stops with ERR_TICK_RANGE (unless
    it already stopped for another error) before the value could matter (MODEL.md, Time)."""
    if t > CX_TICK_LIMIT and stats[ST_ERROR] == 0:
        stats[ST_ERROR] = ERR_TICK_RANGE
        stats[ST_ERROR_CYCLE] = stats[ST_TIME]
        stats[ST_ERROR_DETAIL] = t
    return t


@kernel_part
def _entry(t, state):
    """clock.entry of an id due at tick t that waits in `state` (EV_*): the tick above the state's bits, so that
    scheduling reads and writes one array where the limit's clock does too (bench/SPEED.md, the stop of 28
    November, 04:44-07:44). Every tick scheduled comes from a context row, a packet's ready tick or an NP event,
    and each of those went through held_tick (or the traffic's check before the run), so t is at most
    CX_TICK_LIMIT and fits its word."""
    return (t << _STATE_SHIFT) | state


@kernel_part
def _unlink(clock, e):
    """Take id e out of its wheel bucket."""
    b = (clock.entry[e] >> _STATE_SHIFT) & _MASK  # its tick's bucket
    nxt = clock.next[e]
    prv = clock.prev[e]
    if prv < 0:
        clock.bucket[b] = nxt
        if nxt < 0:
            clock.bits[b >> 6] &= ~(1 << (b & 63))
    else:
        clock.next[prv] = nxt
    if nxt >= 0:
        clock.prev[nxt] = prv


@kernel_part
def _link(clock, e, t):
    b = t & _MASK
    head = clock.bucket[b]
    clock.next[e] = head
    clock.prev[e] = -1
    if head >= 0:
        clock.prev[head] = e
    else:
        clock.bits[b >> 6] |= 1 << (b & 63)
    clock.bucket[b] = e


@kernel_call
def _heap_push(clock, stats, t, e):
    i = stats[ST_HEAP_SIZE]
    if i == clock.heap_time.shape[0]:
        i = _heap_compact(clock, stats)
    stats[ST_HEAP_SIZE] = i + 1
    _sift_up(clock, i, t, e)


@kernel_part
def _sift_up(clock, i, t, e):
    """Place (t, e) at heap slot i or above, moving later entries down."""
    while i > 0:
        parent = (i - 1) >> 1
        if clock.heap_time[parent] <= t:
            break
        clock.heap_time[i] = clock.heap_time[parent]
        clock.heap_id[i] = clock.heap_id[parent]
        i = parent
    clock.heap_time[i] = t
    clock.heap_id[i] = e


@kernel_call
def _heap_pop(clock, stats):
    """Remove the earliest entry of the overflow heap."""
    n = stats[ST_HEAP_SIZE] - 1
    stats[ST_HEAP_SIZE] = n
    t = clock.heap_time[n]
    e = clock.heap_id[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and clock.heap_time[child + 1] < clock.heap_time[child]:
            child += 1
        if clock.heap_time[child] >= t:
            break
        clock.heap_time[i] = clock.heap_time[child]
        clock.heap_id[i] = clock.heap_id[child]
        i = child
    clock.heap_time[i] = t
    clock.heap_id[i] = e


@kernel_call
def _heap_compact(clock, stats):
    """Drop stale entries (ids rescheduled since) and rebuild the heap; returns its new size."""
    size = stats[ST_HEAP_SIZE]
    kept = 0
    for i in range(size):
        e = clock.heap_id[i]
        if clock.entry[e] == _entry(clock.heap_time[i], EV_HEAP):
            clock.entry[e] = _entry(clock.heap_time[i], EV_IDLE)  # re-pushed below, once
            clock.heap_time[kept] = clock.heap_time[i]
            clock.heap_id[kept] = e
            kept += 1
    for i in range(kept):
        e = clock.heap_id[i]
        clock.entry[e] = _entry(clock.heap_time[i], EV_HEAP)
        _sift_up(clock, i, clock.heap_time[i], e)
    stats[ST_HEAP_SIZE] = kept
    return stats[ST_HEAP_SIZE]


@kernel_part
def schedule(clock, stats, e, t):
    """Id e is next due at tick t (NEVER: not at all). Replaces whatever it was due at before."""
    state = clock.entry[e] & _STATE_BITS
    if state == EV_WHEEL:
        _unlink(clock, e)
    elif state == EV_TICK:
        _clear_due(clock, e)
        if stats[ST_NEXT_DUE] == e:
            stats[ST_NEXT_DUE] = DUE_UNKNOWN
    # an EV_HEAP entry is left in place and recognised as stale when it comes up
    if t >= NEVER:
        clock.entry[e] = EV_IDLE
        return
    now = stats[ST_TIME]
    if t < now or (t == now and e <= stats[ST_CURRENT]):
        t = now + 1
    if t == now:
        _set_due(clock, e)
        clock.entry[e] = _entry(t, EV_TICK)
        following = stats[ST_NEXT_DUE]
        if following == -1 or e < following:  # e comes after the current id: it is the next if it is the first
            stats[ST_NEXT_DUE] = e
    elif t - now < WHEEL_TICKS:
        _link(clock, e, t)
        clock.entry[e] = _entry(t, EV_WHEEL)
    else:
        _heap_push(clock, stats, t, e)
        clock.entry[e] = _entry(t, EV_HEAP)


@kernel_part
def _set_due(clock, e):
    w = e >> 6
    clock.due[w] |= 1 << (e & 63)
    clock.due_words[w >> 6] |= 1 << (w & 63)


@kernel_part
def _clear_due(clock, e):
    w = e >> 6
    clock.due[w] &= ~(1 << (e & 63))
    if clock.due[w] == 0:
        clock.due_words[w >> 6] &= ~(1 << (w & 63))


@kernel_part
def next_wheel_tick(clock, stats):
    """The next tick after the current one with work in the wheel or the heap; NEVER if none.

    Every id in the wheel is due within WHEEL_TICKS after the current tick (later ones wait in the heap),
    so the first marked bucket after the current one, going round once, is the next tick with work.
    """
    while stats[ST_HEAP_SIZE] > 0:
        e = clock.heap_id[0]
        if clock.entry[e] == _entry(clock.heap_time[0], EV_HEAP):
            break
        _heap_pop(clock, stats)  # stale: rescheduled since
    best = clock.heap_time[0] if stats[ST_HEAP_SIZE] > 0 else NEVER
    now = stats[ST_TIME]
    start = (now + 1) & _MASK
    words = WHEEL_TICKS >> 6
    first = start >> 6
    low = start & 63
    for k in range(words + 1):
        w = (first + k) & (words - 1)
        bits = clock.bits[w]
        if k == 0:
            bits &= -1 << low
        elif k == words:
            bits &= ~(-1 << low)
        if bits != 0:
            b = (w << 6) + trailing_zeros(bits)
            return min(now + 1 + ((b - start) & _MASK), best)
    return best


@kernel_part
def begin_tick(clock, stats, t):
    """Make t the current tick: bring heap entries within the wheel's span onto it, then mark the ids due
    at t."""
    stats[ST_TIME] = t
    stats[ST_TICKS] += 1
    while stats[ST_HEAP_SIZE] > 0 and clock.heap_time[0] - t < WHEEL_TICKS:
        due = clock.heap_time[0]
        e = clock.heap_id[0]
        _heap_pop(clock, stats)
        if clock.entry[e] == _entry(due, EV_HEAP):
            _link(clock, e, due)
            clock.entry[e] = _entry(due, EV_WHEEL)
    b = t & _MASK
    e = clock.bucket[b]
    while e >= 0:
        _set_due(clock, e)
        clock.entry[e] = _entry(t, EV_TICK)
        e = clock.next[e]
    clock.bucket[b] = -1
    clock.bits[b >> 6] &= ~(1 << (b & 63))
    stats[ST_CURRENT] = -1
    stats[ST_NEXT_DUE] = DUE_UNKNOWN


@kernel_part
def peek_due(clock, stats):
    """The next id due in the current tick, without taking it; -1 when the tick is done. Every id still
    marked comes after the one being processed (an earlier one scheduled now goes to the next tick)."""
    if stats[ST_NEXT_DUE] == DUE_UNKNOWN:
        return look_ahead(clock, stats)
    return stats[ST_NEXT_DUE]


@kernel_part
def look_ahead(clock, stats):
    """The id due after the current one in this tick (-1: none), remembered for peek_due."""
    following = due_after(clock, stats[ST_CURRENT])
    stats[ST_NEXT_DUE] = following
    return following


@kernel_part
def due_after(clock, e):
    """The first id marked due in the current tick after id e, the one being processed (-1: none yet), or -1.
    Every id marked comes after e (peek_due), so the bitmap is read from e's summary word on, unmasked."""
    for s in range((e + 1) >> 12, clock.due_words.shape[0]):
        words = clock.due_words[s]
        if words != 0:
            w = (s << 6) + trailing_zeros(words)
            return (w << 6) + trailing_zeros(clock.due[w])
    return -1


@kernel_part
def take_due(clock, stats, e):
    """Take id e, which peek_due returned: it is no longer due anywhere until it is scheduled again."""
    _clear_due(clock, e)
    clock.entry[e] = EV_IDLE
    stats[ST_CURRENT] = e
    stats[ST_NEXT_DUE] = DUE_UNKNOWN


@kernel_part
def due_tick(clock, e):
    """The tick id e is due at; NEVER if none."""
    entry = clock.entry[e]
    return NEVER if entry & _STATE_BITS == EV_IDLE else entry >> _STATE_SHIFT
