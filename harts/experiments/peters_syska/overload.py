"""Why Peters & Syska's background sweep (torus.LOADS) stops at 0.005 flits per node per cycle: what the
broadcasts do at OVERLOAD = 0.01, with the sweep's background (16-flit circuits, from 2000 cycles before the
broadcast, one packet of L = 100 flits).

    python -m harts.experiments.peters_syska.overload [--results RESULTS]

It runs the tiling on 25x25 once with `flow.circuit_setup: wait`, then each algorithm on its size near N = 1000
with the sweep's `retry`, seeds 1, 2, ... in order, each algorithm stopping at its first run that does not
complete. It writes RESULTS/paper004/overload.csv and the Markdown table overload.md. A run that stops in
deadlock or livelock takes up to two minutes (the detector waits run.deadlock_cycles, 100,000 cycles, with
nothing moving), so this is not part of `harts reproduce --paper 004`.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

from ...broadcasts.torus import run_torus_broadcast
from ...errors import SimulationError
from ...machine.flits import DeadlockError, LivelockError
from ...output import write_text
from ..sweep import write_csv
from .torus import CONTENTION, CONTENTION_SEEDS, LABELS, LENGTH, WARMUP, config, name

OVERLOAD = 0.01  # background flits per node per cycle, twice the sweep's highest rate
WAIT_RUN = ("tiling", (25, 25), 1)  # algorithm, torus, seed: the run with probes that wait


def overload_run(algorithm: str, dims, seed: int, setup: str = "retry", rate: float = OVERLOAD) -> dict:
    """One broadcast over background circuits at `rate`, as the sweep's ContentionPoint runs it (with `setup` for
    flow.circuit_setup), and how it ended: completed, deadlock, livelock, or another SimulationError."""
    idle = run_torus_broadcast(config(dims), algorithm, 0, LENGTH, packets=1)
    cycles = WARMUP + 20 * idle.run.latency
    loaded = config(dims, rate, seed, cycles).with_values(flow__circuit_setup=setup)
    row = {"algorithm": algorithm, "torus": name(dims), "rate": rate, "seed": seed, "circuit_setup": setup,
           "outcome": "completed", "stopped_at_cycle": "", "completion_cycles": "",
           "idle_completion_cycles": idle.run.latency, "background_cycles": cycles, "error": ""}
    try:
        broadcast = run_torus_broadcast(loaded, algorithm, 0, LENGTH, packets=1, cost=idle.cost)
    except (DeadlockError, LivelockError) as exc:
        row["outcome"] = "deadlock" if isinstance(exc, DeadlockError) else "livelock"
        row["stopped_at_cycle"] = int(re.search(r"at cycle (\d+)", str(exc)).group(1))
        row["error"] = str(exc).split(";")[0]
    except SimulationError as exc:
        row["outcome"], row["error"] = "error", str(exc)
    else:
        row["completion_cycles"] = broadcast.run.latency
        if broadcast.run.latency > cycles - WARMUP:
            row["outcome"] = "outlived its background"
    return row


def overload_rows(progress: bool = True) -> list[dict]:
    """The `wait` run, then each algorithm's seeds in order up to its first run that does not complete."""
    def ran(row):
        if progress:
            print(f"{row['algorithm']} {row['torus']} {row['circuit_setup']} seed {row['seed']}: {row['outcome']}"
                  + (f" at cycle {row['stopped_at_cycle']}" if row["stopped_at_cycle"] != "" else ""), flush=True)
        return row

    algorithm, dims, seed = WAIT_RUN
    rows = [ran(overload_run(algorithm, dims, seed, "wait"))]
    for algorithm, dims in CONTENTION.items():
        for seed in CONTENTION_SEEDS:
            rows.append(ran(overload_run(algorithm, dims, seed)))
            if rows[-1]["outcome"] != "completed":
                break
    return rows


def markdown(rows: list[dict]) -> str:
    """The table EXPERIMENTS.md shows: a row per run, in the order they ran."""
    def outcome(r):
        if r["outcome"] == "completed":
            completion, idle = int(r["completion_cycles"]), int(r["idle_completion_cycles"])
            return f"completed in {completion} cycles ({completion / idle:.2f} x idle)"
        if r["stopped_at_cycle"] != "":
            return f"{r['outcome']} at cycle {int(r['stopped_at_cycle']):,}"
        return r["outcome"] + (f": {r['error']}" if r["error"] else "")

    caption = (f"Background of {float(rows[0]['rate']):g} flits per node per cycle, as the sweep's otherwise. Seeds in "
               "order; each algorithm stops at its first run that does not complete.")
    lines = [caption, "",
             "| algorithm | torus | flow.circuit_setup | seed | outcome |", "|---|---|---|---|---|"]
    lines += [f"| {LABELS[r['algorithm']]} | {r['torus']} | {r['circuit_setup']} | {r['seed']} | {outcome(r)} |"
              for r in rows]
    return "\n".join(lines) + "\n"


def write(results: Path, progress: bool = True) -> list[dict]:
    rows = overload_rows(progress)
    out = results / "paper004"
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "overload.csv")
    write_text(out / "overload.md", markdown(rows))
    return rows


def write_tables(results: Path) -> list[Path]:
    """Rewrite results/paper004/overload.md from its overload.csv, without running."""
    path = results / "paper004" / "overload.csv"
    if not path.is_file():
        return []
    write_text(path.with_suffix(".md"), markdown(list(csv.DictReader(path.open()))))
    return [path.with_suffix(".md")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("harts-results"),
                        help="results directory (default: harts-results)")
    args = parser.parse_args()
    write(args.results)
    print(f"wrote {args.results / 'paper004' / 'overload.csv'} and overload.md")


if __name__ == "__main__":
    main()
