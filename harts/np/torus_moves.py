"""Routes on the 2-D torus as paper 004's plans write them: a node as (x, y) offsets from the broadcast's
source, a route as legs (unit move, hops). harts/network/grid.py numbers ports 0 = +x, 1 = +y, 2 = -x,
3 = -y and node (x, y) as x + width * y."""

from __future__ import annotations

from ..network.topology import Topology
from .send_plan import PASS

PORT_OF_MOVE = {(1, 0): 0, (0, 1): 1, (-1, 0): 2, (0, -1): 3}
MOVE_OF_PORT = {port: move for move, port in PORT_OF_MOVE.items()}

Node = tuple[int, int]
Legs = tuple[tuple[Node, int], ...]


def torus_side(topology: Topology, algorithm: str) -> int:
    """The side of a square 2-D torus, or a ValueError naming what the algorithm needs."""
    if topology.kind != "torus" or topology.n_axes != 2:
        raise ValueError(f"{algorithm} needs a 2-D torus, not {topology.name}")
    nx, ny = (int(side) for side in topology.shape)
    if nx != ny:
        raise ValueError(f"{algorithm} needs a square torus, not {topology.name}")
    return nx


def walk(node: Node, legs: Legs, shape: tuple[int, int]) -> Node:
    """Where the legs lead from node, wrapping round."""
    x, y = node
    for (dx, dy), hops in legs:
        x, y = (x + dx * hops) % shape[0], (y + dy * hops) % shape[1]
    return x, y


def arcs(sender: Node, legs: Legs, shape: tuple[int, int]) -> list[tuple[Node, Node]]:
    """The directed links of a route, as (tail, head)."""
    links, node = [], sender
    for move, hops in legs:
        for _ in range(hops):
            head = walk(node, ((move, 1),), shape)
            links.append((node, head))
            node = head
    return links


def node_number(offset: Node, origin: Node, shape: tuple[int, int]) -> int:
    """The topology's number of the node at `offset` from `origin`."""
    return (origin[0] + offset[0]) % shape[0] + shape[0] * ((origin[1] + offset[1]) % shape[1])


def segments(legs: Legs) -> tuple[tuple[int, int, int], ...]:
    """A send's segments: one (port, hops, PASS) per leg; only a circuit's end takes a copy."""
    return tuple((PORT_OF_MOVE[move], hops, PASS) for move, hops in legs)


def unit_move(tail: Node, head: Node, shape: tuple[int, int]) -> Node:
    """The unit move from a node to a neighbour."""
    return next(move for move in PORT_OF_MOVE if walk(tail, ((move, 1),), shape) == head)
