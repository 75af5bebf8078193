"""`harts sensitivity` on a small subset: its files, and expectations set by the BMU's structure and by the
timing parameters (MODEL.md), not by the sweep."""

import csv
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from harts.experiments.kandlur_shin import sensitivity as sweep
from harts.machine.traffic import PAPER_LENGTH_PROBABILITIES, PAPER_LENGTHS

from .helpers import nothing_cut_off


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    results = tmp_path_factory.mktemp("sensitivity")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sweep, "BMU_STRUCTURES", ((1, "single"), (24, "per_output")))
        patch.setattr(sweep, "BMU_SIZES", (5,))
        patch.setattr(sweep, "SETUP_CYCLES", (1, 200))
        patch.setattr(sweep, "LINK_DELAYS", (0, 20))
        patch.setattr(sweep, "SPREAD_LOADS", (0.05,))
        found = sweep.sensitivity(results, quick=True, progress=False)
    return results, found


def test_writes_csv_and_png_for_both_sweeps(small):
    results, found = small
    for name in ("bmu", "spread"):
        rows = list(csv.DictReader((results / "sensitivity" / f"{name}.csv").open()))
        assert len(rows) == len(found[name]) > 0
        png = results / "sensitivity" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and nothing_cut_off(png)


def test_one_bus_interface_saturates_first_and_is_what_fills(small):
    rows = {(r["bus_interfaces"], r["queues"]): r for r in small[1]["bmu"]}
    one, many = rows[1, "single"], rows[24, "per_output"]
    assert one["saturation_load"] < many["saturation_load"]
    # one interface: it is busy nearly all the time while the links are not; 24 per-output: the links fill
    assert one["saturated_bmu_interface_utilisation"] > 0.95 > one["saturated_link_utilisation"] + 0.3
    assert many["saturated_link_utilisation"] > 0.8 > many["saturated_bmu_interface_utilisation"]
    for row in (one, many):
        assert row["carried_accepted_over_offered"] >= 0.95 > row["saturated_accepted_over_offered"]
        assert row["carried_load"] + sweep.SATURATION_STEP == pytest.approx(row["saturation_load"])


def test_calibrated_timing_follows_the_parameters(small):
    """MODEL.md: S = np_send + bmu_setup + 2 + bus + link_delay + bus + deliver, d = link_delay + 5."""
    for row in small[1]["spread"]:
        assert row["S"] == 7 + (row["bmu_setup_cycles"] - 1) + row["link_delay_cycles"]
        assert row["d"] == 5 + row["link_delay_cycles"] and row["r"] == pytest.approx(1 / 6)


def test_zero_load_increases_are_table_one(small):
    """Table I with the row 4-BCAST omits (2 transmissions, 2(n-2) cut-throughs), n = 7."""
    n = 7
    for row in small[1]["spread"]:
        S, r, d = Fraction(row["S"]).limit_denominator(), Fraction(1, 6), Fraction(row["d"])

        def mean(latency):
            return sum(p * latency(S + r * m) for m, p in zip(PAPER_LENGTHS, PAPER_LENGTH_PROBABILITIES))

        sbcast = mean(lambda one: 2 * one + (n - 3) * d)
        four = mean(lambda one: max(3 * one + (n - 3) * d, 2 * one + 2 * (n - 2) * d))
        five = mean(lambda one: 3 * one + (2 * n - 5) * d)
        assert row["4bcast_zero_load_increase"] == pytest.approx(100 * float(four / sbcast - 1))
        assert row["5bcast_zero_load_increase"] == pytest.approx(100 * float(five / sbcast - 1))
        assert row["6bcast_zero_load_increase"] == pytest.approx(100 * float(five / sbcast - 1))
        assert row["sbcast_latency"] >= float(sbcast)  # load only adds to the best case


def test_sbcast_copies_cut_through_less_under_load():
    """Statement 8's mechanism: load can only take cut-throughs away from the zero-load tree (the
    functional model's), and takes more the higher it is."""
    from harts.experiments.kandlur_shin.cut_through import cut_through_under_load
    from harts.reference.kandlur_shin import broadcast_copies

    tree = broadcast_copies("sbcast", 7)
    cuts = sum(c.cut_throughs for c in tree)
    idle_share = cuts / (cuts + sum(c.transmissions - 1 for c in tree))
    idle_transmissions = sum(c.transmissions for c in tree) / len(tree)
    light, heavy = cut_through_under_load(7, loads=(0.05, 0.5), cycles=30_000)
    assert idle_share >= light["cut_through_share"] > heavy["cut_through_share"]
    assert idle_transmissions <= light["transmissions_per_copy"] < heavy["transmissions_per_copy"]
    assert light["marked_share"] < heavy["marked_share"]


def test_the_tables_experiments_md_shows_are_rows_of_the_csvs():
    """bmu.md: a row per structure (the default in bold), a column per size; spread.md: a row per timing in order of
    d / (S + rM), the increases rounded to whole percent. Rows made by hand, not by a run."""
    from harts.experiments.kandlur_shin.sensitivity import (
        bmu_markdown,
        bmu_saturated_markdown,
        spread_markdown,
    )

    def bmu(interfaces, queues, size, load, link, interface, busiest=0.8, blocked=0.4, queued=50.4):
        return {"bus_interfaces": interfaces, "queues": queues, "size": size, "saturation_load": load,
                "saturated_link_utilisation": link, "saturated_bmu_interface_utilisation": interface,
                "saturated_link_utilisation_max": busiest, "saturated_bmu_interface_blocked": blocked,
                "saturated_bmu_queue_mean_packets": queued}
    rows = [bmu(1, "single", 5, 0.3, 0.271, 1.0), bmu(1, "single", 7, 0.35, 0.32, 0.996),
            bmu(6, "single", 5, 0.7, 0.69, 0.9962, 0.762, 0.399, 82.19), bmu(6, "single", 7, 0.75, 0.72, 0.99)]
    assert bmu_markdown(rows) == (
        "| BMU structure | E-5 | E-7 |\n|---|---|---|\n"
        "| 1 interface, single queue | 0.3 (0.27; 1.00) | 0.35 (0.32; 1.00) |\n"
        "| **6, single (default)** | **0.7 (0.69; 1.00)** | **0.75 (0.72; 0.99)** |\n")
    assert bmu_saturated_markdown(rows) == (
        "| BMU structure (E-5, E-7) | busiest link busy | bus interfaces busy | of that, blocked | packets queued in a "
        "BMU |\n|---|---|---|---|---|\n"
        "| 1 interface, single queue | 0.80, 0.80 | 1.000, 0.996 | 40%, 40% | 50, 50 |\n"
        "| **6, single (default)** | **0.76, 0.80** | **0.996, 0.990** | **40%, 40%** | **82, 50** |\n")

    def spread(setup, delay, load, ratio, increases, points):
        return {"bmu_setup_cycles": setup, "link_delay_cycles": delay, "load": load, "S": 7.0 + setup, "d": 5.0,
                "d_over_S_plus_rM": ratio, "zero_load_spread_points": 21.3, "spread_points": points,
                **{f"{a}bcast_increase": v for a, v in zip((4, 5, 6), increases)}}
    assert spread_markdown([spread(50, 0, 0.05, 0.058, (36.3, 53.6, 60.2), 23.8),
                            spread(1, 0, 0.05, 0.132, (41.7, 57.4, 65.5), 23.9)]) == (
        "| S | d | d / (S + rM) | zero-load spread (formula, same S, r, d) | measured at 0.05: 4/5/6-BCAST (spread) |\n"
        "|---|---|---|---|---|\n"
        "| 57 | 5 | 0.058 | 21 | 36%, 54%, 60% (24) |\n| 8 | 5 | 0.132 | 21 | 42%, 57%, 66% (24) |\n")


COMMITTED = Path(__file__).resolve().parent.parent / "bench" / "results" / "reproduce" / "sensitivity"


def test_committed_tables_are_made_from_the_committed_csvs(tmp_path):
    """bmu.md, bmu_saturated.md, spread.md and spread_latency.md under bench/results/reproduce/sensitivity are what
    the writers make of the committed bmu.csv and spread.csv (python -m harts.experiments.kandlur_shin rewrites
    them)."""
    (tmp_path / "sensitivity").mkdir()
    for name in ("bmu.csv", "spread.csv"):
        shutil.copyfile(COMMITTED / name, tmp_path / "sensitivity" / name)
    written = sweep.write_tables(tmp_path)
    assert sorted(path.name for path in written) == ["bmu.md", "bmu_saturated.md", "spread.md", "spread_latency.md"]
    for path in written:
        assert path.read_text() == (COMMITTED / path.name).read_text(), path.name


def _committed(name: str) -> list[dict]:
    return list(csv.DictReader((COMMITTED / name).open()))


def test_experiments_md_sentences_match_the_committed_bmu_sweep():
    """What EXPERIMENTS.md says of the BMU tables in words: with one queue the interfaces are nearly always busy at
    saturation and their blocked share grows with their number; with per-output queues they are never blocked, and
    with 24 of them mostly idle, the busiest link below the idle-time cap 185.6 / 193.6 and saturation well above
    0.7; only 1, 2 or 6 interfaces with one queue saturate as early as the default (at most 0.75)."""
    rows = _committed("bmu.csv")
    value = lambda r, key: float(r[key])
    single = [r for r in rows if r["queues"] == "single"]
    assert all(value(r, "saturated_bmu_interface_utilisation") > 0.9 for r in single)
    for size in ("5", "7", "9"):
        blocked = [value(r, "saturated_bmu_interface_blocked")
                   for r in sorted((r for r in single if r["size"] == size), key=lambda r: int(r["bus_interfaces"]))]
        assert blocked == sorted(blocked)
    assert all(value(r, "saturated_bmu_interface_blocked") == 0 for r in rows if r["queues"] == "per_output")
    widest = [r for r in rows if (r["bus_interfaces"], r["queues"]) == ("24", "per_output")]
    assert all(value(r, "saturated_bmu_interface_utilisation") < 0.3 < value(r, "saturated_link_utilisation")
               for r in widest)
    assert all(value(r, "saturated_link_utilisation_max") < 185.6 / 193.6 for r in widest)
    assert all(value(r, "saturation_load") >= 0.85 for r in widest)
    early = {(r["bus_interfaces"], r["queues"]) for r in rows if value(r, "saturation_load") <= 0.75}
    assert early == {("1", "single"), ("2", "single"), ("6", "single")}


def test_experiments_md_sentences_match_the_committed_spread_sweep():
    """Statement 6 in EXPERIMENTS.md: the measured spread stays at 23-29 points at every d / (S + rM); the 95%
    half-widths are 0-12 points; at S = 7 and load 0.05 the measured spread is larger than the formula's; the
    formula's spread grows with the ratio but for the largest, where it falls."""
    rows = _committed("spread.csv")
    spreads = [round(float(r["spread_points"])) for r in rows]
    assert (min(spreads), max(spreads)) == (23, 29)
    halves = [float(r[f"{k}bcast_half_width_95"]) for r in rows for k in (4, 5, 6)]
    assert 0 <= min(halves) < 1 and 11 < max(halves) <= 12
    default = next(r for r in rows if float(r["S"]) == 7 and float(r["load"]) == 0.05)
    assert float(default["spread_points"]) > float(default["zero_load_spread_points"])
    formula = [float(r["zero_load_spread_points"]) for r in sorted(
        (r for r in rows if float(r["load"]) == 0.05), key=lambda r: float(r["d_over_S_plus_rM"]))]
    assert formula[:-1] == sorted(formula[:-1]) and formula[-1] < formula[-2]


def test_the_latency_table_is_rows_of_the_csv():
    """spread_latency.md: per timing, the formula's zero-load row, then a row per load with mean ± half-width and (+
    what load adds). Rows made by hand, not by a run."""
    from harts.experiments.kandlur_shin.sensitivity import spread_latency_markdown

    def row(load, latencies, halves):
        return {"bmu_setup_cycles": 200, "link_delay_cycles": 0, "load": load, "S": 206.0, "d": 5.0,
                "d_over_S_plus_rM": 0.021,
                **{f"{a}_latency": v for a, v in zip(sweep.SPREAD_ALGORITHMS, latencies)},
                **{f"{a}_latency_half_width_95": v for a, v in zip(sweep.SPREAD_ALGORITHMS, halves)},
                **{f"{a}_zero_load_latency": v for a, v in zip(sweep.SPREAD_ALGORITHMS, (494.3, 731.0, 756.4, 756.4))}}
    assert spread_latency_markdown([row(0.3, (1161.7, 1708.0, 1931.3, 2018.4), (10.3, 56.5, 71.1, 55.7)),
                                    row(0.05, (759.4, 1021.6, 1144.0, 1195.0), (26.0, 10.4, 25.3, 44.2))]) == (
        "| S | d | link load | SBCAST | 4-BCAST | 5-BCAST | 6-BCAST |\n|---|---|---|---|---|---|---|\n"
        "| 206 | 5 | 0 (formula) | 494 | 731 | 756 | 756 |\n"
        "| 206 | 5 | 0.05 | 759 ± 26 (+265) | 1022 ± 10 (+291) | 1144 ± 25 (+388) | 1195 ± 44 (+439) |\n"
        "| 206 | 5 | 0.3 | 1162 ± 10 (+667) | 1708 ± 56 (+977) | 1931 ± 71 (+1175) | 2018 ± 56 (+1262) |\n")


def test_experiments_md_load_adds_more_to_broadcasts_with_more_copies():
    """Statement 6 in EXPERIMENTS.md: at every timing and load, load adds more cycles to a broadcast with more copies
    (SBCAST < 4- < 5- < 6-BCAST), and the cycles it quotes at S = 206, load 0.05."""
    rows = _committed("spread.csv")
    added = {(float(r["S"]), float(r["load"])): [float(r[f"{a}_latency"]) - float(r[f"{a}_zero_load_latency"])
                                                 for a in sweep.SPREAD_ALGORITHMS] for r in rows}
    assert len(added) == 12 and all(a < b < c < d for a, b, c, d in added.values())
    sb, four, five, six = (f"{x:.0f}" for x in added[206, 0.05])
    text = " ".join((Path(__file__).resolve().parent.parent / "EXPERIMENTS.md").read_text().split())
    assert (f"At S = 206 and load 0.05 it adds {sb} cycles to SBCAST, {four} to 4-BCAST, {five} to 5-BCAST and {six} "
            "to 6-BCAST.") in text


def test_committed_cut_through_table_is_made_from_its_csv(tmp_path):
    """bench/results/reproduce/cut_through.md is what cut_through.markdown makes of the committed cut_through.csv, whose
    first row is the functional model's zero-load tree."""
    from harts.experiments.kandlur_shin import cut_through

    committed = COMMITTED.parent
    shutil.copyfile(committed / "cut_through.csv", tmp_path / "cut_through.csv")
    [written] = cut_through.write_tables(tmp_path)
    assert written.read_text() == (committed / "cut_through.md").read_text()
    first = next(csv.DictReader((committed / "cut_through.csv").open()))
    assert {k: float(v) for k, v in first.items()} == pytest.approx(cut_through.zero_load(7))
