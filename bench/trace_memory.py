"""Memory of a run from a trace file (traffic.trace) against the trace's length: peak RSS of `harts run` on traces
of 1,000,000 and 10,000,000 packets. Writes bench/results/trace_memory.json.

    python bench/trace_memory.py [--packets 1000000 10000000]

The network is configs/booksim2_mesh_8x8.yaml's 8x8 wormhole mesh; each trace holds uniform random pairs of 8-flit
packets at 0.1 flits per node per cycle (0.8 packets a cycle, Poisson arrivals), well below the mesh's saturation,
so the network holds a bounded number of packets however long the trace. Each trace runs in its own `harts run
CONFIG --json` (which keeps only sums) in a child process, whose peak RSS is the child's own (os.wait4), so the
runs do not see each other's memory. The trace is read a block of lines at a time, so the peaks should agree
within a few MB. The traces are written to a temporary directory, by another child (see write_in_child), and
deleted after.

    python bench/trace_memory.py --write PATH PACKETS   # what that child runs: write one trace
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml
from record import write_results

from harts.machine.config import CONFIGS_DIR

HARTS = Path(sys.executable).with_name("harts")
NODES = 64
FLITS = 8
RATE = 0.1  # flits per node per cycle
WRITE_PACKETS = 1 << 20  # packets formatted and written at a time


def write_trace(path: Path, packets: int, seed: int) -> int:
    """A trace of `packets` packets; the creation cycle of its last one."""
    rng = np.random.default_rng(seed)
    clock = 0.0
    with open(path, "w") as handle:
        handle.write(f"# {packets} uniform packets of {FLITS} flits at {RATE} flits/node/cycle on the 8x8 mesh\n")
        for start in range(0, packets, WRITE_PACKETS):
            k = min(WRITE_PACKETS, packets - start)
            times = clock + np.cumsum(rng.exponential(FLITS / (NODES * RATE), k))
            clock = float(times[-1])
            source = rng.integers(0, NODES, k)
            destination = (source + rng.integers(1, NODES, k)) % NODES
            handle.write("".join(f"{c} {s} {d} {FLITS}\n" for c, s, d in
                                 zip(np.floor(times).astype(np.int64).tolist(), source.tolist(),
                                     destination.tolist())))
    return int(clock)


def write_in_child(path: Path, packets: int) -> int:
    """write_trace in a child process. A child's peak RSS (ru_maxrss) counts its parent's memory up to the moment
    it runs the new program (Linux keeps the address space's high-water mark across exec), so the parent that
    starts the measured runs must stay small: it never holds a trace's arrays or text itself."""
    done = subprocess.run([sys.executable, __file__, "--write", str(path), str(packets)], check=True,
                          stdout=subprocess.PIPE, text=True)
    return int(done.stdout)


def run(config: Path) -> tuple[dict, float, float]:
    """`harts run CONFIG --json` in a child: its summary, wall seconds and peak RSS in MB (its own, from wait4).
    A run that had to compile the kernel (another change to it since the last run) is run again: compiling
    takes far more memory than running."""
    while True:
        started = time.perf_counter()
        with tempfile.TemporaryFile() as err:
            child = subprocess.Popen([str(HARTS), "run", str(config), "--json"], stdout=subprocess.PIPE, stderr=err)
            out = child.stdout.read()
            _, status, usage = os.wait4(child.pid, 0)
            wall = time.perf_counter() - started
            child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
            err.seek(0)
            notes = err.read().decode()
        if child.returncode:
            raise SystemExit(f"harts run {config} failed: {notes.strip()}")
        if "compiling" not in notes:
            return json.loads(out), wall, usage.ru_maxrss / 1024  # ru_maxrss is in KB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--write", nargs=2, metavar=("PATH", "PACKETS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        print(write_trace(Path(args.write[0]), int(args.write[1]), seed=int(args.write[1])))
        return 0
    base = yaml.safe_load((CONFIGS_DIR / "booksim2_mesh_8x8.yaml").read_text())
    points = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for packets in args.packets:
            trace = folder / "trace.txt"
            started = time.perf_counter()
            last = write_in_child(trace, packets)
            written = time.perf_counter() - started
            config = dict(base, traffic={"synthetic": {"rate": 0.0}, "trace": str(trace)},
                          run={**base["run"], "cycles": last + 1})
            (folder / "trace.yaml").write_text(yaml.safe_dump(config))
            summary, wall, peak = run(folder / "trace.yaml")
            points.append({"packets": packets, "trace_megabytes": round(trace.stat().st_size / 2**20, 1),
                           "trace_cycles": last + 1, "peak_rss_megabytes": round(peak, 1),
                           "wall_seconds": round(wall, 1), "write_seconds": round(written, 1),
                           "packets_delivered": summary["deliveries"], "packets_run": summary["packets"],
                           "latency_mean_cycles": summary["latency_mean_cycles"]})
            print(json.dumps(points[-1]), flush=True)
            trace.unlink()
    peaks = [p["peak_rss_megabytes"] for p in points]
    write_results("trace_memory", {"config": "configs/booksim2_mesh_8x8.yaml with traffic.trace", "rate": RATE,
                                   "packet_flits": FLITS, "points": points,
                                   "peak_rss_spread_megabytes": round(max(peaks) - min(peaks), 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
