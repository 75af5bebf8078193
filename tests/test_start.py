"""A fast start: parsing arguments loads neither numpy nor numba, a run loads only its own network's offsets
function, loading the cached kernels sets up no compiler and changes no result, sweep workers use the kernel their
parent loaded instead of loading their own, and a process's next run takes the memory its last one freed."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harts import choices

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "numba", "matplotlib", "scipy", "networkx")
COMMANDS = ["run", "calibrate", "broadcast", "faults", "microcode check", "trace", "figure", "reproduce", "load",
            "ata", "sensitivity", "bench"]


def modules_after(argv: list[str]) -> tuple[int, list[str], str]:
    """Exit code, the heavy modules loaded and stderr of harts.cli.main(argv) in a fresh interpreter."""
    script = ("import sys\nfrom harts.cli import main\ntry:\n    code = main(sys.argv[1:])\nexcept SystemExit as e:\n"
              "    code = e.code\nprint('loaded:', *(m for m in " + repr(HEAVY) + " if m in sys.modules), file=sys.stderr)\n"
              "sys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=REPO)
    *message, loaded = proc.stderr.rstrip("\n").split("\n")
    assert loaded.startswith("loaded:")
    return proc.returncode, loaded.split()[1:], "\n".join(message)


@pytest.mark.parametrize("argv", [["--help"], *[[*c.split(), "--help"] for c in COMMANDS]],
                         ids=lambda argv: " ".join(argv))
def test_help_loads_nothing_heavy(argv):
    code, loaded, _ = modules_after(argv)
    assert code == 0 and loaded == []


@pytest.mark.parametrize("argv", [["broadcast", "--algorithm", "nonsense"], ["ata", "--algorithm", "nonsense"],
                                  ["run"], ["bench", "--cycles", "0"], ["figure", "12", "--load-basis", "x"]])
def test_an_argument_error_ends_in_one_line_before_anything_heavy_loads(argv):
    code, loaded, message = modules_after(argv)
    assert code == 2 and loaded == [] and len(message.splitlines()) == 1


def test_the_offered_names_are_the_tables_names():
    from harts.broadcasts.table import BROADCASTS
    from harts.experiments.lee_shin.ata import ALGORITHMS
    assert list(BROADCASTS) == list(choices.BROADCASTS) and len(BROADCASTS) == 16
    assert list(ALGORITHMS) == ["ihc", "ks", "vsq", "vrs", "frs"] == list(choices.ATA_ALGORITHMS)
    with pytest.raises(ImportError, match="pcp"):
        choices.require_names({"sbcast": 1}, ("sbcast", "pcp"), "a table")


def test_a_network_loads_its_own_offsets_function_only():
    script = ("from harts.network import build_topology\nfrom harts.network import grid, hexmesh, hypercube\n"
              "t = build_topology({'kind': 'mesh', 'dims': [4, 4]})\nprint(t.distance(0, 15))\n"
              "print(len(grid.mesh_offsets.signatures), len(grid.torus_offsets.signatures), "
              "len(hexmesh.hex_offsets.signatures), len(hypercube.hypercube_offsets.signatures))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=True)
    assert proc.stdout.split("\n")[:2] == ["6", "1 0 0 0"]


def test_a_function_passed_to_compiled_code_has_its_addresses_looked_up_once(monkeypatch):
    """harts.jit keeps the addresses numba looks up to pass a dispatcher that can no longer compile as a first-class
    function (the offsets function to Topology.route_offsets here; it and the NP procedure to every kernel call), and
    leaves a dispatcher that can still compile to numba."""
    import numpy as np
    from numba import njit
    from numba.core.dispatcher import Dispatcher
    from numba.experimental import function_type

    from harts.network import build_topology
    from harts.network.topology import OFFSETS_SIGNATURE, _offsets_many

    topology = build_topology({"kind": "torus", "dims": [5, 5]})
    src, dst = np.array([0, 3, 24]), np.array([24, 11, 0])
    expected = topology.route_offsets(src, dst)
    looked_up = []
    numbas = Dispatcher.get_compile_result
    monkeypatch.setattr(Dispatcher, "get_compile_result", lambda self, sig: looked_up.append(self) or numbas(self, sig))
    for _ in range(3):
        assert (topology.route_offsets(src, dst) == expected).all()
    assert looked_up == []
    known = topology.offsets_function._harts_function_addresses
    assert sorted(name for name, _ in known) == ["_get_jit_address", "_get_wrapper_address"]
    for (name, signature), address in known.items():
        assert signature == OFFSETS_SIGNATURE
        numbas_way = getattr(function_type, name).__defaults__[0]
        assert address == numbas_way(topology.offsets_function, signature) > 0

    can_compile = njit(topology.offsets_function.py_func)  # compiled at its first call; looked up numba's way
    out = np.empty((len(src), topology.n_axes), np.int64)
    _offsets_many(can_compile, src, dst, topology.shape, topology.offset_table, out)
    looked_up.clear()
    for _ in range(2):
        out[:] = 0
        _offsets_many(can_compile, src, dst, topology.shape, topology.offset_table, out)
        assert (out == expected).all()
    assert looked_up == [can_compile] * 4  # both addresses, at each call
    assert "_harts_function_addresses" not in can_compile.__dict__


TIMES = ("wall_seconds", "kernel_startup_seconds", "cycles_per_second", "node_cycles_per_second",
         "packet_hops_per_second")
LOWERING = "numba.np.arrayobj"  # one of the modules numba's refresh of its compiler's registries imports


def write_short_configs(folder: Path) -> None:
    """Copies of three shipped configs in `folder`, running 1,000 cycles as bench/start.py's do."""
    for name in ("uniform_e9.yaml", "mesh_8x8.yaml", "wormhole_torus_8x8.yaml"):
        text = re.sub(r"\n  cycles: \d+", "\n  cycles: 1000", (REPO / "configs" / name).read_text())
        (folder / name).write_text(re.sub(r"warmup_cycles: \d+", "warmup_cycles: 100", text))


def json_and_lowering_after(argv: list[str], numbas_way: bool) -> tuple[dict, bool]:
    """harts.cli.main(argv) in a fresh interpreter, loading cached code as harts.jit does or (numbas_way) as numba
    does: its JSON without the wall times, and whether numba's compiler registries were set up."""
    restore = ("import numba.core.caching as caching\nnumbas = caching.Cache.load_overload\nimport harts.jit\n"
               "assert caching.Cache.load_overload is not numbas\ncaching.Cache.load_overload = numbas\n")
    script = ((restore if numbas_way else "") + "import sys\nfrom harts.cli import main\ncode = main(sys.argv[1:])\n"
              f"print({LOWERING!r} in sys.modules, file=sys.stderr)\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    for key in TIMES:
        summary.pop(key, None)  # a broadcast's summary has none of them
    return summary, proc.stderr.split()[-1] == "True"


@pytest.mark.parametrize("argv", [["run", "uniform_e9.yaml", "--json"], ["run", "mesh_8x8.yaml", "--json"],
                                  ["run", "wormhole_torus_8x8.yaml", "--json"],
                                  ["broadcast", "--algorithm", "sbcast", "--size", "5", "--json"]],
                         ids=lambda argv: " ".join(argv[:3]))
def test_loading_the_cached_kernels_sets_up_no_compiler_and_changes_no_result(argv, tmp_path):
    """harts.jit.load_cached_code_as_is: about a quarter of a short run's start-up was numba setting its compiler up
    before it loaded cached machine code, and parsing the code's bitcode took most of what was left of the loading.
    Two cut-through runs, a flit-level run and a broadcast."""
    write_short_configs(tmp_path)
    argv = [str(tmp_path / a) if a.endswith(".yaml") else a for a in argv]
    # numba's way first: whatever is not in the disk cache yet (a fresh clone) is compiled and cached then
    numbas, numba_set_up = json_and_lowering_after(argv, numbas_way=True)
    as_is, set_up = json_and_lowering_after(argv, numbas_way=False)
    assert not set_up and numba_set_up
    assert as_is == numbas


def test_a_users_cached_function_that_allocates_still_runs_beside_harts(tmp_path):
    """Loaded without numba's set-up, an allocating function would find numba's memory manager not started (a
    segmentation fault when harts.jit skipped the set-up for every function, not only its own)."""
    (tmp_path / "users.py").write_text("import numpy as np\nfrom numba import njit\n\n\n@njit(cache=True)\n"
                                       "def made(n):\n    a = np.zeros(n)\n    a[0] = 1.5\n    return a.sum() + n\n")
    first = "import users\nprint(users.made(5))\n"  # compiles it into the disk cache
    beside = ("from harts.machine.config import hex_config\nfrom harts.machine.simulation import Simulation\n"
              "Simulation(hex_config(3, run__cycles=300)).run(keep=False)\nimport users\nprint(users.made(5))\n")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    for script in (first, beside):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                              env=environment)
        assert (proc.returncode, proc.stdout) == (0, "6.5\n"), proc.stderr


def test_harts_cached_code_runs_unparsed_and_links_into_a_users_function():
    """harts.jit loads harts' cached functions without parsing their bitcode, which numba parses on loading; a
    user's function that calls one links it in, and that parses it then. The mesh's offsets function is compiled
    and cached by the first process, and loaded from the cache by the second."""
    cache_it = "from harts.network.grid import mesh\nmesh([4, 4])\n"
    link_it = (
        "import numpy as np\nfrom numba import njit\nfrom harts.network.grid import mesh, mesh_offsets\n"
        "network = mesh([4, 4])\n"
        "library = next(iter(mesh_offsets.overloads.values())).library\n"
        "unparsed = library._shared_module is None and sum(mesh_offsets.stats.cache_hits.values()) == 1\n"
        "@njit\ndef users_hops(src, dst, shape, table):\n    out = np.zeros(2, np.int64)\n"
        "    hops = mesh_offsets(src, dst, shape, table, out)\n    return hops * 100 + out[0] * 10 + out[1]\n"
        "print(unparsed, users_hops(0, 15, network.shape, network.offset_table),\n"
        "      users_hops(15, 1, network.shape, network.offset_table), library._shared_module is not None)\n")
    for script in (cache_it, link_it):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stderr
    # from node 0 to 15 on a 4x4 mesh: 3 hops + on each axis; from 15 to 1: 2 hops - on x, 3 - on y
    assert proc.stdout.split() == ["True", "633", str(5 * 100 - 2 * 10 - 3), "True"]


LOADED, UNUSED = "FunctionCache", "_DiskCacheWhenAsked"


@pytest.mark.parametrize("config, kernel_caches", [("uniform_e9.yaml", [LOADED, UNUSED]),
                                                   ("wormhole_torus_8x8.yaml", [UNUSED, LOADED])])
def test_a_run_imports_no_numpy_ma_and_makes_only_what_it_uses(config, kernel_caches, tmp_path):
    """harts.jit._type_arrays_without_numpy_ma, _CompiledWhenUsed and cached_when_asked. numba's typing of an array
    argument imported numpy.ma (12-17 ms), each of the hundred kernel parts a run imports made its dispatcher and
    its disk cache (which writes a file to check that the folder is writable) when it was decorated, and each other
    cached function its disk cache, though a run that loads its kernel from the disk cache calls none of the parts
    and loads one kernel."""
    write_short_configs(tmp_path)
    script = ("import sys\nfrom harts.cli import main\nfrom harts.controller import clock, engine, receiver\n"
              "from harts.controller.flits import kernel\ncode = main(sys.argv[1:])\n"
              "print('numpy.ma' in sys.modules, *(type(d._cache).__name__ for d in (engine.run_kernel, "
              "kernel.run_flits)), *(d._dispatcher is None for d in (receiver.proceed, clock.schedule, "
              "kernel._grant)), file=sys.stderr)\nsys.exit(code)\n")
    proc = subprocess.run([sys.executable, "-c", script, "run", str(tmp_path / config)], capture_output=True,
                          text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    # numpy.ma imported; the caches of the cut-through and flit kernels; whether parts of both kernels (inlined into
    # them) made no dispatcher
    assert proc.stderr.split()[-6:] == ["False", *kernel_caches, "True", "True", "True"]


def test_arrays_are_typed_as_numba_types_them():
    """harts.jit._type_arrays_without_numpy_ma types an exact ndarray by numba's rule without its question whether
    the array is masked: every type must be numba's own, and what numba refuses is refused as numba refuses it.
    Arrays of many dtypes, layouts and flags, and every bundle of both kernels' state."""
    import numpy as np
    from numba import errors, typeof, types
    from numba.core.typing.typeof import Purpose, _typeof_ndarray, _TypeofContext

    from harts.controller.observations import OB_ROWS
    from harts.machine.config import defaults, hex_config
    from harts.machine.simulation import Simulation
    context = _TypeofContext(Purpose.argument)

    def numbas_type(value):
        if isinstance(value, tuple):
            return types.BaseTuple.from_types([numbas_type(item) for item in value], type(value))
        return _typeof_ndarray(value, context)

    arrays = [np.zeros((3, 4), dtype) for dtype in (np.int8, np.int32, np.int64, np.uint16, np.float32, np.float64,
                                                     np.complex128, np.bool_, np.float16, "M8[s]", "U3", object,
                                                     [("a", np.int32), ("b", "f8")])]
    square = np.zeros((4, 4), np.int64)
    readonly = np.zeros(5)
    readonly.flags.writeable = False
    arrays += [square.T, square[:, 1], square[::2], np.zeros(()), np.zeros((0, 3)), readonly]
    cut_through = Simulation(hex_config(3))
    flits = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}, microcode="wormhole"))
    bundles = []
    for hops in (False, True):
        bundles += cut_through._initial_state(cut_through.faults, hops, 10, hops, np.zeros(OB_ROWS, np.int64)).values()
        bundles += flits._state(flits.faults, hops, hops, 10, hops, np.zeros(OB_ROWS, np.int64)).values()
    bundles = [b for b in bundles if isinstance(b, tuple)]
    assert {type(b).__name__ for b in bundles} >= {"Machine", "Controller", "Packets", "Logs", "Clock", "Processor",
                                                   "Switch", "Run"}
    for value in arrays + bundles:
        assert typeof(value, Purpose.argument) == numbas_type(value)
    assert {typeof(a, Purpose.argument).layout for a in arrays} == {"C", "F", "A"}
    for refused in (np.ma.masked_array([1, 2]), np.zeros(2, "V3"), np.zeros(2, np.longdouble)):
        with pytest.raises(errors.NumbaError) as ours:
            typeof(refused, Purpose.argument)
        with pytest.raises(errors.NumbaError) as numbas:
            _typeof_ndarray(refused, context)
        assert (type(ours.value), str(ours.value)) == (type(numbas.value), str(numbas.value))


def test_libyaml_composes_every_shipped_yaml_file_as_pyyaml_does():
    """harts.yamlsource composes a file with libyaml, 7-18 times as fast as PyYAML's own composer, and gets the same
    values on the same lines. (Bad input is composed again by PyYAML for its message: tests/test_bad_input.py.)"""
    import yaml

    from harts import yamlsource
    assert yamlsource._FAST_LOADER is yaml.CSafeLoader
    files = [*REPO.glob("configs/*.yaml"), *REPO.glob("microcode/*.yaml"), *REPO.glob("tests/programs/*.yaml")]
    assert len(files) >= 29
    for path in files:
        text = path.read_text()
        fast, slow = (yamlsource._converted(yaml.compose(text, Loader=loader), str(path))
                      for loader in (yaml.CSafeLoader, yaml.SafeLoader))
        assert fast == slow, path.name


class CountLoads:
    """A sweep task: a small wormhole run, then the kernels its process loaded beyond `inherited`."""

    def __init__(self, seed: int, inherited: int):
        self.key, self.cost, self.seed, self.inherited = f"count_loads_{seed}", 1, seed, inherited

    def run(self) -> dict:
        from harts.machine.config import load_config
        from harts.machine.simulation import Simulation
        config = load_config(REPO / "configs" / "wormhole_torus_8x8.yaml").with_values(
            run__cycles=300, run__warmup_cycles=0, run__seed=self.seed)
        Simulation(config).run(keep=False)
        return {"key": self.key, "pid": os.getpid(), "loads": kernel_loads() - self.inherited}


def kernel_loads() -> int:
    from harts.controller.engine import run_kernel
    from harts.controller.flits.kernel import run_flits
    return sum(sum(d.stats.cache_hits.values()) + sum(d.stats.cache_misses.values()) for d in (run_kernel, run_flits))


def test_sweep_workers_run_many_points_on_the_kernel_their_parent_loaded(tmp_path):
    from harts.experiments.sweep import run_tasks
    from harts.machine.simulation import load_kernel
    load_kernel()
    inherited = kernel_loads()
    assert inherited >= 2  # both kernels, loaded (or compiled) here, in the parent
    done = run_tasks([CountLoads(seed, inherited) for seed in range(1, 9)], tmp_path, workers=2, progress=False)
    assert len(done) == 8
    assert {r["loads"] for r in done.values()} == {0}
    assert os.getpid() not in {r["pid"] for r in done.values()}
    assert len({r["pid"] for r in done.values()}) <= 2  # 8 points on at most 2 processes


def test_a_run_in_process_leaves_garbage_collection_as_it_found_it(tmp_path, capsys):
    import gc

    from harts.cli import main
    config = tmp_path / "short.yaml"
    config.write_text((REPO / "configs" / "mesh_8x8.yaml").read_text().replace("cycles: 20000", "cycles: 300")
                      .replace("warmup_cycles: 2000", "warmup_cycles: 0"))
    assert gc.isenabled()
    assert main(["run", str(config)]) == 0
    assert gc.isenabled() and "packets" in capsys.readouterr().out


def test_a_process_runs_again_in_the_memory_its_last_run_freed():
    """simulation.keep_freed_memory: a sweep worker's or a benchmark's next run takes the memory the last one freed,
    where it took about 560-670 fresh pages a run (E-9 at 0.1, 10,000 cycles) and 2,100 (8x8 mesh at 0.1, 20,000
    cycles), each mapped and cleared by the system on first touch."""
    script = ("import resource\nfrom harts.machine.config import defaults, hex_config\n"
              "from harts.machine.simulation import Simulation\n"
              "for config in (hex_config(9, traffic__uniform__load=0.1, run__cycles=10000),\n"
              "               defaults().with_values(topology={'kind': 'mesh', 'dims': [8, 8]}, microcode='wormhole',\n"
              "                                      traffic__uniform__load=0.1, run__cycles=20000)):\n"
              "    for run in range(3):\n"
              "        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
              "        Simulation(config).run(keep=False)\n"
              "    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    cut_through, flit = (int(line) for line in proc.stdout.split())
    assert cut_through < 200 and flit < 200
