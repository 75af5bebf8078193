"""Recursive Doubling (Barnett et al.), the one-port baseline of paper 002, on the 2^a x 2^b mesh, as a
send plan. Its sends are unicasts routed by destination, so it runs on the 2^a x 2^b torus as well, where
the wrap-around links shorten some of their routes.

"Each node holding a copy of the message is responsible for a partition of a row or column, which will be
then divided in half. In each half, a node sends a copy of the message to the node in the other half that
occupies the same relative position." First along the source's row, halving the whole row first
(x XOR 2^j for j = a-1 .. 0), then along every column in the same way: log2 N steps, one send per node per
step, each a unicast routed by destination.
"""

from __future__ import annotations

from ..network.topology import Topology, require_int
from .send_plan import TRIGGER_COPY, TRIGGER_SENT, TRIGGER_START, Send, SendPlan

TOPOLOGY = "2-D mesh or torus whose sides are powers of two"


def plan(topology: Topology, source: int, **options) -> SendPlan:
    if options:
        raise ValueError(f"rd takes no options, got {', '.join(sorted(options))}")
    require_topology(topology)
    nx, ny = (int(side) for side in topology.shape)
    source = require_int(source, "the rd source", 0, topology.n_nodes - 1)
    sends: list[Send] = []
    # per informed node, the send it waits for next: the one that informed it (TRIGGER_COPY), then its own
    # previous send (TRIGGER_SENT); the source starts the broadcast
    waits_for = {source: (TRIGGER_START, -1)}

    def halve(axis_stride: int, side: int, position) -> None:
        bit = side // 2
        while bit:
            for sender in sorted(waits_for):
                trigger, parent = waits_for[sender]
                destination = sender + ((position(sender) ^ bit) - position(sender)) * axis_stride
                sends.append(Send(sender, trigger, parent, destination))
                waits_for[sender] = (TRIGGER_SENT, len(sends) - 1)
                waits_for[destination] = (TRIGGER_COPY, len(sends) - 1)
            bit //= 2

    halve(1, nx, lambda node: node % nx)
    halve(nx, ny, lambda node: node // nx)
    return SendPlan("rd", topology, source, tuple(sends))


def require_topology(topology: Topology) -> None:
    """ValueError unless RD runs on the network."""
    if topology.kind not in ("mesh", "torus") or topology.n_axes != 2:
        raise ValueError(f"rd needs a 2-D mesh or torus, not {topology.name}")
    nx, ny = (int(side) for side in topology.shape)
    if nx & (nx - 1) or ny & (ny - 1):
        raise ValueError(f"rd needs both sides to be powers of two, not {topology.name}")
