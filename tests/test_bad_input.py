"""Bad configs, microprograms and arguments end in one line naming file and line, exit code 2."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harts.cli import main
from harts.config import load_config
from harts.controller.microcode import assemble
from harts.errors import InputError

REPO = Path(__file__).resolve().parent.parent


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


GOOD_PROGRAM = """
name: t
entry: {receive: r, inject: i}
program:
  - {label: r, op: wait_header}
  - {op: deliver}
  - {op: wait_tail}
  - {op: done}
  - {label: i, op: wait_header}
  - {label: again, op: forward, via: adaptive, else: again}
  - {op: wait_tail}
  - {op: done}
"""


def test_good_program_assembles(tmp_path):
    program = assemble(write(tmp_path, "ok.yaml", GOOD_PROGRAM))
    assert len(program) == 8
    assert program.entry_inject == 4


@pytest.mark.parametrize("old,new,line,words", [
    ("op: deliver", "op: teleport", 5, "unknown instruction 'teleport'"),
    ("else: again", "else: nowhere", 9, "undefined label 'nowhere'"),
    ("via: adaptive", "via: sideways", 9, "'via' must be one of"),
    ("via: adaptive", "via: segment", 9, "needs 'header: {segments: K}'"),
    ("{op: deliver}", "{op: add, field: distance, value: -1}", 5, "not a declared header field"),
    ("{op: deliver}", "{op: branch, if: distance == 0, goto: r}", 5, "'distance' is not a declared header field"),
    ("{op: deliver}", "{op: branch, if: route == sideways, goto: r}", 5, "or one of destination, direction"),
    ("op: forward, via: adaptive, else: again", "op: forward, via: adaptive", 9, "needs operand 'else'"),
    ("{op: deliver}", "{op: deliver, cycles: two}", 5, "'cycles' must be an integer"),
    ("{op: deliver}", "{op: branch, if: sunny, goto: r}", 5, "'if' must be arrived, local or a comparison"),
    ("{label: i, op: wait_header}", "{label: r, op: wait_header}", 8, "label 'r' is defined twice"),
    ("inject: i}", "inject: nope}", 2, "undefined label 'nope'"),
])
def test_microprogram_errors_name_the_line(tmp_path, old, new, line, words):
    assert old in GOOD_PROGRAM
    path = write(tmp_path, "bad.yaml", GOOD_PROGRAM.replace(old, new))
    with pytest.raises(InputError) as err:
        assemble(path)
    assert err.value.line == line, str(err.value)
    assert words in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_program_that_runs_off_the_end(tmp_path):
    path = write(tmp_path, "bad.yaml", GOOD_PROGRAM.rstrip().rsplit("\n", 1)[0] + "\n")
    with pytest.raises(InputError, match="last instruction must be 'done' or 'jump'"):
        assemble(path)


@pytest.mark.parametrize("text,line,words", [
    ("mesh:\n  size: 5\n", 2, "'mesh.size' was replaced by 'topology: {kind: hex, size: N}'"),
    ("topology: {kind: hex, sise: 5}\n", 1, "'sise' is not a key of topology kind 'hex', which takes 'size'"),
    ("topology: [5]\n", 1, "expects a mapping"),
    ("topology:\n  kind: hexagon\n  size: 5\n", 2, "unknown topology kind 'hexagon'"),
    ("topology:\n  kind: torus\n  dims: [8, 8]\n  size: 5\n", 4, "'size' is not a key of topology kind 'torus'"),
    ("topology: {kind: hex, size: 2}\n", 1, ">= 3"),
    ("topology: {kind: torus, dims: [8, 2]}\n", 1, ">= 3"),
    ("topology: {kind: mesh_hypercube, levels: 3, cube: 6}\n", 1, "power of two"),
    ("traffic:\n  uniform:\n    load: -0.1\n", 3, "must be >= 0"),
    ("microcode: nonexistent\n", 1, "microprogram 'nonexistent' not found"),
    ("run:\n  seed: [1]\n", 2, "expects an integer"),
    ("run:\n  cycles: 5\n cycles: 4\n", None, "invalid YAML"),
])
def test_config_errors_name_the_line(tmp_path, text, line, words):
    from harts.simulation import Simulation
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(InputError) as err:
        Simulation(load_config(path))
    assert words in str(err.value), str(err.value)
    if line is not None:
        assert err.value.line == line


def test_missing_traffic_field_names_line(tmp_path):
    from harts.simulation import Simulation
    path = write(tmp_path, "bad.yaml", """
        topology: {kind: hex, size: 3}
        traffic:
          packets:
            - {cycle: 0, source: 0, destination: 3, length: 64}
            - {cycle: 0, source: 0, length: 64}
        """)
    with pytest.raises(InputError) as err:
        Simulation(load_config(path)).run()
    assert err.value.line == 5 and "missing 'destination'" in str(err.value)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)


@pytest.mark.parametrize("args,words", [
    (["run", "no/such/file.yaml"], "no/such/file.yaml: file not found"),
    (["bench", "--cycles", "0"], "expected a positive integer"),
    (["bench", "--load", "-1"], "load must be >= 0"),
    (["frobnicate"], "invalid choice"),
])
def test_cli_one_line_exit_2(args, words):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert words in lines[0]
    assert "Traceback" not in proc.stderr


def test_cli_bad_config_reports_file_and_line(tmp_path):
    path = write(tmp_path, "bad.yaml", "topology: {kind: hex, size: 5}\ntiming:\n  header_bytes: -3\n")
    proc = run_cli("run", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"harts: error: {path}:3: 'timing.header_bytes' must be >= 1, got -3"


def test_main_returns_2_for_bad_microcode(tmp_path, capsys):
    prog = write(tmp_path, "p.yaml", GOOD_PROGRAM.replace("op: deliver", "op: teleport"))
    cfg = write(tmp_path, "c.yaml", f"microcode: {prog.name}\n")
    assert main(["run", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"harts: error: {prog}:5: unknown instruction 'teleport'")


@pytest.mark.parametrize("args,words", [
    (["broadcast", "--algorithm", "7bcast", "--size", "4"], "invalid choice"),
    (["broadcast", "--algorithm", "sbcast", "--size", "4", "--source", "37"], "--source must be a node of E-4"),
    (["broadcast", "--algorithm", "sbcast", "--size", "4", "--length", "3"], "--length must be at least"),
    (["broadcast", "--algorithm", "sbcast", "--size", "x"], "expected a positive integer"),
])
def test_broadcast_arguments(args, words):
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr


@pytest.mark.parametrize("text,line,words", [
    ("faults:\n  crashed: [3, 99]\n", 2, "expected a node number 0..60"),
    ("faults:\n  byzantine:\n    - {node: 4, behaviour: lie}\n", 3, "'behaviour' must be one of alter, drop, bogus"),
    ("faults:\n  dead_links:\n    - {node: 4, direction: 6}\n", 3, "'direction' must be 0..5"),
    ("faults:\n  corruption_probability: 1.5\n", 2, "must be in 0..1"),
    ("bmu:\n  when_full: sometimes\n", 2, "must be drop or wait"),
])
def test_fault_config_errors_name_the_line(tmp_path, text, line, words):
    from harts.simulation import Simulation
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(InputError) as err:
        Simulation(load_config(path))
    assert words in str(err.value), str(err.value)
    assert err.value.line == line


@pytest.mark.parametrize("args,words", [
    (["faults", "--algorithm", "6bcast", "--size", "3", "--crash", "2", "--byzantine", "1"], "not allowed with"),
    (["faults", "--algorithm", "9bcast", "--size", "3", "--crash", "2"], "--algorithm expects"),
    (["faults", "--algorithm", "6bcast", "--size", "3", "--crash", "30"], "at most 17 faulty nodes"),
    (["trace", "configs/explicit_e5.yaml", "--vcd", "/tmp/x.vcd", "--nodes", "0,500"], "--nodes must be nodes"),
    (["microcode", "check", "no/such.yaml"], "no/such.yaml: file not found"),
])
def test_fault_and_tool_arguments(args, words):
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr
