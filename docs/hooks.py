"""The reference pages, filled in from the code as the site is built (mkdocs.yml lists this file under `hooks:`).

A page asks for a generated part with a line of its own, `<!-- generated: NAME -->`:

* `config-keys`: every key of harts.machine.config.KEYS, with its type, default, allowed values, kernels and meaning;
* `commands`: every command and option of harts.cli.build_parser();
* `result-fields`: every field of harts.machine.results.RESULT_FIELDS, which `harts run` prints from;
* `instructions cut-through` and `instructions flit`: the micro-instruction set of one kernel, the names from
  harts.controller.isa and the assembler's operand tables, the meanings from harts.instructions;
* `broadcasts`: which broadcast runs where, one row per group of algorithms of harts.broadcasts.table.BROADCASTS;
* `bench-table NAME`: a table of a benchmark's results in bench/results/ (NAME: speed, sizes, events, start,
  booksim2-speed, size-sweep, memory-reads, sweep-overhead, trace-memory; BENCH_TABLES below);
* `booksim2-table NAME`: harts against BookSim2 from bench/results/booksim2/ (saturation, saturation_full, patterns,
  seeds, overload, bottleneck);
* `include FILE`: a document of the repository (MODEL.md, say), its links into docs/ made relative to the page.

An unknown name fails the build. tests/test_docs_site.py imports this file to check what it generates.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- generated: (.+?) -->$", re.MULTILINE)
KERNEL_NAMES = {"cut-through": "cut-through", "flit": "flit-level"}
KERNEL_FIELDS = {"cut-through": "cut_through", "flit": "flit"}  # harts.instructions.Meaning's


def on_page_markdown(markdown: str, page, **_) -> str:
    """MkDocs' hook: each marker replaced by what it names."""
    depth = page.file.src_uri.count("/")
    return MARKER.sub(lambda match: generate(match.group(1), depth), markdown)


def generate(name: str, depth: int = 0) -> str:
    """The Markdown a marker names; `depth`: how many folders below docs/ the page is."""
    kind, _, argument = name.partition(" ")
    if kind == "include":
        return include(argument, depth)
    makers = {"config-keys": config_keys, "commands": commands, "result-fields": result_fields,
              "instructions": instructions, "broadcasts": broadcasts,
              "bench-table": bench_table, "booksim2-table": booksim2_table}
    if kind not in makers:
        raise ValueError(f"unknown generated part {name!r}, expected one of {', '.join(makers)} or include FILE")
    return makers[kind](argument) if argument else makers[kind]()


def include(path: str, depth: int) -> str:
    """A repository document; its links to docs/ (written from the document's own folder, as GitHub reads them:
    `docs/...` from the root, `../docs/...` from microcode/) point from the page instead."""
    text = (ROOT / path).read_text()
    to_docs = Path(os.path.relpath(ROOT / "docs", (ROOT / path).parent)).as_posix()
    return text.replace(f"]({to_docs}/", "](" + "../" * depth)


def cell(text: str) -> str:
    """Text that stays in one table cell: a | outside a code span escaped (inside one it is kept as it is)."""
    parts = text.replace("\n", " ").split("`")
    return "`".join(part if i % 2 else part.replace("|", "\\|") for i, part in enumerate(parts))


# ---- config keys -------------------------------------------------------------------------------------------------

TYPES = {"int": "integer", "float": "number", "str": "string", "list": "list", "mapping": "mapping",
         "ints": "list of integers", "numbers": "list of numbers"}


def yaml_value(value) -> str:
    """A value as a config file writes it."""
    value = list(value) if isinstance(value, tuple) else value
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("\n...").strip()


def read_by(kernels: tuple[str, ...]) -> str:
    names = [f"the {KERNEL_NAMES[k]} kernel" for k in kernels]
    return "Read by " + " and ".join(names) + "."


def config_keys() -> str:
    from harts.machine.config import KEYS
    lines = []
    section = None
    for key in KEYS:
        head = key.name.split(".")[0] if "." in key.name else "Top level"
        if head != section:
            section = head
            lines += [f"## {head}", ""]
        allowed = key.choices and "one of " + ", ".join(f"`{c}`" for c in key.choices) or key.allowed
        facts = [TYPES[key.kind], f"default `{yaml_value(key.default)}`"] + ([allowed] if allowed else [])
        facts[0] = facts[0].capitalize()
        lines += [f"### `{key.name}`", "", f"{', '.join(facts)}. {read_by(key.kernels)}", "",
                  key.meaning[0].upper() + key.meaning[1:] + ".", ""]
    return "\n".join(lines)


# ---- commands ----------------------------------------------------------------------------------------------------

def command_parsers(parser: argparse.ArgumentParser, path: str = "harts"):
    """(command, its parser, its one-line help) for every command that runs, subcommands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from command_parsers(sub, f"{path} {name}")
                else:
                    yield f"{path} {name}", sub, helps[name]


def arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's arguments as its --help lists them, -h apart."""
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def argument_name(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    takes_value = action.nargs != 0
    return " ".join(action.option_strings) + (f" {action.metavar or action.dest.upper()}"
                                              if takes_value and not action.choices else "")


def argument_meaning(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = argparse.HelpFormatter(parser.prog)._expand_help(action) if action.help else ""
    notes = []
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        notes.append("One of " + ", ".join(f"`{c}`" for c in action.choices) + ".")
    if action.required and action.option_strings:
        notes.append("Required.")
    for group in parser._mutually_exclusive_groups:
        if action in group._group_actions:
            others = [a.option_strings[0] for a in group._group_actions if a is not action]
            notes.append(("Exactly one of this and " if group.required else "Not with ")
                         + ", ".join(f"`{o}`" for o in others) + ".")
    if text and not text.endswith("."):
        text += "."
    return " ".join([text] + notes).strip()


def argument_default(action: argparse.Action) -> str:
    default = action.default
    if default is None or default is False or default == [] or "default" in (action.help or ""):
        return ""
    return f"`{default}`"


def commands() -> str:
    from harts.cli import build_parser
    lines = []
    for path, parser, help_text in command_parsers(build_parser()):
        formatter = argparse.HelpFormatter(parser.prog, width=88)
        formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
        lines += [f"## {path}", "", help_text[0].upper() + help_text[1:] + ".", "", "```text",
                  formatter.format_help().strip(), "```", "", "| argument | meaning | default |", "|---|---|---|"]
        lines += [f"| {cell('`' + argument_name(a) + '`')} | {cell(argument_meaning(parser, a))} | "
                  f"{argument_default(a)} |" for a in arguments(parser)]
        lines.append("")
    return "\n".join(lines)


# ---- result fields -----------------------------------------------------------------------------------------------

def result_fields() -> str:
    from harts.machine.results import RESULT_FIELDS
    lines = ["| field | unit | kernels | meaning |", "|---|---|---|---|"]
    for field in RESULT_FIELDS:
        kernels = " and ".join(KERNEL_NAMES[k] for k in field.kernels)
        lines.append(f"| `{field.name}` | {cell(field.unit)} | {kernels} | {cell(field.meaning)} |")
    return "\n".join(lines) + "\n"


# ---- micro-instructions ------------------------------------------------------------------------------------------

# Operands the assembler refuses on one kernel though the instruction takes them on the other (tests/test_docs_site.py
# checks that it does): `vc` picks a virtual channel, which cut-through has not; `until` reads a header field, which
# a flit-level packet has not.
OPERANDS_NOT_ON = {"cut-through": {"vc"}, "flit": {"until"}}


def operands(name: str, kernel: str) -> str:
    from harts.controller import microcode
    required = sorted(microcode._REQUIRED.get(name, ()))
    optional = sorted(microcode._ALLOWED.get(name, set()) - OPERANDS_NOT_ON[kernel])
    return ", ".join([f"`{o}`" for o in required] + [f"[`{o}`]" for o in optional]) or "–"


def switchings(name: str) -> str:
    """The flit-level switchings whose assembler takes the instruction."""
    from harts.controller import isa
    return ", ".join(s for s in ("wormhole", "circuit") if name not in isa.NOT_IN[isa.SWITCHINGS[s]])


def meanings_table(header: str, meanings: dict, kernel: str | None) -> list[str]:
    """A table `| name | meaning |` of harts.instructions, one kernel's meanings (None: a table of one meaning only)."""
    rows = [f"| {header} | meaning |", "|---|---|"]
    for name, meaning in meanings.items():
        text = meaning if kernel is None else getattr(meaning, KERNEL_FIELDS[kernel])
        if text is not None:
            rows.append(f"| `{name}` | {cell(text)} |")
    return rows + [""]


def instructions(kernel: str) -> str:
    """The instruction set of the cut-through or the flit-level kernel: instructions, conditions, routes (and, at
    flit level, VC policies), each with its meaning on that kernel."""
    from harts import instructions as meaning
    from harts.controller import isa
    flit = kernel == "flit"
    lines = ["## Instructions", "",
             "| instruction | operands | " + ("switching | " if flit else "") + "shared | meaning |",
             "|---|---|---|---|" + ("---|" if flit else "")]
    for name, texts in meaning.INSTRUCTIONS.items():
        text = getattr(texts, KERNEL_FIELDS[kernel])
        if text is None:
            continue
        shared = "yes" if isa.OPCODES[name] in isa.SHARED else ""
        lines.append(f"| `{name}` | {operands(name, kernel)} | " + (f"{switchings(name)} | " if flit else "")
                     + f"{shared} | {cell(text)} |")
    lines += ["", "Every instruction also takes `label`, `cycles` (default 1) and `comment`.",
              "Operands in brackets are optional.", "", "## Conditions (`branch`)", ""]
    lines += meanings_table("condition", meaning.CONDITIONS, kernel)
    comparisons = " ".join(f"`{c}`" for c in isa.COMPARISONS)
    operand = "a pseudo-field (a flit-level packet has no fields)" if flit else "a declared field or a pseudo-field"
    lines += [f"A condition may also be a comparison `F OP K`: F is {operand}, K an integer.",
              f"OP is one of {comparisons}; `F & K` holds when F and K share a bit.", ""]
    lines += meanings_table("pseudo-field", meaning.PSEUDO_FIELDS, kernel)
    lines += ["## Routes (`via`)", ""]
    lines += meanings_table("route", meaning.VIAS, kernel)
    if flit:
        lines += ["## Virtual channels (`vc`)", "", "A `forward` takes the lowest free VC its policy allows.",
                  "With `flow.vc_choice: round_robin` it takes the first free one after the last one its port gave.",
                  ""]
        lines += meanings_table("policy", meaning.VCS, None)
    return "\n".join(lines)


# ---- broadcasts --------------------------------------------------------------------------------------------------

PAPERS = {"000": "Kandlur & Shin", "001": "Lee & Shin", "002": "Al-Dubai et al.", "003": "Al-Mahadeen & Omari",
          "004": "Peters & Syska"}  # harts.broadcasts.table.Broadcast.paper, by the authors' names
BROADCAST_HEADER = [("| algorithm | paper | networks | switching: shipped microprograms | NP ports | "
                     "`harts faults` reports | runs on |"), "|---|---|---|---|---|---|---|"]


def broadcast_rows() -> list[tuple[str, ...]]:
    """The cells of the table, one row per run of algorithms of BROADCASTS that share everything but the name."""
    from itertools import groupby

    from harts.broadcasts.table import BROADCASTS
    from harts.controller.microcode import assemble
    from harts.machine.config import MICROCODE_DIR
    programs = {p.stem: assemble(p) for p in sorted(MICROCODE_DIR.glob("*.yaml"))}
    rows = []
    for (paper, topology, switching, all_port, faults, config), group in groupby(
            BROADCASTS.values(), key=lambda b: (b.paper, b.topology, b.switching, b.all_port, b.faults, b.config)):
        fitting = ", ".join(name for name, program in programs.items() if switching.fits(program))
        rows.append((", ".join(f"`{b.name}`" for b in group), PAPERS[paper], topology, f"{switching}: {fitting}",
                     "all-port (`flow.np_channels: 0`)" if all_port else "any", faults, f"`{config}`"))
    return rows


def broadcasts() -> str:
    """Which broadcast runs where: networks, switching and the shipped microprograms that fit, NP ports, what
    `harts faults` reports, and a shipped config it runs on."""
    return "\n".join(BROADCAST_HEADER + ["| " + " | ".join(cell(c) for c in row) + " |" for row in broadcast_rows()]) \
        + "\n"


# ---- benchmark results (docs/explanation/performance.md) ----------------------------------------------------------

RESULTS = ROOT / "bench" / "results"


def result_file(name: str) -> Path:
    """bench/results/NAME; a missing file fails the build (the page would show no figures)."""
    path = RESULTS / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: a page shows its figures (rerun the script that writes it)")
    return path


def result_json(name: str) -> dict:
    import json
    return json.loads(result_file(name).read_text())


def result_csv(name: str) -> list[dict]:
    import csv
    with result_file(name).open(newline="") as rows:
        return list(csv.DictReader(rows))


def source(name: str, script: str) -> str:
    return f"From `bench/results/{name}`, written by `python bench/{script}`.\n"


def millions(value: float) -> str:
    return f"{value / 1e6:.2f} M"


def bench_speed() -> str:
    """Each kernel against its limit, point by point (bench/speed.py's summary), and speed.py's two verdicts."""
    data = result_json("speed.json")
    lines = ["| kernel | network | load | engine | limit | engine / limit |", "|---|---|---|---|---|---|"]
    for p in data["points"]:
        load = f"link load {p['load']}" if p["kernel"] == "cut-through" else f"{p['load']} flits/node/cycle" \
            if "bound" not in str(p["load"]) else str(p["load"])
        lines.append(f"| {p['kernel']} | {p['network']} | {load} | {millions(p['engine'])} {p['unit']} | "
                     f"{millions(p['limit'])} {p['unit']} | {p['engine_over_limit']:.2f} |")
    verdicts = "; ".join(f"{name}: {'yes' if met else 'no'}" for name, met in data["meets"].items())
    return "\n".join(lines) + "\n\n" + f"bench/speed.py's checks in this run: {verdicts}.\n\n" \
        + source("speed.json", "speed.py")


def bench_sizes() -> str:
    """Flatness in size: the large network's rate over the small one's, at the same load (bench/speed.py)."""
    data = result_json("speed.json")
    lines = ["| ratio | load | large / small |", "|---|---|---|"]
    for name, ratios in data["sizes"].items():
        lines += [f"| {name} | {load} | {value:.2f} |" for load, value in ratios.items()]
    return "\n".join(lines) + "\n\n" + source("speed.json", "speed.py")


def bench_events() -> str:
    """What the cut-through kernel's time follows: events and micro-instructions, against node-cycles."""
    data = result_json("cut_through_limit.json")
    lines = ["| network | link load | node-cycles | packet-hops | engine events | events per packet-hop | "
             "micro-instructions per packet-hop | the limit's events per packet-hop |",
             "|---|---|---|---|---|---|---|---|"]
    for p in data["points"]:
        hops = p["packet_hops"]
        lines.append(f"| {p['network']} | {p['load']} | {p['nodes'] * p['cycles_of_traffic']:,} | {hops:,} | "
                     f"{p['engine_events']:,} | {p['engine_events'] / hops:.2f} | "
                     f"{p['engine_microinstructions'] / hops:.2f} | {p['limit_events'] / hops:.2f} |")
    return "\n".join(lines) + "\n\n" + source("cut_through_limit.json", "cut_through_limit.py")


def start_command(name: str, cycles: int) -> str:
    if name == "help":
        return "`harts --help`"
    if name.startswith("run "):
        return f"`harts run` of configs/{name.removeprefix('run ')}.yaml, {cycles:,} cycles"
    return "a process that only imports numpy and numba" if name == "import numpy, numba" else name


def bench_start() -> str:
    """Whole-process start-up, kernels in the disk cache (bench/start.py), and the sweep's kernel loads."""
    data = result_json("start.json")
    cycles = data["run_config"]["cycles"]
    lines = [f"| command (whole process, median of {data['runs']}) | wall seconds | fastest, slowest | "
             "loading the kernel | aim |", "|---|---|---|---|---|"]
    for name, entry in data["whole_process_seconds"]["this"].items():
        wall = entry["wall"]
        load = f"{entry['kernel_load']['median']:.3f} s" if "kernel_load" in entry else ""
        target = data["targets"].get(name)
        aim = f"under {target['target_seconds']:g} s" if target else ""
        lines.append(f"| {start_command(name, cycles)} | {wall['median']:.3f} | {wall['min']:.3f}, "
                     f"{wall['max']:.3f} | {load} | {aim} |")
    text = "\n".join(lines) + "\n\n"
    sweep = data.get("sweep")
    if sweep:
        text += (f"A sweep of {sweep['points']} such points on {sweep['workers']} worker processes ran "
                 f"{sweep['points_per_second']:.0f} points per second. Its workers loaded "
                 f"{sweep['kernel_loads_in_workers']} kernels: the parent loaded them before it forked.\n\n")
    return text + source("start.json", "start.py")


def bench_booksim2_speed() -> str:
    """harts and BookSim2 on the same 8x8 mesh, whole process and marginal (bench/booksim2_speed.py)."""
    data = result_json("booksim2_speed.json")
    if data.get("booksim2_skipped_because"):
        lines = ["| flits/node/cycle | harts, whole process | harts, marginal |", "|---|---|---|"]
        lines += [f"| {p['rate_flits_per_node_cycle']} | {millions(p['harts']['whole_process_router_cycles_per_second'])}"
                  f" | {millions(p['harts']['marginal_router_cycles_per_second'])} |" for p in data["points"]]
        note = f"BookSim2 did not run: {data['booksim2_skipped_because']}.\n\n"
    else:
        lines = ["| flits/node/cycle | BookSim2, whole / marginal | harts, whole / marginal | "
                 "harts / BookSim2, whole / marginal |", "|---|---|---|---|"]
        for p in data["points"]:
            b, h = p["booksim2"], p["harts"]
            lines.append(f"| {p['rate_flits_per_node_cycle']} | "
                         f"{millions(b['whole_process_router_cycles_per_second'])} / "
                         f"{millions(b['marginal_router_cycles_per_second'])} | "
                         f"{millions(h['whole_process_router_cycles_per_second'])} / "
                         f"{millions(h['marginal_router_cycles_per_second'])} | "
                         f"{p['whole_process_ratio_harts_over_booksim2']:.1f}x / "
                         f"{p['marginal_ratio_harts_over_booksim2']:.1f}x |")
        note = ""
    return "\n".join(lines) + "\n\nRates in router-cycles per second.\n\n" + note \
        + source("booksim2_speed.json", "booksim2_speed.py")


def bench_size_sweep() -> str:
    """Time per hop and table bytes from E-5 to E-41 and from the 8x8 to the 64x64 torus (bench/size_sweep.py)."""
    data = result_json("size_sweep.json")
    mb = 2 ** 20
    lines = []
    if data.get("cut_through"):
        lines += [f"| cut-through, link load {data['cut_through'][0]['load']} | nodes | engine, ns per packet-hop | "
                  "limit, ns per packet-hop | engine's tables, MB | limit's tables, MB | events per packet-hop | "
                  "micro-instructions per packet-hop |", "|---|---|---|---|---|---|---|---|"]
        for p in data["cut_through"]:
            hops = p["packet_hops"]
            lines.append(f"| {p['network']} | {p['nodes']:,} | {p['engine_ns_per_hop']:.0f} | "
                         f"{p['limit_ns_per_hop']:.0f} | {p['engine_table_bytes'] / mb:.2f} | "
                         f"{p['limit_table_bytes'] / mb:.2f} | {p['engine_events'] / hops:.2f} | "
                         f"{p['engine_microinstructions'] / hops:.2f} |")
        lines.append("")
    if data.get("flit"):
        lines += [f"| flit level, {data['flit'][0]['rate_of_bound']:g} of the channel-load bound | "
                  "engine, ns per flit-hop | limit, ns per flit-hop | engine's tables, MB | limit's tables, MB |",
                  "|---|---|---|---|---|"]
        lines += [f"| {p['network']} | {p['engine_ns_per_flit_hop']:.0f} | {p['limit_ns_per_flit_hop']:.0f} | "
                  f"{p['engine_table_bytes'] / mb:.2f} | {p['limit_table_bytes'] / mb:.2f} |" for p in data["flit"]]
        lines.append("")
    return "\n".join(lines) + "\n" + source("size_sweep.json", "size_sweep.py")


def bench_memory_reads() -> str:
    """This machine's time for one random read against the bytes read over (bench/size_sweep.py's memory part)."""
    data = result_json("size_sweep.json")
    lines = ["| bytes read at random | ns per read |", "|---|---|"]
    for p in data["memory"]:
        size = p["bytes"]
        shown = f"{size // 2**20} MB" if size >= 2**20 else f"{size // 2**10} KB"
        lines.append(f"| {shown} | {p['ns_per_read']:.1f} |")
    return "\n".join(lines) + "\n\n" + source("size_sweep.json", "size_sweep.py")


def bench_sweep_overhead() -> str:
    """A sweep's wall time over its points' own simulate times (bench/sweep_overhead.py)."""
    import statistics
    data = result_json("sweep_overhead.json")
    lines = ["| workers | points | wall seconds | the points' simulate seconds | wall / simulate |",
             "|---|---|---|---|---|"]
    for key in sorted(k for k in data if k.startswith("workers_")):
        runs = data[key]["runs"]
        lines.append(f"| {key.removeprefix('workers_')} | {runs[0]['points']} | "
                     f"{statistics.median(r['wall_seconds'] for r in runs):.2f} | "
                     f"{statistics.median(r['simulate_seconds'] for r in runs):.2f} | "
                     f"{data[key]['median_ratio']:.2f} |")
    command = " ".join(data["command"])
    return "\n".join(lines) + f"\n\nMedians of {len(runs)} runs of `{command}`.\n\n" \
        + source("sweep_overhead.json", "sweep_overhead.py")


def bench_trace_memory() -> str:
    """Peak memory of `harts run` on a trace file against the trace's length (bench/trace_memory.py)."""
    data = result_json("trace_memory.json")
    lines = ["| packets in the trace | trace file, MB | cycles | peak RSS, MB | wall seconds |", "|---|---|---|---|---|"]
    lines += [f"| {p['packets']:,} | {p['trace_megabytes']:.1f} | {p['trace_cycles']:,} | "
              f"{p['peak_rss_megabytes']:.1f} | {p['wall_seconds']:.1f} |" for p in data["points"]]
    return "\n".join(lines) + f"\n\nThe network is {data['config']}.\n\n" \
        + source("trace_memory.json", "trace_memory.py")


BENCH_TABLES = {"speed": bench_speed, "sizes": bench_sizes, "events": bench_events, "start": bench_start,
                "booksim2-speed": bench_booksim2_speed, "size-sweep": bench_size_sweep,
                "memory-reads": bench_memory_reads, "sweep-overhead": bench_sweep_overhead,
                "trace-memory": bench_trace_memory}


def bench_table(name: str) -> str:
    if name not in BENCH_TABLES:
        raise ValueError(f"unknown bench-table {name!r}, expected one of {', '.join(BENCH_TABLES)}")
    return BENCH_TABLES[name]()


# ---- harts against BookSim2 (docs/explanation/validation.md) ------------------------------------------------------

def booksim2_saturation(stem: str) -> str:
    """bench/booksim2_compare.py's uniform-traffic table (booksim2_saturation.md, or _full.md with --full, as that
    script writes it and EXPERIMENTS.md shows it), and what it says, from the CSV beside it."""
    rows = result_csv(f"booksim2/{stem}.csv")
    table = result_file(f"booksim2/{stem}.md").read_text().rstrip("\n")
    by = {(r["network"], r["virtual_channels"], r["simulator"]): r for r in rows}
    pairs = list(dict.fromkeys((r["network"], r["virtual_channels"]) for r in rows))
    gaps = [abs(float(by[n, v, "harts"]["latency_at_lightest"]) - float(by[n, v, "booksim2"]["latency_at_lightest"]))
            for n, v in pairs]
    ratios = [float(by[n, v, "harts"]["saturation"]) / float(by[n, v, "booksim2"]["saturation"]) for n, v in pairs]
    summary = (f"Zero-load latency agrees within {max(gaps):.1f} cycles, and saturation within "
               f"{100 * max(abs(r - 1) for r in ratios):.0f}%, on all {len(pairs)} pairs of network and VCs.")
    return table + "\n\n" + summary + "\n\n" + source(f"booksim2/{stem}.csv", "booksim2_compare.py" +
                                                          (" --full" if stem.endswith("_full") else ""))


def booksim2_patterns() -> str:
    """bench/booksim2_compare.py --patterns's table (patterns_compare.md, as that script prints it and EXPERIMENTS.md
    shows it), and what it says, from patterns_compare.csv."""
    rows = result_csv("booksim2/patterns_compare.csv")
    lines = result_file("booksim2/patterns_compare.md").read_text().rstrip("\n").splitlines()
    gap = max(abs(float(r["latency_gap_max"])) for r in rows)
    zero = max(abs(float(r["harts_zero_load"]) - float(r["booksim2_zero_load"])) for r in rows)
    within = sum(abs(float(r["saturation_ratio"]) - 1) <= 0.03 for r in rows)
    summary = (f"Below 0.7 of saturation, mean latency agrees within {100 * gap:.1f}% in all {len(rows)} series. "
               f"Zero-load latency agrees within {zero:.1f} cycles. "
               f"Saturation agrees within 3% in {within} of the {len(rows)}.")
    return "\n".join(lines) + "\n\n" + summary + "\n\n" + source("booksim2/patterns_compare.csv",
                                                                 "booksim2_compare.py --patterns")


def booksim2_written(stem: str, command: str) -> str:
    """A table bench/booksim2_compare.py writes as Markdown beside its CSV (patterns_seeds, patterns_overload)."""
    return result_file(f"booksim2/{stem}.md").read_text() + "\n" + source(f"booksim2/{stem}.csv", command)


BOOKSIM2_TABLES = {
    "saturation": lambda: booksim2_saturation("booksim2_saturation"),
    "saturation_full": lambda: booksim2_saturation("booksim2_saturation_full"),
    "patterns": booksim2_patterns,
    "seeds": lambda: booksim2_written("patterns_seeds", "booksim2_compare.py --seed-spread 5"),
    "overload": lambda: booksim2_written("patterns_overload", "booksim2_compare.py --overload 1.2"),
    "bottleneck": lambda: booksim2_written("patterns_bottleneck",
                                           "booksim2_compare.py --bottleneck --series mesh:bitrev"),
}


def booksim2_table(name: str) -> str:
    if name not in BOOKSIM2_TABLES:
        raise ValueError(f"unknown booksim2-table {name!r}, expected one of {', '.join(BOOKSIM2_TABLES)}")
    return BOOKSIM2_TABLES[name]()
