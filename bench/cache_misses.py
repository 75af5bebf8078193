"""Instructions and data-cache misses per packet-hop of the cut-through engine and of its limit, on E-9 and E-41,
counted by valgrind's cachegrind on a model of this machine's caches. Writes bench/results/cache_misses.json
(cache_misses_<MiB>mb.json for another last level), after every point.

    python bench/cache_misses.py [--loads 0.1 0.3] [--l1 32768] [--last-level 1048576] [--jobs 2]

Why a simulator: this virtual machine exposes no hardware cache counters (`perf stat` reports them as not
supported), and issue 21 asks for the size gap to be explained with measured misses. Cachegrind counts every
instruction, load and store of the process against a two-level cache: D1 (by default the 32 KiB, 8-way L1d of the
AMD EPYC these counts were first made on) and a last level (16-way), by default 1 MiB (twice one of its cores' L2:
512 KiB per core), so that a last-level miss is a read or write that machine would serve from its shared L3 or from
memory. The defaults stay the EPYC's so that counts compare across hosts. With `--last-level 8388608` it models the
part of the EPYC's 32 MiB L3 that its other tenants left in their slow phases
(docs/explanation/performance.md, Why the large networks are slower per hop).
Cachegrind's caches are exact LRU caches without prefetchers, so the counts say how much a run's data outgrows each
level, not how long the misses take.

Counts are given for the whole process and for the compiled code alone: the kernels numba compiled, which
valgrind cannot name (the rest is Python, numpy and the C library: the drains, checks and allocations around
the kernel). Each point runs in two processes under cachegrind, one running the workload once and one three
times (the same Simulation, or the same limit, on the same packets); their difference is two runs' counts,
without those of starting Python, loading the kernel and building the workload. The engine's runs are the speed
benchmark's: Simulation.run(keep=False), its end-of-run drain and checks included. The limit's are
simulate() on tables allocated by prepare().

Numba keys its disk cache by the processor, and a process under valgrind sees another one, so every process
here compiles for NUMBA_CPU_NAME=generic: compiled once natively (a minute or two, the first time), then
loaded under valgrind. Each valgrind process takes 0.5-2 minutes; a load takes about 3 minutes for each cache size.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cut_through_limit import NETWORKS, warm_up  # noqa: E402
from record import write_results  # noqa: E402
from valgrind import (  # noqa: E402
    L1_BYTES,
    L1_WAYS,
    LAST_LEVEL_BYTES,
    LAST_LEVEL_WAYS,
    cache_options,
    generic_environment,
    missing,
)


def child(which: str, size: int, load: float, cycles: int, runs: int) -> None:
    """Run one point `runs` times in this process (both kernels compiled or loaded first) and print its
    packet-hops."""
    from bench.limits.cut_through import Limit, simulate, workload
    from harts.machine.config import hex_config
    from harts.machine.simulation import Simulation

    warm_up()
    config = hex_config(size, traffic__uniform__load=load, run__cycles=cycles)
    traffic = workload(config)
    if which == "engine":
        simulation = Simulation(config)
        for _ in range(runs):
            hops = simulation.run(traffic, keep=False).summary()["packet_hops"]
    else:
        limit = Limit(config)
        for _ in range(runs):
            hops = int(simulate(*limit.prepare(traffic))[1])
    print(f"packet_hops {hops}")


def _counts(path: Path) -> dict:
    """A cachegrind output file's counts, for the whole process and for the code valgrind cannot name (the
    kernels numba compiled: no symbols), each as instructions and the reads and writes of data references, L1
    misses and last-level misses."""
    whole = compiled = None
    unnamed = False
    names = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
            compiled = dict.fromkeys(names, 0)
        elif line.startswith("fl="):
            file = line[3:]
        elif line.startswith("fn="):
            unnamed = file == "???" and line[3:] == "???"
        elif line.startswith("summary:"):
            whole = dict(zip(names, map(int, line.split()[1:])))
        elif unnamed and line[:1].isdigit():
            for name, value in zip(names, map(int, line.split()[1:])):
                compiled[name] += value
    if whole is None:
        raise SystemExit(f"{path}: no summary line")
    return {part: {"instructions": {"all": c["Ir"]},
                   "references": {"reads": c["Dr"], "writes": c["Dw"], "all": c["Dr"] + c["Dw"]},
                   "l1_misses": {"reads": c["D1mr"], "writes": c["D1mw"], "all": c["D1mr"] + c["D1mw"]},
                   "last_level_misses": {"reads": c["DLmr"], "writes": c["DLmw"], "all": c["DLmr"] + c["DLmw"]}}
            for part, c in (("process", whole), ("compiled_code", compiled))}


def _under_cachegrind(which: str, size: int, load: float, cycles: int, runs: int, l1: int,
                      last_level: int) -> tuple[dict, int]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cachegrind.out"
        command = ["valgrind", "--tool=cachegrind", *cache_options(l1, last_level),
                   f"--cachegrind-out-file={out}", sys.executable, __file__, "--child", which, str(size), str(load),
                   str(cycles), str(runs)]
        done = subprocess.run(command, capture_output=True, text=True, env=generic_environment())
        hops = re.search(r"packet_hops (\d+)", done.stdout)
        if done.returncode != 0 or hops is None:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
        return _counts(out), int(hops.group(1))


def one_point(which: str, network: str, load: float, l1: int, last_level: int, pool: ThreadPoolExecutor) -> dict:
    size, cycles = NETWORKS[network]
    once, thrice = (pool.submit(_under_cachegrind, which, size, load, cycles, runs, l1, last_level) for runs in (1, 3))
    (one, hops), (three, hops_again) = once.result(), thrice.result()
    assert hops == hops_again
    per_run = {part: {count: {kind: (three[part][count][kind] - one[part][count][kind]) / 2 for kind in kinds}
                      for count, kinds in counts.items()} for part, counts in one.items()}
    per_hop = {part: {count: {kind: value / hops for kind, value in kinds.items()} for count, kinds in counts.items()}
               for part, counts in per_run.items()}
    for part, counts in per_hop.items():
        print(f"{which:6s} {network:5s} {load} {part:13s}: per packet-hop {counts['instructions']['all']:7.1f} "
              f"instructions, {counts['references']['all']:7.1f} data references, {counts['l1_misses']['all']:5.2f} L1 "
              f"misses, {counts['last_level_misses']['all']:5.2f} last-level misses "
              f"({counts['last_level_misses']['reads']:.2f} reads)", flush=True)
    return {"kernel": which, "network": network, "load": load, "cycles_of_traffic": cycles, "packet_hops": hops,
            "per_run": per_run, "per_packet_hop": per_hop}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=float, nargs="+", default=[0.1], help="link loads (default 0.1)")
    parser.add_argument("--l1", type=int, default=L1_BYTES, help="L1d bytes (8-way, 64-byte lines)")
    parser.add_argument("--last-level", type=int, default=LAST_LEVEL_BYTES,
                        help="the last level's bytes (16-way, 64-byte lines); default 1 MiB, twice one EPYC core's L2")
    parser.add_argument("--jobs", type=int, default=2, help="valgrind processes at once")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error("--jobs: at least 1")
    if not all(0 < load < 1 for load in args.loads):
        parser.error("--loads: link loads between 0 and 1")
    for option, size, ways in (("--l1", args.l1, L1_WAYS), ("--last-level", args.last_level, LAST_LEVEL_WAYS)):
        sets = size // (64 * ways)
        if size != sets * 64 * ways or sets < 1 or sets & (sets - 1):
            parser.error(f"{option}: bytes that make a power of two of {ways}-way sets of 64-byte lines, such as "
                         f"{64 * ways * 512}")
    if args.child:
        which, size, load, cycles, runs = args.child
        child(which, int(size), float(load), int(cycles), int(runs))
        return 0
    if missing("cache misses"):
        return 0
    # both kernels compiled for the generic processor natively, once
    subprocess.run([sys.executable, __file__, "--child", "limit", "3", "0.1", "200", "1"], check=True,
                   env=generic_environment(), stdout=subprocess.DEVNULL)
    # a point's two processes run at once; points one after another unless there are jobs for more
    with ThreadPoolExecutor(max(1, args.jobs // 2)) as outer, ThreadPoolExecutor(args.jobs) as pool:
        futures = [outer.submit(one_point, which, network, load, args.l1, args.last_level, pool)
                   for load in args.loads for network in NETWORKS for which in ("engine", "limit")]
        points = []
        name = "cache_misses" if args.last_level == LAST_LEVEL_BYTES else f"cache_misses_{args.last_level >> 20}mb"
        for future in futures:
            points.append(future.result())
            write_results(name, {"l1_bytes": args.l1, "last_level_bytes": args.last_level, "points": points})
    return 0


if __name__ == "__main__":
    sys.exit(main())
