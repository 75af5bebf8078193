"""Sweeps: results saved as each point finishes, resume runs only what is missing, an interrupted sweep
keeps its finished points, and a Dask cluster gives the same numbers as local processes."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harts.experiments.kandlur_shin.points import Point, Precision, SaturationProbe, hex_base
from harts.experiments.sweep import execute, run_tasks

TINY = Precision("tiny", broadcasts_per_replication=3, min_replications=2, max_replications=2)
REPO = Path(__file__).resolve().parent.parent


def measured(results: dict) -> dict:
    """The results without wall-clock times, which differ from run to run."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "wall" not in k}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return strip(results)


def tiny_points():
    return [Point(alg, load, TINY, hex_base(3)) for alg in ("sbcast", "2bcast") for load in (0.1, 0.4)]


def test_every_point_is_saved_and_resume_runs_only_what_is_missing(tmp_path):
    points = tiny_points()
    first = run_tasks(points, tmp_path, workers=2, progress=False)
    files = sorted((tmp_path / "points").glob("*.json"))
    assert len(files) == len(points) == len(first)
    stamps = {f.name: f.stat().st_mtime_ns for f in files}
    missing = files[1]
    missing.unlink()
    again = run_tasks(points, tmp_path, resume=True, workers=2, progress=False)
    assert measured(again) == measured(first)  # the same numbers, the rerun one included
    for f in sorted((tmp_path / "points").glob("*.json")):
        if f.name == missing.name:
            assert f.exists()
        else:
            assert f.stat().st_mtime_ns == stamps[f.name]  # untouched


def test_a_half_written_result_is_run_again(tmp_path):
    point = tiny_points()[0]
    run_tasks([point], tmp_path, workers=1, progress=False)
    path = tmp_path / "points" / f"{point.key}.json"
    path.write_text(path.read_text()[:20])
    result = run_tasks([point], tmp_path, resume=True, workers=1, progress=False)
    assert measured(json.loads(path.read_text())) == measured(result[point.key])


def test_same_results_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    points = tiny_points()[:3] + [SaturationProbe(hex_base(3), TINY)]
    local = run_tasks(points, tmp_path / "local", workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = run_tasks(points, tmp_path / "dask", dask_scheduler=cluster.scheduler_address, progress=False)
    assert measured(remote) == measured(local)
    assert len(list((tmp_path / "dask" / "points").glob("*.json"))) == 4


def test_points_do_not_depend_on_where_or_in_which_order_they_run():
    point = tiny_points()[1]
    a, b = execute(point), execute(point)
    assert a["latency"] == b["latency"] and a["runs"][0]["broadcasts"] == b["runs"][0]["broadcasts"]


def test_interrupting_a_sweep_keeps_finished_points_and_resume_completes_it(tmp_path):
    results = tmp_path / "r"
    command = [sys.executable, "-m", "harts.cli", "figure", "12", "--quick", "--results", str(results),
               "--no-progress", "--workers", "2"]
    # A shell that starts the suite in the background leaves SIGINT ignored, and its children inherit that: give the
    # sweep the default, as a terminal's Ctrl-C finds it.
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    points = results / "points"
    deadline = time.time() + 300
    while time.time() < deadline and len(list(points.glob("*.json"))) < 6 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "--resume" in err.strip().splitlines()[-1]
    kept = {f.name: f.stat().st_mtime_ns for f in points.glob("*.json")}
    assert len(kept) >= 6
    done = subprocess.run(command + ["--resume"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = {f.name: f.stat().st_mtime_ns for f in points.glob("*.json")}
    assert len(after) > len(kept)
    assert all(after[name] == stamp for name, stamp in kept.items())
    assert all((results / "figures" / f"fig12_{basis}.{kind}").exists()
               for basis in ("link", "node") for kind in ("png", "csv"))
