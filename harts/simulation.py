"""The plain Python API: build the machine from a config, run traffic on it, get results back.

    sim = Simulation(load_config("configs/uniform_e9.yaml"))
    result = sim.run()            # or sim.run(traffic) with traffic built by harts.traffic
    result.summary()

State is allocated once per run as struct-of-arrays tables (harts.state); the numba kernel in
harts.engine does all per-cycle work; the invariants in harts.invariants are checked after every run.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import state as S
from ._kernel_cache import kernel_is_cached
from .config import Config, defaults
from .engine import run_engine
from .errors import SimulationError
from .faults import FaultSet, faults_from_config
from .invariants import check_invariants
from .microcode import Microprogram, assemble
from .topology import Topology, hex_mesh
from .traffic import Traffic, build_traffic, unicast

_ERROR_TEXT = {
    S.ERR_FIFO_OVERFLOW: "receiver FIFO overflow: the microprogram started the packet streaming too late",
    S.ERR_TRUNCATED: "'done' before the packet's last byte had passed: bytes would be lost",
    S.ERR_DROPPED: "'done' without forward, tee, deliver or store: the packet would be dropped",
    S.ERR_BAD_CONTEXT: "only 'forward' can send a packet out of the BMU (tee/deliver/store need a link receiver)",
    S.ERR_NO_HEADER: "the header registers are used before 'wait_header' loaded them",
    S.ERR_TWO_STREAMS: "a second forward/tee/deliver/store for a packet already streaming",
}


@dataclass
class Result:
    """Everything a run produced. Times in the tables are ticks (byte times, 1/bytes_per_cycle cycle)."""

    config: Config
    topology: Topology
    traffic: Traffic
    packets: np.ndarray  # state.PK_* table, columns 0..n_packets-1
    deliveries: np.ndarray  # state.DL_* table
    transmitters: np.ndarray
    nodes: np.ndarray
    stats: np.ndarray
    wall_seconds: float  # the simulation itself
    startup_seconds: float  # loading (or the first time, compiling) the kernel
    faults: FaultSet

    @property
    def bytes_per_cycle(self) -> int:
        return self.config.bytes_per_cycle

    @property
    def ticks(self) -> int:
        return int(self.stats[S.ST_TIME]) + 1

    @property
    def cycles(self) -> Fraction:
        return Fraction(self.ticks, self.bytes_per_cycle)

    def broadcast_copies(self, initiations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The delivery-log columns of the copies of the broadcasts that the traffic records `initiations`
        started, and for each copy the position in `initiations` of its broadcast."""
        pk, dl = self.packets, self.deliveries
        position = np.full(int(pk[S.PK_BCAST].max(initial=0)) + 1, -1)
        position[pk[S.PK_BCAST, initiations]] = np.arange(len(initiations))
        rows = np.nonzero(pk[S.PK_KIND, dl[S.DL_PKT]] == S.KIND_BROADCAST)[0]
        which = position[pk[S.PK_BCAST, dl[S.DL_PKT, rows]]]
        return rows[which >= 0], which[which >= 0]

    def unicast_latency(self, packet: int) -> Fraction:
        """Exact latency of one unicast packet in cycles."""
        row = np.nonzero(self.deliveries[S.DL_PKT] == packet)[0]
        if len(row) != 1:
            raise SimulationError(f"packet {packet} was delivered {len(row)} times")
        ticks = int(self.deliveries[S.DL_TIME, row[0]]) - int(self.packets[S.PK_CREATE, packet])
        return Fraction(ticks, self.bytes_per_cycle)

    def summary(self) -> dict:
        bpc = self.bytes_per_cycle
        d = self.deliveries
        pk = d[S.DL_PKT]
        measured = (self.packets[S.PK_KIND, pk] == S.KIND_UNICAST) & \
                   (self.packets[S.PK_CREATE, pk] >= self.config["run.warmup_cycles"] * bpc)
        latency = (d[S.DL_TIME, measured] - self.packets[S.PK_CREATE, pk[measured]]) / bpc
        cycles = float(self.cycles)
        n_links = self.topology.n_nodes * self.topology.n_ports
        link_bytes = int(self.transmitters[S.TX_BYTES].sum())
        capacity = self.config["bmu.capacity_bytes"]
        n_unicast = int(np.count_nonzero(self.traffic.kind == S.KIND_UNICAST))
        hops = self.packets[S.PK_HOPS, : len(self.traffic)][self.traffic.kind == S.KIND_UNICAST]
        stores = self.packets[S.PK_STORES, : len(self.traffic)][self.traffic.kind == S.KIND_UNICAST]
        return {
            "mesh_size": self.topology.size,
            "nodes": self.topology.n_nodes,
            "microcode": self.config["microcode"],
            "packets": n_unicast,
            "packets_measured": int(measured.sum()),
            "broadcast_worms": int(len(self.traffic) - n_unicast),
            "deliveries": int(self.stats[S.ST_DELIVERIES]),
            "latency_mean_cycles": float(latency.mean()) if len(latency) else None,
            "latency_max_cycles": float(latency.max()) if len(latency) else None,
            "mean_hops": float(hops.mean()) if len(hops) else None,
            "stores_per_packet": float(stores.mean()) if len(stores) else None,
            "link_utilisation": link_bytes / (n_links * bpc * cycles),
            "bmu_utilisation": float(self.nodes[S.ND_BMU_INTEGRAL].sum())
            / (capacity * self.topology.n_nodes * self.ticks),
            "bmu_peak_bytes": int(self.nodes[S.ND_BMU_PEAK].max()),
            "fifo_peak_bytes": int(self.stats[S.ST_FIFO_PEAK]),
            "cut_throughs": int(self.stats[S.ST_CUT_THROUGHS]),
            "microinstructions": int(self.stats[S.ST_INSTRUCTIONS]),
            "dropped_by_faults": int(self.stats[S.ST_DROPS] - self.stats[S.ST_OVERFLOWS]),
            "dropped_by_bmu_overflow": int(self.stats[S.ST_OVERFLOWS]),
            "corrupted_transmissions": int(self.stats[S.ST_CORRUPTED]),
            "forged_copies": int(self.stats[S.ST_BOGUS]),
            "simulated_cycles": round(cycles, 3),
            "wall_seconds": self.wall_seconds,
            "kernel_startup_seconds": self.startup_seconds,
            "cycles_per_second": cycles / self.wall_seconds if self.wall_seconds > 0 else None,
            "node_cycles_per_second": cycles * self.topology.n_nodes / self.wall_seconds
            if self.wall_seconds > 0 else None,
        }


def load_kernel() -> None:
    """Load the compiled kernel from numba's disk cache (compiling it the first time) in this process."""
    Simulation(defaults().with_values(mesh__size=3)).run(unicast([0], [0], [1], [64]))


def _arguments(sim: Simulation, state: dict) -> tuple:
    """The kernel's arguments in its order (see harts.engine.run_engine), all but the traffic count."""
    topo = sim.topology
    return (sim.microprogram.code, state["ctx"], state["ctx_tags"], state["pkt"], state["tags"], state["tx"],
            state["node"], state["dlog"], state["stats"], state["params"], topo.neighbours, topo.axis_positive,
            topo.axis_negative, state["scratch"])


def _grow(table: np.ndarray) -> np.ndarray:
    """The table with twice the columns (the kernel initialises every record it takes from the pool)."""
    bigger = np.zeros((table.shape[0], 2 * table.shape[1]), dtype=np.int64)
    bigger[:, : table.shape[1]] = table
    return bigger


def _progress_bar(total_cycles: int):
    from tqdm import tqdm
    return tqdm(total=total_cycles, unit="cycle", unit_scale=True, desc="simulating", leave=False,
                file=sys.stderr)


class Simulation:
    """One configured machine: topology, microprogram and parameters, ready to run traffic."""

    def __init__(self, config: Config, microprogram: Microprogram | None = None):
        self.config = config
        self.topology = hex_mesh(config["mesh.size"])
        self.microprogram = microprogram or assemble(config.microcode_path())
        self.params = self._parameters()
        self.faults = faults_from_config(config, self.topology)

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
        p[S.PR_INJECTORS] = c["bmu.injection_contexts"]
        p[S.PR_DEADLOCK_TICKS] = c["run.deadlock_cycles"] * bpc
        p[S.PR_ENTRY_RECEIVE] = self.microprogram.entry_receive
        p[S.PR_ENTRY_INJECT] = self.microprogram.entry_inject
        p[S.PR_MESH_SIZE] = self.topology.size
        if c["bmu.when_full"] not in ("drop", "wait"):
            raise c.error("bmu.when_full", f"'bmu.when_full' must be drop or wait, got {c['bmu.when_full']!r}")
        p[S.PR_BMU_DROPS_WHEN_FULL] = c["bmu.when_full"] == "drop"
        return p

    def run(self, traffic: Traffic | None = None, check: bool = True, progress: bool = False,
            slice_cycles: int | None = None, faults: FaultSet | None = None, observer=None) -> Result:
        """Run traffic (default: the config's) until the network is empty; check the invariants.

        With ``progress``, a bar on stderr follows the simulated cycles up to the last packet's creation.
        ``faults`` replaces the config's faults for this run. ``observer`` (see harts.trace) is called with
        the state whenever the kernel returns, and makes it return at every cycle of the observer's window.
        The kernel runs in slices of simulated time (default: 1% of the traffic's duration, at least 1000
        cycles) so that Ctrl-C is honoured between slices.
        """
        if traffic is None:
            traffic = build_traffic(self.config, self.topology)
        faults = self.faults if faults is None else faults
        bpc = self.config.bytes_per_cycle
        last_create = int(traffic.create[-1]) if len(traffic) else 0
        state = self._initial_state(traffic, faults, last_create)
        stats, params = state["stats"], state["params"]
        started = time.perf_counter()
        if not run_engine.signatures:
            # The first call in a process loads the kernel from disk (or compiles it); an empty call does
            # that apart, so wall_seconds counts simulation only.
            if not kernel_is_cached():
                print("harts: compiling the simulation kernel (first run only, 15-30 s)", file=sys.stderr,
                      flush=True)
            run_engine(*_arguments(self, {**state, "stats": stats.copy()}), 0)
        loaded = time.perf_counter()
        horizon = max(last_create, 1)
        slice_ticks = bpc * (slice_cycles or max(1000, horizon // 100))
        bar = _progress_bar(horizon) if progress else None
        while True:
            if stats[S.ST_PAUSED] != 2:
                params[S.PR_PAUSE_AT] = stats[S.ST_TIME] + slice_ticks
                if observer is not None:
                    params[S.PR_PAUSE_AT] = observer.pause_before(int(stats[S.ST_TIME]), int(params[S.PR_PAUSE_AT]))
            run_engine(*_arguments(self, state), len(traffic))
            if observer is not None:
                observer.observe(int(stats[S.ST_TIME]), bool(stats[S.ST_PAUSED]), state)
            if bar is not None:
                bar.update(min(horizon, int(stats[S.ST_TIME]) // bpc) - bar.n)
            if stats[S.ST_PAUSED] == 2:
                for name in ("pkt", "tags", "dlog"):
                    state[name] = _grow(state[name])
            elif not stats[S.ST_PAUSED]:
                break
        if bar is not None:
            bar.close()
        wall = time.perf_counter() - loaded
        node, ctx = state["node"], state["ctx"]
        # Bring the BMU occupancy integrals up to the last tick.
        node[S.ND_BMU_INTEGRAL] += node[S.ND_BMU_USED] * (int(stats[S.ST_TIME]) - node[S.ND_BMU_CHANGED])
        self._raise_on_error(stats, ctx, node)
        result = Result(self.config, self.topology, traffic, state["pkt"][:, : int(stats[S.ST_PACKETS])],
                        state["dlog"][:, : int(stats[S.ST_DELIVERIES])], state["tx"], node, stats, wall,
                        loaded - started, faults)
        if check:
            check_invariants(result, ctx)
        return result

    def _initial_state(self, traffic: Traffic, faults: FaultSet, last_create: int) -> dict:
        """Every table of the kernel, allocated once for the run (the packet and delivery tables are grown
        if the kernel asks)."""
        topo = self.topology
        n_traffic = len(traffic)
        unicast = traffic.kind == S.KIND_UNICAST
        broadcast = ~unicast
        # Room for the records the NPs create and for the deliveries (measured: 0.6N records per SBCAST on
        # an idle-to-busy E-7, 1.3N for 2-BCAST, 4N for 6-BCAST); more is made when it runs low.
        spare = 64 + 16 * topo.n_nodes + 4 * topo.n_nodes * int(broadcast.sum())
        pkt = S.table(S.PK_ROWS, n_traffic + spare)
        pkt[S.PK_NEXT] = -1
        pkt[S.PK_PARENT] = -1
        pkt[S.PK_BCAST] = -1
        pkt[S.PK_SRC, :n_traffic] = traffic.source
        pkt[S.PK_DST, :n_traffic] = traffic.destination
        pkt[S.PK_LEN, :n_traffic] = traffic.length
        pkt[S.PK_KIND, :n_traffic] = traffic.kind
        pkt[S.PK_DIR, :n_traffic] = traffic.direction
        pkt[S.PK_DIST, :n_traffic] = traffic.distance
        pkt[S.PK_DIST0, :n_traffic] = traffic.distance
        pkt[S.PK_ALGORITHM, :n_traffic] = traffic.algorithm
        pkt[S.PK_CREATE, :n_traffic] = traffic.create * self.config.bytes_per_cycle
        pkt[S.PK_VALUE, :n_traffic] = S.VALUE_TRUE
        pkt[S.PK_BCAST, :n_traffic][broadcast] = np.arange(int(broadcast.sum()))
        tags = S.table(topo.n_axes, pkt.shape[1])
        if unicast.any():
            tags[:, :n_traffic][:, unicast] = topo.routing_tags_many(traffic.source[unicast],
                                                                     traffic.destination[unicast]).T
        n_ctx = topo.n_nodes * (topo.n_ports + self.config["bmu.injection_contexts"])
        ctx = S.table(S.CX_ROWS, n_ctx)
        ctx[S.CX_PKT] = -1
        ctx[S.CX_WAKE] = S.NEVER
        ctx[S.CX_PENDING_HEAD] = -1
        ctx[S.CX_PENDING_TAIL] = -1
        tx = S.table(S.TX_ROWS, topo.n_nodes * topo.n_ports)
        tx[S.TX_DEAD] = faults.dead_transmitters
        node = S.table(S.ND_ROWS, topo.n_nodes)
        node[S.ND_FAULT] = faults.node_fault
        for row in (S.ND_QUEUE_HEAD, S.ND_QUEUE_TAIL, S.ND_INBOX_HEAD, S.ND_INBOX_TAIL):
            node[row] = -1
        node[S.ND_NP_WAKE] = S.NEVER
        stats = np.zeros(S.ST_ROWS, dtype=np.int64)
        stats[S.ST_PACKETS] = n_traffic
        # xorshift needs a non-zero state: an odd constant mixed with the seed
        stats[S.ST_RANDOM] = 0x9E3779B97F4A7C15 - (1 << 64) + 2 * self.config["run.seed"] + 1
        params = self.params.copy()
        params[S.PR_CORRUPTION_PER_MILLION] = round(faults.corruption_probability * 1_000_000)
        params[S.PR_LAST_TICK] = (last_create + self.config["run.drain_cycles"]) * self.config.bytes_per_cycle
        return {
            "ctx": ctx, "ctx_tags": S.table(topo.n_axes, n_ctx), "pkt": pkt, "tags": tags, "tx": tx,
            "node": node, "dlog": S.table(S.DL_ROWS, int(unicast.sum()) + spare), "stats": stats,
            "params": params,
            # one procedure run's send_packets: at most a continuation and four relays, or a forgery per port
            "scratch": np.zeros((max(8, topo.n_ports), 4), dtype=np.int64),
        }

    def _raise_on_error(self, stats: np.ndarray, ctx: np.ndarray, node: np.ndarray) -> None:
        code = int(stats[S.ST_ERROR])
        if code == S.ERR_NONE:
            return
        cycle = Fraction(int(stats[S.ST_ERROR_CYCLE]), self.config.bytes_per_cycle)
        if code in _ERROR_TEXT:
            per_node = self.topology.n_ports + self.config["bmu.injection_contexts"]
            ci = int(stats[S.ST_ERROR_CONTEXT])
            node, slot = divmod(ci, per_node)
            who = f"link receiver {slot}" if slot < self.topology.n_ports else \
                f"BMU context {slot - self.topology.n_ports}"
            raise SimulationError(f"{self.microprogram.describe(int(stats[S.ST_ERROR_PC]))}: {_ERROR_TEXT[code]} "
                                  f"(node {node}, {who}, packet {int(stats[S.ST_ERROR_PACKET])}, "
                                  f"cycle {float(cycle):g})")
        if code == S.ERR_DEADLOCK:
            held = node[S.ND_BMU_USED] + node[S.ND_BMU_CREDIT]
            full = int(np.count_nonzero(held > self.config["bmu.capacity_bytes"] - 512))
            raise SimulationError(
                f"deadlock: no packet moved for {self.config['run.deadlock_cycles']} cycles (at cycle "
                f"{float(cycle):g}); {full} of {self.topology.n_nodes} BMUs are within 512 bytes of full and "
                f"{int(node[S.ND_QUEUE_LEN].sum())} packets wait in BMU queues (raise bmu.capacity_bytes "
                f"or lower the load)")
        if code == S.ERR_CYCLE_LIMIT:
            raise SimulationError(f"the network did not empty within run.drain_cycles after the last packet "
                                  f"(stopped at cycle {float(cycle):g})")
        raise SimulationError(f"internal table exhausted (error {code}) at cycle {float(cycle):g}")
