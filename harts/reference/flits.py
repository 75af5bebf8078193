"""Plain-Python model of wormhole and circuit switching, flit by flit and cycle by cycle (MODEL.md, Flow-controlled switching).

It is slow on purpose, so that it can be checked by reading it: every cycle runs the spec's three steps in
the spec's order over dicts and deques. The numba kernel in harts/controller/flits must agree with it on
every packet's delivery cycle, creation cycle and step, and on every copy. Route offsets are computed here
from coordinates, not by the topology's numba functions, so the two models share as little as possible.

Besides packets routed by destination it models what a broadcast on the flit-level controller needs:
- C = `flow.np_channels` injection inputs and ejection outputs per node (`params.np_channels`). Node v's
  physical inputs are the P link receivers then the C injection channels (P + c), its outputs the P links
  then the C ejection channels (P + c); round-robin pointers count modulo P + C. A link input on receiver
  p ejects through output P + (p mod C). The NP's queue is one FIFO for all C injection channels.
- A teed input asks its ejection output only once its link output has picked it, so two teed inputs
  cannot each hold one of the other's outputs for ever (tests/test_flit_broadcast_reference.py has the
  case that livelocked when both outputs picked independently).
- Segment routes: a list of (port, hops, code); `via: segment` takes the current segment's port and counts
  its hops down; `arrived` means no segment is left; conditions may read the pseudo-fields `route` and
  `segment_code`.
- `tee` under wormhole: a forward whose input is also bound to its ejection output; a flit leaves only in a
  cycle both outputs pick it, and then goes downstream and to the NP at once.
- Copies: a node has a copy of a packet b + k + n_d cycles after its last flit was consumed there (by
  `deliver` or by `tee`); the `deliver` copy is the packet's delivery.
- Packets that wait for a trigger: created `delay` cycles after their source gets a copy of their parent
  (TRIGGER_COPY), k + `delay` cycles after the parent's last flit left their common source's injection
  input (TRIGGER_SENT), or `delay` cycles after the parent, sent from their common source, was delivered
  (TRIGGER_DELIVERED). This is the NP layer the kernel runs as an NP program (harts/np/plan_program.py),
  written out by hand: the trigger is an event at the NP, which makes the packet then (joining its queue
  `delay` later). Packets join their queues in a cycle in the kernel's order: first those made earlier that
  join now, by the order they were made in; then those created at a fixed cycle (the traffic), by uid; then
  those the cycle's events make, node by node, each node's events by the serial of the packet they concern
  and then by kind (a copy, a send, a delivery), and each event's packets by uid. A packet's serial is the
  order in which the NPs made the packets.
- Circuit switching routes a probe by destination or along its segments alike.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

from ..controller import isa
from ..controller.records import ROUTE_DESTINATION, ROUTE_SEGMENTS

DEADLOCK_CYCLES = 10_000
LONG_AGO = -(10 ** 18)  # the cycle an unused buffer slot was "freed"
OCCUPIED = 10 ** 18  # the freeing cycle of a slot holding a flit: it is never "freed by t - C"

# What a packet waits for before it is created (the kernel's harts.controller.flits.state numbers them alike).
TRIGGER_NONE = 0  # created at its `create` cycle
TRIGGER_COPY = 1  # created `delay` cycles after its source gets a copy of `parent`
TRIGGER_SENT = 2  # created k + `delay` cycles after `parent`'s last flit was granted at their source
TRIGGER_DELIVERED = 3  # created `delay` cycles after `parent`, sent from their common source, was delivered

_COMPARE = {isa.CMP_EQ: lambda x, y: x == y, isa.CMP_NE: lambda x, y: x != y, isa.CMP_LT: lambda x, y: x < y,
            isa.CMP_LE: lambda x, y: x <= y, isa.CMP_GT: lambda x, y: x > y, isa.CMP_GE: lambda x, y: x >= y,
            isa.CMP_BITS: lambda x, y: x & y != 0}


class ReferenceDeadlock(RuntimeError):
    def __init__(self, cycle: int):
        super().__init__(f"nothing moved for {DEADLOCK_CYCLES} cycles up to cycle {cycle} with packets undelivered")
        self.cycle = cycle


class ReferenceStuck(RuntimeError):
    """Nothing more can happen, yet packets are undelivered: `never_created` waited for a trigger that never
    came (their parent never reached their source, or was itself never created)."""

    def __init__(self, cycle: int, never_created: list, undelivered: list):
        super().__init__(f"nothing more can happen after cycle {cycle}: packets never created {never_created}, "
                         f"created but undelivered {undelivered}")
        self.cycle, self.never_created, self.undelivered = cycle, never_created, undelivered


@dataclass(frozen=True)
class Send:
    """A packet to run. `create` is its creation cycle, or for a triggered packet the delay after its trigger.
    `segments`: ((port, hops, code), ...) for a segment-routed packet (a segment of 0 hops ends the list), ()
    for one routed by destination; `dst` may be None for a segment-routed one (its route's last node)."""

    uid: int
    create: int
    src: int
    dst: int | None
    flits: int
    segments: tuple = ()
    trigger: int = TRIGGER_NONE
    parent: int = -1


@dataclass
class Trace:
    """Per packet uid: the cycle the NP has it, its creation cycle and its step; and every copy as
    (uid, node, cycle), in the order the copies' last flits were consumed. `instructions`: micro-instructions
    executed, a refused forward once for every cycle it is tried; a wait_tail that finds the tail not yet
    granted counts once when it stops there and once when it goes on (the polls between are the model's way
    of waiting, not instructions)."""

    delivered: dict
    created: dict
    step: dict
    copies: list
    instructions: int


def zero_load_latency_wormhole(params, hops: int, flits: int) -> int:
    """wormhole.yaml alone in the network. The source runs wait_header at n_s and forward at n_s + 1, and the
    head is granted in that cycle (a forward binds before the allocator runs), so it is usable at the first
    node at n_s + 1 + Lk. Each transit node runs wait_header, branch, forward from the head's arrival: the
    head leaves 2 cycles after it lands and lands Lk later. The destination runs wait_header, branch,
    deliver: the head is ejected 2 cycles after landing. The other flits follow k apart (the link's busy
    time), so the tail is ejected (M - 1)k later and reaches the NP after b + k + n_d more."""
    k, lk = params.flit_cycles, params.link_latency
    return (params.np_send + 1 + lk + (hops - 1) * (2 + lk) + 2 + (flits - 1) * k
            + params.bus_delay + k + params.deliver)


def zero_load_latency_circuit(params, hops: int, flits: int) -> int:
    """circuit.yaml alone in the network, the probe routed by destination or by segments alike. The source
    runs wait_header, branch (route == segments) and forward from n_s, so the head is granted at n_s + 2;
    each transit node runs wait_header, two branches (arrived, route == segments) and forward: the probe
    leaves 3 cycles after it lands. It lands at the destination at A = n_s + 2 + Lk + (h - 1)(3 + Lk).
    There wait_header (A),
    branch (A + 1), ack (A + 2); the acknowledgment takes 1 + w per hop back, so the first data flit
    leaves the source at A + 2 + h(1 + w). Data flits find every input on the path already bound, so each
    leaves a node in the cycle it lands: h Lk to the destination's ejection (its deliver ran at A + 3),
    then (M - 1)k for the rest and b + k + n_d to the NP."""
    k, lk = params.flit_cycles, params.link_latency
    return (params.np_send + 2 + lk + (hops - 1) * (3 + lk) + 2 + hops * params.ack_hop + hops * lk
            + (flits - 1) * k + params.bus_delay + k + params.deliver)


def tie_goes_negative(key: int, uid: int, axis: int) -> bool:
    """routing.torus_tie: random's draw, written again from its definition (splitmix64 of key + uid *
    0x9E3779B97F4A7C15 + axis + 1, modulo 2^64; odd: the - way) rather than imported from the kernel."""
    mask = (1 << 64) - 1
    z = (key + uid * 0x9E3779B97F4A7C15 + axis + 1) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return bool((z ^ (z >> 31)) & 1)


def route_offsets(topology, src: int, dst: int, tie_key: int = 0, uid: int = 0) -> list[int]:
    """Signed hops per axis, by the conventions of harts/network (axis 0 varies fastest; a hypercube axis
    is a bit, +1 to set it, -1 to clear it; a torus goes the shorter way, and when half-way the + way, or with
    a tie_key (routing.torus_tie: random) the way tie_goes_negative draws for packet uid; a mesh-hypercube's
    axis 0 is the level difference, then one axis per cube bit)."""
    if topology.kind == "hypercube":
        return [(dst >> a & 1) - (src >> a & 1) for a in range(topology.n_axes)]
    if topology.kind == "mesh_hypercube":
        cube = int(topology.shape[1])
        return [dst // cube - src // cube] + [(dst >> a & 1) - (src >> a & 1) for a in range(topology.n_axes - 1)]
    if topology.kind not in ("mesh", "torus"):
        raise NotImplementedError(f"no reference routes for topology kind {topology.kind!r}")
    out = []
    for axis, side in enumerate(int(s) for s in topology.shape):
        delta = dst % side - src % side
        if topology.kind == "torus":
            delta %= side
            if delta > side // 2 or (delta * 2 == side and tie_key and tie_goes_negative(tie_key, uid, axis)):
                delta -= side
        out.append(delta)
        src, dst = src // side, dst // side
    return out


def segment_route_end(topology, src: int, segments) -> int:
    """The node a segment route from src ends at (ValueError if it leaves the network)."""
    v = src
    for port, hops, _code in segments:
        for _ in range(hops):
            v = int(topology.neighbours[v][port])
            if v < 0:
                raise ValueError(f"the segment route {list(segments)} from node {src} leaves the network")
    return v


class Packet:
    def __init__(self, send: Send, offsets, probe):
        self.uid, self.src, self.dst = send.uid, send.src, send.dst
        self.trigger, self.parent, self.delay = send.trigger, send.parent, send.create
        self.data_flits = send.flits
        self.n_flits = send.flits + (1 if probe else 0)  # index 0 is the head (the probe in circuit switching)
        self.first_offsets = offsets
        self.first_segments = [tuple(s) for s in send.segments]
        self.routed_by_segments = bool(send.segments)
        self.create = self.step = None  # set when it is created
        self.ejected = 0  # flits consumed by ejection outputs (deliver and tee), over all nodes

    def restart(self, ready):
        """(Re)enter the injection queue: fresh header, no flit sent, no path, no acknowledgment."""
        self.ready, self.offsets, self.wrapped = ready, list(self.first_offsets), set()
        self.segments, self.segment = [list(s) for s in self.first_segments], 0
        self.sent, self.path, self.ack_at = 0, [], None

    def segment_code(self):
        """The code of the current segment, -1 when none is left (also for a packet routed by destination)."""
        if self.segment < len(self.segments):
            return self.segments[self.segment][2]
        return -1

    def arrived(self):
        if self.routed_by_segments:
            return self.segment >= len(self.segments)
        return not any(self.offsets)


class Flit:
    __slots__ = ("index", "packet", "slot", "usable")

    def __init__(self, packet, index, usable, slot):
        self.packet, self.index, self.usable, self.slot = packet, index, usable, slot


class InputVC:
    """B flit slots written in ring order; flits on the wire are already in `flits`, usable from `usable`."""

    def __init__(self, depth):
        self.flits = deque()
        self.written = 0
        self.freed = [LONG_AGO] * depth


class Context:
    def __init__(self, node, number, phys, vc, injection):
        self.node, self.number, self.phys, self.vc, self.injection = node, number, phys, vc, injection
        self.packet = None  # None: idle (free from idle_from)
        self.idle_from = 0
        self.taken = None  # injection: the packet it took from the queue, to start on at start_at
        self.start_at = None
        self.pc = self.due = None
        self.bound = None  # (output, vc) the input is bound to; outputs P.. are the ejection (vc None)
        self.tee = None  # the ejection output a teed input is bound to as well, else None
        self.owned = []  # output VCs (port, vc) this input owns
        self.tail_at = None  # cycle the packet's last flit was granted at this input
        self.probe_gone = False  # the probe was consumed here by ack or nack
        self.waiting_for_tail = False  # its wait_tail stopped for the tail (counted once)
        self.waits_on = None  # flow.vc_arbitration round_robin: the (node, port) whose VC it waits for, until woken
        self.not_before = 0  # woken, it tries from this cycle: when the VC it was woken for can be taken
        self.outranked = False  # its last forward left the VC to the input due to take it (vc_arbitration round_robin)
        self.wants = None  # the VCs of that port its refused forward could take
        self.wants_whole_port = False  # its forward takes the whole port (vc: circuit)


def as_sends(packets) -> list[Send]:
    """Send objects as they are, (uid, create, src, dst, flits) tuples as untriggered destination-routed packets."""
    return [p if isinstance(p, Send) else Send(*p) for p in packets]


def run(topology, microprogram, params, packets, max_cycles=1_000_000) -> dict[int, int]:
    """packets: iterable of (uid, create_cycle, source, destination, flits) (or Send), flits = M >= 1 data
    flits (circuit switching adds the probe). Returns {uid: cycle the NP has the packet}."""
    return run_traced(topology, microprogram, params, packets, max_cycles).delivered


def run_traced(topology, microprogram, params, packets, max_cycles=1_000_000) -> Trace:
    """packets: Send objects or (uid, create, src, dst, flits) tuples. Returns a Trace.

    Raises ReferenceDeadlock(cycle) when, with a context busy or a flit in a link buffer, DEADLOCK_CYCLES
    cycles pass with no flit granted, no context started and no shared instruction taking effect (a forward
    or tee that succeeds, deliver, ack, nack, done). Refused forwards, stalled wait_tails and private
    instructions are not progress, so a probe looping between forward and branch is caught too; while the
    network is empty the count does not run (the model skips ahead to the next start or creation). Raises
    ReferenceStuck when the network is empty, nothing is due and packets are undelivered (triggered packets
    whose trigger never came)."""
    circuit = microprogram.switching == isa.SWITCHING_CIRCUIT
    if microprogram.switching not in (isa.SWITCHING_WORMHOLE, isa.SWITCHING_CIRCUIT):
        raise ValueError(f"{microprogram.name} is not a wormhole or circuit microprogram")
    code = [[int(x) for x in microprogram.code[:, pc]] for pc in range(microprogram.code.shape[1])]
    n_nodes, P, n_axes = topology.n_nodes, topology.n_ports, topology.n_axes
    V, B, k, lk, C = (params.virtual_channels, params.buffer_flits, params.flit_cycles,
                      params.link_latency, params.credit_delay)
    NP = params.np_channels  # C of the spec: injection inputs and ejection outputs per node
    J = params.injection_vcs
    if not 1 <= NP <= P:
        raise ValueError(f"np_channels must be 1..{P} (the ports), got {NP}")
    ejection_delay = params.bus_delay + k + params.deliver  # last flit consumed at t: the NP has it at t + this
    nbr = topology.neighbours.tolist()
    wrap = topology.wrap_links().tolist()
    has_wrap = any(any(row) for row in wrap)
    escape_vcs = 2 if has_wrap else 1
    policies = {c[isa.CODE_VC] for c in code if c[isa.CODE_OP] in (isa.OP_FORWARD, isa.OP_TEE)}
    if has_wrap and isa.VC_DATELINE in policies and V < 2:
        raise ValueError("vc: dateline on a network with wrap-around links needs 2 or more virtual channels")
    if isa.VC_ESCAPE in policies and V < escape_vcs:
        raise ValueError(f"vc: escape needs {escape_vcs} or more virtual channels on {topology.name}")
    if {isa.VC_LOWER, isa.VC_UPPER} & policies and V < 2:
        raise ValueError("vc: lower and vc: upper need 2 or more virtual channels")
    pos, neg = topology.axis_positive.tolist(), topology.axis_negative.tolist()
    port_axis = {port: axis for axis in range(n_axes) for port in (pos[axis], neg[axis])}

    links = [(v, p) for v in range(n_nodes) for p in range(P) if nbr[v][p] >= 0]
    assert all(topology.in_port[v][p] == p for v, p in links), "the spec's rule: port p arrives on receiver p"
    owner = {(v, p, c): None for v, p in links for c in range(V)}  # output VC (v, p, c) -> input VC (nbr, p, c)
    reusable = {(v, p, c): 0 for v, p in links for c in range(V)}  # the first cycle it may be taken once free
    next_vc = {(v, p): 0 for v, p in links}  # flow.vc_choice round_robin: the VC a link tries first
    # flow.vc_arbitration round_robin: the inputs waiting for a VC of a link, and the input that last took one
    waiting = {(v, p): [] for v, p in links}
    last_taker = {(v, p): -1 for v, p in links}
    due_to_take = {(v, p): None for v, p in links}  # (the input due to take a VC of the link being freed, its cycle)
    NI = P * V + NP * J  # the kernel's inputs per node: a context's number there is node * NI + number
    buffers = {(nbr[v][p], p, c): InputVC(B) for v, p in links for c in range(V)}
    queues = [deque() for _ in range(n_nodes)]  # the NP's packets not yet taken by an injection context
    channel_free = {(v, P + c): 0 for v in range(n_nodes) for c in range(NP)}  # (node, channel): next start from
    busy_until = {(v, o): 0 for v in range(n_nodes) for o in range(P + NP)}
    ptr_in = [[0] * (P + NP) for _ in range(n_nodes)]
    ptr_out = [[0] * (P + NP) for _ in range(n_nodes)]
    contexts = []  # in the spec's order: node, then input number p*V + c, injection P*V + c last
    by_phys = [[[] for _ in range(P + NP)] for _ in range(n_nodes)]
    for v in range(n_nodes):
        for p in range(P):
            for c in range(V):
                if (v, p, c) in buffers:
                    contexts.append(Context(v, p * V + c, p, c, False))
                    by_phys[v][p].append(contexts[-1])
        for c in range(NP):
            for j in range(J):  # flow.injection_vcs: J contexts share the channel, arbitrated as a link's VCs
                contexts.append(Context(v, P * V + c * J + j, P + c, j, True))
                by_phys[v][P + c].append(contexts[-1])
    injectors = [[ctx for c in range(NP) for ctx in by_phys[v][P + c]] for v in range(n_nodes)]

    # ---- the packets ------------------------------------------------------------------------------------
    all_packets = {}
    for send in as_sends(packets):
        if send.uid in all_packets or send.flits < 1 or send.create < 0 or not 0 <= send.src < n_nodes:
            raise ValueError(f"packet {send.uid}: uids must be unique, flits >= 1, create >= 0, a node as source")
        segments = tuple(s for s in send.segments)
        for i, s in enumerate(segments):  # a segment of 0 hops ends the list
            if s[1] == 0:
                segments = segments[:i]
                break
        if any(s[1] < 0 for s in segments):
            raise ValueError(f"packet {send.uid}: a segment with negative hops")
        if segments:
            end = segment_route_end(topology, send.src, segments)
            if send.dst is not None and send.dst != end:
                raise ValueError(f"packet {send.uid}: its segments end at node {end}, not at {send.dst}")
            send = Send(send.uid, send.create, send.src, end, send.flits, segments, send.trigger, send.parent)
        elif send.dst is None or send.src == send.dst:
            raise ValueError(f"packet {send.uid}: a packet routed by destination needs a destination != source")
        if send.trigger not in (TRIGGER_NONE, TRIGGER_COPY, TRIGGER_SENT, TRIGGER_DELIVERED) or \
                (send.trigger == TRIGGER_NONE) != (send.parent < 0):
            raise ValueError(f"packet {send.uid}: trigger {send.trigger} with parent {send.parent}")
        offsets = [0] * n_axes if segments else route_offsets(topology, send.src, send.dst,
                                                                            params.torus_tie_key, send.uid)
        all_packets[send.uid] = Packet(send, offsets, circuit)
    children = {}  # (trigger, parent uid) -> packets waiting for it, by uid
    for packet in sorted(all_packets.values(), key=lambda q: q.uid):
        if packet.trigger != TRIGGER_NONE:
            if packet.parent not in all_packets:
                raise ValueError(f"packet {packet.uid} waits for packet {packet.parent}, which is not in the run")
            if packet.trigger in (TRIGGER_SENT, TRIGGER_DELIVERED) and all_packets[packet.parent].src != packet.src:
                raise ValueError(f"packet {packet.uid} waits for packet {packet.parent} to leave or arrive, "
                                 f"but that packet's source is {all_packets[packet.parent].src}")
            children.setdefault((packet.trigger, packet.parent), []).append(packet)
    fixed = []  # heap of (cycle, uid): the packets created at a fixed cycle
    for packet in all_packets.values():
        if packet.trigger == TRIGGER_NONE:
            heapq.heappush(fixed, (packet.delay, packet.uid))
    births = []  # heap of (cycle, serial, uid): packets made earlier that join their queue at that cycle
    events: dict = {}  # cycle -> [(node, serial, kind order, trigger, parent uid)]: the NPs' events of that cycle
    made: dict = {}  # uid -> serial: the order in which the NPs made the packets
    delivered, created, steps, copies = {}, {}, {}, []
    instructions = 0
    event_order = {TRIGGER_COPY: 1, TRIGGER_SENT: 2, TRIGGER_DELIVERED: 5}  # the kernel's EVENT_* numbers

    def make(packet):
        made[packet.uid] = len(made)

    def fire(trigger, packet, node, at):
        """Node v's NP sees the trigger of `packet` at cycle `at`; the packets waiting for it are made then."""
        if any(child.src == node for child in children.get((trigger, packet.uid), ())):
            events.setdefault(at, []).append((node, made[packet.uid], event_order[trigger], trigger, packet.uid))

    def arrivals(t):
        """The packets that join their queues at cycle t, in the kernel's order."""
        while births and births[0][0] <= t:
            cycle, _, uid = heapq.heappop(births)
            assert cycle == t, "a birth was missed"
            create(all_packets[uid], t)
        while fixed and fixed[0][0] <= t:
            cycle, uid = heapq.heappop(fixed)
            assert cycle == t, "a creation was missed"
            make(all_packets[uid])
            create(all_packets[uid], t)
        for node, _, _, trigger, parent in sorted(events.pop(t, [])):
            for child in children.get((trigger, parent), ()):
                if child.src == node and child.uid not in made:  # made once: by the first event it waits for
                    make(child)
                    if child.delay == 0:
                        create(child, t)
                    else:
                        heapq.heappush(births, (t + child.delay, made[child.uid], child.uid))

    def feed(v):
        """Every idle injection context of node v, in channel order, takes the packet at the head of the
        queue (while any remain), to start on it when it is ready, the context is free and the channel has
        carried the flits of the packet before (one flit every k cycles: channel_free)."""
        for ctx in injectors[v]:
            if not queues[v]:
                return
            if ctx.packet is None and ctx.taken is None:
                ctx.taken = queues[v].popleft()
                ctx.start_at = max(ctx.taken.ready, ctx.idle_from, channel_free[v, ctx.phys])
                channel_free[v, ctx.phys] = ctx.start_at + ctx.taken.n_flits * k

    def create(packet, t):
        parent = all_packets.get(packet.parent)
        packet.create, packet.step = t, 1 if parent is None else parent.step + 1
        created[packet.uid], steps[packet.uid] = t, packet.step
        packet.restart(t + params.np_send)
        queues[packet.src].append(packet)
        feed(packet.src)

    # ---- the spec's pieces ------------------------------------------------------------------------------
    def front(ctx):
        """The oldest flit of the input as a Flit, or None (injection: the next flit of its packet)."""
        if ctx.injection:
            packet = ctx.packet
            return Flit(packet, packet.sent, packet.ready, None) if packet and packet.sent < packet.n_flits else None
        flits = buffers[(ctx.node, ctx.phys, ctx.vc)].flits
        return flits[0] if flits else None

    def consume_probe(ctx, t):
        buf = buffers[(ctx.node, ctx.phys, ctx.vc)]
        probe = buf.flits.popleft()
        assert probe.packet is ctx.packet and probe.index == 0 and probe.usable <= t
        buf.freed[probe.slot] = t
        ctx.probe_gone = True

    def vc_choices(v, port, axis, packet, policy):
        """The VCs of output port `port` the policy lets this hop take (circuit: all of them, together)."""
        if policy in (isa.VC_ANY, isa.VC_CIRCUIT) or (policy == isa.VC_DATELINE and not has_wrap):
            return list(range(V))
        late = 1 if wrap[v][port] or axis in packet.wrapped else 0  # dateline class of this hop
        if policy == isa.VC_DATELINE and params.dateline_whole_axis and not packet.routed_by_segments:
            # flow.dateline: whole_axis: class 1 from the axis's first hop when any of its hops wraps
            node = v
            for _ in range(abs(packet.offsets[axis])):
                late |= wrap[node][port]
                node = nbr[node][port]
        if policy == isa.VC_DATELINE:
            half = (V + 1) // 2
            return list(range(half, V)) if late else list(range(half))
        if policy == isa.VC_ESCAPE:
            return [late] if has_wrap else [0]
        if policy == isa.VC_ADAPTIVE:
            return list(range(escape_vcs, V))
        if policy == isa.VC_LOWER:  # two classes of traffic that never wait for each other (cpr.yaml)
            return list(range((V + 1) // 2))
        if policy == isa.VC_UPPER:
            return list(range((V + 1) // 2, V))
        raise NotImplementedError(f"vc policy {policy}")

    def ports_to_try(ctx, via):
        """(port, axis) in the order the forward tries them; the route is moved on for the one taken."""
        packet, v = ctx.packet, ctx.node
        if via == isa.VIA_SEGMENT:
            if not packet.routed_by_segments or packet.arrived():
                raise RuntimeError(f"packet {packet.uid}: forward via segment with no segment left at node {v}")
            port = packet.segments[packet.segment][0]
            return [(port, port_axis[port])]
        if via not in (isa.VIA_ADAPTIVE, isa.VIA_DIMENSION_ORDER):
            raise NotImplementedError(f"via {via} on the flit-level model")
        if packet.routed_by_segments:
            raise RuntimeError(f"packet {packet.uid}: routed by segments, forwarded by destination at node {v}")
        axes = [a for a in range(n_axes) if packet.offsets[a]]
        if not axes:
            raise RuntimeError(f"packet {packet.uid}: forward with no hop left at node {v}")
        if via == isa.VIA_ADAPTIVE:  # most hops left first; sorted() is stable, so ties go to the lower axis
            axes = sorted(axes, key=lambda a: -abs(packet.offsets[a]))
        else:
            axes = axes[:1]
        return [(pos[a] if packet.offsets[a] > 0 else neg[a], a) for a in axes]

    def forward(ctx, via, policy, t):
        packet, v = ctx.packet, ctx.node
        assert ctx.bound is None and ctx.tee is None, "a second stream for one packet"
        for port, axis in ports_to_try(ctx, via):
            if nbr[v][port] < 0:
                raise RuntimeError(f"packet {packet.uid}: node {v} has no link on port {port}")
            choices = vc_choices(v, port, axis, packet, policy)
            if params.vc_round_robin and next_vc[v, port] in choices:  # from the VC after the port's last given
                at = choices.index(next_vc[v, port])
                choices = choices[at:] + choices[:at]
            free = [c for c in choices if owner[(v, port, c)] is None and reusable[(v, port, c)] <= t]
            ctx.wants, ctx.wants_whole_port = set(choices), policy == isa.VC_CIRCUIT
            ctx.outranked = False
            if policy == isa.VC_CIRCUIT:
                taken, vc = (free if len(free) == V else []), 0  # the whole port; flits travel in VC 0
            else:
                ctx.outranked = params.vc_arbitration_round_robin and outranked(ctx, v, port, free, t)
                if ctx.outranked:
                    free = []
                taken, vc = free[:1], (free[0] if free else None)
                if taken:
                    next_vc[v, port] = vc + 1
            if taken:
                for c in taken:
                    owner[(v, port, c)] = ctx
                ctx.owned = [(port, c) for c in taken]
                ctx.bound = (port, vc)
                if via == isa.VIA_SEGMENT:
                    segment = packet.segments[packet.segment]
                    segment[1] -= 1
                    if segment[1] == 0:
                        packet.segment += 1
                else:
                    packet.offsets[axis] -= 1 if packet.offsets[axis] > 0 else -1
                if wrap[v][port]:
                    packet.wrapped.add(axis)
                packet.path.append(ctx)
                if params.vc_arbitration_round_robin:
                    last_taker[v, port] = v * NI + ctx.number
                    wake_next(v, port, t)  # a VC still free goes on to the next waiting input that can take one
                return True
            ctx.waits_on = (v, port)
        return False

    def rank(v, port, ctx):
        """vc_arbitration round_robin: ctx's place in the link's turn, from the input after its last taker."""
        return (v * NI + ctx.number - last_taker[v, port] - 1) % (n_nodes * NI)

    def designate(v, port, ctx, ready, t):
        """ctx will try at `ready` for a VC of the link: it is due to take it unless one due at a cycle not yet past
        comes before it in turn."""
        due = due_to_take[v, port]
        if due is None or t > due[1] or rank(v, port, ctx) < rank(v, port, due[0]):
            due_to_take[v, port] = (ctx, ready)

    def outranked(ctx, v, port, free, t):
        """ctx, asking at t with these VCs free, leaves the last one to the input due to take it, if that one comes
        first in turn."""
        due = due_to_take[v, port]
        if due is None:
            return False
        rival, at = due
        if rival is ctx or t > at:
            due_to_take[v, port] = None
            return False
        return rank(v, port, rival) < rank(v, port, ctx) and len(free) == 1 and free[0] in rival.wants

    def reusable_at(ctx):
        """When ctx, just refused at its port, could take what it wants there: a VC no input owns whose tail
        left too recently (flow.vc_reuse_cycles); None when what it wants is owned."""
        v, port = ctx.waits_on
        free = [c for c in ctx.wants if owner[(v, port, c)] is None]
        if ctx.wants_whole_port:
            return max(reusable[(v, port, c)] for c in free) if len(free) == len(ctx.wants) else None
        return min(reusable[(v, port, c)] for c in free) if free else None

    def wake_next(v, port, t):
        """flow.vc_arbitration round_robin: of the inputs waiting for a VC of the link, the first in round-robin
        order from the input after the link's last taker that can take a VC free now stops waiting (it tries
        again at its next turn, once that VC can be taken); the others go on waiting, refused without trying."""
        free = {c for c in range(V) if owner[(v, port, c)] is None}
        able = [ctx for ctx in waiting[v, port]
                if (ctx.wants <= free if ctx.wants_whole_port else ctx.wants & free)]
        if able:
            woken = min(able, key=lambda ctx: rank(v, port, ctx))
            waiting[v, port].remove(woken)
            woken.waits_on = None
            ready = [reusable[(v, port, c)] for c in woken.wants & free]
            woken.not_before = max(ready) if woken.wants_whole_port else min(ready)
            designate(v, port, woken, woken.not_before, t)

    def release(ctx, t, reuse_from=None):
        """ctx lets go of its outputs at t, to be taken from cycle reuse_from (a tail's: flow.vc_reuse_cycles), or at
        once."""
        ports = {port for port, _ in ctx.owned}
        for port, c in ctx.owned:
            assert owner[(ctx.node, port, c)] is ctx
            owner[(ctx.node, port, c)] = None
            if reuse_from is not None:
                reusable[(ctx.node, port, c)] = reuse_from
        ctx.owned, ctx.bound, ctx.tee = [], None, None
        if params.vc_arbitration_round_robin:
            for port in ports:
                wake_next(ctx.node, port, t)

    def ejection_of(ctx):
        return P + ctx.phys % NP  # a link input on receiver p ejects through output P + (p mod C)

    def condition(ctx, col):
        packet, arg = ctx.packet, col[isa.CODE_ARG]
        if arg == isa.COND_ARRIVED:
            return packet.arrived()
        if arg == isa.COND_LOCAL:
            return ctx.injection
        if arg == isa.COND_SETUP_RETRIES:
            return params.circuit_retry
        field = col[isa.CODE_FIELD]
        if field == isa.FIELD_ROUTE:
            x = ROUTE_SEGMENTS if packet.routed_by_segments else ROUTE_DESTINATION
        elif field == isa.FIELD_SEGMENT_CODE:
            x = packet.segment_code()
        else:
            raise NotImplementedError("declared header fields: the flit-level packets carry none")
        return _COMPARE[col[isa.CODE_COMPARE]](x, col[isa.CODE_VALUE])

    def execute(ctx, t):
        """One instruction at cycle t; True if it changed shared state (for deadlock detection)."""
        nonlocal instructions
        col = code[ctx.pc]
        op, arg, target, cycles = col[isa.CODE_OP], col[isa.CODE_ARG], col[isa.CODE_TARGET], col[isa.CODE_CYCLES]
        if not (op == isa.OP_WAIT_TAIL and ctx.waiting_for_tail):
            instructions += 1
        packet, nxt, moved = ctx.packet, ctx.pc + 1, False
        if op in (isa.OP_WAIT_HEADER, isa.OP_WAIT):
            pass
        elif op == isa.OP_JUMP:
            nxt = target
        elif op == isa.OP_BRANCH:
            if condition(ctx, col) != bool(col[isa.CODE_NEGATE]):
                nxt = target
        elif op in (isa.OP_FORWARD, isa.OP_TEE):
            if op == isa.OP_TEE and (ctx.injection or circuit or col[isa.CODE_UNTIL] >= 0):
                raise RuntimeError(f"packet {packet.uid}: tee at node {ctx.node} input {ctx.number}")
            if (ctx.waits_on is not None and ctx in waiting[ctx.waits_on]) or t < ctx.not_before:
                # not woken, or woken for a VC that cannot be taken yet: refused without trying
                ctx.due = t + 1
                return False
            moved = forward(ctx, arg, col[isa.CODE_VC], t)
            if moved and op == isa.OP_TEE:
                ctx.tee = ejection_of(ctx)  # bound to its ejection output too, from this cycle
            if not moved:
                if target == isa.RETRY:
                    ready = reusable_at(ctx) if arg != isa.VIA_ADAPTIVE and not ctx.outranked else None
                    if ready is not None:
                        ctx.not_before = ready  # what it wants is free, not yet reusable: it tries then
                        if params.vc_arbitration_round_robin:  # as a request to BookSim2's VC allocator
                            designate(*ctx.waits_on, ctx, ready, t)
                    elif params.vc_arbitration_round_robin and arg != isa.VIA_ADAPTIVE:
                        waiting[ctx.waits_on].append(ctx)  # one output was tried: it waits for a VC of it
                    ctx.due = t + 1  # the same forward, every cycle until it succeeds
                    return False
                nxt = target
        elif op == isa.OP_DELIVER:  # also before the route's end: a coded worm's 01 (absorb) ends it there
            if ctx.injection or ctx.bound is not None:
                raise RuntimeError(f"packet {packet.uid}: deliver at node {ctx.node} input {ctx.number}")
            ctx.bound, moved = (ejection_of(ctx), None), True
        elif op == isa.OP_WAIT_TAIL:
            if ctx.tail_at is None:  # grants happen in step 2, so a tail granted at s is seen here at s + 1
                ctx.due = t + 1
                ctx.waiting_for_tail = True
                return False
            if ctx.waiting_for_tail:
                ctx.waiting_for_tail = False
                instructions += 1
            if params.immediate_turnaround:
                cycles = 0
        elif op == isa.OP_DONE:
            if ctx.bound is not None or (ctx.tail_at is None and not ctx.probe_gone):
                raise RuntimeError(f"packet {packet.uid}: done at node {ctx.node} before its last flit left")
            ctx.packet, ctx.pc, ctx.due = None, None, None
            ctx.idle_from = t if params.immediate_turnaround else t + cycles
            if ctx.injection:
                feed(ctx.node)
            return True
        elif op in (isa.OP_ACK, isa.OP_NACK):
            if ctx.injection or (op == isa.OP_ACK) != packet.arrived() or not circuit:
                raise RuntimeError(f"packet {packet.uid}: {isa.OPCODE_NAMES[op]} at node {ctx.node}")
            consume_probe(ctx, t)
            moved = True
            if op == isa.OP_ACK:
                packet.ack_at = t + len(packet.path) * params.ack_hop
            else:
                # Every port of the partial path frees now (a later context of this same step 1 may claim
                # it); the contexts that forwarded the probe (all stalled in wait_tail) are abandoned and
                # idle from t; the packet goes back to the head of its source's queue (its tail is unsent),
                # and the source's idle injection contexts take packets again.
                for hop in packet.path:
                    release(hop, t)
                    hop.packet, hop.pc, hop.due, hop.idle_from = None, None, None, t
                packet.restart(t + len(packet.path) * params.ack_hop + params.retry_cycles)
                queues[packet.src].appendleft(packet)
                feed(packet.src)
        else:
            raise NotImplementedError(f"{isa.OPCODE_NAMES[op]} on the flit-level model")
        ctx.pc, ctx.due = nxt, t + cycles
        return moved

    def candidate(ctx, t):
        """The outputs this input requests at t (two for a teed input), or None (spec, step 2)."""
        if ctx.bound is None:  # bound in step 1 of a cycle <= t, so "bound from a cycle <= t" always holds
            return None
        o, vc = ctx.bound
        flit = front(ctx)
        if flit is None or flit.usable > t:
            return None
        assert flit.packet is ctx.packet
        if circuit and ctx.injection and flit.index > 0 and (flit.packet.ack_at is None or flit.packet.ack_at > t):
            return None
        if busy_until[(ctx.node, o)] > t:
            return None
        if o < P:
            down = buffers[(nbr[ctx.node][o], o, vc)]
            if len(down.flits) >= B or down.freed[down.written % B] > t - C:
                return None
        if ctx.tee is None:
            return (o,)
        if busy_until[(ctx.node, ctx.tee)] > t:
            return None
        return (o, ctx.tee)

    def consume(packet, index, v, t, delivers):
        """An ejection output of node v consumed flit `index` of the packet at t."""
        packet.ejected += 1
        if index < packet.n_flits - 1:
            return
        at = t + ejection_delay
        copies.append((packet.uid, v, at))
        if delivers:
            assert packet.uid not in delivered, f"packet {packet.uid} delivered twice"
            delivered[packet.uid] = at
            fire(TRIGGER_DELIVERED, packet, packet.src, at)
        fire(TRIGGER_COPY, packet, v, at)

    def grant(ctx, t):
        v, (o, vc) = ctx.node, ctx.bound
        if ctx.injection:
            packet = ctx.packet
            flit = Flit(packet, packet.sent, t, None)
            packet.sent += 1
        else:
            buf = buffers[(v, ctx.phys, ctx.vc)]
            flit = buf.flits.popleft()
            buf.freed[flit.slot] = t
        packet = flit.packet
        busy_until[(v, o)] = t + k
        tail = flit.index == packet.n_flits - 1
        if o < P:
            down = buffers[(nbr[v][o], o, vc)]
            slot = down.written % B
            down.flits.append(Flit(packet, flit.index, t + lk, slot))
            down.freed[slot] = OCCUPIED
            down.written += 1
            assert len(down.flits) <= B
        else:
            consume(packet, flit.index, v, t, delivers=True)
        if ctx.tee is not None:
            busy_until[(v, ctx.tee)] = t + k
            consume(packet, flit.index, v, t, delivers=False)
        if tail:
            release(ctx, t, t + params.vc_reuse)
            ctx.tail_at = t
            if ctx.injection:
                fire(TRIGGER_SENT, packet, v, t + k)

    def start(ctx, t):
        if ctx.injection:
            if ctx.taken is None:
                return False
            assert ctx.start_at >= t, "an injection context missed its start"
            if ctx.start_at > t:
                return False
            ctx.packet, ctx.taken, ctx.start_at = ctx.taken, None, None
        else:
            flit = front(ctx)
            if flit is None or flit.usable > t or ctx.idle_from > t:
                return False
            assert flit.index == 0, "an idle input with a packet's body at its front"
            ctx.packet = flit.packet
        ctx.due, ctx.tail_at, ctx.probe_gone, ctx.waiting_for_tail = t, None, False, False
        ctx.pc = microprogram.entry_inject if ctx.injection else microprogram.entry_receive
        return True

    # ---- the cycles ---------------------------------------------------------------------------------------
    t, last_progress = 0, 0
    # until every packet is delivered and every context has run its last instruction (its done)
    while len(delivered) < len(all_packets) or any(c.packet is not None for c in contexts):
        if t > max_cycles:
            raise RuntimeError(f"the reference model did not finish within {max_cycles} cycles")
        active = any(c.packet is not None for c in contexts) or any(b.flits for b in buffers.values())
        if not active:  # an empty network: skip to the next start of an injection context or creation
            upcoming = [c.start_at for c in contexts if c.taken is not None] + [cy for cy, _ in fixed[:1]] \
                + [cy for cy, _, _ in births[:1]] + list(events)
            if not upcoming:
                raise ReferenceStuck(t, sorted(u for u in all_packets if u not in created),
                                     sorted(u for u in created if u not in delivered))
            t = max(t, min(upcoming))
            last_progress = t
        elif t - last_progress >= DEADLOCK_CYCLES:
            raise ReferenceDeadlock(t)
        # Packets created at t join their source's queue (in the kernel's order, `arrivals`).
        arrivals(t)
        # Heads that are usable at the front of idle inputs start their contexts first, so that a context
        # started at a executes its first instruction in step 1 of cycle a.
        for ctx in contexts:
            if ctx.packet is None and start(ctx, t):
                last_progress = t
        # Step 1: contexts, in node then input order. An instruction of no cycles (flow.context_turnaround:
        # immediate's wait_tail and done) is followed by the next in the same step, and a context freed by it
        # starts on its next packet there and then, in its place in the order.
        for ctx in contexts:
            while ctx.packet is not None and ctx.due == t:
                if execute(ctx, t):
                    last_progress = t
                if ctx.packet is None and params.immediate_turnaround and start(ctx, t):
                    last_progress = t
        # Step 2: separable input-first allocation, decided on the state before any grant of this cycle. A
        # teed input requests its link output, and, once that picked it, its ejection output too; it is
        # granted only if both pick it, and a link output whose pick is not granted sends nothing.
        winners = []
        for v in range(n_nodes):
            picks = {}  # physical input -> (context, outputs)
            for phys in range(P + NP):
                group = by_phys[v][phys]
                for i in range(len(group)):
                    ctx = group[(ptr_in[v][phys] + i) % len(group)]
                    outputs = candidate(ctx, t)
                    if outputs is not None:
                        picks[phys] = (ctx, outputs)
                        break
            chosen = {}  # output -> the physical input it picks

            def asks(phys, o):
                outputs = picks[phys][1]
                if outputs[0] == o:
                    return True  # its only output, or a teed input's link
                return len(outputs) == 2 and outputs[1] == o and chosen.get(outputs[0]) == phys

            for o in range(P + NP):  # the links (0..P-1) before the ejection channels
                for i in range(P + NP):
                    phys = (ptr_out[v][o] + i) % (P + NP)
                    if phys in picks and asks(phys, o):
                        chosen[o] = phys
                        break
            for phys, (ctx, outputs) in picks.items():
                if all(chosen.get(o) == phys for o in outputs):
                    winners.append(ctx)
                    for o in outputs:
                        ptr_out[v][o] = (phys + 1) % (P + NP)
                    ptr_in[v][phys] = (ctx.vc + 1) % len(by_phys[v][phys])
        for ctx in winners:
            grant(ctx, t)
            last_progress = t
        t += 1

    assert all(owner_ctx is None for owner_ctx in owner.values()), "an output VC still owned at the end"
    assert all(c.bound is None and c.tee is None for c in contexts), "an input still bound at the end"
    assert all(not b.flits for b in buffers.values()) and not any(queues)
    assert all(c.taken is None for c in contexts)
    assert set(delivered) == set(all_packets) == set(created)
    per_packet = {}
    for uid, _node, _cycle in copies:
        per_packet[uid] = per_packet.get(uid, 0) + 1
    for uid, packet in all_packets.items():
        assert packet.ejected == packet.data_flits * per_packet[uid], f"packet {uid}: flits ejected != flits x copies"
    return Trace(delivered, created, steps, copies, instructions)
