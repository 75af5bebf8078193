"""Paper 001's IHC all-to-all broadcast on the engine, in dedicated mode, against Table II evaluated with the
timing MODEL.md derives from the parameters (S = 7, r = 1/6, d = 5 cycles), not with the engine's own
calibration."""

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from harts.experiments.lee_shin.ata import (
    default_eta,
    frs_ata,
    ihc,
    ks_ata,
    vrs_ata,
    vsq_ata,
)
from harts.machine.config import defaults
from harts.reference.rs import rs_hops

REPO = Path(__file__).resolve().parent.parent
S, R, D = Fraction(7), Fraction(1, 6), Fraction(5)


def table_two(n: int, eta: int, length: int) -> Fraction:
    """eta (tau_S + mu alpha + (N - 2) alpha), with tau_S + mu alpha = S + rM and alpha = d."""
    return eta * (S + R * length + (n - 2) * D)


@pytest.mark.parametrize("spec, eta", [
    ({"kind": "hex", "size": 3}, 19),
    ({"kind": "hex", "size": 6}, 7),
    ({"kind": "torus", "dims": [4, 4]}, 2),
    ({"kind": "torus", "dims": [6, 6]}, 3),
    ({"kind": "hypercube", "dimension": 4}, 2),
    ({"kind": "hypercube", "dimension": 6}, 2),
    ({"kind": "hypercube", "dimension": 8}, 2),
], ids=lambda x: str(x))
def test_dedicated_ihc_takes_table_two_exactly_without_contention(spec, eta):
    run = ihc(defaults().with_values(topology=spec), eta, 2)
    gamma = {"hex": 6, "torus": 4}.get(spec["kind"], spec.get("dimension"))
    assert run.length == 48  # 2 x (d = 30 bytes) less the 8-byte idle gap, in whole cycles
    assert run.completion_cycles == table_two(run.nodes, eta, 48)
    assert run.contention_free and run.first_contention is None
    assert run.copies_per_node_min == run.copies_per_node_max == run.gamma == gamma


def test_overlapped_stages_save_mu_minus_one_squared_alpha():
    config = defaults().with_values(topology={"kind": "torus", "dims": [6, 6]})
    plain, overlapped = ihc(config, 3, 3), ihc(config, 3, 3, overlapped=True)
    assert plain.length == overlapped.length == 78  # floor(3 x 5 - 8/6) = 13 cycles
    assert plain.completion_cycles == table_two(36, 3, 78) == 570
    assert overlapped.completion_cycles == 570 - (3 - 1) ** 2 * D
    assert overlapped.contention_free


@pytest.mark.parametrize("m, total", [(4, 360), (8, 5160)])
def test_overlapped_stages_with_eta_above_mu_save_eta_minus_one_times_mu_minus_one_alpha(m, total):
    """eta = 4 > mu = 3 on Q_4 and Q_8: the eta - 1 later stages each start (mu-1)d early, so the schedule
    saves (eta-1)(mu-1)d = 30 cycles, not the paper's (mu-1)^2 d = 20, which section VI-A states for eta = mu."""
    run = ihc(defaults().with_values(topology={"kind": "hypercube", "dimension": m}), 4, 3, overlapped=True)
    assert table_two(2 ** m, 4, 78) == total  # 4 x (7 + 13 + (N - 2) x 5)
    assert run.completion_cycles == run.formula_cycles == total - 3 * 2 * D
    assert run.completion_cycles != total - 2 ** 2 * D and run.contention_free


def test_harts_ata_prints_the_overlapped_formula_that_applies(tmp_path, capsys):
    from harts.cli import main

    config = tmp_path / "q4.yaml"
    config.write_text("topology: {kind: hypercube, dimension: 4}\n")
    assert main(["ata", "--config", str(config), "--mu", "3", "--overlapped"]) == 0
    out = capsys.readouterr().out
    assert "completion 330 cycles" in out and "- (eta-1)(mu-1)d (eta > mu" in out and "330 cycles (exact)" in out
    torus = tmp_path / "sq6.yaml"
    torus.write_text("topology: {kind: torus, dims: [6, 6]}\n")
    assert main(["ata", "--config", str(torus), "--mu", "3", "--eta", "3", "--overlapped"]) == 0
    out = capsys.readouterr().out
    assert "- (mu-1)^2 d (section VI-A, eta = mu)" in out and "550 cycles (exact)" in out


@pytest.mark.parametrize("spec, eta, where", [
    # eta < mu: every node sends at cycle 0, and its neighbour's packet finds its transmitter busy
    ({"kind": "torus", "dims": [4, 4]}, 1, "at node 1, cycle 9, node 0's packet"),
    # N = 19 mod 2 != 0: nodes 18 and 0, one hop apart, both start in stage 0
    ({"kind": "hex", "size": 3}, 2, "at node 0, cycle 9, node 18's packet"),
], ids=["eta-below-mu", "eta-not-dividing-N"])
def test_a_schedule_whose_packets_meet_is_reported_with_where(spec, eta, where):
    run = ihc(defaults().with_values(topology=spec), eta, 2)
    assert not run.contention_free
    assert run.completion_cycles > table_two(run.nodes, eta, 48)
    assert run.first_contention.startswith(where) and "was refused a transmitter" in run.first_contention
    assert run.copies_per_node_min == run.gamma  # late, but every copy arrives


def test_theorem_4_eta_mu_1_is_paced_by_the_relaying_receiver_not_by_d():
    """eta = mu = 1 on Q_4: the formula is S + rM + (N-2)d = 7 + 3 + 14 x 5 = 80 (M = 6 floor(5 - 8/6) = 18).
    Copies reach a node every 6.5 cycles, not every d = 5, and one hop from their source 2.5 cycles after
    S + rM (an 18-byte packet, under 48 bytes): 80 + 14 x 1.5 + 2.5 = 103.5. With 3 cycles of wire delay (d = 8)
    the receiver keeps up; with 5 (d = 10, S = 12, M = 48 bytes) the formula holds to the cycle: 12 + 8 + 140."""
    import numpy as np

    q4 = defaults().with_values(topology={"kind": "hypercube", "dimension": 4})
    run = ihc(q4, 1, 1)
    assert run.length == 18 and run.formula_cycles == 80 and run.completion_cycles == Fraction(207, 2)
    times = np.unique(run.arrivals)
    assert times[0] == 7 + 3 + 2.5 and set(np.diff(times)) == {6.5}
    assert "queued behind another packet" in run.first_contention
    assert ihc(q4, 2, 1).contention_free  # eta = 2: the same packets, every 2d = 10 cycles
    assert ihc(q4.with_values(timing__link_delay_cycles=3), 1, 1).contention_free
    wire = ihc(q4.with_values(timing__link_delay_cycles=5), 1, 1)
    assert (wire.S, wire.d, wire.length) == (12, 10, 48)
    assert wire.completion_cycles == 12 + 8 + 14 * 10 and wire.contention_free


def test_theorem_4s_first_wait_is_each_packet_at_its_second_node_behind_the_first_nodes_own(monkeypatch):
    """EXPERIMENTS.md (Theorem 4) on eta = mu = 1, Q_4: the first wait is node 0's packet at node 3, two hops out along
    HC 0, whose header is in while node 3's receiver still holds node 1's own packet (node 1 lies between them on HC
    0); every node's packet on every cycle waits so at its second node, at that cycle. Read from the run's packet log
    and hop records, against the directed Hamiltonian cycles."""
    import numpy as np

    from harts.controller import records as R
    from harts.machine.cut_through import CutThroughSimulation
    from harts.network.hamiltonian import directed_cycles

    seen = {}
    run_with_hops = CutThroughSimulation.run

    def run(self, traffic, *args, **kwargs):
        seen.update(traffic=traffic, topology=self.topology, result=run_with_hops(self, traffic, *args, hops=True,
                                                                                   **kwargs))
        return seen["result"]
    monkeypatch.setattr(CutThroughSimulation, "run", run)
    ihc(defaults().with_values(topology={"kind": "hypercube", "dimension": 4}), 1, 1)
    traffic, result = seen["traffic"], seen["result"]
    cycles = [[int(v) for v in cycle] for cycle in directed_cycles(seen["topology"])]
    pl, hops = result.packets, result.hops
    own = np.nonzero(traffic.kind[pl[R.PL_ORIGIN]] == R.TRAFFIC_INITIATE)[0]
    assert len(own) == 16 * 4 and (pl[R.PL_CONTENDED_AT, own] >= 0).all()
    tick = int(pl[R.PL_CONTENDED_AT, own].min())
    assert Fraction(tick, result.ticks_per_cycle) == 11 and (pl[R.PL_CONTENDED_AT, own] == tick).all()

    def along(packet, hops_out):  # the node `hops_out` hops along the packet's cycle from its source
        origin = pl[R.PL_ORIGIN, packet]
        cycle = cycles[traffic.direction[origin]]
        return cycle[(cycle.index(int(traffic.source[origin])) + hops_out) % len(cycle)]
    assert all(pl[R.PL_CONTENDED_NODE, k] == along(k, 2) for k in own)
    first = own[np.lexsort((pl[R.PL_UID, own], pl[R.PL_CONTENDED_AT, own]))[0]]  # as ata._first_contention
    source, hc, node = (int(traffic.source[pl[R.PL_ORIGIN, first]]), int(traffic.direction[pl[R.PL_ORIGIN, first]]),
                        int(pl[R.PL_CONTENDED_NODE, first]))
    between = along(first, 1)
    ahead = next(k for k in own if (traffic.source[pl[R.PL_ORIGIN, k]], traffic.direction[pl[R.PL_ORIGIN, k]])
                 == (between, hc))  # the packet node `between` itself sent on the same cycle

    def visit(packet):
        columns = [c for c in hops.of_packet(int(pl[R.PL_UID, packet])) if hops[R.HR_NODE][c] == node]
        assert len(columns) == 1
        return columns[0]
    waiting, held = visit(first), visit(ahead)
    assert hops[R.HR_IN_PORT][waiting] == hops[R.HR_IN_PORT][held]  # the same receiver of `node`
    assert hops[R.HR_FIRST_IN][held] < hops[R.HR_FIRST_IN][waiting] <= tick < hops[R.HR_LAST_OUT][held]
    text = " ".join((REPO / "EXPERIMENTS.md").read_text().split())
    assert (f"Node {source}'s packet is then at node {node} along HC {hc}, two hops out. Its header is in while "
            f"node {node}'s receiver is still on node {between}'s own packet.") in text


def test_a_packet_longer_than_mu_fifo_lengths_makes_senders_eta_hops_apart_meet():
    """SQ_4, eta = mu = 2, M = 54 bytes: rM + the 8-byte idle gap is 9 + 8/6 cycles, more than mu d = 10, so a
    sender's transmitter is still busy when the packet from eta hops back reaches it. Table II's 2(7 + 9 + 14 x 5) =
    172 does not hold: the run takes 297.5 cycles, with refused transmitters (MODEL.md, Symbols)."""
    assert R * 54 + Fraction(8, 6) > 2 * D
    run = ihc(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}), 2, 2, length=54)
    assert run.formula_cycles == table_two(16, 2, 54) == 172
    assert run.completion_cycles == Fraction(595, 2)
    assert not run.contention_free and "was refused a transmitter" in run.first_contention


@pytest.mark.parametrize("m, setup, ihc_cycles, frs_cycles", [
    (4, 5, 178, 175),  # S = 11 >= mu^2 d / 2 = 10, the paper's condition, and FRS is faster
    (4, 7, 182, 185),  # S = 13: (m - 1)S > 2N + 4 = 36
    (8, 5, 2578, 2139),
    (8, 68, 2704, 2706),  # S = 74: 7S > 2N + 4 = 516
])
def test_ihc_beats_frs_only_when_m_minus_one_s_exceeds_2n_plus_4(m, setup, ihc_cycles, frs_cycles):
    """With eta = mu = 2, rM = 8 and d = 5: IHC = 2(S + 8 + 5(N-2)), FRS = (m+1)S + 8(N-1), so
    FRS - IHC = (m-1)S - 2N - 4: the 2 cycles by which rM falls short of 2d, on each of about N packets."""
    config = defaults().with_values(topology={"kind": "hypercube", "dimension": m}, timing__bmu_setup_cycles=setup)
    n, S = 2 ** m, 6 + setup
    assert 2 * (S + 8 + 5 * (n - 2)) == ihc_cycles and (m + 1) * S + 8 * (n - 1) == frs_cycles
    one, other = ihc(config, 2, 2), frs_ata(config, 2)
    assert (one.S, one.completion_cycles, other.completion_cycles) == (S, ihc_cycles, frs_cycles)
    assert one.contention_free and other.contention_free
    assert (other.completion_cycles - one.completion_cycles > 0) == ((m - 1) * S > 2 * n + 4)


@pytest.mark.parametrize("run_other, spec, eta_below, bound, eta_above, other_cycles", [
    # Q_4: log2 N - 1 = 3; VRS-ATA: 16 broadcasts of 3 packets (0 > 1 > 5 > 4), 16 x 45
    (vrs_ata, {"kind": "hypercube", "dimension": 4}, 2, 3, 16, 720),
    # SQ_5: 2 sqrt(N) - 3 = 7; VSQ-ATA: 25 broadcasts of 3 packets and 3 cut-throughs, 25 x 60
    (vsq_ata, {"kind": "torus", "dims": [5, 5]}, 5, 7, 25, 1500),
    # E-6 (N = 91): 2 sqrt((N-1)/3) - 2 = 8.95; KS-ATA: 91 broadcasts of 3 packets and 2n - 5 = 7 cut-throughs
    (ks_ata, {"kind": "hex", "size": 6}, 7, 2 * 30 ** 0.5 - 2, None, 7280),
], ids=["hypercube", "torus", "hex"])
def test_eta_within_the_papers_bound_makes_ihc_faster_than_its_networks_cut_through_algorithm(
        run_other, spec, eta_below, bound, eta_above, other_cycles):
    """Section VI-A: IHC beats the other cut-through algorithms if eta <= min{log2 N - 1, 2 sqrt((N-1)/3) - 2,
    2 sqrt N - 3}, one term per network. Below the bound IHC is faster; far above it (eta = N) slower. The
    bound is sufficient, not necessary: on Q_4 eta = 8 > 3 still beats VRS-ATA (680 < 720)."""
    config = defaults().with_values(topology=spec)
    other = run_other(config, 2)
    assert other.completion_cycles == other_cycles and eta_below <= bound
    stage = S + R * 48 + (other.nodes - 2) * D  # 15 + 5(N - 2)
    below = ihc(config, eta_below, 2)
    assert below.completion_cycles == eta_below * stage < other_cycles and below.contention_free
    if eta_above is not None:
        above = ihc(config, eta_above, 2)
        assert eta_above > bound and above.completion_cycles == eta_above * stage > other_cycles
    if spec["kind"] == "hypercube":
        assert ihc(config, 8, 2).completion_cycles == 8 * stage == 680 < other_cycles


def test_ihc_on_e3_is_above_the_bound_and_slower_than_ks_ata():
    """E-3: the bound is 2 sqrt(6) - 2 = 2.9, and N = 19 is prime: only eta = 19 runs contention-free."""
    config = defaults().with_values(topology={"kind": "hex", "size": 3})
    assert ihc(config, 19, 2).completion_cycles == 19 * (15 + 17 * 5) == 1900
    assert ks_ata(config, 2).completion_cycles == 19 * (3 * 15 + 1 * 5) == 950


@pytest.mark.parametrize("algorithm, topology, reason", [
    ("vsq", "{kind: torus, dims: [6, 6]}", ("VSQ-ATA runs on square 2-D tori of odd side: on SQ_6, the paths to "
                                            "(1, 3) of trees 0 and 3 share [(1, 4)]")),
    ("ihc", "{kind: hypercube, dimension: 3}", ("Q3 has none: each node has 3 links, an odd number, and a cycle uses "
                                                "2 at each node")),
    ("ihc", "{kind: hypercube, dimension: 5}", "Q5 has none: each node has 5 links, an odd number"),
], ids=["vsq-even-side", "ihc-q3", "ihc-q5"])
def test_refusals_name_their_reason_in_one_line(tmp_path, capsys, algorithm, topology, reason):
    from harts.cli import main

    config = tmp_path / "net.yaml"
    config.write_text(f"topology: {topology}\n")
    assert main(["ata", "--algorithm", algorithm, "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and reason in err


def test_default_eta_is_the_smallest_divisor_of_n_from_mu():
    assert default_eta(16, 2) == 2 and default_eta(36, 5) == 6 and default_eta(19, 2) == 19


def test_harts_ata_prints_the_interface_fields(tmp_path):
    config = tmp_path / "torus.yaml"
    config.write_text("topology: {kind: torus, dims: [4, 4]}\n")
    out = subprocess.run([sys.executable, "-m", "harts.cli", "ata", "--config", str(config), "--json", "--plot",
                          str(tmp_path / "arrivals.png")], cwd=REPO, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["completion_cycles"] == data["formula_cycles"] == 170
    assert data["contention_free"] and data["copies_per_node_min"] == data["copies_per_node_max"] == 4
    assert (tmp_path / "arrivals.png").read_bytes()[:4] == b"\x89PNG"


def test_the_arrivals_are_every_copy_and_the_last_is_the_completion():
    run = ihc(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}), 2, 2)
    assert len(run.arrivals) == 16 * 15 * 4 and run.arrivals.max() == run.completion_cycles


@pytest.mark.parametrize("n", [3, 5, 7])
def test_ks_ata_takes_n_six_bcasts_of_three_restarts_and_2n_minus_5_cut_throughs(n):
    """Section V-B: 3 store-and-forward operations and 2m - 5 cut-throughs per broadcast, N in turn."""
    run = ks_ata(defaults().with_values(topology={"kind": "hex", "size": n}), 2)
    nodes = 3 * n * (n - 1) + 1
    assert run.completion_cycles == nodes * (3 * (S + R * 48) + (2 * n - 5) * D)
    assert run.contention_free and run.copies_per_node_min == run.copies_per_node_max == 6
    # Table II prints a lower bound of 2m - 5, 2 sqrt((N-1)/3) - 5
    assert run.printed_formula_cycles < float(run.formula_cycles)


# Paper 001's Table I: RS from node 0 on Q_4, step by step (column 8, back to the source, left out)
TABLE_I = {
    1: "0>1 0>2 0>4 0>8",
    2: "1>3 2>6 4>12 8>9",
    3: "3>7 6>14 12>13 9>11 1>5 2>10 4>5 8>10",
    4: "7>15 14>15 13>15 11>15 5>13 10>11 5>7 10>14 3>11 6>7 12>14 9>13 1>9 2>3 4>6 8>12",
    5: "15>14 15>13 15>11 15>7 13>12 11>9 7>3 14>6 11>10 7>5 14>10 13>5 9>8 3>1 6>2 12>4 "
       "7>6 14>12 13>9 11>3 5>4 10>8 5>1 10>2 3>2 6>4 12>8 9>1",
}


def test_the_rs_model_sends_exactly_table_one():
    paper = {(step, int(a), int(b)) for step, row in TABLE_I.items() for a, b in (x.split(">") for x in row.split())}
    assert {(h.step, h.sender, h.receiver) for h in rs_hops(4)} == paper


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_rs_gives_every_node_m_copies_over_internally_node_disjoint_paths(m):
    parent = {(h.subtree, h.receiver): h.sender for h in rs_hops(m)}
    for node in range(1, 2 ** m):
        inner = []
        for subtree in range(m):
            path, at = [], parent[subtree, node]
            while at != 0:
                path.append(at)
                at = parent[subtree, at]
            inner += path
        assert len(inner) == len(set(inner)), node


def test_vrs_on_the_engine_uses_table_one_links_and_takes_the_models_best_case():
    import numpy as np

    from harts.controller import records as st
    from harts.machine.simulation import Simulation
    from harts.machine.traffic import initiations

    config = defaults().with_values(topology={"kind": "hypercube", "dimension": 4}, microcode="vrs",
                                    np__program="vrs")
    result = Simulation(config).run(initiations(np.array([0]), np.array([0]), 0, np.array([48])))
    dl = result.deliveries
    # each copy came over one link: from the neighbour across the bit of its receiver
    links = {(int(node) ^ (1 << int(port)), int(node)) for node, port in zip(dl[st.DL_NODE], dl[st.DL_PORT])}
    assert links == {(h.sender, h.receiver) for h in rs_hops(4)} and dl.shape[1] == 60
    # the slowest copy: 3 packets, no cut-through (0 > 1 > 5 > 4), not the paper's 3 and 2 cut-throughs
    assert max((h.transmissions, h.cut_throughs) for h in rs_hops(4)) == (3, 0)
    assert Fraction(int(dl[st.DL_TICK].max()), 6) == 3 * (S + R * 48)
    assert result.summary()["contention_free"]


def test_the_slowest_vrs_copy_carries_floor_m_over_2_plus_1_packets():
    """EXPERIMENTS.md (VRS-ATA's formula): m = 3 to 8, with S + rM = 15 and d = 5; from Q_5 on, fewer than
    the gamma - 1 = m - 1 packets of sections V-A and VI-A."""
    for m in range(3, 9):
        slowest = max(rs_hops(m), key=lambda h: (h.transmissions * 15 + h.cut_throughs * 5, h.transmissions))
        assert slowest.transmissions == m // 2 + 1, m
        assert (slowest.transmissions < m - 1) == (m >= 5), m


@pytest.mark.parametrize("m", [3, 4, 6])
def test_vrs_ata_is_n_vrs_broadcasts_and_below_the_printed_formula(m):
    run = vrs_ata(defaults().with_values(topology={"kind": "hypercube", "dimension": m}), 2)
    one = max(h.transmissions * (S + R * 48) + h.cut_throughs * D for h in rs_hops(m))
    assert run.completion_cycles == 2 ** m * one and run.contention_free
    assert run.copies_per_node_min == run.copies_per_node_max == m
    assert run.printed_formula_cycles == 2 ** m * ((m - 1) * (S + R * 48) + 2 * D) > run.completion_cycles


@pytest.mark.parametrize("m", [2, 4, 8])
def test_frs_takes_m_plus_1_startups_and_n_minus_1_packet_times(m):
    """Table II: (log2 N + 1) tau_S + (N - 1) mu alpha, with tau_S = S and mu alpha = rM."""
    run = frs_ata(defaults().with_values(topology={"kind": "hypercube", "dimension": m}), 2)
    assert run.completion_cycles == (m + 1) * S + (2 ** m - 1) * R * 48 and run.contention_free
    assert run.copies_per_node_min == run.copies_per_node_max == m  # m (N - 1) packets' bytes per node


def test_reproduce_paper_001_writes_tables_two_and_three(tmp_path):
    out = subprocess.run([sys.executable, "-m", "harts.cli", "reproduce", "--paper", "001", "--results",
                          str(tmp_path)], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "| IHC | Q_8 |" in out
    import csv

    rows = list(csv.DictReader((tmp_path / "paper001" / "tables.csv").open()))
    plain = [r for r in rows if not r["claim"]]
    # two tables: a header of two lines each and a blank line between them
    assert (tmp_path / "paper001" / "tables.md").read_text().count("\n") == len(rows) + 5
    assert {r["algorithm"] for r in plain} == {"ihc", "ks", "vsq", "vrs", "frs"}
    for algorithm in ("ihc", "ks", "vsq", "vrs", "frs"):  # two sizes or more each
        assert len({r["network"] for r in plain if r["algorithm"] == algorithm}) >= 2
    assert all(r["engine_cycles"] == r["formula_cycles"] and r["contention_free"] == "True" for r in plain)
    # every claim row equals its formula, or names its measured cause (the first wait, or the arrivals)
    for r in rows:
        if r["engine_cycles"] != r["formula_cycles"]:
            assert ("first wait: at node" if r["contention_free"] == "False" else "arrive") in r["measured"], r
    # the overlapped rows: eta(S + rM + (N-2)d) - (eta-1)(mu-1)d, to the cycle
    overlapped = [r for r in rows if r["overlapped"] == "True" and int(r["early"]) == int(r["mu"]) - 1]
    assert {(r["network"], r["eta"], r["mu"]) for r in overlapped} == {("SQ_6", "3", "3"), ("Q_4", "4", "3"),
                                                                        ("Q_8", "4", "3")}
    for r in overlapped:
        eta, mu, n = int(r["eta"]), int(r["mu"]), int(r["nodes"])
        stage = 7 + int(r["length_bytes"]) / 6 + (n - 2) * 5
        assert float(r["engine_cycles"]) == eta * stage - (eta - 1) * (mu - 1) * 5 and r["contention_free"] == "True"
    # stages started k d early: contention-free at k = eta, saving (eta-1)k d; not at k = eta + 1
    early = [r for r in rows if r["overlapped"] == "True" and int(r["early"]) != int(r["mu"]) - 1]
    assert {(r["network"], r["eta"], r["early"]) for r in early} == {
        ("Q_4", "4", "4"), ("Q_4", "4", "5"), ("SQ_6", "6", "6"), ("SQ_6", "6", "7"), ("SQ_6", "3", "3"),
        ("SQ_6", "3", "4")}
    for r in early:
        eta, k, n = int(r["eta"]), int(r["early"]), int(r["nodes"])
        stage = 7 + int(r["length_bytes"]) / 6 + (n - 2) * 5
        assert float(r["formula_cycles"]) == eta * stage - (eta - 1) * k * 5
        assert (r["contention_free"] == "True") == (k == eta), r
    # Table III's cell on an odd N says why it has no value
    assert {r["table_3_cycles"] for r in plain if r["network"] in ("E-3", "E-6") and r["algorithm"] == "ihc"} == {
        "n/a: N = 19 is odd, so no eta = 2", "n/a: N = 91 is odd, so no eta = 2"}
    worst = list(csv.DictReader((tmp_path / "paper001" / "worst_case.csv").open()))
    assert {r["algorithm"] for r in worst} == {"ihc", "ks", "vsq", "vrs", "frs"}
    assert all(float(r["engine_cycles"]) == float(r["longest_path_cycles"]) and r["contention_free"] == "True"
               for r in worst)
    assert (tmp_path / "paper001" / "worst_case.md").read_text().startswith("Table IV with tau_S = S + 1 = 8 cycles")
    # the kept tables, which EXPERIMENTS.md shows (tests/test_splice.py), are this run's
    for name in ("tables.md", "worst_case.md", "vrs_formula.md", "fault_trials.md", "load.md", "fifo_peaks.md"):
        kept = REPO / "bench" / "results" / "reproduce" / "paper001" / name
        assert kept.read_text() == (tmp_path / "paper001" / name).read_text(), name
    load = list(csv.DictReader((tmp_path / "paper001" / "load.csv").open()))
    assert (tmp_path / "paper001" / "load.png").read_bytes()[:4] == b"\x89PNG"
    for row in load:  # every copy arrives; never faster than the dedicated best case, which rho = 0 is
        assert int(row["copies_per_node_min"]) >= 4
        assert float(row["cycles"]) >= float(row["best_case_cycles"])
        if float(row["background_load"]) == 0:
            assert float(row["cycles"]) == float(row["best_case_cycles"])
    for network, algorithm in {(r["network"], r["algorithm"]) for r in load}:
        mine = [r for r in load if (r["network"], r["algorithm"]) == (network, algorithm)]
        at = {rho: [float(r["cycles"]) for r in mine if float(r["background_load"]) == rho] for rho in (0.0, 0.5)}
        assert len(at[0.0]) == 1 and len(set(at[0.5])) > 1, (network, algorithm)  # the seeds differ under load
        assert min(at[0.5]) > at[0.0][0], (network, algorithm)


@pytest.mark.parametrize("spec, eta", [({"kind": "torus", "dims": [4, 4]}, 2), ({"kind": "hex", "size": 3}, 19)],
                         ids=["torus", "hex"])
@pytest.mark.parametrize("queueing", [0, 10])
def test_ihc_worst_case_is_table_four(spec, eta, queueing):
    """eta (N - 1)(tau_S + mu alpha + D): every hop stored and forwarded, each waiting D more, and one cycle
    more than S + rM + D per hop: the receiver's `or` that marks the copy for the NP (MODEL.md)."""
    run = ihc(defaults().with_values(topology=spec), eta, 2, queueing=queueing)
    assert run.completion_cycles == eta * (run.nodes - 1) * (S + R * 48 + queueing + 1)
    assert run.contention_free and run.copies_per_node_min == run.copies_per_node_max == run.gamma


@pytest.mark.parametrize("run_ata, spec, stored_hops", [
    (ks_ata, {"kind": "hex", "size": 3}, 4), (ks_ata, {"kind": "hex", "size": 5}, 8),  # 2n - 2
    (vsq_ata, {"kind": "torus", "dims": [5, 5]}, 6), (vsq_ata, {"kind": "torus", "dims": [7, 7]}, 9),  # 3(m-1)/2
    (vrs_ata, {"kind": "hypercube", "dimension": 4}, 5), (vrs_ata, {"kind": "hypercube", "dimension": 6}, 7),
], ids=["ks-E3", "ks-E5", "vsq-5", "vsq-7", "vrs-Q4", "vrs-Q6"])
@pytest.mark.parametrize("queueing", [0, 20])
def test_one_at_a_time_worst_case_is_n_longest_paths_of_stored_hops(run_ata, spec, stored_hops, queueing):
    """Table IV's N x (hops on the longest path) x (tau_S + mu alpha + D), with cut-through switched off in
    the microprogram, each stored hop one cycle more for the mark, as IHC's."""
    run = run_ata(defaults().with_values(topology=spec), 2, queueing=queueing)
    assert run.completion_cycles == run.nodes * stored_hops * (S + R * 48 + queueing + 1)
    assert run.contention_free and run.copies_per_node_min == run.copies_per_node_max == run.gamma


def test_one_more_micro_instruction_on_the_stored_path_costs_a_cycle_on_each_hop_of_the_second_stage(
        tmp_path, monkeypatch):
    """EXPERIMENTS.md (Worst case): a `wait` of 1 cycle after the receiver's mark makes IHC on SQ_4 take 495
    cycles instead of 480, one more on each of the 15 hops of its second stage."""
    import shutil

    import harts.machine.config as config_module

    for path in config_module.MICROCODE_DIR.glob("*.yaml"):
        shutil.copy(path, tmp_path)
    program = tmp_path / "ihc_store_and_forward.yaml"
    mark = "  - {op: or, field: flags, value: 1}\n"
    assert program.read_text().count(mark) == 1
    program.write_text(program.read_text().replace(mark, mark + "  - {op: wait, cycles: 1}\n"))
    spec = {"kind": "torus", "dims": [4, 4]}
    assert ihc(defaults().with_values(topology=spec), 2, 2, queueing=0).completion_cycles == 480
    monkeypatch.setattr(config_module, "MICROCODE_DIR", tmp_path)
    assert ihc(defaults().with_values(topology=spec), 2, 2, queueing=0).completion_cycles == 495 == 480 + 15


def test_frs_worst_case_adds_d_to_each_of_its_m_plus_1_startups():
    run = frs_ata(defaults().with_values(topology={"kind": "hypercube", "dimension": 4}), 2, queueing=20)
    assert run.completion_cycles == 5 * (S + 20) + 15 * R * 48


# Faults: IHC's copies follow the directed Hamiltonian cycles (MODEL.md, "Paper 001")
SMALLEST = [({"kind": "hex", "size": 3}, 19, [1, 7]), ({"kind": "torus", "dims": [4, 4]}, 2, [1, 3]),
            ({"kind": "hypercube", "dimension": 4}, 2, [1, 2])]


def model_copies(spec, crashed):
    """Copies of u's message at v: the directed cycles whose path from u to v avoids every crashed node."""
    from harts.network import build_topology
    from harts.network.hamiltonian import directed_cycles
    from harts.reference.ihc import copy_path

    topology = build_topology(spec)
    cycles = directed_cycles(topology)
    n = topology.n_nodes
    return {(u, v): sum(not set(copy_path(c, u, v)) & set(crashed) for c in cycles)
            for u in range(n) for v in range(n) if u != v and u not in crashed and v not in crashed}


@pytest.mark.parametrize("spec, eta, crashed", SMALLEST, ids=["hex", "torus", "hypercube"])
def test_crashed_nodes_stop_exactly_the_copies_whose_cycle_path_they_lie_on(spec, eta, crashed):
    run = ihc(defaults().with_values(topology=spec, faults__crashed=crashed), eta, 2)
    expected = model_copies(spec, crashed)
    assert all(run.copies[v, u] == k for (u, v), k in expected.items())
    # two crashes cut some pairs off entirely (EXPERIMENTS.md: 16 of 272 on H_3, 10 of 182 on SQ_4 and Q_4)
    assert (sum(k == 0 for k in expected.values()), len(expected)) == ((16, 272) if run.gamma == 6 else (10, 182))


def model_copies_avoiding_links(spec, dead):
    """Copies of u's message at v: the directed cycles whose path from u to v crosses no dead directed link."""
    from harts.network import build_topology
    from harts.network.hamiltonian import directed_cycles
    from harts.reference.ihc import copy_links

    topology = build_topology(spec)
    cycles = directed_cycles(topology)
    n = topology.n_nodes
    return {(u, v): sum(not set(copy_links(c, u, v)) & dead for c in cycles)
            for u in range(n) for v in range(n) if u != v}


def dead_link_config(spec, links):
    """The network with the given undirected links (node, port) dead both ways, and those directed links."""
    from harts.network import build_topology

    topology = build_topology(spec)
    dead = set()
    for node, port in links:
        other = int(topology.neighbours[node, port])
        dead |= {(node, other), (other, node)}
    return defaults().with_values(topology=spec, faults__dead_links=[
        {"node": node, "direction": port, "both": True} for node, port in links]), dead


@pytest.mark.parametrize("spec, eta, _", SMALLEST, ids=["hex", "torus", "hypercube"])
def test_any_one_crashed_node_takes_exactly_half_the_copies_of_every_other_pair(spec, eta, _):
    """Exhaustive over the crashed node: of each undirected cycle's two arcs from u to v, which together
    hold every other node, it lies on exactly one."""
    from harts.network import node_count

    n = node_count(spec)
    for crashed in range(n):
        run = ihc(defaults().with_values(topology=spec, faults__crashed=[crashed]), eta, 2)
        alive = [x for x in range(n) if x != crashed]
        assert {int(run.copies[v, u]) for u in alive for v in alive if u != v} == {run.gamma // 2}, crashed


@pytest.mark.parametrize("spec, eta, _", SMALLEST, ids=["hex", "torus", "hypercube"])
def test_any_one_byzantine_node_alters_exactly_half_the_copies_of_every_other_pair(spec, eta, _):
    """So majority voting never decides: IHC tolerates no Byzantine node, not floor((gamma-1)/2)."""
    from harts.experiments.lee_shin.faults import decided
    from harts.network import node_count

    n = node_count(spec)
    for bad in range(n):
        run = ihc(defaults().with_values(topology=spec, faults__byzantine=[{"node": bad, "behaviour": "alter"}]),
                  eta, 2)
        good = [x for x in range(n) if x != bad]
        assert {int(run.copies[v, u]) for u in good for v in good if u != v} == {run.gamma}
        assert {int(run.true_copies[v, u]) for u in good for v in good if u != v} == {run.gamma // 2}
        assert not decided(run, [bad], "byzantine").any()


@pytest.mark.parametrize("spec, eta, _", SMALLEST, ids=["hex", "torus", "hypercube"])
def test_a_dead_link_stops_exactly_the_copies_whose_cycle_path_crosses_it(spec, eta, _):
    """Exhaustive over the links. With the copies' link-disjointness (tests/test_hamiltonian.py), gamma - 1
    dead links leave every pair a copy."""
    from harts.network import build_topology

    for node, port, other in build_topology(spec).links().tolist():
        if node > other:
            continue  # each undirected link once
        config, dead = dead_link_config(spec, [(node, port)])
        run = ihc(config, eta, 2)
        expected = model_copies_avoiding_links(spec, dead)
        assert all(run.copies[v, u] == k for (u, v), k in expected.items()), (node, port)
        assert min(expected.values()) == run.gamma - 1


@pytest.mark.exhaustive
@pytest.mark.parametrize("spec, eta, _", SMALLEST, ids=["hex", "torus", "hypercube"])
def test_all_two_crash_sets_stop_the_copies_the_model_says(spec, eta, _):
    """Exhaustive over the pairs of crashed nodes (171 on H_3, 120 on SQ_4 and Q_4), on the engine."""
    from itertools import combinations

    from harts.network import node_count

    cut = 0
    for crashed in combinations(range(node_count(spec)), 2):
        run = ihc(defaults().with_values(topology=spec, faults__crashed=list(crashed)), eta, 2)
        expected = model_copies(spec, list(crashed))
        assert all(run.copies[v, u] == k for (u, v), k in expected.items()), crashed
        cut += sum(k == 0 for k in expected.values())
    assert cut > 0


@pytest.mark.exhaustive
def test_all_two_dead_link_sets_on_sq4_stop_the_copies_the_model_says():
    """Exhaustive over the 496 pairs of SQ_4's 32 links, on the engine: no pair loses more than 2 copies."""
    from itertools import combinations

    from harts.network import build_topology

    spec = {"kind": "torus", "dims": [4, 4]}
    topology = build_topology(spec)
    links = [(v, p) for v, p, u in topology.links().tolist() if v < u]
    assert len(links) == 32
    for pair in combinations(links, 2):
        config, dead = dead_link_config(spec, list(pair))
        run = ihc(config, 2, 2)
        expected = model_copies_avoiding_links(spec, dead)
        assert all(run.copies[v, u] == k for (u, v), k in expected.items()), pair
        assert min(expected.values()) >= 2


@pytest.mark.parametrize("algorithm, spec, gamma", [
    ("ihc", {"kind": "hex", "size": 3}, 6), ("ihc", {"kind": "torus", "dims": [4, 4]}, 4),
    ("ihc", {"kind": "hypercube", "dimension": 4}, 4), ("ks", {"kind": "hex", "size": 3}, 6),
    ("vsq", {"kind": "torus", "dims": [5, 5]}, 4), ("vrs", {"kind": "hypercube", "dimension": 4}, 4),
], ids=["ihc-hex", "ihc-torus", "ihc-hypercube", "ks", "vsq", "vrs"])
def test_trials_gamma_minus_one_dead_links_never_cut_a_pair(algorithm, spec, gamma):
    from harts.experiments.lee_shin.faults import ata_tolerance

    rows = ata_tolerance(defaults().with_values(topology=spec), algorithm, "dead_links", gamma - 1, trials=10)
    assert [r.all_correct_fraction for r in rows] == [1.0] * gamma


@pytest.mark.parametrize("algorithm, spec, gamma", [
    ("ks", {"kind": "hex", "size": 3}, 6), ("vsq", {"kind": "torus", "dims": [5, 5]}, 4),
    ("vrs", {"kind": "hypercube", "dimension": 4}, 4)], ids=["ks", "vsq", "vrs"])
def test_trials_the_node_disjoint_algorithms_tolerate_gamma_minus_one_crashes_and_their_byzantine_share(
        algorithm, spec, gamma):
    from harts.experiments.lee_shin.faults import ata_tolerance

    config = defaults().with_values(topology=spec)
    crashes = ata_tolerance(config, algorithm, "crash", gamma - 1, trials=10)
    byzantine = ata_tolerance(config, algorithm, "byzantine", (gamma - 1) // 2, trials=10)
    assert all(r.all_correct_fraction == 1.0 for r in crashes + byzantine)


def test_trials_ihc_loses_pairs_from_two_crashes_and_every_pair_from_one_byzantine_node():
    from harts.experiments.lee_shin.faults import ata_tolerance

    config = defaults().with_values(topology={"kind": "torus", "dims": [4, 4]})
    crashes = ata_tolerance(config, "ihc", "crash", 2, trials=10)
    assert [r.correct_fraction for r in crashes[:2]] == [1.0, 1.0] and crashes[2].correct_fraction < 1.0
    assert ata_tolerance(config, "ihc", "byzantine", 1, trials=5)[1].correct_fraction == 0.0


def test_harts_ata_fault_trials_print_the_tolerance_table(tmp_path):
    out = subprocess.run([sys.executable, "-m", "harts.cli", "ata", "--algorithm", "ks", "--crash", "2", "--trials",
                          "3", "--plot", str(tmp_path / "t.png")], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    assert "KS on E-5, crash, rule first-valid, 3 random fault sets per count" in out
    assert out.count("\nks ") == 3 and (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"


# VSQ: the pattern is designed here (harts.reference.vsq), since the paper's Fig. 9 is missing
@pytest.mark.parametrize("m", [3, 5, 7, 9, 11])
def test_the_vsq_pattern_gives_four_node_disjoint_non_interfering_trees_on_odd_tori(m):
    from harts.reference.vsq import check

    assert check(m) == []


def test_the_vsq_pattern_fails_on_even_tori_which_vsq_refuses():
    from harts.reference.vsq import check

    assert all(check(m) for m in (4, 6, 8))
    with pytest.raises(Exception, match="square 2-D tori of odd side"):
        vsq_ata(defaults().with_values(topology={"kind": "torus", "dims": [6, 6]}), 2)


@pytest.mark.parametrize("m", [4, 6, 8])
@pytest.mark.parametrize("split", ["lower", "upper"])
@pytest.mark.parametrize("middle", ["N", "S"])
def test_neither_halving_nor_either_way_round_the_middle_row_saves_the_vsq_pattern_on_even_tori(
        monkeypatch, m, split, middle):
    """The pattern's variants on even m: the east tree's spine branches in columns 1..h with h = m/2 - 1 (the shipped
    one) or m/2, and the antipodal row m/2 is reached going north or south. Each fails `check`. On odd m every variant
    is the shipped pattern, and passes."""
    from harts.reference import vsq

    def east_legs(m, a, b):
        h = (m - 1) // 2 if m % 2 or split == "lower" else m // 2
        a, b = a % m, b % m
        if b == 0:
            return [("E", a)]
        north = b < m - b or (b == m - b and middle == "N")
        vertical = ("N", b) if north else ("S", m - b)
        if a == 0:
            return [("E", 1), vertical, ("W", 1)]
        return [("E", a), vertical] if a <= h else [("E", h), vertical, ("E", a - h)]
    monkeypatch.setattr(vsq, "east_legs", east_legs)
    assert vsq.check(m)
    assert vsq.check(5) == []


def test_one_vsq_broadcast_on_the_engine_uses_the_models_links_and_latency():
    import numpy as np

    from harts.controller import records as st
    from harts.machine.simulation import Simulation
    from harts.machine.traffic import initiations
    from harts.reference.vsq import legs, slowest, walk

    m = 5
    config = defaults().with_values(topology={"kind": "torus", "dims": [m, m]}, np__program="vsq")
    result = Simulation(config).run(initiations(np.array([0]), np.array([0]), 0, np.array([48])))
    dl = result.deliveries
    step = {0: (1, 0), 1: (0, 1), 2: (-1, 0), 3: (0, -1)}  # torus ports: +x, +y, -x, -y
    engine = set()
    for node, port in zip(dl[st.DL_NODE].tolist(), dl[st.DL_DIR].tolist()):
        x, y = node % m, node // m
        engine.add((((x - step[port][0]) % m, (y - step[port][1]) % m), (x, y)))
    model = set()
    for tree in range(4):
        for a in range(m):
            for b in range(m):
                if (a, b) != (0, 0):
                    at = (0, 0)
                    for node, _ in walk(m, legs(m, tree, a, b)):
                        model.add((at, node))
                        at = node
    assert engine == model and dl.shape[1] == 4 * (m * m - 1)
    assert Fraction(int(dl[st.DL_TICK].max()), 6) == slowest(m, S, R, D, 48)
    assert result.summary()["contention_free"]


@pytest.mark.parametrize("m", [5, 7])
def test_vsq_ata_is_n_vsq_broadcasts_of_three_packets(m):
    run = vsq_ata(defaults().with_values(topology={"kind": "torus", "dims": [m, m]}), 2)
    # 3 packets and 3(m - 3)/2 cut-throughs on the slowest path (0 > h east, h north, h east)
    assert run.completion_cycles == m * m * (3 * (S + R * 48) + 3 * (m - 3) // 2 * D)
    assert run.contention_free and run.copies_per_node_min == run.copies_per_node_max == 4
    assert run.printed_formula_cycles == m * m * (3 * (S + R * 48) + (2 * m - 6) * D)


def test_ihc_under_load_needs_more_than_64_byte_fifos():
    """Why the load runs use 256-byte FIFOs (EXPERIMENTS.md): with 64 one overflows at rho = 0.1."""
    from harts.errors import SimulationError
    from harts.experiments.lee_shin import load

    spec = load.NETWORKS["E-6"][0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(load, "FIFO_BYTES", 64)
        with pytest.raises(SimulationError, match="receiver FIFO overflow") as overflow:
            load.run_at("ihc", 7, spec, 0.1, seed=1)
    assert "(node 83, link receiver 2," in str(overflow.value) and "Raise timing.receiver_fifo_bytes" in str(
        overflow.value)
    assert load.run_at("ihc", 7, spec, 0.1, seed=1).copies_per_node_min == 6


def test_a_packet_longer_than_mu_fifo_lengths_collides_at_eta_equal_mu():
    run = ihc(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}), 2, 2, length=54)
    assert not run.contention_free and run.completion_cycles == Fraction(595, 2)
    assert table_two(16, 2, 54) == 172
