"""harts' wormhole router against BookSim2's default router on the same networks and loads (issue 22).

    python bench/booksim2_compare.py [--full] [--resume] [--workers N] [--out DIR]

Both run dimension-order routing, 8-flit buffers, 8-flit packets and uniform traffic on the 8x8 mesh and the 8x8
torus with 2 and 4 VCs, at the same offered loads. harts runs configs/booksim2_mesh_8x8.yaml or
configs/booksim2_torus_8x8.yaml (the options set as BookSim2 has them) with the VCs changed; BookSim2 is built from
../shared/anchors/ by build_booksim2.sh (its defaults, with only the keys in BOOKSIM_BASE and the network set).
Writes DIR/booksim2_compare.csv (one row per simulator, network, VCs and load), DIR/booksim2_saturation.csv
(with --full: *_full.csv) and a figure of latency against offered load, both curves per network: with --full
docs/booksim2_compare.png, which docs/explanation/validation.md shows, else DIR/booksim2_compare.png. Without BookSim2 (no anchor archive, no compiler) it says why in one line and runs nothing.

Offered load is BookSim2's `injection_rate` in flits per node per cycle. BookSim2's uniform pattern sends 1/N of
its packets to the source itself (they never enter the network, RandomInt(nodes - 1) in traffic.cpp); harts'
uniform never does, so harts runs at (N-1)/N of the offered load: both put the same load on the links. Latency is
creation to the tail's delivery of the packets created in the measurement window, every one drained, source
queueing included (BookSim2: sim_type latency, include_queuing 1). Saturation is the largest offered load up to
which every load's mean latency stays within three times the lightest's.

Each point is saved as it finishes (harts.experiments.sweep.run_tasks): an interrupted run keeps what it finished
and --resume runs only what is missing. The default sweep takes a few minutes on 2 cores; --full runs finer
loads and longer windows.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harts.controller import records as R  # noqa: E402
from harts.machine.config import load_config  # noqa: E402
from harts.machine.patterns import synthetic_packets  # noqa: E402
from harts.machine.simulation import Simulation  # noqa: E402
from harts.machine.traffic import unicast  # noqa: E402

ANCHORS = ROOT.parent / "shared" / "anchors"
BUILD = ANCHORS / "build_booksim2.sh"
CONFIGS = {"mesh": ROOT / "configs" / "booksim2_mesh_8x8.yaml", "torus": ROOT / "configs" / "booksim2_torus_8x8.yaml"}
PACKET_FLITS = 8
LATENCY_FACTOR = 3
SEED = 1
# BookSim2 keys set for every run: everything else is BookSim2's default (booksim_config.cpp).
BOOKSIM_BASE = {"k": 8, "n": 2, "routing_function": "dim_order", "vc_buf_size": 8, "packet_size": PACKET_FLITS,
                "traffic": "uniform", "injection_rate_uses_flits": 1, "sim_type": "latency",
                # BookSim2's default, set for clarity: each cycle a source creates a packet with probability
                # injection_rate / packet_size (injection.cpp), as harts' traffic.synthetic.process: bernoulli
                "injection_process": "bernoulli",
                # a fixed window as harts has: one warm-up period, then three measured ones, never stopped early
                # for latency (latency_thres) nor run on until stable (the thresholds off)
                "warmup_periods": 1, "max_samples": 4, "latency_thres": -1.0, "stopping_thres": -1.0,
                "acc_stopping_thres": -1.0}
# offered loads (flits/node/cycle) per network: dense around each saturation
RATES = {"mesh": (0.02, 0.1, 0.2, 0.26, 0.3, 0.32, 0.34, 0.36, 0.38, 0.4, 0.42, 0.44),
         "torus": (0.02, 0.1, 0.2, 0.26, 0.3, 0.32, 0.34, 0.36, 0.38, 0.4, 0.44, 0.48, 0.52, 0.56, 0.6)}
FULL_STEP = 0.01
PERIOD = {False: 3_000, True: 10_000}  # cycles per BookSim2 sample period; harts warms up 1 and measures 3


def booksim_binary() -> tuple[str | None, str]:
    """(path, "") of a built BookSim2, or (None, why not)."""
    if not BUILD.is_file():
        return None, f"no BookSim2 anchor ({BUILD} is missing)"
    done = subprocess.run(["bash", str(BUILD)], capture_output=True, text=True)
    if done.returncode != 0:
        return None, "BookSim2 did not build: " + (done.stderr.strip().splitlines() or ["(no message)"])[-1]
    return done.stdout.strip().splitlines()[-1], ""


# BookSim2's traffic patterns (traffic.cpp) run by sweep_booksim_patterns. Node s sits at x = s % k, y = s // k and
# dim_order routes x first. tornado sends every coordinate c to (c + ceil(k/2) - 1) % k (+3 on k = 8), neighbor to
# (c + 1) % k: digit permutations that read k and n (BOOKSIM_BASE) and xr, the nodes per router in X (concentration;
# booksim_config.cpp's default is 1, set here all the same). bitrev reverses the node's bits, shuffle rotates them
# left by one; their fixed points (bitrev: 0, 12, 18, 30, 33, 45, 51, 63; shuffle: 0, 63 on 64 nodes) send to
# themselves, through their router's injection and ejection ports, so BookSim2's injected and accepted rates count
# them; uniform picks the source itself 1/N of the time (RandomInt(nodes - 1)).
BOOKSIM_PATTERNS = ("uniform", "tornado", "neighbor", "bitrev", "shuffle")
DIGIT_PATTERNS = ("tornado", "neighbor", "badperm_yarc")


def booksim_config(network: str, vcs: int, rate: float, period: int, seed: int = SEED, traffic: str = "uniform",
                   **extra) -> str:
    values = dict(BOOKSIM_BASE, topology=network, num_vcs=vcs, injection_rate=rate, sample_period=period,
                  seed=seed, traffic=traffic)
    if traffic.split("(")[0] in DIGIT_PATTERNS:
        values["xr"] = 1
    values.update(extra)
    return "".join(f"{k} = {v};\n" for k, v in values.items())


def _booksim_stat(block: str, label: str) -> tuple:
    """(average, minimum, min node, maximum, max node) of one of BookSim2's "label = avg" entries followed by its
    "\\tminimum = " and "\\tmaximum = " lines; the nodes are None where it does not print them (the overall block)."""
    found = re.search(re.escape(label) + r" ?= (\S+)[^\n]*\n\tminimum = (\S+)(?: \(at node (\d+)\))?[^\n]*\n"
                      r"\tmaximum = (\S+)(?: \(at node (\d+)\))?", block)
    if found is None:
        raise RuntimeError(f"BookSim2's output has no {label!r}")
    avg, low, low_at, high, high_at = found.groups()
    return (float(avg), float(low), None if low_at is None else int(low_at), float(high),
            None if high_at is None else int(high_at))


def run_booksim(binary: str, network: str, vcs: int, rate: float, period: int, traffic: str = "uniform",
                **extra) -> dict:
    """One BookSim2 run: its "Overall Traffic Statistics" (class 0).

    BookSim2 counts injected and accepted flits from the end of the warm-up to the end of the last sample period
    (trafficmanager.cpp, _UpdateOverallStats: the counters run in the warming_up and running states only, divided by
    _drain_time - _reset_time), so the rates cover the three measured periods; the latencies are of the packets
    created in them, all drained (include_queuing 1: from creation, source queueing included). Injected is when a
    flit enters the router's injection channel: a source whose queue grows injects less than it is offered. The
    overall block prints no node for a minimum or maximum; the nodes come from the last per-period block
    (DisplayStats), which counts over the same measured window (its values equal the overall ones).
    Keys: latency_mean and latency_max (packet latency), network_latency_mean (injection to delivery), hops_mean
    (BookSim2's hops count routers: link hops + 1), injected (flits/node/cycle) with injected_min and
    injected_min_node, accepted with accepted_min, accepted_min_node, accepted_max, accepted_max_node, and cycles
    (BookSim2's "Time taken": warm-up, measured periods and the drain of every measured packet)."""
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as handle:
        handle.write(booksim_config(network, vcs, rate, period, traffic=traffic, **extra))
    try:
        done = subprocess.run([binary, handle.name], capture_output=True, text=True)
    finally:
        os.unlink(handle.name)
    out = done.stdout
    marker = "====== Overall Traffic Statistics ======"
    if marker not in out:  # its exit status is -1 on success (main.cpp), so not asked
        raise RuntimeError(f"BookSim2 failed: {(out + done.stderr).strip().splitlines()[-1:]}")
    before, overall = out.split(marker, 1)
    periods = re.split(r"Class 0:\n(?=Packet latency average)", before)[1:]
    last = periods[-1] if periods else ""
    plat = _booksim_stat(overall, "Packet latency average")
    nlat = _booksim_stat(overall, "Network latency average")
    injected = _booksim_stat(overall, "Injected flit rate average")
    accepted = _booksim_stat(overall, "Accepted flit rate average")
    hops = re.search(r"Hops average = (\S+)", overall)
    taken = re.search(r"Time taken is (\d+) cycles", out)
    node_of = {}
    if last:  # the node of each extreme, where the last period's value is the overall one
        for name, label, (_, low, _, high, _) in (("injected", "Injected flit rate average", injected),
                                                  ("accepted", "Accepted flit rate average", accepted)):
            _, p_low, p_low_at, p_high, p_high_at = _booksim_stat(last, label)
            node_of[f"{name}_min_node"] = p_low_at if np.isclose(p_low, low, rtol=1e-4) else None
            node_of[f"{name}_max_node"] = p_high_at if np.isclose(p_high, high, rtol=1e-4) else None
    return {"latency_mean": plat[0], "latency_max": plat[3], "network_latency_mean": nlat[0],
            "hops_mean": float(hops.group(1)) if hops else float("nan"),
            "injected": injected[0], "injected_min": injected[1], "injected_min_node": node_of.get("injected_min_node"),
            "accepted": accepted[0], "accepted_min": accepted[1], "accepted_min_node": node_of.get("accepted_min_node"),
            "accepted_max": accepted[3], "accepted_max_node": node_of.get("accepted_max_node"),
            "cycles": int(taken.group(1)) if taken else None}


PATTERN_STEP = 0.01  # the load grid (flits/node/cycle), from one step up to PATTERN_PAST steps past the first load
PATTERN_PAST = 3  # not carried, then PATTERN_FINE steps over the PATTERN_FINE_SPAN below that load
PATTERN_FINE, PATTERN_FINE_SPAN = 0.005, 0.05


def _pattern_key(network: str, traffic: str, vcs: int, rate: float, period: int) -> str:
    return f"patterns-booksim2-{network}-{traffic}-vc{vcs}-{rate:g}-p{period}"


def _first_not_carried(rows: dict) -> float | None:
    """The grid load from which every load up to the highest run contiguously from one step is not carried, if
    there are PATTERN_PAST + 1 of them: None while the sweep must go on."""
    grid, step = [], 1
    while round(step * PATTERN_STEP, 3) in rows:
        grid.append(rows[round(step * PATTERN_STEP, 3)])
        step += 1
    failed = 0
    for row in reversed(grid):
        if row["carried"]:
            break
        failed += 1
    return grid[-failed]["offered"] if failed > PATTERN_PAST else None


def sweep_booksim_patterns(binary: str, out: Path, networks=("mesh", "torus"), patterns=BOOKSIM_PATTERNS,
                           vcs: int = 2, period: int = 10_000, workers: int = 2, log=print) -> list[dict]:
    """BookSim2 alone under each pattern on each network: every PATTERN_STEP of offered load from PATTERN_STEP up to
    PATTERN_PAST steps past the first load it does not carry (`carried`; from which no higher one is), plus
    PATTERN_FINE steps over the PATTERN_FINE_SPAN below that load. Runs at most `workers` BookSim2 processes, one load
    of a series at a time unless no other series has one to run; each point is saved as it finishes under
    out/points (patterns-booksim2-*.json) and a later call runs only the missing ones. Returns one row per point:
    network, traffic, virtual_channels, offered, sample_period, run_booksim's fields, carried."""
    import json
    import time
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    points = out / "points"
    points.mkdir(parents=True, exist_ok=True)

    def measure(network: str, traffic: str, rate: float) -> dict:
        path = points / f"{_pattern_key(network, traffic, vcs, rate, period)}.json"
        if path.is_file():
            row = dict(json.loads(path.read_text()), offered_per_node=rate, sender_rate=rate)
            return dict(row, carried=carried(row))  # as the rule is now
        started = time.time()
        row = {"network": network, "traffic": traffic, "virtual_channels": vcs, "offered": rate,
               "sample_period": period, "offered_per_node": rate, "sender_rate": rate,
               **run_booksim(binary, network, vcs, rate, period, traffic=traffic)}
        row["carried"] = carried(row)
        row["wall_seconds"] = round(time.time() - started, 2)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(row, indent=1))
        os.replace(temporary, path)
        return row

    series = {(network, traffic): {"rows": {}, "flight": set(), "next": 1, "fine": None}
              for network in networks for traffic in patterns}

    def candidates(limit: int) -> list:
        """(series, load) pairs to run next: fine loads first, then each open series' next grid load."""
        found = []
        for name, s in series.items():
            if s["fine"]:
                found += [(name, rate) for rate in s["fine"] if rate not in s["rows"] and rate not in s["flight"]]
        for name, s in sorted(series.items(), key=lambda item: item[1]["next"]):
            if s["fine"] is None and len(s["flight"]) < limit:
                found.append((name, round(s["next"] * PATTERN_STEP, 3)))
        return found

    with ThreadPoolExecutor(max_workers=workers) as pool:
        running = {}
        while True:
            while len(running) < workers:
                todo = candidates(1) or candidates(2)  # a second load of a series only when nothing else is left
                if not todo:
                    break
                name, rate = todo[0]
                s = series[name]
                if s["fine"] is None and rate == round(s["next"] * PATTERN_STEP, 3):
                    s["next"] += 1
                s["flight"].add(rate)
                running[pool.submit(measure, *name, rate)] = (name, rate)
            if not running:
                break
            complete, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in complete:
                name, rate = running.pop(future)
                row = future.result()
                s = series[name]
                s["flight"].discard(rate)
                s["rows"][rate] = row
                log(f"{name[0]:5} {name[1]:8} {rate:<6g} latency {row['latency_mean']:9.1f} accepted "
                    f"{row['accepted']:.4f} injected min {row['injected_min']:.4f} (node {row['injected_min_node']})"
                    f" {'carried' if row['carried'] else 'NOT carried'}")
                edge = _first_not_carried(s["rows"]) if s["fine"] is None else None
                if edge is not None:
                    s["fine"] = [round(edge - PATTERN_FINE_SPAN + PATTERN_FINE * (2 * i + 1), 3)
                                 for i in range(round(PATTERN_FINE_SPAN / (2 * PATTERN_FINE)))]
    for path in points.glob(f"patterns-booksim2-*-vc{vcs}-*-p{period}.json"):  # loads an earlier criterion ran
        row = json.loads(path.read_text())
        row.update(offered_per_node=row["offered"], sender_rate=row["offered"])
        if (row["network"], row["traffic"]) in series:
            series[row["network"], row["traffic"]]["rows"].setdefault(row["offered"], dict(row, carried=carried(row)))
    rows = [row for s in series.values() for row in s["rows"].values()]
    order = {t: i for i, t in enumerate(patterns)}
    return sorted(rows, key=lambda r: (r["network"], order[r["traffic"]], r["offered"]))


# ---- the patterns comparison (--patterns): BookSim2's tornado, neighbor, bitrev and shuffle, and uniform ------------
HARTS_PATTERN = {"uniform": "uniform", "tornado": "tornado", "neighbor": "neighbor", "bitrev": "bit_reverse",
                 "shuffle": "shuffle"}
NODES = 64
LATENCY_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)  # of BookSim2's saturation load: where latencies are compared
LEAST_SOURCE_SIGMAS = 4  # carried(): P(the least of 64 normal deviates < -4) = 64 x 3.2e-5, 0.2%


def sender_share(network: str, traffic: str) -> float:
    """What of BookSim2's load harts offers: the share of BookSim2's packets that enter the network. BookSim2's
    uniform picks the source itself 1/N of the time; its bitrev and shuffle send a fixed point's packets to itself.
    harts makes no packet to its own node, so at BookSim2's load r it runs at r x this share, every sender injecting
    what BookSim2's does (uniform: r (N-1)/N, all N sending)."""
    from harts.machine.patterns import destination_matrix
    from harts.network import build_topology
    if traffic == "uniform":
        return (NODES - 1) / NODES
    matrix = destination_matrix(build_topology(load_config(CONFIGS[network]).topology_spec), HARTS_PATTERN[traffic])
    return float((matrix.sum(axis=1) > 0).sum()) / NODES


def carried(row: dict) -> bool:
    """The one rule both simulators' runs are judged by, from what both report over the three measured periods:
    the network's backlog (offered less accepted, flits) and the worst source's (its offered less what it injected)
    within harts.machine.statistics.growth_threshold of what was offered (1% of it, or 2 standard deviations of its
    Poisson count). BookSim2 prints no half-windows, so the rule is harts' without the second-half condition."""
    from harts.machine.statistics import STABILITY_FLOOR, growth_threshold
    cycles = 3 * row["sample_period"]
    offered = row["offered_per_node"] * NODES * cycles
    by_sender = row["sender_rate"] * cycles
    network = (row["offered_per_node"] - row["accepted"]) * NODES * cycles
    source = (row["sender_rate"] - row["injected_min"]) * cycles
    # the least of 64 sources' Poisson counts lies about 2.4 deviations below their mean by chance alone, and both
    # simulators give the nominal rate, not each source's count: the source test allows LEAST_SOURCE_SIGMAS
    source_limit = max(STABILITY_FLOOR * by_sender, LEAST_SOURCE_SIGMAS * np.sqrt(by_sender / PACKET_FLITS) * PACKET_FLITS)
    return bool(network <= growth_threshold(offered, offered / PACKET_FLITS) and source <= source_limit)


def stats_vector(stats_out: str, name: str) -> np.ndarray:
    """The values of BookSim2's `name(1,:) = [ ... ];` in its stats_out file, class 0, as the run ended: pair_sent
    and pair_plat per source and destination, sent_flits (injected flits per cycle over the measured periods) per
    node, and the like."""
    found = re.findall(re.escape(name) + r"\(1,:\) = \[ ([^\]]*)\];", Path(stats_out).read_text())
    if not found:
        raise RuntimeError(f"BookSim2's stats_out has no {name}")
    return np.array([float(v) for v in found[-1].split()])


def pair_latency(stats_out: str) -> float:
    """The mean latency of BookSim2's measured packets between different nodes, from its `pair_stats` (pair_sent,
    pair_plat: packets and mean latency per source and destination): its own Packet latency average counts the
    packets a node sends itself, which cross no link and which harts does not make."""
    sent, latency = (stats_vector(stats_out, name).reshape(NODES, NODES) for name in ("pair_sent", "pair_plat"))
    np.fill_diagonal(sent, 0)
    return float((sent * np.nan_to_num(latency)).sum() / sent.sum())


@dataclass(frozen=True)
class PatternPoint:
    """One run of either simulator under a BookSim2 pattern at BookSim2's offered load `rate`, over one warm-up and
    three measured periods. BookSim2 also writes its per-pair latencies (pair_latency). With `per_node`, the row
    also holds each node's injected flits per cycle over the measured periods (injected_by_node)."""

    simulator: str
    network: str
    traffic: str  # BookSim2's name
    rate: float
    period: int = 10_000
    binary: str = ""
    seed: int = SEED  # BookSim2's seed, harts' run.seed
    per_node: bool = False

    @property
    def key(self) -> str:
        # (the -pairs of BookSim2's: its runs with pair_stats, apart from sweep_booksim_patterns' runs without)
        return (f"patterns-{self.simulator}-{self.network}-{self.traffic}-vc2-{self.rate:g}-p{self.period}"
                + ("-pairs" if self.simulator == "booksim2" else "") + (f"-s{self.seed}" if self.seed != SEED else "")
                + ("-nodes" if self.per_node else ""))

    @property
    def cost(self) -> float:
        return self.rate * (1 if self.simulator == "harts" else 8)

    def run(self) -> dict:
        row = {"key": self.key, "simulator": self.simulator, "network": self.network, "traffic": self.traffic,
               "offered": self.rate, "sample_period": self.period}
        if self.simulator == "booksim2":
            with tempfile.TemporaryDirectory() as folder:
                measured = run_booksim(self.binary, self.network, 2, self.rate, self.period, traffic=self.traffic,
                                       pair_stats=1, stats_out=f"{folder}/stats.m", seed=self.seed)
                measured["latency_between_nodes"] = pair_latency(f"{folder}/stats.m")
                if self.per_node:
                    measured["injected_by_node"] = stats_vector(f"{folder}/stats.m", "sent_flits").tolist()
            row.update(measured, offered_per_node=self.rate, sender_rate=self.rate)
        else:
            row.update(run_harts_pattern(self.network, self.traffic, self.rate, self.period, self.seed, self.per_node))
        row["carried"] = carried(row)
        return row


def run_harts_pattern(network: str, traffic: str, rate: float, period: int, seed: int = SEED,
                      per_node: bool = False) -> dict:
    """harts on the network's booksim2 config under the pattern at BookSim2's load `rate` (sender_share), its window
    BookSim2's: a warm-up period, then three measured. With `per_node`, also each node's injected flits per cycle
    over the measured periods (injected_by_node)."""
    share = sender_share(network, traffic)
    config = load_config(CONFIGS[network]).with_values({
        "traffic.synthetic.pattern": HARTS_PATTERN[traffic], "traffic.synthetic.rate": rate * share,
        "run.warmup_cycles": period, "run.cycles": 4 * period, "run.seed": seed})
    result = Simulation(config).run(keep=False)
    s = result.summary()
    window = result.logs.window
    counts = result.logs.window_counts
    senders = window.offered_packets.sum(axis=1) > 0
    by_node = (counts[:, R.WN_INJECTED_FIRST] + counts[:, R.WN_INJECTED_SECOND]) / (3 * period)
    sender_rate = rate * share if traffic == "uniform" else rate
    row = {"latency_mean": s["latency_mean_cycles"], "latency_between_nodes": s["latency_mean_cycles"],
           "network_latency_mean": s["network_latency_mean_cycles"], "hops_mean": s["mean_hops"],
           "accepted": s["accepted_flits_per_node_cycle"], "injected_min": float(by_node[senders].min()),
           "offered_per_node": rate * share, "sender_rate": sender_rate, "stable": s["stable"]}
    if per_node:
        row["injected_by_node"] = by_node.tolist()
    return row


def edge(rows: list[dict]) -> tuple[dict | None, dict | None]:
    """A series' last carried run below the first load from which none is, and that first run."""
    ordered = sorted(rows, key=lambda r: r["offered"])
    last = max((i for i, r in enumerate(ordered) if r["carried"]), default=-1)
    return (ordered[last] if last >= 0 else None), (ordered[last + 1] if last + 1 < len(ordered) else None)


def harts_to_saturation(network: str, traffic: str, period: int, results: Path, workers: int | None) -> dict:
    """`harts sweep --to-saturation` on the network's booksim2 config (its own rule, MODEL.md Stability), the load
    put back in BookSim2's units."""
    from harts.experiments.load_sweep import Base, Sweep, find_saturation
    values = (("run.warmup_cycles", period), ("run.cycles", 4 * period))
    sweep = Sweep(Base(str(CONFIGS[network]), values), (HARTS_PATTERN[traffic],), to_saturation=True)
    rows, _ = find_saturation(sweep, results, {}, {"resume": True, "workers": workers, "dask_scheduler": None,
                                                   "progress": False})
    share = sender_share(network, traffic)
    return {"stable_offered": rows[0]["stable_offered"] / share, "unstable_offered": rows[0]["unstable_offered"] / share}


FINE_STEP = 0.001  # the last pass's load step, over FINE_MARGIN either side of both simulators' edges
FINE_MARGIN = 0.005
SPREAD_ABOVE = 0.002  # seed_spread's top load: this far above seed 1's higher first-unstable load


def compare_patterns(binary: str, out: Path, workers: int | None, period: int = 10_000) -> list[dict]:
    """The whole --patterns comparison, a row per network and pattern: BookSim2's saturation grid
    (sweep_booksim_patterns) and harts on the same loads; then both every FINE_STEP from FINE_MARGIN below the
    lower of their two edges to FINE_MARGIN above the higher; both at LATENCY_FRACTIONS of BookSim2's saturation
    load; and harts' own search (harts_to_saturation)."""
    from harts.experiments.sweep import run_tasks, write_csv
    options = {"resume": True, "workers": workers}
    booksim = sweep_booksim_patterns(binary, out, period=period, workers=workers or 2, log=lambda line: None)
    series = list(dict.fromkeys((r["network"], r["traffic"]) for r in booksim))
    rows = {(name, "booksim2"): [r for r in booksim if (r["network"], r["traffic"]) == name] for name in series}
    grid = [PatternPoint("harts", r["network"], r["traffic"], r["offered"], period) for r in booksim]
    done = run_tasks(grid, out, description="harts on BookSim2's loads", **options)
    for name in series:
        rows[name, "harts"] = [done[p.key] for p in grid if (p.network, p.traffic) == name]
    fine = []
    for name in series:
        edges = [edge(rows[name, simulator]) for simulator in ("booksim2", "harts")]
        low = min(last["offered"] for last, _ in edges) - FINE_MARGIN
        high = max((first or last)["offered"] for last, first in edges) + FINE_MARGIN
        for step in range(round(low / FINE_STEP), round(high / FINE_STEP) + 1):
            fine += [PatternPoint(simulator, *name, round(step * FINE_STEP, 4), period, binary)
                     for simulator in ("booksim2", "harts")]
    done.update(run_tasks(fine, out, description="both near saturation", **options))
    for p in fine:
        rows[(p.network, p.traffic), p.simulator].append(done[p.key])
    saturation = {key: edge([dict(r, carried=carried(r)) for r in mine]) for key, mine in rows.items()}
    latency_points = []
    for name in series:
        load = saturation[name, "booksim2"][0]["offered"]
        latency_points += [PatternPoint(simulator, *name, round(fraction * load, 4), period, binary)
                           for fraction in LATENCY_FRACTIONS for simulator in ("booksim2", "harts")]
    done.update(run_tasks(latency_points, out, description="latency below 0.7", **options))
    table = []
    for name in series:
        (b_last, b_first), (h_last, h_first) = saturation[name, "booksim2"], saturation[name, "harts"]
        searched = harts_to_saturation(*name, period, out, workers)
        pairs = [(done[PatternPoint("booksim2", *name, round(f * b_last["offered"], 4), period, binary).key],
                  done[PatternPoint("harts", *name, round(f * b_last["offered"], 4), period).key])
                 for f in LATENCY_FRACTIONS]
        gaps = [h["latency_between_nodes"] / b["latency_between_nodes"] - 1 for b, h in pairs]
        table.append({
            "network": name[0], "pattern": name[1],
            "booksim2_saturation": b_last["offered"], "booksim2_first_unstable": b_first["offered"] if b_first else None,
            "harts_saturation": h_last["offered"], "harts_first_unstable": h_first["offered"] if h_first else None,
            "saturation_ratio": h_last["offered"] / b_last["offered"],
            "harts_search_stable": searched["stable_offered"], "harts_search_unstable": searched["unstable_offered"],
            "search_ratio": searched["stable_offered"] / b_last["offered"],
            "booksim2_zero_load": pairs[0][0]["latency_between_nodes"], "harts_zero_load": pairs[0][1]["latency_mean"],
            "latency_gap_max": max(gaps, key=abs), "latency_gaps": [round(g, 4) for g in gaps]})
    write_csv(table, out / "patterns_compare.csv")
    write_patterns_markdown(out)

    def table_of(points):
        listed = [{k: v for k, v in done[p.key].items() if k != "key"} for p in points]
        columns = list(dict.fromkeys(k for r in listed for k in r))  # each simulator reports its own fields
        return [{k: r.get(k, "") for k in columns} for r in listed]
    write_csv(booksim, out / "patterns_booksim2.csv")
    write_csv(table_of(grid), out / "patterns_harts.csv")
    write_csv(table_of(fine), out / "patterns_fine.csv")
    write_csv(table_of(latency_points), out / "patterns_latency.csv")
    return table


def seed_spread(binary: str, out: Path, workers: int | None, seeds: int, names: list[tuple[str, str]],
                period: int = 10_000) -> list[dict]:
    """Each series' saturation under seeds 1..`seeds` in both simulators (--seed-spread). A seed's edge is the
    largest carried load below the first from which none is carried, up to a top load: loads are run every FINE_STEP
    downward from SPREAD_ABOVE above the higher first-unstable load of patterns_compare.csv (seed 1), and the first
    carried one met is the edge. A seed that carries the top load has an edge of at least the top, and says so
    (patterns_seeds.csv's top_carried). Writes patterns_seeds.csv: each simulator's edge per seed, their medians
    and the ratio of the medians."""
    import statistics

    from harts.experiments.sweep import run_tasks, write_csv
    known = _compare_rows(out, names)
    top = {name: round(max(float(known[name]["booksim2_first_unstable"]), float(known[name]["harts_first_unstable"]))
                       + SPREAD_ABOVE, 4) for name in names}
    floor = {name: top[name] - 10 * FINE_MARGIN for name in names}  # a seed carrying nothing this far down: no edge
    chains = {(name, simulator, seed): top[name] for name in names for simulator in ("booksim2", "harts")
              for seed in range(SEED, SEED + seeds)}
    edges = {}
    while chains:
        points = {chain: PatternPoint(chain[1], *chain[0], rate, period, binary if chain[1] == "booksim2" else "",
                                      chain[2]) for chain, rate in chains.items()}
        done = run_tasks(list(points.values()), out, resume=True, workers=workers,
                         description=f"seeds, {len(points)} runs at or below the top")
        for chain, point in points.items():
            if carried(done[point.key]):
                edges[chain] = point.rate
                del chains[chain]
            elif point.rate - FINE_STEP < floor[chain[0]] - 1e-9:
                edges[chain] = None
                del chains[chain]
            else:
                chains[chain] = round(point.rate - FINE_STEP, 4)
    table = []
    for name in names:
        found = {simulator: [edges[name, simulator, seed] for seed in range(SEED, SEED + seeds)]
                 for simulator in ("booksim2", "harts")}
        medians = {simulator: statistics.median(e for e in values if e is not None) if any(
            e is not None for e in values) else None for simulator, values in found.items()}
        table.append({"network": name[0], "pattern": name[1], "seeds": seeds, "top": top[name],
                      "booksim2_edges": found["booksim2"], "harts_edges": found["harts"],
                      "booksim2_median": medians["booksim2"], "harts_median": medians["harts"],
                      "median_ratio": medians["harts"] / medians["booksim2"]
                      if medians["harts"] and medians["booksim2"] else None,
                      "top_carried": sum(edge == top[name] for values in found.values() for edge in values)})
    write_csv(_merged(out / "patterns_seeds.csv", table), out / "patterns_seeds.csv")
    write_seeds_markdown(out)
    return table


def _merged(path: Path, table: list[dict]) -> list[dict]:
    """`table`'s rows, with the rows of the other series already in the CSV at `path` kept, in network and pattern
    order: --series runs one series at a time and the file keeps them all."""
    import csv
    mine = {(r["network"], r["pattern"]) for r in table}
    kept = []
    if path.is_file():
        with open(path) as handle:
            kept = [r for r in csv.DictReader(handle) if (r["network"], r["pattern"]) not in mine]
    order = {(n, t): i for i, (n, t) in enumerate((n, t) for n in ("mesh", "torus") for t in BOOKSIM_PATTERNS)}
    return sorted(kept + table, key=lambda r: order[r["network"], r["pattern"]])


def overload(binary: str, out: Path, workers: int | None, factor: float, names: list[tuple[str, str]],
             period: int = 10_000) -> list[dict]:
    """Each series' accepted throughput past saturation (--overload): both simulators at `factor` times BookSim2's
    saturation load of patterns_compare.csv, seed 1, where every source on the busiest channel keeps a backlog and
    what the network accepts is what it can carry. BookSim2's accepted rate counts the packets a node sends itself,
    which cross no link: those are taken out (uniform: 1/N of what each node injected; bitrev, shuffle: the fixed
    points' whole rate), so both count the flits delivered between different nodes, per node and cycle, over the
    measured periods. Writes patterns_overload.csv."""
    from harts.experiments.sweep import run_tasks, write_csv
    known = _compare_rows(out, names)
    load = {name: round(factor * float(known[name]["booksim2_saturation"]), 4) for name in names}
    points = {(name, simulator): PatternPoint(simulator, *name, load[name], period,
                                              binary if simulator == "booksim2" else "")
              for name in names for simulator in ("booksim2", "harts")}
    done = run_tasks(list(points.values()), out, resume=True, workers=workers, description="past saturation")
    table = []
    for name in names:
        booksim, harts = (done[points[name, simulator].key] for simulator in ("booksim2", "harts"))
        own = booksim["injected"] / NODES if name[1] == "uniform" else load[name] * (1 - sender_share(*name))
        between = booksim["accepted"] - own
        table.append({"network": name[0], "pattern": name[1], "offered": load[name], "factor": factor,
                      "booksim2_accepted": between, "harts_accepted": harts["accepted"],
                      "ratio": harts["accepted"] / between})
    write_csv(_merged(out / "patterns_overload.csv", table), out / "patterns_overload.csv")
    write_overload_markdown(out)
    return table


BOTTLENECK_FRACTIONS = (0.90, 0.94, 0.96, 0.98, 1.00, 1.02, 1.06, 1.20)  # of the busiest channel's bound
BOTTLENECK_SEEDS = 3


def busiest_channel(network: str, traffic: str) -> tuple[tuple[int, int], np.ndarray]:
    """The pattern's busiest channel (node, port) under the network's routing, and each node's share of it
    (patterns.channel_shares): the flits a node puts through it per flit it injects."""
    from harts.machine.patterns import channel_shares, throughput_bound
    from harts.network import build_topology
    config = load_config(CONFIGS[network])
    topology = build_topology(config.topology_spec)
    tie = config["routing.torus_tie"]
    channel = throughput_bound(topology, HARTS_PATTERN[traffic], torus_tie=tie).bottleneck
    return channel, channel_shares(topology, HARTS_PATTERN[traffic], channel, torus_tie=tie)


def bottleneck(binary: str, out: Path, workers: int | None, names: list[tuple[str, str]],
               period: int = 10_000) -> list[dict]:
    """The flow through each series' busiest channel (--bottleneck), in both simulators: at BOTTLENECK_FRACTIONS of
    the load that fills it (1 / the sum of its senders' shares, per sender), seeds 1..BOTTLENECK_SEEDS. The flow is
    the senders' injected flits per cycle over the measured periods, each times its share (busiest_channel). Below
    the bound it is what they are offered; past it, what the channel carries. Unlike `carried`, which reads the least
    source, it sees a shortfall spread over the channel's senders. Writes patterns_bottleneck.csv."""
    from harts.experiments.sweep import run_tasks, write_csv
    channels = {name: busiest_channel(*name) for name in names}
    loads = {name: [round(f / channels[name][1].sum(), 4) for f in BOTTLENECK_FRACTIONS] for name in names}
    points = {(name, simulator, rate, seed): PatternPoint(simulator, *name, rate, period,
                                                          binary if simulator == "booksim2" else "", seed, True)
              for name in names for simulator in ("booksim2", "harts") for rate in loads[name]
              for seed in range(SEED, SEED + BOTTLENECK_SEEDS)}
    done = run_tasks(list(points.values()), out, resume=True, workers=workers, description="busiest channels")
    table = []
    for (name, simulator, rate, seed), point in points.items():
        (node, port), shares = channels[name]
        flow = float(np.dot(done[point.key]["injected_by_node"], shares))
        table.append({"network": name[0], "pattern": name[1], "channel": f"{node}:{port}",
                      "senders": int((shares > 0).sum()), "simulator": simulator, "offered": rate, "seed": seed,
                      "channel_offered": round(rate * shares.sum(), 4), "channel_flow": round(flow, 4),
                      "flow_over_offered": round(flow / (rate * shares.sum()), 4)})
    write_csv(_merged(out / "patterns_bottleneck.csv", table), out / "patterns_bottleneck.csv")
    write_bottleneck_markdown(out)
    return table


def _compare_rows(out: Path, names: list[tuple[str, str]]) -> dict:
    """patterns_compare.csv's rows of the named series (the --patterns comparison's seed-1 edges)."""
    import csv
    with open(out / "patterns_compare.csv") as handle:
        known = {(r["network"], r["pattern"]): r for r in csv.DictReader(handle)}
    missing = [f"{n}:{t}" for n, t in names if (n, t) not in known]
    if missing:
        raise SystemExit(f"booksim2_compare: {out / 'patterns_compare.csv'} has no row for {', '.join(missing)}: "
                         f"run --patterns first")
    return known


def harts_config(network: str, vcs: int, **overrides):
    return load_config(CONFIGS[network]).with_values(flow__virtual_channels=vcs, **overrides)


def run_harts(network: str, vcs: int, rate: float, period: int, seed: int = SEED, **overrides) -> dict:
    """The same measurement on harts: a warm-up period, three measured, every packet drained."""
    sim = Simulation(harts_config(network, vcs, **overrides))
    n = sim.topology.n_nodes
    warmup, measure = period, 3 * period
    create, source, dest, flits = synthetic_packets(sim.topology, "uniform", rate * (n - 1) / n, PACKET_FLITS,
                                                    warmup + measure, seed)
    result = sim.run(unicast(create, source, dest, flits * sim.params.flit_bytes))
    delivered = np.zeros(len(create), np.int64)
    delivered[result.deliveries[R.DL_UID]] = result.deliveries[R.DL_TICK]
    measured = (create >= warmup) & (create < warmup + measure)
    in_window = (delivered >= warmup) & (delivered < warmup + measure)
    return {"latency_mean": float((delivered - create)[measured].mean()),
            "accepted": float(PACKET_FLITS * in_window.sum() / (n * measure))}


@dataclass(frozen=True)
class Point:
    simulator: str  # "booksim2" or "harts"
    network: str
    vcs: int
    rate: float
    period: int
    binary: str = ""
    options: tuple = field(default=())  # (key, value) pairs: BookSim2 keys or harts' dotted keys

    @property
    def key(self) -> str:
        extra = "".join(f"-{k}={v}" for k, v in self.options)
        return f"{self.simulator}-{self.network}-vc{self.vcs}-{self.rate:g}-p{self.period}{extra}".replace("/", "_")

    @property
    def cost(self) -> float:
        return self.rate * (5 if self.simulator == "harts" else 1)

    def run(self) -> dict:
        options = dict(self.options)
        if self.simulator == "booksim2":
            measured = run_booksim(self.binary, self.network, self.vcs, self.rate, self.period, **options)
        else:
            measured = run_harts(self.network, self.vcs, self.rate, self.period,
                                 **{k.replace(".", "__"): v for k, v in options.items()})
        return {"key": self.key, "simulator": self.simulator, "network": self.network, "virtual_channels": self.vcs,
                "offered": self.rate, **measured}


def saturation(rows: list[dict]) -> list[dict]:
    """Per simulator, network and VCs: zero-load latency (the lightest load's) and the saturation load (past_the_sweep:
    every load of the sweep was carried, so it saturates later)."""
    out = []
    for group in sorted({(r["network"], r["virtual_channels"], r["simulator"]) for r in rows}):
        mine = sorted((r for r in rows if (r["network"], r["virtual_channels"], r["simulator"]) == group),
                      key=lambda r: r["offered"])
        carried = 0.0
        for r in mine:
            if r["latency_mean"] > LATENCY_FACTOR * mine[0]["latency_mean"]:
                break
            carried = r["offered"]
        out.append({"network": group[0], "virtual_channels": group[1], "simulator": group[2],
                    "lightest_load": mine[0]["offered"], "latency_at_lightest": mine[0]["latency_mean"],
                    "saturation": carried, "past_the_sweep": carried == mine[-1]["offered"]})
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["network"], r["virtual_channels"]) for r in rows})
    fig, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.6), squeeze=False)
    for ax, (network, vcs) in zip(axes[0], groups):
        for simulator, style in (("booksim2", "s--"), ("harts", "o-")):
            mine = sorted((r for r in rows if (r["network"], r["virtual_channels"], r["simulator"])
                           == (network, vcs, simulator)), key=lambda r: r["offered"])
            if mine:
                ax.plot([r["offered"] for r in mine], [r["latency_mean"] for r in mine], style, ms=3,
                        label="BookSim2" if simulator == "booksim2" else "harts (booksim2 config)")
        ax.set_title(f"8x8 {network}, {vcs} VCs")
        ax.set_xlabel("offered load (flits/node/cycle)")
        ax.set_ylim(0, 300)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean packet latency (cycles)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_uniform_markdown(out: Path, suffix: str) -> str:
    """booksim2_saturation{suffix}.md, the uniform-traffic table EXPERIMENTS.md shows (harts.experiments.splice
    copies it there), from booksim2_compare{suffix}.csv and booksim2_saturation{suffix}.csv; returns it. Each
    saturation is given with the mean latency at it and at the next load; a + marks one the sweep never passed."""
    from harts.output import write_text
    runs = _csv_rows(out / f"booksim2_compare{suffix}.csv")
    by = {(r["network"], r["virtual_channels"], r["simulator"]): r
          for r in _csv_rows(out / f"booksim2_saturation{suffix}.csv")}

    def saturation(network: str, vcs: str, simulator: str) -> str:
        load = float(by[network, vcs, simulator]["saturation"])
        mine = sorted((float(r["offered"]), float(r["latency_mean"])) for r in runs
                      if (r["network"], r["virtual_channels"], r["simulator"]) == (network, vcs, simulator))
        at = [(o, latency) for o, latency in mine if o >= load - 1e-9][:2]
        past = "+" if by[network, vcs, simulator]["past_the_sweep"] == "True" else ""  # carried every load run
        return f"{load:.2f}{past} (" + ", ".join(f"{latency:.0f} at {o:.2f}" for o, latency in at) + ")"
    lines = ["| network | VCs | zero-load (0.02) BookSim2 / harts | BookSim2 saturation | harts saturation | "
             "harts / BookSim2 |", "|---|---|---|---|---|---|"]
    for network, vcs in dict.fromkeys((n, v) for n, v, _ in by):
        b, h = by[network, vcs, "booksim2"], by[network, vcs, "harts"]
        lines.append(f"| 8x8 {network} | {vcs} | {float(b['latency_at_lightest']):.1f} / "
                     f"{float(h['latency_at_lightest']):.1f} | {saturation(network, vcs, 'booksim2')} | "
                     f"{saturation(network, vcs, 'harts')} | {float(h['saturation']) / float(b['saturation']):.2f} |")
    text = "\n".join(lines) + "\n"
    write_text(out / f"booksim2_saturation{suffix}.md", text)
    return text


def _csv_rows(path: Path) -> list[dict]:
    import csv
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def write_seeds_markdown(out: Path) -> str:
    """patterns_seeds.md, the --seed-spread table the validation page shows, from patterns_seeds.csv; returns it."""
    from harts.output import write_text
    rows = _csv_rows(out / "patterns_seeds.csv")
    lines = ["| network | pattern | BookSim2's edge, seeds 1-5 | median | harts' edge, seeds 1-5 | median | "
             "harts / BookSim2, medians |", "|---|---|---|---|---|---|---|"]
    lines += [f"| 8x8 {r['network']} | {r['pattern']} | {r['booksim2_edges'].strip('[]')} | "
              f"{float(r['booksim2_median']):.3f} | {r['harts_edges'].strip('[]')} | {float(r['harts_median']):.3f} | "
              f"{float(r['median_ratio']):.3f} |" for r in rows]
    notes = [f"In 8x8 {r['network']} {r['pattern']}, {r['top_carried']} seed(s) carried the highest load scanned "
             f"({r['top']}): that edge is at least it." for r in rows if int(r["top_carried"])]
    text = "\n".join(lines) + "\n" + "".join(f"\n{note}\n" for note in notes)
    write_text(out / "patterns_seeds.md", text)
    return text


def write_overload_markdown(out: Path) -> str:
    """patterns_overload.md, the --overload table the validation page shows, from patterns_overload.csv; returns
    it."""
    from harts.output import write_text
    rows = _csv_rows(out / "patterns_overload.csv")
    lines = ["| network | pattern | offered (x BookSim2's saturation) | accepted, BookSim2 | accepted, harts | "
             "harts / BookSim2 |", "|---|---|---|---|---|---|"]
    lines += [f"| 8x8 {r['network']} | {r['pattern']} | {float(r['offered']):g} ({float(r['factor']):g}) | "
              f"{float(r['booksim2_accepted']):.4f} | {float(r['harts_accepted']):.4f} | {float(r['ratio']):.3f} |"
              for r in rows]
    within = sum(abs(float(r["ratio"]) - 1) <= 0.03 for r in rows)
    text = "\n".join(lines) + f"\n\nAccepted throughput agrees within 3% in {within} of the {len(rows)} series.\n"
    write_text(out / "patterns_overload.md", text)
    return text


def write_bottleneck_markdown(out: Path) -> str:
    """patterns_bottleneck.md, the --bottleneck table, from patterns_bottleneck.csv; returns it."""
    from harts.output import write_text
    rows = _csv_rows(out / "patterns_bottleneck.csv")
    lines = ["| network | pattern | busiest channel (node:port), senders | offered per sender (x the channel's "
             "bound) | offered through it (flits/cycle) | flow through it, BookSim2 (seeds) | flow through it, harts "
             "(seeds) | harts / BookSim2, means |", "|---|---|---|---|---|---|---|---|"]
    series = {}
    for r in rows:
        series.setdefault((r["network"], r["pattern"], r["channel"], r["senders"], float(r["offered"]),
                           float(r["channel_offered"])), {}).setdefault(r["simulator"], []).append(
            float(r["channel_flow"]))
    for (network, pattern, channel, senders, rate, offered), flows in series.items():
        means = {simulator: sum(values) / len(values) for simulator, values in flows.items()}
        lines.append(f"| 8x8 {network} | {pattern} | {channel}, {senders} | {rate:g} ({offered:.2f}) | {offered:.3f} | "
                     + " | ".join(", ".join(f"{v:.3f}" for v in flows[s]) for s in ("booksim2", "harts"))
                     + f" | {means['harts'] / means['booksim2']:.3f} |")
    text = "\n".join(lines) + "\n"
    write_text(out / "patterns_bottleneck.md", text)
    return text


def write_patterns_markdown(out: Path) -> str:
    """patterns_compare.md, the table EXPERIMENTS.md shows (harts.experiments.splice copies it there), from
    patterns_compare.csv; returns it."""
    from harts.output import write_text
    table = [{k: v if k in ("network", "pattern") else float(v) for k, v in row.items() if k != "latency_gaps"}
             for row in _csv_rows(out / "patterns_compare.csv")]
    text = patterns_markdown(table)
    write_text(out / "patterns_compare.md", text)
    return text


def patterns_markdown(table: list[dict]) -> str:
    """The patterns table, from compare_patterns' rows (loads in BookSim2's injection_rate)."""
    lines = ["| network | pattern | BookSim2 saturation | harts saturation (same rule) | harts / BookSim2 | "
             "`harts sweep --to-saturation` | zero-load latency, BookSim2 / harts | largest latency gap at 0.1-0.7 "
             "of saturation |", "|---|---|---|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| 8x8 {r['network']} | {r['pattern']} | {r['booksim2_saturation']:.3f} | "
                     f"{r['harts_saturation']:.3f} | {r['saturation_ratio']:.3f} | {r['harts_search_stable']:.3f} "
                     f"({r['search_ratio']:.3f}) | {r['booksim2_zero_load']:.1f} / {r['harts_zero_load']:.1f} | "
                     f"{100 * r['latency_gap_max']:+.1f}% |")
    return "\n".join(lines) + "\n"


def plot_patterns(out: Path, path: Path) -> None:
    """Mean latency (between different nodes) against BookSim2's offered load, both simulators, a panel per network
    and pattern: the saturation grid and the latency points."""
    import csv

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [dict(r, simulator="booksim2") for r in csv.DictReader((out / "patterns_booksim2.csv").open())] \
        if (out / "patterns_booksim2.csv").is_file() else []
    rows += list(csv.DictReader((out / "patterns_harts.csv").open()))
    series = list(dict.fromkeys((r["network"], r["traffic"]) for r in rows))
    fig, axes = plt.subplots(2, 5, figsize=(17, 6.4), squeeze=False)
    for ax, (network, traffic) in zip(axes.flat, series):
        for simulator, style in (("booksim2", "s--"), ("harts", "o-")):
            mine = sorted((r for r in rows if (r["network"], r["traffic"], r["simulator"]) ==
                           (network, traffic, simulator)), key=lambda r: float(r["offered"]))
            ax.plot([float(r["offered"]) for r in mine], [float(r["latency_mean"]) for r in mine], style, ms=2.5,
                    lw=1, label="BookSim2" if simulator == "booksim2" else "harts (booksim2 config)")
        ax.set_title(f"8x8 {network}, {traffic}", fontsize=9)
        ax.set_ylim(0, 400)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("offered load (BookSim2's injection_rate)")
    for ax in axes[:, 0]:
        ax.set_ylabel("mean packet latency (cycles)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="loads every 0.01 and windows of 10,000 cycles")
    parser.add_argument("--resume", action="store_true", help="keep the points an earlier run finished")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "booksim2")
    parser.add_argument("--patterns", action="store_true",
                        help="the patterns comparison instead: tornado, neighbor, bitrev, shuffle and uniform on both "
                             "networks with 2 VCs, saturation and latency below 0.7 of it (EXPERIMENTS.md)")
    parser.add_argument("--png", type=Path, default=None,
                        help="the figure (default: docs/booksim2_compare.png with --full, which "
                             "docs/explanation/validation.md shows; else booksim2_compare.png in --out)")
    parser.add_argument("--seed-spread", type=int, metavar="K", default=0,
                        help="each pattern series' saturation under seeds 1..K in both simulators, from the "
                             "--patterns comparison's edges (patterns_seeds.csv)")
    parser.add_argument("--overload", type=float, metavar="F", default=0,
                        help="each pattern series' accepted throughput at F times BookSim2's saturation load, both "
                             "simulators (patterns_overload.csv)")
    parser.add_argument("--bottleneck", action="store_true",
                        help="the flow through each pattern series' busiest channel, both simulators, from 0.9 to "
                             "1.2 of its bound, seeds 1-3 (patterns_bottleneck.csv); permutations only")
    parser.add_argument("--series", metavar="NETWORK:PATTERN[,...]",
                        help="--seed-spread's, --overload's and --bottleneck's series (default: all ten, or the eight "
                             "permutations), e.g. mesh:bitrev")
    parser.add_argument("--tables", action="store_true",
                        help="only write the Markdown tables (booksim2_saturation*.md, patterns_compare.md, "
                             "patterns_seeds.md, patterns_overload.md, patterns_bottleneck.md) again from their CSVs "
                             "(runs nothing)")
    args = parser.parse_args(argv)
    if args.tables:
        for suffix in ("", "_full"):
            if (args.out / f"booksim2_saturation{suffix}.csv").is_file():
                print(write_uniform_markdown(args.out, suffix))
        print(write_patterns_markdown(args.out))
        for name, write in (("seeds", write_seeds_markdown), ("overload", write_overload_markdown),
                            ("bottleneck", write_bottleneck_markdown)):
            if (args.out / f"patterns_{name}.csv").is_file():
                print(write(args.out))
        return 0
    binary, why = booksim_binary()
    if binary is None:
        print(f"booksim2_compare: skipped: {why}")
        return 0
    from harts.experiments.sweep import run_tasks, write_csv

    names = ([tuple(item.split(":")) for item in args.series.split(",")] if args.series else
             [(network, traffic) for network in ("mesh", "torus") for traffic in BOOKSIM_PATTERNS])
    if args.bottleneck:
        permutations = [name for name in names if name[1] != "uniform"]
        bottleneck(binary, args.out, args.workers, permutations)
        print((args.out / "patterns_bottleneck.md").read_text(), end="")
        return 0
    if args.overload:
        for row in overload(binary, args.out, args.workers, args.overload, names):
            print(f"{row['network']:6} {row['pattern']:9} at {row['offered']:g}: accepted BookSim2 "
                  f"{row['booksim2_accepted']:.4f}, harts {row['harts_accepted']:.4f}, ratio {row['ratio']:.3f}")
        return 0
    if args.seed_spread:
        for row in seed_spread(binary, args.out, args.workers, args.seed_spread, names):
            ratio = f"{row['median_ratio']:.3f}" if row["median_ratio"] else "-"
            print(f"{row['network']:6} {row['pattern']:9} BookSim2 {row['booksim2_edges']} median "
                  f"{row['booksim2_median']}; harts {row['harts_edges']} median {row['harts_median']}; ratio {ratio}")
        return 0
    if args.patterns:
        compare_patterns(binary, args.out, args.workers)
        plot_patterns(args.out, args.png or ROOT / "docs" / "booksim2_patterns.png")
        print((args.out / "patterns_compare.md").read_text(), end="")
        return 0
    period = PERIOD[args.full]
    tasks = []
    for network, rates in RATES.items():
        if args.full:
            rates = tuple(round(FULL_STEP * i, 2) for i in range(2, int(max(rates) / FULL_STEP) + 1))
        for vcs in (2, 4):
            for rate in rates:
                tasks.append(Point("booksim2", network, vcs, rate, period, binary))
                tasks.append(Point("harts", network, vcs, rate, period))
    done = run_tasks(tasks, args.out, resume=args.resume, workers=args.workers, description="booksim2 vs harts")
    rows = sorted(done.values(), key=lambda r: (r["network"], r["virtual_channels"], r["simulator"], r["offered"]))
    rows = [{k: v for k, v in r.items() if k != "key"} for r in rows]
    suffix = "_full" if args.full else ""
    write_csv(rows, args.out / f"booksim2_compare{suffix}.csv")
    sat = saturation(rows)
    write_csv(sat, args.out / f"booksim2_saturation{suffix}.csv")
    write_uniform_markdown(args.out, suffix)
    plot(rows, args.png or (ROOT / "docs" / "booksim2_compare.png" if args.full else args.out / "booksim2_compare.png"))
    for s in sat:
        print(f"{s['network']:6} {s['virtual_channels']} VCs {s['simulator']:9} "
              f"latency {s['latency_at_lightest']:6.1f} "
              f"at {s['lightest_load']:g}, saturation {'>= ' if s['past_the_sweep'] else ''}{s['saturation']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
