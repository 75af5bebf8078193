"""The NP program that runs a send plan (harts/np/send_plan.py): what every NP of papers 002-004's broadcasts
does, with the plan as its data.

An NP sends a plan's send when what it waits for happens at that NP: the broadcast's start (an initiation
at the source, whose argument is the send's index), its copy of the parent send (EVENT_DELIVERED), its own
parent send's last flit leaving (EVENT_SENT), or its own parent send reaching its destination's NP
(EVENT_ARRIVED). Every packet carries its send's index in the header field `send`, so the NP that gets a copy
knows which sends wait for it. The plan stays the functional model the run is held against
(harts/broadcasts/plans.py): the kernel decides which copies really arrive, when, and whether anything
blocks or is lost to a fault.

``system.params``: [sends, segment slots], then per send [sender, trigger, parent, destination, length in
bytes, delay, notify, segments used, (port, hops, code) x slots], then the children of every send in plan
order (CSR: start offsets, then the child indices). A send's delay (cycles from what it waits for to its
joining the NP's queue) is 0 in every plan; the reference tests use others.
"""

from __future__ import annotations

import numpy as np

from .program import (
    E_ARGUMENT,
    E_KIND,
    E_NODE,
    EVENT_ARRIVED,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    EVENT_SENT,
    MAX_SENDS,
    NOTIFY_ARRIVED,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    ROUTE_DESTINATION,
    ROUTE_SEGMENTS,
    S_DELAY,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
    set_segment,
)
from .send_plan import (
    TRIGGER_COPY,
    TRIGGER_DELIVERED,
    TRIGGER_SENT,
    TRIGGER_START,
    SendPlan,
)

SEND = 0  # the program's one header field: the index of the packet's send in the plan
FIELDS = ("send",)
HEAD = 2  # words before the first send
SENDER, TRIGGER, PARENT, DESTINATION, LENGTH, DELAY, NOTIFY, SEGMENTS = range(8)
FIXED = 8  # words of a send before its segments
NOTIFY_OF = {TRIGGER_COPY: NOTIFY_DELIVERED, TRIGGER_SENT: NOTIFY_SENT, TRIGGER_DELIVERED: NOTIFY_ARRIVED}


@procedure_part
def _send(sends, row, system, s):
    """Send s of the plan as row `row` of the sends."""
    params = system.params
    slots = params[1]
    base = HEAD + s * (FIXED + 3 * slots)
    used = params[base + SEGMENTS]
    route = ROUTE_SEGMENTS if used > 0 else ROUTE_DESTINATION
    first_port = params[base + FIXED] if used > 0 else 0
    send_packet(sends, row, route, first_port, params[base + DESTINATION], params[base + LENGTH],
                params[base + NOTIFY])
    sends[row, S_DELAY] = params[base + DELAY]
    set_field(sends, row, system, SEND, s)
    for k in range(used):
        at = base + FIXED + 3 * k
        set_segment(sends, row, system, k, params[at], params[at + 1], params[at + 2])
    return row + 1


def _run(event, state, sends, system):
    params = system.params
    kind = event[E_KIND]
    if kind == EVENT_INITIATE:
        return _send(sends, 0, system, event[E_ARGUMENT])
    if kind == EVENT_DELIVERED:
        trigger = TRIGGER_COPY
    elif kind == EVENT_SENT:
        trigger = TRIGGER_SENT
    elif kind == EVENT_ARRIVED:
        trigger = TRIGGER_DELIVERED
    else:
        return 0
    n = params[0]
    stride = FIXED + 3 * params[1]
    parent = header_field(event, system, SEND)
    node = event[E_NODE]
    starts = HEAD + n * stride
    children = starts + n + 1
    count = 0
    for k in range(params[starts + parent], params[starts + parent + 1]):
        child = params[children + k]
        base = HEAD + child * stride
        if params[base + TRIGGER] == trigger and params[base + SENDER] == node:
            count = _send(sends, count, system, child)
    return count


PROCEDURE = procedure(_run)


def plan_program(plan: SendPlan, length_bytes: int, segment_slots: int) -> Program:
    """The NP program running `plan`, every send `length_bytes` long and sent the moment what it waits for
    happens, on a microprogram whose header has `segment_slots` segments."""
    return sends_program(plan.algorithm, plan.sends, [length_bytes] * len(plan.sends), [0] * len(plan.sends),
                         segment_slots)


def sends_program(name: str, sends, lengths_bytes, delays, segment_slots: int) -> Program:
    """The NP program of sends (harts.np.send_plan.Send) with their own lengths and delays. Raises ValueError if
    a send's route needs more segments than the header holds, or if more sends wait for one event at one node
    than a procedure may return."""
    n = len(sends)
    stride = FIXED + 3 * segment_slots
    children: list[list[int]] = [[] for _ in range(n)]
    waiting: dict[tuple[int, int, int], int] = {}
    for s, send in enumerate(sends):
        if len(send.segments) > segment_slots:
            raise ValueError(f"send {s} of {name} has {len(send.segments)} route segments; the microprogram's "
                             f"header holds {segment_slots}")
        if send.trigger != TRIGGER_START:
            children[send.parent].append(s)
            key = (send.parent, send.trigger, send.sender)
            waiting[key] = waiting.get(key, 0) + 1
            if waiting[key] > MAX_SENDS:
                raise ValueError(f"{name}: more than {MAX_SENDS} sends of node {send.sender} wait for one event of "
                                 f"send {send.parent}")
    total = sum(len(c) for c in children)
    params = np.zeros(HEAD + n * stride + n + 1 + total, np.int64)
    params[:HEAD] = (n, segment_slots)
    for s, send in enumerate(sends):
        base = HEAD + s * stride
        notify = 0
        for child in children[s]:
            notify |= NOTIFY_OF[sends[child].trigger]
        params[base:base + FIXED] = (send.sender, send.trigger, send.parent, send.destination, lengths_bytes[s],
                                     delays[s], notify, len(send.segments))
        for k, segment in enumerate(send.segments):
            params[base + FIXED + 3 * k: base + FIXED + 3 * k + 3] = segment
    starts = HEAD + n * stride
    params[starts:starts + n + 1] = np.cumsum([0] + [len(c) for c in children])
    params[starts + n + 1:] = [child for c in children for child in c]
    return Program(name=f"sends of {name}", description=f"sends the sends of {name} as their triggers happen",
                   procedure=PROCEDURE, fields=FIELDS, parameters=lambda topology: params)


def start_traffic(sends, starts):
    """The initiations that start the sends that wait for nothing: send s at its sender at cycle starts[s]."""
    from ..machine.traffic import initiations

    first = [s for s, send in enumerate(sends) if send.trigger == TRIGGER_START]
    return initiations([starts[s] for s in first], [sends[s].sender for s in first], first, 0)
