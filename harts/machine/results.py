"""What a run produced, on either kernel: the delivery and packet logs (kept whole, or only summed up), the
hop records if a tool asked for them, the network's counters, and the summary.

Times in the logs are ticks: ``ticks_per_cycle`` a cycle (the bytes a link moves per cycle on the cut-through
kernel, one on the flit-level kernel). Lengths are bytes on the cut-through kernel and flits on the flit-level
kernel (``length_unit``). Traffic packets have their traffic index as uid; packets that NPs send on their own
have uids from NP_UID_BASE on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..controller import observations as O
from ..controller import records as R
from ..controller import state as S
from ..errors import SimulationError
from ..network import Topology
from .config import BOTH, CUT_THROUGH, FLIT, Config
from .hops import HopRecords
from .statistics import Window, measured
from .traffic import links_per_node, uniform_node_load

NP_UID_BASE = R.NP_UID_BASE
CONTENTION_MARKS = (("stored", R.CONTENTION_STORED), ("retried", R.CONTENTION_RETRIED),
                    ("queued", R.CONTENTION_QUEUED), ("blocked", R.CONTENTION_BLOCKED))
CONTENTION_SUMS = (("stored", O.OB_STORED), ("retried", O.OB_RETRIED), ("queued", O.OB_QUEUED),
                   ("blocked", O.OB_BLOCKED))  # Tally.contention's names, where the kernel counts each


class ValueCounts:
    """How many deliveries took each value (a latency in ticks, or a hop count), added a drain at a time. Each drain's
    counts are kept as arrays and merged when asked (or when many have been kept), where a Counter's update looped in
    Python over every distinct value of every drain (bench/SPEED.md)."""

    KEPT = 16  # drains' counts kept before they are merged

    def __init__(self):
        self._values: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []

    def add(self, latency: np.ndarray) -> None:
        values, counts = value_counts(latency)
        self._values.append(values)
        self._counts.append(counts)
        if len(self._values) > self.KEPT:
            self.merged()

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """Every value seen, increasing, and how many deliveries took it."""
        values = np.concatenate([np.zeros(0, np.int64), *self._values])
        counts = np.concatenate([np.zeros(0, np.int64), *self._counts])
        values, where = np.unique(values, return_inverse=True)
        merged = np.zeros(values.size, np.int64)
        np.add.at(merged, where, counts)
        self._values, self._counts = [values], [merged]
        return values, merged

    def max(self) -> int:
        values, _ = self.merged()
        return int(values[-1])


@dataclass
class Tally:
    """Sums over a run that the summary needs, taken from the kernel's observations as the logs are drained."""

    unicast_packets: int = 0  # traffic unicast packets completed
    unicast_hops: int = 0
    unicast_stores: int = 0
    unicast_dropped: int = 0
    measured: int = 0  # unicast deliveries of packets created after the warm-up
    # of the measured deliveries, in ticks: creation to delivery, its source queueing and network parts; and hops
    latencies: ValueCounts = field(default_factory=ValueCounts)
    queueing: ValueCounts = field(default_factory=ValueCounts)
    network: ValueCounts = field(default_factory=ValueCounts)
    hops: ValueCounts = field(default_factory=ValueCounts)
    deliveries: int = 0
    records: int = 0  # packet records completed
    link_hops: int = 0  # links crossed by all packet records (each its own hops): the packet-hops
    copy_length: int = 0  # length times copies delivered, over all packet records
    contention: dict = field(default_factory=lambda: {name: 0 for name, _ in CONTENTION_MARKS})
    contended_records: int = 0
    first_wait: tuple | None = None  # earliest_wait of every packet so far

    def take(self, observed: np.ndarray) -> None:
        """The kernel's sums so far (logs.observed: controller/observations.py)."""
        self.unicast_packets = int(observed[O.OB_UNICAST_PACKETS])
        self.unicast_hops = int(observed[O.OB_UNICAST_HOPS])
        self.unicast_stores = int(observed[O.OB_UNICAST_STORES])
        self.unicast_dropped = int(observed[O.OB_UNICAST_DROPPED])
        self.deliveries = int(observed[O.OB_DELIVERIES])
        self.records = int(observed[O.OB_RECORDS])
        self.link_hops = int(observed[O.OB_LINK_HOPS])
        self.copy_length = int(observed[O.OB_COPY_LENGTH])
        self.contended_records = int(observed[O.OB_CONTENDED])
        for name, row in CONTENTION_SUMS:
            self.contention[name] = int(observed[row])
        self.first_wait = None if observed[O.OB_WAIT_KIND] == 0 else tuple(
            int(observed[row]) for row in (O.OB_WAIT_AT, O.OB_WAIT_UID, O.OB_WAIT_NODE, O.OB_WAIT_KIND))


def earliest_wait(packets: np.ndarray) -> tuple[int, int, int, int] | None:
    """(tick, uid, node, CONTENTION_* mark) of the earliest wait of a packet itself among these packet-log
    columns (ties: the lower uid); None if none of them waited. The kernels keep the same of the whole run
    (Tally.first_wait); this is for a part of a kept log."""
    waited = np.flatnonzero(packets[R.PL_CONTENDED_KIND])
    if waited.size == 0:
        return None
    first = waited[np.lexsort((packets[R.PL_UID, waited], packets[R.PL_CONTENDED_AT, waited]))[0]]
    return tuple(int(packets[row, first]) for row in (R.PL_CONTENDED_AT, R.PL_UID, R.PL_CONTENDED_NODE,
                                                      R.PL_CONTENDED_KIND))


def value_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an int64 array, increasing, and how many times each occurs. A count per value of the
    array's range when that range is not much larger than the array (linear time, where sorting is n log n), else
    by sorting."""
    if values.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = int(values.min())
    if int(values.max()) - low > 4 * values.size + 1024:
        return np.unique(values, return_counts=True)
    counts = np.bincount(values - low)
    present = np.flatnonzero(counts)
    return present + low, counts[present]


def describe_wait(wait: tuple[int, int, int, int] | None, ticks_per_cycle: int, start: int = 0) -> dict | None:
    """An earliest_wait as the summaries give it (`first_contention`), its cycle counted from tick `start`."""
    if wait is None:
        return None
    tick, uid, node, mark = wait
    return {"uid": uid, "node": node, "cycle": float(Fraction(tick - start, ticks_per_cycle)),
            "kind": R.CONTENTION_NAMES[mark]}


class Recorder:
    """Takes the drained logs: the measured latencies, the kernel's observations (controller/observations.py) and,
    if asked, every row."""

    def __init__(self, simulation, keep: bool, hops: bool, rows: tuple[int, int, int]):
        """`rows`: where the kernel counts the delivery, packet and hop log's rows in logs.stats."""
        self.window = Window.of(simulation.config, simulation.nodes)
        self.keep = keep
        self.rows = rows
        self.keep_hops = hops
        self.ticks_per_cycle = simulation.ticks_per_cycle
        self.kernel = simulation.kernel
        self.warmup_ticks = simulation.config["run.warmup_cycles"] * simulation.ticks_per_cycle
        self.tally = Tally()
        self._deliveries: list[np.ndarray] = []
        self._header: list[np.ndarray] = []
        self._packets: list[np.ndarray] = []
        self._hops: list[np.ndarray] = []
        self._words = simulation.layout.words

    def new_observations(self, hops_are_bytes: bool = True) -> np.ndarray:
        """The kernel's observations for a new run (logs.observed), with the run's settings in it."""
        observed = np.zeros(O.OB_ROWS, np.int64)
        observed[O.OB_WARMUP] = self.warmup_ticks
        observed[O.OB_HOPS_ARE_BYTES] = hops_are_bytes
        observed[O.OB_WINDOW_MIDDLE] = self.window.middle * self.ticks_per_cycle
        observed[O.OB_WINDOW_END] = self.window.end * self.ticks_per_cycle
        return observed

    def room(self, logs: R.Logs) -> int:
        """Rows the logs can still take (the kernels' own count, run here in Python)."""
        return int(O.log_rows_free.__wrapped__(logs, *self.rows))

    def drain(self, logs: R.Logs) -> None:
        """Take the rows the kernel logged since the last drain and empty the logs. The kernel writes over its logs
        afterwards, so rows are copied where they are kept."""
        stats, observed, rows = logs.stats, logs.observed, self.rows
        measured = logs.latencies[:, : observed[O.OB_LATENCY_ROWS]]
        t = self.tally
        t.measured += measured.shape[1]
        t.latencies.add(measured[R.LT_TOTAL])
        t.queueing.add(measured[R.LT_QUEUEING])
        t.network.add(measured[R.LT_TOTAL] - measured[R.LT_QUEUEING])
        t.hops.add(measured[R.LT_HOPS])
        observed[O.OB_LATENCY_ROWS] = 0
        t.take(observed)
        if self.keep:
            self._deliveries.append(logs.deliveries[:, : stats[rows[0]]].copy())
            self._header.append(logs.delivery_header[: stats[rows[0]]].copy())
            self._packets.append(logs.packets[:, : stats[rows[1]]].copy())
        if self.keep_hops:
            self._hops.append(logs.hops[:, : stats[rows[2]]].copy())
        for row in rows:
            stats[row] = 0

    def finish(self, logs: R.Logs) -> Logs:
        """What the run logged, once the kernel's `logs` have been drained for the last time."""
        hops = None
        if self.keep_hops:
            hops = HopRecords(np.concatenate(self._hops + [np.zeros((R.HR_ROWS, 0), np.int64)], axis=1),
                              self.ticks_per_cycle, self.kernel)
        window = (self.tally, self.window, logs.window.copy())
        if not self.keep:
            return Logs(None, None, None, hops, *window)
        return Logs(np.concatenate(self._deliveries + [np.zeros((R.DL_ROWS, 0), np.int64)], axis=1),
                    np.concatenate(self._header + [np.zeros((0, max(self._words, 1)), np.int64)], axis=0),
                    np.concatenate(self._packets + [np.zeros((R.PL_ROWS, 0), np.int64)], axis=1), hops, *window)


@dataclass
class Logs:
    deliveries: np.ndarray | None  # records.DL_* rows, one column per delivered copy, in delivery order
    delivery_header: np.ndarray | None  # (copies, header words): each copy's header as delivered
    packets: np.ndarray | None  # records.PL_* rows, one column per packet record, in completion order
    hops: HopRecords | None  # one column per visit of a packet to a node (run(hops=True))
    tally: Tally
    window: Window  # the measurement window and what the traffic offered in it
    window_counts: np.ndarray  # [node, records.WN_*]: what the kernel counted in the window


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
class CutThroughNetwork:
    """What the cut-through kernel's transmitters and BMUs counted over a run."""

    transmitters: np.ndarray  # state.TX_* per node * ports + port
    nodes: np.ndarray  # state.ND_* per node
    ticks: int
    config: Config
    topology: Topology

    def counters(self) -> Counters:
        return Counters.of(self.transmitters, self.nodes, self.ticks)

    def link_utilisation(self) -> np.ndarray:
        final = self.counters()
        return link_utilisation(Counters.zero(final), final, self.topology)

    def node_load(self) -> tuple[np.ndarray, str]:
        """Per node what fills first (MODEL.md, The BMU), and its name."""
        final = self.counters()
        return interface_utilisation(Counters.zero(final), final, self.config), "BMU bus-interface utilisation"

    def bmu_utilisation(self) -> np.ndarray:
        final = self.counters()
        return bmu_utilisation(Counters.zero(final), final, self.config)

    contention_marks = ("stored", "retried", "queued")

    def summary(self, tally: Tally) -> dict:
        final = self.counters()
        return {
            "stores_per_packet": tally.unicast_stores / tally.unicast_packets if tally.unicast_packets else None,
            **utilisations(Counters.zero(final), final, self.topology, self.config),
            "bmu_peak_bytes": int(self.nodes[:, S.ND_BMU_PEAK].max()),
        }


@dataclass
class FlitNetwork:
    """What the flit-level kernel's ports and input buffers counted over a run."""

    flits_out: np.ndarray  # [node, output]: flits sent through each link (0..P-1) and ejection channel (P + c)
    occupancy: np.ndarray | None  # [node]: flit-cycles its link input buffers held (run(counters=True)), or None
    peak_flits: int  # most flits any input VC buffer held
    params: object  # controller.flits.params.FlitParams
    cycles: int
    topology: Topology

    contention_marks = ("retried", "queued", "blocked")

    def link_utilisation(self) -> np.ndarray:
        """Each directed link's share of cycles carrying a flit (k cycles a flit)."""
        links = self.topology.links()
        return self.flits_out[links[:, 0], links[:, 1]] * self.params.flit_cycles / self.cycles

    def node_load(self) -> tuple[np.ndarray, str]:
        """Per node the mean share of its link input buffer slots in use."""
        if self.occupancy is None:
            raise SimulationError("this run kept no buffer occupancy (run(counters=True))")
        slots = self.topology.n_ports * self.params.virtual_channels * self.params.buffer_flits
        return self.occupancy / (slots * self.cycles), "input buffer occupancy (share of the node's flit slots)"

    def summary(self, tally: Tally) -> dict:
        links = self.link_utilisation()
        return {
            "virtual_channels": self.params.virtual_channels,
            "buffer_flits": self.params.buffer_flits,
            "link_utilisation": float(links.mean()) if len(links) else 0.0,
            "link_utilisation_max": float(links.max()) if len(links) else 0.0,
            "peak_buffer_flits": self.peak_flits,
        }


@dataclass(frozen=True)
class ResultField:
    """A field of a run's summary: its name, unit, the kernels that report it, and what it means."""

    name: str
    unit: str
    kernels: tuple[str, ...]  # of config.KERNELS: those whose runs report it
    meaning: str


# Every field of Result.summary(), in the order `harts run` prints them; the reference page of result fields is this
# table (docs/hooks.py). A field that does not apply to the run's kernel is absent, not zero.
RESULT_FIELDS = (
    ResultField("topology", "", BOTH, "the network: mesh 8x8, E-5, ..."),
    ResultField("nodes", "nodes", BOTH, "nodes in the network"),
    ResultField("microcode", "", BOTH, "the microprogram (config key microcode)"),
    ResultField("switching", "", BOTH, "how the microprogram switches: cut_through, wormhole or circuit"),
    ResultField("packets", "packets", BOTH,
                "unicast packets the traffic created; a run drains the network, so each was delivered or dropped "
                "by a named fault"),
    ResultField("packets_measured", "packets", BOTH,
                "the unicasts created at or after run.warmup_cycles; only they enter the latencies"),
    ResultField("latency_unmeasured", "", BOTH,
                "only when no unicast was measured: why the latency fields are null"),
    ResultField("initiations", "records", BOTH,
                "traffic records that started an NP procedure: a broadcast, a send_packet worm"),
    ResultField("deliveries", "copies", BOTH, "copies delivered to NPs: unicasts and broadcast copies"),
    ResultField("offered_node_load", "share of a link's rate", BOTH,
                "only with traffic.uniform: each node's generation rate over one link's peak rate"),
    ResultField("offered_link_load", "share of a link's rate", BOTH,
                "only with traffic.uniform: the mean link utilisation that generation offers (node load x mean "
                "route length / links per node)"),
    ResultField("window_cycles", "cycles", BOTH, "the measurement window: [run.warmup_cycles, run.cycles]"),
    ResultField("offered_flits_per_node_cycle", "flits/node/cycle", BOTH,
                "flits (of flow.flit_bytes) the traffic's unicasts created in the window, per node and cycle, "
                "averaged over all nodes"),
    ResultField("accepted_flits_per_node_cycle", "flits/node/cycle", BOTH,
                "flits delivered in the window, counted at the destination, per node and cycle"),
    ResultField("accepted_flits_per_node_cycle_min", "flits/node/cycle", BOTH, "the least any one node accepted"),
    ResultField("accepted_flits_per_node_cycle_max", "flits/node/cycle", BOTH, "the most any one node accepted"),
    ResultField("latency_mean_cycles", "cycles", BOTH,
                "mean latency of the measured unicasts, creation to delivery; the cut-through kernel keeps time in "
                "byte times, so its latencies can be fractions of a cycle"),
    ResultField("latency_p50_cycles", "cycles", BOTH, "the median latency (a latency some packet had)"),
    ResultField("latency_p95_cycles", "cycles", BOTH, "the 95th percentile of latency"),
    ResultField("latency_p99_cycles", "cycles", BOTH, "the 99th percentile of latency"),
    ResultField("queueing_mean_cycles", "cycles", BOTH,
                "the part of latency before injection: waiting at the source until its router took the packet"),
    ResultField("queueing_p50_cycles", "cycles", BOTH, "the median queueing time"),
    ResultField("queueing_p95_cycles", "cycles", BOTH, "the 95th percentile of queueing time"),
    ResultField("queueing_p99_cycles", "cycles", BOTH, "the 99th percentile of queueing time"),
    ResultField("network_latency_mean_cycles", "cycles", BOTH, "the part of latency after injection"),
    ResultField("network_latency_p50_cycles", "cycles", BOTH, "the median network latency"),
    ResultField("network_latency_p95_cycles", "cycles", BOTH, "the 95th percentile of network latency"),
    ResultField("network_latency_p99_cycles", "cycles", BOTH, "the 99th percentile of network latency"),
    ResultField("stable", "", BOTH,
                "whether the network carried its load: false when the backlog of the network or of a source grew "
                "over the window by more than a threshold; null when the window offered nothing. An unstable "
                "run's latencies grow with the window"),
    ResultField("stability", "", BOTH,
                "the verdict's numbers: the growths, the thresholds, the worst source, the rule"),
    ResultField("latency_max_cycles", "cycles", BOTH, "the longest latency of a measured unicast"),
    ResultField("mean_hops", "hops", BOTH, "links crossed per unicast packet"),
    ResultField("virtual_channels", "VCs", FLIT, "virtual channels per link (flow.virtual_channels)"),
    ResultField("buffer_flits", "flits", FLIT, "depth of every input VC buffer (flow.buffer_flits)"),
    ResultField("stores_per_packet", "stores", CUT_THROUGH,
                "times a unicast was stored whole in a BMU on its way, on average: 0 on an idle network, where "
                "every hop cuts through"),
    ResultField("link_utilisation", "share of cycles", BOTH,
                "the share of cycles a directed link carried data, averaged over all of them"),
    ResultField("link_utilisation_max", "share of cycles", BOTH, "the busiest link's utilisation"),
    ResultField("bmu_utilisation", "share of capacity", CUT_THROUGH,
                "transit bytes a BMU held, averaged over time and BMUs, over bmu.capacity_bytes"),
    ResultField("bmu_queue_mean_packets", "packets", CUT_THROUGH,
                "packets waiting in a BMU's queues for a bus interface (or their transmitter), averaged over time "
                "and nodes"),
    ResultField("bmu_interface_utilisation", "share of time", CUT_THROUGH,
                "the share of time the BMU bus interfaces held a packet, over nodes x bmu.bus_interfaces"),
    ResultField("bmu_interface_blocked", "share of busy time", CUT_THROUGH,
                "of that time, the share spent holding a packet whose transmitter was busy (head-of-line blocking)"),
    ResultField("bmu_peak_bytes", "bytes", CUT_THROUGH, "the most one BMU held, stored and promised"),
    ResultField("peak_buffer_flits", "flits", FLIT, "the most flits any input VC buffer held: never above its depth"),
    ResultField("fifo_peak_bytes", "bytes", CUT_THROUGH,
                "the most bytes that piled up in a receiver FIFO before its microprogram started the stream"),
    ResultField("cut_throughs", "hops", CUT_THROUGH, "hops at which a packet cut through a node"),
    ResultField("packet_hops", "hops", BOTH, "link transmissions: every hop of every packet and copy"),
    ResultField("flits_granted", "flits", FLIT, "flits that crossed a switch"),
    ResultField("microinstructions", "instructions", BOTH, "micro-instructions executed"),
    ResultField("probes_per_packet", "probes", FLIT,
                "probes sent per packet: above 1 when circuit set-ups were nacked (flow.circuit_setup: retry)"),
    ResultField("events", "events", CUT_THROUGH, "events the clock ran"),
    ResultField("ticks_with_work", "ticks", CUT_THROUGH, "ticks the clock stopped at"),
    ResultField("packets_in_flight_peak", "packets", BOTH, "the most packet records alive at once"),
    ResultField("dropped_by_faults", "packets", BOTH, "packets lost to a fault"),
    ResultField("dropped_by_bmu_overflow", "packets", CUT_THROUGH, "packets a full BMU dropped (bmu.when_full: drop)"),
    ResultField("flits_lost_to_faults", "flits", FLIT, "flits that went into a fault"),
    ResultField("corrupted_transmissions", "transmissions", BOTH,
                "link transmissions whose payload a fault damaged (faults.corruption_probability)"),
    ResultField("forged_packets", "packets", BOTH, "packets that Byzantine nodes forged"),
    ResultField("contention_free", "", BOTH, "whether no packet waited for anything"),
    ResultField("first_contention", "", BOTH,
                "the earliest wait of any packet (uid, node, cycle, kind), or null in a contention-free run"),
    ResultField("packets_stored", "packets", CUT_THROUGH, "packets stored in a BMU on their way"),
    ResultField("packets_retried", "packets", BOTH, "packets refused a transmitter or a VC"),
    ResultField("packets_queued", "packets", BOTH, "packets queued behind another packet"),
    ResultField("packets_blocked", "packets", FLIT, "packets held up flit by flit by another packet"),
    ResultField("simulated_cycles", "cycles", BOTH, "time simulated"),
    ResultField("wall_seconds", "seconds", BOTH, "wall time of the run, the kernel's loading apart"),
    ResultField("kernel_startup_seconds", "seconds", BOTH, "loading the kernel (the first time: compiling it)"),
    ResultField("cycles_per_second", "cycles/second", BOTH, "simulated cycles per wall second"),
    ResultField("node_cycles_per_second", "node-cycles/second", BOTH, "simulated cycles x nodes per wall second"),
    ResultField("packet_hops_per_second", "hops/second", BOTH, "packet hops per wall second"),
    ResultField("latency_histogram", "", BOTH,
                "in --json only: the measured unicasts' latencies, counts in bins of bin_cycles"),
    ResultField("hops_histogram", "", BOTH, "in --json only: how many measured unicasts took each hop count"),
)
RESULT_FIELD_NAMES = tuple(f.name for f in RESULT_FIELDS)


def in_declared_order(summary: dict) -> dict:
    """A summary's fields in RESULT_FIELDS' order; one that is not declared there is a bug, refused here so that the
    reference of result fields cannot fall behind what runs report."""
    undeclared = summary.keys() - set(RESULT_FIELD_NAMES)
    if undeclared:
        raise AssertionError(f"summary fields missing from RESULT_FIELDS: {', '.join(sorted(undeclared))}")
    return {name: summary[name] for name in RESULT_FIELD_NAMES if name in summary}


@dataclass
class Result:
    """Everything a run produced, on either kernel."""

    config: Config
    topology: Topology
    switching: str  # "cut_through", "wormhole" or "circuit"
    ticks_per_cycle: int
    ticks: int  # the run's length: the last tick simulated, plus one
    layout: object  # simulation.HeaderLayout
    program: object  # np.program.Program
    traffic: object  # the traffic.Traffic given to run(), or None for a config's streamed traffic
    traffic_packets: int  # traffic records handed to the NPs
    logs: Logs
    network: CutThroughNetwork | FlitNetwork
    counts: dict  # the kernel's totals, by name (packet_hops, microinstructions, dropped_by_faults, ...)
    stats: np.ndarray  # the kernel's own scalars (controller/state.py or controller/flits/state.py ST_*)
    wall_seconds: float  # the simulation itself
    startup_seconds: float  # loading (or the first time, compiling) the kernel
    faults: object
    np_state: np.ndarray  # (nodes, Program.state_words): what each NP's procedure kept, at the end
    snapshots: dict[int, Counters]  # the counters at the cycles run(snapshots=...) asked for

    @property
    def kernel(self) -> str:
        return "cut_through" if self.switching == "cut_through" else "flit"

    @property
    def length_unit(self) -> str:
        return "bytes" if self.kernel == "cut_through" else "flits"

    @property
    def cycles(self) -> Fraction:
        return Fraction(self.ticks, self.ticks_per_cycle)

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
    def hops(self) -> HopRecords:
        if self.logs.hops is None:
            raise SimulationError("this run kept no hop records (run(hops=True))")
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
        return Fraction(ticks, self.ticks_per_cycle)

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

    def link_utilisation(self) -> np.ndarray:
        """Each directed link's utilisation over the run, row by row of ``topology.links()``."""
        return self.network.link_utilisation()

    def node_load(self) -> tuple[np.ndarray, str]:
        """Per node what the link map colours it by (BMU bus interfaces, or input buffers), and its name."""
        return self.network.node_load()

    def first_contention(self) -> dict | None:
        """The earliest wait of any packet of the run: where, when and what; None if the run was contention-free."""
        return describe_wait(self.logs.tally.first_wait, self.ticks_per_cycle)

    def _offered_loads(self) -> dict:
        """The config's own uniform traffic's offered load (none for traffic given to run())."""
        if self.traffic is not None or self.config["traffic.uniform.load"] <= 0:
            return {}
        node = uniform_node_load(self.config, self.topology)
        return {"offered_node_load": node,
                "offered_link_load": node * self.topology.mean_distance() / links_per_node(self.topology)}

    def _unmeasured(self) -> dict:
        """When no delivery was measured, why the latency fields are null."""
        t = self.logs.tally
        if t.measured:
            return {}
        if not t.unicast_packets:
            reason = "the traffic made no unicast (latencies are of traffic unicasts)"
        else:
            dropped = sum(self.counts.get(name, 0) for name in ("dropped_by_faults", "dropped_by_bmu_overflow"))
            reason = (f"no unicast made at or after run.warmup_cycles was delivered ({t.unicast_packets:,} made in "
                      f"all, {dropped:,} dropped)")
        return {"latency_unmeasured": reason}

    def summary(self) -> dict:
        """Every field `harts run` reports, in the order of RESULT_FIELDS, which says what each means."""
        t = self.logs.tally
        cycles = float(self.cycles)
        marks = [name for name, _ in CONTENTION_MARKS if name in self.network.contention_marks]
        window = measured(self)
        histograms = {name: window.pop(name) for name in ("latency_histogram", "hops_histogram") if name in window}
        return in_declared_order({
            "topology": self.topology.name,
            "nodes": self.topology.n_nodes,
            "microcode": self.config["microcode"],
            "switching": self.switching,
            "packets": t.unicast_packets,
            "packets_measured": t.measured,
            **self._unmeasured(),
            "initiations": int(self.traffic_packets - t.unicast_packets),
            "deliveries": t.deliveries,
            **self._offered_loads(),
            **window,
            "latency_max_cycles": t.latencies.max() / self.ticks_per_cycle if t.measured else None,
            "mean_hops": t.unicast_hops / t.unicast_packets if t.unicast_packets else None,
            **self.network.summary(t),
            **self.counts,
            "contention_free": t.contended_records == 0,
            "first_contention": self.first_contention(),
            **{f"packets_{name}": t.contention[name] for name in marks},
            "simulated_cycles": round(cycles, 3),
            "wall_seconds": self.wall_seconds,
            "kernel_startup_seconds": self.startup_seconds,
            "cycles_per_second": cycles / self.wall_seconds if self.wall_seconds > 0 else None,
            "node_cycles_per_second": cycles * self.topology.n_nodes / self.wall_seconds
            if self.wall_seconds > 0 else None,
            "packet_hops_per_second": self.counts["packet_hops"] / self.wall_seconds if self.wall_seconds > 0 else None,
            **histograms,
        })
