"""The run numbers that the sentences of EXPERIMENTS.md's Al-Dubai et al. section quote, read from the committed
result files of `harts reproduce --paper 002` (bench/results/reproduce/paper002/). No simulation here: a check
fails when a file changes and the sentence does not, or the other way round."""


import pytest

from .helpers import committed_rows, experiments_section, quoted


@pytest.fixture(scope="module")
def text() -> str:
    return experiments_section("Al-Dubai et al.")


def point(rows: list[dict], side: int, algorithm: str, fraction: float, flits: int = 100, vcs: int = 2) -> dict:
    """The one row of a *_latency.csv or vc_check.csv for a network, algorithm, background and length."""
    found = [r for r in rows if (int(r["side"]), r["algorithm"], float(r["background_fraction_of_bound"]),
                                 int(r["length_flits"]), int(r["virtual_channels"]))
             == (side, algorithm, fraction, flits, vcs)]
    assert len(found) == 1, (side, algorithm, fraction, flits, vcs)
    return found[0]


def mean(rows, *key, **more) -> float:
    return float(point(rows, *key, **more)["latency_mean_cycles"])


def test_every_run_got_one_copy_per_node_and_none_deadlocked(text):
    """"All 766 records": the runs of every CSV, each run once (Fig. 4's runs are also Fig. 5's idle (0,0) runs and
    the continued ones; the VC check's 2-VC runs are Fig. 5's; the deadlock check's run a fixed background window,
    so they are runs of their own)."""
    runs = {}
    for name in ("fig5_runs.csv", "fig6_runs.csv", "deadlock_runs.csv", "vc_check_runs.csv"):
        for r in committed_rows(f"paper002/{name}"):
            key = (int(r["side"]), r["algorithm"].lower(), r["source_label"], int(r["length_flits"]),
                   int(r["virtual_channels"]), float(r["background_fraction_of_bound"]), name == "deadlock_runs.csv")
            runs[key] = r
            assert r["deadlocked"] == "False", r
    for name, side, algorithm in (("fig4_steps.csv", "side", "algorithm"), ("fig4_beyond.csv", None, "algorithm")):
        for r in committed_rows(f"paper002/{name}"):
            n = int(r[side]) if side else int(r["network"].split("x")[-1])
            runs[(n, r[algorithm].lower(), "(0,0)", 100, 2, 0.0, False)] = r
    assert all(r["copies_per_node_min"] == r["copies_per_node_max"] == "1" for r in runs.values())
    quoted(text, f"All {len(runs)} records have `copies_per_node_min` = `copies_per_node_max` = 1 and `deadlocked` "
                 "false", f"# {len(runs)} runs;")


def test_fig4_steps_and_shared_links(text):
    steps = committed_rows("paper002/fig4_steps.csv")
    assert len(steps) == 20 and all(r["steps_measured"] == r["paper_statement_steps"] for r in steps)
    quoted(text, "all 20 step counts of Fig. 4", "All 20 agree.")
    shared = [r["links_shared_within_a_step"] for r in steps if r["algorithm"] == "NP-D"]
    assert all(r["links_shared_within_a_step"] == "0" for r in steps if r["algorithm"] != "NP-D")
    quoted(text, f"NP-D's runs share {', '.join(shared[:-1])} and {shared[-1]} links within a step at k = 3..7; the "
                 "other three share none")


def test_fig5_and_fig6_sentences(text):
    fig5, fig6 = committed_rows("paper002/fig5_latency.csv"), committed_rows("paper002/fig6_latency.csv")
    assert all(r["latency_max_cycles"] == r["latency_min_cycles"] for r in fig5
               if r["algorithm"] == "RD" and float(r["background_fraction_of_bound"]) == 0)
    quoted(text, "RD's idle latency is the same from every source (max = mean).")
    loaded = [r for r in committed_rows("paper002/fig5_runs.csv")
              if (r["side"], r["algorithm"], r["background_fraction_of_bound"])
              == ("16", "rd", "0.4")]
    low, high = min(int(r["latency_cycles"]) for r in loaded), max(int(r["latency_cycles"]) for r in loaded)
    again = next(r for r in loaded if r["source_label"] == "(4,2)")["latency_by_background_cycles"]
    quoted(text, f"the six RD runs took {low} to {high} cycles",
           f"(source (4,2): {', '.join(pair.split(':')[1] for pair in again.split())};",
           f"That point's spread ({low}-{high})")
    pcp8 = {int(r["length_flits"]): r for r in fig6 if (r["side"], r["algorithm"], r["background_fraction_of_bound"])
            == ("8", "PCP", "0.4")}
    assert float(pcp8[90]["latency_mean_cycles"]) > float(pcp8[120]["latency_mean_cycles"])
    quoted(text, f"not monotonic in length ({float(pcp8[90]['latency_mean_cycles']):.1f} at 90 flits, "
                 f"{float(pcp8[120]['latency_mean_cycles']):.1f} at 120)",
           f"(max {pcp8[90]['latency_max_cycles']} at 90 flits)")


def test_deadlock_check_sentences(text):
    check = committed_rows("paper002/deadlock_check.csv")
    runs, cycles, packets = (sum(int(r[k]) for r in check)
                             for k in ("runs", "cycles_simulated_total", "background_packets_total"))
    assert all(r["deadlocked_runs"] == "0" and r["copies_per_node_min"] == r["copies_per_node_max"] == "1"
               for r in check)
    quoted(text, f"{runs} runs, {cycles:,} cycles simulated, {packets:,} background packets. No deadlock; every node "
                 "got one copy.")
    saturated = [float(r["background_latency_mean_cycles"]) for r in check
                 if float(r["background_fraction_of_bound"]) > 0.4]
    light = [float(r["background_latency_mean_cycles"]) for r in check
             if float(r["background_fraction_of_bound"]) == 0.4]
    quoted(text, f"Its mean packet latency is {min(saturated):,.0f} to {max(saturated):,.0f} cycles, against "
                 f"{min(light):.1f} to {max(light):.0f} at 0.4.")


def test_the_shapes_pcp_flat_in_steps_not_in_latency(text):
    beyond = {(r["algorithm"], int(r["network"].split("x")[-1])): r for r in committed_rows("paper002/fig4_beyond.csv")}
    assert max(side for _, side in beyond) == 512 and all(r["steps"] == "2" for (a, _), r in beyond.items()
                                                           if a == "pcp")
    quoted(text, "PCP's 2 steps hold up to 512x512")
    sides = (8, 16, 32, 64, 128)
    pcp, rd = ({s: int(beyond[a, s]["latency_cycles"]) for s in (*sides, 256, 512)} for a in ("pcp", "rd"))
    quoted(text, f"grows from {pcp[8]} cycles (8x8) to {pcp[128]} (128x128)")
    fig5 = committed_rows("paper002/fig5_latency.csv")
    (p4, p64), (r4, r64) = ([mean(fig5, s, a, 0.0) for s in (4, 64)] for a in ("PCP", "RD"))
    quoted(text, f"its 6-source mean grows x{p64 / p4:.2f} ({p4:.0f} to {p64:.0f} cycles), RD's x{r64 / r4:.2f} "
                 f"({r4:.0f} to {r64:.0f})")
    # the hops on each last copy's path, as the sentences give them: 5 side / 2 - 3 for PCP, 2 side - 2 for RD
    pcp_hops, rd_hops = {s: 5 * s // 2 - 3 for s in sides}, {s: 2 * s - 2 for s in sides}
    quoted(text, f"({', '.join(str(pcp_hops[s]) for s in sides)} for 8x8 to 128x128)",
           f"({', '.join(str(rd_hops[s]) for s in sides)} hops)")
    for side in (*sides, 256, 512):
        assert pcp[side] == 656 + 7 * (5 * side // 2 - 3)
        assert rd[side] == 330 * int(beyond["rd", side]["steps"]) + 5 * (2 * side - 2)
    quoted(text, "every PCP latency equals 656 + 7h cycles", "RD's idle latency equals 330 cycles per step")
    ratio = {s: rd[s] / pcp[s] for s in pcp}
    quoted(text, f"RD / PCP = {ratio[8]:.1f} (8x8), {ratio[16]:.1f} (16x16, 32x32), {ratio[64]:.1f} (64x64), "
                 f"{ratio[128]:.1f} (128x128), {ratio[256]:.1f} (256x256: {pcp[256]} against {rd[256]} cycles), "
                 f"{ratio[512]:.2f} (512x512: {pcp[512]} against {rd[512]})")
    assert f"{ratio[16]:.1f}" == f"{ratio[32]:.1f}"
    # the fits at 1024x1024: 20 steps for RD
    quoted(text, f"where they give PCP {656 + 7 * (5 * 1024 // 2 - 3)} and RD {330 * 20 + 5 * (2 * 1024 - 2)} cycles")


def test_pcp_beats_rd_at_every_point_and_run(text):
    points = {}
    for r in committed_rows("paper002/fig5_latency.csv") + committed_rows("paper002/fig6_latency.csv"):
        key = (int(r["side"]), int(r["length_flits"]), float(r["background_fraction_of_bound"]))
        points.setdefault(key, {})[r["algorithm"]] = float(r["latency_mean_cycles"])
    ratios = {key: v["RD"] / v["PCP"] for key, v in points.items()}
    low, high = min(ratios, key=ratios.get), max(ratios, key=ratios.get)
    assert ratios[low] > 1
    quoted(text, f"the means by {ratios[low]:.2f}x ({low[0]}x{low[0]}, {low[1]} flits, {low[2]:g} x bound) to "
                 f"{ratios[high]:.1f}x ({high[0]}x{high[0]}, {high[1]} flits, {high[2]:g} x bound)")
    runs = {}
    for r in committed_rows("paper002/fig5_runs.csv") + committed_rows("paper002/fig6_runs.csv"):
        key = (int(r["side"]), r["source_label"], int(r["length_flits"]), float(r["background_fraction_of_bound"]))
        runs.setdefault(key, {})[r["algorithm"]] = int(r["latency_cycles"])
    single = {key: v["rd"] / v["pcp"] for key, v in runs.items()}
    worst = min(single, key=single.get)
    quoted(text, f"by at least {single[worst]:.2f}x ({worst[0]}x{worst[0]}, source {worst[1]}, {worst[2]} flits, "
                 f"{worst[3]:g} x bound: {runs[worst]['pcp']} against {runs[worst]['rd']} cycles)")


def test_under_background_sentences(text):
    fig5, vc = committed_rows("paper002/fig5_latency.csv"), committed_rows("paper002/vc_check.csv")
    sides = (4, 8, 16, 32, 64)

    def loss(algorithm, fraction):
        return {s: mean(fig5, s, algorithm, fraction) / mean(fig5, s, algorithm, 0.0) for s in sides}
    pcp, rd = loss("PCP", 0.2), loss("RD", 0.2)
    quoted(text, f"PCP {100 * (min(pcp.values()) - 1):.0f}-{100 * (max(pcp.values()) - 1):.0f}%, "
                 f"RD {100 * (min(rd.values()) - 1):.0f}-{100 * (max(rd.values()) - 1):.0f}% over idle")
    pcp, rd = loss("PCP", 0.4), loss("RD", 0.4)
    rd_low, rd_high, pcp_low, pcp_high = (min(rd, key=rd.get), max(rd, key=rd.get), min(pcp, key=pcp.get),
                                          max(pcp, key=pcp.get))
    quoted(text, f"RD loses {rd[rd_low]:.1f}x ({rd_low}x{rd_low}) to {rd[rd_high]:.1f}x ({rd_high}x{rd_high}), "
                 f"PCP {pcp[pcp_low]:.2f}x ({pcp_low}x{pcp_low}) to {pcp[pcp_high]:.2f}x ({pcp_high}x{pcp_high})")

    def two_four(side, algorithm, key="latency_mean_cycles"):
        return tuple(float(point(vc, side, algorithm, 0.4, vcs=v)[key]) for v in (2, 4))
    (a16, b16), (a64, b64), (a8, b8) = (two_four(s, "RD") for s in (16, 64, 8))
    bg16 = two_four(16, "RD", "background_latency_mean_cycles")
    quoted(text, f"RD's mean drops from {a16:.1f} to {b16:.1f} cycles on 16x16 ({a64:.1f} to {b64:.1f} on 64x64, "
                 f"{a8:.1f} to {b8:.1f} on 8x8), and the background's mean latency from {bg16[0]:.1f} to {bg16[1]:.1f}")
    p8 = two_four(8, "PCP")
    assert p8[1] < p8[0]
    quoted(text, f"PCP on 8x8 also gains ({p8[0]:.1f} to {p8[1]:.1f})")
    p16, p64 = two_four(16, "PCP"), two_four(64, "PCP")
    change = sorted(abs(b / a - 1) for a, b in (p16, p64))
    quoted(text, f"unchanged within {100 * change[0]:.0f}-{100 * change[1]:.0f}% ({p16[0]:.1f}/{p16[1]:.1f}, "
                 f"{p64[0]:.0f}/{p64[1]:.0f})")
    r16, r32, r64 = (mean(fig5, s, "RD", 0.4) for s in (16, 32, 64))
    assert r16 > r32 > r64
    quoted(text, f"worse on 16x16 ({r16:.1f}) than on 32x32 ({r32:.1f}) and 64x64 ({r64:.1f})")


def test_fig6_slopes(text):
    fig6 = committed_rows("paper002/fig6_latency.csv")

    def m(side, algorithm, flits, fraction=0.0):
        return mean(fig6, side, algorithm, fraction, flits=flits)

    def slope(side, algorithm, fraction=0.0):
        return (m(side, algorithm, 210, fraction) - m(side, algorithm, 30, fraction)) / 180
    gaps = {m(8, "PCP", f) - m(4, "PCP", f) for f in range(30, 211, 30)}
    assert len(gaps) == 1
    gap = gaps.pop()
    quoted(text, f"PCP's 8x8 latency is {gap:.0f} cycles ({gap * 0.0033:.2f} us) above 4x4's at every length "
                 f"({m(4, 'PCP', 30):.0f} against {m(8, 'PCP', 30):.0f} at 30 flits, {m(4, 'PCP', 210):.0f} against "
                 f"{m(8, 'PCP', 210):.0f} at 210)")
    assert slope(4, "PCP") == slope(8, "PCP") == 2
    quoted(text, f"RD's slopes are {slope(4, 'RD'):.2f} (4x4) and {slope(8, 'RD'):.2f} (8x8), and its 8x8-4x4 gap "
                 f"grows from {m(8, 'RD', 30) - m(4, 'RD', 30):.0f} to {m(8, 'RD', 210) - m(4, 'RD', 210):.0f} cycles")
    quoted(text, f"the slopes grow to {slope(4, 'PCP', 0.4):.2f} / {slope(8, 'PCP', 0.4):.2f} (PCP) and "
                 f"{slope(4, 'RD', 0.4):.2f} / {slope(8, 'RD', 0.4):.2f} (RD) cycles per flit on 4x4 / 8x8")
