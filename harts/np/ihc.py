"""The NP program of paper 001's IHC all-to-all reliable broadcast (Lee & Shin 1994, section IV), with the
microprogram microcode/ihc.yaml.

Route table j is the j-th directed Hamiltonian cycle of the network (`harts.network.hamiltonian`): at
node v, the port to next_j(v). An initiation with E_DIRECTION = j and E_DISTANCE = h makes the node send
its packet along HC_j for h hops; the receivers relay it along the cycle, delivering a copy at every node
(the tee). A copy that arrives marked (the tee's forward was refused, or, with
microcode/ihc_store_and_forward.yaml, cut-through is switched off) is sent on by the NP along the same
cycle with the hops left, a store-and-forward step. Which nodes start in which stage is the caller's
schedule (`harts.experiments.lee_shin`), as in the paper, where nodes are synchronised.
"""

import numpy as np

from ..network.hamiltonian import cycle_ports, directed_cycles
from .program import (
    E_DIRECTION,
    E_DISTANCE,
    E_HEADER,
    E_KIND,
    E_LENGTH,
    EVENT_DELIVERED,
    EVENT_INITIATE,
    LAYOUT_TABLE_WORD,
    NOTIFY_DELIVERED,
    ROUTE_TABLE,
    S_HEADER,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
)

HOPS = 0
FLAGS = 1
FIELDS = ("hops", "flags")
MARKED = 1


@procedure_part
def _along(sends, row, system, cycle, hops, length):
    send_packet(sends, row, ROUTE_TABLE, -1, -1, length, NOTIFY_DELIVERED)
    sends[row, S_HEADER + system.route[LAYOUT_TABLE_WORD]] = cycle
    set_field(sends, row, system, HOPS, hops)
    return row + 1


def _run(event, state, sends, system):
    kind = event[E_KIND]
    if kind == EVENT_INITIATE:
        return _along(sends, 0, system, event[E_DIRECTION], event[E_DISTANCE], event[E_LENGTH])
    if kind != EVENT_DELIVERED:
        return 0
    cycle = event[E_HEADER + system.route[LAYOUT_TABLE_WORD]]
    hops = header_field(event, system, HOPS)
    if header_field(event, system, FLAGS) & MARKED != 0 and hops > 0:
        return _along(sends, 0, system, cycle, hops, event[E_LENGTH])
    return 0


def _route_tables(topology) -> np.ndarray:
    cycles = directed_cycles(topology)
    tables = np.full((len(cycles), topology.n_nodes), -1, dtype=np.int64)
    for j, cycle in enumerate(cycles):
        tables[j, cycle] = cycle_ports(topology, cycle)
    return tables


PROGRAM = Program(
    name="ihc",
    description="paper 001: IHC packets relayed along the directed Hamiltonian cycles (route tables)",
    procedure=procedure(_run),
    fields=FIELDS,
    route_tables=_route_tables,
)
