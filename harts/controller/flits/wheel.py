"""When contexts run. The timing wheel: which contexts have an instruction due in each of the next WHEEL cycles,
as one bitmap over the inputs per cycle, so that a cycle's contexts come out in input order (the order MODEL.md
runs them in) without sorting, and scheduling one is setting a bit. And the contexts parked on an output until
one of its VCs is freed (a refused 'else: retry' forward), woken when they would have tried again.

A cycle's bitmap has two levels (a bit per input, and a bit per non-empty word of those), so that taking the
lowest input costs two bit scans however large the network. A context due WHEEL cycles or more ahead waits in
the binary heap (heaps.py; keys due * KEY_SPAN + input) and joins its cycle's bitmap when that cycle comes.

A bit may be stale: the context was rescheduled, or taken down, after it was set. The run loop skips a context
whose state is not due in the cycle it comes out in, as it did for the heap's stale keys.
"""

from numba.cpython.unsafe.numbers import trailing_zeros

from ...jit import kernel_part
from .heaps import pop, push
from .state import (
    CX_DUE,
    CX_PARK_NEXT,
    CX_PARKED,
    CX_PC,
    CX_RUN,
    CX_STATE,
    KEY_SPAN,
    NEVER,
    PT_LAST_TAKER,
    PT_PARKED,
    PT_WOKEN,
    PT_WOKEN_AT,
    ST_HEAP,
    ST_INSTRUCTIONS,
    ST_PARKED,
    ST_RAN_UP_TO,
    ST_TIME,
    ST_WHEEL_FROM,
    ST_WHEEL_SLOTS,
    ST_WHEELED,
    VI_REUSABLE_AT,
    VI_WAITS_ON,
    VI_WANTS,
    WANT_SHIFT,
    WANTS_WHOLE_PORT,
    WHEEL,
    held_cycle,
)

_MASK = WHEEL - 1


def wheel_words(inputs: int) -> tuple[int, int]:
    """Words of a cycle's input bitmap and of its summary."""
    words = (inputs + 63) >> 6
    return words, (words + 63) >> 6


@kernel_part
def _mark(run, slot, i):
    """Set input i's bit in the bitmap of wheel slot `slot`."""
    words = run.wheel_bits.shape[0] // WHEEL
    tops = run.wheel_top.shape[0] // WHEEL
    w = slot * words + (i >> 6)
    bit = 1 << (i & 63)
    if run.wheel_bits[w] & bit == 0:
        run.stats[ST_WHEELED] += 1
        run.wheel_bits[w] |= bit
        run.wheel_top[slot * tops + ((i >> 6) >> 6)] |= 1 << ((i >> 6) & 63)
        run.stats[ST_WHEEL_SLOTS] |= 1 << slot


@kernel_part
def schedule(run, inputs, i, due):
    """Context i runs its next instruction at cycle `due`. The wheel takes cycles from ST_WHEEL_FROM (the
    current cycle until its contexts have run, then the next) to less than WHEEL ahead; other cycles wait in the
    heap (an earlier one is stale by the time the heap gives it back, as before the wheel)."""
    inputs[i, CX_STATE] = CX_RUN
    inputs[i, CX_DUE] = held_cycle(run.stats, due)
    stats = run.stats
    if stats[ST_WHEEL_FROM] <= due < stats[ST_TIME] + WHEEL:
        _mark(run, due & _MASK, i)
    else:
        push(run.heap, stats, ST_HEAP, due * KEY_SPAN + i)


@kernel_part
def take_from_heap(run, t):
    """The heap's contexts due at t (or, stale, before) join cycle t's bitmap."""
    stats = run.stats
    while stats[ST_HEAP] > 0 and run.heap[0] // KEY_SPAN <= t:
        _mark(run, t & _MASK, pop(run.heap, stats, ST_HEAP) % KEY_SPAN)


@kernel_part
def next_due(run, t):
    """The lowest input in cycle t's bitmap, taken out of it; -1 when it is empty. Scanned from the first word each
    time: a context may be scheduled for t, below the last one taken, while t's contexts run."""
    stats = run.stats
    slot = t & _MASK
    if stats[ST_WHEEL_SLOTS] & (1 << slot) == 0:
        return -1
    words = run.wheel_bits.shape[0] // WHEEL
    tops = run.wheel_top.shape[0] // WHEEL
    for s in range(slot * tops, slot * tops + tops):
        top = run.wheel_top[s]
        if top != 0:
            word = ((s - slot * tops) << 6) + trailing_zeros(top)
            w = slot * words + word
            bits = run.wheel_bits[w]
            i = (word << 6) + trailing_zeros(bits)
            bits &= bits - 1
            run.wheel_bits[w] = bits
            if bits == 0:
                run.wheel_top[s] = top & (top - 1)
            stats[ST_WHEELED] -= 1
            return i
    stats[ST_WHEEL_SLOTS] &= ~(1 << slot)
    return -1


@kernel_part
def next_wheel_cycle(run, t, never):
    """The first cycle after t with a context in the wheel (t's own contexts have run); `never` if none."""
    slots = run.stats[ST_WHEEL_SLOTS]
    if slots == 0:
        return never
    r = (t + 1) & _MASK
    turned = ((slots >> r) | (slots << (WHEEL - r))) & ((1 << WHEEL) - 1)
    return t + 1 + trailing_zeros(turned)


@kernel_part
def turn(switch, row, i):
    """flow.vc_arbitration round_robin: input i's place in the turn of output row `row`, counted from the input
    after the row's last taker; -1 (no input) comes after all."""
    span = switch.inputs.shape[0]
    if i < 0:
        return span
    return (i - switch.ports[row, PT_LAST_TAKER] - 1) % span


@kernel_part
def designate(switch, row, i, ready, c):
    """flow.vc_arbitration round_robin: input i will try at cycle `ready` for a VC of output row `row` that cannot be
    taken before then. It becomes the input due to take it (PT_WOKEN), unless one due at a cycle not yet past comes
    before it in turn."""
    ports = switch.ports
    due = ports[row, PT_WOKEN]
    if due < 0 or c > ports[row, PT_WOKEN_AT] or turn(switch, row, i) < turn(switch, row, due):
        ports[row, PT_WOKEN] = i
        ports[row, PT_WOKEN_AT] = ready


@kernel_part
def park(switch, run, i, pc, c, round_robin):
    """Context i's forward at pc was refused at cycle c and says 'else: retry': rather than run it again every
    cycle, the context waits on the output it was refused at (VI_WAITS_ON) until a VC of that port is freed; or,
    when what it wants is free but not yet reusable (VI_REUSABLE_AT), it retries then."""
    inputs = switch.inputs
    inputs[i, CX_PC] = pc
    row = switch.visits[i, VI_WAITS_ON]
    ready = switch.visits[i, VI_REUSABLE_AT]
    if ready < NEVER:
        run.stats[ST_INSTRUCTIONS] += ready - 1 - c  # the retries before it, each refused
        schedule(run, inputs, i, ready)
        if round_robin:  # it asks before the VC can be taken, as a request to BookSim2's VC allocator would
            designate(switch, row, i, ready, c)
        return
    inputs[i, CX_STATE] = CX_PARKED
    inputs[i, CX_DUE] = held_cycle(run.stats, c)
    inputs[i, CX_PARK_NEXT] = switch.ports[row, PT_PARKED]
    switch.ports[row, PT_PARKED] = i
    run.stats[ST_PARKED] += 1


@kernel_part
def _wake(run, inputs, i, c, ready):
    """Parked context i runs its forward again when it would have retried it next: at c if its input comes later
    in this cycle's order (contexts run in input order), else at c + 1; but not before cycle `ready`, when the VC
    it waits for can be taken. The retries it was spared, each refused, are counted as executed."""
    stats = run.stats
    due = max(c if i > stats[ST_RAN_UP_TO] else c + 1, ready)
    stats[ST_INSTRUCTIONS] += due - 1 - inputs[i, CX_DUE]
    stats[ST_PARKED] -= 1
    schedule(run, inputs, i, due)


@kernel_part
def unpark(switch, run, row, c, ready):
    """flow.vc_arbitration input_order: a VC of output row `row` was freed at cycle c, to be taken from cycle
    `ready`, and every context parked on it tries again then; the lowest input wins."""
    inputs = switch.inputs
    i = switch.ports[row, PT_PARKED]
    switch.ports[row, PT_PARKED] = -1
    while i >= 0:
        following = inputs[i, CX_PARK_NEXT]
        _wake(run, inputs, i, c, ready)
        i = following


@kernel_part
def wake_next(switch, run, row, base, vcs, c):
    """flow.vc_arbitration round_robin: at cycle c a VC of output row `row` (its VCs owner[base:base + vcs]) is
    free, and of the contexts parked on it that could take a free one, the first in round-robin order from the
    input after the port's last taker tries again. The others stay parked: the retries they are spared would be
    refused, because a VC freed or left free wakes one more (release_output, _claim)."""
    inputs = switch.inputs
    ports = switch.ports
    free = 0  # bit v: VC v is free (owned by no input, perhaps not yet reusable)
    for vc in range(vcs):
        if switch.owner[base + vc] < 0:
            free |= 1 << vc
    if free == 0:
        return
    best = -1
    best_key = inputs.shape[0]
    before_best = -1
    before = -1
    i = ports[row, PT_PARKED]
    while i >= 0:
        wants = switch.visits[i, VI_WANTS]
        low = wants & ((1 << WANT_SHIFT) - 1)
        high = (wants >> WANT_SHIFT) & ((1 << WANT_SHIFT) - 1)
        usable = ((1 << high) - 1) & ~((1 << low) - 1)
        if wants & WANTS_WHOLE_PORT != 0:
            can = free & usable == usable
        else:
            can = free & usable != 0
        key = turn(switch, row, i)  # the inputs after the last taker first, then round from the lowest
        if can and key < best_key:
            best_key = key
            best = i
            before_best = before
        before = i
        i = inputs[i, CX_PARK_NEXT]
    if best < 0:
        return
    if before_best < 0:
        ports[row, PT_PARKED] = inputs[best, CX_PARK_NEXT]
    else:
        inputs[before_best, CX_PARK_NEXT] = inputs[best, CX_PARK_NEXT]
    # the first cycle it can take what it wants of the free VCs: one of them, or (a circuit) all
    wants = switch.visits[best, VI_WANTS]
    whole = wants & WANTS_WHOLE_PORT != 0
    ready = 0 if whole else NEVER
    for vc in range(wants & ((1 << WANT_SHIFT) - 1), (wants >> WANT_SHIFT) & ((1 << WANT_SHIFT) - 1)):
        if free & (1 << vc) != 0:
            ready = max(ready, switch.reusable[base + vc]) if whole else min(ready, switch.reusable[base + vc])
    _wake(run, inputs, best, c, ready)
    designate(switch, row, best, ready, c)
