"""One point of the paper's experiments: a broadcast algorithm on E-n under the section-5 workload at one
link load, replicated until its 95% confidence intervals are within 5% of the means or its budget ends.

Replications are independent runs (own seed, own warm-up, network drained at the end so every run's
invariants are checked), which makes the points easy to spread over processes or a Dask cluster and
gives the same numbers wherever they run. Replication i of every algorithm at one size and load uses the
same traffic (common random numbers), so percent increases are computed from paired replications.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass
from functools import cached_property

import numpy as np

from ...controller import records as R
from ...machine.config import Config
from ...machine.results import utilisations
from ...machine.simulation import Simulation
from ...machine.traffic import (
    PAPER_BROADCAST_PROBABILITY,
    length_distribution,
    paper_node_load,
    paper_workload,
)
from ...np.kandlur_shin import ALGORITHMS
from ..load_sweep import Base

T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042}
SATURATED_BELOW = 0.95  # accepted / offered regular bytes under which the network counts as saturated


@dataclass(frozen=True)
class Precision:
    """How hard a point tries: replication length in broadcasts, how many replications (max_replications is the
    budget), the target. There is no wall-clock limit: a point's result depends on its config alone, not on the
    machine or on what else it runs."""

    name: str
    broadcasts_per_replication: int
    min_replications: int
    max_replications: int
    relative_half_width: float = 0.05


FULL = Precision("full", broadcasts_per_replication=120, min_replications=3, max_replications=10)
QUICK = Precision("quick", broadcasts_per_replication=30, min_replications=2, max_replications=2)


@dataclass(frozen=True)
class Point:
    """One algorithm at one load on a config: ``base`` (harts.experiments.load_sweep.Base) gives the hexagonal
    mesh, the reading of the load (traffic.uniform.load_basis), the packet lengths (traffic.uniform.lengths and
    length_probabilities), the seed (run.seed) and any model keys."""

    algorithm: str
    load: float
    precision: Precision
    base: Base

    @property
    def key(self) -> str:
        text = json.dumps({"algorithm": self.algorithm, "load": round(self.load, 6), "base": self.base.text,
                           "precision": asdict(self.precision)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def label(self) -> str:
        return f"{self.algorithm} E-{self.size} {self.basis} load {self.load:g}{_model_label(self.base)} " \
               f"({self.precision.name})"

    def config(self) -> Config:
        return self.base.config()

    @cached_property
    def _config(self) -> Config:
        return self.config()

    @property
    def size(self) -> int:
        return self._config.topology_spec["size"]

    @property
    def basis(self) -> str:
        return self._config["traffic.uniform.load_basis"]

    @property
    def cost(self) -> float:
        return 3 * self.size * (self.size - 1) * (1 + self.load)

    def run(self) -> dict:
        return run_point(self)


def hex_base(size: int, basis: str = "link", model: tuple = ()) -> Base:
    """The base of a point on E-size (the built-in defaults), its load read under `basis`,
    with `model`'s (dotted key, value) pairs replacing defaults, e.g. (("bmu.queues", "per_output"),)."""
    return Base(None, (("topology", {"kind": "hex", "size": size}), ("traffic.uniform.load_basis", basis), *model))


def _model_label(base: Base) -> str:
    shown = [(k, v) for k, v in base.values if k not in ("topology", "traffic.uniform.load_basis")]
    return "".join(f", {k} {v}" for k, v in shown)


def _t_quantile(df: int) -> float:
    return T_975.get(df) or T_975[max(k for k in T_975 if k <= df)]


def mean_and_half_width(values: list[float]) -> tuple[float, float]:
    """Mean and 95% confidence half-width (Student t) of independent replication means."""
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, math.inf
    return mean, _t_quantile(len(values) - 1) * float(np.std(values, ddof=1)) / math.sqrt(len(values))


def paired_increase(runs: list[dict], base_runs: list[dict], metric: str) -> tuple[float, float]:
    """Percent increase of `runs` over `base_runs` and its 95% half-width, from the replications both
    have (replication i of both used the same traffic)."""
    pairs = [(a[metric], b[metric]) for a, b in zip(runs, base_runs) if a["broadcasts"] and b["broadcasts"]]
    return mean_and_half_width([100 * (a / b - 1) for a, b in pairs])


def replication(point: Point, index: int) -> dict:
    """One independent run: broadcast latencies and mean delivery times (after warm-up), and how much of
    the regular traffic the network carried."""
    cfg = point.config()
    sim = Simulation(cfg)
    n = sim.topology.n_nodes
    bpc = cfg.bytes_per_cycle
    lengths = length_distribution(cfg)
    node_load = paper_node_load(sim.topology, point.load, point.basis)
    mean_length = float(np.dot(*lengths))
    per_cycle = n * node_load * bpc / mean_length * PAPER_BROADCAST_PROBABILITY  # broadcasts per cycle
    window = max(20_000, int(point.precision.broadcasts_per_replication / per_cycle))
    warmup = max(2_000, window // 10)
    # Common random numbers: every algorithm and model sees the same traffic at the same size, load and
    # replication, so comparisons between them are paired.
    stream = f"{point.size}/{point.basis}/{point.load:g}/{point.precision.name}/{cfg['run.seed']}/{index}"
    seed = int(hashlib.sha256(stream.encode()).hexdigest()[:8], 16)
    traffic = paper_workload(sim.topology, point.load, point.basis, ALGORITHMS[point.algorithm], bpc,
                             warmup + window, np.random.default_rng(seed), *lengths)
    result = sim.run(traffic, snapshots=(warmup, warmup + window))
    dl = result.deliveries
    created = traffic.create * bpc
    start, end = warmup * bpc, (warmup + window) * bpc

    # regular traffic: offered bytes in the window against bytes delivered in it
    regular = traffic.kind == R.TRAFFIC_UNICAST
    offered = int(traffic.length[regular & (created >= start) & (created < end)].sum())
    is_regular = (dl[R.DL_UID] < R.NP_UID_BASE) & (dl[R.DL_ROUTE] == R.ROUTE_DESTINATION)
    arrived = is_regular & (dl[R.DL_TICK] >= start) & (dl[R.DL_TICK] < end)
    accepted = int(dl[R.DL_LENGTH, arrived].sum())
    measured = is_regular & (dl[R.DL_CREATE] >= start) & (dl[R.DL_CREATE] < end)
    regular_latency = float(((dl[R.DL_TICK, measured] - dl[R.DL_CREATE, measured]) / bpc).mean())

    # broadcasts initiated in the window: latency (last copy) and mean over nodes of their last copy
    initiations = np.nonzero((traffic.kind == R.TRAFFIC_INITIATE) & (created >= start) & (created < end))[0]
    latencies, means = [], []
    if len(initiations):
        copy_rows, row = result.copies_of(initiations)
        # per broadcast and node: when the node held all its copies
        last = np.zeros(len(initiations) * n, dtype=np.int64)
        np.maximum.at(last, row * n + dl[R.DL_NODE, copy_rows],
                      dl[R.DL_TICK, copy_rows] - created[initiations[row]])
        last = last.reshape(len(initiations), n)
        receiving = np.ones_like(last, dtype=bool)
        receiving[np.arange(len(initiations)), traffic.source[initiations]] = False
        latencies = (last.max(axis=1) / bpc).tolist()
        means = (np.where(receiving, last, 0).sum(axis=1) / (n - 1) / bpc).tolist()
    return {
        "replication": index, "window_cycles": window, "warmup_cycles": warmup,
        "broadcasts": len(latencies),
        "latency": float(np.mean(latencies)) if latencies else math.nan,
        "mean_delivery": float(np.mean(means)) if means else math.nan,
        "regular_latency": regular_latency,
        "accepted_over_offered": accepted / offered if offered else math.nan,
        # how busy each part was in the window: where the network saturates
        **utilisations(result.snapshots[warmup], result.snapshots[warmup + window], sim.topology, cfg),
        "wall_seconds": result.wall_seconds,
    }


def run_point(point: Point) -> dict:
    """Replicate until both metrics' 95% half-widths are within the target, or max_replications have run (or
    the network is saturated, where there is no steady state to estimate)."""
    started = time.perf_counter()
    reps: list[dict] = []
    while True:
        reps.append(replication(point, len(reps)))
        usable = [r for r in reps if r["broadcasts"] > 0]
        stats = {m: mean_and_half_width([r[m] for r in usable]) for m in ("latency", "mean_delivery")}
        precise = all(h <= point.precision.relative_half_width * abs(m) for m, h in stats.values())
        if len(reps) >= point.precision.max_replications:
            break
        if len(reps) >= point.precision.min_replications and precise:
            break
        if len(reps) >= 2 and np.mean([r["accepted_over_offered"] for r in reps]) < SATURATED_BELOW:
            break  # past saturation the mean has no steady state to converge to
    ratio = float(np.mean([r["accepted_over_offered"] for r in reps]))
    return {
        "key": point.key, "algorithm": point.algorithm, "size": point.size, "load": point.load,
        "basis": point.basis, "config": point.base.path, "set": [list(v) for v in point.base.values],
        "precision": point.precision.name,
        "latency": stats["latency"][0], "latency_half_width": stats["latency"][1],
        "mean_delivery": stats["mean_delivery"][0], "mean_delivery_half_width": stats["mean_delivery"][1],
        "precise": bool(precise),
        "replications": len(reps), "broadcasts": int(sum(r["broadcasts"] for r in reps)),
        "regular_latency": float(np.mean([r["regular_latency"] for r in reps])),
        "accepted_over_offered": ratio, "saturated": bool(ratio < SATURATED_BELOW),
        "simulated_cycles": int(sum(r["window_cycles"] + r["warmup_cycles"] for r in reps)),
        "wall_seconds": time.perf_counter() - started,
        "runs": reps,
    }


# the highest load probed, per basis: saturation lies near 1 on
# links, and up to 6 / (n/2) per node
PROBE_MAX = {"link": 1.5, "node": 3.0}


@dataclass(frozen=True)
class SaturationProbe:
    """Where the regular traffic saturates the base's mesh: the first load (in steps of `step`) at which the
    network carries less than 95% of the offered regular bytes, or deadlocks; with how busy each part was. Each
    load runs replication 0 of `algorithm`'s point there."""

    base: Base
    precision: Precision
    step: float = 0.1
    algorithm: str = "sbcast"

    @property
    def key(self) -> str:
        text = json.dumps({"probe": self.base.text, "precision": asdict(self.precision), "step": self.step,
                           "algorithm": self.algorithm}, sort_keys=True)
        return "saturation-" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def point(self, load: float) -> Point:
        return Point(self.algorithm, load, self.precision, self.base)

    @cached_property
    def _first(self) -> Point:
        """The first load's point: where the probe reads the mesh size and the reading of the load."""
        return self.point(self.step)

    @property
    def label(self) -> str:
        return (f"saturation of E-{self._first.size} ({self._first.basis} load{_model_label(self.base)}, "
                f"{self.precision.name})")

    @property
    def cost(self) -> float:
        return 3 * self._first.size * (self._first.size - 1) * 2.0

    def loads(self) -> list[float]:
        steps = int(round(PROBE_MAX[self._first.basis] / self.step))
        return [round(self.step * i, 6) for i in range(1, steps + 1)]

    def run(self) -> dict:
        return find_saturation(self)


def find_saturation(probe: SaturationProbe) -> dict:
    from ...errors import SimulationError
    started = time.perf_counter()
    probes = []
    for load in probe.loads():
        try:
            run = replication(probe.point(load), 0)
        except SimulationError:  # a deadlock past saturation
            run = {"accepted_over_offered": 0.0}
        probes.append({"load": load, **{k: v for k, v in run.items() if k not in ("replication", "runs")}})
        if run["accepted_over_offered"] < SATURATED_BELOW:
            break
    return {"key": probe.key, "size": probe._first.size, "basis": probe._first.basis, "config": probe.base.path,
            "set": [list(v) for v in probe.base.values], "algorithm": probe.algorithm,
            "saturation_load": probes[-1]["load"], "probes": probes, "wall_seconds": time.perf_counter() - started}
