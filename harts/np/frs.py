"""The NP program of Fraigniaud's all-to-all reliable broadcast FRS on the hypercube Q_m (paper 001, section
II and Table II): every node runs Ramanathan & Shin's broadcast at once, in lock step, store-and-forward,
merging what it holds into one message per link and step.

In step t (1..m+1), subtree i of every broadcast moves in direction (i + t - 1) mod m, so what a node sends
in direction delta is every packet of subtree i = delta - t + 1 it held after step t - 1: its own in step
1, 2^(t-2) packets in steps 2..m, and in step m + 1 one fewer, 2^(m-1) - 1, since the originator's own
packet is not returned. A node sends step t + 1 when its m messages of step t are in; the lengths add up
to N - 1 packets per link. The contents of a merged message are not modelled, only its length.
"""

import numpy as np

from .program import (
    E_KIND,
    E_LENGTH,
    E_NODE,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    NOTIFY_DELIVERED,
    ROUTE_DESTINATION,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
)

STEP = 0
FIELDS = ("step",)
# state: [packet length M, then arrivals per step 1..m+1]
STATE_WORDS = 1 + 17


@procedure_part
def _send_step(sends, system, node, step, unit):
    m = system.params[0]
    if step == 1:
        packets = 1
    elif step <= m:
        packets = 1 << (step - 2)
    else:
        packets = (1 << (m - 1)) - 1
    if packets <= 0:
        return 0
    for k in range(m):
        send_packet(sends, k, ROUTE_DESTINATION, -1, node ^ (1 << k), packets * unit, NOTIFY_DELIVERED)
        set_field(sends, k, system, STEP, step)
    return m


def _run(event, state, sends, system):
    kind = event[E_KIND]
    node = event[E_NODE]
    m = system.params[0]
    if kind == EVENT_INITIATE:
        state[0] = event[E_LENGTH]
        return _send_step(sends, system, node, 1, state[0])
    if kind != EVENT_DELIVERED:
        return 0
    step = header_field(event, system, STEP)
    state[step] += 1
    if state[step] == m and step <= m:
        return _send_step(sends, system, node, step + 1, state[0])
    return 0


def _parameters(topology) -> np.ndarray:
    if topology.kind != "hypercube" or int(topology.shape[0]) > STATE_WORDS - 2:
        raise ValueError(f"FRS runs on hypercubes up to Q_{STATE_WORDS - 2}, not on {topology.name}")
    return np.array([int(topology.shape[0])], dtype=np.int64)


PROGRAM = Program(
    name="frs",
    description="paper 001: Fraigniaud's store-and-forward all-to-all reliable broadcast (FRS), merged messages",
    procedure=procedure(_run),
    fields=FIELDS,
    state_words=STATE_WORDS,
    parameters=_parameters,
)
