"""An NP program for the tests: at its initiation a node sets a timer system.params[0] ticks ahead (2^61: past
the cut-through kernel's last tick, 2^31 - 1); state per node: [timers that fired]."""

import numpy as np

from harts.np.program import E_KIND, EVENT_INITIATE, EVENT_TIMER, Program, procedure, send_timer


def _run(event, state, sends, system):
    if event[E_KIND] == EVENT_INITIATE:
        return send_timer(sends, 0, system.params[0], 1)
    if event[E_KIND] == EVENT_TIMER:
        state[0] += 1
    return 0


PROGRAM = Program(name="far_timer", description="test program: a timer 2^61 ticks ahead", procedure=procedure(_run),
                  state_words=1, parameters=lambda topology: np.array([2**61]))
