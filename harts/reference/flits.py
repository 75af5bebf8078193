"""Plain-Python model of wormhole and circuit switching, flit by flit and cycle by cycle (MODEL.md, Flow-controlled switching).

It is slow on purpose, so that it can be checked by reading it: every cycle runs the spec's three steps in
the spec's order over dicts and deques. The numba kernel in harts/controller/flits must agree with it on
every packet's delivery cycle. Route offsets are computed here from coordinates, not by the topology's
numba functions, so the two models share as little as possible.
"""

from __future__ import annotations

from collections import deque

from ..controller import isa

DEADLOCK_CYCLES = 10_000
LONG_AGO = -(10 ** 18)  # the cycle an unused buffer slot was "freed"
OCCUPIED = 10 ** 18  # the freeing cycle of a slot holding a flit: it is never "freed by t - C"


class ReferenceDeadlock(RuntimeError):
    def __init__(self, cycle: int):
        super().__init__(f"nothing moved for {DEADLOCK_CYCLES} cycles up to cycle {cycle} with packets undelivered")
        self.cycle = cycle


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
    """circuit.yaml alone in the network. The probe travels as a wormhole head does (same instruction
    counts), so it lands at the destination at A = n_s + 1 + Lk + (h - 1)(2 + Lk). There wait_header (A),
    branch (A + 1), ack (A + 2); the acknowledgment takes 1 + w per hop back, so the first data flit
    leaves the source at A + 2 + h(1 + w). Data flits find every input on the path already bound, so each
    leaves a node in the cycle it lands: h Lk to the destination's ejection (its deliver ran at A + 3),
    then (M - 1)k for the rest and b + k + n_d to the NP."""
    k, lk = params.flit_cycles, params.link_latency
    return (params.np_send + 1 + lk + (hops - 1) * (2 + lk) + 2 + hops * params.ack_hop + hops * lk
            + (flits - 1) * k + params.bus_delay + k + params.deliver)


def route_offsets(topology, src: int, dst: int) -> list[int]:
    """Signed hops per axis, by the conventions of harts/network (axis 0 varies fastest; a hypercube axis
    is a bit, +1 to set it, -1 to clear it; a torus goes the shorter way, the + way when half-way)."""
    if topology.kind == "hypercube":
        return [(dst >> a & 1) - (src >> a & 1) for a in range(topology.n_axes)]
    if topology.kind not in ("mesh", "torus"):
        raise NotImplementedError(f"no reference routes for topology kind {topology.kind!r}")
    out = []
    for side in (int(s) for s in topology.shape):
        delta = dst % side - src % side
        if topology.kind == "torus":
            delta %= side
            if delta > side // 2:
                delta -= side
        out.append(delta)
        src, dst = src // side, dst // side
    return out


class Packet:
    def __init__(self, uid, create, src, dst, flits, offsets, probe):
        self.uid, self.create, self.src, self.dst = uid, create, src, dst
        self.n_flits = flits + (1 if probe else 0)  # index 0 is the head (the probe in circuit switching)
        self.first_offsets = offsets

    def restart(self, ready):
        """(Re)enter the injection queue: fresh header, no flit sent, no path, no acknowledgment."""
        self.ready, self.offsets, self.wrapped = ready, list(self.first_offsets), set()
        self.sent, self.path, self.ack_at = 0, [], None


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
        self.packet = None  # None: idle (from idle_from)
        self.idle_from = 0
        self.pc = self.due = None
        self.bound = None  # (output, vc) the input is bound to; output P is the ejection (vc None)
        self.owned = []  # output VCs (port, vc) this input owns
        self.tail_at = None  # cycle the packet's last flit was granted at this input
        self.probe_gone = False  # the probe was consumed here by ack or nack


def run(topology, microprogram, params, packets, max_cycles=1_000_000) -> dict[int, int]:
    """packets: iterable of (uid, create_cycle, source, destination, flits), flits = M >= 1 data flits
    (circuit switching adds the probe). Returns {uid: cycle the NP has the packet}.

    Raises ReferenceDeadlock(cycle) when, with a context busy or a flit in a link buffer, DEADLOCK_CYCLES
    cycles pass with no flit granted, no context started and no shared instruction taking effect (a forward
    that succeeds, deliver, ack, nack, done). Refused forwards, stalled wait_tails and private instructions
    are not progress, so a probe looping between forward and branch is caught too; while the network is
    empty the count does not run (the model skips ahead to the next packet its source can start)."""
    circuit = microprogram.switching == isa.SWITCHING_CIRCUIT
    if microprogram.switching not in (isa.SWITCHING_WORMHOLE, isa.SWITCHING_CIRCUIT):
        raise ValueError(f"{microprogram.name} is not a wormhole or circuit microprogram")
    code = [[int(x) for x in microprogram.code[:, pc]] for pc in range(microprogram.code.shape[1])]
    n_nodes, P, n_axes = topology.n_nodes, topology.n_ports, topology.n_axes
    V, B, k, lk, C = (params.virtual_channels, params.buffer_flits, params.flit_cycles,
                      params.link_latency, params.credit_delay)
    nbr = topology.neighbours.tolist()
    wrap = topology.wrap_links().tolist()
    has_wrap = any(any(row) for row in wrap)
    escape_vcs = 2 if has_wrap else 1
    policies = {c[isa.CODE_VC] for c in code if c[isa.CODE_OP] == isa.OP_FORWARD}
    if has_wrap and isa.VC_DATELINE in policies and V < 2:
        raise ValueError("vc: dateline on a network with wrap-around links needs 2 or more virtual channels")
    if isa.VC_ESCAPE in policies and V < escape_vcs:
        raise ValueError(f"vc: escape needs {escape_vcs} or more virtual channels on {topology.name}")
    pos, neg = topology.axis_positive.tolist(), topology.axis_negative.tolist()

    links = [(v, p) for v in range(n_nodes) for p in range(P) if nbr[v][p] >= 0]
    assert all(topology.in_port[v][p] == p for v, p in links), "the spec's rule: port p arrives on receiver p"
    owner = {(v, p, c): None for v, p in links for c in range(V)}  # output VC (v, p, c) -> input VC (nbr, p, c)
    buffers = {(nbr[v][p], p, c): InputVC(B) for v, p in links for c in range(V)}
    queues = [deque() for _ in range(n_nodes)]  # injection: whole packets, in (create, uid) order
    busy_until = {(v, o): 0 for v in range(n_nodes) for o in range(P + 1)}
    ptr_in = [[0] * (P + 1) for _ in range(n_nodes)]
    ptr_out = [[0] * (P + 1) for _ in range(n_nodes)]
    contexts = []  # in the spec's order: node, then input number p*V + c, injection P*V last
    by_phys = [[[] for _ in range(P + 1)] for _ in range(n_nodes)]
    for v in range(n_nodes):
        for p in range(P):
            for c in range(V):
                if (v, p, c) in buffers:
                    contexts.append(Context(v, p * V + c, p, c, False))
                    by_phys[v][p].append(contexts[-1])
        contexts.append(Context(v, P * V, P, 0, True))
        by_phys[v][P].append(contexts[-1])
    injector = [by_phys[v][P][0] for v in range(n_nodes)]

    all_packets = {}
    for uid, create, src, dst, flits in sorted(packets, key=lambda q: (q[1], q[0])):
        if uid in all_packets or flits < 1 or src == dst:
            raise ValueError(f"packet {uid}: uids must be unique, flits >= 1 and source != destination")
        packet = Packet(uid, create, src, dst, flits, route_offsets(topology, src, dst), circuit)
        packet.restart(create + params.np_send)
        all_packets[uid] = packet
        queues[src].append(packet)
    delivered = {}

    def front(ctx):
        """The oldest flit of the input as a Flit, or None (injection: the next flit of the queue's head)."""
        if ctx.injection:
            q = queues[ctx.node]
            return Flit(q[0], q[0].sent, q[0].ready, None) if q else None
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
        if policy == isa.VC_DATELINE:
            half = (V + 1) // 2
            return list(range(half, V)) if late else list(range(half))
        if policy == isa.VC_ESCAPE:
            return [late] if has_wrap else [0]
        if policy == isa.VC_ADAPTIVE:
            return list(range(escape_vcs, V))
        raise NotImplementedError(f"vc policy {policy}")

    def forward(ctx, via, policy):
        packet, v = ctx.packet, ctx.node
        assert ctx.bound is None, "a second stream for one packet"
        axes = [a for a in range(n_axes) if packet.offsets[a]]
        if not axes:
            raise RuntimeError(f"packet {packet.uid}: forward with no hop left at node {v}")
        if via == isa.VIA_ADAPTIVE:  # most hops left first; sorted() is stable, so ties go to the lower axis
            axes = sorted(axes, key=lambda a: -abs(packet.offsets[a]))
        elif via == isa.VIA_DIMENSION_ORDER:
            axes = axes[:1]
        else:
            raise NotImplementedError(f"via {via} on the flit-level model")
        for axis in axes:
            port = pos[axis] if packet.offsets[axis] > 0 else neg[axis]
            if nbr[v][port] < 0:
                raise RuntimeError(f"packet {packet.uid}: node {v} has no link on port {port}")
            choices = vc_choices(v, port, axis, packet, policy)
            free = [c for c in choices if owner[(v, port, c)] is None]
            if policy == isa.VC_CIRCUIT:
                taken, vc = (free if len(free) == V else []), 0  # the whole port; flits travel in VC 0
            else:
                taken, vc = free[:1], (free[0] if free else None)
            if taken:
                for c in taken:
                    owner[(v, port, c)] = ctx
                ctx.owned = [(port, c) for c in taken]
                ctx.bound = (port, vc)
                packet.offsets[axis] -= 1 if packet.offsets[axis] > 0 else -1
                if wrap[v][port]:
                    packet.wrapped.add(axis)
                packet.path.append(ctx)
                return True
        return False

    def release(ctx):
        for port, c in ctx.owned:
            assert owner[(ctx.node, port, c)] is ctx
            owner[(ctx.node, port, c)] = None
        ctx.owned, ctx.bound = [], None

    def execute(ctx, t):
        """One instruction at cycle t; True if it changed shared state (for deadlock detection)."""
        col = code[ctx.pc]
        op, arg, target, cycles = col[isa.CODE_OP], col[isa.CODE_ARG], col[isa.CODE_TARGET], col[isa.CODE_CYCLES]
        packet, nxt, moved = ctx.packet, ctx.pc + 1, False
        arrived = not any(packet.offsets)
        if op in (isa.OP_WAIT_HEADER, isa.OP_WAIT):
            pass
        elif op == isa.OP_JUMP:
            nxt = target
        elif op == isa.OP_BRANCH:
            if arg == isa.COND_ARRIVED:
                cond = arrived
            elif arg == isa.COND_LOCAL:
                cond = ctx.injection
            elif arg == isa.COND_SETUP_RETRIES:
                cond = params.circuit_retry
            else:
                raise NotImplementedError("field comparisons: the flit-level microprograms declare no fields")
            if cond != bool(col[isa.CODE_NEGATE]):
                nxt = target
        elif op == isa.OP_FORWARD:
            moved = forward(ctx, arg, col[isa.CODE_VC])
            if not moved:
                if target == isa.RETRY:
                    ctx.due = t + 1  # the same forward, every cycle until it succeeds
                    return False
                nxt = target
        elif op == isa.OP_DELIVER:
            if ctx.injection or not arrived or ctx.bound is not None:
                raise RuntimeError(f"packet {packet.uid}: deliver at node {ctx.node} input {ctx.number}")
            ctx.bound, moved = (P, None), True
        elif op == isa.OP_WAIT_TAIL:
            if ctx.tail_at is None:  # grants happen in step 2, so a tail granted at s is seen here at s + 1
                ctx.due = t + 1
                return False
        elif op == isa.OP_DONE:
            if ctx.bound is not None or (ctx.tail_at is None and not ctx.probe_gone):
                raise RuntimeError(f"packet {packet.uid}: done at node {ctx.node} before its last flit left")
            ctx.packet, ctx.pc, ctx.due, ctx.idle_from = None, None, None, t + cycles
            return True
        elif op in (isa.OP_ACK, isa.OP_NACK):
            if ctx.injection or (op == isa.OP_ACK) != arrived or not circuit:
                raise RuntimeError(f"packet {packet.uid}: {isa.OPCODE_NAMES[op]} at node {ctx.node}")
            consume_probe(ctx, t)
            moved = True
            if op == isa.OP_ACK:
                packet.ack_at = t + len(packet.path) * params.ack_hop
            else:
                # Every port of the partial path frees now (a later context of this same step 1 may claim
                # it); the contexts that forwarded the probe (all stalled in wait_tail) are abandoned and
                # idle from t; the packet never left the head of its source's queue (its tail is unsent).
                for hop in packet.path:
                    release(hop)
                    hop.packet, hop.pc, hop.due, hop.idle_from = None, None, None, t
                packet.restart(t + len(packet.path) * params.ack_hop + params.retry_cycles)
        else:
            raise NotImplementedError(f"{isa.OPCODE_NAMES[op]} on the flit-level model")
        ctx.pc, ctx.due = nxt, t + cycles
        return moved

    def candidate(ctx, t):
        """The output this input requests at t, or None (spec, step 2)."""
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
        return o

    def grant(ctx, t):
        v, (o, vc) = ctx.node, ctx.bound
        if ctx.injection:
            packet = queues[v][0]
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
        elif tail:
            assert packet.uid not in delivered
            delivered[packet.uid] = t + params.bus_delay + k + params.deliver
        if tail:
            release(ctx)
            ctx.tail_at = t
            if ctx.injection:
                queues[v].popleft()

    def start(ctx, t):
        flit = front(ctx)
        if flit is None or flit.usable > t:
            return False
        assert flit.index == 0, "an idle input with a packet's body at its front"
        ctx.packet, ctx.due, ctx.tail_at, ctx.probe_gone = flit.packet, t, None, False
        ctx.pc = microprogram.entry_inject if ctx.injection else microprogram.entry_receive
        return True

    t, last_progress = 0, 0
    while len(delivered) < len(all_packets):
        if t > max_cycles:
            raise RuntimeError(f"the reference model did not finish within {max_cycles} cycles")
        active = any(c.packet is not None for c in contexts) or any(b.flits for b in buffers.values())
        if not active:  # an empty network: skip to the next packet its source can start
            t = max(t, min(max(q[0].ready, injector[v].idle_from) for v, q in enumerate(queues) if q))
            last_progress = t
        elif t - last_progress >= DEADLOCK_CYCLES:
            raise ReferenceDeadlock(t)
        # Heads that are usable at the front of idle inputs start their contexts first, so that a context
        # started at a executes its first instruction in step 1 of cycle a.
        for ctx in contexts:
            if ctx.packet is None and ctx.idle_from <= t and start(ctx, t):
                last_progress = t
        # Step 1: contexts, in node then input order.
        for ctx in contexts:
            if ctx.packet is not None and ctx.due == t and execute(ctx, t):
                last_progress = t
        # Step 2: separable input-first allocation, decided on the state before any grant of this cycle.
        winners = []
        for v in range(n_nodes):
            picks = {}  # physical input -> (context, output)
            for phys in range(P + 1):
                group = by_phys[v][phys]
                for i in range(len(group)):
                    ctx = group[(ptr_in[v][phys] + i) % len(group)]
                    o = candidate(ctx, t)
                    if o is not None:
                        picks[phys] = (ctx, o)
                        break
            for o in range(P + 1):
                for i in range(P + 1):
                    phys = (ptr_out[v][o] + i) % (P + 1)
                    if phys in picks and picks[phys][1] == o:
                        winners.append(picks[phys][0])
                        ptr_out[v][o] = (phys + 1) % (P + 1)
                        ptr_in[v][phys] = (picks[phys][0].vc + 1) % len(by_phys[v][phys])
                        break
        for ctx in winners:
            grant(ctx, t)
            last_progress = t
        t += 1

    assert all(owner_ctx is None for owner_ctx in owner.values()), "an output VC still owned at the end"
    assert all(c.bound is None for c in contexts), "an input still bound at the end"
    assert all(not b.flits for b in buffers.values()) and not any(queues)
    assert set(delivered) == set(all_packets)
    return delivered
