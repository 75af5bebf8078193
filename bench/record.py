"""What every benchmark writes: its results as JSON in bench/results/, stamped with the machine it ran on
(benchmarks are run as `python bench/NAME.py`, so this folder is on the path)."""

import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine_info() -> dict:
    """The interpreter, the processor, the cores and how busy the machine was: wall times on this shared
    machine move with its other tenants' load."""
    return {"python": platform.python_version(), "processor": platform.processor() or platform.machine(),
            "cores": os.cpu_count(), "load_average_at_end": os.getloadavg()}


def write_results(name: str, results: dict) -> Path:
    """bench/results/NAME.json: the benchmark's name, the date and the machine's stamp, then its results;
    announced on standard output."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    stamped = {"benchmark": name, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "machine": machine_info(), **results}
    path.write_text(json.dumps(stamped, indent=2) + "\n")
    print(f"wrote {path}")
    return path
