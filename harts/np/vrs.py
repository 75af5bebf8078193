"""The NP program of paper 001's VRS reliable broadcast on the hypercube Q_m (Ramanathan & Shin's RS
converted to cut-through, section V-A), with the microprogram microcode/vrs.yaml.

The source sends m chains, one per direction i. A chain started in step t of subtree i runs, one hop per
step, through directions (i + t - 1), ..., (i + m) mod m to step m + 1: every node on it gets a copy and
the packet cuts through (the node *forwards* it). A node that got its copy in step s also *redirects* it:
for every later step t = s + 2 .. m + 1 it starts a new chain (a store-and-forward step). A copy's step is
m + 1 minus the hops its chain has left. Chains whose first hop would return to the source are not sent
(the paper's optional Table I column 8). The functional model is harts/reference/rs.py.
"""

import numpy as np

from .program import (
    E_KIND,
    E_LENGTH,
    E_NODE,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    NOTIFY_DELIVERED,
    ROUTE_SEGMENTS,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
    set_segment,
)

HOPS = 0
FLAGS = 1
SUBTREE = 2
SOURCE = 3
FIELDS = ("hops", "flags", "subtree", "source")
MARKED = 1


@procedure_part
def _chain(sends, row, system, node, subtree, first_step, source, length):
    """A chain from step `first_step` of `subtree` to step m + 1; no row if its first hop reaches the source."""
    m = system.params[0]
    hops = m + 2 - first_step
    first = (subtree + first_step - 1) % m
    if node ^ (1 << first) == source:
        return row
    send_packet(sends, row, ROUTE_SEGMENTS, first, -1, length, NOTIFY_DELIVERED)
    for k in range(hops):
        set_segment(sends, row, system, k, (first + k) % m, 1, 0)
    set_field(sends, row, system, HOPS, hops)
    set_field(sends, row, system, SUBTREE, subtree)
    set_field(sends, row, system, SOURCE, source)
    return row + 1


def _run(event, state, sends, system):
    kind = event[E_KIND]
    node = event[E_NODE]
    length = event[E_LENGTH]
    m = system.params[0]
    if kind == EVENT_INITIATE:
        row = 0
        for subtree in range(m):
            row = _chain(sends, row, system, node, subtree, 1, node, length)
        return row
    if kind != EVENT_DELIVERED:
        return 0
    left = header_field(event, system, HOPS)
    step = m + 1 - left
    subtree = header_field(event, system, SUBTREE)
    source = header_field(event, system, SOURCE)
    row = 0
    # a marked copy: its chain's next hop was refused, the NP sends the rest of the chain itself
    first_redirect = step + 1 if header_field(event, system, FLAGS) & MARKED != 0 else step + 2
    for t in range(first_redirect, m + 2):
        row = _chain(sends, row, system, node, subtree, t, source, length)
    return row


def _parameters(topology) -> np.ndarray:
    if topology.kind != "hypercube":
        raise ValueError(f"VRS runs on the hypercube only, not on {topology.name}")
    return np.array([int(topology.shape[0])], dtype=np.int64)


PROGRAM = Program(
    name="vrs",
    description="paper 001: Ramanathan & Shin's reliable broadcast on the hypercube, with cut-through (VRS)",
    procedure=procedure(_run),
    fields=FIELDS,
    parameters=_parameters,
)
