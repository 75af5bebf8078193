"""Speed against BookSim2 on the same network: an 8x8 mesh, dimension-order routing, 2 VCs, 8-flit buffers,
8-flit packets, uniform traffic at 0.1 and 0.3 flits per node per cycle. Writes bench/results/booksim2_speed.json.

    python bench/booksim2_speed.py [--short 10000] [--long 100000] [--repeat 3] [--anchors DIR]

Builds BookSim2 with ANCHORS/build_booksim2.sh (ANCHORS: ../shared/anchors beside this checkout; it needs
g++, flex and bison) or says why it cannot and measures harts alone. Both simulators run as whole processes,
a short and a long run per rate; each prints the cycles it simulated. Rates are router-cycles per second
(64 routers x cycles simulated / wall seconds):
- whole process: the long run's router-cycles over its whole wall time, start-up included;
- marginal: (long - short router-cycles) / (long - short wall seconds), so start-up cancels.
The ratio is harts / BookSim2. Medians of --repeat runs of each, the two simulators alternating.

The same network in both. BookSim2 (src/booksim_config.cpp for the defaults): topology = mesh, k = 8, n = 2,
routing_function = dor, num_vcs = 2, vc_buf_size = 8, packet_size = 8, traffic = uniform,
injection_rate_uses_flits = 1 (so injection_rate is in flits per node per cycle, as harts' rate; BookSim2's
default unit is packets), sim_type = latency; its router, allocators and delays stay at their defaults
(issue 22 compares those with harts'). harts: configs/mesh_8x8.yaml's network with microcode wormhole,
flow.virtual_channels 2, flow.buffer_flits 8, traffic.synthetic uniform at the rate with 8-flit packets.

Cycles: BookSim2's latency mode injects through warmup_periods sample periods, then samples until three
periods in a row converge or max_samples periods have run, then drains. With warmup_periods = 1 and
max_samples = 2 it injects for exactly 2 x sample_period cycles (one warming up, one measured) and then
drains; "Time taken is N cycles" is the whole. harts gets run.cycles = 2 x sample_period (traffic generated)
and run.warmup_cycles = sample_period, then drains; its simulated_cycles is the whole. --short and --long
are these injection periods (2 x sample_period).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from record import write_results

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
RATES = (0.1, 0.3)
ROUTERS = 64
BOOKSIM_TIME = re.compile(r"Time taken is (\d+) cycles")


def build_booksim(anchors: Path) -> tuple[Path | None, str]:
    """BookSim2's binary (built once into a temporary folder), or None and why not."""
    script = anchors / "build_booksim2.sh"
    if not script.is_file():
        return None, f"no {script}"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not Path(lines[-1]).is_file():
        why = (done.stderr.strip().splitlines() or ["no binary printed"])[-1]
        return None, f"{script.name} failed: {why}"
    return Path(lines[-1]), ""


def booksim_config(folder: Path, rate: float, cycles: int) -> Path:
    path = folder / f"booksim_{rate}_{cycles}.cfg"
    path.write_text("\n".join(f"{key} = {value};" for key, value in {
        "topology": "mesh", "k": 8, "n": 2, "routing_function": "dor",
        "num_vcs": 2, "vc_buf_size": 8, "packet_size": 8,
        "traffic": "uniform", "injection_rate": rate, "injection_rate_uses_flits": 1,
        "sim_type": "latency", "warmup_periods": 1, "sample_period": cycles // 2, "max_samples": 2,
    }.items()) + "\n")
    return path


def harts_config(folder: Path, rate: float, cycles: int) -> Path:
    path = folder / f"harts_{rate}_{cycles}.yaml"
    path.write_text(yaml.safe_dump({
        "topology": {"kind": "mesh", "dims": [8, 8]}, "microcode": "wormhole",
        "flow": {"virtual_channels": 2, "buffer_flits": 8},
        "traffic": {"synthetic": {"pattern": "uniform", "rate": rate, "packet_flits": 8}},
        "run": {"cycles": cycles, "warmup_cycles": cycles // 2},
    }, sort_keys=False))
    return path


def run_booksim(binary: Path, config: Path) -> dict:
    started = time.perf_counter()
    done = subprocess.run([str(binary), str(config)], capture_output=True, text=True)
    wall = time.perf_counter() - started
    found = BOOKSIM_TIME.search(done.stdout)
    if found is None:  # not the exit code: BookSim2's main returns -1 when its simulation succeeded
        raise SystemExit(f"BookSim2 failed on {config}: {(done.stdout + done.stderr).strip()[-400:]}")
    latency = re.findall(r"Packet latency average = ([\d.]+)", done.stdout)  # the last: over the measured period
    return {"cycles": int(found.group(1)), "wall_seconds": wall,
            "latency_mean_cycles": float(latency[-1]) if latency else None}


def run_harts(config: Path) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed harts starts: bytecode cached
    env["PYTHONPATH"] = str(CHECKOUT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harts.cli", "run", "--json", str(config)], capture_output=True,
                          text=True, env=env, cwd=CHECKOUT)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"harts failed on {config}: {done.stderr.strip()[-400:]}")
    summary = json.loads(done.stdout)
    return {"cycles": int(summary["simulated_cycles"]), "wall_seconds": wall,
            "latency_mean_cycles": summary["latency_mean_cycles"],
            "kernel_run_seconds": summary["wall_seconds"]}


def rates(short: list[dict], long: list[dict]) -> dict:
    """Whole-process and marginal router-cycles/s from the medians of the short and the long runs."""
    def median(runs, key):
        return statistics.median(r[key] for r in runs)
    cycles_short, cycles_long = median(short, "cycles"), median(long, "cycles")
    wall_short, wall_long = median(short, "wall_seconds"), median(long, "wall_seconds")
    return {"short_cycles": cycles_short, "long_cycles": cycles_long,
            "short_wall_seconds": wall_short, "long_wall_seconds": wall_long,
            "whole_process_router_cycles_per_second": ROUTERS * cycles_long / wall_long,
            "marginal_router_cycles_per_second": ROUTERS * (cycles_long - cycles_short) / (wall_long - wall_short),
            "latency_mean_cycles": median(long, "latency_mean_cycles"),
            "runs": {"short": short, "long": long}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=10_000, help="cycles of injection, short run (default 10000)")
    parser.add_argument("--long", type=int, default=100_000, help="cycles of injection, long run (default 100000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; medians are used (default 3)")
    parser.add_argument("--anchors", type=Path, default=CHECKOUT.parent / "shared" / "anchors",
                        help="folder of build_booksim2.sh and BookSim2's source (default: %(default)s)")
    args = parser.parse_args()
    if not 0 < args.short < args.long:
        parser.error("need 0 < --short < --long")
    binary, why_not = build_booksim(args.anchors)
    if binary is None:
        print(f"BookSim2: skipped, cannot build it ({why_not}); measuring harts alone")
    else:
        print(f"BookSim2: {binary}")
    points = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        run_harts(harts_config(folder, RATES[0], args.short))  # warm-up: bytecode, and the kernel if not cached
        for rate in RATES:
            runs: dict[str, dict[str, list]] = {"harts": {"short": [], "long": []}, "booksim2": {"short": [], "long": []}}
            for _ in range(args.repeat):
                for length, cycles in (("short", args.short), ("long", args.long)):
                    runs["harts"][length].append(run_harts(harts_config(folder, rate, cycles)))
                    if binary is not None:
                        runs["booksim2"][length].append(run_booksim(binary, booksim_config(folder, rate, cycles)))
            point = {"rate_flits_per_node_cycle": rate, "harts": rates(runs["harts"]["short"], runs["harts"]["long"])}
            if binary is not None:
                point["booksim2"] = rates(runs["booksim2"]["short"], runs["booksim2"]["long"])
                for kind in ("whole_process", "marginal"):
                    key = f"{kind}_router_cycles_per_second"
                    point[f"{kind}_ratio_harts_over_booksim2"] = point["harts"][key] / point["booksim2"][key]
            points.append(point)
            for name in ("harts", "booksim2"):
                if name in point:
                    p = point[name]
                    print(f"{rate} flits/node/cycle  {name:8s} whole process "
                          f"{p['whole_process_router_cycles_per_second'] / 1e6:7.2f} M router-cycles/s "
                          f"({p['long_cycles']:.0f} cycles in {p['long_wall_seconds']:.2f} s), marginal "
                          f"{p['marginal_router_cycles_per_second'] / 1e6:7.2f} M, mean latency "
                          f"{p['latency_mean_cycles']:.1f}", flush=True)
            if "booksim2" in point:
                print(f"{rate} flits/node/cycle  harts / BookSim2: whole process "
                      f"{point['whole_process_ratio_harts_over_booksim2']:.1f}x, marginal "
                      f"{point['marginal_ratio_harts_over_booksim2']:.1f}x", flush=True)
    out = {
        "network": "8x8 mesh, dimension-order routing, 2 VCs, 8-flit buffers, 8-flit packets, uniform",
        "injection_cycles": {"short": args.short, "long": args.long}, "repeat": args.repeat,
        "booksim2": str(binary) if binary is not None else None,
        "booksim2_skipped_because": why_not or None,
        "points": points,
    }
    write_results("booksim2_speed", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
