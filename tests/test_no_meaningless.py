"""No number without meaning (issue 57): a measurement a fault silences, a key that would be ignored, a run that
would measure nothing and a command that would report a speed over no packets are refused before the run in one
line (FILE:LINE where the input has lines, exit 2), or report why a field is empty; a run that fails leaves no
partial output file."""

import json
from pathlib import Path

import numpy as np
import pytest

from harts.cli import main
from harts.machine.config import load_config

from .test_bad_input import cli, write

REPO = Path(__file__).resolve().parent.parent
T3D = (REPO / "configs" / "t3d_mesh_8x8.yaml").read_text()  # 8x8 mesh, wormhole, all-port NPs, idle


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the input on which `needle` stands."""
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def refused(capsys, *args) -> str:
    """The one line a command refused with (exit 2)."""
    code, message = cli(capsys, *args)
    assert code == 2, message
    assert capsys.readouterr().out == ""
    return message


def succeeded(capsys, *args) -> tuple[str, str]:
    """stdout and stderr of a command that must succeed."""
    assert main([str(a) for a in args]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def edge_links(node: int, directions) -> str:
    return "[" + ", ".join(f"{{node: {node}, direction: {d}, both: true}}" for d in directions) + "]"


# ---- a measurement a fault silences says so ----

@pytest.mark.parametrize("faults,key", [
    ("  crashed: [0]\n", "crashed"),  # was S = r = d = 0, largest residual 0.0
    ("  crashed: [9]\n", "crashed"),  # was a residual of 107 cycles, a lost probe fitted as a latency of 0
    (f"  dead_links: {edge_links(0, range(6))}\n", "dead_links"),  # node 0 cut off
    ("  spare: []\n  random_crashed: 19\n", "random_crashed"),  # every node of E-3 crashed
    ("  corruption_probability: 0.5\n", "corruption_probability"),
])
def test_calibrate_refuses_a_faulty_config(capsys, tmp_path, faults, key):
    text = "topology: {kind: hex, size: 3}\nfaults:\n" + faults
    path = write(tmp_path, "c.yaml", text)
    message = refused(capsys, "calibrate", "--config", path)
    assert message.startswith(f"harts: error: {path}:{line_of(text, key)}: calibration measures every probe on a "
                              f"fault-free network, and this config has faults (faults.{key})"), message


def test_calibrate_refuses_faults_on_the_flit_level_too(capsys, tmp_path):
    text = T3D + "faults:\n  crashed: [0]\n"
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "calibrate", "--config", path).startswith(
        f"harts: error: {path}:{line_of(text, 'crashed')}: calibration measures every probe on a fault-free network")


def test_a_lost_probe_is_never_fitted():
    from harts.controller import records
    from harts.errors import SimulationError
    from harts.tools.calibrate import _refuse_lost_probes
    deliveries = np.zeros((records.DL_ROWS, 2), np.int64)
    deliveries[records.DL_UID] = [0, 2]  # probe 1, to node 7, never arrived
    with pytest.raises(SimulationError, match=r"^1 probes from node 0 were not delivered \(to node 7\)"):
        _refuse_lost_probes(deliveries, np.array([5, 7, 9]))


def test_a_circuit_broadcast_measures_its_cost_without_the_configs_faults():
    """The linear cost is measured on a 5x5 torus, where the config's faults (of its own network) do not apply:
    node 7 crashed on the 25x25 torus used to crash node 7 of the 5x5 calibration torus and fail it."""
    from harts.tools.calibrate import measure_linear_cost
    config = load_config(REPO / "configs" / "circuit_torus_25x25.yaml")
    assert measure_linear_cost(config.with_values(faults__crashed=[7], faults__random_dead_links=3)) == \
        measure_linear_cost(config)


@pytest.mark.parametrize("faults,key,words", [
    ("  crashed: [0]\n", "crashed", ("the source, node 0, is crashed (faults.crashed): a broadcast from it reaches no "
                                     "node; choose another --source")),
    (f"  dead_links: {edge_links(0, (0, 1))}\n", "dead_links",
     "the source, node 0, is cut off: every link out of it is dead or leads to a crashed node (faults.dead_links)"),
    ("  crashed: [1, 8]\n", "crashed", "the source, node 0, is cut off"),  # the corner's two neighbours
])
def test_a_broadcast_from_a_silenced_source_is_refused(capsys, tmp_path, faults, key, words):
    """It used to report latency 0, 0 steps, 63 sends and contention_free: true."""
    text = T3D + "faults:\n" + faults
    path = write(tmp_path, "c.yaml", text)
    message = refused(capsys, "broadcast", "--algorithm", "rd", "--config", path)
    assert message.startswith(f"harts: error: {path}:{line_of(text, key)}: {words}"), message
    vcd = tmp_path / "t.vcd"
    message = refused(capsys, "trace", path, "--vcd", vcd, "--broadcast", "rd")
    assert message.startswith(f"harts: error: {path}:{line_of(text, key)}: {words}"), message
    assert not vcd.exists()


def test_a_paper_000_broadcast_from_a_crashed_source_is_refused(capsys, tmp_path):
    """It used to end in a traceback (the latency of no copies)."""
    text = "topology: {kind: hex, size: 4}\nfaults: {crashed: [0]}\n"
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "broadcast", "--algorithm", "sbcast", "--config", path) == (
        f"harts: error: {path}:2: the source, node 0, is crashed (faults.crashed): a broadcast from it reaches no "
        f"node; choose another --source")


def test_a_broadcast_on_a_faulty_network_says_whom_it_reached(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", T3D + "faults:\n  crashed: [9]\n")
    data = json.loads(succeeded(capsys, "broadcast", "--algorithm", "rd", "--config", path, "--json")[0])
    assert data["faulty_nodes"] == [9] and data["dead_links"] == 0
    assert data["non_faulty_receivers"] == 62  # 64 nodes but the source and node 9
    assert 0 < data["reached_nodes"] < 62  # the copies node 9 would have sent on are lost
    fault_free = json.loads(succeeded(capsys, "broadcast", "--algorithm", "rd", "--config", REPO / "configs" /
                                      "t3d_mesh_8x8.yaml", "--json")[0])
    assert "reached_nodes" not in fault_free


def test_harts_faults_refuses_the_configs_own_faults(capsys, tmp_path):
    """Each trial's random fault set replaced them without a word."""
    text = "topology: {kind: hex, size: 3}\nfaults:\n  crashed: [4]\n"
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "faults", "--algorithm", "sbcast", "--crash", "1", "--config", path).startswith(
        f"harts: error: {path}:3: harts faults draws its own fault sets (--crash, --byzantine) on a fault-free network")


def test_ata_refuses_a_faulty_config(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", "faults:\n  byzantine: [{node: 3, behaviour: drop}]\n")
    assert refused(capsys, "ata", "--config", path).startswith(
        f"harts: error: {path}:2: harts ata runs on a fault-free network, and this config has faults "
        f"(faults.byzantine): its fault trials draw their own")


def test_a_run_whose_packets_all_died_says_why_its_latencies_are_null(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", "topology: {kind: hex, size: 3}\ntraffic: {uniform: {load: 0.1}}\n"
                                     "run: {cycles: 2000}\nfaults: {random_crashed: 18}\n")
    data = json.loads(succeeded(capsys, "run", path, "--json")[0])
    assert data["packets"] > 0 and data["packets_measured"] == 0 and data["latency_mean_cycles"] is None
    assert data["latency_unmeasured"] == (f"no unicast made at or after run.warmup_cycles was delivered "
                                          f"({data['packets']:,} made in all, {data['dropped_by_faults']:,} dropped)")
    worms = write(tmp_path, "w.yaml", "topology: {kind: hex, size: 3}\ntraffic:\n  broadcasts:\n"
                                      "    - {cycle: 0, source: 0, direction: 1, distance: 2, length: 64}\n")
    data = json.loads(succeeded(capsys, "run", worms, "--json")[0])
    assert data["latency_unmeasured"] == "the traffic made no unicast (latencies are of traffic unicasts)"
    measured = json.loads(succeeded(capsys, "run", REPO / "configs" / "explicit_e5.yaml", "--json")[0])
    assert "latency_unmeasured" not in measured


# ---- what can be known from the config and the arguments is refused before the run ----

def test_a_worm_on_a_flit_level_config(capsys, tmp_path):
    text = ("topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\ntraffic:\n  broadcasts:\n"
            "    - {cycle: 0, source: 0, direction: 1, distance: 2, length: 64}\n")
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "run", path) == (
        f"harts: error: {path}:5: a traffic.broadcasts worm is sent by direction, which the flit-level controller "
        f"does not route ('wormhole' switches by wormhole): worms run on a cut-through microprogram (microcode: harts)")


def test_a_broadcast_length_that_cannot_drain(capsys, tmp_path):
    assert refused(capsys, "broadcast", "--algorithm", "rd", "--config", REPO / "configs" / "t3d_mesh_8x8.yaml",
                   "--length", "100000000000").startswith(
        f"harts: error: {REPO / 'configs' / 't3d_mesh_8x8.yaml'}: --length 100,000,000,000 flits take at least "
        f"100,000,000,000 cycles a packet to send, more than run.drain_cycles (2,000,000)")
    text = T3D.replace("  warmup_cycles: 0", "  drain_cycles: 5000\n  warmup_cycles: 0")
    path = write(tmp_path, "c.yaml", text)
    # one flit a cycle (6-byte flits, 6 bytes a cycle): 6,000 flits take 6,000 cycles
    assert refused(capsys, "broadcast", "--algorithm", "rd", "--config", path, "--length", "6000").startswith(
        f"harts: error: {path}:{line_of(text, 'drain_cycles')}: --length 6,000 flits take at least 6,000 cycles")


@pytest.mark.parametrize("microcode", ["wormhole", "harts"])
def test_run_packets_counts_uniform_packets_only(capsys, tmp_path, microcode):
    """run.packets with synthetic traffic was ignored on both kernels."""
    text = (f"topology: {{kind: mesh, dims: [4, 4]}}\nmicrocode: {microcode}\ntraffic:\n  synthetic: {{rate: 0.05}}\n"
            f"run:\n  packets: 100\n")
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "run", path) == (
        f"harts: error: {path}:6: 'run.packets' (100) counts the packets of traffic.uniform, and traffic.uniform.load "
        f"is 0: set it, or leave run.packets out")
    text = text.replace("{rate: 0.05}", "{rate: 0.05}\n  uniform: {load: 0.1}")
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "run", path).startswith(
        f"harts: error: {path}:7: 'run.packets' (100) ends traffic.uniform by count, but traffic.synthetic runs for "
        f"run.cycles")


def test_a_warmup_that_leaves_nothing_to_measure(capsys, tmp_path):
    text = ("topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\ntraffic:\n  synthetic: {rate: 0.05}\n"
            "run:\n  cycles: 1000\n  warmup_cycles: 1000\n")
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "run", path) == (
        f"harts: error: {path}:7: 'run.warmup_cycles' (1000) must be less than 'run.cycles' (1000): synthetic traffic "
        f"is generated only before run.cycles, so nothing would be measured")
    torus = REPO / "configs" / "torus_8x8.yaml"  # uniform traffic, 20,000 cycles
    assert refused(capsys, "run", torus, "--set", "run.warmup_cycles=20000").startswith(
        f"harts: error: {torus}: 'run.warmup_cycles' (20000) must be less than 'run.cycles' (20000)")
    assert "'run.warmup_cycles' (500) must be less than 'run.cycles' (500): synthetic traffic" in refused(
        capsys, "sweep", REPO / "configs" / "mesh_8x8.yaml", "--set", "run.cycles=500", "--set",
        "run.warmup_cycles=500", "--rates", "0.1", "--results", tmp_path, "--no-progress")


def test_ata_runs_in_dedicated_mode_and_says_what_it_left_out(capsys, monkeypatch):
    """The torus's background traffic used to run under the all-to-all and overflow a receiver FIFO."""
    monkeypatch.chdir(REPO)
    out, _ = succeeded(capsys, "ata", "--config", "configs/torus_8x8.yaml")
    lines = out.splitlines()
    assert lines[1] == ("  dedicated mode: the config's traffic is left out (traffic.uniform.load at "
                        "configs/torus_8x8.yaml:7)")
    # eta (S + rM + (N-2) d) = 2 (7 + 48/6 + 62 x 5): an idle torus, contention-free
    assert lines[2].startswith("  completion 650 cycles;") and "650 cycles (exact)" in lines[2]


@pytest.mark.parametrize("args,line", [
    (["--config", "c.yaml"], 3),  # traffic.synthetic.rate: 0 stands on line 3
    (["--load", "0"], None),
])
def test_bench_refuses_an_idle_config(capsys, tmp_path, monkeypatch, args, line):
    """It used to report 0 packets, 1 cycle and a speed."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "c.yaml", "topology: {kind: hex, size: 3}\ntraffic:\n  synthetic: {rate: 0}\n")
    where = f"c.yaml:{line}: " if line else ""
    assert refused(capsys, "bench", *args) == (
        f"harts: error: {where}harts bench: this config has no traffic of its own (no traffic.packets or worms, "
        f"traffic.uniform.load and traffic.synthetic.rate 0, no traffic.trace): nothing to bench; give it a load: "
        f"--load L (traffic.uniform.load)")


def test_a_rate_of_0_is_refused_at_its_line(capsys, tmp_path):
    text = "topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\ntraffic:\n  synthetic: {rate: 0}\n"
    path = write(tmp_path, "c.yaml", text)
    assert refused(capsys, "run", path).startswith(
        f"harts: error: {path}:4: harts run: this config has no traffic of its own")


def test_an_np_program_syntax_error_names_its_line_from_a_relative_path(capsys, tmp_path, monkeypatch):
    (tmp_path / "p.py").write_text("x = 1\n\ndef f(:\n    pass\n")
    write(tmp_path, "c.yaml", "np: {program: p.py}\n")
    monkeypatch.chdir(tmp_path)
    assert refused(capsys, "run", "c.yaml").startswith(
        "harts: error: p.py:3: cannot load the NP program: SyntaxError: invalid syntax")


def test_an_integral_float_is_an_integer_in_lists_and_mappings_too(tmp_path):
    """`cycles: 2000.0` was taken and `dims: [8.0, 8]` refused."""
    config = load_config(write(tmp_path, "c.yaml", "topology: {kind: torus, dims: [8.0, 8]}\nrun: {cycles: 2000.0}\n"
                                                   "faults: {crashed: [3.0, 1e1]}\n"))
    assert config.topology_spec == {"kind": "torus", "dims": [8, 8]}
    assert all(type(side) is int for side in config.topology_spec["dims"])
    assert config["faults.crashed"].plain() == [3, 10]
    assert config["run.cycles"] == 2000 and type(config["run.cycles"]) is int


def test_a_fractional_number_is_still_refused_at_its_line(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", "topology: {kind: hex, size: 3}\ntraffic: {uniform: {load: 0.1}}\n"
                                     "faults:\n  crashed: [3.5]\n")
    assert refused(capsys, "run", path) == f"harts: error: {path}:4: expected a node number 0..18, got 3.5"


# ---- a run that fails leaves no partial output ----

def test_a_failed_trace_leaves_no_vcd(capsys, tmp_path):
    path = write(tmp_path, "c.yaml", "topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\n"
                                     "traffic:\n  synthetic: {rate: 0.1}\nrun: {cycles: 200, drain_cycles: 1}\n")
    vcd = tmp_path / "t.vcd"
    code, message = cli(capsys, "trace", path, "--vcd", vcd)
    assert code == 1 and message.endswith("the run went past run.drain_cycles after the last packet was created")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # no VCD, whole or partial
    vcd.write_text("an older trace\n")
    assert cli(capsys, "trace", path, "--vcd", vcd)[0] == 1
    assert vcd.read_text() == "an older trace\n"


def test_an_output_file_appears_whole_or_not_at_all(tmp_path):
    from harts.output import replacing, write_text
    target = tmp_path / "out.csv"
    write_text(target, "old\n")
    with pytest.raises(KeyboardInterrupt), replacing(target) as temporary:
        temporary.write_text("half a fi")
        raise KeyboardInterrupt
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    write_text(target, "new\n")
    assert target.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


@pytest.mark.parametrize("args, option", [(["--paper", "001", "--quick"], "--quick"),
                                          (["--paper", "002", "--load-basis", "node"], "--load-basis"),
                                          (["--paper", "004", "--load-basis", "both"], "--load-basis")])
def test_reproduce_refuses_an_option_that_does_not_apply_to_the_paper(capsys, args, option):
    assert refused(capsys, "reproduce", *args) == \
        f"harts: error: harts reproduce: {option} does not apply to --paper {args[1]}"


def test_copies_per_node_leave_crashed_nodes_out(capsys):
    """6-BCAST on E-5 with nodes 3 and 10 crashed: each other node still gets 4 to 6 copies (the crashed ones none)."""
    out, _ = succeeded(capsys, "broadcast", "--algorithm", "6bcast", "--size", "5", "--set", "faults.crashed=[3, 10]",
                       "--json")
    summary = json.loads(out)
    assert summary["copies_per_node_min"] == 4 and summary["copies_per_node_max"] == 6
