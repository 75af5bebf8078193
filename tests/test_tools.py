"""The microcode tools: the assembler's listing and the VCD trace, read back."""

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from harts.machine.config import load_config
from harts.machine.simulation import Simulation
from harts.tools.trace import write_trace

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
    write_trace(sim, None, str(out), [0, 1], 0, 120)
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
