"""The run numbers that the sentences of EXPERIMENTS.md's "Wormhole switching under load" section quote, read from
the committed result files of `harts load --all-routers --torus-tie positive` (bench/results/reproduce/switching/).
No simulation here: a check fails when a file changes and the sentence does not, or the other way round."""

from fractions import Fraction

import pytest

from harts.experiments.switching import load
from harts.machine.patterns import throughput_bound
from harts.network.build import build_topology

from .helpers import committed_rows, experiments_section, quoted

DEFAULT = (2, 8)  # the default router: 2 VCs x 8-flit buffers


@pytest.fixture(scope="module")
def text() -> str:
    return experiments_section("Wormhole switching under load", prose_only=True)


@pytest.fixture(scope="module")
def runs() -> list[dict]:
    return committed_rows("switching/wormhole_tie_positive_load.csv")


@pytest.fixture(scope="module")
def saturated() -> dict:
    """Saturation as a fraction of the bound, by (network, pattern, VCs, buffer flits)."""
    return {(r["network"], r["pattern"], int(r["virtual_channels"]), int(r["buffer_flits"])): r
            for r in committed_rows("switching/wormhole_tie_positive_saturation.csv")}


def sweep(runs: list[dict], network: str, pattern: str, router=DEFAULT) -> list[dict]:
    """One network's, pattern's and router's runs, by offered load."""
    mine = [r for r in runs if r["network"] == network and r["pattern"] == pattern
            and (int(r["virtual_channels"]), int(r["buffer_flits"])) == router]
    assert len(mine) == len(load.FRACTIONS)
    return sorted(mine, key=lambda r: float(r["offered"]))


def at(rows: list[dict], fraction: float) -> dict:
    (row,) = [r for r in rows if float(r["bound_fraction"]) == fraction]
    return row


def stable(row: dict) -> bool:
    assert row["stable"] in ("True", "False")
    return row["stable"] == "True"


def fraction(saturated: dict, network: str, pattern: str, router=DEFAULT) -> float:
    return round(float(saturated[network, pattern, *router]["saturation_fraction_of_bound"]), 2)


def latency(row: dict) -> str:
    return f"{float(row['latency_mean']):,.0f}"


def carried(rows: list[dict], keep) -> float:
    """The largest bound fraction up to which every run satisfies `keep`."""
    last = 0.0
    for r in rows:
        if not keep(r):
            break
        last = float(r["bound_fraction"])
    return last


def test_the_sweep_is_736_runs_at_the_stated_loads_and_its_saturations_are_the_table(text, runs, saturated):
    """"harts load --all-routers --torus-tie positive ... # 736 runs"; "Poisson arrivals for 2,000 warm-up and
    10,000 measured cycles"; "Offered loads are 0.05, 0.10, ..., 1.00, 1.1, 1.2 and 1.3 times each pattern's
    channel-load bound"; "The saturation throughput is the largest carried load, known to 0.05 of the bound"."""
    quoted(text, "# 736 runs", "8-flit packets", "2,000 warm-up and 10,000 measured cycles",
           "0.05, 0.10, ..., 1.00, 1.1, 1.2 and 1.3 times", "known to 0.05 of the bound")
    assert len(runs) == 736
    assert {r["microcode"] for r in runs} == {"wormhole"}
    assert {r["network"] for r in runs} == {"mesh 8x8", "torus 8x8"}
    assert {r["pattern"] for r in runs} == {"uniform", "transpose", "bit_complement", "hotspot"}
    assert {(int(r["virtual_channels"]), int(r["buffer_flits"])) for r in runs} == {(2, 8), (2, 16), (4, 8), (4, 16)}
    assert sorted({float(r["bound_fraction"]) for r in runs}) == [round(0.05 * k, 2) for k in range(1, 21)] + [
        1.1, 1.2, 1.3]
    assert (load.WARMUP, load.MEASURE, load.PACKET_FLITS) == (2_000, 10_000, 8)
    assert min(int(r["last_cycle"]) for r in runs) >= 2_000 + 10_000 - 1
    # the saturation file is the stable rule applied to these runs
    assert len(saturated) == 32
    for (network, pattern, vcs, buffers), row in saturated.items():
        rows = sweep(runs, network, pattern, (vcs, buffers))
        assert carried(rows, stable) == fraction(saturated, network, pattern, (vcs, buffers))
        assert float(row["saturation"]) == pytest.approx(carried(rows, stable) * float(row["bound"]))


@pytest.mark.parametrize("network, pattern, bound, shown, bottleneck", [
    ("mesh 8x8", "uniform", Fraction(63, 128), "63/128 = 0.492", "(3, 0)"),
    ("mesh 8x8", "transpose", Fraction(1, 8), "1/8", "(0, 1)"),
    ("mesh 8x8", "bit_complement", Fraction(1, 4), "1/4", "(3, 0)"),
    ("mesh 8x8", "hotspot", Fraction(5, 67), "5/67 = 0.0746", "('ejection', 36)"),
    ("torus 8x8", "uniform", Fraction(63, 80), "63/80 = 0.7875", "(0, 0)"),
    ("torus 8x8", "transpose", Fraction(7, 32), "7/32 = 0.219", "(0, 1)"),
    ("torus 8x8", "bit_complement", Fraction(1, 2), "1/2", "(0, 2)"),
    ("torus 8x8", "hotspot", Fraction(5, 67), "5/67 = 0.0746", "('ejection', 36)"),
])
def test_the_bounds_table_is_the_bound_the_runs_were_set_against(text, saturated, network, pattern, bound, shown,
                                                                 bottleneck):
    """The table "The bounds and their bottlenecks": each bound (derived by hand in tests/test_patterns.py) is
    the bound column of the committed runs, for every router."""
    quoted(text, f"| {network} | {load.PATTERN_NAMES.get(pattern, pattern)}", f"| {shown} |")
    for router in load.ROUTERS:
        row = saturated[network, pattern, *router]
        assert float(row["bound"]) == pytest.approx(float(bound), rel=1e-12)
        assert row["bottleneck"] == bottleneck


def test_accepted_throughput_passes_the_bound_of_the_mesh_under_transpose(text, runs):
    """"On the mesh under transpose the bound limits only the 7 of 56 flows that cross its bottleneck link, which
    together deliver at most 1 flit per cycle (1/64 = 0.016 per node). With the default router the accepted
    throughput passed the 0.125 bound: 0.138 at an offered 0.163. The mean latency there was 1,611 cycles,
    against 36 at the lightest load. ... the run says it is unstable.\""""
    bound = throughput_bound(build_topology(load.NETWORKS["mesh 8x8"]), "transpose", 1, torus_tie="positive")
    flows = bound.max_channel_load * bound.sending_nodes / bound.n_nodes  # senders whose route crosses the link
    assert (round(flows, 9), bound.sending_nodes) == (7, 56)
    assert f"{1 / bound.n_nodes:.3f}" == "0.016"
    rows = sweep(runs, "mesh 8x8", "transpose")
    top = max(rows, key=lambda r: float(r["accepted"]))
    assert float(top["accepted"]) > bound.throughput
    assert float(top["bound_flits_per_node_cycle"]) == bound.throughput == 0.125
    assert top is rows[-1] and not stable(top)
    quoted(text, "the 7 of 56 flows", "(1/64 = 0.016 per node)", f"passed the {bound.throughput:.3f} bound",
           f"{float(top['accepted']):.3f} at an offered {float(top['offered']):.3f}.",
           f"latency there was {latency(top)} cycles, against {latency(rows[0])} at the lightest load")


def test_a_latency_rule_gives_the_same_saturations_or_lower(text, runs, saturated):
    """"A latency rule (carried while the mean latency stays within 3 times the lightest load's) gives the same
    saturations or lower, by up to 0.15 of the bound. Torus bit-complement with the default router: 0.50 against
    0.65. The run at 0.65 had a mean latency of 286 cycles and no backlog that grew.\""""
    lower = []
    for network, pattern, vcs, buffers in saturated:
        rows = sweep(runs, network, pattern, (vcs, buffers))
        light = float(rows[0]["latency_mean"])
        by_latency = carried(rows, lambda r: float(r["latency_mean"]) <= 3 * light)
        by_stability = fraction(saturated, network, pattern, (vcs, buffers))
        lower.append(round(by_stability - by_latency, 2))
    assert min(lower) == 0.0
    rows = sweep(runs, "torus 8x8", "bit_complement")
    light = float(rows[0]["latency_mean"])
    by_latency = carried(rows, lambda r: float(r["latency_mean"]) <= 3 * light)
    by_stability = fraction(saturated, "torus 8x8", "bit_complement")
    assert round(by_stability - by_latency, 2) == max(lower)
    last = at(rows, by_stability)
    assert stable(last)
    quoted(text, "within 3 times the lightest load's", f"by up to {max(lower):.2f} of the bound",
           f"Torus bit-complement with the default router: {by_latency:.2f} against {by_stability:.2f}.",
           f"The run at {by_stability:.2f} had a mean latency of {latency(last)} cycles and no backlog that grew")


def test_no_point_saturates_above_its_bound_and_every_run_at_1_1_is_unstable(text, runs, saturated):
    """"No point saturates above its bound, and at 1.1 times the bound every run is unstable. At saturation the
    bottleneck is busy that fraction of the cycles (0.30 for uniform traffic on the torus with the default
    router).\""""
    assert all(float(r["saturation_fraction_of_bound"]) <= 1 + 1e-9 for r in saturated.values())
    over = [r for r in runs if float(r["bound_fraction"]) == 1.1]
    assert len(over) == 32 and not any(stable(r) for r in over)
    quoted(text, "at 1.1 times the bound every run is unstable",
           f"({fraction(saturated, 'torus 8x8', 'uniform'):.2f} for uniform traffic on the torus with the "
           "default router)")


def test_hotspot_is_within_0_15_of_its_bound_with_every_router(text, saturated):
    """"Hotspot, bound by node 36's ejection port on both networks, is within 0.15 of its bound with every router
    (0.85-1.00).\""""
    rows = [r for (_, pattern, *_), r in saturated.items() if pattern == "hotspot"]
    assert len(rows) == 8 and {r["bottleneck"] for r in rows} == {"('ejection', 36)"}
    fractions = [round(float(r["saturation_fraction_of_bound"]), 2) for r in rows]
    assert round(1 - min(fractions), 2) == 0.15
    quoted(text, "bound by node 36's ejection port on both networks, is within 0.15 of its bound with every "
           f"router ({min(fractions):.2f}-{max(fractions):.2f})")


def test_transpose_on_the_mesh_reaches_the_bound_with_4_vcs(text, runs, saturated):
    """"Transpose on the mesh reaches the bound with 4 VCs. With 4 VCs x 16 at 1.00 the mean latency was 106
    cycles (2.9 times the lightest load's 36), and the run was stable. At 1.1 it was 286, and unstable.\""""
    assert fraction(saturated, "mesh 8x8", "transpose", (4, 8)) == 1.0
    assert fraction(saturated, "mesh 8x8", "transpose", (4, 16)) == 1.0
    rows = sweep(runs, "mesh 8x8", "transpose", (4, 16))
    full, past = at(rows, 1.0), at(rows, 1.1)
    assert stable(full) and not stable(past)
    ratio = float(full["latency_mean"]) / float(rows[0]["latency_mean"])
    quoted(text, f"With 4 VCs x 16 at 1.00 the mean latency was {latency(full)} cycles ({ratio:.1f} times the "
           f"lightest load's {latency(rows[0])}), and the run was stable. At 1.1 it was {latency(past)}, and "
           "unstable.")


def test_virtual_channels_matter_more_than_buffer_depth(text, saturated):
    """"From 2 to 4 VCs (8-flit buffers) the torus gains 0.20 of its bound under uniform traffic (0.30 to 0.50),
    0.25 under transpose and 0.15 under bit-complement. The mesh gains 0.10, 0.15 and 0.20. From 8- to 16-flit
    buffers (2 VCs) the gains are 0.00-0.05 everywhere.\""""
    def gain(network, pattern, old, new):
        return round(fraction(saturated, network, pattern, new) - fraction(saturated, network, pattern, old), 2)

    torus = [gain("torus 8x8", p, (2, 8), (4, 8)) for p in ("uniform", "transpose", "bit_complement")]
    mesh = [gain("mesh 8x8", p, (2, 8), (4, 8)) for p in ("uniform", "transpose", "bit_complement")]
    buffers = [gain(n, p, (2, 8), (2, 16)) for n in load.NETWORKS for p in load.PATTERNS]
    quoted(text, f"the torus gains {torus[0]:.2f} of its bound under uniform traffic "
           f"({fraction(saturated, 'torus 8x8', 'uniform'):.2f} to "
           f"{fraction(saturated, 'torus 8x8', 'uniform', (4, 8)):.2f}), {torus[1]:.2f} under transpose and "
           f"{torus[2]:.2f} under bit-complement",
           "The mesh gains {:.2f}, {:.2f} and {:.2f}.".format(*mesh),
           f"the gains are {min(buffers):.2f}-{max(buffers):.2f} everywhere")


def test_uniform_traffic_gains_more_from_4_vcs_on_the_torus(text, saturated):
    """"Under uniform traffic 4 VCs gain more on the torus than on the mesh (0.20 against 0.10).\""""
    torus = fraction(saturated, "torus 8x8", "uniform", (4, 8)) - fraction(saturated, "torus 8x8", "uniform")
    mesh = fraction(saturated, "mesh 8x8", "uniform", (4, 8)) - fraction(saturated, "mesh 8x8", "uniform")
    assert torus > mesh
    quoted(text, f"4 VCs gain more on the torus than on the mesh ({torus:.2f} against {mesh:.2f})")


def test_uniform_traffic_on_the_torus_is_furthest_from_its_bound(text, saturated):
    """"Uniform traffic on the torus is furthest from its bound with every router (0.30 with the default router).
    Its bound is the highest (0.79 flits/node/cycle, 1.6 times the mesh's). With the default router the torus
    even saturates below the mesh (0.236 against 0.320 flits/node/cycle). With 4 VCs x 16 it is above it (0.433
    against 0.369).\""""
    for router in load.ROUTERS:
        mine = {(n, p): float(r["saturation_fraction_of_bound"]) for (n, p, *v), r in saturated.items()
                if tuple(v) == router}
        assert min(mine, key=mine.get) == ("torus 8x8", "uniform")
    bounds = {(n, p): float(r["bound"]) for (n, p, *_), r in saturated.items()}
    assert max(bounds, key=bounds.get) == ("torus 8x8", "uniform")
    torus, mesh = bounds["torus 8x8", "uniform"], bounds["mesh 8x8", "uniform"]

    def carried_load(network, router):
        return float(saturated[network, "uniform", *router]["saturation"])

    low = carried_load("torus 8x8", DEFAULT), carried_load("mesh 8x8", DEFAULT)
    high = carried_load("torus 8x8", (4, 16)), carried_load("mesh 8x8", (4, 16))
    assert low[0] < low[1] and high[0] > high[1]
    quoted(text, f"furthest from its bound with every router ({fraction(saturated, 'torus 8x8', 'uniform'):.2f} "
           "with the default router)", f"Its bound is the highest ({torus:.2f} flits/node/cycle, "
           f"{torus / mesh:.1f} times the mesh's)",
           "the torus even saturates below the mesh ({:.3f} against {:.3f} flits/node/cycle)".format(*low),
           "With 4 VCs x 16 it is above it ({:.3f} against {:.3f})".format(*high))
