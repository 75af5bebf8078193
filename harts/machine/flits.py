"""Wormhole and circuit switching: one configured machine on the flit-level kernel, ready to run packets.

A microprogram that declares ``switching: wormhole`` or ``switching: circuit`` runs here; MODEL.md (Flow-
controlled switching) gives the rules of every cycle. ``FlitSimulation(config).run(packets)`` returns a
``FlitResult`` with every packet's creation and delivery cycle, after the invariants were checked.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, replace

import numpy as np

from .config import Config
from ..controller import isa
from ..controller.flits import state as S
from ..controller.flits.kernel import run_flits
from ..controller.flits.params import FlitParams
from ..controller.microcode import Microprogram, assemble
from ..controller.records import ROUTE_DESTINATION, ROUTE_SEGMENTS
from ..errors import InputError, SimulationError
from ..network.build import build_topology, node_count, port_count
from .simulation import _gigabytes, _topology_error, available_memory

FLOW_VIAS = (isa.VIA_DIMENSION_ORDER, isa.VIA_ADAPTIVE, isa.VIA_SEGMENT)
ERRORS = {
    S.ERR_NO_ROUTE: "forward with no hop left (the packet has arrived)",
    S.ERR_NO_LINK: "forward onto a port without a link",
    S.ERR_DEADLOCK: "deadlock",
    S.ERR_CYCLE_LIMIT: "the run went past run.drain_cycles after the last packet was created",
    S.ERR_BAD_CONTEXT: "deliver, ack or nack at the injection input",
    S.ERR_TWICE: "a packet was delivered twice",
    S.ERR_OVERFLOW: "a flit was sent into a full buffer",
    S.ERR_STALLED: "nothing left to happen, but packets still wait for their trigger",
    S.ERR_COPY_LOG: "more copies than any route can leave",
}
WAITS_FOR = {S.TRIGGER_COPY: "a copy", S.TRIGGER_SENT: "the send", S.TRIGGER_DELIVERED: "the delivery"}


class DeadlockError(SimulationError):
    """The network stopped with packets in it; ``cycle`` names the channels that wait for each other."""

    def __init__(self, message: str, cycle: list[str]):
        super().__init__(message)
        self.cycle = cycle

    def __reduce__(self):
        # so that a deadlock in a sweep's worker process reaches the parent as itself, not as a broken pool
        return type(self), (str(self), self.cycle)


@dataclass
class Packets:
    """What a run is asked to send: per packet its creation cycle (for a triggered packet: its delay after the
    trigger), source, destination, data flits; optionally its route segments (port, hops, code) and what
    its creation waits for (state.TRIGGER_*, and the parent packet)."""

    create: np.ndarray
    source: np.ndarray
    destination: np.ndarray
    flits: np.ndarray
    segments: np.ndarray  # [packet, slot, (port, hops, code)]; a packet whose first hops is 0 goes by destination
    trigger: np.ndarray
    parent: np.ndarray

    def __len__(self) -> int:
        return len(self.create)


def packets(create, source, destination, flits, segments=None, trigger=None, parent=None) -> Packets:
    arrays = [np.ascontiguousarray(np.atleast_1d(a), dtype=np.int64) for a in (create, source, destination, flits)]
    arrays = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*arrays)]
    n = len(arrays[0])
    segments = np.zeros((n, 0, 3), np.int64) if segments is None else np.ascontiguousarray(segments, np.int64)
    trigger = np.zeros(n, np.int64) if trigger is None else np.ascontiguousarray(trigger, np.int64)
    parent = np.full(n, -1, np.int64) if parent is None else np.ascontiguousarray(parent, np.int64)
    if segments.ndim != 3 or segments.shape[0] != n or segments.shape[2] != 3 or trigger.shape != (n,) or \
            parent.shape != (n,):
        raise ValueError("segments must be [packets, slots, 3]; trigger and parent one value per packet")
    return Packets(*arrays, segments, trigger, parent)


Copies = namedtuple("Copies", ["packet", "node", "cycle"])  # one entry per copy an NP got, in the order they came


@dataclass
class FlitResult:
    topology: object
    params: FlitParams
    sent: Packets
    created: np.ndarray  # cycle each packet was created (a triggered one: when its trigger came, plus its delay)
    delivered: np.ndarray  # cycle the NP has each packet
    step: np.ndarray  # 1, or for a triggered packet its parent's step + 1
    copies: Copies
    hops: np.ndarray  # links each packet's head crossed (its last attempt's, in circuit switching)
    attempts: np.ndarray  # probes sent (circuit switching; 1 otherwise)
    paths: np.ndarray  # [packet, k]: the input entered at hop k (0: the injection channel that sent it)
    output_flits: np.ndarray  # [node, output]: flits sent through each output (P + c: ejection channel c)
    peak_flits: int  # most flits any input VC buffer held
    cycles: int  # the last cycle simulated
    stats: np.ndarray

    @property
    def latency(self) -> np.ndarray:
        return self.delivered - self.created

    def path_nodes(self, k: int) -> list[int]:
        """The nodes packet k's head went through, source first."""
        per_node = self.topology.n_ports * self.params.virtual_channels + self.params.np_channels
        return [int(i) // per_node for i in self.paths[k, : self.hops[k] + 1]]


class FlitSimulation:
    """One configured machine whose microprogram switches by wormhole or circuit."""

    def __init__(self, config: Config, microprogram: Microprogram | None = None):
        self.config = config
        self.microprogram = microprogram or assemble(config.microcode_path())
        program = self.microprogram
        if program.switching == isa.SWITCHING_CUT_THROUGH:
            raise config.error("microcode", f"microprogram {program.name!r} switches by cut-through; the flit-level "
                                            f"model runs 'switching: wormhole' or 'switching: circuit'")
        if program.fields or program.table:
            raise InputError("a flit-level packet carries only its route (offsets or segments): declare no "
                             "header fields or table", program.path)
        op = program.code[isa.CODE_OP]
        for pc in np.nonzero((op == isa.OP_FORWARD) & ~np.isin(program.code[isa.CODE_ARG], FLOW_VIAS))[0]:
            raise InputError("the flit-level model routes by 'via: dimension_order', 'via: adaptive' or "
                             "'via: segment'", program.path, program.source_lines[pc])
        spec = config.topology_spec
        try:
            nodes, ports = node_count(spec), port_count(spec)
        except ValueError as exc:
            raise _topology_error(config, str(exc)) from None
        bpc = config.bytes_per_cycle
        if config["flow.flit_bytes"] % bpc:
            raise config.error("flow.flit_bytes", f"'flow.flit_bytes' ({config['flow.flit_bytes']}) must be a "
                                                  f"multiple of the {bpc} bytes a link moves per cycle")
        channels = config["flow.np_channels"]
        if channels > ports:
            raise config.error("flow.np_channels", f"'flow.np_channels' ({channels}) must be at most the "
                                                   f"{ports} ports of a node (0: all of them)")
        self.params = replace(FlitParams.from_config(config), np_channels=channels or ports)
        vcs = self.params.virtual_channels
        inputs = nodes * (ports * vcs + self.params.np_channels)
        if inputs >= S.KEY_SPAN:
            raise config.error("topology", f"{inputs:,} input VCs; the flit-level kernel takes at most "
                                           f"{int(S.KEY_SPAN) - 1:,}")
        needed = inputs * (S.IN_ROWS + 4 * self.params.buffer_flits + 6) * 8
        available = available_memory()
        if needed > 0.8 * available:
            raise config.error("flow.buffer_flits", f"{inputs:,} input VCs of {self.params.buffer_flits} flits need "
                                                    f"about {_gigabytes(needed)}; {_gigabytes(available)} is available")
        self.topology = build_topology(spec)
        topo = self.topology
        self.wraps = topo.wrap_links()
        has_wraps = bool(self.wraps.any())
        self.escapes = 2 if has_wraps else 1
        uses = set(program.code[isa.CODE_VC, op == isa.OP_FORWARD].tolist())
        if isa.VC_ADAPTIVE in uses and vcs <= self.escapes:
            raise config.error("flow.virtual_channels", f"{program.name!r} routes adaptively above "
                                                        f"{self.escapes} escape VC(s) on {topo.name}: it needs "
                                                        f"'flow.virtual_channels' >= {self.escapes + 1}, got {vcs}")
        halves = {isa.VC_LOWER, isa.VC_UPPER} & uses
        if halves and vcs < 2:
            raise config.error("flow.virtual_channels", f"{program.name!r} splits the VCs into a lower and an upper "
                                                        f"half: it needs 'flow.virtual_channels' >= 2, got {vcs}")
        if isa.VC_DATELINE in uses and has_wraps and vcs < 2:
            raise config.error("flow.virtual_channels", f"{program.name!r} separates VCs at the dateline on "
                                                        f"{topo.name}: it needs 'flow.virtual_channels' >= 2, "
                                                        f"got {vcs}")
        self.port_axis = np.full(topo.n_ports, 0, np.int64)
        self.port_axis[topo.axis_positive] = np.arange(topo.n_axes)
        self.port_axis[topo.axis_negative] = np.arange(topo.n_axes)
        self.class_split = -(-vcs // 2) if has_wraps and vcs >= 2 else vcs

    def _params(self, last_cycle: int) -> np.ndarray:
        p = np.zeros(S.PR_ROWS, np.int64)
        f = self.params
        c = self.config
        p[S.PR_PORTS] = self.topology.n_ports
        p[S.PR_VCS] = f.virtual_channels
        p[S.PR_DEPTH] = f.buffer_flits
        p[S.PR_FLIT_CYCLES] = f.flit_cycles
        p[S.PR_LINK_LATENCY] = f.link_latency
        p[S.PR_CREDIT_DELAY] = f.credit_delay
        p[S.PR_ACK_HOP] = f.ack_hop
        p[S.PR_NP_SEND] = f.np_send
        p[S.PR_EJECT_DELAY] = f.bus_delay + f.flit_cycles + f.deliver
        p[S.PR_ENTRY_RECEIVE] = self.microprogram.entry_receive
        p[S.PR_ENTRY_INJECT] = self.microprogram.entry_inject
        p[S.PR_AXES] = self.topology.n_axes
        p[S.PR_CIRCUIT] = self.microprogram.switching == isa.SWITCHING_CIRCUIT
        p[S.PR_SETUP_RETRIES] = f.circuit_retry
        p[S.PR_RETRY_CYCLES] = f.retry_cycles
        p[S.PR_DEADLOCK_CYCLES] = c["run.deadlock_cycles"]
        p[S.PR_LAST_CYCLE] = last_cycle
        p[S.PR_ESCAPES] = self.escapes
        p[S.PR_CLASS_SPLIT] = self.class_split
        p[S.PR_PAUSE_AT] = S.NEVER
        p[S.PR_NP_CHANNELS] = f.np_channels
        p[S.PR_HALF] = -(-f.virtual_channels // 2)
        p[S.PR_SEGMENT_WORD] = self.topology.n_axes
        p[S.PR_SEGMENTS] = self.microprogram.segments
        return p

    def run(self, sent: Packets, progress=None) -> FlitResult:
        """Run the packets to delivery; check the invariants. ``progress(cycle)`` is called between slices."""
        topo = self.topology
        f = self.params
        n = len(sent)
        self._check_packets(sent)
        circuit = self.microprogram.switching == isa.SWITCHING_CIRCUIT
        ports, vcs, depth, channels = topo.n_ports, f.virtual_channels, f.buffer_flits, f.np_channels
        span = ports + channels
        per_node = ports * vcs + channels
        inputs_count = topo.n_nodes * per_node
        fixed = sent.trigger == S.TRIGGER_NONE
        last_create = int(sent.create[fixed].max()) if fixed.any() else 0
        params = self._params(last_create + self.config["run.drain_cycles"])
        node, local = np.divmod(np.arange(inputs_count, dtype=np.int64), per_node)
        injection = local >= ports * vcs
        channel = np.where(injection, local - ports * vcs, 0)
        port = np.where(injection, 0, local // vcs)
        row = node * span + np.where(injection, ports + channel, port)
        links = topo.neighbours >= 0
        downstream = np.where(links, topo.neighbours * per_node + topo.in_port * vcs, -1).reshape(-1)
        machine = S.Machine(np.ascontiguousarray(self.microprogram.code), params, topo.neighbours, topo.in_port,
                            topo.axis_positive, topo.axis_negative, self.port_axis,
                            np.ascontiguousarray(self.wraps, dtype=np.int64), node, row,
                            np.where(injection, 0, local % vcs), injection.astype(np.int64),
                            np.where(injection, -1, ports + port % channels),
                            np.ascontiguousarray(downstream, dtype=np.int64))
        buffers = S.Buffers(np.full((inputs_count, depth), -1, np.int64), np.full((inputs_count, depth), -1, np.int64),
                            np.zeros((inputs_count, depth), np.int64), np.full((inputs_count, depth), S.EARLY))
        table = np.zeros((inputs_count, S.IN_ROWS), np.int64)
        for column in (S.IN_OUT, S.IN_WAIT_FOR, S.CX_PKT, S.CX_TAIL_AT, S.IN_TEE):
            table[:, column] = -1
        port_rows = np.zeros((topo.n_nodes * span, S.PT_ROWS), np.int64)
        port_rows[:, S.PT_QUEUE_HEAD] = -1
        port_rows[:, S.PT_QUEUE_TAIL] = -1
        switch = S.Switch(table, port_rows, np.full(topo.n_nodes * ports * vcs, -1, np.int64))
        packets_, pk, reach = self._packet_tables(sent, circuit)
        stats = np.zeros(S.ST_ROWS, np.int64)
        stats[S.ST_TIME] = int(sent.create[fixed].min()) if fixed.any() else 0
        order = np.nonzero(fixed)[0]
        order = order[np.argsort(sent.create[order], kind="stable")].astype(np.int64)
        rows = topo.n_nodes * span
        run = S.Run(stats, np.zeros(4 * inputs_count + 16, np.int64), np.zeros(max(n, 1), np.int64),
                    np.zeros(inputs_count, np.int64), np.full(rows, -1, np.int64), np.full(rows, -1, np.int64),
                    np.zeros(rows, np.int64), np.zeros(2 * rows, np.int64), order,
                    np.zeros((self._copy_room(reach, n), 3), np.int64))
        if n:
            slice_cycles = 20_000
            while True:
                params[S.PR_PAUSE_AT] = stats[S.ST_TIME] + slice_cycles if progress else S.NEVER
                run_flits(machine, buffers, switch, packets_, run)
                if stats[S.ST_ERROR] != 0 or stats[S.ST_DELIVERED] == n:
                    break
                progress(int(stats[S.ST_TIME]))
        if stats[S.ST_ERROR] != 0:
            self._raise(stats, switch, pk[:n], sent)
        logged = run.copies[: stats[S.ST_COPIES]]
        result = FlitResult(topo, f, sent, pk[:n, S.PK_CREATE].copy(), pk[:n, S.PK_DELIVERED].copy(),
                            pk[:n, S.PK_STEP].copy(), Copies(*(logged[:, j].copy() for j in range(3))),
                            pk[:n, S.PK_HOPS].copy(), pk[:n, S.PK_ATTEMPTS].copy(), packets_.path[:n],
                            port_rows[:, S.PT_FLITS].reshape(topo.n_nodes, span).copy(), int(stats[S.ST_PEAK]),
                            int(stats[S.ST_TIME]), stats)
        self._check(result, switch, pk[:n], circuit)
        return result

    def _copy_room(self, reach: int, n: int) -> int:
        """Copies a run can make: one per packet, or with tees one per node a packet's head can reach."""
        if not (self.microprogram.code[isa.CODE_OP] == isa.OP_TEE).any():
            return max(n, 1)
        return max(reach, 1)

    def _check_packets(self, sent: Packets) -> None:
        topo = self.topology
        n = len(sent)
        if not n:
            return
        if sent.source.min() < 0 or sent.source.max() >= topo.n_nodes or sent.destination.min() < 0 \
                or sent.destination.max() >= topo.n_nodes:
            raise ValueError(f"node out of range 0..{topo.n_nodes - 1}")
        if (sent.source == sent.destination).any() or sent.flits.min() < 1 or sent.create.min() < 0:
            raise ValueError("every packet needs a destination other than its source, >= 1 flit, creation "
                             "(or delay) >= 0")
        routed = sent.segments[:, 0, 1] > 0 if sent.segments.shape[1] else np.zeros(n, bool)
        if sent.segments.shape[1] > self.microprogram.segments and routed.any():
            raise ValueError(f"packets have up to {sent.segments.shape[1]} segments; {self.microprogram.name!r} "
                             f"declares {self.microprogram.segments}")
        if routed.any():
            seg = sent.segments[routed]
            if seg[..., 0].min() < 0 or seg[..., 0].max() >= topo.n_ports or seg[..., 1].min() < 0 \
                    or seg[..., 2].min() < 0:
                raise ValueError("segments need ports 0..P-1, hops >= 0 and codes >= 0")
        triggered = sent.trigger != S.TRIGGER_NONE
        if not np.isin(sent.trigger, (S.TRIGGER_NONE, S.TRIGGER_COPY, S.TRIGGER_SENT, S.TRIGGER_DELIVERED)).all():
            raise ValueError("trigger must be TRIGGER_NONE, TRIGGER_COPY, TRIGGER_SENT or TRIGGER_DELIVERED")
        parents = sent.parent[triggered]
        if triggered.any():
            if n >= S.KEY_SPAN:
                raise ValueError(f"a run with triggered packets holds at most {int(S.KEY_SPAN) - 1:,} packets")
            if parents.min() < 0 or parents.max() >= n or (parents == np.nonzero(triggered)[0]).any():
                raise ValueError("a triggered packet's parent must be another packet of the run")
            own = np.isin(sent.trigger, (S.TRIGGER_SENT, S.TRIGGER_DELIVERED))
            if (sent.source[own] != sent.source[sent.parent[own]]).any():
                raise ValueError("a packet waiting for its parent to be sent or delivered must have the parent's source")

    def _packet_tables(self, sent: Packets, circuit: bool):
        """The kernel's packet bundle (the table, headers: route offsets, then the segment index and slots;
        the path log; the children of each packet, CSR), the table, and how many nodes the heads can reach."""
        topo = self.topology
        n = len(sent)
        slots = self.microprogram.segments
        axes = topo.n_axes
        routed = sent.segments[:, 0, 1] > 0 if sent.segments.shape[1] else np.zeros(n, bool)
        offsets = topo.route_offsets(sent.source, sent.destination) if n else np.zeros((0, axes), np.int64)
        hops = np.abs(offsets).sum(axis=1)
        if routed.any():
            hops = np.where(routed, sent.segments[:, :, 1].sum(axis=1), hops)
        longest = int(hops.max()) if n else 0
        pk = np.zeros((max(n, 1), S.PK_ROWS), np.int64)
        pk[:n, S.PK_SOURCE] = sent.source
        pk[:n, S.PK_DEST] = sent.destination
        pk[:n, S.PK_FLITS] = sent.flits + (1 if circuit else 0)
        triggered = sent.trigger != S.TRIGGER_NONE
        pk[:n, S.PK_CREATE] = np.where(triggered, S.NEVER, sent.create)
        pk[:n, S.PK_DELAY] = np.where(triggered, sent.create, 0)
        pk[:n, S.PK_TRIGGER] = sent.trigger
        pk[:n, S.PK_STEP] = 1
        pk[:n, S.PK_ROUTE] = np.where(routed, ROUTE_SEGMENTS, ROUTE_DESTINATION)
        pk[:, S.PK_DELIVERED] = -1
        pk[:, S.PK_ACKED] = S.NEVER
        pk[:, S.PK_ATTEMPTS] = 1
        header = np.zeros((max(n, 1), axes + 1 + 3 * slots), np.int64)
        header[:n, :axes] = np.where(routed[:, None], 0, offsets)
        if routed.any():
            given = sent.segments.shape[1]
            header[:n, axes + 1: axes + 1 + 3 * given] = np.where(routed[:, None], sent.segments.reshape(n, -1), 0)
        children = np.nonzero(triggered)[0]
        children = children[np.argsort(sent.parent[children], kind="stable")].astype(np.int64)
        child_start = np.searchsorted(sent.parent[children], np.arange(n + 1)).astype(np.int64)
        packets_ = S.Packets(pk, header, header.copy(), np.full((max(n, 1), longest + 1), -1, np.int64),
                             child_start, np.ascontiguousarray(children))
        return packets_, pk, int(hops.sum()) + n

    def describe_input(self, i: int) -> str:
        topo = self.topology
        vcs = self.params.virtual_channels
        per_node = topo.n_ports * vcs + self.params.np_channels
        node, local = divmod(int(i), per_node)
        where = f"node {node} {topo.coordinates(node)}"
        if local >= topo.n_ports * vcs:
            channel = local - topo.n_ports * vcs
            return f"{where} injection" + (f" channel {channel}" if self.params.np_channels > 1 else "")
        port, vc = divmod(local, vcs)
        return f"{where} receiver {topo.port_names[port]} VC {vc}"

    def _raise(self, stats, switch, pk, sent) -> None:
        error = int(stats[S.ST_ERROR])
        cycle = int(stats[S.ST_TIME])
        if error == S.ERR_DEADLOCK:
            channels = self.waiting_cycle(switch)
            raise DeadlockError(f"deadlock at cycle {cycle}: no flit moved for {self.config['run.deadlock_cycles']} "
                                f"cycles; waiting cycle: {' -> '.join(channels)}", channels)
        where = ""
        if error in (S.ERR_NO_ROUTE, S.ERR_NO_LINK, S.ERR_BAD_CONTEXT):
            where = f" at {self.describe_input(stats[S.ST_ERROR_INPUT])}, " \
                    f"{self.microprogram.describe(int(stats[S.ST_ERROR_PC]))}"
        elif error == S.ERR_STALLED:
            waiting = np.nonzero(pk[:, S.PK_CREATE] == S.NEVER)[0]
            shown = ", ".join(f"packet {k} (waits for {WAITS_FOR[int(sent.trigger[k])]} of packet {sent.parent[k]}, "
                              f"at node {sent.source[k]})" for k in waiting[:3])
            where = f": {len(waiting)} never created, e.g. {shown}"
        raise SimulationError(f"cycle {cycle}: {ERRORS[error]}{where}")

    def waiting_cycle(self, switch) -> list[str]:
        """The channels of a deadlock, each waiting for the next: follow every waiting input's recorded wait
        (a full downstream VC, or the owner of the VC it asked for) until an input repeats."""
        inputs = switch.inputs
        waits = inputs[:, S.IN_WAIT_FOR]
        busy = (inputs[:, S.CX_PKT] >= 0) & (waits >= 0)
        for start in np.nonzero(busy)[0]:
            seen: dict[int, int] = {}
            walk = []
            i = int(start)
            while i >= 0 and i not in seen and busy[i]:
                seen[i] = len(walk)
                walk.append(i)
                i = int(waits[i])
            if i in seen:
                loop = walk[seen[i]:] + [i]
                return [self.describe_input(j) for j in loop]
        return ["(no cycle found among the waiting inputs)"]

    def _check(self, result: FlitResult, switch, pk, circuit: bool) -> None:
        """The invariants of every run (MODEL.md): each packet delivered once after its creation, every flit
        ejected once per copy, no buffer above its depth, every VC released and every buffer empty at the end."""
        n = len(result.sent)
        problems = []
        if (result.delivered < 0).any():
            problems.append(f"{int((result.delivered < 0).sum())} packets undelivered")
        if n and (result.delivered <= result.created).any():
            problems.append("a packet delivered no later than it was created")
        if (pk[:, S.PK_EJECTED] != result.sent.flits * pk[:, S.PK_COPIES]).any():
            problems.append("a packet's data flits were not each ejected once per copy")
        if int(result.stats[S.ST_EJECTED]) != int((result.sent.flits * pk[:, S.PK_COPIES]).sum()):
            problems.append("flits ejected differ from flits sent times copies")
        if len(result.copies.packet) != int(pk[:, S.PK_COPIES].sum()):
            problems.append("the copy log differs from the copies counted per packet")
        if result.peak_flits > self.params.buffer_flits:
            problems.append(f"a buffer held {result.peak_flits} flits, above its depth {self.params.buffer_flits}")
        if (switch.owner >= 0).any():
            problems.append(f"{int((switch.owner >= 0).sum())} VCs still owned (paths not released)")
        if (switch.inputs[:, S.IN_COUNT] != 0).any() or (switch.inputs[:, S.IN_OUT] >= 0).any():
            problems.append("flits left in buffers or inputs still bound")
        # (a circuit's probes may cross links several times before the last attempt's path)
        if not circuit and result.output_flits[:, : self.topology.n_ports].sum() != int(
                (result.sent.flits * result.hops).sum()):
            problems.append("link flit count differs from flits x hops")
        if problems:
            raise SimulationError("invariant violated: " + "; ".join(problems))


def config_packets(config: Config, sim: FlitSimulation) -> Packets:
    """The packets a config asks for: its explicit `traffic.packets` (lengths in bytes, made whole flits) and
    its synthetic traffic (`traffic.synthetic.*` for `run.cycles` cycles, seed `run.seed`)."""
    from .patterns import synthetic_packets
    from .traffic import _records

    topo = sim.topology
    n = topo.n_nodes
    explicit = _records(config, "traffic.packets", {"cycle": (0, 2**40), "source": (0, n - 1),
                                                    "destination": (0, n - 1), "length": (1, 2**40)})
    for src, dst, item in zip(explicit["source"], explicit["destination"], explicit["item"]):
        if src == dst:
            raise item.error("a packet's source and destination must differ")
    create = list(explicit["cycle"])
    source = list(explicit["source"])
    destination = list(explicit["destination"])
    flits = [sim.params.flits(length) for length in explicit["length"]]
    rate = config["traffic.synthetic.rate"]
    if rate > 0:
        hotspots = config["traffic.synthetic.hotspot_nodes"].plain()
        if any(not isinstance(v, int) or not 0 <= v < n for v in hotspots):
            raise config.error("traffic.synthetic.hotspot_nodes", f"hotspot nodes must be nodes 0..{n - 1}, "
                                                                  f"got {hotspots}")
        size = config["traffic.synthetic.packet_flits"]
        try:
            made = synthetic_packets(topo, config["traffic.synthetic.pattern"], rate, size, config["run.cycles"],
                                     config["run.seed"], hotspot_nodes=hotspots or None,
                                     hotspot_fraction=config["traffic.synthetic.hotspot_fraction"])
        except ValueError as exc:
            raise config.error("traffic.synthetic.pattern", str(exc)) from None
        create += made[0].tolist()
        source += made[1].tolist()
        destination += made[2].tolist()
        flits += [size] * len(made[0])
    order = np.argsort(np.asarray(create, np.int64), kind="stable")
    return packets(*(np.asarray(a, np.int64)[order] for a in (create, source, destination, flits)))


def run_config(config: Config, progress: bool = False) -> dict:
    """`harts run` for a wormhole or circuit microprogram: the summary of the config's traffic."""
    sim = FlitSimulation(config)
    sent = config_packets(config, sim)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=int(sent.create.max()) if len(sent) else 0, unit="cycle", leave=False)
    result = sim.run(sent, progress=(lambda cycle: bar.update(min(cycle, bar.total) - bar.n)) if bar else None)
    if bar:
        bar.close()
    measured = sent.create >= config["run.warmup_cycles"]
    latency = result.latency[measured]
    n = sim.topology.n_nodes
    span = max(int(sent.create.max()) + 1 - config["run.warmup_cycles"], 1) if len(sent) else 1
    return {
        "topology": sim.topology.name, "nodes": n, "microcode": config["microcode"],
        "switching": {isa.SWITCHING_WORMHOLE: "wormhole", isa.SWITCHING_CIRCUIT: "circuit"}[sim.microprogram.switching],
        "virtual_channels": sim.params.virtual_channels, "buffer_flits": sim.params.buffer_flits,
        "packets": len(sent), "packets_measured": int(measured.sum()),
        "offered_flits_per_node_cycle": float(sent.flits[measured].sum() / (n * span)),
        "latency_mean_cycles": float(latency.mean()) if len(latency) else None,
        "latency_p99_cycles": float(np.percentile(latency, 99)) if len(latency) else None,
        "latency_max_cycles": int(latency.max()) if len(latency) else None,
        "mean_hops": float(result.hops.mean()) if len(sent) else None,
        "probes_per_packet": float(result.attempts.mean()) if len(sent) else None,
        "peak_buffer_flits": result.peak_flits, "cycles": result.cycles,
        "flits_granted": int(result.stats[S.ST_GRANTS]), "microinstructions": int(result.stats[S.ST_INSTRUCTIONS]),
    }
