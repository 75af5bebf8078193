"""The microcode tools: the assembler's listing and the VCD trace, read back."""

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from harts.machine.config import load_config
from harts.machine.simulation import Simulation
from harts.tools.trace import trace_run

REPO = Path(__file__).resolve().parent.parent


def read_vcd(path):
    """A small independent VCD reader: {scope.name: [(time, value), ...]}."""
    names, scopes, changes, now = {}, [], defaultdict(list), 0
    for line in Path(path).read_text().splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "$scope":
            scopes.append(words[2])
        elif words[0] == "$upscope":
            scopes.pop()
        elif words[0] == "$var":
            names[words[3]] = ".".join(scopes + [words[4]])
        elif line.startswith("#"):
            now = int(line[1:])
        elif line[0] == "b":
            value, ident = words
            changes[names[ident]].append((now, int(value[1:], 2)))
        elif line[0] in "01" and len(words) == 1 and line[1:] in names:
            changes[names[line[1:]]].append((now, int(line[0])))
    return changes


def value_at(changes, signal, time):
    value = None
    for t, v in changes[signal]:
        if t <= time:
            value = v
    return value


def test_trace_shows_a_packet_on_the_transmitter_bus_and_bmu(tmp_path):
    config = load_config(REPO / "configs" / "explicit_e5.yaml")
    sim = Simulation(config)
    out = tmp_path / "t.vcd"
    trace_run(lambda observer: sim.run(observer=observer), str(out), [0, 1], 0, 120,
              config["timing.clock_period_us"], sim.ticks_per_cycle)
    waves = read_vcd(out)
    cycle = 1500  # ns
    # packet 0 (node 0 -> 3, 128 bytes, created at cycle 0) leaves on direction 0 at tick 30 = cycle 5 and
    # the transmitter is free again after 128 bytes and the 8-byte gap: tick 166, during cycle 27
    assert value_at(waves, "n0.tx0.busy", 4 * cycle) == 0
    assert value_at(waves, "n0.tx0.busy", 5 * cycle) == 1
    assert value_at(waves, "n0.tx0.owner", 5 * cycle) == 1  # packet 0, shown as id + 1
    assert value_at(waves, "n0.tx0.busy", 27 * cycle) == 1
    assert value_at(waves, "n0.tx0.busy", 28 * cycle) == 0
    # node 1 receives it on receiver 0 (travelling in direction 0) and cuts through: its bus slot 0 is used
    assert any(v == 1 for _, v in waves["n1.bus.slot0"])
    assert any(v == 1 for _, v in waves["n1.rx0.packet"])
    # the BMU bus interface of node 0 ran its microprogram
    assert len({v for _, v in waves["n0.bmu0.pc"]}) > 1
    assert max(t for signal in waves.values() for t, _ in signal) <= 120 * cycle


def test_trace_command(tmp_path):
    out = tmp_path / "t.vcd"
    proc = subprocess.run([sys.executable, "-m", "harts.cli", "trace", "configs/explicit_e5.yaml", "--vcd", str(out),
                           "--nodes", "0,1", "--cycles", "0:50"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "n1.rx0.packet" in read_vcd(out)
    bad = subprocess.run([sys.executable, "-m", "harts.cli", "trace", "configs/explicit_e5.yaml", "--vcd",
                          str(out), "--cycles", "9:3"], cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_microcode_check_lists_or_names_the_error(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "harts.cli", "microcode", "check", "microcode/harts.yaml"],
                        cwd=REPO, capture_output=True, text=True)
    assert ok.returncode == 0
    lines = ok.stdout.splitlines()
    assert "25 instructions" in lines[0]
    assert lines[1].split()[:3] == ["0", "receive", "wait_header"]
    assert any("tee" in line and "via straight else relay_blocked" in line for line in lines)
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text((REPO / "microcode" / "harts.yaml").read_text().replace("op: add", "op: dec"))
    bad = subprocess.run([sys.executable, "-m", "harts.cli", "microcode", "check", str(bad_file)],
                         cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith(f"harts: error: {bad_file}:") and "unknown instruction 'dec'" in bad.stderr


WORM = """\
topology: {kind: mesh, dims: [3, 3]}
microcode: wormhole
traffic:
  packets:
    - {cycle: 0, source: 0, destination: 2, length: 24}
"""


def test_a_flit_level_trace_shows_a_worm_cross_two_links_flit_by_flit(tmp_path):
    """One 4-flit worm from node 0 to node 2 of an idle 3x3 mesh (two hops along +x0): each output it takes grants
    one flit a cycle for 4 cycles, the second link d cycles after the first (d: the per-hop term the zero-load
    calibration measures from delivery times alone); the VC it holds downstream is owned by packet 0 (shown as
    1) and its credits fall below the buffer depth and come back to it; node 1's input VC holds its flits."""
    from harts.tools.calibrate import calibrate_flits
    path = tmp_path / "worm.yaml"
    path.write_text(WORM)
    config = load_config(path)
    sim = Simulation(config)
    out = tmp_path / "w.vcd"
    trace_run(lambda observer: sim.run(observer=observer), str(out), [0, 1, 2], 0, 60,
              config["timing.clock_period_us"], sim.ticks_per_cycle)
    waves = read_vcd(out)
    period = round(config["timing.clock_period_us"] * 1000)
    per_hop = calibrate_flits(config).terms["d_cycles_per_hop"]

    def cycles_high(signal):
        return [cycle for cycle in range(61) if value_at(waves, signal, cycle * period) == 1]

    first, second = cycles_high("n0.out0.grant"), cycles_high("n1.out0.grant")
    assert len(first) == len(second) == 4 and first == list(range(first[0], first[0] + 4))
    assert second == [c + per_hop for c in first]
    assert {value_at(waves, "n0.out0.packet", c * period) for c in first} == {1}
    owners = {value for _, value in waves["n0.out0.vc0.owner"]} | {value for _, value in waves["n0.out0.vc1.owner"]}
    assert owners == {0, 1}
    credits = [value for _, value in waves["n0.out0.vc0.credits"] + waves["n0.out0.vc1.credits"]]
    assert min(credits) < config["flow.buffer_flits"] and value_at(waves, "n0.out0.vc0.credits", 60 * period) == \
        value_at(waves, "n0.out0.vc1.credits", 60 * period) == config["flow.buffer_flits"]
    port = sim.topology.in_port[0, 0]
    held = [value for c in range(2) for _, value in waves.get(f"n1.in{port}.vc{c}.flits", [])]
    assert 1 <= max(held) <= config["flow.buffer_flits"]
    assert len(cycles_high("n2.to_np0.grant")) == 4


def test_harts_trace_runs_a_broadcast_on_an_idle_config_and_refuses_the_config_alone(tmp_path):
    """The idle configs of paper 002 and 004 have nothing of their own to trace: harts trace says so in one line
    and names the broadcast; with --broadcast it traces one, and signals change in its first 600 cycles (paper
    002's NP start-up alone is 227 cycles)."""
    for name, algorithm in (("t3d_mesh_8x8", "pcp"), ("circuit_torus_16x16", "dc")):
        out = tmp_path / f"{name}.vcd"
        command = [sys.executable, "-m", "harts.cli", "trace", f"configs/{name}.yaml", "--vcd", str(out),
                   "--cycles", "0:600"]
        idle = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        assert idle.returncode == 2 and len(idle.stderr.splitlines()) == 1 and f"--broadcast {algorithm}" in idle.stderr
        traced = subprocess.run(command + ["--broadcast", algorithm], cwd=REPO, capture_output=True, text=True)
        assert traced.returncode == 0, traced.stderr
        waves = read_vcd(out)
        assert sum(len(changes) > 1 for changes in waves.values()) > 10
