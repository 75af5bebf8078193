"""What a run produced: the delivery and packet logs (kept whole, or only summed up) and the summary.

Times in the logs are ticks (byte times, 1/bytes_per_cycle of a cycle). Traffic packets have their
traffic index as uid; packets that NPs send on their own have uids from NP_UID_BASE on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .config import Config
from ..controller import records as R
from ..controller import state as S
from ..errors import SimulationError
from ..network import Topology
from .traffic import links_per_node, uniform_node_load

NP_UID_BASE = R.NP_UID_BASE


@dataclass
class Tally:
    """Sums over a run that the summary needs, kept as the logs are drained."""

    unicast_packets: int = 0  # traffic unicast packets completed
    unicast_hops: int = 0
    unicast_stores: int = 0
    unicast_dropped: int = 0
    measured: int = 0  # unicast deliveries of packets created after the warm-up
    latency_sum: int = 0  # ticks
    latency_max: int = 0
    deliveries: int = 0
    records: int = 0  # packet records completed
    contention: dict = field(default_factory=lambda: {"stored": 0, "retried": 0, "queued": 0})
    contended_records: int = 0


class Recorder:
    """Takes the drained logs: sums what the summary needs and, if asked, keeps every row."""

    def __init__(self, simulation, keep: bool, hops: bool):
        self.keep = keep
        self.keep_hops = hops
        self.warmup_ticks = simulation.config["run.warmup_cycles"] * simulation.config.bytes_per_cycle
        self.tally = Tally()
        self._deliveries: list[np.ndarray] = []
        self._header: list[np.ndarray] = []
        self._packets: list[np.ndarray] = []
        self._hops: list[np.ndarray] = []
        self._words = simulation.layout.words

    def take(self, deliveries: np.ndarray, header: np.ndarray, packets: np.ndarray, hops: np.ndarray) -> None:
        t = self.tally
        t.deliveries += deliveries.shape[1]
        traffic_unicast = (deliveries[R.DL_UID] < NP_UID_BASE) & (deliveries[R.DL_ROUTE] == R.ROUTE_DESTINATION)
        measured = traffic_unicast & (deliveries[R.DL_CREATE] >= self.warmup_ticks)
        latency = deliveries[R.DL_TICK, measured] - deliveries[R.DL_CREATE, measured]
        t.measured += int(measured.sum())
        t.latency_sum += int(latency.sum())
        t.latency_max = max(t.latency_max, int(latency.max(initial=0)))
        unicast = (packets[R.PL_UID] < NP_UID_BASE) & (packets[R.PL_ROUTE] == R.ROUTE_DESTINATION)
        t.unicast_packets += int(unicast.sum())
        t.unicast_hops += int(packets[R.PL_HOPS, unicast].sum())
        t.unicast_stores += int(packets[R.PL_STORES, unicast].sum())
        t.unicast_dropped += int(np.count_nonzero(packets[R.PL_DROPPED, unicast]))
        t.records += packets.shape[1]
        contention = packets[R.PL_CONTENTION]
        t.contended_records += int(np.count_nonzero(contention))
        for name, bit in (("stored", R.CONTENTION_STORED), ("retried", R.CONTENTION_RETRIED),
                          ("queued", R.CONTENTION_QUEUED)):
            t.contention[name] += int(np.count_nonzero(contention & bit))
        if self.keep:
            self._deliveries.append(deliveries)
            self._header.append(header)
            self._packets.append(packets)
        if self.keep_hops:
            self._hops.append(hops)

    def finish(self) -> Logs:
        hops = np.concatenate(self._hops + [np.zeros((S.HL_ROWS, 0), np.int64)], axis=1) if self.keep_hops else None
        if not self.keep:
            return Logs(None, None, None, hops, self.tally)
        return Logs(np.concatenate(self._deliveries + [np.zeros((R.DL_ROWS, 0), np.int64)], axis=1),
                    np.concatenate(self._header + [np.zeros((0, max(self._words, 1)), np.int64)], axis=0),
                    np.concatenate(self._packets + [np.zeros((R.PL_ROWS, 0), np.int64)], axis=1), hops, self.tally)


@dataclass
class Logs:
    deliveries: np.ndarray | None  # records.DL_* rows, one column per delivered copy, in delivery order
    delivery_header: np.ndarray | None  # (copies, header words): each copy's header as delivered
    packets: np.ndarray | None  # records.PL_* rows, one column per packet record, in completion order
    hops: np.ndarray | None  # state.HL_* rows, one column per step of a packet at a node (run(hops=True))
    tally: Tally


@dataclass
class Counters:
    """The network's cumulative counters at one tick; the difference of two gives a window's utilisations."""

    tick: int
    link_bytes: np.ndarray  # per transmitter (node * ports + port)
    bmu_byte_ticks: np.ndarray  # per node: transit bytes held, summed over ticks
    queue_packet_ticks: np.ndarray  # per node: packets in the ready queue, summed over ticks
    interface_busy: np.ndarray  # per node: ticks its bus interfaces held a packet
    interface_blocked: np.ndarray  # per node: ... of which waiting for a refused transmitter

    @staticmethod
    def of(transmitters: np.ndarray, nodes: np.ndarray, tick: int) -> Counters:
        """From the kernel's tables, with the occupancy integrals brought up to `tick`."""
        return Counters(
            tick, transmitters[:, S.TX_BYTES].copy(),
            nodes[:, S.ND_BMU_INTEGRAL] + nodes[:, S.ND_BMU_USED] * (tick - nodes[:, S.ND_BMU_CHANGED]),
            nodes[:, S.ND_QUEUE_INTEGRAL] + nodes[:, S.ND_QUEUE_LEN] * (tick - nodes[:, S.ND_QUEUE_CHANGED]),
            nodes[:, S.ND_INTERFACE_BUSY].copy(), nodes[:, S.ND_INTERFACE_BLOCKED].copy())

    @staticmethod
    def zero(like: Counters) -> Counters:
        return Counters(0, *(np.zeros_like(a) for a in (like.link_bytes, like.bmu_byte_ticks,
                                                         like.queue_packet_ticks, like.interface_busy,
                                                         like.interface_blocked)))


def link_utilisation(first: Counters, last: Counters, topology: Topology) -> np.ndarray:
    """Each directed link's utilisation between two counters, row by row of ``topology.links()``: the bytes
    it carried / the bytes it could have carried (one a tick)."""
    links = topology.links()
    carried = last.link_bytes - first.link_bytes
    return carried[links[:, 0] * topology.n_ports + links[:, 1]] / (last.tick - first.tick)


def bmu_utilisation(first: Counters, last: Counters, config: Config) -> np.ndarray:
    """Each node's BMU utilisation between two counters: the transit bytes it held on average / capacity."""
    return (last.bmu_byte_ticks - first.bmu_byte_ticks) / (config["bmu.capacity_bytes"] * (last.tick - first.tick))


def interface_utilisation(first: Counters, last: Counters, config: Config) -> np.ndarray:
    """Each node's bus-interface utilisation between two counters: the share of time its BMU's bus interfaces
    held a packet, over all of them."""
    return (last.interface_busy - first.interface_busy) / (config["bmu.bus_interfaces"] * (last.tick - first.tick))


def utilisations(first: Counters, last: Counters, topology: Topology, config: Config) -> dict:
    """How busy links, BMUs and bus interfaces were between two counters."""
    ticks = last.tick - first.tick
    nodes = topology.n_nodes
    link = link_utilisation(first, last, topology)
    busy = float((last.interface_busy - first.interface_busy).sum())
    blocked = float((last.interface_blocked - first.interface_blocked).sum())
    return {
        "link_utilisation": float(link.mean()),
        "link_utilisation_max": float(link.max()),
        "bmu_utilisation": float(bmu_utilisation(first, last, config).mean()),
        "bmu_queue_mean_packets": float((last.queue_packet_ticks - first.queue_packet_ticks).sum()) / (nodes * ticks),
        "bmu_interface_utilisation": float(interface_utilisation(first, last, config).mean()),
        "bmu_interface_blocked": blocked / busy if busy else 0.0,
    }


@dataclass
class Result:
    """Everything a run produced."""

    config: Config
    topology: Topology
    layout: object  # simulation.HeaderLayout
    program: object  # np.program.Program
    traffic: object  # the traffic.Traffic given to run(), or None for a config's streamed traffic
    traffic_packets: int  # traffic records handed to the NPs
    logs: Logs
    transmitters: np.ndarray
    nodes: np.ndarray
    stats: np.ndarray
    wall_seconds: float  # the simulation itself
    startup_seconds: float  # loading (or the first time, compiling) the kernel
    faults: object
    np_state: np.ndarray  # (nodes, Program.state_words): what each NP's procedure kept, at the end
    snapshots: dict[int, Counters]  # the counters at the cycles run(snapshots=...) asked for

    @property
    def bytes_per_cycle(self) -> int:
        return self.config.bytes_per_cycle

    @property
    def ticks(self) -> int:
        return int(self.stats[S.ST_TIME]) + 1

    @property
    def cycles(self) -> Fraction:
        return Fraction(self.ticks, self.bytes_per_cycle)

    @property
    def deliveries(self) -> np.ndarray:
        return self._kept(self.logs.deliveries)

    @property
    def delivery_header(self) -> np.ndarray:
        return self._kept(self.logs.delivery_header)

    @property
    def packets(self) -> np.ndarray:
        return self._kept(self.logs.packets)

    @property
    def hops(self) -> np.ndarray:
        if self.logs.hops is None:
            raise SimulationError("this run kept no hop log (run(hops=True))")
        return self.logs.hops

    def _kept(self, table):
        if table is None:
            raise SimulationError("this run kept only its summary (run(keep=False))")
        return table

    def header(self, name: str) -> np.ndarray:
        """A header field of every delivered copy, as delivered."""
        return self.delivery_header[:, self.layout.fields[name]]

    def packet(self, uid: int) -> np.ndarray:
        """The packet log column of one packet."""
        column = np.nonzero(self.packets[R.PL_UID] == uid)[0]
        if len(column) != 1:
            raise SimulationError(f"packet {uid} is in the packet log {len(column)} times")
        return self.packets[:, column[0]]

    def unicast_latency(self, uid: int) -> Fraction:
        """Exact latency of one unicast packet in cycles."""
        row = np.nonzero(self.deliveries[R.DL_UID] == uid)[0]
        if len(row) != 1:
            raise SimulationError(f"packet {uid} was delivered {len(row)} times")
        ticks = int(self.deliveries[R.DL_TICK, row[0]]) - int(self.deliveries[R.DL_CREATE, row[0]])
        return Fraction(ticks, self.bytes_per_cycle)

    def copies_of(self, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The delivery-log columns of the copies NPs sent for the traffic records `origins` (uids, e.g.
        broadcast initiations), and for each copy the position in `origins` of its origin."""
        dl = self.deliveries
        origins = np.asarray(origins, dtype=np.int64)
        rows = np.nonzero(dl[R.DL_UID] >= NP_UID_BASE)[0]
        if len(origins) == 0:
            return rows[:0], rows[:0]
        order = np.argsort(origins)
        sorted_origins = origins[order]
        at = np.minimum(np.searchsorted(sorted_origins, dl[R.DL_ORIGIN, rows]), len(origins) - 1)
        hit = sorted_origins[at] == dl[R.DL_ORIGIN, rows]
        return rows[hit], order[at[hit]]

    def counters(self) -> Counters:
        """The counters at the end of the run."""
        return Counters.of(self.transmitters, self.nodes, self.ticks)

    def _offered_loads(self) -> dict:
        """The config's uniform traffic under both readings of its load (none for traffic given to run())."""
        if self.traffic is not None or self.config["traffic.uniform.load"] <= 0:
            return {}
        node = uniform_node_load(self.config, self.topology)
        return {"offered_node_load": node,
                "offered_link_load": node * self.topology.mean_distance() / links_per_node(self.topology)}

    def link_utilisation(self) -> np.ndarray:
        """Each directed link's utilisation over the run, row by row of ``topology.links()``."""
        final = self.counters()
        return link_utilisation(Counters.zero(final), final, self.topology)

    def bmu_utilisation(self) -> np.ndarray:
        """Each node's BMU utilisation over the run: the transit bytes it held on average / its capacity."""
        final = self.counters()
        return bmu_utilisation(Counters.zero(final), final, self.config)

    def interface_utilisation(self) -> np.ndarray:
        """Each node's BMU bus-interface utilisation over the run."""
        final = self.counters()
        return interface_utilisation(Counters.zero(final), final, self.config)

    def summary(self) -> dict:
        bpc = self.bytes_per_cycle
        t = self.logs.tally
        cycles = float(self.cycles)
        hops = int(self.stats[S.ST_HOPS])
        final = self.counters()
        return {
            "topology": self.topology.name,
            "nodes": self.topology.n_nodes,
            "microcode": self.config["microcode"],
            "packets": t.unicast_packets,
            "packets_measured": t.measured,
            "initiations": int(self.traffic_packets - t.unicast_packets),
            "deliveries": t.deliveries,
            "latency_mean_cycles": t.latency_sum / t.measured / bpc if t.measured else None,
            "latency_max_cycles": t.latency_max / bpc if t.measured else None,
            "mean_hops": t.unicast_hops / t.unicast_packets if t.unicast_packets else None,
            "stores_per_packet": t.unicast_stores / t.unicast_packets if t.unicast_packets else None,
            **self._offered_loads(),
            **utilisations(Counters.zero(final), final, self.topology, self.config),
            "bmu_peak_bytes": int(self.nodes[:, S.ND_BMU_PEAK].max()),
            "fifo_peak_bytes": int(self.stats[S.ST_FIFO_PEAK]),
            "cut_throughs": int(self.stats[S.ST_CUT_THROUGHS]),
            "packet_hops": hops,
            "microinstructions": int(self.stats[S.ST_INSTRUCTIONS]),
            "events": int(self.stats[S.ST_EVENTS]),
            "ticks_with_work": int(self.stats[S.ST_TICKS]),
            "contention_free": t.contended_records == 0,
            "packets_stored": t.contention["stored"],
            "packets_retried": t.contention["retried"],
            "packets_queued": t.contention["queued"],
            "packets_in_flight_peak": int(self.stats[S.ST_IN_FLIGHT_PEAK]),
            "dropped_by_faults": int(self.stats[S.ST_DROPS] - self.stats[S.ST_OVERFLOWS]),
            "dropped_by_bmu_overflow": int(self.stats[S.ST_OVERFLOWS]),
            "corrupted_transmissions": int(self.stats[S.ST_CORRUPTED]),
            "forged_packets": int(self.stats[S.ST_FORGED]),
            "simulated_cycles": round(cycles, 3),
            "wall_seconds": self.wall_seconds,
            "kernel_startup_seconds": self.startup_seconds,
            "cycles_per_second": cycles / self.wall_seconds if self.wall_seconds > 0 else None,
            "node_cycles_per_second": cycles * self.topology.n_nodes / self.wall_seconds
            if self.wall_seconds > 0 else None,
            "packet_hops_per_second": hops / self.wall_seconds if self.wall_seconds > 0 else None,
        }
