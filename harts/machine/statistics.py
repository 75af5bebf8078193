"""What a run measured over its measurement window, on either kernel: offered and accepted throughput, latency split
into source queueing and network time, latency and hop histograms, and whether the run was stable.

The window runs from ``run.warmup_cycles`` to ``run.cycles`` and is split in two halves. Only traffic unicasts count
(packets routed by destination that the traffic handed to the NPs, not those NP programs send on their own). A
packet's latency runs from its creation to its delivery (its tail in its destination's NP). Its source queueing runs
from its creation to its injection, the cycle its source's router first took it from the NP: an injection context
(flit level) or a bus interface of the BMU (cut-through). Its network time is the rest. A packet is measured if it
was created at or after the window's start (every run drains, so each is delivered or dropped by a fault).

Throughput is in flits of ``flow.flit_bytes`` per node per cycle on both kernels, averaged over all N nodes. Offered
is what the traffic created in the window; accepted is what was delivered in it, counted at its destination.

**Stability.** A network that cannot carry its load leaves a backlog that grows for as long as the load lasts: in
its sources' queues (a wormhole network's buffers hold a bounded number of flits) or, on the cut-through kernel, in
its BMUs. Over the window and over its second half, two backlogs are measured exactly, from the flits created, the
flits delivered or injected, and the flits a named fault dropped:

- the network's: flits created in the window minus those delivered in it;
- each source's: flits it created in the window minus those it injected in it.

A backlog *grows* when its growth over the window exceeds a threshold T and its growth over the second half exceeds
T / 2 (so a backlog that built up after the warm-up and then held steady does not count). T is the larger of
STABILITY_FLOOR of the flits offered and STABILITY_SIGMAS standard deviations of the Poisson count of the packets
offered (in flits): growth that random arrivals alone could explain is not called growth. The run is unstable if
the network's backlog grows or any source's does; its latency is then not a steady state (it grows with the
window), and the summary says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..controller import records as R

STABILITY_FLOOR = 0.01
STABILITY_SIGMAS = 2
HISTOGRAM_BINS = 50  # at most, for the latency histogram; its bin width is 1, 2 or 5 x 10^k cycles
RULE = (f"unstable if a backlog (the network's: created minus delivered; a source's: created minus injected; both "
        f"net of drops by named faults) grew over the window by more than T and over its second half by more than "
        f"T/2, T = max({STABILITY_FLOOR:g} x the flits offered, {STABILITY_SIGMAS:g} standard deviations of their "
        f"Poisson count)")


@dataclass
class Window:
    """The measurement window (cycles [start, end), second half from `middle`) and what the traffic offered in it:
    per source and half, the lengths (bytes or flits, as the kernel counts them) and packets of the unicasts it
    created."""

    start: int
    middle: int
    end: int
    offered: np.ndarray  # (nodes, 2)
    offered_packets: np.ndarray  # (nodes, 2)

    @staticmethod
    def of(config, nodes: int) -> Window:
        start, end = config["run.warmup_cycles"], config["run.cycles"]
        return Window(start, start + max(end - start, 0) // 2, end, np.zeros((nodes, 2), np.int64),
                      np.zeros((nodes, 2), np.int64))

    @property
    def cycles(self) -> int:
        return max(self.end - self.start, 0)

    def count(self, create: np.ndarray, source: np.ndarray, length: np.ndarray, kind: np.ndarray) -> None:
        """Traffic handed to the kernel (creation cycles, sources, lengths, TRAFFIC_* kinds)."""
        mine = (kind == R.TRAFFIC_UNICAST) & (create >= self.start) & (create < self.end)
        if not mine.any():
            return
        cell = source[mine] * 2 + (create[mine] >= self.middle)
        cells = self.offered.size
        self.offered += np.bincount(cell, weights=length[mine], minlength=cells).astype(np.int64).reshape(-1, 2)
        self.offered_packets += np.bincount(cell, minlength=cells).reshape(-1, 2)


def growth_threshold(offered: float, packets: float) -> float:
    """T for a backlog fed `offered` flits in `packets` packets over the window (see the module docstring)."""
    if packets <= 0:
        return 0.0
    return max(STABILITY_FLOOR * offered, STABILITY_SIGMAS * math.sqrt(packets) * offered / packets)


def stability(window: Window, counts: np.ndarray, unit: float) -> dict:
    """The verdict on a run from its window and the kernel's counts (records.WN_* columns per node); lengths are
    divided by `unit` to give flits. {"stable": None, "reason": ...} if the window offered nothing."""
    offered = window.offered / unit
    lost = counts[:, [R.WN_LOST_FIRST, R.WN_LOST_SECOND]] / unit
    ejected = counts[:, [R.WN_EJECTED_FIRST, R.WN_EJECTED_SECOND]] / unit
    injected = counts[:, [R.WN_INJECTED_FIRST, R.WN_INJECTED_SECOND]] / unit
    packets = window.offered_packets
    if not packets.any():
        return {"stable": None, "reason": "no traffic unicast was created in the measurement window"}
    network = (offered - lost - ejected).sum(axis=0)
    verdict = {"rule": RULE}
    threshold = growth_threshold(offered.sum(), packets.sum())
    verdict["backlog_growth_flits"] = float(network.sum())
    verdict["backlog_growth_second_half_flits"] = float(network[1])
    verdict["backlog_threshold_flits"] = float(threshold)
    grows = network.sum() > threshold and network[1] > threshold / 2
    sources = offered - lost - injected
    thresholds = np.array([growth_threshold(o, p) for o, p in zip(offered.sum(axis=1), packets.sum(axis=1))])
    excess = np.where(packets.sum(axis=1) > 0, sources.sum(axis=1) - thresholds, -np.inf)
    worst = int(np.argmax(excess))
    verdict["worst_source"] = worst
    verdict["worst_source_growth_flits"] = float(sources[worst].sum())
    verdict["worst_source_threshold_flits"] = float(thresholds[worst])
    growing = (sources.sum(axis=1) > thresholds) & (sources[:, 1] > thresholds / 2) & (packets.sum(axis=1) > 0)
    verdict["growing_sources"] = int(growing.sum())
    verdict["stable"] = not (grows or growing.any())
    return verdict


def explain(stable: bool | None, verdict: dict) -> str:
    """The verdict in a sentence, as `harts run` prints it."""
    if stable is None:
        return f"not judged: {verdict['reason']}"
    network = (f"the backlog grew by {verdict['backlog_growth_flits']:,.0f} flits over the window "
               f"({verdict['backlog_growth_second_half_flits']:,.0f} in its second half; threshold "
               f"{verdict['backlog_threshold_flits']:,.0f})")
    if stable:
        return f"yes: {network}, and no source's queue grew"
    source = (f"{verdict['growing_sources']} sources' queues grew (source {verdict['worst_source']}'s by "
              f"{verdict['worst_source_growth_flits']:,.0f} flits, threshold "
              f"{verdict['worst_source_threshold_flits']:,.0f})")
    return f"no: {network}; {source}"


def nice_width(span: float, bins: int) -> float:
    """The smallest of 1, 2, 5 x 10^k (k >= 0) that covers `span` in at most `bins` bins."""
    width = 1.0
    while True:
        for step in (1, 2, 5):
            if span / (step * width) < bins:
                return step * width
        width *= 10


def histogram(values: np.ndarray, counts: np.ndarray, ticks_per_cycle: int) -> dict:
    """A histogram of latencies (ticks, with how many deliveries took each) in cycles: bin i holds
    [i x bin_cycles, (i + 1) x bin_cycles)."""
    if values.size == 0:
        return {"bin_cycles": None, "counts": []}
    width = nice_width(values[-1] / ticks_per_cycle, HISTOGRAM_BINS)
    bins = np.floor(values / (width * ticks_per_cycle)).astype(np.int64)
    return {"bin_cycles": width, "counts": np.bincount(bins, weights=counts).astype(np.int64).tolist()}


def quantile(values: np.ndarray, counts: np.ndarray, q: float) -> int | None:
    """The smallest value at or below which a share q of the counted items fall."""
    total = int(counts.sum())
    if total == 0:
        return None
    return int(values[np.searchsorted(np.cumsum(counts), q * total)])


def distribution(name: str, values: np.ndarray, counts: np.ndarray, ticks_per_cycle: int) -> dict:
    """Mean, p50, p95 and p99 of a latency in cycles, as `{name}_mean_cycles`, ...; None where nothing was
    measured."""
    total = int(counts.sum())
    out = {f"{name}_mean_cycles": float(values @ counts) / total / ticks_per_cycle if total else None}
    for q in (50, 95, 99):
        value = quantile(values, counts, q / 100)
        out[f"{name}_p{q}_cycles"] = value / ticks_per_cycle if value is not None else None
    return out


def measured(result) -> dict:
    """The window's statistics of a run (a machine.results.Result): the fields `harts run` and `harts sweep`
    report. Throughput and the verdict are None (with the reason) when the window is empty; the latencies are of the
    packets created from its start."""
    window = result.logs.window
    counts = result.logs.window_counts
    tally = result.logs.tally
    tpc = result.ticks_per_cycle
    unit = result.config["flow.flit_bytes"] if result.kernel == "cut_through" else 1
    out = {"window_cycles": [window.start, window.end]}
    if window.cycles:
        per_node = result.topology.n_nodes * window.cycles
        ejected = counts[:, [R.WN_EJECTED_FIRST, R.WN_EJECTED_SECOND]].sum(axis=1)
        accepted = ejected / unit / window.cycles
        out["offered_flits_per_node_cycle"] = float(window.offered.sum()) / unit / per_node
        out["accepted_flits_per_node_cycle"] = float(ejected.sum()) / unit / per_node
        out["accepted_flits_per_node_cycle_min"] = float(accepted.min())
        out["accepted_flits_per_node_cycle_max"] = float(accepted.max())
        verdict = stability(window, counts, unit)
    else:
        out.update(dict.fromkeys(("offered_flits_per_node_cycle", "accepted_flits_per_node_cycle",
                                  "accepted_flits_per_node_cycle_min", "accepted_flits_per_node_cycle_max")))
        verdict = {"stable": None, "reason": "run.warmup_cycles >= run.cycles: the measurement window is empty"}
    total = tally.latencies.merged()
    out.update(distribution("latency", *total, tpc))
    out.update(distribution("queueing", *tally.queueing.merged(), tpc))
    out.update(distribution("network_latency", *tally.network.merged(), tpc))
    out["stable"] = verdict.pop("stable")
    out["stability"] = verdict
    out["latency_histogram"] = histogram(*total, tpc)
    hops, hop_counts = tally.hops.merged()
    by_hops = np.zeros(int(hops[-1]) + 1 if hops.size else 0, np.int64)
    by_hops[hops] = hop_counts
    out["hops_histogram"] = by_hops.tolist()
    return out
