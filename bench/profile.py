"""Where a simulation kernel spends its time, against its speed of light, line by line.

--kernel flit profiles the flit-level kernel (harts/controller/flits/kernel.py) against bench/limits/flits.py,
--kernel cut-through the cut-through kernel (harts/controller/engine.py) against bench/limits/cut_through.py:

    python bench/profile.py [--kernel flit] [--kind mesh] [--side 8] [--rate 0.1] [--cycles 20000] [--repeat 5]
    python bench/profile.py --kernel cut-through [--size 9] [--load 0.1] [--cycles 50000] [--repeat 5]

Each of engine and limit runs the same workload --repeat times in a child process under `perf record` (the
cpu-clock software event, which needs no hardware counters), timed as its benchmark times it, and only the
samples inside the timed spans count. Flit (bench/flits_limit.py): the whole Simulation.run against the limit's
whole `deliveries`. Cut-through (bench/cut_through_limit.py): Simulation.run's kernel loop, its log drains and
invariant checks included (Result.wall_seconds), against `simulate` on tables allocated beforehand; both must
count the same packet-hops.

The child compiles its kernel afresh with line tables only (numba's debug info as directives: no change to
inlining or optimisation; bounds checks stay off), each naming its source file by its full path, into a cache of
its own, so the project's kernel cache is untouched; the first run compiles for a few minutes, later ones load.
It writes the object code of every compiled function the timed runs execute (the kernel with all it calls, and
the topology's offsets function and the NP procedure it is handed as first-class functions) and where each was
loaded. Every sample whose address falls in that code is charged to a source line (objdump's decoded line table)
and to the innermost function whose body holds that line (a helper numba inlines at its IR level, inline="always",
keeps its lines but takes its caller's file: right for the limits' helpers, in their caller's file; NP procedure
helpers from harts/np/program.py would be misnamed); the rest is "outside the kernel" (Python: the engine's
traffic chunks, log draining, invariant checks), split by the library perf found it in. Prints, per target, the
share of samples by function and the hottest lines, and the engine's time per function in units of the limit's
whole time on the same workload. Writes bench/results/flits_profile.json or cut_through_profile.json (--out names
another file there).

--counter instructions counts instead of sampling: each target runs under valgrind's callgrind, once with --repeat
runs and once with one more, and the difference is charged to lines and functions as above, so the counts are of
exactly one more run (its set-up included; no warm-up, no compiling), the same in every run. The child then compiles for
NUMBA_CPU_NAME=generic (valgrind shows the program another processor, for which numba would compile again under
it): once natively first, a few minutes. Prints and writes the counts per run and per unit of work (packet-hops;
flit-level runs count no work) by function and line, and the engine's over the limit's in the kernels' own code,
to cut_through_instructions.json or flits_instructions.json, with each target's code footprint: its kernels'
bytes, the 64-byte lines of them one run executes and how few hold 99% of its instructions, and the share of its
instructions that read or write the stack. The kernels' counts repeat between processes to
about 0.02%; the rest of the process's ("outside the kernel": Python, numpy, the C library) only to about 1.5%,
which can make a small one negative. --counter mispredictions counts the branches, conditional and indirect
together, that valgrind's simulated branch predictor gets wrong (its manual describes it as typical of processors
of about 2004: far simpler than this machine's, whose own counts this virtual machine does not expose), to
..._mispredictions.json. --counter misses counts the data reads and writes that miss bench/cache_misses.py's
simulated caches (a 32 KiB 8-way L1d and a 1 MiB 16-way last level) at the last level, where that tool gives their
sum for the whole kernel, to ..._misses.json. Skipped, saying so, without valgrind.
"""

import argparse
import ast
import bisect
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from record import write_results
from valgrind import cache_options, generic_environment, missing

ROOT = Path(__file__).resolve().parent.parent
# each kernel's workload options with their defaults, and the results file it writes unless --out says otherwise
KERNELS = {
    "flit": ({"kind": "mesh", "side": 8, "rate": 0.1, "cycles": 20_000}, "flits_profile.json"),
    "cut-through": ({"size": 9, "load": 0.1, "cycles": 50_000}, "cut_through_profile.json"),
}
# how the child compiles (see line_tables): part of its cache's key, as numba's own key does not see it
COMPILE_OPTIONS = b"line tables only, full paths"


def profile_cache() -> Path:
    """The child's numba cache, one per version of the sources: numba keys a cached function on its own file
    only, so a constant changed in another module (a field's column) would otherwise run stale code."""
    digest = hashlib.sha256(COMPILE_OPTIONS)
    for path in sorted([*(ROOT / "harts").rglob("*.py"), *(ROOT / "bench/limits").rglob("*.py")]):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return Path(tempfile.gettempdir()) / f"harts-profile-cache-{digest.hexdigest()[:16]}"


def line_tables() -> None:
    """Make numba, in this process, compile with line tables that name each source file by its full path, into
    the profile's cache, and keep the object code of what it loads from there."""
    os.environ["NUMBA_CACHE_DIR"] = str(profile_cache())
    os.environ["NUMBA_DEBUGINFO"] = "1"
    os.environ["NUMBA_BOUNDSCHECK"] = "0"
    import numba.core.cpu as cpu
    from numba.core import codegen, debuginfo

    finalize = cpu.CPUTargetOptions.finalize

    def line_tables_only(self, flags, options):
        finalize(self, flags, options)
        flags.dbg_directives_only = True  # line tables, without the noinline full debug info adds
        flags.dbg_extend_lifetimes = False
        flags.boundscheck = False

    cpu.CPUTargetOptions.finalize = line_tables_only

    def full_path(self):
        # numba gives a file's base name, and its folder as the compile unit's, which line tables only leave out
        return self.module.add_debug_info("DIFile", {"directory": "", "filename": os.path.abspath(self.filepath)})

    debuginfo.DIBuilder._di_file = full_path
    handed = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__

    def keep_cached_object(cls, ll_module):
        # a kernel loaded from the cache hands its object code to the JIT and forgets it: keep a copy
        buf = handed(cls, ll_module)
        library = getattr(ll_module, "_CPUCodeLibrary__library", None)
        if buf and library is not None:
            library.kept_object = buf
        return buf

    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(keep_cached_object)


def flit_target(args, target: str):
    """The flit workload's timed run for `target` (returning its span and None) after a warm-up, and the compiled
    functions that run executes (a function, called once the runs are done)."""
    from bench.limits import flits as limit
    from harts.controller.flits.kernel import run_flits
    from harts.machine.config import defaults
    from harts.machine.patterns import synthetic_packets
    from harts.machine.simulation import Simulation
    from harts.machine.traffic import unicast

    sim = Simulation(defaults().with_values(topology={"kind": args.kind, "dims": [args.side, args.side]},
                                            microcode="wormhole", flow__virtual_channels=2, flow__buffer_flits=8,
                                            routing__torus_tie="positive"))  # the limit's tie rule
    create, source, destination, _ = synthetic_packets(sim.topology, "uniform", args.rate, 8, args.cycles, 1)
    dims = (args.side, args.side)
    if target == "engine":
        work = unicast(create, source, destination, 8 * sim.params.flit_bytes)
        sim.run(work[:10], keep=False)

        def run():
            started = time.perf_counter()
            sim.run(work, keep=False)
            return started, time.perf_counter(), None

        return run, lambda: [run_flits, sim.topology.offsets_function, sim.program.procedure]
    limit.deliveries(args.kind, dims, sim.params, 8, create[:10], source[:10], destination[:10])

    def run():
        started = time.perf_counter()
        limit.deliveries(args.kind, dims, sim.params, 8, create, source, destination)
        return started, time.perf_counter(), None

    return run, lambda: [limit._run]


def cut_through_target(args, target: str):
    """The cut-through workload's timed run for `target` (returning its span and the packet-hops it counted)
    after bench/cut_through_limit.py's warm-up, and the compiled functions that run executes."""
    from bench.limits.cut_through import Limit, simulate, workload
    from harts.controller.engine import run_kernel
    from harts.machine.config import hex_config
    from harts.machine.results import Recorder
    from harts.machine.simulation import Simulation

    small = hex_config(3, traffic__uniform__load=0.1, run__cycles=200)
    config = hex_config(args.size, traffic__uniform__load=args.load, run__cycles=args.cycles)
    traffic = workload(config)
    if target == "engine":
        drain = Recorder.drain
        last = {}

        def stamped_drain(self, logs):
            # the run's last drain follows the loop that Result.wall_seconds times at once: that loop's end
            last["drained"] = time.perf_counter()
            return drain(self, logs)

        Recorder.drain = stamped_drain
        Simulation(small).run(workload(small), keep=False)

        def run():
            last["run"] = simulation = Simulation(config)
            result = simulation.run(traffic, keep=False)
            return last["drained"] - result.wall_seconds, last["drained"], result.summary()["packet_hops"]

        return run, lambda: [run_kernel, last["run"].topology.offsets_function, last["run"].program.procedure]
    model = Limit(config)
    Limit(small).run(workload(small))

    def run():
        arrays = model.prepare(traffic)
        started = time.perf_counter()
        error, hops, _ = simulate(*arrays)
        ended = time.perf_counter()
        if error != 0:
            raise SystemExit(f"the limit stopped with error {error}")
        return started, ended, int(hops)

    return run, lambda: [simulate]


def compiled_code(function, stem: Path) -> list[dict]:
    """Every compiled version of a numba function: its object code (written to stem-K.o), one of its symbols and
    that symbol's address in this process."""
    codes = []
    for k, overload in enumerate(function.overloads.values()):
        library = overload.library
        path = stem.with_name(f"{stem.name}-{k}.o")
        path.write_bytes(getattr(library, "kept_object", None) or library._get_compiled_object())
        symbol = overload.fndesc.llvm_func_name
        codes.append({"object": str(path), "function": symbol, "address": library.get_pointer_to_function(symbol)})
    return codes


def child(args) -> None:
    """Compile the target's kernel with line tables, run it in timed spans, then note where its code is."""
    line_tables()
    sys.path.insert(0, str(ROOT))
    target = flit_target if args.kernel == "flit" else cut_through_target
    run, functions = target(args, args.child)
    windows, work = [], None
    for _ in range(args.repeat):
        started, ended, work = run()
        windows.append([started, ended])
    out = Path(args.child_dir)
    kernels = [code for k, function in enumerate(functions())
               for code in compiled_code(function, out / f"{args.child}-{k}")]
    (out / "child.json").write_text(json.dumps({"kernels": kernels, "windows": windows, "work": work}))


def line_table(obj: str):
    """(addresses, (file, line) rows) of the object's code, sorted; line 0 (no source) keeps the previous line.
    objdump -w heads each run of rows with its file's full path."""
    text = subprocess.run(["objdump", "--dwarf=decodedline", "-w", obj], capture_output=True, text=True,
                          check=True).stdout
    rows, current = [], ""
    for line in text.splitlines():
        if line.endswith(":") or line.endswith(":[++]"):
            current = line.removeprefix("CU: ").removesuffix("[++]").removesuffix(":")
            continue
        parts = line.split()
        if (len(parts) >= 3 and parts[0].endswith(".py") and parts[1].isdigit()
                and (parts[2].startswith("0x") or parts[2] == "0")):
            file = current if Path(current).name == parts[0] else parts[0]
            rows.append((int(parts[2], 16), file, int(parts[1])))
    rows.sort(key=lambda r: r[0])
    addresses, places = [], []
    for address, file, number in rows:
        if number == 0 and places:
            file, number = places[-1]
        addresses.append(address)
        places.append((file, number))
    return addresses, places


def symbol_offset(obj: str, function: str) -> tuple[int, int]:
    """The function's offset in its section and the end of the object's code."""
    text = subprocess.run(["nm", "-S", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
    offset, end = None, 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            start, size = int(parts[0], 16), int(parts[1], 16)
            end = max(end, start + size)
            if parts[3] == function:
                offset = start
    return offset, end


def code_map(kernel: dict) -> dict:
    """Where one object's code is in the child, and its line table."""
    offset, end = symbol_offset(kernel["object"], kernel["function"])
    addresses, places = line_table(kernel["object"])
    return {"base": kernel["address"] - offset, "end": end, "addresses": addresses, "places": places,
            "object": kernel["object"]}


def shown(file: str) -> str:
    """A source file as the output names it: from the repository's root when it is in it."""
    path = Path(file)
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else file


def library_of(dso: str) -> str:
    """Where perf found a sample outside the kernel's code: a library's file name, or compiled code not noted."""
    name = dso.strip("()")
    if name in ("//anon", "[unknown]") or (Path(name).name.startswith("perf-") and name.endswith(".map")):
        return "compiled code not noted (anonymous memory)"
    return Path(name).name


def function_of(file: str, number: int, cache: dict) -> str:
    """The innermost def whose body holds the line; "(numba)" for code of numba's own."""
    path = Path(file)
    if not path.is_relative_to(ROOT) or not path.exists():
        return "(numba)"
    if path not in cache:
        spans = []
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                spans.append((node.lineno, node.end_lineno, node.name))
        cache[path] = spans
    inside = [(end - start, name) for start, end, name in cache[path] if start <= number <= end]
    return f"{path.stem}.{min(inside)[1]}" if inside else f"{path.stem}:{number}"


def child_command(target: str, args, workdir: Path, repeat: int) -> list[str]:
    options = [f"--{name}={getattr(args, name)}" for name in KERNELS[args.kernel][0]]
    return [sys.executable, __file__, "--child", target, "--child-dir", str(workdir), "--kernel", args.kernel,
            *options, "--repeat", str(repeat)]


def code_index(ip: int, codes: list[dict]) -> int | None:
    """Which of the kernels' code (code_map) holds the address; None: none of them."""
    return next((k for k, c in enumerate(codes) if c["base"] <= ip < c["base"] + c["end"]), None)


def charge(counts, codes: list[dict], lines: Counter, functions: Counter, spans: dict) -> None:
    """Add each (address, count) in the kernels' code to its source line and function; counts elsewhere are
    left out."""
    for ip, count in counts:
        index = code_index(ip, codes)
        if index is None:
            continue
        code = codes[index]
        k = bisect.bisect_right(code["addresses"], ip - code["base"]) - 1
        file, number = code["places"][k] if k >= 0 else ("?", 0)
        lines[(file, number)] += count
        functions[function_of(file, number, spans)] += count


def hottest(lines: Counter, total: int, many: int) -> list[dict]:
    hot = []
    for (file, number), count in lines.most_common(many):
        path = Path(file)
        text = path.read_text().splitlines()[number - 1].strip() if path.exists() and number else ""
        hot.append({"file": shown(file), "line": number, "count": count, "share": count / total, "source": text})
    return hot


def profile(target: str, args, workdir: Path) -> dict:
    data = workdir / f"{target}.perf"
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-k", "CLOCK_MONOTONIC",
                    "-o", str(data), "--", *child_command(target, args, workdir, args.repeat)], check=True,
                   stdout=subprocess.DEVNULL)
    info = json.loads((workdir / "child.json").read_text())  # its spans are time.perf_counter: CLOCK_MONOTONIC
    codes = [code_map(kernel) for kernel in info["kernels"]]
    windows = info["windows"]
    samples = subprocess.run(["perf", "script", "-i", str(data), "-F", "time,ip,dso"], capture_output=True,
                             text=True, check=True).stdout
    inside, outside, total = [], Counter(), 0
    for row in samples.splitlines():
        parts = row.split()
        if len(parts) < 2:
            continue
        stamp, ip = float(parts[0].rstrip(":")), int(parts[1], 16)
        if not any(lo <= stamp <= hi for lo, hi in windows):
            continue
        total += 1
        if code_index(ip, codes) is not None:
            inside.append((ip, 1))
        else:
            outside[library_of(parts[-1]) if len(parts) > 2 else "?"] += 1
    lines, functions = Counter(), Counter()
    charge(inside, codes, lines, functions, {})
    functions["(outside the kernel)"] = sum(outside.values())
    return {"samples": total, "seconds": sum(hi - lo for lo, hi in windows) / len(windows),
            "seconds_each": [hi - lo for lo, hi in windows], "work": info["work"],
            "functions": {name: count / total for name, count in functions.most_common()},
            "outside": {name: count / total for name, count in outside.most_common()},
            "lines": hottest(lines, total, args.lines)}


# what each --counter other than time counts: callgrind's options and the events summed at each address
COUNTERS = {"instructions": ([], ("Ir",)),
            "mispredictions": (["--branch-sim=yes"], ("Bcm", "Bim")),
            "misses": (cache_options(), ("DLmr", "DLmw"))}


def callgrind_counts(path: Path, events: tuple[str, ...]) -> tuple[Counter, int]:
    """The sum of `events` at each address of code valgrind found in no object (numba's compiled code), and
    the whole process's. Written with --dump-instr=yes and uncompressed positions and names: each cost line is
    an address, a source line and the counts of the `events:` line's events (zeros at the end left out); the
    line after a `calls=` line is the call's inclusive cost, already counted in the callee."""
    counts, whole, unnamed, call, columns = Counter(), None, False, False, []
    with open(path) as lines:
        for line in lines:
            if call:
                call = False
            elif line.startswith("calls="):
                call = True
            elif line.startswith("events:"):
                names = line.split()[1:]
                columns = [names.index(event) for event in events]
            elif line.startswith("ob="):
                unnamed = line[3:].strip() == "???"
            elif line.startswith("summary:"):
                values = [int(v) for v in line.split()[1:]]
                whole = sum(values[k] for k in columns if k < len(values))
            elif unnamed and line.startswith("0x"):
                values = line.split()
                counts[int(values[0], 16)] += sum(int(values[2 + k]) for k in columns if 2 + k < len(values))
    if whole is None:
        raise SystemExit(f"{path}: no summary line")
    return counts, whole


def code_footprint(more: Counter, codes: list[dict], fewer: Counter, codes_fewer: list[dict]) -> dict:
    """How much of the kernels' code one run executes: the 64-byte lines it runs instructions in and how few of
    them hold 99% of its instructions (where the first-level instruction cache and the decoded-instruction cache
    hold code, by the line), and the share of its instructions that read or write the stack (values the compiler
    keeps there for want of registers). Counts are by position in each kernel's object, the run with one more
    repeat less the other (the two processes load the code at different addresses); lines by the addresses of
    the run with more."""
    by_offset = Counter()
    for counts, maps, sign in ((more, codes, 1), (fewer, codes_fewer, -1)):
        for ip, n in counts.items():
            k = code_index(ip, maps)
            if k is not None:
                by_offset[k, ip - maps[k]["base"]] += sign * n
    lines, stack, executed = Counter(), 0, 0
    texts = [instruction_texts(code["object"]) for code in codes]
    for (k, offset), n in by_offset.items():
        if n <= 0:
            continue
        executed += n
        lines[(codes[k]["base"] + offset) >> 6] += n
        stack += n if "(%rsp)" in texts[k].get(offset, "") else 0
    hot, covered = 0, 0
    for n in sorted(lines.values(), reverse=True):
        if covered >= 0.99 * executed:
            break
        covered += n
        hot += 1
    return {"bytes": sum(code["end"] for code in codes), "lines_executed": len(lines),
            "lines_with_99_percent": hot, "stack_share": stack / executed if executed else 0.0}


def instruction_texts(obj: str) -> dict:
    """Each instruction of the object's code by its offset: objdump's text of it."""
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True,
                          check=True).stdout
    texts = {}
    for line in text.splitlines():
        address, tab, instruction = line.strip().partition(":\t")
        if tab:
            texts[int(address, 16)] = instruction
    return texts


def count(target: str, args, workdir: Path) -> dict:
    """The target's counts in one timed run: callgrind's with one more run, minus those without."""
    subprocess.run(child_command(target, args, workdir, 1), check=True, stdout=subprocess.DEVNULL,
                   env=generic_environment())  # compiles natively, for the processor valgrind shows
    options, events = COUNTERS[args.counter]
    runs = []
    for repeat in (args.repeat, args.repeat + 1):
        folder = workdir / f"{target}-{repeat}"
        folder.mkdir()
        out = folder / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", *options, "--dump-instr=yes", "--compress-pos=no",
                        "--compress-strings=no", f"--callgrind-out-file={out}",
                        *child_command(target, args, folder, repeat)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=generic_environment())
        info = json.loads((folder / "child.json").read_text())
        runs.append((callgrind_counts(out, events), [code_map(kernel) for kernel in info["kernels"]], info["work"]))
    ((fewer, whole_fewer), codes_fewer, _), ((more, whole_more), codes, work) = runs
    lines, functions, lines_fewer, functions_fewer, spans = Counter(), Counter(), Counter(), Counter(), {}
    charge(more.items(), codes, lines, functions, spans)
    charge(fewer.items(), codes_fewer, lines_fewer, functions_fewer, spans)
    lines.subtract(lines_fewer)
    functions.subtract(functions_fewer)
    kernel = sum(functions.values())
    total = whole_more - whole_fewer
    functions["(outside the kernel)"] = total - kernel
    result = {"all": total, "kernel": kernel, "work": work,
              "per_work": {"all": total / work, "kernel": kernel / work} if work else None,
              "functions": {name: n for name, n in functions.most_common()},
              "lines": hottest(lines, total, args.lines)}
    if args.counter == "instructions":
        result["code"] = code_footprint(more, codes, fewer, codes_fewer)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", choices=tuple(KERNELS), default="flit")
    parser.add_argument("--kind", choices=("mesh", "torus"), help="flit: the network (mesh)")
    parser.add_argument("--side", type=int, help="flit: routers a side (8)")
    parser.add_argument("--rate", type=float, help="flit: flits/node/cycle (0.1)")
    parser.add_argument("--size", type=int, help="cut-through: the hexagonal mesh E-N (9)")
    parser.add_argument("--load", type=float, help="cut-through: link load (0.1)")
    parser.add_argument("--cycles", type=int, help="cycles of traffic (flit 20000, cut-through 50000)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--counter", choices=("time", *COUNTERS), default="time",
                        help="sample time with perf (default), or count instructions, branch mispredictions or "
                             "last-level data misses with valgrind")
    parser.add_argument("--frequency", type=int, default=4000, help="samples per second")
    parser.add_argument("--lines", type=int, default=30, help="hottest lines to show")
    parser.add_argument("--out", help="file name in bench/results/ (flits_profile.json, cut_through_profile.json)")
    parser.add_argument("--child", choices=("engine", "limit"), help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    workload, out = KERNELS[args.kernel]
    for name in {name for options, _ in KERNELS.values() for name in options} - set(workload):
        if getattr(args, name) is not None:
            parser.error(f"--{name} is not an option of --kernel {args.kernel}")
    for name, default in workload.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.child:
        child(args)
        return 0
    if args.counter != "time":
        return count_events(args)
    with tempfile.TemporaryDirectory() as tmp:
        results = {target: profile(target, args, Path(tmp)) for target in ("engine", "limit")}
    if results["engine"]["work"] != results["limit"]["work"]:
        raise SystemExit(f"the engine counted {results['engine']['work']} packet-hops, the limit "
                         f"{results['limit']['work']}")
    scale = results["engine"]["seconds"] / results["limit"]["seconds"]
    for target, result in results.items():
        print(f"\n{target}: {result['seconds'] * 1e3:.1f} ms per run, {result['samples']} samples")
        for name, share in result["functions"].items():
            if share >= 0.005:
                relative = f"  = {share * scale:5.2f} x the limit's whole run" if target == "engine" else ""
                print(f"  {share:6.1%}  {name}{relative}")
        for name, share in result["outside"].items():
            if share >= 0.005:
                print(f"  {'':6}    outside, in {name}: {share:.1%}")
        print("  hottest lines:")
        for hot in result["lines"]:
            print(f"  {hot['share']:6.1%}  {hot['file']}:{hot['line']}  {hot['source'][:90]}")
    print(f"\nengine / limit time: {scale:.2f}")
    write_results((args.out or out).removesuffix(".json"), {
        "workload": {"kernel": args.kernel, **{name: getattr(args, name) for name in workload}},
        "engine_over_limit_seconds": scale, **results})
    return 0


def count_events(args) -> int:
    if missing(args.counter):
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for target in ("engine", "limit"):
            folder = Path(tmp) / target
            folder.mkdir()
            results[target] = count(target, args, folder)
    if results["engine"]["work"] != results["limit"]["work"]:
        raise SystemExit(f"the engine counted {results['engine']['work']} packet-hops, the limit "
                         f"{results['limit']['work']}")
    work = results["engine"]["work"]
    unit = "packet-hop" if work else "run"
    # the kernels' code, whose counts repeat between processes; the rest of a process's does not, to about 1.5%
    scale = results["engine"]["kernel"] / results["limit"]["kernel"]
    for target, result in results.items():
        each = work or 1
        print(f"\n{target}: {result['all'] / each:,.2f} {args.counter} per {unit}, "
              f"{result['kernel'] / each:,.2f} in the kernel's code")
        for name, n in result["functions"].items():
            if n >= 0.005 * result["all"]:
                print(f"  {n / each:9.2f}  {n / result['all']:6.1%}  {name}")
        if "code" in result:
            code = result["code"]
            print(f"  code: {code['bytes']:,} bytes; one run executes {code['lines_executed']} lines of 64 bytes, "
                  f"{code['lines_with_99_percent']} of them 99% of its instructions; {code['stack_share']:.1%} of "
                  f"its instructions read or write the stack")
        print("  hottest lines:")
        for hot in result["lines"]:
            print(f"  {hot['count'] / each:9.2f}  {hot['file']}:{hot['line']}  {hot['source'][:90]}")
    print(f"\nengine / limit {args.counter} in the kernel's code: {scale:.2f}")
    name = args.out or KERNELS[args.kernel][1].replace("_profile", f"_{args.counter}")
    write_results(name.removesuffix(".json"), {
        "workload": {"kernel": args.kernel, **{name: getattr(args, name) for name in KERNELS[args.kernel][0]}},
        "counted": f"{args.counter} in one run (runs {args.repeat + 1} minus {args.repeat}), by valgrind's "
                   f"callgrind, compiled for NUMBA_CPU_NAME=generic",
        f"engine_over_limit_{args.counter}": scale, **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
