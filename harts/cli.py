"""Command line: harts run | sweep | calibrate | broadcast | faults | microcode | trace | figure | reproduce | load |
sensitivity | ata | bench.
Bad input ends in one line and exit code 2; a run-time fault of the simulation in one line and exit code 1."""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from . import choices
from .errors import InputError, SimulationError
from .machine.config import KEY_BY_NAME, MAX_CYCLES, bound, integer


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line instead of usage + message
        raise InputError(f"{self.prog}: {message}")


def _int_from(minimum: int, what: str, maximum: int | None = None):
    """An argparse type: an integer (12, or 1e6 as in configs) of at least `minimum` and at most `maximum`,
    named `what` in the error."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = integer(text)
        if value is None or value < minimum or (maximum is not None and value > maximum):
            up_to = f" up to {bound(maximum)}" if maximum is not None else ""
            raise argparse.ArgumentTypeError(f"expected a {what} integer{up_to}, got {text!r}")
        return value
    return parse


_positive_int = _int_from(1, "positive")
_non_negative_int = _int_from(0, "non-negative")


def _mesh_size(text: str) -> int:
    value = _positive_int(text)
    if value < 3:
        raise argparse.ArgumentTypeError(f"mesh size must be >= 3, got {value}")
    return value


def _load(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"load must be >= 0 and finite, got {text!r}")
    return value


def _output_file(text: str) -> str:
    """An argparse type: a file the command can write, checked before any work is done."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory, expected a file name")
    existed = path.exists()
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write {text} ({exc.strerror})") from None
    if not existed:
        path.unlink()
    return text


def _plot_file(text: str) -> str:
    """An argparse type: a writable file in a format matplotlib draws (it picks the format by the suffix)."""
    from matplotlib.backend_bases import FigureCanvasBase
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if Path(text).suffix.lower().lstrip(".") not in formats:
        raise argparse.ArgumentTypeError(f"expected a file name ending in one of "
                                         f"{', '.join('.' + f for f in formats)}, got {text!r}")
    return _output_file(text)


def _results_directory(text: str) -> str:
    """An argparse type: a directory the sweep can write its results in (made if missing), checked before
    any work is done."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file, expected a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write in {text} ({exc.strerror})") from None
    return text


def _config(path: str | None, overrides: list[str]):
    """The config a command runs: the file (or the built-in defaults) with its `--set KEY=VALUE` overrides."""
    from .machine.config import defaults, load_config, with_overrides
    return with_overrides(load_config(path) if path else defaults(), overrides)


def _set_option(parser) -> None:
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change one config key (dotted, as in the config table; the value as YAML), repeatable: "
                             "--set flow.virtual_channels=4 --set traffic.synthetic.pattern=shuffle")


def _print(data: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(data, indent=2))
        return
    width = max(len(k) for k in data)
    for key, value in data.items():
        shown = f"{value:.4g}" if isinstance(value, float) else value
        print(f"{key:<{width}}  {shown}")


def _broadcast_config(args):
    """The config a broadcast runs on: the config's (or the defaults), on E-size if --size is given."""
    config = _config(args.config, args.set)
    if args.size is not None:
        config = config.with_topology(kind="hex", size=args.size)
    return config


def _has_traffic(config, command: str) -> None:
    """An idle config runs nothing: say what would (a broadcast on it; for bench, a load), in one line at the line
    that sets the traffic's rate or load to 0 if the file has one."""
    from .machine.traffic import has_traffic
    if has_traffic(config):
        return
    from .broadcasts.table import BROADCASTS, runs_on
    fitting = [name for name in BROADCASTS if runs_on(config, name)]
    if command == "bench":
        what = "give it a load: --load L (traffic.uniform.load)"
    elif fitting:
        how = (f"trace {config.path} --broadcast" if command == "trace"
               else f"broadcast --config {config.path} --algorithm")
        what = f"run a broadcast on it ({'|'.join(fitting)}): harts {how} {fitting[0]}"
    else:
        what = "give it traffic (traffic.packets, traffic.synthetic.rate, traffic.uniform.load or traffic.trace)"
    zero = next((name for name in ("traffic.synthetic.rate", "traffic.uniform.load") if name in config.lines), None)
    raise InputError(f"harts {command}: this config has no traffic of its own (no traffic.packets or worms, "
                     f"traffic.uniform.load and traffic.synthetic.rate 0, no traffic.trace): nothing to {command}; "
                     f"{what}", config.path, config.lines.get(zero))


def _dedicated(config):
    """A command that sends its own packets on an otherwise idle network (dedicated mode) runs the config without
    its traffic: that config, and the keys it left out with their lines, for the command to say so (or None)."""
    from .machine.traffic import traffic_keys, without_traffic
    left_out = traffic_keys(config)
    if not left_out:
        return config, None
    return without_traffic(config), ", ".join(f"{name} at {config.path}:{config.lines[name]}" if name in config.lines
                                              else name for name in left_out)


def _without_collection(command):
    """A command that runs one simulation, run without cyclic garbage collection: its start-up (numba,
    numpy, the cached kernel) allocates over a hundred thousand objects and keeps them all, so the
    collector's passes over them are wasted (about 0.03 s of a 1,000-cycle `harts run`'s 0.5 s), and what
    the run allocates after start-up is little and lives to the end. Restored after, for callers in-process."""
    @functools.wraps(command)
    def run(args) -> int:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return command(args)
        finally:
            if collecting:
                gc.enable()
    return run


@_without_collection
def cmd_run(args) -> int:
    from .machine.simulation import Simulation
    config = _config(args.config, args.set)
    simulation = Simulation(config)  # a config that cannot run is refused for that first
    _has_traffic(config, "run")
    traced = args.packet_trace is not None
    if not traced and (args.trace_cycles is not None or args.trace_nodes is not None):
        raise InputError("--trace-cycles and --trace-nodes choose what --packet-trace keeps: give --packet-trace FILE.json")
    result = simulation.run(progress=sys.stderr.isatty(), keep=False, hops=traced,
                            counters=args.link_map is not None)
    data = result.summary()
    _tools(result, args, data)
    if args.json:
        _print(data, True)
        return 0
    from .machine.statistics import explain
    shown = {k: v for k, v in data.items() if k not in ("stability", "latency_histogram", "hops_histogram")}
    shown["stable"] = explain(data["stable"], data["stability"])
    if data["stable"] is False:
        # an unstable run's latencies grow with its window: they are not the network's
        for key in shown:
            if key.endswith("_cycles") and ("latency" in key or "queueing" in key) and shown[key] is not None:
                shown[key] = f"{shown[key]:.4g} (not converged: the run is unstable)"
    shown["histograms"] = "latency and hops: in --json"
    _print(shown, False)
    return 0


def cmd_calibrate(args) -> int:
    from .controller import isa
    from .controller.microcode import assemble
    from .tools.calibrate import calibrate, calibrate_flits
    config, left_out = _dedicated(_config(args.config, args.set))
    if assemble(config.microcode_path()).switching != isa.SWITCHING_CUT_THROUGH:
        return _print_flit_calibration(calibrate_flits(config), config, left_out, args.json)
    cal = calibrate(config)
    data = {"topology": cal.topology, **cal.as_dict(), **_left_out_field(left_out)}
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"zero-load latency model on {cal.topology}: S + r*M + (h-1)*d, in cycles of "
          f"{config['timing.clock_period_us']} us")
    _print_left_out(left_out)
    print(f"  S = {cal.S} cycles   r = {cal.r} cycles/byte   d = {cal.d} cycles")
    print(f"  {len(cal.probes)} probes (every destination from node 0, M in {data['lengths_checked']}), "
          f"hops 1..{max(data['hops_checked'])}")
    for h in data["hops_checked"]:
        row = [p for p in cal.probes if p["hops"] == h]
        worst = max(abs(p["model"] - p["latency"]) for p in row)
        lat = {p["length"]: p["latency"] for p in row}
        shown = "  ".join(f"M={m}: {float(lat[m]):8.3f}" for m in sorted(lat))
        print(f"  h={h:2d}  {shown}  residual {float(worst)}")
    print(f"  largest residual: {float(cal.max_residual)} cycles")
    return 0


def _print_flit_calibration(cal, config, left_out: str | None, as_json: bool) -> int:
    data = {"topology": cal.topology, "microcode": config["microcode"], **cal.as_dict(), **_left_out_field(left_out)}
    if as_json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"zero-load latency model of {config['microcode']} on {cal.topology}: {cal.model}, in cycles")
    _print_left_out(left_out)
    print("  " + "   ".join(f"{name} = {value}" for name, value in cal.terms.items()))
    print(f"  {len(cal.probes)} probes (every destination from node 0, {data['flits_checked']} flits), "
          f"hops 1..{max(data['hops_checked'])}")
    print(f"  largest residual: {float(cal.max_residual)} cycles")
    return 0


def _left_out_field(left_out: str | None) -> dict:
    """The JSON's `traffic_left_out` (see _dedicated), if anything was."""
    return {"traffic_left_out": left_out} if left_out else {}


def _print_left_out(left_out: str | None) -> None:
    if left_out:
        print(f"  dedicated mode: the config's traffic is left out ({left_out})")


@_without_collection
def cmd_bench(args) -> int:
    from .machine.config import load_config, with_overrides
    from .tools.bench import benchmark, default_config
    config = with_overrides(load_config(args.config) if args.config else default_config(), args.set)
    if args.load is not None:
        config = config.with_values(traffic__uniform__load=args.load)
    _has_traffic(config, "bench")  # a speed over no packets measures nothing
    data = benchmark(config, cycles=args.cycles, seed=args.seed)
    _print(data, args.json)
    return 0


def cmd_broadcast(args) -> int:
    from .broadcasts.runner import run_broadcast
    from .broadcasts.table import BROADCASTS
    if BROADCASTS[args.algorithm].paper != "000" and args.size is not None:
        raise InputError(f"harts broadcast: --size picks a hexagonal mesh for paper 000; {args.algorithm} runs on "
                         f"the config's network (--config)")
    config = _broadcast_config(args)
    traced = args.packet_trace is not None
    if not traced and (args.trace_cycles is not None or args.trace_nodes is not None):
        raise InputError("--trace-cycles and --trace-nodes choose what --packet-trace keeps: give --packet-trace FILE.json")
    outcome = run_broadcast(config, args.algorithm, args.source, args.length, args.packets, args.variant,
                            args.partition, hops=traced, counters=args.link_map is not None,
                            progress=sys.stderr.isatty())
    data = outcome.summary()
    if args.plot:
        from .tools.plot import plot_broadcast
        plot_broadcast(outcome.run, args.plot)
        data["plot"] = args.plot
    _tools(outcome.result, args, data)
    if args.json:
        data.update(outcome.listing())
    _print(data, args.json)
    return 0


def _tools(result, args, data: dict) -> None:
    """--link-map and --packet-trace of a run, written and named in its summary."""
    if args.link_map:
        from .tools.link_map import draw_link_map
        draw_link_map(result, args.link_map)
        data["link_map"] = args.link_map
    if args.packet_trace is not None:
        from .tools.packet_trace import write_packet_trace
        n = result.topology.n_nodes
        if args.trace_nodes is not None and max(args.trace_nodes) >= n:
            raise InputError(f"--trace-nodes: the network has nodes 0..{n - 1}, got {max(args.trace_nodes)}")
        write_packet_trace(result.hops, result.topology, args.packet_trace, args.trace_cycles, args.trace_nodes)
        data["packet_trace"] = args.packet_trace


def _interrupted(args) -> int:
    print(f"harts: interrupted; finished points are in {args.results}/points, rerun with --resume "
          f"to run only what is missing", file=sys.stderr)
    return 130


def _figures(args, numbers: list[int]) -> int:
    from .experiments.kandlur_shin.figures import reproduce
    from .machine.traffic import LOAD_BASES
    started = time.perf_counter()
    try:
        bases = LOAD_BASES if args.load_basis in (None, "both") else (args.load_basis,)
        written = reproduce(numbers, Path(args.results), quick=args.quick, resume=args.resume,
                            workers=args.workers, dask_scheduler=args.dask_scheduler,
                            progress=not args.no_progress, bases=bases)
    except KeyboardInterrupt:
        return _interrupted(args)
    for basis, figures in written.items():
        print(f"{basis} load:")
        for number, files in figures.items():
            if isinstance(number, int):
                print(f"  Fig. {number}: {files['png']}  {files['csv']}")
        for verdict in figures.get("claims", []):
            print(f"  [{'holds' if verdict['holds'] else 'does not hold'}] {verdict['claim']}: "
                  f"{verdict['evidence']}")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


def cmd_figure(args) -> int:
    return _figures(args, [args.number])


def _broadcast_papers(args) -> int:
    """Paper 002 (PCP against RD, EDN, NP-D: Figs 4-6 and a deadlock check), paper 003 (the mesh-hypercube
    broadcast: the MH(9,8) example, steps against size, the links shared for n >= 16) or paper 004 (circuit-
    switched broadcasts on tori)."""
    if args.paper == "002":
        from .experiments.al_dubai.figures import reproduce
    elif args.paper == "003":
        from .experiments.al_mahadeen.mesh_hypercube import reproduce
    else:
        from .experiments.peters_syska.torus import reproduce
    started = time.perf_counter()
    try:
        files = reproduce(Path(args.results), quick=args.quick, resume=args.resume, workers=args.workers,
                          dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
    except KeyboardInterrupt:
        return _interrupted(args)
    folder = Path(args.results) / f"paper{args.paper}"
    print(f"wrote {folder}/: {', '.join(sorted(Path(f).name for f in files.values()))}")
    print(f"  points in {args.results}/points; tables in {folder / 'tables.md'}")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


def cmd_reproduce(args) -> int:
    not_here = [option for option, given in (("--load-basis", args.load_basis is not None and args.paper != "000"),
                                             ("--quick", args.quick and args.paper == "001")) if given]
    if not_here:
        raise InputError(f"harts reproduce: {' and '.join(not_here)} does not apply to --paper {args.paper}")
    if args.paper in ("002", "003", "004"):
        return _broadcast_papers(args)
    if args.paper == "001":
        from .experiments.lee_shin.faults import fault_trials, fault_trials_markdown
        from .experiments.lee_shin.load import fifo_peaks, load_sweep
        from .experiments.lee_shin.tables import markdown, tables, worst_case_markdown
        started = time.perf_counter()
        rows, worst = tables(Path(args.results))
        print(markdown(rows), end="")
        print(worst_case_markdown(worst), end="")
        print("\n" + (Path(args.results) / "paper001" / "vrs_formula.md").read_text(), end="")
        print("\n" + fault_trials_markdown(fault_trials(Path(args.results))), end="")
        try:
            load_sweep(Path(args.results), resume=args.resume, workers=args.workers,
                       dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
        except KeyboardInterrupt:
            return _interrupted(args)
        fifo_peaks(Path(args.results))
        print(f"wrote {args.results}/paper001/: tables, worst_case, vrs_formula, fault_trials, load and fifo_peaks "
              f"(.csv, .md), and load.png; wall time {time.perf_counter() - started:.0f} s")
        return 0
    return _figures(args, [10, 11, 12, 13, 14])


def cmd_load(args) -> int:
    from .experiments.switching.load import (
        FRACTIONS,
        QUICK_FRACTIONS,
        ROUTERS,
        load_sweep,
        output_name,
        saturation,
    )
    started = time.perf_counter()
    routers = ROUTERS if args.all_routers else ROUTERS[:1]
    fractions = QUICK_FRACTIONS if args.quick else FRACTIONS
    try:
        rows = load_sweep(Path(args.results), microcode=args.microcode, fractions=fractions, routers=routers,
                          torus_tie=args.torus_tie, resume=args.resume,
                          workers=args.workers, dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
    except KeyboardInterrupt:
        return _interrupted(args)
    for row in saturation(rows):
        print(f"{row['virtual_channels']} VCs x {row['buffer_flits']} flits  {row['network']:10s} "
              f"{row['pattern']:15s} bound {row['bound']:.4f}  saturation {row['saturation']:.4f} "
              f"({row['saturation_fraction_of_bound']:.2f} of the bound)")
    name = output_name(args.microcode, args.torus_tie)
    print(f"wrote {args.results}/switching/{name}_load.csv, _saturation.csv, _saturation.md and _load.png; wall time "
          f"{time.perf_counter() - started:.0f} s")
    return 0


def cmd_sweep(args) -> int:
    from .experiments.load_sweep import SATURATION_TOLERANCE, Base, Sweep, curves, parse_rates, run_sweep, write
    from .machine.config import config_file, load_config, parse_override
    path = str(config_file(args.config).resolve())
    if args.broadcast:
        return _broadcast_sweep(args, path)
    config = load_config(path)
    if args.quick or args.baseline:
        raise InputError(f"harts sweep: {'--quick' if args.quick else '--baseline'} applies to --broadcast only")
    # the sweep's load is traffic.synthetic's: the config's own uniform traffic would run beside it
    values = (("traffic.uniform.load", 0), *(parse_override(text) for text in args.set))
    patterns = tuple(args.pattern.split(",")) if args.pattern else (config["traffic.synthetic.pattern"],)
    rates = parse_rates(args.rates) if args.rates else ()
    fractions = parse_rates(args.bound_fractions, "--bound-fractions") if args.bound_fractions else ()
    if not rates and not fractions:
        fractions = DEFAULT_BOUND_FRACTIONS
    try:
        sweep = Sweep(Base(path, values), patterns, rates, fractions, args.seeds, args.to_saturation)
    except InputError as exc:
        raise InputError(f"harts sweep: {exc}") from None
    started = time.perf_counter()
    try:
        found = run_sweep(sweep, Path(args.results), resume=args.resume, workers=args.workers,
                          dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
    except KeyboardInterrupt:
        return _interrupted(args)
    files = write(sweep, found, Path(args.results), Path(path).stem, args.plot)
    print(f"{'pattern':16s} {'offered':>8s} {'accepted':>8s} {'latency':>9s} {'p99':>9s} {'queueing':>9s} "
          f"{'network':>9s}  stable")

    def shown(value, width: int, form: str) -> str:  # a run that deadlocked has no number: a dash
        return f"{value:{width}{form}}" if value is not None else f"{'-':>{width}s}"
    for row in curves(found["points"]):
        print(f"{row['pattern']:16s} {row['rate']:8.4f} {shown(row['accepted_flits_per_node_cycle'], 8, '.4f')} "
              + " ".join(shown(row[name], 9, ".1f") for name in ("latency_mean_cycles", "latency_p99_cycles",
                                                                 "queueing_mean_cycles", "network_latency_mean_cycles"))
              + f"  {'yes' if row['stable'] else 'NO'}")
    for row in found["saturation"]:
        print(f"{row['pattern']}: saturation throughput {row['saturation_throughput']:.4f} flits/node/cycle (stable "
              f"at an offered {row['stable_offered']:.4f}, unstable at {row['unstable_offered']:.4f}: within "
              f"{SATURATION_TOLERANCE:.0%}; {row['fraction_of_bound']:.2f} of the channel-load bound "
              f"{row['bound_flits_per_node_cycle']:.4f})")
    print(f"wrote {', '.join(str(f) for f in files)}; wall time {time.perf_counter() - started:.0f} s")
    return 0


DEFAULT_BOUND_FRACTIONS = tuple(round(0.1 * k, 1) for k in range(1, 11))


def _broadcast_sweep(args, path: str) -> int:
    """`harts sweep CONFIG --broadcast ...`: harts.experiments.broadcast_sweep."""
    from .experiments.broadcast_sweep import BroadcastSweep, run_broadcast_sweeps, write
    from .experiments.kandlur_shin.points import FULL, QUICK
    from .experiments.load_sweep import Base, parse_rates
    from .machine.config import parse_override
    not_here = [option for option, given in (("--bound-fractions", args.bound_fractions), ("--seeds", args.seeds != 1))
                if given]
    if not_here:
        raise InputError(f"harts sweep: {not_here[0]} does not apply to --broadcast (replications give the "
                         f"intervals; loads are --rates)")
    sweep = BroadcastSweep(Base(path, tuple(parse_override(text) for text in args.set)),
                           tuple(args.broadcast.split(",")), parse_rates(args.rates) if args.rates else (),
                           QUICK if args.quick else FULL, args.baseline, args.to_saturation)
    try:
        sweep.check()
    except InputError as exc:
        raise InputError(f"harts sweep: {exc}") from None
    started = time.perf_counter()
    try:
        [found] = run_broadcast_sweeps([sweep], Path(args.results), resume=args.resume, workers=args.workers,
                                       dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
    except KeyboardInterrupt:
        return _interrupted(args)
    files = write(sweep, found, Path(args.results), Path(path).stem, args.plot)
    increase = f"  {'increase %':>12s}" if sweep.baseline else ""
    print(f"{'algorithm':10s} {'load':>5s} {'latency ± 95%':>17s} {'delivery ± 95%':>17s} {'regular':>8s} "
          f"{'carried':>7s}{increase}  precise")
    for row in found["points"]:
        line = (f"{row['algorithm']:10s} {row['load']:5.2f} {row['latency']:9.1f} ± {row['latency_half_width']:5.1f} "
                f"{row['mean_delivery']:9.1f} ± {row['mean_delivery_half_width']:5.1f} {row['regular_latency']:8.1f} "
                f"{row['accepted_over_offered']:7.3f}")
        if sweep.baseline:
            line += f"  {row['latency_increase_percent']:5.1f} ± {row['latency_increase_half_width']:4.1f}"
        precise = row["precise"] and row.get("baseline_precise", True)
        print(line + f"  {'saturated' if row['saturated'] else 'yes' if precise else 'NO'}")
    if found["saturation"]:
        probe = found["saturation"]
        print(f"regular traffic saturates at load {probe['saturation_load']:g} ({probe['basis']} basis): the probe's "
              f"run carried {probe['probes'][-1]['accepted_over_offered']:.3f} of the offered regular bytes there "
              f"(saturated below 0.95; steps of 0.1)")
    print("latency: the last copy's delivery; delivery: the mean over nodes of their last copy's; regular: the "
          "regular packets' mean latency; carried: regular bytes accepted over offered (cycles throughout)")
    print(f"wrote {', '.join(str(f) for f in files)}; wall time {time.perf_counter() - started:.0f} s")
    return 0


def cmd_ata(args) -> int:
    from .experiments.lee_shin.ata import formula_name, plot_arrivals, run_algorithm
    from .faults.fault_set import FAULT_KEYS, refuse_faults
    config, left_out = _dedicated(_config(args.config, args.set))
    # a completion held against a fault-free formula, or trials whose faults would add to the config's
    refuse_faults(config, FAULT_KEYS, "harts ata runs on",
                  "its fault trials draw their own (--crash, --byzantine, --dead-links)")
    options = {"mu": args.mu, "eta": args.eta, "length": args.length, "overlapped": args.overlapped,
               "queueing": args.queueing}
    kind, count = next(((k, v) for k, v in (("crash", args.crash), ("byzantine", args.byzantine),
                                            ("dead_links", args.dead_links)) if v is not None), (None, None))
    try:
        if kind is not None:
            return _ata_tolerance(args, config, left_out, kind, count, options)
        run = run_algorithm(config, args.algorithm, **options)
    except InputError as exc:
        raise InputError(f"harts ata: {exc}") from None
    data = {**run.as_dict(), **_left_out_field(left_out)}
    if args.plot:
        plot_arrivals(run, args.plot)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    how = (f"eta = {run.eta}, " if run.eta is not None else "") + f"mu = {run.mu}, M = {run.length} bytes"
    worst = run.queueing is not None
    print(f"{run.algorithm.upper()} on {run.topology} ({run.nodes} nodes, gamma = {run.gamma}), {how}"
          f"{', overlapped stages' if run.overlapped else ''}"
          f"{f', worst case: every hop stored, D = {run.queueing}' if worst else ''}")
    _print_left_out(left_out)
    print(f"  completion {float(run.completion_cycles):g} cycles; {formula_name(run)}: "
          f"{float(run.formula_cycles):g} cycles ({'exact' if data['exact'] else 'differs'})"
          + (f"; Table II as printed: {run.printed_formula_cycles:.1f}"
             if run.printed_formula_cycles is not None else ""))
    print(f"  contention-free: {run.contention_free}"
          + (f" (first: {run.first_contention})" if run.first_contention else ""))
    print(f"  copies of each message at each other node: {run.copies_per_node_min}..{run.copies_per_node_max}")
    return 0


def _ata_tolerance(args, config, left_out: str | None, kind: str, count: int, options: dict) -> int:
    from .experiments.lee_shin.faults import TOLERANT, ata_tolerance
    from .faults.tolerance import plot_tolerance
    from .network import build_topology
    if args.algorithm not in TOLERANT:
        raise InputError(f"fault trials count the copies of each source's message, which {args.algorithm.upper()}'s "
                         f"merged messages do not carry: use one of {', '.join(TOLERANT)}")
    topology = build_topology(config.topology_spec)
    most = len(topology.links()) if kind == "dead_links" else topology.n_nodes - 2
    if count > most:
        raise InputError(f"at most {most} {'dead links' if kind == 'dead_links' else 'faulty nodes'} fit "
                         f"{topology.name}, got {count}")
    rows = ata_tolerance(config, args.algorithm, kind, count, args.trials, args.seed, args.behaviour, **options)
    if args.plot:
        plot_tolerance(rows, args.plot)
    if args.json:
        print(json.dumps({"topology": topology.name, "kind": kind, "behaviour": args.behaviour,
                          **_left_out_field(left_out), "rows": [r.as_dict() for r in rows]}, indent=2))
        return 0
    rule = "majority" if kind == "byzantine" else "first-valid"
    print(f"{args.algorithm.upper()} on {topology.name}, {kind.replace('_', ' ')}"
          + (f" ({args.behaviour})" if kind == "byzantine" else "") + f", rule {rule}, "
          f"{args.trials} random fault sets per count (any node)")
    _print_left_out(left_out)
    _print_tolerance(rows, "correct pairs")
    return 0


def cmd_sensitivity(args) -> int:
    from .experiments.kandlur_shin.sensitivity import sensitivity
    started = time.perf_counter()
    try:
        found = sensitivity(Path(args.results), quick=args.quick, resume=args.resume, workers=args.workers,
                            dask_scheduler=args.dask_scheduler, progress=not args.no_progress)
    except KeyboardInterrupt:
        return _interrupted(args)
    print("saturation link load by BMU structure (bus interfaces, queues):")
    for row in found["bmu"]:
        print(f"  {row['bus_interfaces']:>2} {row['queues']:<10} E-{row['size']}: {row['saturation_load']:g} "
              f"(links {row['saturated_link_utilisation']:.2f} busy, bus interfaces "
              f"{row['saturated_bmu_interface_utilisation']:.2f})")
    print("4/5/6-BCAST spread over SBCAST against d / (S + rM):")
    for row in found["spread"]:
        print(f"  S {row['S']:g}, d {row['d']:g}: d/(S+rM) {row['d_over_S_plus_rM']:.3f}, link load {row['load']:g}: "
              f"{row['4bcast_increase']:.0f}% {row['5bcast_increase']:.0f}% {row['6bcast_increase']:.0f}%, "
              f"spread {row['spread_points']:.0f} points")
    print("wrote " + "  ".join(found["files"]))
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


def cmd_faults(args) -> int:
    from .broadcasts.table import BROADCASTS, REACHED, check_broadcast, runs_on
    from .faults.fault_set import NODE_AND_LINK_FAULT_KEYS, refuse_faults
    from .faults.tolerance import plot_tolerance, tolerance
    from .network import node_count
    config = _broadcast_config(args)
    # each trial's random faults replace the config's nodes and links (its corruption probability is kept)
    refuse_faults(config, NODE_AND_LINK_FAULT_KEYS, "harts faults draws its own fault sets (--crash, --byzantine) on",
                  "leave them out, or run one broadcast with them (harts broadcast)")
    if args.rule:
        config = config.with_values(reception__rule=args.rule)
    if args.algorithm == "all":
        algorithms = [name for name in BROADCASTS if runs_on(config, name)]
        if not algorithms:
            raise InputError("harts faults: no broadcast runs on this config's network, microprogram and NP ports: "
                             "use --size N for Kandlur & Shin's, or a config docs/reference/broadcasts.md names")
    else:
        algorithms = args.algorithm.split(",")
    for name in algorithms:
        if name not in BROADCASTS:
            raise InputError(f"harts faults: --algorithm expects a comma list of {', '.join(BROADCASTS)} or 'all', "
                             f"got {name!r}")
        check_broadcast(config, name)
    kind, count = ("crash", args.crash) if args.crash is not None else ("byzantine", args.byzantine)
    if any(BROADCASTS[name].faults == REACHED for name in algorithms):  # no config fits both kinds of report
        return _reached_tolerance(args, config, algorithms, kind, count)
    from .broadcasts.runner import check_packet_length
    args.length = 64 if args.length is None else args.length
    check_packet_length(config, args.length, "harts faults")
    n_nodes = node_count(config.topology_spec)
    if count > n_nodes - 2:
        raise InputError(f"harts faults: at most {n_nodes - 2} faulty nodes fit E-{config.topology_spec['size']} "
                         f"besides the source and one receiver, got {count}")
    rows = []
    for name in algorithms:
        rows += tolerance(config, name, kind, count, args.trials, length=args.length, behaviour=args.behaviour,
                          seed=args.seed)
    if args.plot:
        plot_tolerance(rows, args.plot)
    if args.json:
        print(json.dumps({"topology": f"E-{config.topology_spec['size']}", "kind": kind, "behaviour": args.behaviour,
                          "rule": config["reception.rule"], "rows": [r.as_dict() for r in rows]}, indent=2))
        return 0
    print(f"E-{config.topology_spec['size']}, {kind} faults"
          + (f" ({args.behaviour})" if kind == "byzantine" else "") + f", rule {config['reception.rule']}, "
          f"{args.trials} random fault sets per count (never the source)")
    _print_tolerance(rows, "correct nodes")
    return 0


def _reached_tolerance(args, config, algorithms: list[str], kind: str, count: int) -> int:
    """`harts faults` for the broadcasts whose papers claim no fault tolerance (papers 002-004, on the
    flit-level controller): per fault count, the share of non-faulty nodes the message reached whole and
    unaltered."""
    from .faults.tolerance import plot_tolerance, reached_tolerance
    from .network import build_topology
    topology = build_topology(config.topology_spec)
    if count > topology.n_nodes - 2:
        raise InputError(f"harts faults: at most {topology.n_nodes - 2} faulty nodes fit {topology.name} besides the "
                         f"source and one receiver, got {count}")
    rows = []
    for name in algorithms:
        rows += reached_tolerance(config, name, kind, count, args.trials, args.length, behaviour=args.behaviour,
                                  seed=args.seed)
    if args.plot:
        plot_tolerance(rows, args.plot)
    if args.json:
        print(json.dumps({"topology": topology.name, "kind": kind, "behaviour": args.behaviour, "report": "reached",
                          "rows": [r.as_dict() for r in rows]}, indent=2))
        return 0
    print(f"{topology.name}, {kind} faults" + (f" ({args.behaviour})" if kind == "byzantine" else "")
          + f", {args.trials} random fault sets per count (never the source): the share of non-faulty nodes the "
          f"message reached whole and unaltered")
    _print_tolerance(rows, "reached nodes")
    return 0


def _print_tolerance(rows, correct: str) -> None:
    print(f"{'algorithm':12s} {'faults':>6s} {correct:>14s} {'trials all correct':>19s} {'worst trial':>12s}")
    for r in rows:
        print(f"{r.algorithm:12s} {r.faults:6d} {r.correct_fraction:14.4f} {r.all_correct_fraction:19.3f} "
              f"{r.worst_fraction:12.4f}")


MAX_TRIALS = 10**6  # far above any useful count: a mistyped one fails at once instead of running for ever


def cmd_microcode_check(args) -> int:
    from .controller.microcode import assemble, check, listing
    program = assemble(args.file)
    check(program)
    print(f"{program.path}: '{program.name}', {len(program)} instructions, entry points receive -> "
          f"{program.entry_receive}, inject -> {program.entry_inject}")
    print(listing(program))
    return 0


def _cycle_window(text: str) -> tuple[int, int]:
    try:
        first, last = (int(part) for part in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B (cycles), got {text!r}") from None
    if not 0 <= first <= last <= MAX_CYCLES:
        raise argparse.ArgumentTypeError(f"expected 0 <= A <= B <= {bound(MAX_CYCLES)}, got {text!r}")
    return first, last


def _node_list(text: str) -> list[int]:
    try:
        nodes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected node numbers separated by commas, got {text!r}") from None
    if any(v < 0 for v in nodes):
        raise argparse.ArgumentTypeError(f"node numbers must be >= 0, got {text!r}")
    if len(set(nodes)) < len(nodes):
        raise argparse.ArgumentTypeError(f"each node may be named once, got {text!r}")
    return nodes


def cmd_trace(args) -> int:
    from .machine.simulation import Simulation, ticks_per_cycle
    from .network import build_topology
    from .tools.trace import trace_run
    config = _config(args.config, args.set)
    topology = build_topology(config.topology_spec)
    centre = args.source if args.broadcast else 0
    nodes = args.nodes if args.nodes is not None else \
        [centre, *[int(u) for u in topology.neighbours[min(centre, topology.n_nodes - 1)] if u >= 0]]
    if max(nodes) >= topology.n_nodes:
        raise InputError(f"harts trace: --nodes must be nodes of {topology.name} (0..{topology.n_nodes - 1}), "
                         f"got {max(nodes)}")
    if args.broadcast:
        from .broadcasts.runner import run_broadcast

        def run(observer):
            return run_broadcast(config, args.broadcast, args.source, args.length, observer=observer).result
    else:
        if args.source or args.length is not None:
            raise InputError("harts trace: --source and --length are a broadcast's (--broadcast)")
        simulation = Simulation(config)
        _has_traffic(config, "trace")

        def run(observer):
            return simulation.run(observer=observer)
    first, last = args.cycles
    result, changes = trace_run(run, args.vcd, nodes, first, last, config["timing.clock_period_us"],
                                ticks_per_cycle(config))
    end = int(result.cycles)
    window = f"cycles {first}..{min(last, end)}" if first <= end else f"no cycles (the run ended before cycle {first})"
    print(f"wrote {args.vcd}: nodes {','.join(map(str, nodes))}, {window} "
          f"(the run took {float(result.cycles):.0f} cycles)")
    if not changes and first <= end:
        print(f"nothing happened at nodes {','.join(map(str, nodes))} in cycles {first}..{min(last, end)}: every "
              f"signal kept its value (try other --nodes or --cycles)")
    return 0


def _sweep_options(parser) -> None:
    parser.add_argument("--quick", action="store_true", help="low precision: for CI and first tries")
    _runner_options(parser)


def _runner_options(parser) -> None:
    """How a command's points run: harts.experiments.sweep.run_tasks."""
    parser.add_argument("--resume", action="store_true", help="run only the points not in --results yet")
    parser.add_argument("--results", type=_results_directory, default="harts-results",
                        help="results directory (default: %(default)s)")
    parser.add_argument("--workers", type=_positive_int, help="local processes (default: all cores)")
    parser.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="run the points on an existing Dask distributed cluster instead")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _load_basis_option(parser) -> None:
    bases = KEY_BY_NAME["traffic.uniform.load_basis"].choices  # harts.machine.traffic.LOAD_BASES, which loads numpy
    parser.add_argument("--load-basis", choices=[*bases, "both"],
                        help="read the load as offered link utilisation, per-node generation, or both "
                             "(default: both; see traffic.uniform.load_basis)")


def _trace_window_options(parser) -> None:
    # not --cycles and --nodes, as harts trace names them: beside a config, --cycles reads as run.cycles
    parser.add_argument("--trace-cycles", type=_cycle_window, metavar="A:B",
                        help="--packet-trace keeps the visits that meet cycles A..B")
    parser.add_argument("--trace-nodes", type=_node_list, metavar="N,N,...",
                        help="--packet-trace keeps the visits at these nodes")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="harts", description="Cycle-accurate emulator of the HARTS routing controller.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run the traffic a config describes, on the kernel its microprogram's switching "
                                     "picks, and print a summary")
    run.add_argument("config", help="YAML config: a path or the name of a shipped config (docs/reference/config.md "
                                     "lists the keys); one with no traffic of its own is refused, naming the "
                                     "broadcasts that run on it")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--link-map", type=_plot_file, metavar="FILE.png",
                     help="draw every link coloured by its utilisation and every node by its BMU bus interfaces")
    run.add_argument("--packet-trace", type=_output_file, metavar="FILE.json",
                     help="write every packet's hops as a Chrome/Perfetto trace (open it at ui.perfetto.dev); times "
                          "in cycles, shown as microseconds")
    _trace_window_options(run)
    _set_option(run)
    run.set_defaults(func=cmd_run)

    cal = sub.add_parser("calibrate", help="measure S, r, d at zero load and the residual of S + rM + (h-1)d "
                                           "(wormhole: M in flits; circuit: alpha + h delta + L tau)")
    cal.add_argument("--config", help="YAML config (default: built-in defaults, E-5); its topology and timing, "
                                      "not its traffic: the probes run alone, one at a time from node 0 to every "
                                      "node; a config with faults is refused")
    cal.add_argument("--json", action="store_true",
                     help="print the fit as JSON: the model, its terms (S_cycles, r_cycles_per_flit, "
                          "d_cycles_per_hop, or alpha_cycles, delta_cycles_per_hop, tau_cycles_per_flit) and "
                          "max_residual_cycles")
    _set_option(cal)
    cal.set_defaults(func=cmd_calibrate)

    bcast = sub.add_parser("broadcast", help="run one broadcast and report its latency and copies")
    bcast.add_argument("--algorithm", required=True, choices=choices.BROADCASTS,
                       help="which broadcast; docs/reference/broadcasts.md gives the networks, switching and "
                            "NP ports of each, and a pair that does not fit is refused before anything runs")
    bcast.add_argument("--size", type=_mesh_size, help="Kandlur & Shin's algorithms: run on the hexagonal mesh E-size "
                                                       "(default: the config's topology, which must be hex)")
    bcast.add_argument("--source", type=_non_negative_int, default=0)
    bcast.add_argument("--length", type=_positive_int, help="message length: bytes for Kandlur & Shin's algorithms "
                                                            "(default 64), flits for the others (default 100)")
    bcast.add_argument("--packets", type=_positive_int, help="dc, htree: packets the message (htree: each half) "
                                                             "is cut into (default: the paper's B_opt, rounded)")
    bcast.add_argument("--variant", choices=["slanting", "square_blocks", "four_squares"],
                       help="tiling on the 10x10 torus: which of the paper's three (default: slanting)")
    bcast.add_argument("--partition", choices=["horizontal", "vertical"],
                       help="pcp: the two sides step 1 covers (default: the nearer allowed pair)")
    bcast.add_argument("--config", help="YAML config; its traffic, if any, runs in the background and the "
                                        "broadcast starts at run.warmup_cycles")
    bcast.add_argument("--json", action="store_true", help="also list every copy: node, arrival, path")
    bcast.add_argument("--plot", type=_plot_file, metavar="FILE.png",
                       help="draw the broadcast tree on the network (tiling, dc, htree: one panel per phase)")
    bcast.add_argument("--link-map", type=_plot_file, metavar="FILE.png",
                       help="draw every link coloured by its utilisation and every node by what fills first in it")
    bcast.add_argument("--packet-trace", type=_output_file, metavar="FILE.json",
                       help="write every packet's hops as a Chrome/Perfetto trace (open it at ui.perfetto.dev); times "
                            "in cycles, shown as microseconds")
    _trace_window_options(bcast)
    _set_option(bcast)
    bcast.set_defaults(func=cmd_broadcast)

    faults = sub.add_parser("faults", help="what a broadcast tolerates: random crashed or Byzantine nodes, and "
                                           "what every non-faulty node decides (Kandlur & Shin's) or whether it "
                                           "was reached (the others')")
    faults.add_argument("--algorithm", required=True,
                        help="a broadcast of harts broadcast, a comma list, or 'all' (every one that runs on the "
                             "config)")
    faults.add_argument("--size", type=_mesh_size, help="Kandlur & Shin's algorithms: run on the hexagonal mesh E-size "
                                                        "(default: the config's topology)")
    which = faults.add_mutually_exclusive_group(required=True)
    which.add_argument("--crash", type=_non_negative_int, metavar="F", help="up to F crashed nodes")
    which.add_argument("--byzantine", type=_non_negative_int, metavar="F", help="up to F Byzantine nodes")
    faults.add_argument("--behaviour", choices=["alter", "drop", "bogus"], default="alter",
                        help="what the Byzantine nodes do (default: %(default)s)")
    faults.add_argument("--rule", choices=["majority", "first-valid"], help="reception rule (default: config)")
    faults.add_argument("--trials", type=_int_from(1, "positive", MAX_TRIALS), default=100,
                        help="random fault sets per count")
    faults.add_argument("--length", type=_positive_int,
                        help="message length: bytes for Kandlur & Shin's algorithms (default 64), flits for the others "
                             "(default 100)")
    faults.add_argument("--seed", type=_non_negative_int, default=1)
    faults.add_argument("--config", help="YAML config (background traffic, reception deadline, ...); one with node "
                                         "or link faults of its own is refused, as each trial draws its own")
    faults.add_argument("--json", action="store_true",
                        help="print every count's results as JSON; \"report\" says what they measure: \"decisions\" "
                             "or \"reached\"")
    faults.add_argument("--plot", type=_plot_file, metavar="FILE.png",
                        help="correct-decision fraction against faults")
    _set_option(faults)
    faults.set_defaults(func=cmd_faults)

    microcode = sub.add_parser("microcode", help="tools for microprograms")
    microcode_sub = microcode.add_subparsers(dest="tool", required=True, parser_class=_Parser)
    check = microcode_sub.add_parser("check", help="assemble a microprogram; print its listing (address, label, "
                                                   "instruction, operands, cycles; * marks a shared instruction) or "
                                                   "its errors with line numbers")
    check.add_argument("file", help="the microprogram's YAML file")
    check.set_defaults(func=cmd_microcode_check)

    trace = sub.add_parser("trace", help="write a VCD waveform of chosen nodes (open it in GTKWave)")
    trace.add_argument("config", help="YAML config: a path or the name of a shipped config; its traffic runs")
    trace.add_argument("--vcd", type=_output_file, required=True, metavar="OUT.vcd", help="the VCD file to write")
    trace.add_argument("--nodes", type=_node_list, help="comma list (default: node 0 and its neighbours)")
    trace.add_argument("--cycles", type=_cycle_window, default=(0, 2000), metavar="A:B",
                       help="cycles to record (default: 0:2000)")
    trace.add_argument("--broadcast", metavar="ALGORITHM", choices=choices.BROADCASTS,
                       help="also run one broadcast of harts broadcast over the config's traffic (an idle config "
                            "then has something to trace); nodes default to its source and the source's neighbours")
    trace.add_argument("--source", type=_non_negative_int, default=0, help="--broadcast's source (default 0)")
    trace.add_argument("--length", type=_positive_int, help="--broadcast's length (as harts broadcast's)")
    _set_option(trace)
    trace.set_defaults(func=cmd_trace)

    figure = sub.add_parser("figure", help="reproduce one of Kandlur & Shin's Figs 10-14 (PNG and CSV)")
    figure.add_argument("number", type=int, choices=[10, 11, 12, 13, 14])
    _sweep_options(figure)
    _load_basis_option(figure)
    figure.set_defaults(func=cmd_figure)

    again = sub.add_parser("reproduce", help="reproduce Kandlur & Shin's Figs 10-14, Lee & Shin's Tables II-IV, "
                                             "Al-Dubai et al.'s Figs 4-6, Al-Mahadeen & Omari's MH broadcast or "
                                             "Peters & Syska's torus broadcasts")
    again.add_argument("--paper", choices=["000", "001", "002", "003", "004"], default="000",
                       help="000: Kandlur & Shin's Figs 10-14 (default); 001: Lee & Shin's Tables II-IV and "
                            "the time against background load (--quick and --load-basis do not apply); 002: "
                            "Al-Dubai et al.'s Figs 4-6 (PCP against RD, EDN, NP-D) and a deadlock check under "
                            "load, with our Cray T3D mapping (configs/t3d_mesh_8x8.yaml); 003: Al-Mahadeen & "
                            "Omari's MH(9,8) example, steps against MH(m, n) and the links shared for n >= 16; "
                            "004: Peters & Syska's tiling, divide-and-conquer and H-trees against their formulas, "
                            "Table 1, time against N and L, the H-tree claims, phases under background traffic "
                            "(--load-basis does not apply to 002-004; --quick runs smaller sizes)")
    _sweep_options(again)
    _load_basis_option(again)
    again.set_defaults(func=cmd_reproduce)

    load = sub.add_parser("load", help="latency against offered load of a wormhole or circuit microprogram on the "
                                       "8x8 mesh and torus, four traffic patterns, against their channel-load bounds")
    load.add_argument("--microcode", default="wormhole", choices=["wormhole", "wormhole_adaptive", "circuit"],
                      help="microprogram (default: %(default)s)")
    load.add_argument("--all-routers", action="store_true",
                      help="also 2 VCs x 16 flits, 4 x 8 and 4 x 16 beside the default 2 VCs x 8-flit buffers")
    load.add_argument("--torus-tie", default="random", choices=["random", "positive"],
                      help="routing.torus_tie on the torus, and the channel-load bound under it (default: %(default)s)")
    _sweep_options(load)
    load.set_defaults(func=cmd_load)

    sweep_ = sub.add_parser("sweep", help="latency against offered load on any config, per traffic pattern, and "
                                           "each pattern's saturation throughput; or per broadcast algorithm "
                                           "(--broadcast), of which harts figure is a preset")
    sweep_.add_argument("config", help="YAML config: a path or the name of a shipped config")
    _set_option(sweep_)
    measures = sweep_.add_mutually_exclusive_group()
    measures.add_argument("--pattern", metavar="P[,P...]",
                          help=f"traffic patterns (default: the config's traffic.synthetic.pattern): "
                               f"{', '.join(KEY_BY_NAME['traffic.synthetic.pattern'].choices)}")
    measures.add_argument("--broadcast", metavar="ALG[,ALG...]",
                          help=f"instead of patterns, broadcast latency and mean delivery time per algorithm under "
                               f"Kandlur & Shin's workload on a hexagonal mesh, replicated to 95%% confidence "
                               f"intervals within 5%% of the means: {', '.join(choices.BROADCASTS[:8])}")
    sweep_.add_argument("--baseline", metavar="ALG",
                        help="with --broadcast: also each algorithm's percent increase over this one's, from paired "
                             "replications (the saturation probe runs it)")
    sweep_.add_argument("--quick", action="store_true",
                        help="with --broadcast: two short replications a point, for first tries")
    loads = sweep_.add_mutually_exclusive_group()
    loads.add_argument("--rates", metavar="A:B:STEP|LIST",
                       help="offered loads in flits/node/cycle (traffic.synthetic.rate; the config's "
                            "traffic.uniform.load is set to 0, and --set can give it back as background), or with "
                            "--broadcast the loads traffic.uniform.load takes: A:B:STEP (B included) or a comma list")
    loads.add_argument("--bound-fractions", metavar="A:B:STEP|LIST",
                       help="offered loads as fractions of each pattern's channel-load bound (default: 0.1:1:0.1 "
                            "unless --rates is given)")
    sweep_.add_argument("--to-saturation", action="store_true",
                        help="also find each pattern's saturation throughput: the accepted throughput of the "
                             "largest offered load at which every seed's run is stable, bracketed to 1%% of the "
                             "offered load; with --broadcast, the first load in steps of 0.1 at which the network "
                             "carries under 95%% of the regular bytes, and without --rates the loads 0.05, 0.1, ... "
                             "up to it")
    sweep_.add_argument("--seeds", type=_int_from(1, "positive", 1000), default=1,
                        help="runs per point, seeds run.seed, run.seed + 1, ... (default: %(default)s)")
    sweep_.add_argument("--plot", type=_plot_file, metavar="FILE.png",
                        help="latency against accepted throughput, a curve per pattern, saturation marked")
    _runner_options(sweep_)
    sweep_.set_defaults(func=cmd_sweep)

    ata = sub.add_parser("ata", help="Lee & Shin's all-to-all reliable broadcast in dedicated mode, against "
                                      "its Table II formula (cut-through configs only)")
    ata.add_argument("--algorithm", choices=choices.ATA_ALGORITHMS, default="ihc",
                     help="ihc (any network with a decomposition), ks (KS-ATA: 6-BCAST from each node in "
                          "turn, hexagonal mesh), vsq (VSQ-ATA, square torus of odd side), vrs (VRS-ATA: "
                          "cut-through RS from each node in turn, hypercube) or frs (Fraigniaud: "
                          "store-and-forward, merged, hypercube)")
    ata.add_argument("--config", help="YAML config: its topology (default: built-in defaults, E-5)")
    ata.add_argument("--eta", type=_positive_int, help="interleaving distance: stages (default: the smallest "
                                                       "eta >= mu that divides the number of nodes)")
    ata.add_argument("--mu", type=_positive_int, default=2, help="packet length in FIFO lengths (default: 2)")
    ata.add_argument("--length", type=_positive_int, help="packet length in bytes (default: from --mu)")
    ata.add_argument("--overlapped", action="store_true",
                     help="start each stage (mu-1) alpha early, stages in reverse order (section VI-A)")
    ata.add_argument("--queueing", type=_non_negative_int, metavar="D",
                     help="the worst case (section VI-B): every hop stored and forwarded, waiting D cycles more")
    ata.add_argument("--json", action="store_true")
    ata.add_argument("--plot", type=_plot_file, metavar="FILE.png",
                     help="copies delivered against time, with the formula's completion (with faults: the "
                          "correct fraction against faults)")
    fault = ata.add_mutually_exclusive_group()
    fault.add_argument("--crash", type=_non_negative_int, metavar="F",
                       help="fault trials instead of one run: up to F crashed nodes")
    fault.add_argument("--byzantine", type=_non_negative_int, metavar="F", help="... up to F Byzantine nodes")
    fault.add_argument("--dead-links", type=_non_negative_int, metavar="F", help="... up to F dead links (both ways)")
    ata.add_argument("--behaviour", choices=["alter", "drop", "bogus"], default="alter",
                     help="what the Byzantine nodes do (default: %(default)s)")
    ata.add_argument("--trials", type=_int_from(1, "positive", MAX_TRIALS), default=20,
                     help="random fault sets per count (default: %(default)s)")
    ata.add_argument("--seed", type=_non_negative_int, default=1, help="seed of the fault sets (default: 1)")
    _set_option(ata)
    ata.set_defaults(func=cmd_ata)

    sweep = sub.add_parser("sensitivity", help="saturation against BMU structure, and the 4/5/6-BCAST spread "
                                                "against d / (S + rM) (PNG and CSV)")
    _sweep_options(sweep)
    sweep.set_defaults(func=cmd_sensitivity)

    bench = sub.add_parser("bench", help="packet-hops and node-cycles per second under uniform Poisson traffic")
    bench.add_argument("--config", help="YAML config (default: E-9 at load 0.3 for 50,000 cycles)")
    bench.add_argument("--load", type=_load, help="traffic.uniform.load (default: the config's)")
    bench.add_argument("--cycles", type=_int_from(1, "positive", MAX_CYCLES), help="run.cycles (default: the config's)")
    bench.add_argument("--seed", type=_int_from(0, "non-negative", KEY_BY_NAME["run.seed"].maximum),
                       help="run.seed (default: the config's)")
    bench.add_argument("--json", action="store_true")
    _set_option(bench)
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """The `harts` command (argv None: the process's own arguments) or, given argv, the same in-process."""
    # Starting OpenBLAS's threads took about 0.05 s of every start that imports numpy, and nothing harts
    # computes uses BLAS; set before anything imports numpy, unless the user chose a count.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    code = _command(argv)
    if argv is None:
        # The process ends next. Python's shutdown collects and then frees every object numba and numpy
        # made, which took about 0.18 s of a 0.64 s 1,000-cycle `harts run`; frozen, they are left to the OS.
        gc.freeze()
    return code


def _command(argv: list[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except InputError as exc:
        print(f"harts: error: {exc}", file=sys.stderr)
        return 2
    except SimulationError as exc:
        print(f"harts: simulation error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("harts: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
