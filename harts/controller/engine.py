"""The kernel: the run loop that takes due work from the clock, tick by tick, and hands it to the parts.

Within a tick, the traffic created in it reaches its NPs first, then the due event ids run in order
(clock.py). The loop returns to its caller to show progress (PR_PAUSE_AT), when a pool or log needs
room (PAUSE_ROOM: before any event that could overflow it, so no work is ever half done), when the
traffic table is used up and more follows (PAUSE_TRAFFIC), when everything has been delivered, or on
an error; calling it again resumes exactly where it stopped.
"""

from ..jit import kernel_entry, kernel_part, prefetch
from ..np.processor import np_inbox_length, np_inject, np_run
from .clock import begin_tick, look_ahead, next_wheel_tick, peek_due, take_due
from .observations import log_rows_free
from .receiver import proceed
from .records import TR_CREATE
from .state import (
    ERR_CYCLE_LIMIT,
    ERR_DEADLOCK,
    NEVER,
    PAUSE_NONE,
    PAUSE_ROOM,
    PAUSE_SLICE,
    PAUSE_TRAFFIC,
    PR_BUS_INTERFACES,
    PR_DEADLOCK_TICKS,
    PR_ID_NODE_MULTIPLIER,
    PR_ID_NODE_SHIFT,
    PR_LAST_TICK,
    PR_PAUSE_AT,
    PR_PORTS,
    PR_ROOM,
    PR_TRAFFIC_MORE,
    ST_DELIVERIES,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_EVENT_FREE_COUNT,
    ST_EVENTS,
    ST_FREE_COUNT,
    ST_HOP_ROWS,
    ST_LAST_PROGRESS,
    ST_LATEST,
    ST_LOGGED,
    ST_NEXT_TRAFFIC,
    ST_PAUSED,
    ST_STARTED,
    ST_TIME,
)


@kernel_part
def _room(logs):
    """(packet records and NP events, rows) the pools and the logs can still take, each the least of its kind."""
    stats = logs.stats
    return (min(stats[ST_FREE_COUNT], stats[ST_EVENT_FREE_COUNT]),
            log_rows_free(logs, ST_DELIVERIES, ST_LOGGED, ST_HOP_ROWS))


@kernel_part
def _room_for(logs, records, rows):
    """Whether the pools can take `records` more packet records and NP events, and the logs `rows` rows."""
    spare_records, spare_rows = _room(logs)
    return spare_records >= records and spare_rows >= rows


@kernel_part
def _sure_events(logs, room):
    """How many context events can run before the pools or logs could be short: each takes at most `room` records,
    NP events and rows of each log (the frees they make only add room)."""
    spare_records, spare_rows = _room(logs)
    return min(spare_records, spare_rows) // room


@kernel_part
def owner_of(params, e):
    """The context of event id e (clock.py's numbering), or -1 - v for the NP of node v."""
    v = (e * params[PR_ID_NODE_MULTIPLIER]) >> params[PR_ID_NODE_SHIFT]
    if e == v * (params[PR_PORTS] + params[PR_BUS_INTERFACES] + 1):
        return -1 - v
    return e - v - 1


@kernel_part
def _prefetch_next(machine, controller, clock, stats):
    """Ask for the context rows of the event due after the current one in this tick, which it reads first, and
    its node's links, which a forward reads to find the far end: on a large network they are misses, which the
    event running now overlaps (bench/SPEED.md, the stop of 16:31-19:31: asking one event further ahead, or for
    its packet row or transmitters too, was slower)."""
    following = look_ahead(clock, stats)
    if following < 0:
        return
    ci = owner_of(machine.params, following)
    if ci < 0:
        return
    prefetch(controller.ctx, ci, 0)
    v = following - ci - 1
    prefetch(machine.links, v, 0)


@kernel_entry
def run_kernel(offsets, procedure, machine, controller, packets, logs, clock, processor, traffic):
    """Simulate until the traffic and everything it caused has been delivered, or an error, or a pause
    (stats[ST_PAUSED] says why); calling again resumes."""
    params = machine.params
    stats = logs.stats
    room = params[PR_ROOM]
    n_traffic = traffic.shape[1]
    sure = 0  # context events that can run without checking for room (_sure_events)
    stats[ST_PAUSED] = PAUSE_NONE
    if stats[ST_STARTED] == 0:
        begin_tick(clock, stats, stats[ST_TIME])
        stats[ST_STARTED] = 1
    while True:
        c = stats[ST_TIME]
        i = stats[ST_NEXT_TRAFFIC]
        while i < n_traffic and traffic[TR_CREATE, i] <= c:
            if not _room_for(logs, room, room):
                stats[ST_PAUSED] = PAUSE_ROOM
                return
            np_inject(offsets, procedure, machine, controller, packets, logs, clock, processor, traffic, i, c)
            sure = 0
            i += 1
            stats[ST_NEXT_TRAFFIC] = i
            if stats[ST_ERROR] != 0:
                return
        while True:
            e = peek_due(clock, stats)
            if e < 0:
                break
            owner = owner_of(params, e)
            if owner < 0:
                # an NP may run a procedure for every event in its inbox now: make sure they all fit
                need = room * max(1, np_inbox_length(controller.node, processor.events, -1 - owner))
                if not _room_for(logs, need, room):
                    stats[ST_PAUSED] = PAUSE_ROOM
                    return
                sure = 0
            elif sure > 0:
                sure -= 1
            else:
                sure = _sure_events(logs, room) - 1
                if sure < 0:
                    stats[ST_PAUSED] = PAUSE_ROOM
                    return
            take_due(clock, stats, e)
            stats[ST_EVENTS] += 1
            _prefetch_next(machine, controller, clock, stats)
            if owner < 0:
                np_run(offsets, procedure, machine, controller, packets, logs, clock, processor, -1 - owner, c)
            else:
                proceed(machine, controller, packets, logs, clock, processor, owner, e - owner - 1, c)
            if stats[ST_ERROR] != 0:
                return
        if i >= n_traffic and params[PR_TRAFFIC_MORE] != 0:
            stats[ST_PAUSED] = PAUSE_TRAFFIC
            return
        following = next_wheel_tick(clock, stats)
        if i < n_traffic and traffic[TR_CREATE, i] < following:
            following = traffic[TR_CREATE, i]
        if following == NEVER:
            # the run ends with the last instruction, which may have run ahead of the clock
            stats[ST_TIME] = max(c, stats[ST_LATEST])
            return
        if c - stats[ST_LAST_PROGRESS] > params[PR_DEADLOCK_TICKS]:
            stats[ST_ERROR] = ERR_DEADLOCK
            stats[ST_ERROR_CYCLE] = c
            return
        if following > params[PR_LAST_TICK]:
            stats[ST_ERROR] = ERR_CYCLE_LIMIT
            stats[ST_ERROR_CYCLE] = c
            return
        if following > params[PR_PAUSE_AT]:
            stats[ST_TIME] = following
            stats[ST_STARTED] = 0
            stats[ST_PAUSED] = PAUSE_SLICE
            return
        begin_tick(clock, stats, following)


def compiled_kernel():
    """run_kernel compiled once (or loaded from numba's disk cache) with the topology's offsets function and
    the NP procedure as first-class function arguments, so every topology and NP program shares it."""
    if not run_kernel.signatures:
        run_kernel.compile(_signature())
        # Calls must convert the dispatchers they pass to the first-class function types compiled for,
        # not compile a kernel of their own for each.
        run_kernel.disable_compile()
    return run_kernel


def _signature():
    import numpy as np
    from numba import typeof, types

    from ..network.topology import OFFSETS_SIGNATURE
    from ..np.program import PROCEDURE_SIGNATURE
    from .records import Logs, Processor, System
    from .state import (
        CX_DTYPE,
        Controller,
        Machine,
        Packets,
        empty_clock,
    )

    one = np.zeros(1, np.int64)
    two = np.zeros((1, 1), np.int64)
    bundles = (Machine(two, one, two.astype(np.int32), one, one, one, two, two),
               Controller(two.astype(CX_DTYPE), one, two, two),
               Packets(two, two), Logs(one, two, two, two, two, two, one, two), empty_clock(1, 1),
               Processor(two, two, two, System(one, two, two, one, one)), two)
    return (types.FunctionType(OFFSETS_SIGNATURE), types.FunctionType(PROCEDURE_SIGNATURE),
            *(typeof(b) for b in bundles))
