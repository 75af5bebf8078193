"""The quick variant of `harts reproduce --paper 004`: it runs, writes its files, resumes without rerunning,
and what it measured holds the paper's formulas where they hold and the two flagged claims to their
verdicts (expectations typed from the paper and from hand counts, not taken from the code). Also the run past
the sweep's rates that overload.py records and that takes a second."""

import csv
import math
import shutil
from pathlib import Path

import pytest

from harts.cli import main
from harts.experiments.peters_syska.torus import (
    lower_bound_cycles,
    store_and_forward_cycles,
)

FILES = ["formulas.csv", "contention.csv", "fill_phase.csv", "time_vs_n.png", "time_vs_length.png",
         "contention.png", "tables.md"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    assert main(["reproduce", "--paper", "004", "--quick", "--results", str(folder), "--workers", "2",
                 "--no-progress"]) == 0
    return folder


def rows(results, name):
    with open(results / "paper004" / name, newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_quick_variant_writes_its_files_and_resumes(results, capsys):
    for name in FILES:
        assert (results / "paper004" / name).stat().st_size > 0, name
    points = sorted((results / "points").glob("paper004-*.json"))
    before = {p: p.stat().st_mtime_ns for p in points}
    assert main(["reproduce", "--paper", "004", "--quick", "--resume", "--results", str(results), "--workers", "1",
                 "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in points} == before


def test_tiling_and_dc_equal_the_printed_formulas_and_h_trees_their_schedule(results):
    formulas = rows(results, "formulas.csv")
    assert {r["algorithm"] for r in formulas} == {"tiling", "dc", "htree"}
    for r in formulas:
        assert r["equals_closed_form"] == "True" and r["contention_free"] == "True", r
        if r["algorithm"] != "htree":
            assert r["equal"] == "True", r
        assert int(r["alpha_count"]) * 52 + int(r["delta_count"]) * 8 + int(r["tau_count"]) == \
            int(r["completion_cycles"])
    # the printed pipelined T(B) undercounts the H-tree schedule by (P - 1)(alpha + 2^(k-2) delta + B tau) from
    # 7x7 up; on 3x3 the printed first phase is one send too many, which two packets exactly cancel
    assert all(r["equal"] == "False" for r in formulas
               if r["algorithm"] == "htree" and int(r["packets"]) > 1 and r["torus"] != "3x3")


def test_the_fill_phase_claim_fails_at_15x15_and_holds_below(results):
    fill = {int(r["side"]): r for r in rows(results, "fill_phase.csv")}
    assert fill[3]["one_phase_of_single_hops_suffices"] == fill[7]["one_phase_of_single_hops_suffices"] == "True"
    assert fill[15]["one_phase_of_single_hops_suffices"] == "False"


def test_background_circuits_never_make_a_broadcast_faster(results):
    for r in rows(results, "contention.csv"):
        assert int(r["completion_cycles"]) >= int(r["idle_completion_cycles"])
        if float(r["rate"]) == 0:
            assert r["contention_free"] == "True" and int(r["background_packets"]) == 0


def test_the_comparison_formulas_by_hand():
    # 25x25: D = 24, beta = 52 + 8 = 60; L = 100, tau 1: (sqrt(1440) + sqrt(25))^2
    assert store_and_forward_cycles((25, 25), 100, 52, 8, 1) == pytest.approx((math.sqrt(1440) + 5) ** 2)
    # Proposition 1: max(ceil(log5 625) * 52 = 208, 24 * 8 = 192, 25, 52 + 192 + 25 = 269)
    assert lower_bound_cycles((25, 25), 100, 52, 8, 1) == 269
    # 16x16: ceil(log5 256) = 4 -> 208; 52 + 16 * 8 + 1000 / 4 = 430
    assert lower_bound_cycles((16, 16), 1000, 52, 8, 1) == 430


COMMITTED = Path(__file__).resolve().parent.parent / "bench" / "results" / "reproduce" / "paper004"


def test_probes_that_wait_deadlock_the_tiling_at_0_01_as_overload_csv_records():
    """EXPERIMENTS.md (Peters & Syska, Under background traffic): with `flow.circuit_setup: wait` the tiling on 25x25
    at 0.01 flits per node per cycle stops in deadlock (MODEL.md: waiting probes deadlock a loaded torus). The run
    takes about a second; the committed overload.csv records it, and its `retry` runs, which take minutes."""
    from harts.experiments.peters_syska.overload import WAIT_RUN, overload_run

    algorithm, dims, seed = WAIT_RUN
    row = overload_run(algorithm, dims, seed, "wait")
    assert row["outcome"] == "deadlock" and row["completion_cycles"] == ""
    with open(COMMITTED / "overload.csv", newline="") as handle:
        committed = next(csv.DictReader(handle))
    assert committed["circuit_setup"] == "wait"
    assert {k: str(v) for k, v in row.items()} == committed


def test_the_committed_overload_table_is_made_from_its_csv(tmp_path):
    from harts.experiments.peters_syska.overload import write_tables

    (tmp_path / "paper004").mkdir()
    shutil.copyfile(COMMITTED / "overload.csv", tmp_path / "paper004" / "overload.csv")
    [written] = write_tables(tmp_path)
    assert written.read_text() == (COMMITTED / "overload.md").read_text()
