"""An NP program written for the tests, outside the package: it needs no change to the kernel.

Initiation arguments:
  1: send a source-routed packet along an L-path: E_DISTANCE hops through port E_DIRECTION, then one hop
     through port (E_DIRECTION + 1) mod 4 (segment codes: pass on, then deliver a copy); ask to hear when
     it has left; and set a timer 600 ticks ahead with value 7.
  2: send a worm along route table 0 for E_DISTANCE hops (teed at every node).
On every delivered source-routed copy, the receiving NP answers its sender with a unicast by destination.
State per node: [copies delivered, sent-notices heard, sum of the timer values that fired].
"""

import numpy as np

from harts.np.program import (
    E_ARGUMENT,
    E_DIRECTION,
    E_DISTANCE,
    E_KIND,
    E_LENGTH,
    E_ROUTE,
    E_SENDER,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    EVENT_SENT,
    EVENT_TIMER,
    LAYOUT_TABLE_WORD,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    ROUTE_DESTINATION,
    ROUTE_SEGMENTS,
    ROUTE_TABLE,
    S_HEADER,
    Program,
    procedure,
    send_packet,
    send_timer,
    set_field,
    set_segment,
)

HOPS = 0
PASS = 2
DELIVER = 1


def _run(event, state, sends, system):
    kind = event[E_KIND]
    length = event[E_LENGTH]
    if kind == EVENT_INITIATE:
        direction = event[E_DIRECTION]
        if event[E_ARGUMENT] == 1:
            send_packet(sends, 0, ROUTE_SEGMENTS, direction, -1, length, NOTIFY_DELIVERED | NOTIFY_SENT)
            set_segment(sends, 0, system, 0, direction, event[E_DISTANCE], PASS)
            set_segment(sends, 0, system, 1, (direction + 1) % 4, 1, DELIVER)
            return send_timer(sends, 1, 600, 7)
        send_packet(sends, 0, ROUTE_TABLE, -1, -1, length, NOTIFY_DELIVERED)
        sends[0, S_HEADER + system.route[LAYOUT_TABLE_WORD]] = 0
        set_field(sends, 0, system, HOPS, event[E_DISTANCE])
        return 1
    if kind == EVENT_DELIVERED:
        state[0] += 1
        if event[E_ROUTE] == ROUTE_SEGMENTS:
            return send_packet(sends, 0, ROUTE_DESTINATION, -1, event[E_SENDER], length, NOTIFY_DELIVERED)
        return 0
    if kind == EVENT_SENT:
        state[1] += 1
    elif kind == EVENT_TIMER:
        state[2] += event[E_ARGUMENT]
    return 0


def _route_tables(topology):
    """Table 0: always port 0 (+x on a grid), a ring along x."""
    return np.zeros((1, topology.n_nodes), dtype=np.int64)


PROGRAM = Program(name="explorer", description="test program: every route kind, timers and sent-notices",
                  procedure=procedure(_run), fields=("hops",), state_words=3, route_tables=_route_tables)
