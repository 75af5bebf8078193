"""Wormhole and circuit switching on the flit-level kernel: the machine ``Simulation(config)`` is when the
microprogram declares ``switching: wormhole`` or ``switching: circuit``.

It runs the same traffic and NP programs as the cut-through kernel, applies the same faults, keeps the same
delivery, packet and hop logs and returns the same Result; MODEL.md (Flow-controlled switching) gives the
rules of every cycle. The tables are allocated once per run and grown when the kernel asks; the kernel
returns whenever a pool needs to grow, a log needs draining, more traffic is due, or a slice of simulated
time has passed.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..controller import isa, lines
from ..controller import observations as O
from ..controller import records as R
from ..controller.divider import node_divider
from ..controller.flits import state as S
from ..controller.flits.kernel import compiled_flit_kernel, flit_kernel_is_cached
from ..controller.flits.params import FlitParams
from ..controller.flits.wheel import wheel_words
from ..errors import InputError, SimulationError
from ..faults.fault_set import FaultSet
from ..np.program import MAX_SENDS, S_HEADER
from .invariants import RunChecks
from .results import FlitNetwork, Recorder, Result
from .simulation import (
    LOG_ROWS,
    Lookahead,
    Simulation,
    Slices,
    first_log_rows,
    keep_freed_memory,
    kernel_load_notice,
    progress_bar,
)
from .traffic import Traffic, TrafficSource

FLOW_VIAS = (isa.VIA_DIMENSION_ORDER, isa.VIA_ADAPTIVE, isa.VIA_SEGMENT)
ERRORS = {
    S.ERR_NO_ROUTE: "forward with no hop left (the packet has arrived)",
    S.ERR_NO_LINK: "forward onto a port without a link",
    S.ERR_DEADLOCK: "deadlock",
    S.ERR_CYCLE_LIMIT: "the run went past run.drain_cycles after the last packet was created",
    S.ERR_BAD_CONTEXT: "deliver, ack or nack at the injection input",
    S.ERR_TWICE: "a packet was delivered twice",
    S.ERR_OVERFLOW: "a flit was sent into a full buffer",
    S.ERR_STALLED: "packets are in flight but nothing is left to happen",
    S.ERR_TOO_MANY_SENDS: "an NP procedure returned more sends than fit",
    S.ERR_BAD_SEND: "an NP procedure sent what the flit-level controller cannot: it routes by destination or by "
                    "segments (not by direction or table), a length of at least one byte, to another node",
    S.ERR_CYCLE_RANGE: "the run reached a cycle the flit-level kernel's input and buffer rows cannot hold",
    S.ERR_LOOP: "the microprogram loops for ever: on one packet it came back to an instruction through branch, "
                "jump, wait_header, wait and wait_tail (its tail through) alone, which change nothing the next round "
                "reads",
}


class DeadlockError(SimulationError):
    """The network stopped with packets in it; ``cycle`` names the channels that wait for each other."""

    def __init__(self, message: str, cycle: list[str]):
        super().__init__(message)
        self.cycle = cycle

    def __reduce__(self):
        # so that a deadlock in a sweep's worker process reaches the parent as itself, not as a broken pool
        return type(self), (str(self), self.cycle)


class LivelockError(SimulationError):
    """Circuit set-ups kept being refused and retried with none acknowledged; ``circuits`` names the packets whose
    circuits refuse each other in turn."""

    def __init__(self, message: str, circuits: list[str]):
        super().__init__(message)
        self.circuits = circuits

    def __reduce__(self):
        return type(self), (str(self), self.circuits)


def memory_estimate(inputs: int, nodes: int, span: int, depth: int, words: int, records: int) -> int:
    """Bytes the machine's tables take: per input VC its row and buffer (S.ROW_DTYPE), its visit and registers, and
    (at most one per input VC) an output VC's owner and reusable cycle; per node its NP row and its `span` port rows
    (links and NP channels); the packet and event pools; the logs. (The allocator's choices, two per port of one
    router, are left out.)"""
    narrow = S.input_columns(depth) * np.dtype(S.ROW_DTYPE).itemsize
    per_input = S.VI_COLUMNS + words + 2
    per_node = S.ND_ROWS + span * S.PT_ROWS + 8
    pools = records * (S.PK_COLUMNS + 2 * words + 3) + records * (R.E_HEADER + words)
    logs = LOG_ROWS * (R.DL_ROWS + words + R.PL_ROWS)
    return inputs * narrow + 8 * (inputs * per_input + nodes * per_node + pools + logs)


# most packet records a pool starts with room for (about 0.4 GB of address space); beyond, it grows
POOL_RESERVE_LIMIT = 1 << 20
# packets a livelock report names when their refusals close no cycle
LISTED_CIRCUITS = 8


class FlitSimulation(Simulation):
    """One configured machine whose microprogram switches by wormhole or circuit."""

    kernel = "flit"

    def __init__(self, config, microprogram=None, program=None):
        super().__init__(config, microprogram, program)
        code = self.microprogram
        if code.switching == isa.SWITCHING_CUT_THROUGH:
            raise config.error("microcode", f"microprogram {code.name!r} switches by cut-through; the flit-level "
                                            f"model runs 'switching: wormhole' or 'switching: circuit'")
        if code.fields or code.table:
            raise InputError("a flit-level packet carries only its route (offsets or segments) and the NP "
                             "program's words: declare no header fields or table", code.path)
        op = code.code[isa.CODE_OP]
        for pc in np.nonzero((op == isa.OP_FORWARD) & ~np.isin(code.code[isa.CODE_ARG], FLOW_VIAS))[0]:
            raise InputError("the flit-level model routes by 'via: dimension_order', 'via: adaptive' or "
                             "'via: segment'", code.path, code.source_lines[pc])
        nodes, ports = self.nodes, self.ports
        bpc = config.bytes_per_cycle
        if config["flow.flit_bytes"] % bpc:
            raise config.error("flow.flit_bytes", f"'flow.flit_bytes' ({config['flow.flit_bytes']}) must be a "
                                                  f"multiple of the {bpc} bytes a link moves per cycle")
        channels = config["flow.np_channels"]
        if channels > ports:
            raise config.error("flow.np_channels", f"'flow.np_channels' ({channels}) must be at most the "
                                                   f"{ports} ports of a node (0: all of them)")
        self.params = replace(FlitParams.from_config(config), np_channels=channels or ports)
        if ports + self.params.np_channels > 64:
            # the allocator keeps a router's physical inputs and outputs as bits of one word
            raise config.error("flow.np_channels", f"{ports} link ports and {self.params.np_channels} NP channels "
                                                   f"a node: the flit-level kernel takes at most 64 together")
        if self.params.credit_delay < 1:
            # a slot freed in a cycle's switch allocation is credited to the grants of a later cycle
            raise config.error("timing.credit_delay_cycles", "timing.credit_delay_cycles 0 with "
                                                             "timing.link_delay_cycles 0: a credit needs at least 1 "
                                                             "cycle to come back")
        if self.params.credit_delay > S.MAX_DELAY:
            # the buffer slots hold cycles in 32 bits: a slot never used must have its credit back from cycle 0
            raise config.error("timing.link_delay_cycles", f"a link delay of {self.params.link_delay:,} cycles; the "
                                                           f"flit-level kernel takes at most {S.MAX_DELAY - 1:,}")
        vcs = self.params.virtual_channels
        # NI: a node's link input VCs and injection contexts (state.py numbers the inputs node * NI + l)
        self.inputs_per_node = ports * vcs + self.params.np_channels * self.params.injection_vcs
        inputs = nodes * self.inputs_per_node
        if inputs >= S.KEY_SPAN:
            raise config.error("topology", f"{inputs:,} input VCs; the flit-level kernel takes at most "
                                           f"{int(S.KEY_SPAN) - 1:,}")
        words = ports + 1 + 3 * code.segments + len(self.program.fields)
        self.refuse_if_too_big(memory_estimate(inputs, nodes, ports + self.params.np_channels, self.params.buffer_flits,
                                               words, self._initial_records(nodes)),
                               "flow.buffer_flits", f"{inputs:,} input VCs of {self.params.buffer_flits} flits")
        self.build()
        topo = self.topology
        self.wraps = topo.wrap_links()
        has_wraps = bool(self.wraps.any())
        self.escapes = 2 if has_wraps else 1
        uses = set(code.code[isa.CODE_VC, op == isa.OP_FORWARD].tolist())
        if isa.VC_ADAPTIVE in uses and vcs <= self.escapes:
            raise config.error("flow.virtual_channels", f"{code.name!r} routes adaptively above "
                                                        f"{self.escapes} escape VC(s) on {topo.name}: it needs "
                                                        f"'flow.virtual_channels' >= {self.escapes + 1}, got {vcs}")
        if {isa.VC_LOWER, isa.VC_UPPER} & uses and vcs < 2:
            raise config.error("flow.virtual_channels", f"{code.name!r} splits the VCs into a lower and an upper "
                                                        f"half: it needs 'flow.virtual_channels' >= 2, got {vcs}")
        if isa.VC_DATELINE in uses and has_wraps and vcs < 2:
            raise config.error("flow.virtual_channels", f"{code.name!r} separates VCs at the dateline on "
                                                        f"{topo.name}: it needs 'flow.virtual_channels' >= 2, "
                                                        f"got {vcs}")
        self.port_axis = np.full(topo.n_ports, 0, np.int64)
        self.port_axis[topo.axis_positive] = np.arange(topo.n_axes)
        self.port_axis[topo.axis_negative] = np.arange(topo.n_axes)
        self.class_split = -(-vcs // 2) if has_wraps and vcs >= 2 else vcs

    @staticmethod
    def _initial_records(nodes: int) -> int:
        return 1024 + 2 * nodes

    def _params(self, faults: FaultSet, hops: bool, counters: bool) -> np.ndarray:
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
        p[S.PR_SETUP_RETRIES] = p[S.PR_CIRCUIT] and f.circuit_retry
        p[S.PR_RETRY_CYCLES] = f.retry_cycles
        p[S.PR_DEADLOCK_CYCLES] = c["run.deadlock_cycles"]
        p[S.PR_LAST_CYCLE] = S.NEVER
        p[S.PR_ESCAPES] = self.escapes
        p[S.PR_CLASS_SPLIT] = self.class_split
        p[S.PR_PAUSE_AT] = S.NEVER
        p[S.PR_NP_CHANNELS] = f.np_channels
        p[S.PR_HALF] = -(-f.virtual_channels // 2)
        p[S.PR_SEGMENT_WORD] = self.layout.segment_word
        p[S.PR_SEGMENTS] = self.layout.segments
        p[S.PR_HEADER_WORDS] = self.layout.words
        p[S.PR_FLIT_BYTES] = f.flit_bytes
        p[S.PR_NP_RECEIVE] = c["timing.np_receive_cycles"]
        p[S.PR_HOP_LOG] = hops
        p[S.PR_COUNTERS] = counters
        p[S.PR_TIE_KEY] = f.torus_tie_key
        p[S.PR_WHOLE_AXIS] = f.dateline_whole_axis
        p[S.PR_IMMEDIATE_TURNAROUND] = f.immediate_turnaround
        p[S.PR_VC_ROUND_ROBIN] = f.vc_round_robin
        p[S.PR_VC_ARBITRATION_ROUND_ROBIN] = f.vc_arbitration_round_robin
        p[S.PR_VC_REUSE] = f.vc_reuse
        p[S.PR_INJECTION_VCS] = f.injection_vcs
        p[S.PR_CORRUPTION_PER_MILLION] = round(faults.corruption_probability * 1_000_000)
        p[S.PR_ALTERING] = bool((faults.node_fault == R.FAULT_ALTER).any())
        p[S.PR_ROOM] = 2 * MAX_SENDS + 8
        p[S.PR_INPUTS_PER_NODE] = self.inputs_per_node
        p[S.PR_INPUT_NODE_MULTIPLIER], p[S.PR_INPUT_NODE_SHIFT] = node_divider(self.inputs_per_node)
        return p

    def _lost(self, faults: FaultSet) -> np.ndarray:
        """Per node and port, what swallows what it sends: a dead link, or a crashed or dropping node beyond."""
        topo = self.topology
        beyond = np.where(topo.neighbours >= 0, faults.node_fault[np.maximum(topo.neighbours, 0)], R.FAULT_NONE)
        lost = np.select([faults.dead_transmitters.reshape(topo.n_nodes, topo.n_ports) != 0,
                          (topo.neighbours >= 0) & (beyond == R.FAULT_CRASH),
                          (topo.neighbours >= 0) & (beyond == R.FAULT_DROP)],
                         [R.DROP_DEAD_LINK, R.DROP_CRASHED_NODE, R.DROP_BYZANTINE_NODE], 0)
        return np.ascontiguousarray(lost.reshape(-1), dtype=np.int64)

    def _state(self, faults: FaultSet, hops: bool, counters: bool, packets_known: int, keep: bool,
               observed: np.ndarray) -> dict:
        """Every table of the kernel, allocated once for the run (pools grow if the kernel asks). The packet pool
        starts with room for `packets_known` records (the unicasts of traffic given whole): it is touched only
        as records are used, so the room costs address space, and a saturated run need not grow it."""
        topo = self.topology
        f = self.params
        ports, vcs, depth, channels = topo.n_ports, f.virtual_channels, f.buffer_flits, f.np_channels
        span = ports + channels
        per_node = self.inputs_per_node
        inputs_count = topo.n_nodes * per_node
        words = self.layout.words
        local = np.arange(per_node, dtype=np.int64)
        injection = local >= ports * vcs
        channel, injection_vc = np.divmod(np.where(injection, local - ports * vcs, 0), f.injection_vcs)
        port = np.where(injection, 0, local // vcs)
        lost = self._lost(faults)
        working = (topo.neighbours.reshape(-1) >= 0) & (lost == 0)
        downstream = np.where(working, (topo.neighbours * per_node + topo.in_port * vcs).reshape(-1), -1)
        params = self._params(faults, hops, counters)
        machine = S.Machine(np.ascontiguousarray(self.microprogram.code), params, topo.neighbours, topo.in_port,
                            topo.axis_positive, topo.axis_negative, self.port_axis,
                            np.ascontiguousarray(self.wraps, dtype=np.int64),
                            np.where(injection, ports + channel, port), np.where(injection, injection_vc, local % vcs),
                            np.where(injection, -1, ports + port % channels),
                            np.ascontiguousarray(downstream, dtype=np.int64), lost, topo.shape, topo.offset_table)
        table = lines.line_aligned((inputs_count, S.input_columns(depth)), S.ROW_DTYPE)
        slots = S.slots_of(table, depth)
        slots[:, :, [S.SL_PACKET, S.SL_FLIT]] = -1
        slots[:, :, S.SL_FREED] = S.EARLY
        for column in (S.IN_OUT, S.IN_WAIT_FOR, S.CX_PKT, S.CX_TAIL_AT, S.IN_TEE, S.CX_PARK_NEXT):
            table[:, column] = -1
        visits = lines.line_aligned((inputs_count, S.VI_COLUMNS))
        visits[:, [S.VI_UPSTREAM, S.VI_FIRST_OUT, S.VI_REFUSED_AT]] = -1
        port_rows = np.zeros((topo.n_nodes * span, S.PT_ROWS), np.int64)
        port_rows[:, [S.PT_LAST_PACKET, S.PT_PARKED, S.PT_LAST_TAKER, S.PT_WOKEN]] = -1
        nodes = np.zeros((topo.n_nodes, S.ND_ROWS), np.int64)
        nodes[:, [S.ND_QUEUE_HEAD, S.ND_QUEUE_TAIL, S.ND_INBOX_HEAD, S.ND_INBOX_TAIL]] = -1
        nodes[:, S.ND_WAKE] = S.NEVER
        nodes[:, S.ND_FAULT] = faults.node_fault
        switch = S.Switch(table, port_rows, np.full(topo.n_nodes * ports * vcs, -1, np.int64),
                          np.zeros(topo.n_nodes * ports * vcs, np.int64), nodes,
                          np.zeros((inputs_count, max(words, 1)), np.int64), visits)
        events = self._initial_records(topo.n_nodes)
        records = max(events, min(packets_known, POOL_RESERVE_LIMIT))
        stats = np.zeros(S.ST_ROWS, np.int64)
        stats[S.ST_FREE_HEAD] = -1
        stats[S.ST_FREE_COUNT] = records
        stats[S.ST_EVENT_FREE_COUNT] = events
        # xorshift needs a non-zero state: an odd constant mixed with the seed
        stats[S.ST_RANDOM] = 0x9E3779B97F4A7C15 - (1 << 64) + 2 * self.config["run.seed"] + 1
        bitmap_words, summary_words = wheel_words(inputs_count)
        run = S.Run(stats, np.zeros(S.WHEEL * bitmap_words, np.int64), np.zeros(S.WHEEL * summary_words, np.int64),
                    np.zeros(4 * inputs_count + 16, np.int64), np.zeros(4 * topo.n_nodes + 64, np.int64),
                    np.zeros(records + 2, np.int64), np.zeros(records + 2, np.int64), np.zeros(records + 2, np.int64),
                    np.zeros(bitmap_words, np.int64), np.zeros(summary_words, np.int64), np.full(span, -1, np.int64),
                    np.full(span, -1, np.int64))
        logs = R.empty_logs(stats, observed, first_log_rows(packets_known, LOG_ROWS), words, keep, hops,
                            R.window_table(topo.n_nodes))
        return {"machine": machine, "switch": switch, "packets": S.empty_pool(records, words),
                "logs": logs, "run": run, "processor": self._processor(events)}

    def _processor(self, records: int) -> R.Processor:
        topo = self.topology
        program = self.program
        words = self.layout.words
        parameters = program.parameters(topo) if program.parameters else np.zeros(1, np.int64)
        system = R.System(np.ascontiguousarray(parameters, dtype=np.int64), topo.neighbours, topo.in_port,
                          np.array([self.layout.fields[f] for f in program.fields] or [0], dtype=np.int64),
                          self.layout.route())
        return R.Processor(R.event_pool(records, words), np.zeros((topo.n_nodes, max(1, program.state_words)),
                                                                 dtype=np.int64),
                           np.zeros((MAX_SENDS, S_HEADER + words), dtype=np.int64), system)

    def run(self, traffic: Traffic | TrafficSource | None = None, check: bool = True, progress: bool = False,
            slice_cycles: int | None = None, faults: FaultSet | None = None, observer=None, keep: bool = True,
            hops: bool = False, snapshots: tuple[int, ...] = (), counters: bool = False) -> Result:
        if snapshots:
            raise SimulationError("counter snapshots are the cut-through kernel's (BMU and bus-interface windows)")
        keep_freed_memory()
        traffic, source = self.traffic_source(traffic, S.HELD_CYCLE_LIMIT, f"the flit-level kernel runs up to cycle "
                                                                           f"{S.HELD_CYCLE_LIMIT:,} (2^31 - 1)")
        faults = self.faults if faults is None else faults
        recorder = Recorder(self, keep, hops, (S.ST_DELIVERIES, S.ST_LOGGED, S.ST_HOP_ROWS))
        # a circuit's probes may cross links several times before the last attempt's path: their flits are not
        # length x hops
        observed = recorder.new_observations(hops_are_bytes=self.microprogram.switching != isa.SWITCHING_CIRCUIT)
        state = self._state(faults, hops, counters, len(traffic) if isinstance(traffic, Traffic) else 0, keep,
                            observed)
        machine, run = state["machine"], state["run"]
        stats, params = run.stats, machine.params
        chunks = Lookahead(source.chunks())
        table, uids, more = self._next_chunk(chunks, 0, recorder.window)
        last_create = int(table[R.TR_CREATE, -1]) if table.shape[1] else 0
        self._traffic_ends(params, more, last_create)
        started = time.perf_counter()
        kernel_load_notice(flit_kernel_is_cached())
        kernel = compiled_flit_kernel()
        loaded = time.perf_counter()
        horizon = max(source.horizon_cycles, 1)
        slices = Slices(1, slice_cycles, int(S.NEVER), self.topology.n_nodes)
        # a traced run keeps every program counter where its cycle puts it
        params[S.PR_RUN_AHEAD] = 0 if observer is not None else 1
        bar = progress_bar(horizon) if progress else None
        arguments = (self.topology.offsets_function, self.program.procedure)
        try:
            while True:
                if stats[S.ST_PAUSED] in (S.PAUSE_NONE, S.PAUSE_SLICE):
                    params[S.PR_PAUSE_AT] = stats[S.ST_TIME] + slices.ticks
                    if observer is not None:
                        params[S.PR_PAUSE_AT] = observer.pause_before(int(stats[S.ST_TIME]),
                                                                      int(params[S.PR_PAUSE_AT]))
                slices.start()
                kernel(*arguments, machine, state["switch"], state["packets"], state["logs"], run,
                       state["processor"], table)
                paused = int(stats[S.ST_PAUSED])
                if paused == S.PAUSE_SLICE:
                    slices.resize()
                if observer is not None and paused in (S.PAUSE_SLICE, S.PAUSE_NONE):
                    observer.observe(int(stats[S.ST_TIME]), paused == S.PAUSE_SLICE, FlitProbe(self, state))
                if bar is not None:
                    bar.update(min(horizon, int(stats[S.ST_TIME])) - bar.n)
                if paused == S.PAUSE_ROOM:
                    self._make_room(state, recorder)
                elif paused == S.PAUSE_TRAFFIC:
                    table, uids, more = self._next_chunk(chunks, uids, recorder.window)
                    stats[S.ST_NEXT_TRAFFIC] = 0
                    if table.shape[1]:
                        last_create = int(table[R.TR_CREATE, -1])
                    self._traffic_ends(params, more, last_create)
                elif paused == S.PAUSE_NONE:
                    break
        finally:
            if bar is not None:
                bar.close()
        wall = time.perf_counter() - loaded
        recorder.drain(state["logs"])
        if stats[S.ST_ERROR] != 0:
            self._raise(state)
        end = int(stats[S.ST_TIME]) + 1
        switch = state["switch"]
        inputs = switch.inputs
        span = self.topology.n_ports + self.params.np_channels
        occupancy = None
        if counters:
            visits = switch.visits
            held = visits[:, S.VI_OCCUPANCY] + inputs[:, S.IN_COUNT] * (end - visits[:, S.VI_OCCUPANCY_AT])
            node, local = np.divmod(np.arange(inputs.shape[0]), self.inputs_per_node)
            link_input = local < self.topology.n_ports * self.params.virtual_channels
            occupancy = np.bincount(node, weights=np.where(link_input, held, 0), minlength=self.topology.n_nodes)
        network = FlitNetwork(switch.ports[:, S.PT_FLITS].reshape(self.topology.n_nodes, span).copy(), occupancy,
                              int(stats[S.ST_PEAK]), self.params, end, self.topology)
        result = Result(self.config, self.topology, self.switching, 1, end, self.layout, self.program,
                        source.explicit if isinstance(traffic, Traffic) else None, uids, recorder.finish(state["logs"]),
                        network, self._counts(stats, recorder), stats, wall, loaded - started, faults,
                        state["processor"].state, {})
        if check:
            RunChecks().finish(result, observed, self._end_problems(state, recorder))
        return result

    def _traffic_ends(self, params: np.ndarray, more: bool, last_create: int) -> None:
        params[S.PR_TRAFFIC_MORE] = more
        params[S.PR_LAST_CYCLE] = S.NEVER if more else last_create + self.config["run.drain_cycles"]

    @staticmethod
    def _counts(stats: np.ndarray, recorder: Recorder) -> dict:
        t = recorder.tally
        return {
            "packet_hops": t.link_hops,
            "flits_granted": int(stats[S.ST_GRANTS]),
            "microinstructions": int(stats[S.ST_INSTRUCTIONS]),
            "probes_per_packet": (t.records + int(stats[S.ST_NACKS])) / t.records if t.records else None,
            "packets_in_flight_peak": int(stats[S.ST_IN_FLIGHT_PEAK]),
            "dropped_by_faults": int(stats[S.ST_DROPS]),
            "flits_lost_to_faults": int(stats[S.ST_LOST_FLITS]),
            "corrupted_transmissions": int(stats[S.ST_CORRUPTED]),
            "forged_packets": int(stats[S.ST_FORGED]),
        }

    def _make_room(self, state: dict, recorder: Recorder) -> None:
        """Drain the logs if they are nearly full, and double them up to LOG_ROWS (or further, if one cycle needs
        more than they hold); otherwise a pool is short: double it (the kernel asks again if one event needs still
        more)."""
        logs, run = state["logs"], state["run"]
        stats = run.stats
        due = int(stats[S.ST_HEAP]) + int(stats[S.ST_WHEELED])
        need = 4 * (int(stats[S.ST_ACTIVE]) + due) + int(state["machine"].params[S.PR_ROOM])
        if recorder.room(logs) < need:
            recorder.drain(logs)
            state["logs"] = R.grown_logs(logs, need, LOG_ROWS)
            return
        room = int(state["machine"].params[S.PR_ROOM])
        if stats[S.ST_FREE_COUNT] < room or run.birth_cycle.shape[0] - stats[S.ST_BIRTHS] < room + 2:
            state["packets"] = S.grow_pool(state["packets"], stats)
            size = state["packets"].table.shape[0] + 2
            grown = [np.zeros(size, np.int64) for _ in range(3)]
            for new, old in zip(grown, (run.birth_cycle, run.birth_uid, run.birth_record)):
                new[: len(old)] = old
            state["run"] = run._replace(birth_cycle=grown[0], birth_uid=grown[1], birth_record=grown[2])
        else:
            processor = state["processor"]
            state["processor"] = processor._replace(events=R.grow_events(processor.events, stats,
                                                                         S.ST_EVENT_FREE_HEAD,
                                                                         S.ST_EVENT_FREE_COUNT))

    def _end_problems(self, state: dict, recorder: Recorder) -> list[str]:
        """What the machine's state at the end of the run says about the invariants: every flit ejected once per
        copy, no buffer above its depth, every VC released and every buffer empty, the links' flit counts."""
        switch, run = state["switch"], state["run"]
        stats = run.stats
        problems = []
        if int(stats[S.ST_EJECTED]) != recorder.tally.copy_length:
            problems.append(f"flits ejected ({int(stats[S.ST_EJECTED])}) differ from the packets' flits x copies "
                            f"({recorder.tally.copy_length})")
        if int(stats[S.ST_PEAK]) > self.params.buffer_flits:
            problems.append(f"a buffer held {int(stats[S.ST_PEAK])} flits, above its depth {self.params.buffer_flits}")
        if (switch.owner >= 0).any():
            problems.append(f"{int((switch.owner >= 0).sum())} VCs still owned (paths not released)")
        if (switch.inputs[:, S.IN_COUNT] != 0).any() or (switch.inputs[:, S.IN_OUT] >= 0).any():
            problems.append("flits left in buffers or inputs still bound")
        if (switch.inputs[:, S.CX_PKT] >= 0).any():
            problems.append("contexts still hold packets at the end of the run")
        if stats[S.ST_IN_FLIGHT] != 0:
            problems.append(f"{int(stats[S.ST_IN_FLIGHT])} packet records were never completed")
        if (switch.nodes[:, S.ND_INBOX_HEAD] >= 0).any() or (switch.nodes[:, S.ND_QUEUE_HEAD] >= 0).any():
            problems.append("NP events or queued packets are left at the end of the run")
        ports = self.topology.n_ports
        span = ports + self.params.np_channels
        on_links = int(switch.ports[:, S.PT_FLITS].reshape(-1, span)[:, :ports].sum())
        link_flits = int(state["logs"].observed[O.OB_BYTES_SENT])
        if on_links != link_flits:
            problems.append(f"link flit counters ({on_links}) disagree with the packets' ({link_flits})")
        return problems

    def describe_input(self, i: int) -> str:
        topo = self.topology
        vcs = self.params.virtual_channels
        node, local = divmod(int(i), self.inputs_per_node)
        where = f"node {node} {topo.coordinates(node)}"
        if local >= topo.n_ports * vcs:
            channel, context = divmod(local - topo.n_ports * vcs, self.params.injection_vcs)
            return (f"{where} injection" + (f" channel {channel}" if self.params.np_channels > 1 else "")
                    + (f" context {context}" if self.params.injection_vcs > 1 else ""))
        port, vc = divmod(local, vcs)
        return f"{where} receiver {topo.port_names[port]} VC {vc}"

    def _raise(self, state: dict) -> None:
        stats = state["run"].stats
        error = int(stats[S.ST_ERROR])
        cycle = int(stats[S.ST_TIME])
        if error == S.ERR_DEADLOCK:
            self._raise_stuck(state, cycle)
        where = ""
        if error in (S.ERR_NO_ROUTE, S.ERR_NO_LINK, S.ERR_BAD_CONTEXT, S.ERR_LOOP):
            where = f" at {self.describe_input(stats[S.ST_ERROR_INPUT])}, " \
                    f"{self.microprogram.describe(int(stats[S.ST_ERROR_PC]))}"
        elif error in (S.ERR_TOO_MANY_SENDS, S.ERR_BAD_SEND):
            where = f" (NP program {self.program.name!r})"
        elif error == S.ERR_CYCLE_RANGE:
            where = f": cycle {int(stats[S.ST_ERROR_DETAIL]):,}, past {S.HELD_CYCLE_LIMIT:,} (2^31 - 1); shorten the " \
                    f"run or its timing delays"
        raise SimulationError(f"cycle {cycle}: {ERRORS[error]}{where}")

    def _raise_stuck(self, state: dict, cycle: int) -> None:
        """Nothing moved for good for run.deadlock_cycles (MODEL.md, Deadlock and livelock): a deadlock, named by its
        cycle of waiting inputs, or, when probes were nacked and retried all that time and no input waits for
        another for good, a livelock, named by the circuits that refuse each other."""
        stats = state["run"].stats
        bound = self.config["run.deadlock_cycles"]
        retried = stats[S.ST_LAST_NACK] > stats[S.ST_LAST_PROGRESS]
        loop = self.waiting_cycle(state)
        if loop or not retried:
            channels = [self.describe_input(i) for i in loop]
            quiet = "no flit moved" if not retried else "no circuit was acknowledged and no data flit moved"
            named = " -> ".join(channels) if loop else "(no cycle found among the waiting inputs)"
            raise DeadlockError(f"deadlock at cycle {cycle}: {quiet} for {bound} cycles; waiting cycle: {named}"
                                f"{self._circuits_note(state, loop)}", channels)
        circuits = self.refusal_cycle(state)
        if circuits:
            named = f"circuits each refused by the next: {' -> '.join(circuits)}"
        else:
            nacked = self._nacked_since_progress(state)
            circuits = [self.describe_packet(state["packets"].table, int(r)) for r in nacked[:LISTED_CIRCUITS]]
            more = len(nacked) - len(circuits)
            named = f"circuits retried: {', '.join(circuits)}" + (f" and {more} more" if more > 0 else "")
        raise LivelockError(f"livelock at cycle {cycle}: circuit set-ups were refused and retried "
                            f"({int(stats[S.ST_NACKS]):,} nacks in all) but none was acknowledged and no data flit "
                            f"moved for {bound} cycles; {named}", circuits)

    def waiting_cycle(self, state: dict) -> list[int]:
        """The inputs of a deadlock, each waiting for the next, the first repeated at the end ([] if the waits
        close no cycle). An input waits for what it last recorded (a full downstream VC, or the owner of the VC
        a forward asked for). Under circuit switching an input that holds a circuit not yet acknowledged waits
        for the next input along it (the acknowledgment comes back from where the probe is), and the input at
        the end of a circuit whose probe was delivered unacknowledged waits for its source, whose data wait for
        that acknowledgment; with retried set-ups a probe refused at a link input waits for nothing (it nacks)."""
        inputs, visits = state["switch"].inputs, state["switch"].visits
        table = state["packets"].table
        packet = inputs[:, S.CX_PKT].astype(np.int64)
        waits = inputs[:, S.IN_WAIT_FOR].astype(np.int64)
        if self.microprogram.switching == isa.SWITCHING_CIRCUIT:
            output = inputs[:, S.IN_OUT]
            if self.params.circuit_retry:
                # a probe refused at a link gives up (nack): its wait, a moment of a livelock, is not for good
                injection = self._is_injection(np.arange(len(packet)))
                waits[~injection & (output < 0)] = -1
            holding = (packet >= 0) & (waits < 0) & (output >= 0)
            holding[holding] = table[packet[holding], S.PK_ACKED] == S.NEVER
            along = holding & (output < self.topology.n_ports)
            waits[along] = inputs[along, S.IN_DOWN]
            for end in np.flatnonzero(holding & (output >= self.topology.n_ports)):
                i = int(end)
                while i >= 0 and not self._is_injection(i):
                    i = int(visits[i, S.VI_UPSTREAM])
                waits[end] = i
        busy = (packet >= 0) & (waits >= 0)
        for start in np.flatnonzero(busy):
            seen: dict[int, int] = {}
            walk = []
            i = int(start)
            while i >= 0 and i not in seen and busy[i]:
                seen[i] = len(walk)
                walk.append(i)
                i = int(waits[i])
            if i in seen:
                return walk[seen[i]:] + [i]
        return []

    def _is_injection(self, i):
        """Whether input i (or each of an array of them) is an injection context (state.py numbers them)."""
        return i % self.inputs_per_node >= self.topology.n_ports * self.params.virtual_channels

    def _circuits_note(self, state: dict, loop: list[int]) -> str:
        """Under circuit switching, the packets whose circuits a deadlock's cycle runs through, and for each whose
        probe reached its destination, that no acknowledgment came back."""
        if self.microprogram.switching != isa.SWITCHING_CIRCUIT or not loop:
            return ""
        inputs = state["switch"].inputs
        table = state["packets"].table
        records = list(dict.fromkeys(int(inputs[i, S.CX_PKT]) for i in loop))
        unacknowledged = {int(inputs[i, S.CX_PKT]) for i in loop
                          if inputs[i, S.IN_OUT] >= self.topology.n_ports}
        named = [self.describe_packet(table, r) + (" (delivered without an acknowledgment)" if r in unacknowledged
                                                    else "") for r in records]
        return f"; circuits waiting for their acknowledgments: {', '.join(named)}"

    @staticmethod
    def _nacked_since_progress(state: dict) -> np.ndarray:
        """The records of the packets nacked since the last progress: the same packets they were then, since no
        record is recycled without progress."""
        stats = state["run"].stats
        table = state["packets"].table[:int(stats[S.ST_POOL_TOP])]
        return np.flatnonzero((table[:, S.PK_HOLDERS] > 0) & (table[:, S.PK_NACKED_AT] > stats[S.ST_LAST_PROGRESS]))

    def refusal_cycle(self, state: dict) -> list[str]:
        """The packets of a livelock whose circuits refuse each other in turn, the first repeated at the end ([] if
        they close no cycle): each one's probe was last nacked at a link the next one's circuit held."""
        table = state["packets"].table
        refused_by = {int(r): int(table[r, S.PK_REFUSED_BY]) for r in self._nacked_since_progress(state)}
        for start in refused_by:
            seen: dict[int, int] = {}
            walk = []
            r = start
            while r in refused_by and r not in seen:
                seen[r] = len(walk)
                walk.append(r)
                r = refused_by[r]
            if r in seen:
                return [self.describe_packet(table, q) for q in walk[seen[r]:] + [r]]
        return []

    def describe_packet(self, table: np.ndarray, record: int) -> str:
        topo = self.topology
        source, destination = int(table[record, S.PK_SOURCE]), int(table[record, S.PK_DEST])
        return (f"packet {int(table[record, S.PK_UID])} (node {source} {topo.coordinates(source)} to node "
                f"{destination} {topo.coordinates(destination)})")


class FlitProbe:
    """The flit-level machine's state as a waveform sees it between kernel calls (harts.tools.trace), per node:
    each link input VC (flits in or on the way to its buffer, the packet its context handles as uid + 1, its
    microprogram counter) and NP injection channel (packet, counter); each output (whether a flit was granted
    through it in the cycle, and whose) and, per link output VC, its owner (a circuit owns every VC of its port)
    and its credits (downstream slots the sender may write); each ejection channel's grants; and the packets
    waiting in the NP's queue."""

    def __init__(self, simulation: FlitSimulation, state: dict):
        self.ports = simulation.topology.n_ports
        self.params = simulation.params
        self.inputs_per_node = simulation.inputs_per_node
        self.state = state

    def signals(self, nodes: list[int]):
        """(scope, name, VCD type, bits) of every signal of the nodes."""
        vcs, channels = self.params.virtual_channels, self.params.np_channels
        for v in nodes:
            for p in range(self.ports):
                for c in range(vcs):
                    yield f"n{v}.in{p}.vc{c}", "flits", "integer", 16
                    yield f"n{v}.in{p}.vc{c}", "packet", "integer", 64
                    yield f"n{v}.in{p}.vc{c}", "pc", "integer", 16
            for c in range(channels * self.params.injection_vcs):  # channel-major, one per injection context
                yield f"n{v}.from_np{c}", "packet", "integer", 64
                yield f"n{v}.from_np{c}", "pc", "integer", 16
            for p in range(self.ports):
                yield f"n{v}.out{p}", "grant", "wire", 1
                yield f"n{v}.out{p}", "packet", "integer", 64
                for c in range(vcs):
                    yield f"n{v}.out{p}.vc{c}", "owner", "integer", 64
                    yield f"n{v}.out{p}.vc{c}", "credits", "integer", 16
            for c in range(channels):
                yield f"n{v}.to_np{c}", "grant", "wire", 1
                yield f"n{v}.to_np{c}", "packet", "integer", 64
            yield f"n{v}.np", "queue", "integer", 16

    def sample(self, cycle: int, nodes: list[int]) -> dict:
        """Every signal's value at the end of `cycle`, by scope.name."""
        machine, switch = self.state["machine"], self.state["switch"]
        table = self.state["packets"].table
        inputs, ports_table, owner = switch.inputs, switch.ports, switch.owner
        f = self.params
        vcs, channels, depth = f.virtual_channels, f.np_channels, f.buffer_flits
        per_node, span = self.inputs_per_node, self.ports + channels
        freed = S.slots_of(inputs, depth)[:, :, S.SL_FREED]

        def uid(record):
            return int(table[record, S.PK_UID]) + 1 if record >= 0 else 0

        values = {}
        for v in nodes:
            for local in range(per_node):
                i = v * per_node + local
                pkt = int(inputs[i, S.CX_PKT])
                scope = f"n{v}.in{local // vcs}.vc{local % vcs}" if local < self.ports * vcs \
                    else f"n{v}.from_np{local - self.ports * vcs}"
                if local < self.ports * vcs:
                    values[f"{scope}.flits"] = int(inputs[i, S.IN_COUNT])
                values[f"{scope}.packet"] = uid(pkt)
                values[f"{scope}.pc"] = int(inputs[i, S.CX_PC]) if pkt >= 0 else 0
            for j in range(span):
                row = v * span + j
                granted = int(ports_table[row, S.PT_BUSY_UNTIL]) == cycle + f.flit_cycles and \
                    int(ports_table[row, S.PT_LAST_PACKET]) >= 0
                scope = f"n{v}.out{j}" if j < self.ports else f"n{v}.to_np{j - self.ports}"
                values[f"{scope}.grant"] = int(granted)
                values[f"{scope}.packet"] = uid(int(ports_table[row, S.PT_LAST_PACKET])) if granted else 0
                if j >= self.ports:
                    continue
                first = int(machine.downstream[v * self.ports + j])
                for c in range(vcs):
                    holder = int(owner[(v * self.ports + j) * vcs + c])
                    values[f"{scope}.vc{c}.owner"] = uid(int(inputs[holder, S.CX_PKT])) if holder >= 0 else 0
                    credits = 0
                    if first >= 0:
                        d = first + c
                        count = int(inputs[d, S.IN_COUNT])
                        free = ((int(inputs[d, S.IN_FIRST]) + count + k) % depth for k in range(depth - count))
                        credits = sum(int(freed[d, s]) + f.credit_delay <= cycle + 1 for s in free)
                    values[f"{scope}.vc{c}.credits"] = credits
            queued, record = 0, int(switch.nodes[v, S.ND_QUEUE_HEAD])
            while record >= 0:
                queued += 1
                record = int(table[record, S.PK_NEXT])
            values[f"n{v}.np.queue"] = queued
        return values

    def settled(self, nodes: list[int]) -> int:
        """The cycle from which nothing changes any more at the end of a run: the run's last."""
        return int(self.state["run"].stats[S.ST_TIME])
