"""routing.torus_tie: which way a packet routed by destination goes when its destination is exactly half-way
round an even ring, on both kernels."""

import numpy as np
import pytest

from harts.machine.config import CONFIGS_DIR, defaults, load_config
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.reference.flits import tie_goes_negative

SIDE = 4
PACKETS = 300


def half_way_packets():
    """Every packet from (x, y) to (x + 2, y + 2) on the 4x4 torus, one at a time (no packet meets another)."""
    source = np.arange(PACKETS) % (SIDE * SIDE)
    x, y = source % SIDE, source // SIDE
    destination = (x + 2) % SIDE + SIDE * ((y + 2) % SIDE)
    return unicast(np.arange(PACKETS) * 400, source, destination, 48)


def ways_taken(microcode, tie, seed=7):
    """Per packet, whether its x hops and its y hops went the - way, read from its hop records."""
    sim = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [SIDE, SIDE]}, microcode=microcode,
                                            routing__torus_tie=tie, run__seed=seed))
    result = sim.run(half_way_packets(), hops=True)
    negative = np.zeros((PACKETS, 2), bool)
    for uid in range(PACKETS):
        path = result.hops.path(uid)
        assert len(path) == 5  # two hops on each axis, x first
        (x0, y0), (x1, _), (_, y3) = ((v % SIDE, v // SIDE) for v in (path[0], path[1], path[3]))
        negative[uid] = (x1 == (x0 - 1) % SIDE, y3 == (y0 - 1) % SIDE)
    return negative


@pytest.mark.parametrize("microcode", ["wormhole", "harts"])
def test_a_drawn_tie_goes_the_way_the_reference_draw_says_and_both_ways_about_equally(microcode):
    negative = ways_taken(microcode, "random", seed=7)
    key = 2 * 7 + 1  # MODEL.md: the key is 2 run.seed + 1
    expected = [[tie_goes_negative(key, uid, axis) for axis in (0, 1)] for uid in range(PACKETS)]
    assert negative.tolist() == expected
    # 600 fair draws: the count of - ways is 300 +- 12 (one sigma); 240..360 is five sigmas
    assert 240 <= negative.sum() <= 360
    # the two axes draw apart: all four combinations occur
    assert len({(a, b) for a, b in negative.tolist()}) == 4


@pytest.mark.parametrize("microcode", ["wormhole", "harts"])
def test_a_positive_tie_always_goes_the_plus_way(microcode):
    assert not ways_taken(microcode, "positive").any()


def test_another_seed_draws_other_ways():
    assert (ways_taken("wormhole", "random", seed=7) != ways_taken("wormhole", "random", seed=8)).any()


def test_only_a_torus_draws_ties():
    mesh = Simulation(defaults().with_values(topology={"kind": "mesh", "dims": [4, 4]}, microcode="wormhole"))
    torus = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}, microcode="wormhole"))
    assert mesh.params.torus_tie_key == 0 and torus.params.torus_tie_key != 0


@pytest.mark.parametrize("name", ["torus_8x8", "wormhole_torus_8x8", "circuit_torus_15x15", "circuit_torus_16x16",
                                  "circuit_torus_25x25"])
def test_the_shipped_torus_configs_keep_the_plus_way_their_results_were_made_with(name):
    assert load_config(CONFIGS_DIR / f"{name}.yaml")["routing.torus_tie"] == "positive"


def test_harts_load_takes_the_bound_under_the_tie_rule_it_runs():
    from harts.experiments.switching.load import ROUTERS, output_name, sweeps

    drawn = sweeps("wormhole", (0.1,), ROUTERS[:1], "random")["torus 8x8", ROUTERS[0]]
    plus = sweeps("wormhole", (0.1,), ROUTERS[:1], "positive")["torus 8x8", ROUTERS[0]]
    assert drawn.grid()[0].key != plus.grid()[0].key  # a resumed sweep never takes one rule's point for the other's
    assert drawn.bounds["uniform"] == pytest.approx(63 / 64, rel=1e-12)
    assert plus.bounds["uniform"] == pytest.approx(63 / 80, rel=1e-12)
    assert (output_name("wormhole", "random"), output_name("wormhole", "positive")) == \
        ("wormhole", "wormhole_tie_positive")
