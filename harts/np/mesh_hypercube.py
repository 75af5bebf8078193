"""The all-port broadcast of paper 003 (Al-Mahadeen & Omari) on the mesh-hypercube MH(m, n), as a send plan.

Algorithm 1 (the source) and Algorithm 2 (every other node, on its copy) as printed, with every "+" on a
cube address read as XOR (S+i, R+3, (S+4i) mod n), with which the paper's MH(9,8) example reproduces.
The source's level column is split in halves recursively (Lu, Ld and the bound Lb); a node reached from
another level also sends to the other 2-subcubes of its level (R XOR 4j) and into its own 2-subcube
(R XOR 1, R XOR 2, and R XOR 3 "in a separate step"); a node reached from another subcube of its level
does only the last; one reached from its own subcube stops.

Every send is a unicast routed by destination. A node's sends on one copy are one step after that copy,
except the send to R XOR 3, which waits until its send to R XOR 1 has left. For n >= 16 the n/4 - 1 sends
to other subcubes share links in dimension order (see `shared_links_by_step`): the algorithm is kept as
printed.
"""

from __future__ import annotations

from typing import NamedTuple

from ..network.topology import Topology, require_int
from .send_plan import (
    TRIGGER_COPY,
    TRIGGER_SENT,
    TRIGGER_START,
    Send,
    SendPlan,
    send_steps,
)

MIN_CUBE = 4  # a 2-subcube in every cube: the sends to R XOR 1, 2 and 3
TOPOLOGY = f"mesh-hypercube MH(m, n) with cubes of n >= {MIN_CUBE} nodes"


class Message(NamedTuple):
    """The header of paper 003: (Ls, S, Lx, X, Lb). The printed sends write only four fields; X, the cube
    address of the node that sent it, is the one Algorithm 2 reads besides them."""

    Ls: int  # the source's level
    S: int  # the source's cube address
    Lx: int  # the level of the node that sent this message
    X: int  # the cube address of the node that sent this message
    Lb: int | None  # the level bound; None where the paper writes *


class Outgoing(NamedTuple):
    level: int
    cube: int
    message: Message
    separate: bool  # "in a separate step": after the node's send to R XOR 1 has left


def plan(topology: Topology, source: int, **options) -> SendPlan:
    if options:
        raise ValueError(f"mh takes no options, got {', '.join(sorted(options))}")
    require_topology(topology)
    m, n = (int(x) for x in topology.shape)
    source = require_int(source, "the mh source", 0, topology.n_nodes - 1)
    sends: list[Send] = []
    messages: list[Message] = []

    def send_all(sender: int, trigger: int, parent: int, outgoing: list[Outgoing]) -> None:
        first = len(sends)
        for level, cube, message, separate in outgoing:
            if separate:
                # after this node's send to R XOR 1, node number (Lr-1)*n + (R XOR 1) = sender XOR 1
                after_send = next(i for i in range(first, len(sends)) if sends[i].destination == sender ^ 1)
                sends.append(Send(sender, TRIGGER_SENT, after_send, (level - 1) * n + cube))
            else:
                sends.append(Send(sender, trigger, parent, (level - 1) * n + cube))
            messages.append(message)

    send_all(source, TRIGGER_START, -1, source_node_algorithm(source // n + 1, source % n, m, n))
    # each send's receiver runs Algorithm 2 on the message it carries; sends are appended after their parents
    delivered = 0
    while delivered < len(sends):
        receiver = sends[delivered].destination
        outgoing = intermediate_node_algorithm(messages[delivered], receiver // n + 1, receiver % n, n)
        send_all(receiver, TRIGGER_COPY, delivered, outgoing)
        delivered += 1
    return SendPlan("mh", topology, source, tuple(sends))


def require_topology(topology: Topology) -> None:
    """ValueError unless MH runs on the network."""
    if topology.kind != "mesh_hypercube":
        raise ValueError(f"mh needs a mesh-hypercube, not {topology.name}")
    if int(topology.shape[1]) < MIN_CUBE:
        raise ValueError(f"mh needs cubes of at least {MIN_CUBE} nodes (2-subcubes), not {topology.name}")


def source_node_algorithm(Ls: int, S: int, m: int, n: int) -> list[Outgoing]:
    Ld = Ls // 2
    Lu = (m + Ls + 1) // 2
    outgoing = []
    if Ls != 1:
        outgoing.append(Outgoing(Ld, S, Message(Ls, S, Ls, S, 1), False))
    if Ls != m:
        outgoing.append(Outgoing(Lu, S, Message(Ls, S, Ls, S, m), False))
    for i in range(1, n // 4):
        outgoing.append(Outgoing(Ls, S ^ (4 * i), Message(Ls, S, Ls, S, None), False))
    return outgoing + local_cube_broadcast(Message(Ls, S, Ls, S, None), Ls, S)


def intermediate_node_algorithm(message: Message, Lr: int, R: int, n: int) -> list[Outgoing]:
    """Node (Lr, R)'s sends on its copy; R >> 2 is the subcube, the paper's R_{log n-1} .. R_2."""
    Lx, X = message.Lx, message.X
    outgoing = []
    if Lr != Lx:
        outgoing += cube_broadcast(message, Lr, R, n)
    if Lr == Lx and R >> 2 != X >> 2:
        outgoing += local_cube_broadcast(message, Lr, R)
    if Lr < Lx:
        outgoing += send_to_low_level(message, Lr)
    if Lr > Lx:
        outgoing += send_to_high_level(message, Lr)
    return outgoing  # received from its own subcube on its own level: nothing to send


def cube_broadcast(message: Message, Lr: int, R: int, n: int) -> list[Outgoing]:
    forward = message._replace(Lx=Lr, X=R, Lb=None)
    return [Outgoing(Lr, R ^ (4 * j), forward, False) for j in range(1, n // 4)] + local_cube_broadcast(message, Lr, R)


def local_cube_broadcast(message: Message, Lr: int, R: int) -> list[Outgoing]:
    forward = message._replace(Lx=Lr, X=R, Lb=None)
    return [Outgoing(Lr, R ^ 1, forward, False), Outgoing(Lr, R ^ 2, forward, False),
            Outgoing(Lr, R ^ 3, forward, True)]


def send_to_low_level(message: Message, Lr: int) -> list[Outgoing]:
    """Reached from above: this node covers levels Lb..Lx-1; it sends to the middles of the parts below
    and above it, handing each its bound. Level sends stay in the source's column, so R = S."""
    Ls, S, Lx, _, Lb = message
    H = Lx - 1
    Ld = (Lb + Lr - 1) // 2
    Lu = (H + Lr + 1) // 2
    outgoing = []
    if Lr != Lb:
        outgoing.append(Outgoing(Ld, S, Message(Ls, S, Lr, S, Lb), False))
    if Lr != H:
        outgoing.append(Outgoing(Lu, S, Message(Ls, S, Lr, S, H), False))
    return outgoing


def send_to_high_level(message: Message, Lr: int) -> list[Outgoing]:
    """Reached from below: this node covers levels Lx+1..Lb, split the same way."""
    Ls, S, Lx, _, Lb = message
    L = Lx + 1
    Ld = (L + Lr - 1) // 2
    Lu = (Lb + Lr + 1) // 2
    outgoing = []
    if Lr != L:
        outgoing.append(Outgoing(Ld, S, Message(Ls, S, Lr, S, L), False))
    if Lr != Lb:
        outgoing.append(Outgoing(Lu, S, Message(Ls, S, Lr, S, Lb), False))
    return outgoing


def senders_by_step(plan: SendPlan) -> dict[int, list[tuple[int, list[int]]]]:
    """step -> [(sender, [destinations in send order])], senders in node order as the paper lists them."""
    by_step: dict[int, dict[int, list[int]]] = {}
    for step, send in zip(send_steps(plan), plan.sends):
        by_step.setdefault(step, {}).setdefault(send.sender, []).append(send.destination)
    return {step: sorted(senders.items()) for step, senders in sorted(by_step.items())}
