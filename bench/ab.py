"""Before / after: this checkout's engine against another's on the same workloads, in fresh pairs of processes.

    python bench/ab.py --against DIR [--pairs 6] [--runs 3] POINT [POINT ...]

POINT is `flit:KIND:SIDE:RATE:CYCLES` (bench/flits_limit.py's machine: KIND mesh or torus, RATE in flits per
node per cycle, or for the 8x8 and 64x64 tori a fraction of the channel-load bound, as that benchmark takes them)
or `cut-through:SIZE:LOAD:CYCLES` (E-SIZE under uniform traffic at link load LOAD, as bench/cut_through_limit.py).
Each point is timed as those benchmarks time the engine (flit: the whole Simulation.run; cut-through: the run's
wall_seconds). `cut-through-limit:SIZE:LOAD:CYCLES` times the cut-through limit (bench/limits/cut_through.py) on
that workload instead, its event loop alone as bench/cut_through_limit.py times it: a change to the limit is
measured the same way as one to the engine.

Why pairs of processes: on this machine the same code can run up to 20% faster or slower in one process than in
the next; the runs within a process agree in a quiet phase, less in a busy one (docs/explanation/performance.md, The machine moves). So each of --pairs
pairs starts a fresh process per checkout (which one starts first alternates), runs the point once in each to warm
up, then --runs times in each, alternating. A pair's ratio is the median of its runs, this / against; the point's
ratio is the median over the pairs, with their range. Writes bench/results/ab.json.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from record import write_results

CHECKOUT = Path(__file__).resolve().parent.parent


def _flit_run(spec: list[str]):
    from flits_limit import FLITS, machine, uniform_torus_bound

    from harts.machine.patterns import synthetic_packets
    from harts.machine.traffic import unicast

    kind, side, rate, cycles = spec[0], int(spec[1]), float(spec[2]), int(spec[3])
    simulation = machine(kind, side)
    if kind == "torus" and side in (8, 64):
        rate *= uniform_torus_bound(simulation.topology)
    # the first three arrays: what every checkout's synthetic_packets returns
    create, source, destination = synthetic_packets(simulation.topology, "uniform", rate, FLITS, cycles, 1)[:3]
    work = unicast(create, source, destination, FLITS * simulation.params.flit_bytes)

    def timed() -> float:
        started = time.perf_counter()
        simulation.run(work, keep=False)
        return time.perf_counter() - started
    return timed


def _cut_through_run(spec: list[str]):
    from bench.limits.cut_through import workload
    from harts.machine.config import hex_config
    from harts.machine.simulation import Simulation

    config = hex_config(int(spec[0]), traffic__uniform__load=float(spec[1]), run__cycles=int(spec[2]))
    traffic = workload(config)
    return lambda: Simulation(config).run(traffic, keep=False).wall_seconds


def _cut_through_limit_run(spec: list[str]):
    from bench.limits.cut_through import Limit, simulate, workload
    from harts.machine.config import hex_config

    config = hex_config(int(spec[0]), traffic__uniform__load=float(spec[1]), run__cycles=int(spec[2]))
    traffic = workload(config)
    limit = Limit(config)

    def timed() -> float:
        arrays = limit.prepare(traffic)
        started = time.perf_counter()
        simulate(*arrays)
        return time.perf_counter() - started
    return timed


# each kind of point: the fields after its name, and what makes its timed run
KERNELS = {"flit": (4, _flit_run), "cut-through": (3, _cut_through_run),
           "cut-through-limit": (3, _cut_through_limit_run)}


def worker(checkout: Path) -> None:
    """Serve timings of `checkout`'s engine: a point per line in, its wall seconds per line out."""
    sys.path[:0] = [str(checkout), str(checkout / "bench")]
    import harts

    if Path(harts.__file__).resolve().parent != checkout / "harts":
        raise SystemExit(f"ab.py: imported harts from {harts.__file__}, not from {checkout}")
    runs = {}
    for line in sys.stdin:
        point = line.strip()
        try:
            if point not in runs:
                kernel, *spec = point.split(":")
                runs[point] = KERNELS[kernel][1](spec)
            print(runs[point](), flush=True)
        except Exception as error:  # the parent names the point and stops; one line, not a traceback
            print(f"ab.py: {checkout}: {point}: {type(error).__name__}: {error}", file=sys.stderr)
            raise SystemExit(2) from None


class Worker:
    def __init__(self, checkout: Path):
        self.process = subprocess.Popen([sys.executable, __file__, "--worker", str(checkout)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, cwd=checkout)

    def time(self, point: str) -> float:
        self.process.stdin.write(point + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            print(f"ab.py: the worker for {self.process.args[-1]} stopped on {point} (its error is above)",
                  file=sys.stderr)
            raise SystemExit(2)
        return float(answer)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def compare(point: str, this: Path, against: Path, pairs: int, runs: int) -> dict:
    ratios, times = [], {"this": [], "against": []}
    for pair in range(pairs):
        order = [("this", this), ("against", against)]
        if pair % 2:
            order.reverse()
        workers = {label: Worker(path) for label, path in order}
        try:
            for label, _ in order:
                workers[label].time(point)
            pair_times = {"this": [], "against": []}
            for run in range(runs):
                for label, _ in (order if run % 2 == 0 else order[::-1]):
                    pair_times[label].append(workers[label].time(point))
        finally:
            for w in workers.values():
                w.close()
        ratios.append(statistics.median(pair_times["this"]) / statistics.median(pair_times["against"]))
        for label in times:
            times[label] += pair_times[label]
    faster = sum(a < b for a, b in zip(times["this"], times["against"]))
    return {"this_over_against": statistics.median(ratios), "pairs": ratios, "runs_faster": faster,
            "runs": len(times["this"]), "this_seconds": times["this"], "against_seconds": times["against"]}


def _point(text: str) -> str:
    kernel, *spec = text.split(":")
    if kernel not in KERNELS or len(spec) != KERNELS[kernel][0]:
        raise argparse.ArgumentTypeError(f"'{text}': expected flit:KIND:SIDE:RATE:CYCLES, "
                                         f"cut-through:SIZE:LOAD:CYCLES or cut-through-limit:SIZE:LOAD:CYCLES")
    try:
        numbers = [float(x) for x in spec[1:]] if kernel == "flit" else [float(x) for x in spec]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': the fields after the kernel (and a flit point's kind) must be "
                                         f"numbers") from None
    if kernel == "flit" and spec[0] not in ("mesh", "torus") or min(numbers) <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected a kind of mesh or torus and positive numbers")
    return text


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + message
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        worker(Path(sys.argv[2]))
        return 0
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, metavar="DIR", required=True, help="the other checkout")
    parser.add_argument("--pairs", type=int, default=6, help="pairs of fresh processes per point (default 6)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per process of a pair (default 3)")
    parser.add_argument("points", nargs="+", type=_point, metavar="POINT")
    args = parser.parse_args()
    against = args.against.resolve()
    if not (against / "harts").is_dir() or not (against / "bench" / "flits_limit.py").is_file():
        parser.error(f"--against {args.against}: not a harts checkout with bench/flits_limit.py")
    if args.pairs < 1 or args.runs < 1:
        parser.error("--pairs and --runs must be at least 1")
    found = {}
    for point in args.points:
        result = compare(point, CHECKOUT, against, args.pairs, args.runs)
        found[point] = result
        print(f"{point}: this / against {result['this_over_against']:.3f} (pairs "
              f"{min(result['pairs']):.3f}-{max(result['pairs']):.3f}), faster in {result['runs_faster']} of "
              f"{result['runs']} runs; this {1e3 * statistics.median(result['this_seconds']):.1f} ms, against "
              f"{1e3 * statistics.median(result['against_seconds']):.1f} ms (medians)", flush=True)
    write_results("ab", {"this": str(CHECKOUT), "against": str(against), "pairs": args.pairs, "runs": args.runs,
                         "points": found})
    return 0


if __name__ == "__main__":
    sys.exit(main())
