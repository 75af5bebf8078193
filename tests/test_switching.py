"""Wormhole and circuit switching as a user meets them: the commands, bad input, and runs past saturation."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harts.experiments.switching import load
from harts.experiments.switching.load import ROUTERS, rows_of, saturation, sweeps

REPO = Path(__file__).resolve().parent.parent


def cli(*args):
    return subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)


def test_run_and_calibrate_a_wormhole_config():
    proc = cli("run", "configs/wormhole_torus_8x8.yaml", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["switching"] == "wormhole" and data["packets"] > 20_000
    # 0.2 flits/node/cycle on the 8x8 torus, well below its saturation: close to zero-load latency
    # (S + r M + (h-1) d = 8 + 8 + 4 x 3.06 = 28.3 at the mean route of 4.06 hops)
    assert abs(data["offered_flits_per_node_cycle"] - 0.2) < 0.01
    assert 28 < data["latency_mean_cycles"] < 60
    assert data["peak_buffer_flits"] <= 8
    proc = cli("calibrate", "--config", "configs/circuit_mesh_8x8.yaml", "--json")
    assert proc.returncode == 0, proc.stderr
    cal = json.loads(proc.stdout)
    assert cal["model"] == "alpha + h*delta + L*tau" and cal["max_residual_cycles"] == 0
    assert (cal["alpha_cycles"], cal["delta_cycles_per_hop"], cal["tau_cycles_per_flit"]) == (4, 8, 1)


@pytest.mark.parametrize("text, words", [
    ("microcode: wormhole\ntopology: {kind: torus, dims: [4, 4]}\nflow: {virtual_channels: 1}\n",
     ":3: 'wormhole' separates VCs at the dateline"),
    ("microcode: wormhole\ntopology: {kind: mesh, dims: [4, 4]}\ntraffic: {synthetic: {pattern: zigzag}}\n",
     ":3: 'traffic.synthetic.pattern' must be uniform, transpose"),
    ("microcode: wormhole\ntopology: {kind: mesh, dims: [4, 3]}\n"
     "traffic: {synthetic: {pattern: transpose, rate: 0.1}}\n", "square"),
])
def test_bad_flit_configs_end_in_one_line(tmp_path, text, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    proc = cli("run", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr, proc.stderr


@pytest.mark.parametrize("program, replacement, words", [
    ("circuit", "{op: tee, via: dimension_order, else: retry}", "'tee' has no meaning under 'switching: circuit'"),
    ("wormhole", "{op: store}", "'store' has no meaning under 'switching: wormhole'"),
    ("wormhole", "{op: tee, via: dimension_order, until: hops, else: retry}", "'until' reads a header field"),
])
def test_instructions_without_meaning_at_flit_level_are_refused_at_their_line(tmp_path, program, replacement, words):
    """A circuit holds one path, so it cannot tee; wormhole stores nothing whole; a flit-level packet carries
    no header fields for `until` to count down."""
    text = (REPO / "microcode" / f"{program}.yaml").read_text()
    text = text.replace("{label: eject, op: deliver}" if program == "wormhole" else "{op: deliver}",
                        "{label: eject, op: deliver}\n  - " + replacement, 1)
    if "until" in replacement:
        text = text.replace("switching: wormhole", "switching: wormhole\nheader: {fields: [hops]}")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    proc = cli("microcode", "check", str(path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert words in proc.stderr and ":" in proc.stderr.split(words)[0], proc.stderr


@pytest.mark.parametrize("network", list(load.NETWORKS))
@pytest.mark.parametrize("pattern", ["uniform", "hotspot"])
def test_past_saturation_every_packet_still_arrives_and_latency_climbs(monkeypatch, network, pattern):
    """The invariants are checked inside every run; past the bound the mean latency must be far above the
    light-load latency (a network that carried 1.3 times its bound would break the bound), and the run says it is
    unstable."""
    monkeypatch.setattr(load, "WARMUP", 200)
    monkeypatch.setattr(load, "MEASURE", 2000)
    sweep = sweeps("wormhole", (0.1, 1.3), ROUTERS[:1])[network, ROUTERS[0]]
    points = [point for point in sweep.grid() if point.pattern == pattern]
    light, heavy = rows_of([point.run() for point in points], network, "wormhole", ROUTERS[0], sweep)
    assert heavy["latency_mean"] > 3 * light["latency_mean"]
    assert heavy["peak_buffer_flits"] == 8  # buffers fill, and never above their depth
    assert light["stable"] and not heavy["stable"]
    assert saturation([light, heavy])[0]["saturation"] == light["offered"]


def test_the_saturation_table_is_a_row_per_network_and_pattern_and_a_column_per_router():
    """harts load's saturation_markdown, which EXPERIMENTS.md shows: rows as the CSV gives them, fractions to 0.01."""
    from harts.experiments.switching.load import saturation_markdown
    saturated = [{"virtual_channels": v, "buffer_flits": b, "network": n, "pattern": p,
                  "saturation_fraction_of_bound": f}
                 for (n, p), fractions in ((("mesh 8x8", "uniform"), (0.65, 0.7)),
                                           (("torus 8x8", "bit_complement"), (0.6, 1.0)))
                 for (v, b), f in zip(((2, 8), (4, 16)), fractions)]
    assert saturation_markdown(saturated) == (
        "| network | pattern | 2 VCs x 8 | 4 VCs x 16 |\n|---|---|---|---|\n"
        "| mesh 8x8 | uniform | 0.65 | 0.70 |\n| torus 8x8 | bit-complement | 0.60 | 1.00 |\n")
