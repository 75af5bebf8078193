"""An NP program written for the tests, outside the package: end-to-end acknowledgments (NOTIFY_ARRIVED).

Initiation (argument: a destination): send a unicast of E_LENGTH bytes to it, naming it in the header field
'to', and ask to hear when it is in the destination's NP. On that arrival notice, send a second packet to
the destination the notice's header names, without asking.
State per node: [arrival notices heard, tick of the last one, the destination it named].
"""

from harts.np.program import (
    E_ARGUMENT,
    E_KIND,
    E_LENGTH,
    E_TICK,
    EVENT_ARRIVED,
    EVENT_INITIATE,
    NOTIFY_ARRIVED,
    ROUTE_DESTINATION,
    Program,
    header_field,
    procedure,
    send_packet,
    set_field,
)

TO = 0


def _run(event, state, sends, system):
    kind = event[E_KIND]
    if kind == EVENT_INITIATE:
        send_packet(sends, 0, ROUTE_DESTINATION, -1, event[E_ARGUMENT], event[E_LENGTH], NOTIFY_ARRIVED)
        set_field(sends, 0, system, TO, event[E_ARGUMENT])
        return 1
    if kind == EVENT_ARRIVED:
        destination = header_field(event, system, TO)
        state[0] += 1
        state[1] = event[E_TICK]
        state[2] = destination
        return send_packet(sends, 0, ROUTE_DESTINATION, -1, destination, event[E_LENGTH], 0)
    return 0


PROGRAM = Program(name="acknowledged", description="test program: end-to-end acknowledgments",
                  procedure=procedure(_run), fields=("to",), state_words=3)
