"""Where the flit-level kernel spends its time, against its speed of light (bench/limits/flits.py), line by line.

    python bench/flits_profile.py [--kind mesh] [--side 8] [--rate 0.1] [--cycles 20000] [--repeat 5]

Each of engine and limit runs the same workload --repeat times in a child process under `perf record` (the
cpu-clock software event, which needs no hardware counters). The child compiles both kernels afresh with line
tables only (numba's debug info as directives: no change to inlining or optimisation; bounds checks stay off)
into a cache of its own, so the project's kernel cache is untouched; the first run compiles for a few minutes,
later ones load. It writes each kernel's object code and where it was loaded; every sample inside the timed
loop whose address falls in that code is charged to a source line (objdump's decoded line table) and to the
function whose body holds that line; the rest is "outside the kernel" (Python: the engine's traffic chunks,
log draining, invariant checks). Prints, per target, the share of samples by function and the hottest lines,
and the engine's time per function in units of the limit's whole time on the same workload. Writes
bench/results/flits_profile.json (--out names another file there).
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
SOURCES = [ROOT / "harts/controller/flits", ROOT / "harts/controller", ROOT / "harts/np", ROOT / "bench/limits"]


def profile_cache() -> Path:
    """The child's numba cache, one per version of the sources: numba keys a cached function on its own file
    only, so a constant changed in another module (a field's column) would otherwise run stale code."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "harts").rglob("*.py"), *(ROOT / "bench/limits").rglob("*.py")]):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return Path(tempfile.gettempdir()) / f"harts-flits-profile-cache-{digest.hexdigest()[:16]}"


def child(args) -> None:
    """Compile both kernels with line tables, note where their code is, then run the target in a timed loop."""
    os.environ["NUMBA_CACHE_DIR"] = str(profile_cache())
    os.environ["NUMBA_DEBUGINFO"] = "1"
    os.environ["NUMBA_BOUNDSCHECK"] = "0"
    import numba.core.cpu as cpu

    finalize = cpu.CPUTargetOptions.finalize

    def line_tables_only(self, flags, options):
        finalize(self, flags, options)
        flags.dbg_directives_only = True  # line tables, without the noinline full debug info adds
        flags.dbg_extend_lifetimes = False
        flags.boundscheck = False

    cpu.CPUTargetOptions.finalize = line_tables_only
    from numba.core import codegen

    handed = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__

    def keep_cached_object(cls, ll_module):
        # a kernel loaded from the cache hands its object code to the JIT and forgets it: keep a copy
        buf = handed(cls, ll_module)
        library = getattr(ll_module, "_CPUCodeLibrary__library", None)
        if buf and library is not None:
            library.kept_object = buf
        return buf

    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(keep_cached_object)
    sys.path.insert(0, str(ROOT))
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
    work = unicast(create, source, destination, 8 * sim.params.flit_bytes)
    sim.run(work[:10], keep=False)
    limit.deliveries(args.kind, (args.side, args.side), sim.params, 8, create[:10], source[:10], destination[:10])
    out = Path(args.child_dir)
    kernels = {}
    for name, dispatcher in (("engine", run_flits), ("limit", limit._run)):
        overload = next(iter(dispatcher.overloads.values()))
        library = overload.library
        (out / f"{name}.o").write_bytes(getattr(library, "kept_object", None) or library._get_compiled_object())
        function = overload.fndesc.llvm_func_name
        kernels[name] = {"object": str(out / f"{name}.o"), "function": function,
                         "address": library.get_pointer_to_function(function)}
    started = time.monotonic()
    for _ in range(args.repeat):
        if args.child == "engine":
            sim.run(work, keep=False)
        else:
            limit.deliveries(args.kind, (args.side, args.side), sim.params, 8, create, source, destination)
    (out / "child.json").write_text(json.dumps({"kernels": kernels, "window": [started, time.monotonic()]}))


def line_table(obj: str):
    """(addresses, (file, line) rows) of the object's code, sorted; line 0 (no source) keeps the previous line."""
    text = subprocess.run(["objdump", "--dwarf=decodedline", obj], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith(".py") and parts[1].isdigit() and parts[2].startswith("0x"):
            rows.append((int(parts[2], 16), parts[0], int(parts[1])))
        elif len(parts) >= 3 and parts[0].endswith(".py") and parts[1].isdigit() and parts[2] == "0":
            rows.append((0, parts[0], int(parts[1])))
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


def source_of(basename: str) -> Path | None:
    for folder in SOURCES:
        if (folder / basename).exists():
            return folder / basename
    return None


def function_of(path: Path | None, number: int, cache: dict) -> str:
    """The innermost def whose body holds the line."""
    if path is None:
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
    command = [sys.executable, __file__, "--child", target, "--child-dir", str(workdir), "--kind", args.kind,
               "--side", str(args.side), "--rate", str(args.rate), "--cycles", str(args.cycles),
               "--repeat", str(args.repeat)]
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-k", "CLOCK_MONOTONIC",
                    "-o", str(data), "--", *command], check=True, stdout=subprocess.DEVNULL)
    info = json.loads((workdir / "child.json").read_text())
    kernel = info["kernels"][target]
    offset, end = symbol_offset(kernel["object"], kernel["function"])
    base = kernel["address"] - offset
    addresses, places = line_table(kernel["object"])
    lo, hi = info["window"]
    samples = subprocess.run(["perf", "script", "-i", str(data), "-F", "time,ip"], capture_output=True, text=True,
                             check=True).stdout
    lines, functions, total, outside = Counter(), Counter(), 0, 0
    spans: dict = {}
    for row in samples.splitlines():
        parts = row.split()
        if len(parts) < 2:
            continue
        stamp, ip = float(parts[0].rstrip(":")), int(parts[1], 16)
        if not lo <= stamp <= hi:
            continue
        total += 1
        if not base <= ip < base + end:
            outside += 1
            continue
        k = bisect.bisect_right(addresses, ip - base) - 1
        file, number = places[k] if k >= 0 else ("?", 0)
        path = source_of(file)
        lines[(file, number)] += 1
        functions[function_of(path, number, spans)] += 1
    functions["(outside the kernel)"] = outside
    hot = []
    for (file, number), count in lines.most_common(args.lines):
        path = source_of(file)
        text = path.read_text().splitlines()[number - 1].strip() if path and number else ""
        hot.append({"file": file, "line": number, "share": count / total, "source": text})
    return {"samples": total, "seconds": (hi - lo) / args.repeat,
            "functions": {name: count / total for name, count in functions.most_common()}, "lines": hot}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("mesh", "torus"), default="mesh")
    parser.add_argument("--side", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.1, help="flits/node/cycle")
    parser.add_argument("--cycles", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--frequency", type=int, default=4000, help="samples per second")
    parser.add_argument("--lines", type=int, default=25, help="hottest lines to show")
    parser.add_argument("--out", default="flits_profile.json", help="file name in bench/results/")
    parser.add_argument("--child", choices=("engine", "limit"), help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results = {target: profile(target, args, Path(tmp)) for target in ("engine", "limit")}
    scale = results["engine"]["seconds"] / results["limit"]["seconds"]
    for target, result in results.items():
        print(f"\n{target}: {result['seconds'] * 1e3:.1f} ms per run, {result['samples']} samples")
        for name, share in result["functions"].items():
            if share >= 0.005:
                relative = f"  = {share * scale:5.2f} x the limit's whole run" if target == "engine" else ""
                print(f"  {share:6.1%}  {name}{relative}")
        print("  hottest lines:")
        for hot in result["lines"]:
            print(f"  {hot['share']:6.1%}  {hot['file']}:{hot['line']}  {hot['source'][:90]}")
    print(f"\nengine / limit time: {scale:.2f}")
    write_results(args.out.removesuffix(".json"), {
        "workload": {k: getattr(args, k) for k in ("kind", "side", "rate", "cycles")},
        "engine_over_limit_seconds": scale, **results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
