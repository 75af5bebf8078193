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


def booksim_config(network: str, vcs: int, rate: float, period: int, seed: int = SEED, **extra) -> str:
    values = dict(BOOKSIM_BASE, topology=network, num_vcs=vcs, injection_rate=rate, sample_period=period,
                  seed=seed, **extra)
    return "".join(f"{k} = {v};\n" for k, v in values.items())


def run_booksim(binary: str, network: str, vcs: int, rate: float, period: int, **extra) -> dict:
    """Mean packet latency and accepted flit rate of one BookSim2 run."""
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as handle:
        handle.write(booksim_config(network, vcs, rate, period, **extra))
    try:
        done = subprocess.run([binary, handle.name], capture_output=True, text=True)
    finally:
        os.unlink(handle.name)
    out = done.stdout
    if "Overall Traffic Statistics" not in out:  # its exit status is -1 on success (main.cpp), so not asked
        raise RuntimeError(f"BookSim2 failed: {(out + done.stderr).strip().splitlines()[-1:]}")
    latency = re.search(r"====== Overall Traffic Statistics ======.*?Packet latency average = ([\d.]+)", out, re.S)
    accepted = re.search(r"====== Overall Traffic Statistics ======.*?Accepted flit rate average = ([\d.]+)",
                         out, re.S)
    return {"latency_mean": float(latency.group(1)), "accepted": float(accepted.group(1))}


def harts_config(network: str, vcs: int, **overrides):
    return load_config(CONFIGS[network]).with_values(flow__virtual_channels=vcs, **overrides)


def run_harts(network: str, vcs: int, rate: float, period: int, seed: int = SEED, **overrides) -> dict:
    """The same measurement on harts: a warm-up period, three measured, every packet drained."""
    sim = Simulation(harts_config(network, vcs, **overrides))
    n = sim.topology.n_nodes
    warmup, measure = period, 3 * period
    create, source, dest = synthetic_packets(sim.topology, "uniform", rate * (n - 1) / n, PACKET_FLITS,
                                             warmup + measure, seed)
    result = sim.run(unicast(create, source, dest, PACKET_FLITS * sim.params.flit_bytes))
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
