"""harts' wormhole router against BookSim2's default router on the same networks and loads (issue 22).

    python bench/booksim2_compare.py [--full] [--resume] [--workers N] [--out DIR]

Both run dimension-order routing, 8-flit buffers, 8-flit packets and uniform traffic on the 8x8 mesh and the 8x8
torus with 2 and 4 VCs, at the same offered loads. harts runs configs/booksim2_mesh_8x8.yaml or
configs/booksim2_torus_8x8.yaml (the options set as BookSim2 has them) with the VCs changed; BookSim2 is built from
../shared/anchors/ by build_booksim2.sh (its defaults, with only the keys in BOOKSIM_BASE and the network set).
Writes DIR/booksim2_compare.csv (one row per simulator, network, VCs and load), DIR/booksim2_saturation.csv
(with --full: *_full.csv) and a figure of latency against offered load, both curves per network: with --full
docs/booksim2_compare.png, which the README shows, else DIR/booksim2_compare.png. Without BookSim2 (no anchor archive, no compiler) it says why in one line and runs nothing.

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
                # injection_rate / packet_size (injection.cpp); harts' synthetic traffic is Poisson
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


def booksim_carries(row: dict) -> bool:
    """Whether BookSim2 carried a run's offered load: the accepted rate within 1% of it and every source's injected
    rate within 3% of it, each widened to what a Bernoulli source's packet count varies by chance in the three
    measured periods (3.5 standard deviations of the network's count, 4 of one node's: the least of 64 nodes lies
    about 2.4 below the mean by chance alone, 7% at 0.3 flits/node/cycle)."""
    offered, nodes = row["offered"], BOOKSIM_BASE["k"] ** BOOKSIM_BASE["n"]
    per_node = offered * 3 * row["sample_period"] / PACKET_FLITS  # one source's expected packets in the window
    network_tolerance = max(0.01, 3.5 / np.sqrt(per_node * nodes))
    node_tolerance = max(0.03, 4 / np.sqrt(per_node))
    return bool(row["accepted"] >= offered * (1 - network_tolerance)
                and row["injected_min"] >= offered * (1 - node_tolerance))


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
    PATTERN_PAST steps past the first load it does not carry (booksim_carries; from which no higher one is), plus
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
            return json.loads(path.read_text())
        started = time.time()
        row = {"network": network, "traffic": traffic, "virtual_channels": vcs, "offered": rate,
               "sample_period": period, **run_booksim(binary, network, vcs, rate, period, traffic=traffic)}
        row["carried"] = booksim_carries(row)
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
                                 for i in range(int(round(PATTERN_FINE_SPAN / (2 * PATTERN_FINE))))]
    rows = [row for s in series.values() for row in s["rows"].values()]
    order = {t: i for i, t in enumerate(patterns)}
    return sorted(rows, key=lambda r: (r["network"], order[r["traffic"]], r["offered"]))


def booksim_pattern_summary(rows: list[dict]) -> list[dict]:
    """Per network and pattern: the latency at the lightest load, and the last load carried below the first from
    which none is (booksim_carries), with the accepted rate, the least source's injected rate and the latency at
    both: how sharp the step is."""
    out = []
    for network, traffic in dict.fromkeys((r["network"], r["traffic"]) for r in rows):
        mine = sorted((r for r in rows if (r["network"], r["traffic"]) == (network, traffic)),
                      key=lambda r: r["offered"])
        last = max((i for i, r in enumerate(mine) if r["carried"]), default=-1)
        carried = mine[last] if last >= 0 else None
        failed = mine[last + 1] if last + 1 < len(mine) else None
        entry = {"network": network, "traffic": traffic, "lightest_load": mine[0]["offered"],
                 "latency_at_lightest": mine[0]["latency_mean"], "hops_at_lightest": mine[0]["hops_mean"]}
        for name, r in (("carried", carried), ("not_carried", failed)):
            entry[f"last_{name}" if name == "carried" else f"first_{name}"] = r["offered"] if r else None
            for field_ in ("accepted", "injected_min", "latency_mean", "network_latency_mean"):
                entry[f"{field_}_at_{name}"] = r[field_] if r else None
        entry["loads_not_carried_below"] = [r["offered"] for r in mine[:max(last, 0)] if not r["carried"]]
        out.append(entry)
    return out


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="loads every 0.01 and windows of 10,000 cycles")
    parser.add_argument("--resume", action="store_true", help="keep the points an earlier run finished")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "booksim2")
    parser.add_argument("--png", type=Path, default=None,
                        help="the figure (default: docs/booksim2_compare.png with --full, which the README shows; "
                             "else booksim2_compare.png in --out)")
    args = parser.parse_args(argv)
    binary, why = booksim_binary()
    if binary is None:
        print(f"booksim2_compare: skipped: {why}")
        return 0
    from harts.experiments.sweep import run_tasks, write_csv

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
    plot(rows, args.png or (ROOT / "docs" / "booksim2_compare.png" if args.full else args.out / "booksim2_compare.png"))
    for s in sat:
        print(f"{s['network']:6} {s['virtual_channels']} VCs {s['simulator']:9} "
              f"latency {s['latency_at_lightest']:6.1f} "
              f"at {s['lightest_load']:g}, saturation {'>= ' if s['past_the_sweep'] else ''}{s['saturation']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
