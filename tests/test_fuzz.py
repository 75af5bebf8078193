"""Bad input generated rather than listed: every command's options, every config key's type and range, broken YAML,
faults naming missing nodes. Each case must end in one line on stderr, exit code 2, and FILE:LINE where the input
has lines; nothing may run. A network cut in two by its faults is a legitimate input: its losses are named."""

import argparse
import json

import numpy as np
import pytest

from harts.cli import build_parser, main
from harts.machine.config import KEYS

COMMANDS = {name: parser for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction)
            for name, parser in action.choices.items()}


def refused(capsys, argv):
    """Run the command in-process; its stderr's one line (exit 2 and no stdout asserted)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit, after its one-line message
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, (argv, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, (argv, err)
    return lines[0]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_refuses_an_unknown_option(capsys, command):
    line = refused(capsys, [command, "--no-such-option"])
    assert "--no-such-option" in line or "required" in line  # argparse names a missing required argument first


# the options whose values are parsed (numbers, sizes, windows); '@@' is a legal file name, so the path options
# (_plot_file, _output_file, _results_directory) are left to test_bad_input's unwritable and missing paths
TYPED = [(name, action.option_strings[-1]) for name, parser in sorted(COMMANDS.items()) for action in parser._actions
         if action.option_strings and action.type is not None and action.nargs is None
         and not action.type.__name__.endswith(("_file", "_directory"))]
assert len(TYPED) > 20  # the parser's numeric options are all here


@pytest.mark.parametrize("command, option", TYPED)
def test_every_typed_option_refuses_a_value_that_is_not_one(capsys, command, option):
    line = refused(capsys, [command, option, "@@"])
    assert option in line or "@@" in line


def yaml_of(dotted, value):
    """The key set alone in a config, one mapping level a line: the text and the key's line number."""
    parts = dotted.split(".")
    lines = [f"{'  ' * i}{part}:" for i, part in enumerate(parts[:-1])]
    lines.append(f"{'  ' * (len(parts) - 1)}{parts[-1]}: {json.dumps(value)}")
    return "\n".join(lines) + "\n", len(lines)


def wrong_kind(key):
    if key.kind in ("int", "float"):
        return "plenty"
    if key.kind in ("ints", "numbers"):
        return ["plenty"]
    if key.kind in ("list", "mapping"):
        return 5
    return "no such value" if key.choices else [1, 2]


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.name)
def test_every_key_refuses_a_value_of_the_wrong_kind_at_its_line(capsys, tmp_path, key):
    text, line = yaml_of(key.name, wrong_kind(key))
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    first = refused(capsys, ["run", str(path)])
    assert f"{path}:{line}" in first and key.name.split(".")[-1] in first


BOUNDED = [k for k in KEYS if k.kind in ("int", "float") and (k.minimum is not None or k.above is not None)]


@pytest.mark.parametrize("key", BOUNDED, ids=lambda k: k.name)
def test_every_bounded_key_refuses_a_value_below_its_range_at_its_line(capsys, tmp_path, key):
    low = key.minimum if key.minimum is not None else key.above
    text, line = yaml_of(key.name, low - 1 if key.kind == "int" else low - 0.5)
    path = tmp_path / "low.yaml"
    path.write_text(text)
    assert f"{path}:{line}" in refused(capsys, ["run", str(path)])


BASE = """topology: {kind: mesh, dims: [4, 4]}
microcode: wormhole
traffic:
  synthetic: {pattern: uniform, rate: 0.1}
run: {cycles: 2000, warmup_cycles: 200}
"""


@pytest.mark.parametrize("seed", range(8))
def test_broken_yaml_is_refused_at_a_line_of_the_file(capsys, tmp_path, seed):
    """A line of a good config gets an unclosed bracket: YAML cannot parse it, whichever line it is."""
    lines = BASE.splitlines()
    at = int(np.random.default_rng(seed).integers(0, len(lines)))
    lines[at] += " ["
    path = tmp_path / "broken.yaml"
    path.write_text("\n".join(lines) + "\n")
    first = refused(capsys, ["run", str(path)])
    assert first.startswith(f"harts: error: {path}:") and "YAML" in first


@pytest.mark.parametrize("faults, line", [
    ("  crashed: [16]", 7),
    ("  crashed: [-1]", 7),
    ("  dead_links: [{node: 16, direction: 0}]", 7),
    ("  dead_links: [{node: 3, direction: 9}]", 7),
])
def test_faults_naming_a_node_or_port_the_network_lacks_are_refused_at_their_line(capsys, tmp_path, faults, line):
    path = tmp_path / "faults.yaml"
    path.write_text(BASE + "faults:\n" + faults + "\n")
    assert f"{path}:{line}" in refused(capsys, ["run", str(path)])


def test_a_network_cut_in_two_runs_and_names_what_its_faults_dropped(capsys, tmp_path):
    """Every +x link out of column 1 dead: no packet crosses from the left half to the right. The run is legitimate
    input; what it lost is counted as dropped by the faults, and its accepted load falls short of the offered."""
    path = tmp_path / "cut.yaml"
    cut = ", ".join(f"{{node: {4 * row + 1}, direction: 0}}" for row in range(4))
    path.write_text(BASE + f"faults:\n  dead_links: [{cut}]\n")
    assert main(["run", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["dropped_by_faults"] > 0
    assert summary["accepted_flits_per_node_cycle"] < summary["offered_flits_per_node_cycle"]
