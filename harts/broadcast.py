"""One broadcast, run on the engine and read back copy by copy: node, arrival, path, T and C."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import state as S
from .config import Config
from .relay import ALGORITHMS, COPIES
from .simulation import Result, Simulation
from .traffic import Traffic, broadcasts, build_traffic

ALGORITHM_CHOICES = tuple(ALGORITHMS)


@dataclass(frozen=True)
class EngineCopy:
    node: int
    arrival: Fraction  # cycles after the broadcast was initiated
    path: tuple[int, ...]  # source ... node
    transmissions: int
    cut_throughs: int
    marked: bool  # its forward failed and the NP sent it on


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
        return {
            "algorithm": self.algorithm,
            "mesh_size": topo.size,
            "source": self.source,
            "length": self.length,
            "latency_cycles": float(self.latency),
            "mean_delivery_cycles": float(self.mean_delivery_time),
            "copies_expected_per_node": COPIES[ALGORITHMS[self.algorithm]],
            "copies_per_node_min": min(counts.get(v, 0) for v in range(topo.n_nodes) if v != self.source),
            "copies_per_node_max": max(counts.get(v, 0) for v in range(topo.n_nodes) if v != self.source),
            "copies_total": len(self.copies),
            "transmissions_max": max(c.transmissions for c in self.copies),
            "marked_copies": sum(c.marked for c in self.copies),
        }


def engine_worms(result: Result, broadcast_id: int) -> list[Worm]:
    pk, dl = result.packets, result.deliveries
    received = np.bincount(dl[S.DL_PKT], minlength=pk.shape[1])
    records = np.nonzero((pk[S.PK_KIND] == S.KIND_BROADCAST) & (pk[S.PK_BCAST] == broadcast_id))[0]
    return [Worm(int(pk[S.PK_SRC, q]), int(pk[S.PK_DIR, q]), int(received[q])) for q in records]


def engine_copies(result: Result, broadcast_id: int) -> list[EngineCopy]:
    """The copies of one broadcast in the delivery log, with the path each took from the source."""
    pk, dl, topo = result.packets, result.deliveries, result.topology
    bpc = result.bytes_per_cycle
    mine = np.nonzero((pk[S.PK_KIND, dl[S.DL_PKT]] == S.KIND_BROADCAST)
                      & (pk[S.PK_BCAST, dl[S.DL_PKT]] == broadcast_id))[0]
    initiation = int(np.nonzero((pk[S.PK_BCAST] == broadcast_id) & (pk[S.PK_KIND] != S.KIND_BROADCAST))[0][0])
    start = int(pk[S.PK_CREATE, initiation])
    paths: dict[int, tuple[int, ...]] = {}

    def path_of(d: int) -> tuple[int, ...]:
        if d in paths:
            return paths[d]
        q = int(dl[S.DL_PKT, d])
        parent = int(pk[S.PK_PARENT, q])
        before = path_of(parent) if parent >= 0 else (int(pk[S.PK_SRC, q]),)
        node, line = before[-1], []
        for _ in range(int(pk[S.PK_DIST0, q] - dl[S.DL_DIST, d])):
            node = int(topo.neighbours[node, pk[S.PK_DIR, q]])
            line.append(node)
        paths[d] = before + tuple(line)
        return paths[d]

    copies = []
    for d in mine:
        transmissions = int(dl[S.DL_STORES, d]) + 1
        copies.append(EngineCopy(
            node=int(dl[S.DL_NODE, d]),
            arrival=Fraction(int(dl[S.DL_TIME, d]) - start, bpc),
            path=path_of(int(d)),
            transmissions=transmissions,
            cut_throughs=int(dl[S.DL_CUTS, d]),
            marked=bool(dl[S.DL_FLAGS, d] & S.FLAG_MARKED),
        ))
    return copies


def broadcast_traffic(sim: Simulation, algorithm: str, source: int, length: int,
                      at_cycle: int | None = None) -> Traffic:
    """One broadcast over the config's own traffic (if any), starting at run.warmup_cycles unless
    `at_cycle` says otherwise."""
    when = sim.config["run.warmup_cycles"] if at_cycle is None else at_cycle
    return Traffic.concatenate([broadcasts([when], [source], [ALGORITHMS[algorithm]], [length]),
                                build_traffic(sim.config, sim.topology)])


def run_broadcast(config: Config, algorithm: str, source: int = 0, length: int = 64,
                  at_cycle: int | None = None, progress: bool = False) -> BroadcastRun:
    """One broadcast on the network the config describes, idle or with the config's traffic."""
    sim = Simulation(config)
    traffic = broadcast_traffic(sim, algorithm, source, length, at_cycle)
    result = sim.run(traffic, progress=progress)
    index = int(np.nonzero(traffic.kind == S.KIND_INITIATE)[0][0])
    broadcast_id = int(result.packets[S.PK_BCAST, index])
    return BroadcastRun(algorithm, source, length, engine_copies(result, broadcast_id),
                        engine_worms(result, broadcast_id), result)
