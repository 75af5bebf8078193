"""Issue 21's figures in one dated run: each kernel against its speed-of-light model, flatness in size, start-up
and BookSim2 side by side. Runs bench/cut_through_limit.py, bench/flits_limit.py, bench/start.py and
bench/booksim2_speed.py one after another (each writes its own JSON in bench/results/), then collects the
verdicts into bench/results/speed.json and prints the tables docs/explanation/performance.md quotes.

    python bench/speed.py [--quick]

--quick passes each script fewer repeats (a check that everything runs, not figures to quote).
"""

import argparse
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from record import RESULTS, write_results

HERE = Path(__file__).resolve().parent
SCRIPTS = {  # script: (arguments, arguments with --quick)
    "cut_through_limit": ([], ["--repeat", "1"]),
    "flits_limit": ([], ["--repeat", "1", "--scale", "0.25"]),
    "start": ([], ["--runs", "3", "--sweep-points", "8"]),
    "booksim2_speed": ([], ["--repeat", "1", "--long", "20000"]),
}
ENGINE_OVER_LIMIT = 0.5  # issue 21's targets
SIZE_RATIO = 0.75


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a check that everything runs")
    args = parser.parse_args()
    started = datetime.now(timezone.utc)
    for name, (full, quick) in SCRIPTS.items():
        print(f"== bench/{name}.py", flush=True)
        done = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *(quick if args.quick else full)])
        if done.returncode != 0:
            print(f"bench/speed.py: bench/{name}.py exited with {done.returncode}; the figures are incomplete",
                  file=sys.stderr)
            return done.returncode
    results = {name: json.loads((RESULTS / f"{name}.json").read_text()) for name in SCRIPTS}
    summary = summarise(results)
    summary.update(started=started.isoformat(timespec="seconds"), quick=args.quick)
    print_tables(summary)
    write_results("speed", summary)
    return 0


def summarise(results: dict) -> dict:
    cut = results["cut_through_limit"]
    flits = results["flits_limit"]
    start = results["start"]
    points = []
    for p in cut["points"]:
        points.append({"kernel": "cut-through", "network": p["network"], "load": p["load"],
                       "unit": "packet-hops/s", "engine": p["engine_packet_hops_per_second"],
                       "limit": p["limit_packet_hops_per_second"], "engine_over_limit": p["engine_over_limit"]})
    for p in flits["points"]:
        points.append({"kernel": "flit", "network": p["network"], "load": _flit_load(p), "unit": "flit-hops/s",
                       "engine": p["engine_flit_hops_per_second"], "limit": p["limit_flit_hops_per_second"],
                       "engine_over_limit": p["engine_over_limit"]})
    sizes = {"E-41 / E-9 (cut-through, engine)": {k: v["engine"] for k, v in cut["E-41 / E-9"].items()},
             "E-41 / E-9 (cut-through, limit)": {k: v["limit"] for k, v in cut["E-41 / E-9"].items()},
             "64x64 / 8x8 torus (flit, engine)": flits["engine_64x64_over_8x8_flit_hops_per_second"],
             "64x64 / 8x8 torus (flit, limit)": flits["limit_64x64_over_8x8_flit_hops_per_second"]}
    engine_sizes = [v for k, ratios in sizes.items() if "engine" in k for v in ratios.values()]
    return {
        "points": points,
        "sizes": sizes,
        "start": {name: entry["wall"]["median"] for name, entry in start["whole_process_seconds"]["this"].items()},
        "start_targets": start["targets"],
        "booksim2": results["booksim2_speed"]["points"],
        "booksim2_skipped_because": results["booksim2_speed"].get("booksim2_skipped_because"),
        "meets": {"engine / limit >= 0.5 everywhere": all(p["engine_over_limit"] >= ENGINE_OVER_LIMIT
                                                          for p in points),
                  "size ratios >= 0.75": all(v >= SIZE_RATIO for v in engine_sizes)},
    }


def _flit_load(point: dict) -> str:
    """The size pair (8x8 and 64x64 torus) is run at fractions of each torus's channel-load bound, the other
    points at a rate in flits per node per cycle."""
    if point["network"] in ("8x8 torus", "64x64 torus"):
        return f"{point['rate_of_bound']:g} of the bound ({point['rate_flits_per_node_cycle']:.3f})"
    return f"{point['rate_flits_per_node_cycle']:g}"


def print_tables(summary: dict) -> None:
    print("\n| kernel | network | load | engine | limit | engine / limit |\n|---|---|---|---|---|---|")
    for p in summary["points"]:
        print(f"| {p['kernel']} | {p['network']} | {p['load']} | {p['engine'] / 1e6:.2f} M | {p['limit'] / 1e6:.2f} M "
              f"| {p['engine_over_limit']:.2f} |")
    print("\n| size ratio (rate of the large network / the small one) | at each load |\n|---|---|")
    for name, ratios in summary["sizes"].items():
        print(f"| {name} | " + ", ".join(f"{load}: {v:.2f}" for load, v in ratios.items()) + " |")
    print("\nstart-up, whole process, median wall seconds: " +
          ", ".join(f"{k} {v:.3f}" for k, v in summary["start"].items()))
    print("meets:", summary["meets"])


if __name__ == "__main__":
    sys.exit(main())
