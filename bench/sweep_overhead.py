"""What a sweep costs beyond its points' simulations: a 20-point `harts sweep` of the 8x8 mesh against the sum of its
points' own simulate times. Writes bench/results/sweep_overhead.json.

    python bench/sweep_overhead.py [--repeats 3]

The sweep is configs/booksim2_mesh_8x8.yaml under uniform traffic at 0.05, 0.10, ..., 1.00 of its channel-load bound
(20 points, the grid past saturation included), run as a user runs it: `harts sweep ... --workers W` in a fresh
process, from an empty results directory, whole (start-up, kernel loading, traffic, the runs, the CSV, JSON and
plot). A point's own simulate time is the `wall_seconds` its run reports: the kernel's time, as `harts run` gives
it. The ratio is the command's wall time over the sum of those, with one worker (every point in turn, so the ratio is
the sweep's whole overhead) and with two (the points on two cores). Each is the median of --repeats runs.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_results

HARTS = Path(sys.executable).with_name("harts")
ARGS = ["sweep", "booksim2_mesh_8x8", "--pattern", "uniform", "--bound-fractions", "0.05:1:0.05", "--no-progress"]


def one_sweep(workers: int) -> dict:
    with tempfile.TemporaryDirectory() as results:
        started = time.perf_counter()
        subprocess.run([str(HARTS), *ARGS, "--workers", str(workers), "--results", results,
                        "--plot", f"{results}/s.png"], check=True, capture_output=True)
        wall = time.perf_counter() - started
        points = json.loads(Path(results, "booksim2_mesh_8x8.json").read_text())["points"]
    simulate = sum(p["wall_seconds"] for p in points)
    return {"points": len(points), "wall_seconds": wall, "simulate_seconds": simulate, "ratio": wall / simulate}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    one_sweep(1)  # the kernels in numba's disk cache, once
    found = {}
    for workers in (1, 2):
        runs = [one_sweep(workers) for _ in range(args.repeats)]
        ratio = statistics.median(r["ratio"] for r in runs)
        found[f"workers_{workers}"] = {"median_ratio": ratio, "runs": runs}
        each = ", ".join(f"{r['wall_seconds']:.1f} s / {r['simulate_seconds']:.1f} s" for r in runs)
        print(f"{workers} worker(s): sweep / sum of simulate times = {ratio:.2f} (median of {args.repeats}; {each})")
    write_results("sweep_overhead", {"command": ["harts", *ARGS], "target_ratio": 1.5, **found})


if __name__ == "__main__":
    main()
