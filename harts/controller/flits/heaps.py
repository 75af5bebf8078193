"""Binary min-heaps of the flit-level kernel: int64 keys (due * KEY_SPAN + id: the contexts', ordered by cycle,
then input; the NPs', by cycle, then node), and the births of sends that join their NP queue later, ordered
by cycle, then packet uid."""

from ...jit import kernel_call, kernel_part


@kernel_call
def push(heap, stats, count, key):
    n = stats[count]
    while n > 0:
        parent = (n - 1) >> 1
        if heap[parent] <= key:
            break
        heap[n] = heap[parent]
        n = parent
    heap[n] = key
    stats[count] += 1


@kernel_call
def pop(heap, stats, count):
    top = heap[0]
    n = stats[count] - 1
    stats[count] = n
    last = heap[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


@kernel_part
def _before(run, a, b):
    """Whether birth slot a comes before birth slot b."""
    return run.birth_cycle[a] < run.birth_cycle[b] or (run.birth_cycle[a] == run.birth_cycle[b]
                                                       and run.birth_uid[a] < run.birth_uid[b])


@kernel_part
def _move(run, to, frm):
    run.birth_cycle[to] = run.birth_cycle[frm]
    run.birth_uid[to] = run.birth_uid[frm]
    run.birth_record[to] = run.birth_record[frm]


@kernel_part
def push_birth(run, count, cycle, uid, record):
    """Record joins its NP queue at `cycle` (births of one cycle in uid order)."""
    stats = run.stats
    n = stats[count]
    # the new entry waits in slot n while it sifts up
    run.birth_cycle[n] = cycle
    run.birth_uid[n] = uid
    run.birth_record[n] = record
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(run, i, parent):
            break
        # swap i and parent through the free slot n + 1
        _move(run, n + 1, parent)
        _move(run, parent, i)
        _move(run, i, n + 1)
        i = parent
    stats[count] = n + 1


@kernel_part
def pop_birth(run, count):
    """The record of the earliest birth, taken out of the heap."""
    stats = run.stats
    top = run.birth_record[0]
    n = stats[count] - 1
    stats[count] = n
    if n == 0:
        return top
    _move(run, 0, n)
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _before(run, child + 1, child):
            child += 1
        if not _before(run, child, i):
            break
        _move(run, n, child)
        _move(run, child, i)
        _move(run, i, n)
        i = child
    return top
