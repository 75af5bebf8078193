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
    create, source, destination = synthetic_packets(sim.topology, "uniform", args.rate, 8, args.cycles, 1)
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
    from harts.machine.cut_through import CutThroughSimulation
    from harts.machine.simulation import Simulation

    small = hex_config(3, traffic__uniform__load=0.1, run__cycles=200)
    config = hex_config(args.size, traffic__uniform__load=args.load, run__cycles=args.cycles)
    traffic = workload(config)
    if target == "engine":
        drain = CutThroughSimulation._drain

        def stamped_drain(self, *rest):
            # the run's last drain follows the loop that Result.wall_seconds times at once: that loop's end
            self.drained = time.perf_counter()
            return drain(self, *rest)

        CutThroughSimulation._drain = stamped_drain
        Simulation(small).run(workload(small), keep=False)
        last = {}

        def run():
            last["run"] = simulation = Simulation(config)
            result = simulation.run(traffic, keep=False)
            return simulation.drained - result.wall_seconds, simulation.drained, result.summary()["packet_hops"]

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
    return {"base": kernel["address"] - offset, "end": end, "addresses": addresses, "places": places}


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


def profile(target: str, args, workdir: Path) -> dict:
    data = workdir / f"{target}.perf"
    options = [f"--{name}={getattr(args, name)}" for name in KERNELS[args.kernel][0]]
    command = [sys.executable, __file__, "--child", target, "--child-dir", str(workdir), "--kernel", args.kernel,
               *options, "--repeat", str(args.repeat)]
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-k", "CLOCK_MONOTONIC",
                    "-o", str(data), "--", *command], check=True, stdout=subprocess.DEVNULL)
    info = json.loads((workdir / "child.json").read_text())  # its spans are time.perf_counter: CLOCK_MONOTONIC
    codes = [code_map(kernel) for kernel in info["kernels"]]
    windows = info["windows"]
    samples = subprocess.run(["perf", "script", "-i", str(data), "-F", "time,ip,dso"], capture_output=True,
                             text=True, check=True).stdout
    lines, functions, outside, total = Counter(), Counter(), Counter(), 0
    spans: dict = {}
    for row in samples.splitlines():
        parts = row.split()
        if len(parts) < 2:
            continue
        stamp, ip = float(parts[0].rstrip(":")), int(parts[1], 16)
        if not any(lo <= stamp <= hi for lo, hi in windows):
            continue
        total += 1
        code = next((c for c in codes if c["base"] <= ip < c["base"] + c["end"]), None)
        if code is None:
            outside[library_of(parts[-1]) if len(parts) > 2 else "?"] += 1
            continue
        k = bisect.bisect_right(code["addresses"], ip - code["base"]) - 1
        file, number = code["places"][k] if k >= 0 else ("?", 0)
        lines[(file, number)] += 1
        functions[function_of(file, number, spans)] += 1
    functions["(outside the kernel)"] = sum(outside.values())
    hot = []
    for (file, number), count in lines.most_common(args.lines):
        path = Path(file)
        text = path.read_text().splitlines()[number - 1].strip() if path.exists() and number else ""
        hot.append({"file": shown(file), "line": number, "share": count / total, "source": text})
    return {"samples": total, "seconds": sum(hi - lo for lo, hi in windows) / len(windows),
            "seconds_each": [hi - lo for lo, hi in windows], "work": info["work"],
            "functions": {name: count / total for name, count in functions.most_common()},
            "outside": {name: count / total for name, count in outside.most_common()}, "lines": hot}


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


if __name__ == "__main__":
    sys.exit(main())
