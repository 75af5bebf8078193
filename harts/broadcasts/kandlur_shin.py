"""One broadcast, run on the engine and read back copy by copy: node, arrival, path, T and C.

A broadcast is an initiation of the NP program at its source; its copies are the deliveries of the
packets the NPs sent for it (their origin is the initiation). Paths are rebuilt from the worms: a copy
sent by node s in direction d was teed at the nodes s + d, s + 2d, ... in turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..controller import records as R
from ..machine.config import Config
from ..machine.results import Result, describe_wait, earliest_wait
from ..machine.simulation import Simulation
from ..machine.traffic import Traffic, build_traffic, initiations
from ..np.kandlur_shin import ALGORITHMS, COPIES, MARKED

ALGORITHM_CHOICES = tuple(ALGORITHMS)


@dataclass(frozen=True)
class EngineCopy:
    node: int
    arrival: Fraction  # cycles after the broadcast was initiated
    path: tuple[int, ...]  # source ... node
    transmissions: int
    cut_throughs: int
    marked: bool  # its forward failed and the NP sent it on
    contention: int  # state.CONTENTION_* bits: what it waited for on the way


@dataclass(frozen=True)
class Worm:
    """One send_packet of the broadcast: it left `sender` in `direction` and was received by `hops` nodes."""

    sender: int
    direction: int
    hops: int


@dataclass
class BroadcastRun:
    algorithm: str
    source: int
    length: int
    copies: list[EngineCopy]
    worms: list[Worm]
    result: Result
    origin: int  # the broadcast's traffic record: the origin of its packets

    @property
    def latency(self) -> Fraction:
        """Initiation to the delivery of the last copy, in cycles."""
        return max(c.arrival for c in self.copies)

    def delivery_times(self) -> dict[int, Fraction]:
        """Per receiving node, when it holds all its copies (for k = 1: its one copy)."""
        times: dict[int, Fraction] = {}
        for c in self.copies:
            times[c.node] = max(times.get(c.node, Fraction(0)), c.arrival)
        return times

    @property
    def mean_delivery_time(self) -> Fraction:
        times = self.delivery_times()
        return sum(times.values(), Fraction(0)) / len(times)

    def copies_per_node(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for c in self.copies:
            counts[c.node] = counts.get(c.node, 0) + 1
        return counts

    def summary(self) -> dict:
        counts = self.copies_per_node()
        topo = self.result.topology
        crashed = self.result.faults.node_fault == R.FAULT_CRASH  # a crashed node receives nothing by definition
        others = [counts.get(v, 0) for v in range(topo.n_nodes) if v != self.source and not crashed[v]]
        return {
            "algorithm": self.algorithm,
            "topology": topo.name,
            "source": self.source,
            "length": self.length,
            "latency_cycles": float(self.latency),
            "mean_delivery_cycles": float(self.mean_delivery_time),
            "copies_expected_per_node": COPIES[ALGORITHMS[self.algorithm]],
            "copies_per_node_min": min(others),
            "copies_per_node_max": max(others),
            "copies_total": len(self.copies),
            "transmissions_max": max(c.transmissions for c in self.copies),
            "marked_copies": sum(c.marked for c in self.copies),
            "contention_free": all(c.contention == 0 for c in self.copies),
            "first_contention": self.first_contention(),
        }

    def first_contention(self) -> dict | None:
        """The earliest wait of any of the broadcast's own packets (its cycle counted from the broadcast's
        start, as the copies' arrivals are), or None."""
        pl, ticks_per_cycle = self.result.packets, self.result.ticks_per_cycle
        start = int(self.result.traffic.create[self.origin]) * ticks_per_cycle
        return describe_wait(earliest_wait(pl[:, pl[R.PL_ORIGIN] == self.origin]), ticks_per_cycle, start)


def engine_worms(result: Result, origin: int) -> list[Worm]:
    pl = result.packets
    records = np.nonzero((pl[R.PL_ROUTE] == R.ROUTE_DIRECTION) & (pl[R.PL_ORIGIN] == origin))[0]
    records = records[np.argsort(pl[R.PL_UID, records])]
    return [Worm(int(pl[R.PL_SENDER, q]), int(pl[R.PL_DIR, q]), int(pl[R.PL_DELIVERIES, q])) for q in records]


def engine_copies(result: Result, origin: int) -> list[EngineCopy]:
    """The copies of one broadcast in the delivery log, with the path each took from the source."""
    dl, topo = result.deliveries, result.topology
    bpc = result.ticks_per_cycle
    start = int(result.traffic.create[origin]) * bpc
    rows, _ = result.copies_of(np.array([origin]))
    row_of_serial = {int(dl[R.DL_SERIAL, d]): int(d) for d in np.nonzero(dl[R.DL_ORIGIN] == origin)[0]}
    flags = result.header("flags")
    paths: dict[int, tuple[int, ...]] = {}

    def path_of(d: int) -> tuple[int, ...]:
        if d in paths:
            return paths[d]
        parent = int(dl[R.DL_PARENT, d])
        if parent >= 0:
            before = path_of(row_of_serial[parent])
            hops_before = int(dl[R.DL_HOPS, row_of_serial[parent]])
        else:
            before, hops_before = (int(dl[R.DL_SENDER, d]),), 0
        node, line = before[-1], []
        for _ in range(int(dl[R.DL_HOPS, d]) - hops_before):
            node = int(topo.neighbours[node, dl[R.DL_DIR, d]])
            line.append(node)
        paths[d] = before + tuple(line)
        return paths[d]

    return [EngineCopy(node=int(dl[R.DL_NODE, d]), arrival=Fraction(int(dl[R.DL_TICK, d]) - start, bpc),
                       path=path_of(int(d)), transmissions=int(dl[R.DL_STORES, d]) + 1,
                       cut_throughs=int(dl[R.DL_CUTS, d]), marked=bool(flags[d] & MARKED),
                       contention=int(dl[R.DL_CONTENTION, d]))
            for d in rows]


def broadcast_traffic(simulation: Simulation, algorithm: str, source: int, length: int,
                      at_cycle: int | None = None) -> tuple[Traffic, int]:
    """One broadcast over the config's own traffic (if any), starting at run.warmup_cycles unless
    `at_cycle` says otherwise; returns the traffic and the broadcast's index in it (its origin)."""
    when = simulation.config["run.warmup_cycles"] if at_cycle is None else at_cycle
    background = build_traffic(simulation.config, simulation.topology)
    traffic = Traffic.concatenate([initiations([when], [source], [ALGORITHMS[algorithm]], [length]),
                                   *background.chunks()])
    # the sort is stable, so the broadcast is the first record of its cycle
    return traffic, int(np.searchsorted(traffic.create, when))


def run_broadcast(config: Config, algorithm: str, source: int = 0, length: int = 64,
                  at_cycle: int | None = None, progress: bool = False, faults=None, hops: bool = False,
                  counters: bool = False, observer=None) -> BroadcastRun:
    """One broadcast on the network the config describes, idle or with the config's traffic. `faults` replaces
    the config's; `hops`, `counters` and `observer` keep what the packet trace, the link map and a waveform
    need."""
    simulation = Simulation(config)
    traffic, origin = broadcast_traffic(simulation, algorithm, source, length, at_cycle)
    result = simulation.run(traffic, progress=progress, faults=faults, hops=hops, counters=counters,
                            observer=observer)
    return BroadcastRun(algorithm, source, length, engine_copies(result, origin), engine_worms(result, origin),
                        result, origin)
