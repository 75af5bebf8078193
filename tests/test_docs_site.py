"""The documentation site (mkdocs.yml, docs/): it builds strictly, its generated reference covers the code, and every
example on its pages runs and prints what the page shows.

Examples follow docs/index.md's conventions: a ```bash or ```python block runs, and a ```text block right after it is
the output it must print (`...` stands for any text); a ```yaml or ```python block with title="FILE" is a file the
page has the reader save. A block preceded by the line `<!-- not run: REASON -->` is left out, and says why. The
blocks of one page run in order in one folder, where configs/ and microcode/ stand as in a checkout."""

from __future__ import annotations

import argparse
import contextlib
import doctest
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harts.cli import build_parser
from harts.machine.config import KERNELS, KEYS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!-- not run: \S.* -->\s*$")
LANGUAGES = {"bash", "python", "text", "yaml"}


def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_hooks()


# ---- the build ---------------------------------------------------------------------------------------------------

def test_the_site_builds_strictly_with_the_command_its_home_page_gives(tmp_path):
    index = (DOCS / "index.md").read_text()
    section = index[index.index("## Building these pages"):]
    command = next(block for language, _, block, _ in blocks(section) if language == "bash").strip()
    assert command == ".venv/bin/mkdocs build --strict"
    built = subprocess.run(command.replace(".venv/bin/", f"{BIN}/").split() + ["--site-dir", str(tmp_path)],
                           check=False, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    # the generated parts reached the pages
    config_page = (tmp_path / "reference" / "config" / "index.html").read_text()
    assert all(f"<code>{key.name}</code>" in config_page for key in KEYS)
    commands_page = (tmp_path / "reference" / "commands" / "index.html").read_text()
    assert all(f">{command}<" in commands_page for command in command_options())
    model = (tmp_path / "explanation" / "model" / "index.html").read_text()
    assert "<!-- generated:" not in model
    assert (REPO / "MODEL.md").read_text().splitlines()[0].removeprefix("# ") in model


# ---- the generated reference -------------------------------------------------------------------------------------

def test_a_page_that_asks_for_an_unknown_part_fails_the_build():
    with pytest.raises(ValueError, match="unknown generated part 'config-key'"):
        hooks.generate("config-key")


def test_every_config_key_declares_the_kernels_that_read_it():
    for key in KEYS:
        assert key.kernels and set(key.kernels) <= set(KERNELS), key.name
        assert len(set(key.kernels)) == len(key.kernels), key.name


def test_the_config_reference_gives_every_key_its_type_default_allowed_values_and_kernels():
    page = hooks.config_keys()
    entries = page.split("### ")[1:]
    assert [entry.split("\n")[0] for entry in entries] == [f"`{key.name}`" for key in KEYS]
    for key, entry in zip(KEYS, entries):
        facts = entry.split("\n")[2]
        assert facts.startswith(hooks.TYPES[key.kind].capitalize() + ", default `"), key.name
        assert all(choice in facts for choice in key.choices), key.name
        assert key.allowed in facts or key.choices, key.name
        assert all(hooks.KERNEL_NAMES[k] in facts for k in key.kernels), key.name
        assert all(hooks.KERNEL_NAMES[k] not in facts for k in set(KERNELS) - set(key.kernels)), key.name


def test_a_default_in_the_config_reference_reads_back_as_the_default():
    import yaml
    for key in KEYS:
        shown = hooks.yaml_value(key.default)
        value = yaml.safe_load(shown)
        assert value == (list(key.default) if isinstance(key.default, tuple) else key.default), key.name


def command_options() -> dict[str, list[str]]:
    """Every command of the parser that runs, with every option string and positional it takes."""
    found = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subparsers:
            found[path] = [s for a in parser._actions if not isinstance(a, argparse._HelpAction)
                           for s in (a.option_strings or [a.metavar or a.dest])]
        for action in subparsers:
            for name, sub in action.choices.items():
                walk(sub, f"{path} {name}")

    walk(build_parser(), "harts")
    return found


def test_the_commands_reference_lists_every_command_and_option():
    page = hooks.commands()
    sections = {part.split("\n")[0]: part for part in page.split("## ")[1:]}
    expected = command_options()
    assert list(sections) == list(expected)
    assert "harts microcode check" in sections and "harts sweep" in sections
    for command, options in expected.items():
        rows = [line.split(" | ")[0] for line in sections[command].splitlines() if line.startswith("| `")]
        named = " ".join(rows)
        assert all(re.search(rf"`{re.escape(o)}[` ]", named) for o in options), command
        assert len(rows) == len(set(rows)) and len(rows) <= len(options), command


def test_the_commands_reference_gives_defaults_and_choices():
    sweep = hooks.commands().split("## harts sweep\n")[1].split("\n## ")[0]
    assert "| `--seeds SEEDS` |" in sweep and "(default: 1)" in sweep
    assert "| `--rates A:B:STEP|LIST` |" in sweep
    assert "Not with `--bound-fractions`." in sweep
    reproduce = hooks.commands().split("## harts reproduce\n")[1].split("\n## ")[0]
    assert "One of `000`, `001`, `002`, `003`, `004`." in reproduce
    broadcast = hooks.commands().split("## harts broadcast\n")[1].split("\n## ")[0]
    assert "| `--source SOURCE` |  | `0` |" in broadcast and "Required." in broadcast


def rendered_text(markdown_text: str) -> str:
    """The text a reader sees of some Markdown: rendered as the site renders tables, tags stripped."""
    import html

    import markdown
    return html.unescape(re.sub(r"<[^>]+>", "", markdown.markdown(markdown_text, extensions=["tables"])))


def test_no_table_cell_of_the_reference_loses_text_to_a_pipe():
    """A | that splits a cell drops the text after it (Python-Markdown keeps a row's first cells only)."""
    from harts.machine.results import RESULT_FIELDS
    shown = rendered_text(hooks.commands())
    for _, parser, _ in hooks.command_parsers(build_parser()):
        for action in hooks.arguments(parser):
            assert hooks.argument_name(action) in shown
            assert hooks.argument_meaning(parser, action).replace("`", "") in shown
    assert "--rates A:B:STEP|LIST" in shown
    shown = rendered_text(hooks.result_fields())
    assert all(field.meaning in shown for field in RESULT_FIELDS)


def run_summary(config) -> dict:
    from harts.machine.simulation import Simulation
    return Simulation(config).run(keep=False).summary()


def test_result_fields_declare_what_each_kernel_reports():
    from harts.machine.config import load_config
    from harts.machine.results import RESULT_FIELDS
    conditional = {"latency_unmeasured"}
    short = {"run.cycles": 600, "run.warmup_cycles": 100, "traffic.uniform.load": 0.1}
    runs = {"flit": load_config("booksim2_mesh_8x8").with_values({**short, "traffic.synthetic.rate": 0.05}),
            "cut-through": load_config("mesh_8x8").with_values(short)}
    for kernel, config in runs.items():
        reported = set(run_summary(config))
        declared = {f.name for f in RESULT_FIELDS if kernel in f.kernels}
        assert reported <= declared, reported - declared
        assert declared - conditional <= reported, declared - conditional - reported
    # a run whose only packet is made before the window: nothing measured, and the summary says why
    unmeasured = run_summary(runs["flit"].with_values({
        "traffic.synthetic.rate": 0, "traffic.uniform.load": 0,
        "traffic.packets": [{"cycle": 0, "source": 0, "destination": 1, "length": 12}]}))
    assert "latency_unmeasured" in unmeasured and set(unmeasured) <= {f.name for f in RESULT_FIELDS}


def test_a_summary_prints_in_the_declared_order_and_refuses_an_undeclared_field():
    from harts.machine.results import in_declared_order
    assert list(in_declared_order({"wall_seconds": 1.0, "nodes": 4, "topology": "t"})) == \
        ["topology", "nodes", "wall_seconds"]
    with pytest.raises(AssertionError, match="not_a_field"):
        in_declared_order({"not_a_field": 1})


def test_the_result_fields_reference_lists_every_declared_field():
    from harts.machine.results import RESULT_FIELDS
    rows = [line for line in hooks.result_fields().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [f.name for f in RESULT_FIELDS]
    assert len({f.name for f in RESULT_FIELDS}) == len(RESULT_FIELDS)
    assert all(set(f.kernels) <= set(KERNELS) and f.kernels and f.meaning for f in RESULT_FIELDS)


def test_instruction_meanings_name_exactly_what_the_assembler_encodes():
    from harts import instructions as meaning
    from harts.controller import isa
    assert list(meaning.INSTRUCTIONS) == list(isa.OPCODES)
    assert set(meaning.CONDITIONS) == set(isa.CONDITIONS)
    assert set(meaning.PSEUDO_FIELDS) == set(isa.PSEUDO_FIELDS)
    assert set(meaning.VIAS) == set(isa.VIAS)
    assert set(meaning.VCS) == set(isa.VCS)
    for name, (cut_through, flit) in meaning.INSTRUCTIONS.items():
        assert (cut_through is None) == (name in isa.NOT_IN[isa.SWITCHING_CUT_THROUGH]), name
        refused = all(name in isa.NOT_IN[isa.SWITCHINGS[s]] for s in ("wormhole", "circuit"))
        assert (flit is None) == (refused or name in isa.FIELD_OPS), name


@pytest.mark.parametrize("switching, operand", [("cut_through", "vc: any"), ("wormhole", "until: distance")])
def test_an_operand_the_reference_leaves_out_of_a_kernel_is_refused_there(tmp_path, switching, operand):
    from harts.controller.microcode import assemble
    from harts.errors import InputError
    kernel = "cut-through" if switching == "cut_through" else "flit"
    assert operand.split(":")[0] in hooks.OPERANDS_NOT_ON[kernel]
    program = tmp_path / "p.yaml"
    program.write_text(f"name: p\nswitching: {switching}\nentry: {{receive: r, inject: r}}\nprogram:\n"
                       f"  - {{label: r, op: wait_header}}\n"
                       f"  - {{op: tee, via: dimension_order, else: retry, {operand}}}\n"
                       f"  - {{op: wait_tail}}\n  - {{op: done}}\n")
    with pytest.raises(InputError):
        assemble(program)
    program.write_text(program.read_text().replace(f", {operand}", ""))
    assemble(program)  # the same program without that operand assembles


def test_each_instruction_chapter_lists_what_its_kernel_takes():
    from harts import instructions as meaning
    for kernel, field in hooks.KERNEL_FIELDS.items():
        page = hooks.instructions(kernel)
        listed = [line.split("`")[1] for line in page.split("## Conditions")[0].splitlines()
                  if line.startswith("| `")]
        assert listed == [name for name, texts in meaning.INSTRUCTIONS.items() if getattr(texts, field) is not None]
        assert ("## Virtual channels (`vc`)" in page) == (kernel == "flit")
    assert "`store`" not in hooks.instructions("flit") and "`ack`" not in hooks.instructions("cut-through")


# ---- the examples --------------------------------------------------------------------------------------------------

def blocks(text: str):
    """(language, info string, body, whether it is marked not to run) of every fenced block, in order."""
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        yield match.group(1), match.group(2), match.group(3), bool(NOT_RUN.match(before))


def examples(page: Path) -> list[tuple[str, str, str | None]]:
    """A page's examples in order: ("file", name, contents), or ("bash" | "python", code, the output it shows or
    None)."""
    found = []
    listed = list(blocks(page.read_text()))
    for i, (language, info, body, not_run) in enumerate(listed):
        assert language in LANGUAGES, f"{page.name}: a ```{language} block (examples are bash or python)"
        if language in ("yaml", "python") and "title=" in info:
            found.append(("file", re.search(r'title="([^"]+)"', info).group(1), body))
        elif language in ("bash", "python") and not not_run:
            following = listed[i + 1] if i + 1 < len(listed) else None
            shown = following[2] if following and following[0] == "text" else None
            found.append((language, body, shown))
    return found


PAGES = sorted(DOCS.rglob("*.md")) + [REPO / "README.md"]  # the README's examples run as the pages' do
PAGES_WITH_EXAMPLES = [p for p in PAGES if any(kind != "file" for kind, *_ in examples(p))]


def page_name(page: Path) -> str:
    """A page's path under docs/, or the README's from the repository's root."""
    return (page.relative_to(DOCS) if page.is_relative_to(DOCS) else page.relative_to(REPO)).as_posix()


def test_the_pages_that_teach_have_examples():
    names = {page_name(p) for p in PAGES_WITH_EXAMPLES}
    assert {"tutorials/first-wormhole-experiment.md", "how-to/coming-from-booksim2.md", "reference/microcode-flit.md",
            "reference/microcode-cut-through.md", "reference/python-api.md"} <= names
    assert {"README.md", "tutorials/python-loop.md", "reference/broadcasts.md",
            "reference/configs-and-networks.md"} <= names
    assert {"tutorials/harts-and-fig10.md", "tutorials/writing-a-microprogram.md", "tutorials/np-broadcast.md"} <= names
    assert {"how-to/faults.md", "how-to/traces-and-waveforms.md", "how-to/dask.md", "how-to/large-networks.md",
            "how-to/reproducing-papers.md"} <= names


def matches(shown: str, printed: str) -> bool:
    return doctest.OutputChecker().check_output(shown, printed, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def test_shown_output_is_matched_with_ellipses_and_nothing_else():
    assert matches("a ...\nc  1\n", "a b b\nc 1\n")
    assert not matches("c 1\n", "c 2\n")
    assert not matches("a\n", "a\nb\n")


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=lambda p: page_name(p))
def test_every_example_on_the_page_runs_and_prints_what_it_shows(page, tmp_path, monkeypatch):
    for name in ("configs", "microcode"):
        (tmp_path / name).symlink_to(REPO / name)
    monkeypatch.chdir(tmp_path)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    namespace: dict = {}
    for kind, code, shown in examples(page):
        if kind == "file":
            (tmp_path / code).write_text(shown)
            continue
        if kind == "bash":
            ran = subprocess.run(["bash", "-euo", "pipefail", "-c", code], check=False, cwd=tmp_path, env=env,
                                 capture_output=True, text=True, timeout=300)
            assert ran.returncode == 0, f"{page.name}: {code}\n{ran.stderr}"
            printed = ran.stdout
        else:
            with contextlib.redirect_stdout(io.StringIO()) as out:
                exec(compile(code, str(page), "exec"), namespace)
            printed = out.getvalue()
        if shown is not None:
            assert matches(shown, printed), f"{page.name}: {code}\nshows:\n{shown}\nprinted:\n{printed}"


# ---- the benchmark and BookSim2 tables (docs/explanation/performance.md, validation.md) ---------------------------

def table_rows(markdown: str) -> list[str]:
    """The body rows of the Markdown tables in a generated part (header and separator lines left out)."""
    lines = markdown.splitlines()
    return [line for i, line in enumerate(lines) if line.startswith("|") and not line.startswith("|---")
            and not (i + 1 < len(lines) and lines[i + 1].startswith("|---"))]


def bench_json(name: str) -> dict:
    import json
    return json.loads((hooks.RESULTS / name).read_text())


def test_each_bench_table_renders_every_record_of_its_results_file():
    speed, start = bench_json("speed.json"), bench_json("start.json")
    size_sweep, overhead = bench_json("size_sweep.json"), bench_json("sweep_overhead.json")
    expected = {
        "speed": [p["network"] for p in speed["points"]],
        "sizes": [name for name, ratios in speed["sizes"].items() for _ in ratios],
        "events": [p["network"] for p in bench_json("cut_through_limit.json")["points"]],
        "start": [hooks.start_command(name, start["run_config"]["cycles"])
                  for name in start["whole_process_seconds"]["this"]],
        "booksim2-speed": [str(p["rate_flits_per_node_cycle"]) for p in bench_json("booksim2_speed.json")["points"]],
        "size-sweep": [p["network"] for p in size_sweep["cut_through"] + size_sweep["flit"]],
        "memory-reads": [f"{p['ns_per_read']:.1f}" for p in size_sweep["memory"]],
        "sweep-overhead": [key.removeprefix("workers_") for key in overhead if key.startswith("workers_")],
        "trace-memory": [f"{p['packets']:,}" for p in bench_json("trace_memory.json")["points"]],
    }
    assert set(expected) == set(hooks.BENCH_TABLES)
    for name, keys in expected.items():
        rows = table_rows(hooks.generate(f"bench-table {name}"))
        assert len(rows) == len(keys), name
        assert all(key in row for key, row in zip(keys, rows)), name


def test_each_booksim2_table_renders_every_row_of_its_csv():
    import csv
    for name in ("saturation", "saturation_full"):
        with (hooks.RESULTS / "booksim2" / f"booksim2_{name}.csv").open() as f:
            source = list(csv.DictReader(f))
        rows = table_rows(hooks.generate(f"booksim2-table {name}"))
        assert len(rows) == len({(r["network"], r["virtual_channels"]) for r in source}), name
        for r in source:  # each simulator's zero-load latency in its network's row
            assert any(f"8x8 {r['network']} | {r['virtual_channels']} |" in row
                       and f"{float(r['latency_at_lightest']):.1f}" in row for row in rows), (name, r)
    with (hooks.RESULTS / "booksim2" / "patterns_compare.csv").open() as f:
        source = list(csv.DictReader(f))
    rows = table_rows(hooks.generate("booksim2-table patterns"))
    assert [row.split(" | ")[:2] for row in rows] == [[f"| 8x8 {r['network']}", r["pattern"]] for r in source]
    for name, stem in (("seeds", "patterns_seeds"), ("overload", "patterns_overload")):
        with (hooks.RESULTS / "booksim2" / f"{stem}.csv").open() as f:
            source = list(csv.DictReader(f))
        rows = table_rows(hooks.generate(f"booksim2-table {name}"))
        assert [row.split(" | ")[:2] for row in rows] == [[f"| 8x8 {r['network']}", r["pattern"]] for r in source]
    with (hooks.RESULTS / "booksim2" / "patterns_bottleneck.csv").open() as f:
        loads = {(r["network"], r["pattern"], r["offered"]) for r in csv.DictReader(f)}
    assert len(table_rows(hooks.generate("booksim2-table bottleneck"))) == len(loads)  # a row per series and load


def test_the_booksim2_sentences_of_the_experiments_page_hold_in_its_csv_files():
    """EXPERIMENTS.md, "harts against BookSim2 under the standard patterns", says these of the committed runs."""
    import csv

    def rows(stem):
        with (hooks.RESULTS / "booksim2" / f"{stem}.csv").open() as f:
            return list(csv.DictReader(f))
    compare = rows("patterns_compare")
    assert len(compare) == 10
    assert max(abs(float(r["latency_gap_max"])) for r in compare) <= 0.011  # "latency ... within 1.1%"
    assert max(abs(float(r["booksim2_zero_load"]) - float(r["harts_zero_load"])) for r in compare) <= 0.4
    assert all(abs(float(r["saturation_ratio"]) - 1) <= 0.03 for r in compare)  # "within 3% in all ten series"
    seeds = rows("patterns_seeds")
    assert len(seeds) == 6 and all(abs(float(r["median_ratio"]) - 1) <= 0.03 for r in seeds)
    assert round(100 * (max(float(r["ratio"]) for r in rows("patterns_overload")) - 1), 1) == 4.9  # "up to 4.9%"
    channel = [r for r in rows("patterns_bottleneck") if (r["network"], r["pattern"]) == ("mesh", "bitrev")]
    low = [r for r in channel if float(r["offered"]) * 7 <= 0.94 + 1e-9]  # "at 0.94 of the bound and below"
    assert low and all(abs(float(r["flow_over_offered"]) - 1) <= 0.03 for r in low)
    high = [float(r["channel_flow"]) for r in channel if float(r["offered"]) * 7 >= 0.98 - 1e-9]
    for simulator in ("booksim2", "harts"):  # "most runs of both carry 0.941 ... and a few up to 1"
        mine = [float(r["channel_flow"]) for r in channel
                if r["simulator"] == simulator and float(r["offered"]) * 7 >= 0.98 - 1e-9]
        assert sum(abs(f - 16 / 17) <= 0.006 for f in mine) > len(mine) / 2
    assert max(high) == pytest.approx(1, abs=0.001)


def test_the_booksim2_uniform_sentences_of_the_experiments_page_hold_in_its_csv_files():
    """EXPERIMENTS.md, "The wormhole router against BookSim2", says these of the committed --full run."""
    import csv
    with (hooks.RESULTS / "booksim2" / "booksim2_saturation_full.csv").open() as f:
        saturation = {(r["network"], r["virtual_channels"], r["simulator"]): r for r in csv.DictReader(f)}
    with (hooks.RESULTS / "booksim2" / "booksim2_compare_full.csv").open() as f:
        latency = {(r["network"], r["virtual_channels"], float(r["offered"]), r["simulator"]):
                   float(r["latency_mean"]) for r in csv.DictReader(f)}
    series = {(n, v) for n, v, _ in saturation}
    assert len(series) == 4
    for n, v in series:
        b, h = saturation[n, v, "booksim2"], saturation[n, v, "harts"]
        assert abs(float(b["latency_at_lightest"]) - float(h["latency_at_lightest"])) <= 0.6
        assert abs(float(b["saturation"]) - float(h["saturation"])) <= 0.01 + 1e-9
        lower = min(float(b["saturation"]), float(h["saturation"]))
        for (n2, v2, load, simulator), value in latency.items():
            if (n2, v2, simulator) == (n, v, "harts") and load <= lower - 0.02 + 1e-9:
                assert abs(value / latency[n, v, load, "booksim2"] - 1) <= 0.06, (n, v, load)
    assert (round(latency["torus", "4", 0.49, "harts"]), round(latency["torus", "4", 0.49, "booksim2"])) == (75, 91)


def test_the_performance_and_validation_pages_show_every_table():
    performance = (DOCS / "explanation" / "performance.md").read_text()
    validation = (DOCS / "explanation" / "validation.md").read_text()
    assert all(f"<!-- generated: bench-table {name} -->" in performance for name in hooks.BENCH_TABLES)
    assert all(f"<!-- generated: booksim2-table {name} -->" in validation for name in hooks.BOOKSIM2_TABLES)


def test_a_missing_results_file_fails_the_build(monkeypatch, tmp_path):
    monkeypatch.setattr(hooks, "RESULTS", tmp_path)
    for name in [f"bench-table {n}" for n in hooks.BENCH_TABLES] + \
            [f"booksim2-table {n}" for n in ("saturation", "saturation_full", "patterns")]:
        with pytest.raises(FileNotFoundError, match="is missing"):
            hooks.generate(name)
    with pytest.raises(ValueError, match="unknown bench-table"):
        hooks.generate("bench-table speeds")
