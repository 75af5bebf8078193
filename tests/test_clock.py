"""The timing wheel against an obviously correct clock: a dict of due ticks, scanned in full.

Both are driven by the same pre-drawn plan: whenever an id runs, it reschedules a few ids (itself or
others) at random offsets: in this very tick (before or after itself in the order), in the next ticks,
far beyond the wheel's span (so through the overflow heap), or never. The documented order must come
out of both: ticks in increasing order; within a tick, ids in increasing order; an id scheduled during a
tick for that tick runs in it only if it comes after the one running, else in the next tick. After most ids
run, the next one is looked up ahead (as the run loop does), so the id remembered for the next peek must be kept
right while the plan marks and unmarks ids.
"""

import numpy as np
import pytest
from numba import njit

from harts.controller import state as S
from harts.controller.clock import (
    begin_tick,
    due_after,
    look_ahead,
    next_wheel_tick,
    peek_due,
    schedule,
    take_due,
)
from harts.controller.divider import MAX_DIVIDEND, node_divider
from harts.controller.flits import state as FS

IDS = 97
STEPS = 20_000


@njit
def _wheel(clock, stats, plan_ids, plan_offsets, first, out):
    for k in range(first.shape[0]):
        schedule(clock, stats, k, first[k])
    begin_tick(clock, stats, 0)
    step = 0
    n = 0
    while n < out.shape[0]:
        e = peek_due(clock, stats)
        if e < 0:
            t = next_wheel_tick(clock, stats)
            if t == S.NEVER:
                break
            begin_tick(clock, stats, t)
            continue
        take_due(clock, stats, e)
        if n % 3 != 0:
            look_ahead(clock, stats)  # as the run loop does: the id it finds is remembered for peek_due
        out[n, 0] = stats[S.ST_TIME]
        out[n, 1] = e
        n += 1
        for _ in range(3):
            offset = plan_offsets[step % plan_offsets.shape[0]]
            other = plan_ids[step % plan_ids.shape[0]]
            step += 1
            schedule(clock, stats, other, S.NEVER if offset < 0 else stats[S.ST_TIME] + offset)
    return n


def _reference(plan_ids, plan_offsets, first, steps):
    due = {k: int(t) for k, t in enumerate(first)}
    out = []
    now, current, step = 0, -1, 0
    while len(out) < steps:
        candidates = [e for e, t in due.items() if t == now and e > current]
        if not candidates:
            if not due:
                break
            now, current = min(due.values()), -1
            continue
        e = min(candidates)
        del due[e]
        current = e
        out.append((now, e))
        for _ in range(3):
            offset = int(plan_offsets[step % len(plan_offsets)])
            other = int(plan_ids[step % len(plan_ids)])
            step += 1
            due.pop(other, None)
            if offset >= 0:
                t = now + offset
                if t == now and other <= current:
                    t = now + 1  # signalled in this tick to a part that has already run: seen next tick
                due[other] = t
    return np.array(out, dtype=np.int64).reshape(-1, 2)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_timing_wheel_runs_ids_in_the_documented_order(seed):
    rng = np.random.default_rng(seed)
    plan_ids = rng.integers(0, IDS, size=4096)
    # mostly a few ticks ahead; some this tick, some a wheel span or more ahead (the heap), some never
    choices = np.array([0, 0, 1, 2, 5, 6, 30, 200, S.WHEEL_TICKS - 1, S.WHEEL_TICKS, 3 * S.WHEEL_TICKS + 7, -1])
    plan_offsets = choices[rng.integers(0, len(choices), size=4096)]
    first = rng.integers(0, 50, size=IDS)
    clock = S.empty_clock(IDS // 13 + 1, 12)
    stats = np.zeros(S.ST_ROWS, dtype=np.int64)
    stats[S.ST_CURRENT] = -1
    out = np.zeros((STEPS, 2), dtype=np.int64)
    n = _wheel(clock, stats, plan_ids, plan_offsets, first, out)
    expected = _reference(plan_ids, plan_offsets, first, STEPS)
    assert n == len(expected) == STEPS
    assert np.array_equal(out[:n], expected)


@njit
def _walks_one_tick(clock, stats, marked, added, out):
    """Mark `marked` in tick 0 and take the ids due as the run loop does; after taking the k-th, schedule
    added[k] for tick 0 as well (-1: nothing). out[k + 1]: due_after of the k-th id taken, asked then, and the
    id peek_due gives next (-1: the tick is over); out[0, 1]: the first id peek_due gives."""
    begin_tick(clock, stats, 0)
    for e in marked:
        schedule(clock, stats, e, 0)
    out[0, 1] = peek_due(clock, stats)
    k = 0
    while out[k, 1] >= 0:
        e = out[k, 1]
        take_due(clock, stats, e)
        if added[k] >= 0:
            schedule(clock, stats, added[k], 0)
        out[k + 1, 0] = due_after(clock, e)
        out[k + 1, 1] = peek_due(clock, stats)
        k += 1
    return k


@pytest.mark.parametrize("seed", [1, 2])
def test_the_look_ahead_finds_the_next_id_due_in_the_tick(seed):
    """due_after, which the run loop asks for the id due after the one it has just taken, against a sorted list:
    ids marked sparsely over more than one summary word (4,096 ids each), with a stretch of empty words across
    a summary word, and ids scheduled for the tick while it runs, both after the one taken (due in this tick)
    and before it (due in the next). due_after may assume that every id marked comes after the one taken."""
    rng = np.random.default_rng(seed)
    clock = S.empty_clock(1_000, 12)  # 13,000 ids: four summary words
    ids = clock.entry.shape[0]
    marked = np.unique(np.concatenate([rng.choice(ids, 60, replace=False), [63, 64, 4095, 4096, ids - 1]]))
    marked = marked[(marked < 5_000) | (marked > 9_000)]  # no id marked over 62 bitmap words, across a summary word
    added = np.where(rng.random(ids) < 0.5, rng.integers(0, ids, ids), -1)
    stats = np.zeros(S.ST_ROWS, dtype=np.int64)
    out = np.full((ids + 1, 2), -2, dtype=np.int64)
    taken = _walks_one_tick(clock, stats, marked, added, out)
    due = sorted(int(m) for m in marked)
    expected = [[-2, due[0]]]
    for k in range(taken):
        e = due.pop(0)
        assert e == expected[-1][1]
        if added[k] > e and added[k] not in due:
            due = sorted(due + [int(added[k])])
        following = due[0] if due else -1
        expected.append([following, following])
    assert taken > len(marked)  # some ids scheduled while the tick ran came after the one taken
    assert out[:taken + 1].tolist() == expected


@pytest.mark.parametrize("per_node", [2, 3, 7, 8, 11, 13, 17, 64, 100, 1000])
def test_a_numbers_node_is_found_by_a_multiply_for_every_number_a_run_may_have(per_node):
    """node_divider finds the node of an event id (ids per node: a node's contexts and its NP's) and of a flit input
    (per node: its link VCs and injection contexts; 11 for the 2-D grids' 4 ports, 2 VCs and one NP channel)."""
    multiplier, shift = node_divider(per_node)
    assert S.MAX_EVENT_IDS <= MAX_DIVIDEND and FS.KEY_SPAN <= MAX_DIVIDEND  # the numbers the kernels divide
    assert multiplier * (MAX_DIVIDEND - 1) < 2**63  # no int64 overflow in the kernel's product
    # every residue near the ends of the range and near the multiples of 2^k, where a rounding error shows first
    edges = [0, MAX_DIVIDEND - 1] + [2**k for k in range(1, 31)]
    numbers = sorted({e + d for e in edges for d in range(-2 * per_node, 2 * per_node) if 0 <= e + d < MAX_DIVIDEND})
    numbers += list(np.random.default_rng(per_node).integers(0, MAX_DIVIDEND, 20_000))
    assert [(int(e) * multiplier) >> shift for e in numbers] == [int(e) // per_node for e in numbers]
