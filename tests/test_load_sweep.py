"""`harts sweep` and `--set` as a user runs them: the files a sweep writes and what they hold, resume, the
saturation search and its stated tolerance, and bad input refused in one line with exit code 2."""

import csv
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harts.experiments.load_sweep import (
    POINT_FIELDS,
    SATURATION_TOLERANCE,
    Base,
    Sweep,
    find_saturation,
    parse_rates,
    run_sweep,
)
from harts.machine.config import CONFIGS_DIR

REPO = Path(__file__).resolve().parent.parent
# a small and short wormhole network, so that a sweep takes seconds
SMALL = (("topology", {"kind": "mesh", "dims": [4, 4]}), ("run.cycles", 3000), ("run.warmup_cycles", 500))


def harts(*args, code=0):
    proc = subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == code, proc.stderr
    return proc


def test_a_sweep_writes_every_field_per_point_and_its_plot(tmp_path):
    proc = harts("sweep", "booksim2_mesh_8x8", "--set", "topology.dims=[4, 4]", "--set", "run.cycles=3000",
                 "--set", "run.warmup_cycles=500", "--pattern", "uniform,tornado", "--rates", "0.1:0.3:0.1",
                 "--seeds", "2", "--results", str(tmp_path), "--plot", str(tmp_path / "s.png"), "--no-progress",
                 "--workers", "2")
    rows = list(csv.DictReader((tmp_path / "booksim2_mesh_8x8.csv").open()))
    assert len(rows) == 2 * 3 * 2
    assert {(r["pattern"], r["rate"], r["seed"]) for r in rows} == {
        (p, str(rate), str(seed)) for p in ("uniform", "tornado") for rate in (0.1, 0.2, 0.3) for seed in (1, 2)}
    for field in POINT_FIELDS:
        assert all(r[field] != "" for r in rows), field
    data = json.loads((tmp_path / "booksim2_mesh_8x8.json").read_text())
    assert len(data["points"]) == 12 and len(data["curves"]) == 6
    point = data["points"][0]
    assert sum(point["latency_histogram"]["counts"]) == point["packets_measured"]
    assert sum(point["hops_histogram"]) == point["packets_measured"]
    assert set(point["stability"]) >= {"backlog_growth_flits", "backlog_threshold_flits", "worst_source"}
    assert (tmp_path / "s.png").stat().st_size > 10_000
    assert "uniform" in proc.stdout and "tornado" in proc.stdout


def test_a_resumed_sweep_runs_only_the_missing_points_and_gives_the_same_numbers(tmp_path):
    sweep = Sweep(Base(str(CONFIGS_DIR / "booksim2_mesh_8x8.yaml"), SMALL), ("uniform",), rates=(0.1, 0.2))
    first = run_sweep(sweep, tmp_path, workers=1, progress=False)
    files = sorted((tmp_path / "points").glob("*.json"))
    assert len(files) == 2
    files[0].unlink()
    stamp = files[1].stat().st_mtime_ns
    again = run_sweep(sweep, tmp_path, resume=True, workers=1, progress=False)

    def numbers(found):
        return [{k: v for k, v in r.items() if "wall" not in k} for r in found["points"]]
    assert numbers(again) == numbers(first)
    assert files[1].stat().st_mtime_ns == stamp


def test_the_saturation_search_brackets_the_saturation_within_its_tolerance(tmp_path):
    """On the 4x4 mesh over a window long enough for the rule to tell a few percent of growth (MODEL.md, Stability):
    no steady state carries a pattern past its channel-load bound."""
    long_window = (*SMALL[:1], ("run.cycles", 20_000), ("run.warmup_cycles", 2000))
    sweep = Sweep(Base(str(CONFIGS_DIR / "booksim2_mesh_8x8.yaml"), long_window), ("uniform", "transpose"),
                  to_saturation=True)
    rows, runs = find_saturation(sweep, tmp_path, {}, {"resume": False, "workers": 2, "dask_scheduler": None,
                                                       "progress": False})
    by_rate = {(r["pattern"], r["rate"]): r for r in runs.values()}
    for row in rows:
        lo, hi = row["stable_offered"], row["unstable_offered"]
        assert 0 < lo < hi and hi - lo <= SATURATION_TOLERANCE * hi
        assert by_rate[row["pattern"], lo]["stable"] is True and by_rate[row["pattern"], hi]["stable"] is False
        # every point the search ran agrees with the bracket: stable below lo, unstable above hi
        mine = [r for (p, _), r in by_rate.items() if p == row["pattern"]]
        assert all(r["stable"] for r in mine if r["rate"] <= lo)
        carried = by_rate[row["pattern"], lo]
        assert row["saturation_throughput"] == carried["accepted_flits_per_node_cycle"]
        # a steady state carries no pattern past its bound; the rule calls a run stable up to its threshold's share
        # of the flits offered above it
        offered = carried["offered_flits_per_node_cycle"] * 16 * 18_000
        resolution = carried["stability"]["backlog_threshold_flits"] / offered
        assert row["saturation_throughput"] <= row["bound_flits_per_node_cycle"] * (1 + resolution)


def test_the_done_when_command_prints_each_patterns_saturation(tmp_path):
    proc = harts("sweep", "configs/booksim2_mesh_8x8.yaml", "--set", "run.cycles=4000", "--set",
                 "run.warmup_cycles=1000", "--pattern", "uniform,transpose,tornado", "--to-saturation",
                 "--plot", str(tmp_path / "s.png"), "--results", str(tmp_path), "--no-progress")
    lines = [line for line in proc.stdout.splitlines() if "saturation throughput" in line]
    assert [line.split(":")[0] for line in lines] == ["uniform", "transpose", "tornado"]
    saturation = list(csv.DictReader((tmp_path / "booksim2_mesh_8x8_saturation.csv").open()))
    assert [r["pattern"] for r in saturation] == ["uniform", "transpose", "tornado"]
    assert (tmp_path / "s.png").is_file() and (tmp_path / "booksim2_mesh_8x8.json").is_file()


@pytest.mark.parametrize("text, values", [("0.1:0.3:0.1", (0.1, 0.2, 0.3)), ("0.05,0.2", (0.05, 0.2)),
                                          ("0.2:0.2:1", (0.2,))])
def test_rates_are_a_range_with_its_end_or_a_list(text, values):
    assert parse_rates(text) == values


@pytest.mark.parametrize("args, words", [
    (["--rates", "0.3:0.1:0.1"], "--rates expects A:B:STEP"),
    (["--rates", "a,b"], "--rates expects A:B:STEP"),
    (["--rates", "0,0.1"], "--rates expects positive finite numbers"),
    (["--pattern", "zigzag"], "unknown traffic pattern 'zigzag'"),
    (["--set", "topology.dims=[5, 5]", "--pattern", "bit_reverse"],
     "bit_reverse needs a power-of-two number of nodes"),
    (["--set", "flow.virtual_chanels=4"], "unknown key 'flow.virtual_chanels'"),
    (["--set", "flow.virtual_channels=many"], "'flow.virtual_channels' expects an integer, got 'many'"),
    (["--seeds", "0"], "--seeds"),
])
def test_bad_sweep_input_is_one_line_and_exit_2(tmp_path, args, words):
    proc = harts("sweep", "booksim2_mesh_8x8", "--results", str(tmp_path), "--no-progress", *args, code=2)
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr, proc.stderr


@pytest.mark.parametrize("config", ["wormhole_torus_8x8", "circuit_mesh_8x8", "mesh_8x8"])
def test_run_takes_overrides_on_every_kernel(config):
    proc = harts("run", config, "--set", "flow.virtual_channels=4", "--set", "traffic.synthetic.pattern=shuffle",
                 "--set", "run.cycles=3000", "--set", "run.warmup_cycles=500", "--json")
    data = json.loads(proc.stdout)
    assert data["packets_measured"] > 0 and data["stable"] in (True, False)
    if data["switching"] != "cut_through":
        assert data["virtual_channels"] == 4


@pytest.mark.parametrize("command", [["run", "mesh_8x8"], ["calibrate"], ["bench"], ["trace", "mesh_8x8", "--vcd",
                                                                                    "/tmp/never.vcd"],
                                     ["broadcast", "--algorithm", "sbcast"], ["ata"],
                                     ["faults", "--algorithm", "sbcast", "--crash", "1"]])
def test_every_command_that_takes_a_config_refuses_a_bad_override_in_one_line(command):
    proc = harts(*command, "--set", "run.cycles=soon", code=2)
    assert proc.stderr.strip() == "harts: error: --set: 'run.cycles' expects an integer, got 'soon'"


def test_a_sweep_gives_the_same_numbers_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    sweep = Sweep(Base(str(CONFIGS_DIR / "booksim2_mesh_8x8.yaml"), SMALL), ("uniform", "neighbor"), rates=(0.2,))
    local = run_sweep(sweep, tmp_path / "local", workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = run_sweep(sweep, tmp_path / "dask", dask_scheduler=cluster.scheduler_address, progress=False)

    def numbers(found):
        return [{k: v for k, v in r.items() if "wall" not in k} for r in found["points"]]
    assert numbers(remote) == numbers(local) and len(local["points"]) == 2


def test_a_load_above_a_link_bound_is_unstable_however_short_the_window(tmp_path):
    """8x8 mesh, transpose, dimension order: the link from node 0 to +y carries the packets of the seven other nodes
    of row 0, so a load above the bound 1/8 overloads it (tests/test_patterns.py derives the bound). At 1.01 of the
    bound each of the seven is offered 1% more than it can send: about 20 flits behind over the 15,000-cycle
    window, under the window rule's threshold of about 260. The sweep calls the run unstable all the same. An adaptive
    microprogram's routes are not the bound's, and its runs are judged by the window alone."""
    # the first wormhole tutorial's network
    window = (("topology", {"kind": "mesh", "dims": [8, 8]}), ("microcode", "wormhole"),
              ("flow.virtual_channels", 4), ("flow.buffer_flits", 8), ("traffic.synthetic.pattern", "transpose"),
              ("run.cycles", 20_000), ("run.warmup_cycles", 5_000))
    sweep = Sweep(Base(None, window), ("transpose",))
    assert sweep.link_bounds["transpose"] == sweep.bounds["transpose"] == 0.125
    point = sweep.point("transpose", 1.01 * 0.125, 1)
    judged = point.run()
    assert judged["stable"] is False and judged["stability"]["above_link_bound"] == 0.125
    by_window = replace(point, link_bound=None).run()
    assert by_window["stable"] is True and by_window["stability"]["growing_sources"] == 0
    assert replace(point, rate=0.125).run()["stable"] is True  # at the bound: the window decides
    adaptive = Sweep(Base(None, (*window, ("microcode", "wormhole_adaptive"))), ("transpose",))
    assert adaptive.link_bounds == {"transpose": None} and adaptive.bounds["transpose"] == 0.125
