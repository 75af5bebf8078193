"""The NP program of a VSQ reliable broadcast on the square torus SQ_m, m odd (paper 001, section V-C; the
pattern is designed in harts/reference/vsq.py, since the paper's Fig. 9 is missing), with the HARTS
microprogram: every leg is a send_packet worm straight along one direction, teed at every node.

Ports of a 2-D torus: 0 east, 1 north, 2 west, 3 south, so turning a direction by 90 degrees is adding 1.
Tree t starts east + t. Its spine (leg 1) runs m - 1 hops; a spine node k hops out with 1 <= k <= h sends
leg 2 north and south (+1 and -1 turns) h hops each; a leg-2 node in column h sends leg 3 straight on
(east + t) h hops, one in column 1 back (west + t) 1 hop. A worm's copy knows its leg, its tree, and (leg
2) the spine offset of its column from its header; a marked copy (its forward was refused) is sent on by
the NP with the distance left, as in paper 000.
"""

import numpy as np

from .program import (
    E_DIRECTION,
    E_KIND,
    E_LENGTH,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    NOTIFY_DELIVERED,
    ROUTE_DIRECTION,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
)

DISTANCE = 0
FLAGS = 1
TREE = 2
LEG = 3
COLUMN = 4
FIELDS = ("distance", "flags", "tree", "leg", "column")
MARKED = 1


@procedure_part
def _worm(sends, row, system, direction, distance, length, tree, leg, column):
    send_packet(sends, row, ROUTE_DIRECTION, direction % 4, -1, length, NOTIFY_DELIVERED)
    set_field(sends, row, system, DISTANCE, distance)
    set_field(sends, row, system, TREE, tree)
    set_field(sends, row, system, LEG, leg)
    set_field(sends, row, system, COLUMN, column)
    return row + 1


def _run(event, state, sends, system):
    m = system.params[0]
    h = (m - 1) // 2
    kind = event[E_KIND]
    length = event[E_LENGTH]
    if kind == EVENT_INITIATE:
        row = 0
        for tree in range(4):
            row = _worm(sends, row, system, tree, m - 1, length, tree, 1, 0)
        return row
    if kind != EVENT_DELIVERED:
        return 0
    tree = header_field(event, system, TREE)
    leg = header_field(event, system, LEG)
    column = header_field(event, system, COLUMN)
    left = header_field(event, system, DISTANCE)
    row = 0
    if header_field(event, system, FLAGS) & MARKED != 0 and left > 0:
        row = _worm(sends, row, system, event[E_DIRECTION], left, length, tree, leg, column)
    if leg == 1:
        k = m - 1 - left  # hops out along the spine
        if 1 <= k <= h:
            row = _worm(sends, row, system, tree + 1, h, length, tree, 2, k)
            row = _worm(sends, row, system, tree + 3, h, length, tree, 2, k)
    elif leg == 2:
        if column == h:
            row = _worm(sends, row, system, tree, h, length, tree, 3, 0)
        if column == 1:
            row = _worm(sends, row, system, tree + 2, 1, length, tree, 3, 0)
    return row


def _parameters(topology) -> np.ndarray:
    shape = [int(x) for x in topology.shape]
    if topology.kind != "torus" or len(shape) != 2 or shape[0] != shape[1] or shape[0] % 2 == 0:
        raise ValueError(f"VSQ runs on square 2-D tori of odd side, not on {topology.name}")
    return np.array([shape[0]], dtype=np.int64)


PROGRAM = Program(
    name="vsq",
    description="paper 001: VSQ reliable broadcast on the odd square torus (pattern designed in harts.reference.vsq)",
    procedure=procedure(_run),
    fields=FIELDS,
    parameters=_parameters,
)
