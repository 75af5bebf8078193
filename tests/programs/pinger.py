"""An NP program written for the flit-level tests, outside the package: every event an NP program can see.

Initiation (argument a): send a unicast of E_LENGTH bytes to node a, asking to hear when it has left
(EVENT_SENT) and when it is in the destination's NP (EVENT_ARRIVED), and set a timer `delay` cycles ahead
(system.params[0]) with value 5. A node that gets the unicast (EVENT_DELIVERED) answers its sender with a
unicast of the same length. At a Byzantine 'bogus' node, EVENT_FORGE answers with a forged unicast to the
sender as well. State per node: [copies delivered, cycle of the last copy, cycle of the sent-notice, cycle of
the arrival notice, sum of the timer values that fired, cycle the timer fired].
"""

import numpy as np

from harts.np.program import (
    E_ARGUMENT,
    E_KIND,
    E_LENGTH,
    E_SENDER,
    E_TICK,
    EVENT_ARRIVED,
    EVENT_DELIVERED,
    EVENT_FORGE,
    EVENT_INITIATE,
    EVENT_SENT,
    EVENT_TIMER,
    NOTIFY_ARRIVED,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    ROUTE_DESTINATION,
    Program,
    procedure,
    send_packet,
    send_timer,
)


def _run(event, state, sends, system):
    kind = event[E_KIND]
    if kind == EVENT_INITIATE:
        send_packet(sends, 0, ROUTE_DESTINATION, -1, event[E_ARGUMENT], event[E_LENGTH],
                    NOTIFY_DELIVERED | NOTIFY_SENT | NOTIFY_ARRIVED)
        return send_timer(sends, 1, system.params[0], 5)
    if kind == EVENT_DELIVERED:
        state[0] += 1
        state[1] = event[E_TICK]
        return send_packet(sends, 0, ROUTE_DESTINATION, -1, event[E_SENDER], event[E_LENGTH], 0)
    if kind == EVENT_FORGE:
        return send_packet(sends, 0, ROUTE_DESTINATION, -1, event[E_SENDER], event[E_LENGTH], 0)
    if kind == EVENT_SENT:
        state[2] = event[E_TICK]
    elif kind == EVENT_ARRIVED:
        state[3] = event[E_TICK]
    elif kind == EVENT_TIMER:
        state[4] += event[E_ARGUMENT]
        state[5] = event[E_TICK]
    return 0


PROGRAM = Program(name="pinger", description="test program: unicasts answered, every notice, a timer",
                  procedure=procedure(_run), state_words=6, parameters=lambda topology: np.array([50]))
