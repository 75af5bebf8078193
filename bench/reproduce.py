"""Wall time of `harts reproduce --quick` and `harts reproduce` (full precision, both readings of the load)
from an empty results directory on all local cores; writes bench/results/reproduce.json.

    python bench/reproduce.py [--only quick|full]
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from harts.experiments.kandlur_shin.figures import reproduce

LIMITS = {"quick": 240, "full": 1800}  # seconds, on a 2-core machine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(LIMITS))
    args = parser.parse_args()
    path = Path(__file__).resolve().parent / "results" / "reproduce.json"
    out = json.loads(path.read_text()) if path.exists() else {}
    for mode in [args.only] if args.only else ["quick", "full"]:
        with tempfile.TemporaryDirectory() as results:
            started = time.perf_counter()
            written = reproduce([10, 11, 12, 13, 14], Path(results), quick=mode == "quick", progress=False)
            seconds = time.perf_counter() - started
            points = len(list((Path(results) / "points").glob("*.json")))
        out[mode] = {
            "wall_seconds": round(seconds, 1), "limit_seconds": LIMITS[mode], "within_limit": seconds <= LIMITS[mode],
            "points": points, "cores": os.cpu_count(),
            "claims_holding": {basis: sum(v["holds"] for v in figures["claims"]) for basis, figures in written.items()},
            "claims": {basis: len(figures["claims"]) for basis, figures in written.items()},
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(),
        }
        print(f"{mode}: {seconds:.0f} s for {points} points (limit {LIMITS[mode]} s)")
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
