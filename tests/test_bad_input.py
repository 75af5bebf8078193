"""Bad configs, microprograms and arguments end in one line naming file and line, exit code 2."""

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harts.cli import main
from harts.controller.microcode import assemble
from harts.errors import InputError
from harts.machine.config import load_config

from .helpers import unwritable_directory

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
    ("{op: deliver}", "{op: branch, if: sunny, goto: r}", 5, "'if' must be arrived, local, setup_retries or a comparison"),
    ("{op: deliver}", "{op: branch, if: setup_retries, goto: r}", 5, "'setup_retries' needs 'switching: circuit'"),
    ("{label: i, op: wait_header}", "{label: r, op: wait_header}", 8, "label 'r' is defined twice"),
    ("inject: i}", "inject: nope}", 2, "undefined label 'nope'"),
])
def test_microprogram_errors_name_the_line(tmp_path, old, new, line, words):
    assert_refused_at(tmp_path, GOOD_PROGRAM, old, new, line, words)


def assert_refused_at(tmp_path, program, old, new, line, words):
    """`program` with `old` replaced by `new` is refused at `line`, with `words` in the message."""
    assert old in program
    path = write(tmp_path, "bad.yaml", program.replace(old, new))
    with pytest.raises(InputError) as err:
        assemble(path)
    assert err.value.line == line, str(err.value)
    assert words in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


REGISTERS_AFTER_STREAM = """
name: t
header: {fields: [distance]}
entry: {receive: r, inject: i}
program:
  - {label: r, op: wait_header}
  - {op: forward, via: adaptive, else: held}
  - {op: branch, if: route == direction, goto: tail}
  - {op: jump, goto: tail}
  - {label: held, op: add, field: distance, value: -1}
  - {op: store}
  - {label: tail, op: wait_tail}
  - {op: done}
  - {label: i, op: wait_header}
  - {op: forward, via: adaptive, else: retry}
  - {op: wait_tail}
  - {op: done}
"""


def test_registers_may_be_used_until_the_stream_starts(tmp_path):
    """A refused forward's `else` path still owns the registers; after the stream only the route kind is read."""
    program = assemble(write(tmp_path, "ok.yaml", REGISTERS_AFTER_STREAM))
    assert len(program) == 12


@pytest.mark.parametrize("old,new,line,words", [
    ("{label: tail, op: wait_tail}", "{label: tail, op: add, field: distance, value: 1}\n  - {op: wait_tail}", 11,
     "'add' uses the header registers after the 'forward' of line 6"),
    ("if: route == direction", "if: distance == 0", 7, "'branch' uses the header registers after the 'forward' of line 6"),
    ("{op: jump, goto: tail}", "{op: jump, goto: r}", 5, "'wait_header' uses the header registers after the 'forward'"),
    ("{op: store}", "{op: store}\n  - {op: branch, if: arrived, goto: tail}", 11,
     "'branch' uses the header registers after the 'store' of line 10"),
])
def test_registers_used_after_the_stream_are_refused(tmp_path, old, new, line, words):
    assert_refused_at(tmp_path, REGISTERS_AFTER_STREAM, old, new, line, words)


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
    from harts.machine.simulation import Simulation
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(InputError) as err:
        Simulation(load_config(path))
    assert words in str(err.value), str(err.value)
    if line is not None:
        assert err.value.line == line


def test_missing_traffic_field_names_line(tmp_path):
    from harts.machine.simulation import Simulation
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
    from harts.machine.simulation import Simulation
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


# ---- every input class through the command line: exit code, one line on stderr, where, no traceback ----

def cli(capsys, *args):
    """harts.cli.main in this process: its exit code and the one line it wrote to stderr (an exception that
    escaped main would fail the test, as it would print a traceback)."""
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return code, lines[0]


def run_config(capsys, tmp_path, text, *more):
    path = write(tmp_path, "c.yaml", text)
    code, line = cli(capsys, "run", path, *more)
    return code, line, path


@pytest.mark.parametrize("text,line,words", [
    ("timing:\n  clock_period_us: 0\n", 2, "'timing.clock_period_us' must be > 0, got 0"),
    ("timing:\n  link_rate_mbytes_per_s: 0\n", 2, "'timing.link_rate_mbytes_per_s' must be > 0, got 0"),
    ("timing:\n  clock_period_us: .inf\n", 2, "expects a finite number, got inf"),
    ("traffic:\n  uniform: {load: .nan}\n", 2, "'traffic.uniform.load' expects a finite number, got nan"),
    ("timing:\n  link_rate_mbytes_per_s: 1000000000\n  clock_period_us: 1000\n", 2,
     "whole number of bytes per cycle, at most 2^20"),
    ("timing:\n  header_bytes: 100\n", 2, "'timing.receiver_fifo_bytes' (64) must be at least 'timing.header_bytes'"),
    ("faults:\n  random_behaviour: lie\n", 2, "'faults.random_behaviour' must be alter, drop or bogus, got 'lie'"),
    ("faults:\n  random_crashed: 1000\n", 2, "'faults.random_crashed' + 'faults.random_byzantine' (1000) must be at "
                                            "most 18: the nodes of E-3 that are not spare or faulty already"),
    ("faults:\n  crashed: [5]\n  random_crashed: 9\n  random_byzantine: 9\n", 4, "must be at most 17"),
    ("faults:\n  random_dead_links: 1000\n", 2,
     "'faults.random_dead_links' (1000) must be at most 114, the (directed) links of E-3"),
    ("faults:\n  dead_links: [{node: 1, direction: true}]\n", 2, "'direction' must be 0..5, got True"),
    ("reception:\n  rule: loudest\n", 2, "'reception.rule' must be majority or first-valid, got 'loudest'"),
    ("run:\n  cycles: 1.5\n", 2, "'run.cycles' expects an integer, got 1.5"),
    ("run:\n  cycles: 1e18\n", 2, "'run.cycles' must be in 1..2^40, got '1e18'"),
    ("run:\n  cycles: 1180591620717411303424\n", 2, "'run.cycles' must be in 1..2^40"),
    ("run:\n  packets: 1180591620717411303424\n", 2, "'run.packets' must be in 0..2^47"),
    ("run:\n  seed: 1180591620717411303424\n", 2, "'run.seed' must be in 0..2^62"),
    ("run:\n  drain_cycles: 1e30\n", 2, "'run.drain_cycles' must be in 1..2^40"),
    ("bmu:\n  capacity_bytes: 1180591620717411303424\n", 2, "'bmu.capacity_bytes' must be in 1..2^40"),
    # E-3: 19 nodes, 6 links each, mean route 30/18 hops, so a link load L is a per-node load 3.6 L, and
    # 19 x 3.6 L x 6 / 185.6 packets a cycle
    ("traffic:\n  uniform: {load: 1.0e-10}\nrun:\n  packets: 1000\n", 4,
     "1000 uniform packets at load 1e-10 take about 4.52e+12 cycles to generate, more than the 2^40 a run can last"),
    ("traffic:\n  uniform: {load: 1.0e+9}\nrun:\n  cycles: 1e9\n", 4,
     "generate about 2.21e+18 uniform packets, more than the 2^47 a run can number"),
    ("traffic:\n  uniform: {load: 0.1}\nrun:\n  cycles: 1000\n  warmup_cycles: 1000\n", 5,
     "'run.warmup_cycles' (1000) must be less than 'run.cycles' (1000): uniform traffic is generated only before "
     "run.cycles, so nothing would be measured"),
    ("bmu: {when_full: wait}\ntraffic:\n  packets:\n    - {cycle: 0, source: 0, destination: 3, length: 64}\n"
     "    - {cycle: 0, source: 0, destination: 3, length: 70000}\n", 5,
     "a packet of 70000 bytes is longer than bmu.capacity_bytes (65536): every packet must fit in a BMU, which "
     "stores it whenever it cannot cut through"),
    ("bmu: {capacity_bytes: 256}\ntraffic:\n  broadcasts:\n    - {cycle: 0, source: 0, direction: 1, distance: 2,"
     " length: 512}\n", 4, "a packet of 512 bytes is longer than bmu.capacity_bytes (256)"),
    ("bmu: {capacity_bytes: 256}\ntraffic:\n  uniform:\n    load: 0.1\n    lengths:\n      - 64\n      - 512\n", 7,
     "a packet of 512 bytes is longer than bmu.capacity_bytes (256)"),
    ("traffic:\n  uniform: {load: 0.1, length_probabilities: [true, false, false]}\n", 2,
     "expected 3 non-negative numbers summing to 1"),
    ("np:\n  program: nowhere.py\n", 2, "NP program 'nowhere.py' not found"),
    # the cut-through kernel's context rows hold ticks in 32 bits (state.CX_DTYPE)
    ("traffic:\n  uniform: {load: 0.1}\nrun:\n  cycles: 400000000\n", 4,
     "the cut-through kernel runs up to cycle 357,913,941 1/6 (2^31 ticks of 6 per cycle), and this traffic is "
     "created until cycle 400,000,000"),
])
def test_bad_config_values_through_the_command_line(capsys, tmp_path, text, line, words):
    code, message, path = run_config(capsys, tmp_path, "topology: {kind: hex, size: 3}\n" + text)
    assert code == 2
    assert message.startswith(f"harts: error: {path}:{line + 1}: "), message
    assert words in message, message


@pytest.mark.parametrize("text,line,words", [
    # the flit-level kernel's input and buffer rows hold cycles in 32 bits (flits/state.py, ROW_DTYPE)
    ("traffic:\n  uniform: {load: 0.1}\nrun:\n  cycles: 3000000000\n", 4,
     "the flit-level kernel runs up to cycle 2,147,483,647 (2^31 - 1), and this traffic is created until cycle "
     "3,000,000,000"),
    ("timing:\n  link_delay_cycles: 1073741824\n", 2,
     "a link delay of 1,073,741,824 cycles; the flit-level kernel takes at most 1,073,741,823"),
])
def test_bad_flit_level_config_values_through_the_command_line(capsys, tmp_path, text, line, words):
    code, message, path = run_config(capsys, tmp_path, "topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\n"
                                     + text)
    assert code == 2
    assert message.startswith(f"harts: error: {path}:{line + 2}: "), message
    assert words in message, message


def test_a_network_with_more_event_ids_than_32_bits_hold_is_refused_on_any_machine(capsys, tmp_path, monkeypatch):
    """The cut-through clock numbers event ids in int32 (state.CLOCK_ID_DTYPE): E-8000 has 191,976,001 nodes of 13
    ids each, 2.5 x 10^9 ids. On a machine with the memory for it (here pretended) it is refused all the same."""
    monkeypatch.setattr("harts.machine.simulation.available_memory", lambda: 2**50)
    code, message, path = run_config(capsys, tmp_path, "topology: {kind: hex, size: 8000}\n")
    assert code == 2
    assert message == (f"harts: error: {path}:1: this network (191,976,001 nodes) has more event ids than the "
                       f"cut-through kernel numbers in 32 bits: at most 165,191,049 nodes with 12 contexts each")


def test_a_network_too_big_says_how_much_memory_it_would_need(capsys, tmp_path):
    code, message, path = run_config(capsys, tmp_path, "topology: {kind: torus, dims: [1000000, 1000000]}\n")
    assert code == 2
    assert message.startswith(f"harts: error: {path}:1: this network (1,000,000,000,000 nodes) needs about ")
    assert message.endswith("is available") and "GB of memory" in message


@pytest.mark.parametrize("text,line,words", [
    ("", 1, "file is empty, expected a YAML mapping"),
    ("- run\n- timing\n", 1, "expected a YAML mapping of sections"),
    ("run:\n  cycles: [1, 2\n", 3, "invalid YAML: expected ',' or ']'"),
    ("run:\n  cycles: 5\x00\n", 2, "invalid YAML: special characters are not allowed (#x0000)"),
    ("run: &r\n  seed: *r\n", 1, "an alias refers to a node that contains it"),
    ("run:\n  seed: 2001-13-45\n", 2, "invalid YAML value '2001-13-45': month must be in 1..12"),
    ("run:\n  seed: !!python/object:os.system x\n", 2, "could not determine a constructor for the tag"),
    ("timing: [1, 2]\n", 1, "'timing' expects a mapping"),
    ("run:\n  cycles:\n", 2, "'run.cycles' expects an integer, got None"),
    ("run: " + "[" * 1000 + "]" * 1000 + "\n", None, "invalid YAML: nested too deeply"),
])
def test_files_that_are_not_configs(capsys, tmp_path, text, line, words):
    code, message, path = run_config(capsys, tmp_path, text)
    where = f"{path}:{line}: " if line else f"{path}: "
    assert code == 2 and message.startswith(f"harts: error: {where}") and words in message, message


def test_a_file_that_is_not_utf8_or_a_directory(capsys, tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("run:\n  seed: 1 # Schöne\n".encode("latin-1"))
    assert cli(capsys, "run", path) == (2, f"harts: error: {path}:2: not UTF-8 text (byte 0xf6)")
    assert cli(capsys, "run", tmp_path) == (2, f"harts: error: {tmp_path}: cannot read file (Is a directory)")
    assert cli(capsys, "microcode", "check", path) == (2, f"harts: error: {path}:2: not UTF-8 text (byte 0xf6)")


def test_numbers_written_with_an_exponent_are_the_numbers_meant(tmp_path):
    config = load_config(write(tmp_path, "c.yaml", """
        run: {cycles: 1e9, packets: 1.5e3, seed: 2E3}
        traffic: {uniform: {load: 5e-1}}
        timing: {clock_period_us: 15e-1}
        """))
    assert config["run.cycles"] == 10**9 and type(config["run.cycles"]) is int
    assert (config["run.packets"], config["run.seed"]) == (1500, 2000)
    assert (config["traffic.uniform.load"], config["timing.clock_period_us"]) == (0.5, 1.5)
    with pytest.raises(InputError, match="'run.seed' expects an integer, got 1.5"):
        load_config(write(tmp_path, "c.yaml", "run: {seed: 1.5}\n"))


def test_values_set_in_code_are_checked_as_a_files_are():
    from harts.machine.config import hex_config
    with pytest.raises(InputError, match="'run.cycles' must be in 1..2\\^40, got 0"):
        hex_config(3, run__cycles=0)
    with pytest.raises(InputError, match="'reception.rule' must be majority or first-valid"):
        hex_config(3, reception__rule="loudest")


def test_the_spare_nodes_by_default_are_never_drawn(capsys, tmp_path):
    from harts.machine.simulation import Simulation
    config = load_config(write(tmp_path, "c.yaml", "topology: {kind: hex, size: 3}\nfaults: {random_crashed: 18}\n"))
    assert list(Simulation(config).faults.faulty_nodes) == list(range(1, 19))  # all but faults.spare: [0]


@pytest.mark.parametrize("program,line,words", [
    ("def (:\n", 1, "cannot load the NP program: SyntaxError: invalid syntax"),
    ("import os\nimport no_such_module_here\n", 2, "ModuleNotFoundError: No module named 'no_such_module_here'"),
    ("from harts.np.program import Program, procedure\n\ndef run(event, state, sends, system):\n"
     "    return undefined + 1\n\nPROGRAM = Program('p', 'p', procedure(run))\n", 6,
     "TypingError: NameError: name 'undefined' is not defined"),
])
def test_np_programs_that_do_not_load(capsys, tmp_path, program, line, words):
    (tmp_path / "p.py").write_text(program)
    code, message, _ = run_config(capsys, tmp_path, "np: {program: p.py}\n")
    assert code == 2 and message.startswith(f"harts: error: {tmp_path / 'p.py'}:{line}: ") and words in message, \
        message


def test_reception_rule_is_checked_by_run_and_broadcast(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", "topology: {kind: hex, size: 3}\nreception: {rule: loudest}\n")
    for command in (["run", path], ["broadcast", "--algorithm", "sbcast", "--config", path],
                    ["faults", "--algorithm", "sbcast", "--crash", "1", "--config", path]):
        code, message = cli(capsys, *command)
        assert code == 2 and message.startswith(f"harts: error: {path}:2: 'reception.rule' must be"), message


@pytest.mark.parametrize("args,words", [
    (["broadcast", "--algorithm", "sbcast", "--size", "3", "--length", "70000"],
     "harts broadcast: --length must be at most bmu.capacity_bytes (65536): every packet must fit in a BMU"),
    (["faults", "--algorithm", "sbcast", "--size", "3", "--crash", "1", "--length", "70000"],
     "harts faults: --length must be at most bmu.capacity_bytes (65536)"),
    (["faults", "--algorithm", "sbcast", "--size", "3", "--crash", "1", "--length", "2"],
     "harts faults: --length must be at least the header (6 bytes), got 2"),
    (["faults", "--algorithm", "sbcast", "--size", "3", "--crash", "1", "--trials", str(2**70)],
     "argument --trials: expected a positive integer up to 1000000"),
    (["bench", "--cycles", str(2**70)], "argument --cycles: expected a positive integer up to 2^40"),
    (["bench", "--seed", "1e30"], "argument --seed: expected a non-negative integer up to 2^62, got '1e30'"),
    (["bench", "--load", "inf"], "argument --load: load must be >= 0 and finite, got 'inf'"),
    (["bench", "--load", "nan"], "argument --load: load must be >= 0 and finite, got 'nan'"),
    (["trace", "configs/explicit_e5.yaml", "--vcd", "t.vcd", "--cycles", f"0:{2**41}"],
     "argument --cycles: expected 0 <= A <= B <= 2^40"),
    (["trace", "configs/explicit_e5.yaml", "--vcd", "t.vcd", "--nodes", "0,1,0"],
     "argument --nodes: each node may be named once, got '0,1,0'"),
    (["figure", "10", "--workers", "0"], "argument --workers: expected a positive integer, got '0'"),
    (["figure", "10", "--load-basis", "edge"], "argument --load-basis: invalid choice: 'edge'"),
    (["sensitivity", "--workers", "-1"], "argument --workers: expected a positive integer, got '-1'"),
    (["ata", "--eta", "100"], "harts ata: eta is at most the 61 nodes of the network, got 100"),
    (["ata", "--mu", "0"], "argument --mu: expected a positive integer, got '0'"),
    (["ata", "--config", "configs/mesh_8x8.yaml"], "no Hamiltonian decomposition for mesh 8x8"),
    (["ata", "--length", "50"], "not a whole number: choose a length that is a multiple of 6 bytes"),
    (["ata", "--algorithm", "ks", "--config", "configs/torus_8x8.yaml"], "KS-ATA runs on the hexagonal mesh only"),
    (["ata", "--algorithm", "ks", "--overlapped"], "harts ata: eta and overlapped stages are IHC's, not KS's"),
    (["ata", "--algorithm", "frs"], "FRS runs on the hypercube only"),
    (["ata", "--algorithm", "vsq", "--config", "configs/torus_8x8.yaml"], "VSQ-ATA runs on square 2-D tori of odd side"),
    (["ata", "--queueing", "5", "--overlapped"], "the worst case stores every hop: its stages cannot overlap"),
    (["ata", "--queueing", "-1"], "argument --queueing: expected a non-negative integer, got '-1'"),
    (["ata", "--algorithm", "vrs"], "VRS-ATA runs on the hypercube only"),
    (["run"], "the following arguments are required: config"),
    (["run", "configs/explicit_e5.yaml", "--jsn"], "unrecognized arguments: --jsn"),
])
def test_odd_arguments(capsys, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(REPO)
    code, message = cli(capsys, *[str(tmp_path / a) if a == "t.vcd" else a for a in args])
    assert code == 2 and words in message, message


def _not_writable(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    return [(tmp_path / "no" / "such" / "dir" / "x.png", "No such file or directory"),
            (afile / "x.png", "Not a directory")], afile


@pytest.mark.parametrize("command", [["broadcast", "--algorithm", "sbcast", "--size", "3"],
                                     ["faults", "--algorithm", "sbcast", "--size", "3", "--crash", "1"],
                                     ["ata", "--algorithm", "ks"]])
def test_unwritable_plot_is_refused_before_the_run(capsys, tmp_path, command):
    paths, _ = _not_writable(tmp_path)
    for path, reason in paths:
        assert cli(capsys, *command, "--plot", path) == (
            2, f"harts: error: harts {command[0]}: argument --plot: cannot write {path} ({reason})")
    code, message = cli(capsys, *command, "--plot", tmp_path)
    assert code == 2 and "argument --plot: expected a file name ending in one of .avif" in message
    code, message = cli(capsys, *command, "--plot", tmp_path / "tree.xyz")
    assert code == 2 and ".png" in message and "got" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # nothing written, no run


def test_unwritable_vcd_and_results_are_refused_before_the_run(capsys, tmp_path):
    paths, afile = _not_writable(tmp_path)
    config = REPO / "configs" / "explicit_e5.yaml"
    for path, reason in paths:
        assert cli(capsys, "trace", config, "--vcd", path) == (
            2, f"harts: error: harts trace: argument --vcd: cannot write {path} ({reason})")
    assert cli(capsys, "trace", config, "--vcd", tmp_path) == (
        2, f"harts: error: harts trace: argument --vcd: {tmp_path} is a directory, expected a file name")
    assert cli(capsys, "figure", "10", "--quick", "--results", afile) == (
        2, f"harts: error: harts figure: argument --results: {afile} is a file, expected a directory")
    assert cli(capsys, "reproduce", "--quick", "--results", afile / "r") == (
        2, f"harts: error: harts reproduce: argument --results: cannot write in {afile / 'r'} (Not a directory)")
    assert cli(capsys, "sensitivity", "--quick", "--results", afile) == (
        2, f"harts: error: harts sensitivity: argument --results: {afile} is a file, expected a directory")


def test_output_without_permission_is_refused(capsys, tmp_path):
    locked = unwritable_directory(tmp_path)
    assert cli(capsys, "trace", REPO / "configs" / "explicit_e5.yaml", "--vcd", locked / "t.vcd") == (
        2, f"harts: error: harts trace: argument --vcd: cannot write {locked / 't.vcd'} (Permission denied)")
    code, message = cli(capsys, "figure", "10", "--results", locked / "r")
    # the operating system's reason: EACCES in a locked directory, EPERM in sysfs
    assert code == 2 and message in (
        f"harts: error: harts figure: argument --results: cannot write in {locked / 'r'} ({reason})"
        for reason in ("Permission denied", "Operation not permitted"))


def test_dask_scheduler_without_dask(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # import fails as if dask were not installed
    assert cli(capsys, "figure", "10", "--quick", "--no-progress", "--results", tmp_path, "--dask-scheduler",
               "tcp://127.0.0.1:1") == (2, "harts: error: --dask-scheduler needs dask.distributed, which is not "
                                           "installed (pip install -e '.[dask]')")


def test_unreachable_dask_scheduler_fails_within_seconds(capsys, tmp_path, monkeypatch):
    from harts.experiments import sweep
    monkeypatch.setattr(sweep, "DASK_CONNECT_SECONDS", 0.5)
    started = time.perf_counter()
    code, message = cli(capsys, "figure", "10", "--quick", "--results", tmp_path, "--dask-scheduler",
                        "tcp://127.0.0.1:1")
    assert time.perf_counter() - started < 5
    assert code == 2 and message.startswith("harts: error: --dask-scheduler: cannot connect to a Dask scheduler at "
                                            "'tcp://127.0.0.1:1' ("), message
    code, message = cli(capsys, "reproduce", "--results", tmp_path, "--dask-scheduler", "no address")
    assert code == 2 and "at 'no address' (missing port number" in message, message


def test_trace_stops_when_the_run_is_over(capsys, tmp_path):
    from harts.machine.simulation import load_kernel
    load_kernel()
    out = tmp_path / "t.vcd"
    started = time.perf_counter()
    assert main(["trace", str(REPO / "configs" / "explicit_e5.yaml"), "--vcd", str(out), "--cycles",
                 "0:100000000"]) == 0
    assert time.perf_counter() - started < 20  # sampling to cycle 10^8 took hours
    printed = capsys.readouterr().out
    end = int(printed.split("cycles 0..")[1].split()[0])
    assert end < 10_000
    last_stamp = max(int(line[1:]) for line in out.read_text().splitlines() if line.startswith("#"))
    assert last_stamp <= (end + 2) * 1500  # ns: nothing recorded past the run's end and the idle gaps after it
