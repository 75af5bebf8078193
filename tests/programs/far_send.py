"""An NP program for the tests: at its initiation a node sends a unicast to node 1 that is to reach its BMU
system.params[0] ticks later (2^61: past the cut-through kernel's last tick, 2^31 - 1)."""

import numpy as np

from harts.np.program import E_KIND, E_LENGTH, EVENT_INITIATE, ROUTE_DESTINATION, S_DELAY, Program, procedure, \
    send_packet


def _run(event, state, sends, system):
    if event[E_KIND] == EVENT_INITIATE:
        rows = send_packet(sends, 0, ROUTE_DESTINATION, -1, 1, event[E_LENGTH], 0)
        sends[0, S_DELAY] = system.params[0]
        return rows
    return 0


PROGRAM = Program(name="far_send", description="test program: a send delayed 2^61 ticks", procedure=procedure(_run),
                  state_words=1, parameters=lambda topology: np.array([2**61]))
