"""The quick variants of `harts reproduce --paper 002` and `--paper 003`: they run, write their files, and what
they measured agrees with what the papers state (the expectations below are typed from the papers, not taken
from the code)."""

import csv
import json
import pickle

import pytest

from harts.cli import main
from harts.experiments.al_dubai.figures import uniform_bound
from harts.machine.flits import DeadlockError
from harts.machine.patterns import throughput_bound
from harts.network.build import build_topology

PAPER002_FILES = ["fig4_steps.csv", "fig4_steps.png", "fig5_runs.csv", "fig5_latency.csv", "fig5_latency.png",
                  "fig6_runs.csv", "fig6_latency.csv", "fig6_latency.png", "deadlock_runs.csv",
                  "deadlock_check.csv", "tables.md"]
PAPER003_FILES = ["mh_9_8_example.csv", "mh_9_8_example.md", "steps_vs_size.csv", "steps_vs_size.png",
                  "sharing_first_step.csv", "sharing_latency.csv", "tables.md"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    for paper in ("002", "003"):
        assert main(["reproduce", "--paper", paper, "--quick", "--results", str(folder), "--workers", "2",
                     "--no-progress"]) == 0
    return folder


def rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_quick_variants_write_their_files(results, capsys):
    for paper, names in (("002", PAPER002_FILES), ("003", PAPER003_FILES)):
        for name in names:
            assert (results / f"paper{paper}" / name).stat().st_size > 0, (paper, name)


def test_resume_runs_nothing_again(results, capsys):
    points = sorted((results / "points").glob("paper00[23]-*.json"))
    before = {p: p.stat().st_mtime_ns for p in points}
    assert main(["reproduce", "--paper", "003", "--quick", "--resume", "--results", str(results), "--workers", "1",
                 "--no-progress"]) == 0
    assert "wrote" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in points} == before


def test_fig4_measured_steps_are_the_papers_statements(results):
    # Paper 002, Section 5, on the 2^k x 2^k mesh: PCP 2 steps, RD log2 N = 2k, EDN k + 1, NP-D k + 2
    paper = {"PCP": lambda k: 2, "RD": lambda k: 2 * k, "EDN": lambda k: k + 1, "NP-D": lambda k: k + 2}
    measured = {(int(r["k"]), r["algorithm"]): int(r["steps_measured"])
                for r in rows(results / "paper002" / "fig4_steps.csv")}
    assert {k for k, _ in measured} == {3, 4}
    for (k, algorithm), steps in measured.items():
        assert steps == paper[algorithm](k), (k, algorithm)


# Typed from paper 003's illustrative example (MH(9,8) from (6,000)): (step, sender) -> destinations.
PAPER003_ROWS = {
    (1, "(6,000)"): {"(3,000)", "(8,000)", "(6,001)", "(6,010)", "(6,100)"},
    (2, "(6,000)"): {"(6,011)"},  # "then it sends a message to node (6,011) in the second transmission step"
    (2, "(3,000)"): {"(1,000)", "(4,000)", "(3,001)", "(3,010)", "(3,100)"},
    (2, "(6,100)"): {"(6,101)", "(6,110)"},
    (3, "(1,000)"): {"(2,000)", "(1,001)", "(1,010)", "(1,100)"},
    (3, "(7,000)"): {"(7,001)", "(7,010)", "(7,100)"},
    (4, "(3,100)"): {"(3,111)"},
    (5, "(2,100)"): {"(2,101)", "(2,110)"},
    (6, "(2,100)"): {"(2,111)"},
    (6, "(5,100)"): {"(5,111)"},
}


def test_the_mh_9_8_example_takes_the_papers_six_steps_and_senders(results):
    table = {(int(r["step"]), r["sender"]): r for r in rows(results / "paper003" / "mh_9_8_example.csv")}
    assert max(step for step, _ in table) == 6
    assert {sender for step, sender in table if step == 6} == {"(2,100)", "(5,100)"}
    for (step, sender), destinations in PAPER003_ROWS.items():
        row = table[(step, sender)]
        assert set(row["plan_sends_to"].split()) == destinations, (step, sender)
        assert set(row["run_copies_at"].split()) == destinations, (step, sender)
    assert all(r["plan_equals_run"] == "True" for r in table.values())
    copies = [d for r in table.values() for d in r["run_copies_at"].split()]
    assert len(copies) == len(set(copies)) == 71 and "(6,000)" not in copies


def test_every_saved_point_got_exactly_one_copy_per_node(results):
    points = [json.loads(p.read_text()) for p in (results / "points").glob("paper00[23]-*.json")]
    counted = [p for p in points if "copies_per_node_min" in p]
    assert len(counted) == len(points) > 40
    assert all(p["copies_per_node_min"] == p["copies_per_node_max"] == 1 for p in counted)
    assert not any(p.get("deadlocked") for p in points)
    loaded = [p for p in points if p.get("background_fraction_of_bound", 0) > 0]
    assert loaded and all(p["background_packets"] > 0 for p in loaded)
    # the background was still being generated when the broadcast ended
    assert all(p["ended_inside_background"] for p in loaded if "window" not in p["key"])


def test_the_n16_subcube_sends_share_a_link_and_one_waits_behind_the_other(results):
    first = [r for r in rows(results / "paper003" / "sharing_first_step.csv") if r["n"] == "16"]
    waited = [r for r in first if int(r["link_wait_cycles"]) > 0]
    assert [r["kind"] for r in waited] == ["subcube"]
    assert all(int(r["link_wait_cycles"]) == 0 for r in rows(results / "paper003" / "sharing_first_step.csv")
               if r["n"] == "8")


@pytest.mark.parametrize("side", [4, 8, 16])
def test_uniform_bound_is_the_channel_load_bound(side):
    topology = build_topology({"kind": "mesh", "dims": [side, side]})
    assert uniform_bound(side) == pytest.approx(throughput_bound(topology, "uniform").throughput, rel=1e-12)


def test_a_deadlock_of_a_point_survives_the_trip_from_a_worker():
    error = pickle.loads(pickle.dumps(DeadlockError("paper002-x: deadlock at cycle 5", ["a", "b"])))
    assert isinstance(error, DeadlockError) and error.cycle == ["a", "b"] and "cycle 5" in str(error)
