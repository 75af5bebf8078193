"""PCP, the Parallel Coded Path broadcast of paper 002 (Al-Dubai et al.) on the all-port 2-D mesh, as a
send plan.

Step 1: the source sends two coded worms that reach two opposite sides of the mesh and run along them, so
that every node of both sides takes a copy. Step 2: every side node sends one straight coded worm across
its half of the mesh. Two message-passing steps whatever the size (Theorem 1).

Horizontal partitioning takes rows 0 and Ny-1 as the sides and fills the lower and upper halves by column
worms; vertical partitioning is the same with x and y exchanged. The code below works in (along, across)
coordinates: `along` runs on the sides, `across` from one side to the other.
"""

from __future__ import annotations

from ..network.topology import Topology, require_int
from .send_plan import (
    ABSORB_AND_PASS,
    PASS,
    TRIGGER_COPY,
    TRIGGER_SENT,
    TRIGGER_START,
    Send,
    SendPlan,
    route_copies,
)

PARTITIONS = ("horizontal", "vertical")
TOPOLOGY = "2-D mesh"


def coded_segments(topology: Topology, sender: int, legs, absorb) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """(destination, segments) of a coded worm from `sender` that takes the straight legs
    ((port, hops), ...) in turn; the nodes in `absorb` take a copy and pass the worm on, the others only
    pass it, and the last node takes a copy as the route's end.

    A node acts by the code of the hop it leaves by. The sender does not act on its own hop, so that hop
    takes the code of the next one, which merges it into the next segment (header slots are few)."""
    hops = [port for port, count in legs for _ in range(count)]
    path = [sender]
    for port in hops:
        path.append(int(topology.walk(path[-1], port, 1)))
    codes = [ABSORB_AND_PASS if node in absorb else PASS for node in path[1:-1]]
    codes.insert(0, codes[0] if codes else PASS)
    segments: list[list[int]] = []
    for port, code in zip(hops, codes):
        if segments and segments[-1][0] == port and segments[-1][2] == code:
            segments[-1][1] += 1
        else:
            segments.append([port, 1, code])
    return path[-1], tuple(tuple(segment) for segment in segments)


def allowed_partitions(topology: Topology, source: int) -> tuple[str, ...]:
    """A partition is refused when the source lies on one of its sides but not at a corner: the worm along
    that side would have to deliver a copy back to the source."""
    nx, ny = (int(side) for side in topology.shape)
    sx, sy = source % nx, source // nx
    corner = sx in (0, nx - 1) and sy in (0, ny - 1)
    allowed = []
    if corner or sy not in (0, ny - 1):
        allowed.append("horizontal")
    if corner or sx not in (0, nx - 1):
        allowed.append("vertical")
    return tuple(allowed)


def plan(topology: Topology, source: int, partition: str | None = None, **unknown) -> SendPlan:
    """The PCP broadcast from `source`; `partition` None picks the allowed one whose sides are nearer."""
    if unknown:
        raise ValueError(f"pcp takes only the option 'partition', not {', '.join(sorted(unknown))}")
    require_topology(topology)
    source = require_int(source, "the pcp source", 0, topology.n_nodes - 1)
    allowed = allowed_partitions(topology, source)
    if partition is None:
        partition = _nearer_partition(topology, source, allowed)
    elif partition not in PARTITIONS:
        raise ValueError(f"pcp partition must be one of {', '.join(PARTITIONS)} or None, not {partition!r}")
    elif partition not in allowed:
        raise ValueError(f"pcp cannot use {partition} partitioning from {topology.coordinates(source)}: "
                         f"the source lies on one of its sides but not at a corner")
    return SendPlan("pcp", topology, source, _sends(_Frame(topology, partition), source))


def require_topology(topology: Topology) -> None:
    """ValueError unless PCP runs on the network."""
    if topology.kind != "mesh" or topology.n_axes != 2:
        raise ValueError(f"pcp needs a {TOPOLOGY}, not {topology.name}")


def _nearer_partition(topology: Topology, source: int, allowed: tuple[str, ...]) -> str:
    nx, ny = (int(side) for side in topology.shape)
    sx, sy = source % nx, source // nx
    preferred = "horizontal" if min(sy, ny - 1 - sy) <= min(sx, nx - 1 - sx) else "vertical"
    return preferred if preferred in allowed else allowed[0]


class _Frame:
    """The mesh seen in (along, across) coordinates of one partitioning."""

    def __init__(self, topology: Topology, partition: str):
        self.topology = topology
        horizontal = partition == "horizontal"
        self.along_axis, self.across_axis = (0, 1) if horizontal else (1, 0)
        self.along_size = int(topology.shape[self.along_axis])
        self.across_size = int(topology.shape[self.across_axis])

    def node(self, along: int, across: int) -> int:
        x, y = (along, across) if self.along_axis == 0 else (across, along)
        return x + int(self.topology.shape[0]) * y

    def position(self, node: int) -> tuple[int, int]:
        x, y = node % int(self.topology.shape[0]), node // int(self.topology.shape[0])
        return (x, y) if self.along_axis == 0 else (y, x)

    def along_port(self, positive: bool) -> int:
        return self.along_axis if positive else self.along_axis + 2

    def across_port(self, positive: bool) -> int:
        return self.across_axis if positive else self.across_axis + 2

    def side(self, across: int) -> set[int]:
        return {self.node(a, across) for a in range(self.along_size)}


def _sends(frame: _Frame, source: int) -> tuple[Send, ...]:
    step_one = _step_one(frame, source)
    sends = list(step_one)
    giver = {node: i for i, send in enumerate(step_one) for node, _ in route_copies(frame.topology, send)}
    for first_across, last_across, positive in _halves(frame):
        for along in range(frame.along_size):
            sender = frame.node(along, first_across)
            worm = _worm_across(frame, source, along, first_across, last_across, positive)
            if worm is None:
                continue
            if sender == source:
                # A corner source is a side node too: its worm across follows its step-1 worm that leaves
                # by the same port, once that one is out.
                trigger = TRIGGER_SENT
                port = frame.across_port(positive)
                parent = next(i for i, send in enumerate(step_one) if send.segments[0][0] == port)
            else:
                trigger, parent = TRIGGER_COPY, giver[sender]
            destination, segments = worm
            sends.append(Send(sender, trigger, parent, destination, segments))
    return tuple(sends)


def _step_one(frame: _Frame, source: int) -> tuple[Send, ...]:
    """The two worms that give both sides their copies."""
    last_along, last_across = frame.along_size - 1, frame.across_size - 1
    along, across = frame.position(source)
    near, far = frame.side(0), frame.side(last_across)
    if along in (0, last_along) and across in (0, last_across):
        # A corner source: along its own side, and across to the other side's corner and along that side.
        along_port, across_port = frame.along_port(along == 0), frame.across_port(across == 0)
        own_side, other_side = (near, far) if across == 0 else (far, near)
        worms = (([(along_port, last_along)], own_side),
                 ([(across_port, last_across), (along_port, last_along)], other_side))
    else:
        # To corner (0, 0) and on along the near side, and to the opposite corner and back along the far
        # side: the routes leave the source by different ports and share no link.
        worms = (([(frame.along_port(False), along), (frame.across_port(False), across),
                   (frame.along_port(True), last_along)], near),
                 ([(frame.along_port(True), last_along - along), (frame.across_port(True), last_across - across),
                   (frame.along_port(False), last_along)], far))
    sends = []
    for legs, absorb in worms:
        destination, segments = coded_segments(frame.topology, source, [leg for leg in legs if leg[1]], absorb)
        sends.append(Send(source, TRIGGER_START, -1, destination, segments))
    return tuple(sends)


def _halves(frame: _Frame) -> tuple[tuple[int, int, bool], ...]:
    """(where the side is, the farthest line of its half, direction) across, for the two step-2 fills: the
    near side fills the lines before across_size / 2, the far side the rest."""
    middle = (frame.across_size + 1) // 2
    return (0, middle - 1, True), (frame.across_size - 1, middle, False)


def _worm_across(frame: _Frame, source: int, along: int, first: int, last: int, positive: bool):
    """(destination, segments) of the worm from side node (along, first) across its half to `last`, ending
    at the last node that needs a copy (every node but the source), or None if no node does."""
    direction = 1 if positive else -1
    needing = [across for across in range(first + direction, last + direction, direction)
               if frame.node(along, across) != source]
    if not needing:
        return None
    hops = abs(needing[-1] - first)
    receivers = {frame.node(along, across) for across in needing}
    return coded_segments(frame.topology, frame.node(along, first), [(frame.across_port(positive), hops)], receivers)
