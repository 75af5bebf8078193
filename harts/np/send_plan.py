"""Send plans: a broadcast of papers 002 and 003 as its network processors run it, written out as data.

Every NP in these algorithms does the same thing: when its copy of the message arrives (or when one of its
own sends has left), it sends the message on, by routes that depend only on where it is. A plan lists
those sends: who sends, what it waits for, the route and, for a coded path, which nodes on the route take
a copy. The flit-level kernel runs a plan as packets that wait for their trigger (MODEL.md, Broadcasts on
the flit-level controller): a send is created only when the copy it waits for has really reached its
sender in the run, so the kernel, not the plan, decides which nodes a coded path reaches, when, and
whether anything blocks.

``expected_copies`` is the plan's functional model: which node gets which copy at which step, walking the
routes by hand. Tests hold the kernel's copies against it.

The control field of coded path routing (paper 002, Fig. 1) is the code of the route segment a node
leaves by: PASS (10) passes the worm on, ABSORB (01) takes a copy and ends the worm there,
ABSORB_AND_PASS (11) takes a copy and passes the worm on. The node at the end of the route takes a copy.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from ..network.topology import Topology

PASS = 0b10
ABSORB = 0b01
ABSORB_AND_PASS = 0b11
CODE_NAMES = {PASS: "10 pass", ABSORB: "01 absorb", ABSORB_AND_PASS: "11 absorb and pass"}

TRIGGER_START = 0  # sent when the broadcast starts (by the source)
TRIGGER_COPY = 1  # sent by `sender` once its copy of send `parent` is in its NP
TRIGGER_SENT = 2  # sent by `sender` once the last flit of its own send `parent` has left it
TRIGGER_DELIVERED = 3  # sent by `sender` once its own send `parent` is in the NP at that send's destination


@dataclass(frozen=True)
class Send:
    sender: int
    trigger: int  # TRIGGER_*
    parent: int  # index in SendPlan.sends of the send it waits for; -1 with TRIGGER_START
    destination: int  # the last node of its route
    segments: tuple[tuple[int, int, int], ...] = ()  # ((port, hops, code), ...); () = by destination
    piece: int = 0  # which part of the message it carries (0..pieces-1)


@dataclass(frozen=True)
class SendPlan:
    algorithm: str
    topology: Topology
    source: int
    sends: tuple[Send, ...]
    pieces: int = 1  # the message is sent as this many parts of ceil(L / pieces) flits (NP-D: 4)


@dataclass(frozen=True)
class Copy:
    send: int  # index in SendPlan.sends
    node: int
    step: int  # 1 for the source's first sends; a send waiting for step s's copy or send is step s + 1
    path: tuple[int, ...]  # the route's nodes from the sender to `node`


def dimension_order_path(topology: Topology, src: int, dst: int) -> list[int]:
    """The nodes of the dimension-order route from src to dst (the lowest axis with hops left first)."""
    offsets = topology.route_offsets(src, dst)[0].tolist()
    nodes = [src]
    for axis, offset in enumerate(offsets):
        port = int(topology.axis_positive[axis] if offset > 0 else topology.axis_negative[axis])
        for _ in range(abs(offset)):
            nodes.append(int(topology.neighbours[nodes[-1], port]))
    return nodes


def route_copies(topology: Topology, send: Send) -> list[tuple[int, tuple[int, ...]]]:
    """(node, path from the sender) for every node the send leaves a copy at, in route order. A coded
    node's action is the code of the segment it would leave by; the route's last node always takes one."""
    if not send.segments:
        path = dimension_order_path(topology, send.sender, send.destination)
        return [(path[-1], tuple(path))]
    hops = [(port, code) for port, count, code in send.segments for _ in range(count)]
    path = [send.sender]
    copies = []
    for k, _ in enumerate(hops):
        node = int(topology.neighbours[path[-1], hops[k][0]])
        if node < 0:
            raise ValueError(f"send from {send.sender}: segment hop {k} leaves the network")
        path.append(node)
        if k + 1 == len(hops):
            copies.append((node, tuple(path)))
            break
        code = hops[k + 1][1]
        if code & ABSORB:
            copies.append((node, tuple(path)))
        if not code & PASS:
            break
    if path[-1] != send.destination:
        raise ValueError(f"send from {send.sender} ends at {path[-1]}, not at its destination {send.destination}")
    return copies


def send_steps(plan: SendPlan) -> list[int]:
    steps: list[int] = []
    for i, send in enumerate(plan.sends):
        if send.trigger == TRIGGER_START:
            steps.append(1)
        elif not 0 <= send.parent < i:
            raise ValueError(f"send {i} waits for send {send.parent}, which is not an earlier send")
        else:
            steps.append(steps[send.parent] + 1)
    return steps


def expected_copies(plan: SendPlan) -> list[Copy]:
    """Every copy the plan delivers, by walking its routes; checks that each send's sender holds what it
    waits for (its copy of the parent, or the parent is its own send)."""
    steps = send_steps(plan)
    topology = plan.topology
    copies: list[Copy] = []
    holders: dict[int, set[int]] = {}  # send -> nodes that got a copy of it
    for i, send in enumerate(plan.sends):
        if send.trigger == TRIGGER_START and send.sender != plan.source:
            raise ValueError(f"send {i} starts the broadcast but its sender {send.sender} is not the source")
        if send.trigger == TRIGGER_COPY and send.sender not in holders[send.parent]:
            raise ValueError(f"send {i} waits for a copy of send {send.parent} at node {send.sender}, "
                             f"which that send does not reach")
        if send.trigger in (TRIGGER_SENT, TRIGGER_DELIVERED) and plan.sends[send.parent].sender != send.sender:
            raise ValueError(f"send {i} waits for send {send.parent} of node {send.sender}, "
                             f"but that send is not its own")
        holders[i] = set()
        for node, path in route_copies(topology, send):
            holders[i].add(node)
            copies.append(Copy(i, node, steps[i], path))
    return copies


def shared_links_by_step(plan: SendPlan) -> dict[int, int]:
    """step -> how many directed links more than one send of that step uses. Sends of one step are meant to
    run at once, so a link two of them need makes one wait for the other."""
    users: dict[int, Counter] = {}
    for step, send in zip(send_steps(plan), plan.sends):
        route = route_copies(plan.topology, send)[-1][1]  # the route's end always takes a copy
        users.setdefault(step, Counter()).update(zip(route, route[1:]))
    return {step: sum(count > 1 for count in links.values()) for step, links in sorted(users.items())}


def circuit_schedule(plan: SendPlan, alpha: int, delta: int, tau: int, flits: int) -> list[tuple[int, int]]:
    """(created, delivered) of every send when nothing else is on the network, in the linear cost model
    of circuit switching (paper 004, section 2): a send over h hops takes alpha + h*delta + flits*tau from
    its creation to its delivery, and is created the moment what it waits for happens (its copy of the
    parent, which a circuit leaves only at its end, or its own earlier send's delivery). Cycles from the
    broadcast's start."""
    times: list[tuple[int, int]] = []
    for i, send in enumerate(plan.sends):
        if send.trigger == TRIGGER_START:
            created = 0
        elif send.trigger in (TRIGGER_COPY, TRIGGER_DELIVERED) and 0 <= send.parent < i:
            if send.trigger == TRIGGER_COPY and plan.sends[send.parent].destination != send.sender:
                raise ValueError(f"send {i} waits for a copy of send {send.parent} at node {send.sender}, "
                                 f"but a circuit leaves its copy only at its end")
            created = times[send.parent][1]
        else:
            raise ValueError(f"send {i}: a circuit-switched plan waits for copies or deliveries of earlier sends")
        hops = len(route_copies(plan.topology, send)[-1][1]) - 1
        times.append((created, created + alpha + hops * delta + flits * tau))
    return times


def circuit_route(plan: SendPlan, send: Send) -> tuple[int, ...]:
    """The nodes of a send's whole route (a circuit's copy is taken at its end)."""
    return route_copies(plan.topology, send)[-1][1]


def links_shared_within_piece(plan: SendPlan) -> dict[int, int]:
    """piece -> how many directed links more than one of that piece's sends uses. A pipelined piece uses all
    of its tree's paths at once, so this must be 0 for every piece."""
    users: dict[int, Counter] = defaultdict(Counter)
    for send in plan.sends:
        path = circuit_route(plan, send)
        users[send.piece].update(zip(path, path[1:]))
    return {piece: sum(count > 1 for count in links.values()) for piece, links in sorted(users.items())}


def links_held_at_once(plan: SendPlan, alpha: int, delta: int, tau: int, flits: int):
    """(link, send, send) for every directed link two sends need while both hold their circuits, in the timing
    of `circuit_schedule` (a circuit holds its links over [created, delivered))."""
    times = circuit_schedule(plan, alpha, delta, tau, flits)
    holders: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, send in enumerate(plan.sends):
        path = circuit_route(plan, send)
        for link in zip(path, path[1:]):
            holders[link].append(i)
    return [(link, a, b) for link, users in holders.items() for n, a in enumerate(users) for b in users[n + 1:]
            if times[a][0] < times[b][1] and times[b][0] < times[a][1]]
