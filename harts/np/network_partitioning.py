"""NP-D, the network partitioning broadcast on the all-port 2^k x 2^k mesh, as a send plan of 4 pieces.

This is a reconstruction: paper 002 only says that NP-D splits the message into sub-messages for the
leaders of sub-networks, that the leaders broadcast concurrently and that the sub-networks then collect and
combine the pieces, in k + 2 message-passing steps; the original paper is not available, so the design
below is ours, made to have that step count.

Sub-networks: the four interleaved sub-meshes G_ab = {(x, y): x mod 2 = a, y mod 2 = b}, each
2^(k-1) x 2^(k-1); sub-mesh position (u, v) is node (2u + a, 2v + b), a sub-mesh hop two mesh hops.
G_ab gets piece a + 2b.
- Stage 1 (step 1): the source sends piece ab to G_ab's leader, its EDN dominating node p(2^(k-1)), by
  X then Y (all four leaders sit side by side, so these routes share links).
- Stage 2 (k - 1 steps): each leader runs EDN's schedule (dominating_nodes) in its sub-mesh with its piece,
  from its own level down, every route stretched two-fold.
- Stage 3 (2 steps): each 2 x 2 cell {2i, 2i + 1} x {2j, 2j + 1} holds one node of every sub-mesh. Step A:
  a node that has its piece (and has made its own stage-2 sends) sends it to its x- and its y-neighbour in
  the cell; step B: it forwards the piece from its y-neighbour to its x-neighbour. Then every node has all
  four pieces.
The source holds all pieces from the start and is sent none: in stage 3 it sends like the others, its
step B with the piece of its y-neighbour that it already holds, right after its step A.
"""

from __future__ import annotations

from ..network.topology import Topology, require_int
from .dominating_nodes import (
    MINUS_X,
    MINUS_Y,
    PLUS_X,
    PLUS_Y,
    Target,
    dominating_offset,
    edn_role,
    mesh_order,
    schedule_sends,
    unicast,
    x_then_y,
)
from .send_plan import SendPlan

PIECES = 4
MIN_ORDER = 3  # sub-meshes of 2^(k-1) x 2^(k-1), on which EDN needs k - 1 >= 2
TOPOLOGY = f"2^k x 2^k mesh with k >= {MIN_ORDER}"


def order_of(topology: Topology) -> int:
    """k of the 2^k x 2^k mesh NP-D runs on, or ValueError."""
    return mesh_order(topology, MIN_ORDER, "npd")


def plan(topology: Topology, source: int) -> SendPlan:
    k = order_of(topology)
    side, half = 2 ** k, 2 ** (k - 1)
    source = require_int(source, "source", 0, topology.n_nodes - 1)

    def piece_of(x: int, y: int) -> int:
        return x % 2 + 2 * (y % 2)

    def cell_send(x: int, y: int, axis: int, piece: int) -> Target:
        """One hop to the cell neighbour along x (axis 0) or y (axis 1)."""
        if axis == 0:
            return (x ^ 1) + side * y, unicast((((MINUS_X if x % 2 else PLUS_X), 1),)), piece
        return x + side * (y ^ 1), unicast((((MINUS_Y if y % 2 else PLUS_Y), 1),)), piece

    def reactions(node: int, piece: int) -> list[list[Target]]:
        x, y = node % side, node // side
        if piece == piece_of(x, y):
            stage_2 = [[(2 * u + x % 2 + side * (2 * v + y % 2), unicast(legs, 2), piece) for (u, v), legs in group]
                       for group in edn_role(half, x // 2, y // 2)]
            return [*stage_2, [cell_send(x, y, 0, piece), cell_send(x, y, 1, piece)]]
        if piece == piece_of(x, y ^ 1):
            return [[cell_send(x, y, 0, piece)]]
        return []

    start, (px, py) = (source % side, source // side), dominating_offset(half)
    leaders = [(2 * px + piece % 2, 2 * py + piece // 2) for piece in range(PIECES)]
    stage_1 = [(lx + side * ly, unicast(x_then_y(start, (lx, ly))), piece) for piece, (lx, ly) in enumerate(leaders)]
    own, from_y_neighbour = piece_of(*start), piece_of(start[0], start[1] ^ 1)
    source_groups = [stage_1, *reactions(source, own), *reactions(source, from_y_neighbour)]
    return SendPlan("npd", topology, source, schedule_sends(source, PIECES, source_groups, reactions), PIECES)
