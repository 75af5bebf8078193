"""Virtual cut-through on the cut-through kernel: the machine ``Simulation(config)`` is when the microprogram
switches by cut-through (every HARTS microprogram).

The machine's tables are allocated once per run (harts.controller.state); the numba kernel
(harts.controller.engine) does all per-tick work and returns whenever a pool needs to grow, a log needs
draining, more traffic is due, or a slice of simulated time has passed. The invariants are checked on
what the logs give back, as they are drained, and at the end (harts.machine.invariants).
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from ..controller import isa, lines
from ..controller import observations as O
from ..controller import records as R
from ..controller import state as S
from ..controller.divider import node_divider
from ..controller.engine import compiled_kernel, run_kernel
from ..controller.receiver import tail_time
from ..errors import SimulationError
from ..faults.fault_set import FaultSet
from ..kernel_cache import kernel_is_cached
from ..network.grid import torus_tie_key
from ..np.program import MAX_SENDS, S_HEADER
from .invariants import RunChecks
from .results import Counters, CutThroughNetwork, Recorder, Result
from .simulation import (
    LOG_ROWS,
    Lookahead,
    Simulation,
    Slices,
    cycle_text,
    first_log_rows,
    keep_freed_memory,
    kernel_load_notice,
    progress_bar,
)
from .traffic import Traffic, TrafficSource

_ERROR_TEXT = {
    S.ERR_FIFO_OVERFLOW: "receiver FIFO overflow: the microprogram started the packet streaming too late",
    S.ERR_TRUNCATED: "'done' before the packet's last byte had passed: bytes would be lost",
    S.ERR_DROPPED: "'done' without forward, tee, deliver or store: the packet would be dropped",
    S.ERR_BAD_CONTEXT: "only 'forward' can send a packet out of the BMU (tee/deliver/store need a link receiver)",
    S.ERR_NO_HEADER: "the header registers are used before 'wait_header' loaded them",
    S.ERR_TWO_STREAMS: "a second forward/tee/deliver/store for a packet already streaming",
    S.ERR_NO_ROUTE: "forward by a route the packet does not have (no hop left, no segment left, or no route table)",
    S.ERR_LOOP: f"the microprogram executed {isa.LOOP_LIMIT:,} instructions in a row on one packet without forward, "
                "tee, deliver, store or done: it loops",
}


def memory_estimate(nodes: int, ports: int, contexts: int, header_words: int, initial_records: int) -> int:
    """Bytes the machine's tables take: per node its contexts, transmitters, BMU/NP row, topology and clock
    entries; plus the packet pool, the NP event pool and the logs."""
    words_per_node = (ports * (S.TX_ROWS + 2) + S.ND_ROWS
                      + (contexts + 1) * 8 + 16)
    context_bytes = contexts * S.CX_ROWS * np.dtype(S.CX_DTYPE).itemsize
    records = (initial_records * (lines.line_columns(S.PK_ROWS) + lines.line_columns(header_words))
               + initial_records * (R.E_HEADER + header_words))
    logs = LOG_ROWS * (R.DL_ROWS + header_words + R.PL_ROWS)
    return nodes * context_bytes + 8 * (nodes * words_per_node + records + logs)


def _link_receivers(ctx: np.ndarray, ports: int, per_node: int) -> np.ndarray:
    """The link receivers' rows of the context table, [node, port, column]: the columns they share with the bus
    interfaces (state.CX_PENDING_HEAD and the three after it) mean something else in the others' rows."""
    return ctx.reshape(-1, per_node, S.CX_ROWS)[:, :ports]


class CutThroughSimulation(Simulation):
    """One configured machine whose microprogram switches by virtual cut-through."""

    kernel = "cut_through"

    def __init__(self, config, microprogram=None, program=None):
        super().__init__(config, microprogram, program)
        nodes, ports = self.nodes, self.ports
        contexts = ports + config["bmu.bus_interfaces"]
        words = ports + 1 + 3 * self.microprogram.segments + len(self.microprogram.fields) + len(self.program.fields)
        self.refuse_if_too_big(memory_estimate(nodes, ports, contexts, words, self._initial_records(nodes)),
                               "topology", f"this network ({nodes:,} nodes)")
        if nodes * (contexts + 1) > S.MAX_EVENT_IDS:
            raise config.error("topology", f"this network ({nodes:,} nodes) has more event ids than the cut-through "
                                           f"kernel numbers in 32 bits: at most {S.MAX_EVENT_IDS // (contexts + 1):,} "
                                           f"nodes with {contexts} contexts each")
        self.build()
        self.params = self._parameters()

    @staticmethod
    def _initial_records(nodes: int) -> int:
        return 1024 + 2 * nodes

    def _parameters(self) -> np.ndarray:
        """The kernel's parameter vector; every duration converted from cycles to ticks."""
        c = self.config
        bpc = c.bytes_per_cycle
        p = np.zeros(S.PR_ROWS, dtype=np.int64)
        p[S.PR_BYTES_PER_CYCLE] = bpc
        p[S.PR_HEADER_BYTES] = c["timing.header_bytes"]
        p[S.PR_IDLE_GAP_BYTES] = c["timing.idle_gap_bytes"]
        p[S.PR_BUS_DELAY] = c["timing.bus_delay_cycles"] * bpc
        p[S.PR_LINK_DELAY] = c["timing.link_delay_cycles"] * bpc
        p[S.PR_FIFO_BYTES] = c["timing.receiver_fifo_bytes"]
        p[S.PR_SLOT_BYTES] = c["timing.bus_slot_bytes"]
        p[S.PR_BMU_CAPACITY] = c["bmu.capacity_bytes"]
        p[S.PR_BMU_SETUP] = c["timing.bmu_setup_cycles"] * bpc
        p[S.PR_NP_SEND] = c["timing.np_send_cycles"] * bpc
        p[S.PR_NP_RECEIVE] = c["timing.np_receive_cycles"] * bpc
        p[S.PR_DELIVER] = c["timing.deliver_cycles"] * bpc
        p[S.PR_PORTS] = self.topology.n_ports
        p[S.PR_BUS_INTERFACES] = c["bmu.bus_interfaces"]
        p[S.PR_DEADLOCK_TICKS] = c["run.deadlock_cycles"] * bpc
        p[S.PR_ENTRY_RECEIVE] = self.microprogram.entry_receive
        p[S.PR_TIE_KEY] = torus_tie_key(c)
        p[S.PR_ENTRY_INJECT] = self.microprogram.entry_inject
        p[S.PR_BMU_DROPS_WHEN_FULL] = c["bmu.when_full"] == "drop"
        p[S.PR_BMU_PER_OUTPUT] = c["bmu.queues"] == "per_output"
        p[S.PR_HEADER_WORDS] = self.layout.words
        p[S.PR_REGISTER_WORDS] = self.layout.registers
        p[S.PR_AXES] = self.layout.axes
        p[S.PR_SEGMENT_WORD] = self.layout.segment_word
        p[S.PR_SEGMENTS] = self.layout.segments
        p[S.PR_TABLE_WORD] = self.layout.table_word
        p[S.PR_RUN_AHEAD] = 1
        p[S.PR_ROOM] = MAX_SENDS + self.topology.n_ports + 8
        # ids per node: the contexts, and the NP's (clock.py's numbering)
        p[S.PR_ID_NODE_MULTIPLIER], p[S.PR_ID_NODE_SHIFT] = node_divider(p[S.PR_PORTS] + p[S.PR_BUS_INTERFACES] + 1)
        return p

    def _machine(self, params: np.ndarray) -> S.Machine:
        topo = self.topology
        tables = np.full((1, topo.n_nodes), -1, dtype=np.int64)
        if self.program.route_tables is not None:
            tables = np.ascontiguousarray(self.program.route_tables(topo), dtype=np.int64)
            if tables.ndim != 2 or tables.shape[1] != topo.n_nodes:
                raise SimulationError(f"NP program {self.program.name!r}: route tables must have one column per "
                                      f"node ({topo.n_nodes}), got shape {tables.shape}")
        return S.Machine(self.microprogram.placed(self.layout.fields), params,
                         S.link_table(topo.neighbours, topo.in_port), topo.axis_positive, topo.axis_negative,
                         topo.shape, topo.offset_table, tables)

    def _processor(self) -> R.Processor:
        topo = self.topology
        program = self.program
        words = self.layout.words
        parameters = program.parameters(topo) if program.parameters else np.zeros(1, np.int64)
        system = R.System(np.ascontiguousarray(parameters, dtype=np.int64), topo.neighbours, topo.in_port,
                          np.array([self.layout.fields[f] for f in program.fields] or [0], dtype=np.int64),
                          self.layout.route())
        return R.Processor(R.event_pool(self._initial_records(topo.n_nodes), words),
                           np.zeros((topo.n_nodes, max(1, program.state_words)), dtype=np.int64),
                           np.zeros((MAX_SENDS, S_HEADER + words), dtype=np.int64), system)

    def _initial_state(self, faults: FaultSet, hops: bool, packets_known: int, keep: bool,
                       observed: np.ndarray) -> dict:
        """Every table of the kernel, allocated once for the run (pools and logs grow if the kernel asks; the logs
        start with room for the `packets_known` packets of a run given its traffic whole)."""
        topo = self.topology
        words = self.layout.words
        contexts = topo.n_nodes * (topo.n_ports + self.config["bmu.bus_interfaces"])
        ctx = lines.line_table(contexts, S.CX_ROWS, S.CX_DTYPE)
        ctx[:, S.CX_PKT] = -1
        per_node = topo.n_ports + self.config["bmu.bus_interfaces"]
        receivers = _link_receivers(ctx, topo.n_ports, per_node)
        receivers[:, :, S.CX_PENDING_HEAD] = -1
        receivers[:, :, S.CX_PENDING_TAIL] = -1
        receivers[:, :, S.CX_DONE_TICK] = -1
        tx = S.table(topo.n_nodes * topo.n_ports, S.TX_ROWS)
        tx[:, S.TX_DEAD] = faults.dead_transmitters
        tx[:, S.TX_UID] = -1
        tx[:, [S.TX_WAIT_HEAD, S.TX_WAIT_TAIL, S.TX_WAIT_TURN]] = -1
        node = S.table(topo.n_nodes, S.ND_ROWS)
        node[:, S.ND_FAULT] = faults.node_fault
        for column in (S.ND_QUEUE_HEAD, S.ND_QUEUE_TAIL, S.ND_INBOX_HEAD, S.ND_INBOX_TAIL, S.ND_LOOKS_SKIPPED):
            node[:, column] = -1
        records = self._initial_records(topo.n_nodes)
        stats = np.zeros(S.ST_ROWS, dtype=np.int64)
        stats[S.ST_FREE_COUNT] = records
        stats[S.ST_EVENT_FREE_COUNT] = records
        stats[S.ST_UID_NEXT] = R.NP_UID_BASE
        stats[S.ST_CURRENT] = -1
        # xorshift needs a non-zero state: an odd constant mixed with the seed
        stats[S.ST_RANDOM] = 0x9E3779B97F4A7C15 - (1 << 64) + 2 * self.config["run.seed"] + 1
        params = self.params.copy()
        params[S.PR_CORRUPTION_PER_MILLION] = round(faults.corruption_probability * 1_000_000)
        params[S.PR_FAULTS] = faults.any()
        params[S.PR_HOP_LOG] = hops
        return {
            "machine": self._machine(params),
            "controller": S.Controller(ctx, np.zeros(self.layout.registers, np.int64), tx, node),
            "packets": S.packet_pool(records, words),
            "logs": R.empty_logs(stats, observed, first_log_rows(packets_known, LOG_ROWS), words, keep, hops,
                                 R.window_table(self.topology.n_nodes)),
            "clock": S.empty_clock(topo.n_nodes, per_node),
            "processor": self._processor(),
        }

    def run(self, traffic: Traffic | TrafficSource | None = None, check: bool = True, progress: bool = False,
            slice_cycles: int | None = None, faults: FaultSet | None = None, observer=None,
            keep: bool = True, hops: bool = False, snapshots: tuple[int, ...] = (), counters: bool = False) -> Result:
        keep_freed_memory()
        bpc = self.ticks_per_cycle
        limit = cycle_text(S.CX_TICK_LIMIT, bpc)
        traffic, source = self.traffic_source(traffic, Fraction(S.CX_TICK_LIMIT, bpc), f"the cut-through kernel runs "
                                                                                       f"up to cycle {limit} (2^31 "
                                                                                       f"ticks of {bpc} per cycle)")
        faults = self.faults if faults is None else faults
        recorder = Recorder(self, keep, hops, (S.ST_DELIVERIES, S.ST_LOGGED, S.ST_HOP_ROWS))
        state = self._initial_state(faults, hops, len(traffic) if isinstance(traffic, Traffic) else 0, keep,
                                    recorder.new_observations())
        machine = state["machine"]
        stats, params = state["logs"].stats, machine.params
        chunks = Lookahead(source.chunks())
        uids = 0
        table, uids, more = self._next_chunk(chunks, uids, recorder.window)
        params[S.PR_TRAFFIC_MORE] = more
        last_create = int(table[R.TR_CREATE, -1]) if table.shape[1] else 0
        params[S.PR_LAST_TICK] = S.NEVER if more else last_create + self.config["run.drain_cycles"] * bpc
        started = time.perf_counter()
        kernel_load_notice(bool(run_kernel.signatures) or kernel_is_cached("controller", "engine.run_kernel"))
        kernel = compiled_kernel()
        loaded = time.perf_counter()
        horizon = max(source.horizon_cycles, 1)
        slices = Slices(bpc, slice_cycles, int(S.NEVER), self.topology.n_nodes)
        params[S.PR_RUN_AHEAD] = 0 if observer is not None else 1
        bar = progress_bar(horizon) if progress else None
        arguments = (self.topology.offsets_function, self.program.procedure)
        pending = sorted(cycle * bpc for cycle in snapshots)
        taken: dict[int, Counters] = {}
        try:
            while True:
                if stats[S.ST_PAUSED] in (S.PAUSE_NONE, S.PAUSE_SLICE):
                    params[S.PR_PAUSE_AT] = stats[S.ST_TIME] + slices.ticks
                    if pending:
                        # every tick up to the snapshot's is then processed, none after it
                        params[S.PR_PAUSE_AT] = min(params[S.PR_PAUSE_AT], pending[0] - 1)
                    if observer is not None:
                        params[S.PR_PAUSE_AT] = observer.pause_before(int(stats[S.ST_TIME]),
                                                                      int(params[S.PR_PAUSE_AT]))
                slices.start()
                kernel(*arguments, machine, state["controller"], state["packets"], state["logs"], state["clock"],
                       state["processor"], table)
                paused = int(stats[S.ST_PAUSED])
                while pending and (paused == S.PAUSE_NONE or (paused == S.PAUSE_SLICE
                                                              and stats[S.ST_TIME] >= pending[0])):
                    tick = pending.pop(0)
                    taken[tick // bpc] = Counters.of(state["controller"].tx, state["controller"].node, tick)
                if paused == S.PAUSE_SLICE:
                    slices.resize()
                if observer is not None and paused in (S.PAUSE_SLICE, S.PAUSE_NONE):
                    observer.observe(int(stats[S.ST_TIME]), paused == S.PAUSE_SLICE, CutThroughProbe(self, state))
                if bar is not None:
                    bar.update(min(horizon, int(stats[S.ST_TIME]) // bpc) - bar.n)
                if paused == S.PAUSE_ROOM:
                    self._make_room(state, recorder)
                elif paused == S.PAUSE_TRAFFIC:
                    table, uids, more = self._next_chunk(chunks, uids, recorder.window)
                    stats[S.ST_NEXT_TRAFFIC] = 0
                    params[S.PR_TRAFFIC_MORE] = more
                    if not more:
                        last_create = int(table[R.TR_CREATE, -1]) if table.shape[1] else last_create
                        params[S.PR_LAST_TICK] = last_create + self.config["run.drain_cycles"] * bpc
                elif paused == S.PAUSE_NONE:
                    break
                # stats[ST_ERROR] also ends the run: the kernel returns with PAUSE_NONE
        finally:
            if bar is not None:
                bar.close()
        wall = time.perf_counter() - loaded
        recorder.drain(state["logs"])
        node = state["controller"].node
        # Bring the occupancy integrals up to the end of the last tick.
        end = int(stats[S.ST_TIME]) + 1
        final = Counters.of(state["controller"].tx, node, end)
        node[:, S.ND_BMU_INTEGRAL], node[:, S.ND_QUEUE_INTEGRAL] = final.bmu_byte_ticks, final.queue_packet_ticks
        node[:, S.ND_BMU_CHANGED] = node[:, S.ND_QUEUE_CHANGED] = end
        self._raise_on_error(stats, state)
        network = CutThroughNetwork(state["controller"].tx, node, end, self.config, self.topology)
        result = Result(self.config, self.topology, self.switching, bpc, end, self.layout, self.program,
                        source.explicit if isinstance(traffic, Traffic) else None, uids, recorder.finish(state["logs"]),
                        network, self._counts(stats), stats, wall, loaded - started, faults, state["processor"].state,
                        taken)
        if check:
            RunChecks().finish(result, state["logs"].observed, self._end_problems(result, state))
        return result

    def _end_problems(self, result: Result, state: dict) -> list[str]:
        """What the machine's state at the end of the run says about the invariants."""
        problems = []
        stats, nodes = result.stats, result.network.nodes
        ctx = state["controller"].ctx
        if int(result.network.transmitters[:, S.TX_BYTES].sum()) != state["logs"].observed[O.OB_BYTES_SENT]:
            problems.append("transmitter byte counters disagree with the packets' byte counts")
        if stats[S.ST_STORED_IN] != stats[S.ST_STORED_OUT]:
            problems.append(f"BMUs took in {int(stats[S.ST_STORED_IN])} transit bytes but sent on "
                            f"{int(stats[S.ST_STORED_OUT])}")
        capacity = self.config["bmu.capacity_bytes"]
        if nodes[:, S.ND_BMU_PEAK].max() > capacity:
            problems.append(f"a BMU held {int(nodes[:, S.ND_BMU_PEAK].max())} bytes, capacity {capacity}")
        if stats[S.ST_FIFO_PEAK] > self.config["timing.receiver_fifo_bytes"]:
            problems.append("a receiver FIFO exceeded its depth")
        if nodes[:, S.ND_BMU_USED].any() or nodes[:, S.ND_BMU_CREDIT].any() or nodes[:, S.ND_QUEUE_LEN].any():
            problems.append("BMUs are not empty at the end of the run")
        pending = _link_receivers(ctx, self.topology.n_ports, ctx.shape[0] // nodes.shape[0])[:, :, S.CX_PENDING_HEAD]
        if (ctx[:, S.CX_PKT] >= 0).any() or (pending >= 0).any():
            problems.append("receivers still hold packets at the end of the run")
        if stats[S.ST_IN_FLIGHT] != 0:
            problems.append(f"{int(stats[S.ST_IN_FLIGHT])} packet records were never completed")
        if (nodes[:, S.ND_INBOX_HEAD] >= 0).any():
            problems.append("NP events are left unprocessed at the end of the run")
        return problems

    @staticmethod
    def _counts(stats: np.ndarray) -> dict:
        """The kernel's totals the summary reports."""
        return {
            "fifo_peak_bytes": int(stats[S.ST_FIFO_PEAK]),
            "cut_throughs": int(stats[S.ST_CUT_THROUGHS]),
            "packet_hops": int(stats[S.ST_HOPS]),
            "microinstructions": int(stats[S.ST_INSTRUCTIONS]),
            "events": int(stats[S.ST_EVENTS]),
            "ticks_with_work": int(stats[S.ST_TICKS]),
            "packets_in_flight_peak": int(stats[S.ST_IN_FLIGHT_PEAK]),
            "dropped_by_faults": int(stats[S.ST_DROPS] - stats[S.ST_OVERFLOWS]),
            "dropped_by_bmu_overflow": int(stats[S.ST_OVERFLOWS]),
            "corrupted_transmissions": int(stats[S.ST_CORRUPTED]),
            "forged_packets": int(stats[S.ST_FORGED]),
        }

    def _make_room(self, state: dict, recorder: Recorder) -> None:
        """Drain the logs if they are nearly full, and double them up to LOG_ROWS (or further, if one event may write
        more rows than they hold); otherwise a pool is short: double it (the kernel asks again if one event needs
        still more)."""
        logs = state["logs"]
        stats = logs.stats
        room = int(state["machine"].params[S.PR_ROOM])
        if recorder.room(logs) < room:
            recorder.drain(logs)
            state["logs"] = R.grown_logs(logs, room, LOG_ROWS)
            return
        if stats[S.ST_FREE_COUNT] <= stats[S.ST_EVENT_FREE_COUNT]:
            state["packets"] = S.grow_packets(state["packets"], stats)
        else:
            processor = state["processor"]
            state["processor"] = processor._replace(events=R.grow_events(processor.events, stats, S.ST_EVENT_FREE_HEAD,
                                                                        S.ST_EVENT_FREE_COUNT))

    def _raise_on_error(self, stats: np.ndarray, state: dict) -> None:
        code = int(stats[S.ST_ERROR])
        if code == S.ERR_NONE:
            return
        cycle = cycle_text(int(stats[S.ST_ERROR_CYCLE]), self.config.bytes_per_cycle)
        per_node = self.topology.n_ports + self.config["bmu.bus_interfaces"]
        ci = int(stats[S.ST_ERROR_CONTEXT])
        node, slot = divmod(ci, per_node)
        who = f"link receiver {slot}" if slot < self.topology.n_ports else f"BMU bus interface {slot - self.topology.n_ports}"
        where = f"node {node}, {who}, packet {_uid_text(int(stats[S.ST_ERROR_PACKET]))}, cycle {cycle}"
        if code in _ERROR_TEXT:
            raise SimulationError(f"{self.microprogram.describe(int(stats[S.ST_ERROR_PC]))}: {_ERROR_TEXT[code]} "
                                  f"({where})")
        if code == S.ERR_NO_LINK:
            port = int(stats[S.ST_ERROR_DETAIL])
            raise SimulationError(f"{self.microprogram.describe(int(stats[S.ST_ERROR_PC]))}: node {node} has no "
                                  f"link on port {port} ({self.topology.port_names[port]}) of {self.topology.name} "
                                  f"({where})")
        if code == S.ERR_TOO_MANY_SENDS:
            raise SimulationError(f"NP program {self.program.name!r}: a procedure returned "
                                  f"{int(stats[S.ST_ERROR_DETAIL])} sends, at most {MAX_SENDS} fit (cycle {cycle})")
        if code == S.ERR_DEADLOCK:
            node_table = state["controller"].node
            held = node_table[:, S.ND_BMU_USED] + node_table[:, S.ND_BMU_CREDIT]
            full = int(np.count_nonzero(held > self.config["bmu.capacity_bytes"] - 512))
            raise SimulationError(
                f"deadlock: no packet moved for {self.config['run.deadlock_cycles']} cycles (at cycle "
                f"{cycle}); {full} of {self.topology.n_nodes} BMUs are within 512 bytes of full and "
                f"{int(node_table[:, S.ND_QUEUE_LEN].sum())} packets wait in BMU queues (raise bmu.capacity_bytes "
                f"or lower the load)")
        if code == S.ERR_TICK_RANGE:
            bpc = self.config.bytes_per_cycle
            raise SimulationError(f"the run reached cycle {cycle_text(int(stats[S.ST_ERROR_DETAIL]), bpc)} (at cycle "
                                  f"{cycle}), past cycle {cycle_text(S.CX_TICK_LIMIT, bpc)}: the cut-through kernel "
                                  f"holds ticks below 2^31 ({bpc} per cycle); shorten the run, its timing delays or "
                                  f"its NP program's timers")
        if code == S.ERR_CYCLE_LIMIT:
            raise SimulationError(f"the network did not empty within run.drain_cycles after the last packet "
                                  f"(stopped at cycle {cycle})")
        raise SimulationError(f"internal error {code} at cycle {cycle}")


def _uid_text(uid: int) -> str:
    return f"{uid - R.NP_UID_BASE} sent by an NP" if uid >= R.NP_UID_BASE else str(uid)


class CutThroughProbe:
    """The cut-through machine's state as a waveform sees it between kernel calls (harts.tools.trace): per
    node its link receivers and BMU bus interfaces (microprogram counter, packet uid + 1, 0 idle), transmitters
    (busy: sending or in the idle gap after; owner), the receivers' bus slots (1 while writing a packet on the
    time-sliced bus), and the BMU (packets in the ready queue, transit bytes stored). The run is traced with
    one event per micro-instruction (no run-ahead), so every program counter is what the sequencer holds."""

    def __init__(self, simulation: CutThroughSimulation, state: dict):
        self.ports = simulation.topology.n_ports
        self.interfaces = simulation.config["bmu.bus_interfaces"]
        self.ticks_per_cycle = simulation.ticks_per_cycle
        self.state = state

    def _contexts(self):
        return [f"rx{k}" if k < self.ports else f"bmu{k - self.ports}" for k in range(self.ports + self.interfaces)]

    def signals(self, nodes: list[int]):
        """(scope, name, VCD type, bits) of every signal of the nodes."""
        for v in nodes:
            for context in self._contexts():
                yield f"n{v}.{context}", "pc", "integer", 16
                yield f"n{v}.{context}", "packet", "integer", 64
            for d in range(self.ports):
                yield f"n{v}.tx{d}", "busy", "wire", 1
                yield f"n{v}.tx{d}", "owner", "integer", 64
            for q in range(self.ports):
                yield f"n{v}.bus", f"slot{q}", "wire", 1
            yield f"n{v}.bmu", "queue", "integer", 16
            yield f"n{v}.bmu", "bytes", "integer", 32

    def sample(self, cycle: int, nodes: list[int]) -> dict:
        """Every signal's value at the end of `cycle`, by scope.name."""
        controller = self.state["controller"]
        ctx, tx, node = controller.ctx, controller.tx, controller.node
        pkt = self.state["packets"].table
        params = self.state["machine"].params
        tick = cycle * self.ticks_per_cycle
        per_node = self.ports + self.interfaces
        values = {}
        for v in nodes:
            for k, context in enumerate(self._contexts()):
                ci = v * per_node + k
                packet = int(ctx[ci, S.CX_PKT])
                values[f"n{v}.{context}.pc"] = int(ctx[ci, S.CX_PC]) if packet >= 0 else 0
                values[f"n{v}.{context}.packet"] = int(pkt[packet, S.PK_UID]) + 1 if packet >= 0 else 0
                if k < self.ports:
                    writing = packet >= 0 and ctx[ci, S.CX_STREAMING] != 0 and \
                        tick < tail_time(ci, packet, False, ctx, pkt, params)
                    values[f"n{v}.bus.slot{k}"] = int(writing)
            for d in range(self.ports):
                t = v * self.ports + d
                # busy from the packet's first byte to the end of the idle gap after it
                busy = int(tx[t, S.TX_PACKETS] > 0 and tx[t, S.TX_START] <= tick < tx[t, S.TX_FREE])
                values[f"n{v}.tx{d}.busy"] = busy
                values[f"n{v}.tx{d}.owner"] = int(tx[t, S.TX_UID]) + 1 if busy else 0
            values[f"n{v}.bmu.queue"] = int(node[v, S.ND_QUEUE_LEN])
            values[f"n{v}.bmu.bytes"] = int(node[v, S.ND_BMU_USED])
        return values

    def settled(self, nodes: list[int]) -> int:
        """The tick from which the nodes' signals change no more at the end of a run: their idle gaps are over."""
        rows = [v * self.ports + d for v in nodes for d in range(self.ports)]
        return int(self.state["controller"].tx[rows, S.TX_FREE].max())
