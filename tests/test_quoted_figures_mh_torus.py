"""The figures EXPERIMENTS.md quotes in prose from Al-Mahadeen & Omari's and Peters & Syska's reproductions,
outside its generated tables, against the committed result files (bench/results/reproduce/paper003/ and
paper004/). No simulation here."""

import csv
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "reproduce"


def rows(paper: str, name: str) -> list[dict]:
    with open(RESULTS / paper / name, newline="") as handle:
        return list(csv.DictReader(handle))


def section(title: str) -> str:
    text = (REPO / "EXPERIMENTS.md").read_text()
    start = text.index(f"\n## {title}")
    return text[start:text.index("\n## ", start + 1)]


def quoted(pattern: str, text: str) -> tuple[int, ...]:
    found = re.search(pattern, " ".join(text.split()))  # the prose wraps anywhere
    assert found, pattern
    return tuple(int(g) for g in found.groups())


def test_peters_syska_run_counts_are_the_formula_files():
    text = section("Peters & Syska")
    formulas = rows("paper004", "formulas.csv")
    runs = [(r["algorithm"], r["torus"], r["variant"], r["length_flits"], r["packets"], r["packets_choice"])
            for r in formulas]
    assert len(runs) == len(set(runs)), "a run is listed twice"
    exact = [r for r in formulas if r["algorithm"] in ("tiling", "dc")]
    assert all(r["equal"] == "True" for r in exact)
    assert quoted(r"to the cycle in all (\d+) idle runs", text) == (len(exact),)
    htree = [r for r in formulas if r["algorithm"] == "htree"]
    assert quoted(r"\((\d+) of (\d+) runs differ\)", text) == (sum(r["equal"] == "False" for r in htree), len(htree))
    assert all(r["equals_closed_form"] == "True" for r in htree)
    assert quoted(r"All (\d+) runs equal, to the cycle, T_sched", text) == (len(htree),)
    # "contention_free is true in every idle run"; alpha, delta, tau as `harts calibrate` measures them
    assert all(r["contention_free"] == "True" for r in formulas)
    alpha, delta, tau = quoted(r"measures alpha = (\d+), delta = (\d+), tau = (\d+) cycle", text)
    assert (RESULTS / "paper004" / "tables.md").read_text().startswith(
        f"Measured alpha = {alpha}, delta = {delta}, tau = {tau} cycles")
    for r in formulas:
        assert int(r["alpha_cycles"]) == alpha * int(r["alpha_count"])
        assert int(r["delta_cycles"]) == delta * int(r["delta_count"])
        assert int(r["tau_cycles"]) == tau * int(r["tau_count"])


def test_peters_syska_loaded_runs_all_waited_and_no_phase_ended_early():
    assert "No loaded run was contention-free. No phase of any loaded run ended before its idle end." in \
        " ".join(section("Peters & Syska").split())
    loaded = [r for r in rows("paper004", "contention.csv") if float(r["rate"]) > 0]
    assert len(loaded) == 3 * 4 * 8
    for r in loaded:
        assert r["contention_free"] == "False", r
        ends, idle = json.loads(r["phase_end_cycles"]), json.loads(r["idle_phase_end_cycles"])
        assert len(ends) == len(idle) and all(a >= b for a, b in zip(ends, idle)), r


def test_al_mahadeen_omari_mh_1_16_costs_one_link_wait_and_one_hop_more_than_n8():
    # "In MH(1,16) the whole 110 is the 105-cycle link wait of (1,1100) plus the 5 cycles of its second hop"
    more, wait, hop = quoted(r"In MH\(1,16\) the whole (\d+) is the (\d+)-cycle link wait of \(1,1100\) plus the "
                             r"(\d+) cycles of its second hop", section("Al-Mahadeen & Omari"))
    latency = {(r["m"], r["n"]): int(r["latency_cycles"]) for r in rows("paper003", "sharing_latency.csv")}
    assert latency[("1", "16")] - latency[("1", "8")] == more == wait + hop
    first = {(r["m"], r["n"], r["destination"]): r for r in rows("paper003", "sharing_first_step.csv")}
    late = first[("1", "16", "(1,1100)")]
    assert int(late["link_wait_cycles"]) == wait and int(late["hops"]) == 2
    assert int(late["alone_cycles"]) - int(first[("1", "16", "(1,0100)")]["alone_cycles"]) == hop


def test_al_mahadeen_omari_the_channel_wait_swaps_two_link_sharers():
    # "(5,11100) arrives before (5,10100) in the broadcast, after it when only the link sharers run"
    assert "(5,11100) arrives before (5,10100) in the broadcast, after it when only the link sharers run" in \
        " ".join(section("Al-Mahadeen & Omari").split())
    first = {r["destination"]: r for r in rows("paper003", "sharing_first_step.csv") if (r["m"], r["n"]) == ("9", "32")}
    a, b = first["(5,11100)"], first["(5,10100)"]
    assert int(a["arrival_cycles"]) < int(b["arrival_cycles"])
    assert int(a["with_link_sharers_cycles"]) > int(b["with_link_sharers_cycles"])
