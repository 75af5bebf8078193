"""The figures EXPERIMENTS.md quotes in prose from Al-Mahadeen & Omari's and Peters & Syska's reproductions,
outside its generated tables, against the committed result files (bench/results/reproduce/paper003/ and
paper004/). No simulation here."""

import json
import math
import re

from .helpers import COMMITTED, committed_rows, experiments_section


def quoted_numbers(pattern: str, text: str) -> tuple[int, ...]:
    found = re.search(pattern, " ".join(text.split()))  # the prose wraps anywhere
    assert found, pattern
    return tuple(int(g) for g in found.groups())


def test_peters_syska_run_counts_are_the_formula_files():
    text = experiments_section("Peters & Syska")
    formulas = committed_rows("paper004/formulas.csv")
    runs = [(r["algorithm"], r["torus"], r["variant"], r["length_flits"], r["packets"], r["packets_choice"])
            for r in formulas]
    assert len(runs) == len(set(runs)), "a run is listed twice"
    exact = [r for r in formulas if r["algorithm"] in ("tiling", "dc")]
    assert all(r["equal"] == "True" for r in exact)
    assert quoted_numbers(r"to the cycle in all (\d+) idle runs", text) == (len(exact),)
    htree = [r for r in formulas if r["algorithm"] == "htree"]
    differ = sum(r["equal"] == "False" for r in htree)
    assert quoted_numbers(r"\((\d+) of (\d+) runs differ\)", text) == (differ, len(htree))
    assert all(r["equals_closed_form"] == "True" for r in htree)
    assert quoted_numbers(r"All (\d+) runs equal, to the cycle, T_sched", text) == (len(htree),)
    # "contention_free is true in every idle run"; alpha, delta, tau as `harts calibrate` measures them
    assert all(r["contention_free"] == "True" for r in formulas)
    alpha, delta, tau = quoted_numbers(r"measures alpha = (\d+), delta = (\d+), tau = (\d+) cycle", text)
    assert (COMMITTED / "paper004" / "tables.md").read_text().startswith(
        f"Measured alpha = {alpha}, delta = {delta}, tau = {tau} cycles")
    for r in formulas:
        assert int(r["alpha_cycles"]) == alpha * int(r["alpha_count"])
        assert int(r["delta_cycles"]) == delta * int(r["delta_count"])
        assert int(r["tau_cycles"]) == tau * int(r["tau_count"])


def test_peters_syska_loaded_runs_all_waited_and_no_phase_ended_early():
    assert "No loaded run was contention-free. No phase of any loaded run ended before its idle end." in \
        experiments_section("Peters & Syska")
    loaded = [r for r in committed_rows("paper004/contention.csv") if float(r["rate"]) > 0]
    assert len(loaded) == 3 * 4 * 8
    for r in loaded:
        assert r["contention_free"] == "False", r
        ends, idle = json.loads(r["phase_end_cycles"]), json.loads(r["idle_phase_end_cycles"])
        assert len(ends) == len(idle) and all(a >= b for a, b in zip(ends, idle)), r


def test_al_mahadeen_omari_mh_1_16_costs_one_link_wait_and_one_hop_more_than_n8():
    # "In MH(1,16) the whole 110 is the 105-cycle link wait of (1,1100) plus the 5 cycles of its second hop"
    more, wait, hop = quoted_numbers(
        r"In MH\(1,16\) the whole (\d+) is the (\d+)-cycle link wait of \(1,1100\) plus the (\d+) cycles of its "
        r"second hop", experiments_section("Al-Mahadeen & Omari"))
    latency = {(r["m"], r["n"]): int(r["latency_cycles"]) for r in committed_rows("paper003/sharing_latency.csv")}
    assert latency[("1", "16")] - latency[("1", "8")] == more == wait + hop
    first = {(r["m"], r["n"], r["destination"]): r for r in committed_rows("paper003/sharing_first_step.csv")}
    late = first[("1", "16", "(1,1100)")]
    assert int(late["link_wait_cycles"]) == wait and int(late["hops"]) == 2
    assert int(late["alone_cycles"]) - int(first[("1", "16", "(1,0100)")]["alone_cycles"]) == hop


def test_al_mahadeen_omari_the_channel_wait_swaps_two_link_sharers():
    # "(5,11100) arrives before (5,10100) in the broadcast, after it when only the link sharers run"
    assert "(5,11100) arrives before (5,10100) in the broadcast, after it when only the link sharers run" in \
        experiments_section("Al-Mahadeen & Omari")
    first = {r["destination"]: r for r in committed_rows("paper003/sharing_first_step.csv")
             if (r["m"], r["n"]) == ("9", "32")}
    a, b = first["(5,11100)"], first["(5,10100)"]
    assert int(a["arrival_cycles"]) < int(b["arrival_cycles"])
    assert int(a["with_link_sharers_cycles"]) > int(b["with_link_sharers_cycles"])


def test_al_mahadeen_omari_steps_and_latency_against_size():
    """"Each step costs about 335 cycles", the steps by m at n = 8, n = 4's one step and 335 cycles fewer, and what
    n = 16 and 32 cost over n = 8 at the same steps."""
    text = experiments_section("Al-Mahadeen & Omari")
    example = committed_rows("paper003/mh_9_8_example.csv")
    first = [int(c) for c in example[0]["run_arrival_cycles"].split()]
    alone = {int(r["hops"]): int(r["alone_cycles"]) for r in committed_rows("paper003/sharing_first_step.csv")}
    assert min(first) == alone[1] and f"Each step costs about {alone[1]} cycles here" in text
    size = {(int(r["m"]), int(r["n"])): r for r in committed_rows("paper003/steps_vs_size.csv")}
    ms = sorted({m for m, _ in size})
    steps8 = [size[m, 8]["steps_measured"] for m in ms]
    assert f"({', '.join(steps8)} for m = {', '.join(map(str, ms))} at n = 8)" in text
    assert all(size[m, 16]["steps_measured"] == size[m, 32]["steps_measured"] == size[m, 8]["steps_measured"]
               for m in ms)
    fewer = {int(size[m, 8]["latency_cycles"]) - int(size[m, 4]["latency_cycles"]) for m in ms}
    assert all(int(size[m, 8]["steps_measured"]) - int(size[m, 4]["steps_measured"]) == 1 for m in ms)
    assert len(fewer) == 1 and f"takes one fewer, having no other subcube, and {fewer.pop()} cycles less" in text

    def more(n):
        return [int(size[m, n]["latency_cycles"]) - int(size[m, 8]["latency_cycles"]) for m in ms]
    sixteen, thirty_two = more(16), more(32)
    flat = max(m for m in ms if more(16)[ms.index(m)] == sixteen[0])
    assert sixteen == sorted(sixteen) and thirty_two == sorted(thirty_two)
    assert (f"n = 16 takes {sixteen[0]} (m <= {flat}) to {sixteen[-1]} (m = {ms[-1]}) cycles more than n = 8, and "
            f"n = 32 takes {thirty_two[0]} to {thirty_two[-1]} more") in text


def test_al_mahadeen_omari_shared_links_sentences():
    """The link waits of 105 cycles per worm ahead, the injection channels run out of, and the cost in cycles and
    percent over n = 8, from sharing_first_step.csv and sharing_latency.csv."""
    text = experiments_section("Al-Mahadeen & Omari")
    first = committed_rows("paper003/sharing_first_step.csv")
    waits = sorted({int(r["link_wait_cycles"]) for r in first} - {0})
    assert waits == [waits[0] * k for k in (1, 2, 3)]
    assert (f"waits {waits[0]} cycles per worm ahead of it there**: {waits[0]}, {waits[1]} and {waits[2]} cycles for "
            "the second, third and fourth") in text
    latency = {(int(r["m"]), int(r["n"])): r for r in committed_rows("paper003/sharing_latency.csv")}
    sends = {key: int(r["step1_sends"]) for key, r in latency.items()}
    ports = {key: int(r["ports"]) for key, r in latency.items()}
    assert sends[9, 16] == ports[9, 16] + 1 and sends[9, 32] > sends[1, 32] > ports[1, 32] == ports[9, 32]
    assert (f"MH(9,16)'s source has {sends[9, 16]} step-1 sends for {ports[9, 16]} channels, MH(m,32)'s "
            f"{sends[1, 32]} or {sends[9, 32]} for {ports[1, 32]}") in text
    late = [r for r in first if int(r["broadcast_minus_sharers_cycles"]) > 0 and r["kind"] == "own subcube"]
    assert {int(r["broadcast_minus_sharers_cycles"]) for r in late} == {104}
    assert {(r["m"], r["n"], r["destination"]) for r in late if r["m"] == "9"} == {
        ("9", "16", "(5,0010)"), ("9", "32", "(5,00001)"), ("9", "32", "(5,00010)")}
    assert "The sends left over wait 104 cycles for a channel ((5,0010) in MH(9,16); (5,00001) and (5,00010) in " \
           "MH(9,32))" in text

    def cost(m, n):
        extra = int(latency[m, n]["latency_minus_n8_cycles"])
        return f"{extra} (+{100 * extra / int(latency[m, 8]['latency_cycles']):.0f}%)"
    assert latency[1, 16]["steps"] == latency[1, 8]["steps"] and latency[9, 32]["steps"] == latency[9, 8]["steps"]
    assert (f"The steps are the same ({latency[1, 8]['steps']} at m = 1, {latency[9, 8]['steps']} at m = 9), but the "
            f"broadcast takes {cost(1, 16)} and {cost(1, 32)} cycles more than n = 8 at m = 1, and {cost(9, 16)} and "
            f"{cost(9, 32)} at m = 9") in text
    by_step = {n: [int(pair.split(":")[1]) for pair in latency[9, n]["shared_links_by_step"].split()] for n in (16, 32)}
    assert (f"in steps 2-4 ({by_step[16][1]}, {by_step[16][2]} and {by_step[16][3]} for n = 16; {by_step[32][1]}, "
            f"{by_step[32][2]} and {by_step[32][3]} for n = 32)") in text


def test_the_run_counts_of_the_commands():
    """"# 35 points" (Al-Mahadeen & Omari: the MH(9,8) example, the steps against size, the link-sharing points) and
    "# 169 runs" (Peters & Syska: the idle runs and the background sweep)."""
    points = 1 + len(committed_rows("paper003/steps_vs_size.csv")) + len(committed_rows("paper003/sharing_latency.csv"))
    assert f"harts reproduce --paper 003 --results RESULTS   # {points} points;" in \
        experiments_section("Al-Mahadeen & Omari", flat=False)
    runs = len(committed_rows("paper004/formulas.csv")) + len(committed_rows("paper004/contention.csv"))
    assert f"harts reproduce --paper 004 --results RESULTS           # {runs} runs;" in \
        experiments_section("Peters & Syska", flat=False)


def test_peters_syska_table_1_time_against_l_and_claim_2_sentences():
    text = experiments_section("Peters & Syska")
    formulas = committed_rows("paper004/formulas.csv")

    def run(algorithm, length, choice="B_opt"):
        found = [r for r in formulas if (r["algorithm"], r["length_flits"]) == (algorithm, str(length))
                 and r["torus"] in ("25x25", "32x32", "31x31")
                 and (r["packets_choice"] == choice or algorithm == "tiling")]
        assert len(found) == 1, (algorithm, length, choice)
        return found[0]

    def terms(r):
        return int(r["alpha_count"]), int(r["delta_count"]), int(r["tau_count"]) / int(r["length_flits"])
    tiling = terms(run("tiling", 100))
    assert tiling == (4, 24, 4) and terms(run("tiling", 10000)) == tiling
    assert "Its alpha x4 and L tau x4 are its Table 1 entries. Its delta x24 is Theorem 2's sqrt N - 1" in text
    assert terms(run("dc", 100, "given")) == (5, 32, 5)
    alpha, delta, tau = terms(run("dc", 10000))
    assert (f"buys L tau x {tau:.2f} (towards the Table's 1) with {alpha} start-ups and {delta} hops on the chain"
            in text)
    assert f"L tau x at L = 10,000 is {terms(run('htree', 10000))[2]:.2f}, heading for 1" in text

    # the store-and-forward formula, (sqrt(D (alpha + delta)) + sqrt(L tau / 4))^2, alpha = 52, delta = 8, tau = 1
    def over(algorithm, length):
        r = run(algorithm, length)
        side = int(r["torus"].split("x")[0])
        formula = (math.sqrt(2 * (side // 2) * 60) + math.sqrt(length / 4)) ** 2
        return int(r["completion_cycles"]) / formula
    below = {a: next(length for length in (1, 10, 100, 1000, 10000) if over(a, length) > 1)
             for a in ("tiling", "dc", "htree")}
    assert below == {"tiling": 1000, "dc": 10000, "htree": 1000}
    assert "the SF formula falls below D&C between L = 1000 and 10,000. It is below the H-trees and the tiling at " \
           "L = 1000 already" in text
    assert (f"D&C takes {over('dc', 10000):.2f} times the formula and the H-trees {over('htree', 10000):.2f} times"
            in text)
    two, one = run("htree", 100), run("htree", 100, "given")
    assert (two["packets"], one["packets"]) == ("2", "1")
    assert int(two["completion_cycles"]) > int(one["completion_cycles"])
    assert (f"On 31x31 at L = 100 it gives {two['packets']} packets per half and {two['completion_cycles']} cycles, "
            f"against {one['completion_cycles']} with one.") in text


def test_peters_syska_phase_ratios_sentence():
    """"one phase may lose nothing (ratio 1.00) while another takes 4.03 times its idle length": the least and the
    most of the tiling's phase ratios at 0.005, seed by seed."""
    text = experiments_section("Peters & Syska")
    ratios = []
    for r in committed_rows("paper004/contention.csv"):
        if r["algorithm"] == "tiling" and float(r["rate"]) == 0.005:
            ends, idle = json.loads(r["phase_end_cycles"]), json.loads(r["idle_phase_end_cycles"])
            ratios += [(b - a) / (d - c) for a, b, c, d in zip([0, *ends], ends, [0, *idle], idle)]
    assert (f"one phase may lose nothing (ratio {min(ratios):.2f}) while another takes {max(ratios):.2f} times its "
            "idle length") in text
