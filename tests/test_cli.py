"""The commands a new user tries first, run as a user runs them."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def harts(*args):
    proc = subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_run_prints_a_summary(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("mesh: {size: 5}\ntraffic: {uniform: {load: 0.2}}\nrun: {cycles: 3000, warmup_cycles: 500}\n")
    data = json.loads(harts("run", str(cfg), "--json"))
    assert data["packets"] == data["deliveries"] > 100
    assert 0 < data["link_utilisation"] < 0.2
    assert data["latency_max_cycles"] >= data["latency_mean_cycles"] > 0
    text = harts("run", str(cfg))
    assert "latency_mean_cycles" in text and "link_utilisation" in text


def test_shipped_explicit_config_runs():
    data = json.loads(harts("run", "configs/explicit_e5.yaml", "--json"))
    assert data["packets"] == 3 and data["broadcast_worms"] == 1 and data["deliveries"] == 7


def test_calibrate_reports_zero_residual():
    data = json.loads(harts("calibrate", "--json"))
    assert data["max_residual_cycles"] == 0
    assert (data["S"], data["r"], data["d"]) == ("7", "1/6", "5")
    assert data["hops_checked"] == [1, 2, 3, 4]
    text = harts("calibrate")
    assert "largest residual: 0.0 cycles" in text


def test_bench_reports_node_cycles_per_second():
    data = json.loads(harts("bench", "--size", "4", "--load", "0.2", "--cycles", "2000", "--json"))
    assert data["nodes"] == 37
    assert data["node_cycles_per_second"] > 0
    assert "kernel_startup_seconds" in data
