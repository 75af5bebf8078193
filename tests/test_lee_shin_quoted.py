"""The run numbers that the sentences of EXPERIMENTS.md's Lee & Shin section quote, read from the committed
result files of `harts reproduce --paper 001` (bench/results/reproduce/paper001/). No simulation here: a check
fails when a file changes and the sentence does not, or the other way round."""

import re

import pytest

from .helpers import committed_rows, experiments_section, quoted


def g(x) -> str:
    """A cycle count as the sentences write it: whole numbers whole, others to one decimal."""
    x = float(x)
    return f"{x:.0f}" if x == round(x) else f"{x:.1f}"


@pytest.fixture(scope="module")
def text() -> str:
    return experiments_section("Lee & Shin")


@pytest.fixture(scope="module")
def table() -> list[dict]:
    return committed_rows("paper001/tables.csv")


def row(rows: list[dict], **match) -> dict:
    """The one row whose fields equal `match` (claim: the claim text starts with it; "": the first table's)."""
    claim = match.pop("claim", None)
    found = [r for r in rows if all(r[k] == str(v) for k, v in match.items())
             and (claim is None or (r["claim"].startswith(claim) if claim else not r["claim"]))]
    assert len(found) == 1, (match, claim, len(found))
    return found[0]


def engine(rows: list[dict], **match) -> str:
    return g(row(rows, **match)["engine_cycles"])


def test_overlapped_stages(text, table):
    over = {"overlapped": "True"}
    quoted(text, f"runs eta = 4 in {engine(table, network='Q_4', early=2, **over)} cycles",
           f"Q_8 at eta = 4, mu = 3: {engine(table, network='Q_8', early=2, **over)} = 5160 - 30",
           f"SQ_6 at eta = mu = 3: {engine(table, network='SQ_6', eta=3, early=2, **over)} = 570")


def test_theorem_4(text, table):
    q4 = row(table, claim="Theorem 4: eta", network="Q_4")
    sq4 = row(table, claim="Theorem 4: eta", network="SQ_4")
    assert q4["engine_cycles"] == sq4["engine_cycles"] and q4["contention_free"] == sq4["contention_free"] == "False"
    quoted(text, f"`harts ata --config q4.yaml --mu 1 --eta 1` takes {g(q4['engine_cycles'])} cycles, with "
                 "contention; SQ_4 the same")
    arrivals = re.search(r"copies arrive at cycles ([\d., ]+), \.\.\.: one every ([\d.]+) cycles", q4["measured"])
    first = re.search(r"the first copies' ([\d.]+)", q4["measured"]).group(1)
    wait = re.search(r"first wait: at node (\d+), cycle ([\d.]+), .*; (\d+) more packets", q4["measured"])
    quoted(text, f"at cycles {arrivals.group(1)}, ...: one every {arrivals.group(2)} cycles, not every 5",
           f"The first wait is at cycle {wait.group(2)}. Node 0's packet is then at node {wait.group(1)}",
           f"({int(wait.group(3)) + 1} packets)",
           f"{g(q4['engine_cycles'])} = {g(q4['formula_cycles'])} + 14 x ({arrivals.group(2)} - 5) + {first}")
    eta2 = row(table, claim="the same 18-byte packets at eta = 2")
    late = float(eta2["engine_cycles"]) - float(eta2["formula_cycles"])
    quoted(text, f"end {g(late)} cycles late ({g(eta2['engine_cycles'])} against {g(eta2['formula_cycles'])})")
    quoted(text, f"eta = mu = 1 takes {engine(table, claim='Theorem 4 with a longer d')} = 12 + 8 + 14 x 10 on Q_4",
           f"eta = mu = 2 takes {engine(table, claim='eta = mu = 2 with a longer d')} and FRS "
           f"{engine(table, claim='FRS with a longer d')}")
    wire = {r["timing"].split(":")[0]: r for r in table if r["claim"] == "Theorem 4 with a little wire delay"}
    one, two, three = (wire[f"link_delay_cycles {k}"] for k in (1, 2, 3))
    assert three["contention_free"] == "True" and one["contention_free"] == two["contention_free"] == "False"
    assert float(three["engine_cycles"]) - float(three["formula_cycles"]) == 1
    quoted(text, f"1 cycle late ({g(three['engine_cycles'])} against {g(three['formula_cycles'])})",
           f"still queues ({g(one['engine_cycles'])} against {g(one['formula_cycles'])}, "
           f"{g(two['engine_cycles'])} against {g(two['formula_cycles'])})")


def test_ihc_against_frs(text, table):
    def pair(claim, network):
        return (engine(table, claim=claim, algorithm="frs", network=network),
                engine(table, claim=claim, algorithm="ihc", network=network))
    slow = "VI-A: eta = mu, tau_S"
    (f4, i4), (f8, i8) = pair(slow, "Q_4"), pair(slow, "Q_8")
    quoted(text, f"FRS wins: {f4} against {i4} on Q_4, {f8} against {i8} on Q_8")
    (f4, i4), (f8, i8) = pair("IHC against FRS, S = 13", "Q_4"), pair("IHC against FRS, S = 74", "Q_8")
    quoted(text, f"IHC wins at S = 13 on Q_4 ({i4} against {f4}) and at S = 74 on Q_8 ({i8} against {f8})")
    f4, i4 = pair("IHC against FRS, S = 12", "Q_4")
    assert f4 == i4
    quoted(text, f"At S = 12 on Q_4 they tie at {f4}")
    gap4, gap8 = (row(table, claim="IHC without the idle gap", network=n) for n in ("Q_4", "Q_8"))
    assert gap4["length_bytes"] == gap8["length_bytes"] == "60"
    assert gap4["contention_free"] == gap8["contention_free"] == "False" and "queued" in gap4["measured"]
    quoted(text, f"IHC contends: {g(gap4['engine_cycles'])} against {g(gap4['formula_cycles'])} on Q_4, "
                 f"{g(gap8['engine_cycles'])} against {g(gap8['formula_cycles'])} on Q_8")
    quoted(text, f"FRS beats IHC on Q_4 ({engine(table, claim='', algorithm='frs', network='Q_4')} against "
                 f"{engine(table, claim='', algorithm='ihc', network='Q_4')})")
    frs8 = row(table, claim="", algorithm="frs", network="Q_8")
    quoted(text, f"({g(frs8['table_3_cycles'])} against {g(frs8['table_2_cycles'])} on Q_8)")


def test_the_bound_on_eta(text, table):
    def ihc(network, eta):
        return engine(table, algorithm="ihc", network=network, eta=eta, overlapped="False", timing="-", mu=2)

    def plain(algorithm, network):
        return engine(table, claim="", algorithm=algorithm, network=network)
    ks6 = engine(table, claim="the bound on eta", algorithm="ks", network="E-6")
    quoted(text, f"Q_4, bound 3: eta = 2 takes {ihc('Q_4', 2)} against VRS-ATA's {plain('vrs', 'Q_4')}; "
                 f"eta = 16 takes {ihc('Q_4', 16)}.",
           f"SQ_5, bound 7: eta = 5 takes {ihc('SQ_5', 5)} against VSQ-ATA's {plain('vsq', 'SQ_5')}; "
           f"eta = 25 takes {ihc('SQ_5', 25)}.",
           f"eta = 7 takes {ihc('E-6', 7)} against KS-ATA's {ks6}.",
           f"only eta = 19 runs, in {ihc('E-3', 19)} against {plain('ks', 'E-3')}.",
           f"eta = 8 on Q_4 still beats VRS-ATA ({ihc('Q_4', 8)} against {plain('vrs', 'Q_4')}), and eta = 13 "
           f"on E-6 beats KS-ATA ({ihc('E-6', 13)} against {ks6})")


def test_ihc_against_the_one_at_a_time_algorithms(text, table):
    def plain(algorithm, network):
        return float(row(table, claim="", algorithm=algorithm, network=network)["engine_cycles"])
    ihc6, ks6 = plain("ihc", "E-6"), float(row(table, claim="the bound on eta", algorithm="ks")["engine_cycles"])
    ihc5 = float(row(table, claim="the bound on eta", network="SQ_5", eta=5)["engine_cycles"])
    quoted(text, f"{ks6 / ihc6:.2f} times KS-ATA's speed on E-6 ({g(ihc6)} against {g(ks6)} cycles)",
           f"{plain('vsq', 'SQ_5') / ihc5:.2f} times VSQ-ATA's on SQ_5 ({g(ihc5)} against {g(plain('vsq', 'SQ_5'))})",
           f"{plain('vrs', 'Q_4') / plain('ihc', 'Q_4'):.2f} and {plain('vrs', 'Q_8') / plain('ihc', 'Q_8'):.2f} "
           "times VRS-ATA's on Q_4 and Q_8",
           f"it is {plain('ihc', 'E-3') / plain('ks', 'E-3'):g} times slower than KS-ATA ({g(plain('ihc', 'E-3'))} "
           f"against {g(plain('ks', 'E-3'))})")


def test_eta_on_the_hexagonal_mesh(text, table):
    e3 = row(table, claim="Table III's eta = mu = 2 on E-3")
    wait = re.search(r"first wait: at node (\d+), cycle ([\d.]+), node (\d+)'s packet was refused a transmitter",
                     e3["measured"])
    quoted(text, f"Node {wait.group(3)}'s packet is refused node {wait.group(1)}'s transmitter at cycle "
                 f"{wait.group(2)}, and the run takes {g(e3['engine_cycles'])} cycles against "
                 f"{g(e3['formula_cycles'])}")


def test_vrs_ata_formula(text, table):
    vrs = {r["network"]: r for r in committed_rows("paper001/vrs_formula.csv")}
    assert sorted(vrs) == [f"Q_{m}" for m in range(3, 9)]
    for name, r in vrs.items():  # floor(m/2) + 1 packets; fewer than gamma - 1 = m - 1 from Q_5 on
        m = int(name[2:])
        assert int(r["packets"]) == m // 2 + 1 and (int(r["packets"]) < m - 1) == (m >= 5)
    q8 = vrs["Q_8"]
    missing = 8 - 1 - int(q8["packets"])
    assert missing == 2
    quoted(text, f"On Q_8 the two missing packets are {g(missing * float(q8['S_plus_rM']))} of the "
                 f"{g(float(q8['printed_broadcast_cycles']) - float(q8['broadcast_cycles']))} cycles",
           "(3 against 4)", "floor(m/2) + 1 for m = 3 to 8")
    for r in table:  # the last two columns are the first table's rows
        if r["algorithm"] == "vrs" and not r["claim"]:
            assert (r["formula_cycles"], r["table_2_cycles"]) == (vrs[r["network"]]["all_to_all_cycles"],
                                                                   vrs[r["network"]]["printed_all_to_all_cycles"])


def test_fault_trials(text):
    trials = committed_rows("paper001/fault_trials.csv")
    for r in trials:
        gamma, f = int(r["gamma"]), int(r["faults"])
        assert r["trials"] == "20" and f <= (gamma - 1 if r["kind"] != "byzantine" else (gamma - 1) // 2)
        if r["algorithm"] != "ihc" or r["kind"] == "dead_links" or (r["kind"] == "crash" and f == 1):
            assert float(r["all_correct_fraction"]) == 1.0, r
        elif r["kind"] == "byzantine":
            assert float(r["correct_fraction"]) == 0.0, r
        else:
            assert float(r["correct_fraction"]) < 1.0, r
    quoted(text, "tolerate gamma - 1 crashes and floor((gamma-1)/2) Byzantine nodes in every trial",
           "IHC tolerates gamma - 1 dead links, but only one crash and no Byzantine node")


def test_worst_case(text):
    worst = committed_rows("paper001/worst_case.csv")

    def at(algorithm, network, what="engine_cycles"):
        return g(row(worst, algorithm=algorithm, network=network, queueing_D=0)[what])
    quoted(text, f"({at('ks', 'E-5', 'table_4_cycles')} against {at('ks', 'E-5')} on E-5)",
           f"({at('vsq', 'SQ_5')} against {at('vsq', 'SQ_5', 'table_4_cycles')} on SQ_5)",
           f"instead of {at('ihc', 'Q_8')} for IHC on Q_8",
           f"on SQ_4 took 495 cycles instead of {at('ihc', 'SQ_4')}")


def test_under_background_load(text):
    load = committed_rows("paper001/load.csv")

    def mean(network, algorithm, rho):
        times = [float(r["cycles"]) for r in load if (r["network"], r["algorithm"]) == (network, algorithm)
                 and float(r["background_load"]) == rho]
        return sum(times) / len(times), min(times), max(times)

    def worst(network, algorithm):
        return next(float(r["worst_case_cycles"]) for r in load
                    if (r["network"], r["algorithm"]) == (network, algorithm))
    rhos = sorted({float(r["background_load"]) for r in load})
    assert rhos == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    # the mean passes the worst case (D = 0) for IHC on Q_4 from 0.2, on SQ_5 at 0.5, FRS at every rho > 0
    assert [mean("Q_4", "ihc", x)[0] > worst("Q_4", "ihc") for x in rhos] == [False] * 2 + [True] * 4
    assert [mean("SQ_5", "ihc", x)[0] > worst("SQ_5", "ihc") for x in rhos] == [False] * 5 + [True]
    assert all(mean("Q_4", "frs", x)[0] > worst("Q_4", "frs") for x in rhos[1:])
    for network, algorithm in (("E-6", "ks"), ("SQ_5", "vsq"), ("Q_4", "vrs"), ("E-6", "ihc")):
        assert all(mean(network, algorithm, x)[0] < worst(network, algorithm) for x in rhos), (network, algorithm)
    quoted(text, f"IHC on Q_4 from rho = 0.2 ({mean('Q_4', 'ihc', 0.2)[0]:.0f} against {g(worst('Q_4', 'ihc'))})",
           f"on SQ_5 at 0.5 ({mean('SQ_5', 'ihc', 0.5)[0]:.0f} against {g(worst('SQ_5', 'ihc'))})",
           f"so does IHC on E-6 ({mean('E-6', 'ihc', 0.5)[0]:.0f} against {g(worst('E-6', 'ihc'))})",
           f"FRS beats IHC on Q_4 ({g(mean('Q_4', 'frs', 0)[0])} against {g(mean('Q_4', 'ihc', 0)[0])})",
           f"At 0.5 IHC still beats KS-ATA on E-6 ({mean('E-6', 'ihc', 0.5)[0]:.0f} against "
           f"{mean('E-6', 'ks', 0.5)[0]:.0f})")
    ihc, vsq = mean("SQ_5", "ihc", 0.5), mean("SQ_5", "vsq", 0.5)
    assert vsq[1] <= ihc[0] <= vsq[2] and ihc[1] <= vsq[0] <= ihc[2]
    quoted(text, f"On SQ_5 at 0.5 the two means lie within each other's range ({ihc[0]:.0f} and {vsq[0]:.0f})")
    for network, (one, other) in {"E-6": ("ihc", "ks"), "SQ_5": ("ihc", "vsq"), "Q_4": ("ihc", "vrs")}.items():
        assert mean(network, one, 0)[0] < mean(network, other, 0)[0]  # IHC beats the one-at-a-time algorithms


def test_receiver_fifos(text):
    peaks = committed_rows("paper001/fifo_peaks.csv")

    def span(network):
        mine = [int(r["ihc_fifo_peak_bytes"]) for r in peaks if r["network"] == network]
        return f"{min(mine)}-{max(mine)}"
    background = {int(r["background_fifo_peak_bytes"]) for r in peaks}
    assert len(background) == 1 and all(int(r["fifo_bytes"]) > int(r["ihc_fifo_peak_bytes"]) for r in peaks)
    quoted(text, f"With IHC it reaches {span('SQ_8')} bytes on SQ_8 and {span('SQ_5')} on SQ_5; the background alone "
                 f"peaks at {background.pop()} bytes")
