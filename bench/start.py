"""Start-up: how long whole `harts` processes take with the kernels already in numba's disk cache, and whether
sweep workers load a kernel once. Writes bench/results/start.json.

    python bench/start.py [--runs 7] [--against DIR]

Each command runs --runs times as its own process after one warm-up (which writes Python's bytecode cache and,
in a fresh checkout, compiles the kernels); the median wall time is quoted, with min and max. Targets (issue
21): `harts --help` under 0.3 s; a 1,000-cycle `harts run` of configs/mesh_8x8.yaml and of
configs/uniform_e9.yaml (copies with run.cycles 1000, run.warmup_cycles 100) under 0.6 s. The same run of
configs/wormhole_torus_8x8.yaml (the flit-level kernel) is measured beside them, held to the same target.
"Kernel load" is the part of the run spent loading the kernel from the cache (the run's
kernel_startup_seconds); "import numpy, numba" is a process that only imports those two, the part of every
start harts cannot cut. --against DIR runs every command of another checkout too (for example one of main,
for a before/after), alternating with this one run by run, and reports the ratios.

Sweep: run_tasks (harts.experiments.sweep, behind harts load, sweep-like figures and reproduce) runs
--sweep-points 1,000-cycle runs of the mesh on 2 local worker processes; each point reports its process and
how many kernels that process loaded itself (numba's cache hits and misses of both kernels, less those it
inherited when the pool forked it). Points per second compare with a process per point (the 1,000-cycle
run above).

The child processes run with PYTHONDONTWRITEBYTECODE removed from their environment, as an installed harts
runs: with it set, every start recompiles harts' Python sources (about 0.1 s more here).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
RUN_CONFIGS = ("mesh_8x8", "uniform_e9", "wormhole_torus_8x8")
TARGETS = {"help": 0.3, "run": 0.6}
RUN_CYCLES, RUN_WARMUP = 1000, 100


def short_config(name: str, folder: Path) -> Path:
    """A copy of configs/NAME.yaml that runs RUN_CYCLES cycles."""
    config = yaml.safe_load((CHECKOUT / "configs" / f"{name}.yaml").read_text())
    config.setdefault("run", {}).update(cycles=RUN_CYCLES, warmup_cycles=RUN_WARMUP)
    path = folder / f"{name}_{RUN_CYCLES}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def child_environment(checkout: Path) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(checkout) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def timed(command: list[str], checkout: Path, env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds of one whole process run in `checkout` (python -m puts the working directory
    first on the path), and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stdout


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "all": values}


def commands(folder: Path) -> dict[str, list[str]]:
    python = [sys.executable]
    found = {"help": [*python, "-m", "harts.cli", "--help"]}
    for name in RUN_CONFIGS:
        found[f"run {name}"] = [*python, "-m", "harts.cli", "run", "--json", str(short_config(name, folder))]
    found["import numpy, numba"] = [*python, "-c", "import numpy, numba"]
    return found


def measure(checkouts: dict[str, Path], runs: int, folder: Path) -> dict:
    """{checkout label: {command label: {wall, cpu[, kernel_load]}}}, the checkouts alternating run by run."""
    todo = commands(folder)
    envs = {label: child_environment(path) for label, path in checkouts.items()}
    seen = {label: {name: {"wall": [], "cpu": [], "kernel_load": []} for name in todo} for label in checkouts}
    for name, command in todo.items():
        for label in checkouts:
            timed(command, checkouts[label], envs[label])  # warm-up: bytecode, and the kernels if not cached yet
        for _ in range(runs):
            for label in checkouts:
                wall, cpu, out = timed(command, checkouts[label], envs[label])
                seen[label][name]["wall"].append(wall)
                seen[label][name]["cpu"].append(cpu)
                if name.startswith("run "):
                    seen[label][name]["kernel_load"].append(json.loads(out)["kernel_startup_seconds"])
    return {label: {name: {key: spread(values) for key, values in figures.items() if values}
                    for name, figures in by_name.items()} for label, by_name in seen.items()}


class SweepPoint:
    """A task for run_tasks: a 1,000-cycle run of the 8x8 mesh; reports the process that ran it and how many
    kernels that process loaded beyond the `inherited` count it was forked with."""

    def __init__(self, seed: int, inherited: int):
        self.key, self.cost, self.seed, self.inherited = f"start_sweep_{seed}", 1, seed, inherited

    def run(self) -> dict:
        from harts.machine.config import load_config
        from harts.machine.simulation import Simulation
        config = load_config(CHECKOUT / "configs" / "mesh_8x8.yaml").with_values(
            run__cycles=RUN_CYCLES, run__warmup_cycles=RUN_WARMUP, run__seed=self.seed)
        Simulation(config).run(keep=False)
        return {"key": self.key, "pid": os.getpid(), "kernel_loads": kernel_loads() - self.inherited}


def kernel_loads() -> int:
    """Kernels this process loaded from numba's cache or compiled, both kernels together."""
    from harts.controller.engine import run_kernel
    from harts.controller.flits.kernel import run_flits
    return sum(sum(d.stats.cache_hits.values()) + sum(d.stats.cache_misses.values()) for d in (run_kernel, run_flits))


def sweep(points: int, workers: int) -> dict:
    from harts.experiments.sweep import run_tasks
    from harts.machine.simulation import load_kernel
    load_kernel()  # as run_tasks does before it forks the workers; counted apart from the workers' loads
    inherited = kernel_loads()
    tasks = [SweepPoint(seed, inherited) for seed in range(1, points + 1)]
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        done = run_tasks(tasks, Path(folder), workers=workers, progress=False)
        wall = time.perf_counter() - started
    by_worker: dict[int, dict] = {}
    for result in done.values():
        worker = by_worker.setdefault(result["pid"], {"points": 0, "kernel_loads": 0})
        worker["points"] += 1
        worker["kernel_loads"] = max(worker["kernel_loads"], result["kernel_loads"])
    return {"points": points, "workers": workers, "wall_seconds": wall, "points_per_second": points / wall,
            "kernels_loaded_before_the_workers_start": inherited, "by_worker": list(by_worker.values()),
            "kernel_loads_in_workers": sum(w["kernel_loads"] for w in by_worker.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="counted runs of each command (default 7)")
    parser.add_argument("--against", type=Path, metavar="DIR", help="another checkout to measure alternately")
    parser.add_argument("--sweep-points", type=int, default=40, help="points of the sweep measurement (default 40)")
    args = parser.parse_args()
    checkouts = {"this": CHECKOUT}
    if args.against is not None:
        checkouts["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as folder:
        found = measure(checkouts, args.runs, Path(folder))
    here = found["this"]
    targets = {"help": (TARGETS["help"], here["help"]["wall"]["median"])}
    for name in RUN_CONFIGS:
        targets[f"run {name}"] = (TARGETS["run"], here[f"run {name}"]["wall"]["median"])
    for label, by_name in found.items():
        print(f"{label} ({checkouts[label]}), whole process, median of {args.runs} (min..max), wall seconds:")
        for name, figures in by_name.items():
            wall = figures["wall"]
            load = (f"; kernel load {figures['kernel_load']['median']:.3f}" if "kernel_load" in figures else "")
            print(f"  {name:28s} {wall['median']:.3f} ({wall['min']:.3f}..{wall['max']:.3f}), cpu "
                  f"{figures['cpu']['median']:.3f}{load}")
    ratios = {}
    if "against" in found:
        for name in here:
            pairs = [a / b for a, b in zip(here[name]["wall"]["all"], found["against"][name]["wall"]["all"])]
            ratios[name] = spread(pairs)
            print(f"  this/against {name:28s} {ratios[name]['median']:.2f} "
                  f"({ratios[name]['min']:.2f}..{ratios[name]['max']:.2f})")
    swept = sweep(args.sweep_points, 2)
    print(f"sweep: {swept['points']} points on {swept['workers']} workers in {swept['wall_seconds']:.2f} s, "
          f"{swept['points_per_second']:.1f} points/s; kernels loaded before the workers start "
          f"{swept['kernels_loaded_before_the_workers_start']}, in the workers {swept['kernel_loads_in_workers']} "
          f"(points per worker: {', '.join(str(w['points']) for w in swept['by_worker'])})")
    verdicts = {name: {"target_seconds": target, "median_seconds": value, "met": value < target}
                for name, (target, value) in targets.items()}
    for name, verdict in verdicts.items():
        print(f"  {name:28s} {'met' if verdict['met'] else 'NOT met'}: {verdict['median_seconds']:.3f} s "
              f"(target < {verdict['target_seconds']} s)")
    out = {
        "runs": args.runs,
        "run_config": {"cycles": RUN_CYCLES, "warmup_cycles": RUN_WARMUP},
        "whole_process_seconds": found,
        "this_over_against_wall": ratios,
        "against": str(checkouts.get("against", "")) or None,
        "targets": verdicts,
        "sweep": swept,
    }
    write_results("start", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
