"""`harts sweep CONFIG --broadcast`: Kandlur & Shin's broadcast measure on one's own config, and `harts figure` as a
preset of it (the same rows from the same points), the baseline's paired increases worked out by hand from the
replications, and bad input refused in one line with exit code 2."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from harts.experiments.broadcast_sweep import (
    BroadcastSweep,
    loads_up_to,
    run_broadcast_sweeps,
)
from harts.experiments.kandlur_shin import figures
from harts.experiments.kandlur_shin.points import Precision
from harts.experiments.load_sweep import Base
from harts.machine.config import CONFIGS_DIR

REPO = Path(__file__).resolve().parent.parent
TINY = Precision("tiny", broadcasts_per_replication=3, min_replications=2, max_replications=2)


def harts(*args, code=0):
    proc = subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == code, proc.stderr
    return proc


def test_loads_up_to_saturation_are_the_figures_loads():
    assert loads_up_to(0.7) == [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert loads_up_to(0.1) == [0.05, 0.1]


def test_a_figure_is_the_sweep_of_its_curves_on_the_config_file(tmp_path, monkeypatch):
    """Fig. 12 (SBCAST and SFBCAST on E-5, link load) as `harts figure` draws it, against `harts sweep
    configs/default.yaml --broadcast sbcast,sfbcast --to-saturation` run apart (its points have other keys, so
    nothing is shared): the same loads, values, intervals and verdicts."""
    monkeypatch.setattr(figures, "QUICK", TINY)
    written = figures.reproduce([12], tmp_path / "figure", quick=True, workers=2, progress=False, bases=("link",))
    sweep = BroadcastSweep(Base(str(CONFIGS_DIR / "default.yaml")), ("sbcast", "sfbcast"), precision=TINY,
                           to_saturation=True)
    sweep.check()
    [found] = run_broadcast_sweeps([sweep], tmp_path / "sweep", workers=2, progress=False)
    figure = written["link"][12]["rows"]
    assert [(r["algorithm"], r["load"]) for r in figure] == [(r["algorithm"], r["load"]) for r in found["points"]]
    assert [(r["value"], r["half_width_95"], r["precise"], r["saturated"]) for r in figure] == [
        (r["latency"], r["latency_half_width"], r["precise"], r["saturated"]) for r in found["points"]]
    assert written["link"]["saturation"][5]["saturation_load"] == found["saturation"]["saturation_load"]
    assert {p.name for p in (tmp_path / "sweep" / "points").glob("*.json")}.isdisjoint(
        p.name for p in (tmp_path / "figure" / "points").glob("*.json"))


def test_the_command_writes_its_files_and_the_baseline_increase_is_the_paired_mean(tmp_path):
    proc = harts("sweep", "default", "--broadcast", "sbcast,2bcast", "--baseline", "sbcast", "--rates", "0.1,0.3",
                 "--quick", "--results", str(tmp_path), "--plot", str(tmp_path / "b.png"), "--no-progress",
                 "--workers", "2")
    assert (tmp_path / "b.png").stat().st_size > 10_000
    rows = list(csv.DictReader((tmp_path / "default.csv").open()))
    assert [(r["algorithm"], float(r["load"])) for r in rows] == [
        ("sbcast", 0.1), ("sbcast", 0.3), ("2bcast", 0.1), ("2bcast", 0.3)]
    data = json.loads((tmp_path / "default.json").read_text())
    runs = {(p["algorithm"], p["load"]): p["runs"] for p in data["points"]}
    for row in data["rows"]:
        a, b = runs[row["algorithm"], row["load"]], runs["sbcast", row["load"]]
        # replication i of both saw the same traffic: the percent increase of each pair, then its mean and 95%
        # interval (Student t with one degree of freedom: 12.706)
        increases = [100 * (x["latency"] / y["latency"] - 1) for x, y in zip(a, b)]
        assert len(increases) == 2
        mean = sum(increases) / 2
        half = 12.706 * abs(increases[0] - increases[1]) / math.sqrt(2) / math.sqrt(2)
        assert row["latency_increase_percent"] == pytest.approx(mean)
        assert row["latency_increase_half_width"] == pytest.approx(half)
        if row["algorithm"] == "sbcast":
            assert row["latency_increase_percent"] == 0
    assert "sbcast" in proc.stdout and "2bcast" in proc.stdout


@pytest.mark.parametrize("config,args,words", [
    ("booksim2_mesh_8x8", ["--broadcast", "sbcast", "--rates", "0.1"], "on the hexagonal mesh"),
    ("default", ["--broadcast", "xbcast", "--rates", "0.1"], "unknown algorithm 'xbcast'"),
    ("default", ["--broadcast", "sbcast"], "needs --rates (loads) or --to-saturation"),
    ("default", ["--broadcast", "sbcast", "--rates", "0.1", "--seeds", "2"], "--seeds does not apply to --broadcast"),
    ("default", ["--broadcast", "sbcast", "--bound-fractions", "0.5"], "--bound-fractions does not apply"),
    ("default", ["--broadcast", "sbcast", "--rates", "0.1", "--set", "traffic.synthetic.rate=0.1"],
     "set traffic.synthetic.rate to its empty value"),
    ("default", ["--broadcast", "sbcast", "--rates", "0.1", "--set", "np.program=ihc"],
     "needs np.program kandlur_shin"),
    ("default", ["--broadcast", "sbcast", "--rates", "0.1", "--set", "faults.crashed=[3]"],
     "needs a fault-free network, and this config has faults (faults.crashed)"),
    ("default", ["--broadcast", "sbcast", "--rates", "0.1", "--set", "microcode=wormhole"],
     "--broadcast runs on the cut-through kernel; microcode 'wormhole' switches by wormhole"),
    ("booksim2_mesh_8x8", ["--quick"], "--quick applies to --broadcast only"),
    ("booksim2_mesh_8x8", ["--baseline", "sbcast"], "--baseline applies to --broadcast only"),
])
def test_bad_broadcast_sweep_input_is_one_line_and_exit_2(tmp_path, config, args, words):
    proc = harts("sweep", config, "--results", str(tmp_path), "--no-progress", *args, code=2)
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr, proc.stderr


def test_the_how_to_table_of_presets_is_what_each_figure_runs():
    text = (REPO / "docs" / "how-to" / "reproducing-papers.md").read_text()
    for number, figure in figures.FIGURES.items():
        [line] = [line for line in text.splitlines() if line.startswith(f"| Fig. {number} |")]
        _, _, meshes, options, _ = line.split("|")
        swept = figures.sweeps(figure, TINY, "link")
        assert meshes.strip() == ", ".join(f"E-{size}" for size in swept)
        for sweep in swept.values():
            baseline = f" --baseline {sweep.baseline}" if sweep.baseline else ""
            assert options.strip().startswith(f"`--broadcast {','.join(sweep.algorithms)}{baseline}`")
            assert sweep.to_saturation and not sweep.loads
        if figure.baseline:
            assert ("(latency)" if figure.metric == "latency" else "(mean delivery time)") in options
