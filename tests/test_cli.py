"""The commands a new user tries first, run as a user runs them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import nothing_cut_off

REPO = Path(__file__).resolve().parent.parent


def harts(*args):
    proc = subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_run_prints_a_summary(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("topology: {kind: hex, size: 5}\ntraffic: {uniform: {load: 0.2}}\n"
                   "run: {cycles: 3000, warmup_cycles: 500}\n")
    data = json.loads(harts("run", str(cfg), "--json"))
    assert data["packets"] == data["deliveries"] > 100
    assert 0 < data["link_utilisation"] < 0.2
    assert data["latency_max_cycles"] >= data["latency_mean_cycles"] > 0
    text = harts("run", str(cfg))
    assert "latency_mean_cycles" in text and "link_utilisation" in text


def test_shipped_explicit_config_runs():
    data = json.loads(harts("run", "configs/explicit_e5.yaml", "--json"))
    assert data["packets"] == 3 and data["initiations"] == 1 and data["deliveries"] == 7


def test_calibrate_reports_zero_residual():
    data = json.loads(harts("calibrate", "--json"))
    assert data["max_residual_cycles"] == 0
    assert (data["S"], data["r"], data["d"]) == ("7", "1/6", "5")
    assert data["hops_checked"] == [1, 2, 3, 4]
    text = harts("calibrate")
    assert "largest residual: 0.0 cycles" in text


def test_bench_reports_packet_hops_per_second(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("topology: {kind: hex, size: 4}\n")
    data = json.loads(harts("bench", "--config", str(cfg), "--load", "0.2", "--cycles", "2000", "--json"))
    assert data["nodes"] == 37 and data["topology"] == "E-4" and data["offered_link_load"] == pytest.approx(0.2)
    assert data["packet_hops_per_second"] > 0 and data["node_cycles_per_second"] > 0
    assert data["packet_hops"] > data["packets"] > 0
    assert "kernel_startup_seconds" in data


def test_broadcast_command_lists_every_copy_with_its_path():
    data = json.loads(harts("broadcast", "--algorithm", "3bcast", "--size", "4", "--source", "5",
                            "--length", "128", "--json"))
    assert data["copies_per_node_min"] == data["copies_per_node_max"] == data["copies_expected_per_node"] == 3
    assert len(data["copies"]) == 3 * 36
    n = 4
    steps = {1, 3 * n - 1, 3 * n - 2}
    N = 3 * n * (n - 1) + 1
    for copy in data["copies"]:
        path = copy["path"]
        assert path[0] == 5 and path[-1] == copy["node"]
        assert all((b - a) % N in steps or (a - b) % N in steps for a, b in zip(path, path[1:]))
        assert copy["arrival_cycles"] <= data["latency_cycles"]
    assert max(c["arrival_cycles"] for c in data["copies"]) == data["latency_cycles"]
    text = harts("broadcast", "--algorithm", "sbcast", "--size", "5")
    assert "latency_cycles" in text and "mean_delivery_cycles" in text


def test_broadcast_plot_is_written(tmp_path):
    out = tmp_path / "tree.png"
    harts("broadcast", "--algorithm", "2bcast", "--size", "4", "--plot", str(out))
    import matplotlib.image
    image = matplotlib.image.imread(out)
    assert image.shape[0] > 500 and image.shape[1] > 500
    # orange first-hop arrows and blue cut-through arrows are both drawn
    rgb = (image[..., :3] * 255).astype(int)
    orange = ((abs(rgb[..., 0] - 255) < 30) & (abs(rgb[..., 1] - 127) < 30) & (rgb[..., 2] < 60)).sum()
    blue = ((rgb[..., 0] < 60) & (abs(rgb[..., 1] - 119) < 30) & (rgb[..., 2] > 150)).sum()
    assert orange > 500 and blue > 500
    assert nothing_cut_off(out)


@pytest.mark.parametrize("name", ["uniform_e9.yaml", "mesh_8x8.yaml", "torus_8x8.yaml", "hypercube_q6.yaml",
                                  "mesh_hypercube_9x8.yaml"])
def test_every_shipped_topology_runs_draws_calibrates_and_benchmarks(name, tmp_path):
    short = tmp_path / name
    short.write_text((REPO / "configs" / name).read_text().replace("cycles: 50000", "cycles: 3000")
                     .replace("cycles: 20000", "cycles: 3000").replace("warmup_cycles: 5000", "warmup_cycles: 500"))
    link_map = tmp_path / "map.png"
    data = json.loads(harts("run", str(short), "--json", "--link-map", str(link_map)))
    assert data["packets"] == data["deliveries"] > 100
    assert data["mean_hops"] > 1 and 0 < data["link_utilisation"] < 0.5
    assert data["link_map"] == str(link_map) and link_map.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert nothing_cut_off(link_map)
    calibration = json.loads(harts("calibrate", "--config", str(REPO / "configs" / name), "--json"))
    assert calibration["max_residual_cycles"] == 0 and calibration["topology"] == data["topology"]
    speed = json.loads(harts("bench", "--config", str(short), "--cycles", "2000", "--json"))
    assert speed["topology"] == data["topology"] and speed["packet_hops_per_second"] > 0


def test_broadcast_on_a_network_other_than_the_hexagonal_mesh_is_refused_in_one_line():
    proc = subprocess.run([sys.executable, "-m", "harts.cli", "broadcast", "--algorithm", "sbcast", "--config",
                           "configs/torus_8x8.yaml"], capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "harts: error: configs/torus_8x8.yaml:3: sbcast runs on a hexagonal mesh E-n (n >= 3), not on torus 8x8: "
        "use --size N, or a hex config such as configs/uniform_e9.yaml"]
