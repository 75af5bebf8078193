"""The flit kernel's speed-of-light model (bench/limits/flits.py) is the same model as the engine: on the same
workload it delivers every packet at the same cycle, on meshes and tori of odd and even side, with 1 to 3 VCs,
from light load to past saturation."""

import numpy as np
import pytest

from bench.limits import flits as limit
from harts.controller import records as R
from harts.machine.config import defaults
from harts.machine.patterns import synthetic_packets
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.reference.flits import zero_load_latency_wormhole

CYCLES = 500
RATES = (0.05, 0.25, 0.6)  # flits/node/cycle: light, near the 4x4 and 5x5 networks' saturation, past it
CASES = [  # kind, side, VCs, buffer depth, packet flits
    ("mesh", 4, 1, 8, 8), ("mesh", 4, 2, 8, 8), ("mesh", 5, 1, 8, 8), ("mesh", 5, 2, 3, 5),
    ("torus", 4, 2, 8, 8), ("torus", 4, 3, 2, 4), ("torus", 5, 2, 8, 8), ("torus", 5, 2, 3, 1),
]


def both(kind, side, vcs, depth, flits, rate, seed):
    sim = Simulation(defaults().with_values(topology={"kind": kind, "dims": [side, side]}, microcode="wormhole",
                                            flow__virtual_channels=vcs, flow__buffer_flits=depth,
                                            routing__torus_tie="positive"))  # the limit's tie rule
    create, source, destination, _ = synthetic_packets(sim.topology, "uniform", rate, flits, CYCLES, seed)
    result = sim.run(unicast(create, source, destination, flits * sim.params.flit_bytes), keep=True)
    engine = np.full(len(create), -1, np.int64)
    engine[result.deliveries[R.DL_UID]] = result.deliveries[R.DL_TICK]
    model = limit.deliveries(kind, (side, side), sim.params, flits, create, source, destination)
    alone = np.array([zero_load_latency_wormhole(sim.params, int(h), flits)
                      for h in sim.topology.distance(source, destination)], np.int64)
    return engine, model, engine - create - alone


@pytest.mark.parametrize("kind, side, vcs, depth, flits", CASES)
def test_the_limit_delivers_every_packet_at_the_engines_cycle(kind, side, vcs, depth, flits):
    light, middle, heavy = RATES
    for rate in RATES:
        engine, model, waited = both(kind, side, vcs, depth, flits, rate, seed=7)
        assert (engine >= 0).all() and (waited >= 0).all()
        assert model.tolist() == engine.tolist(), f"{kind} {side}x{side} at {rate}"
        if rate == light:  # nearly alone (a 2-flit buffer throttles even a lone packet by a cycle or so)
            assert np.median(waited) <= 2
        if rate == middle:  # most packets wait for another: VCs, links and the switch are contended
            assert (waited > 0).mean() > 0.5
        if rate == heavy:  # past saturation the queues grow: the last packets made wait longest
            quarter = len(waited) // 4
            assert waited[-quarter:].mean() > 2 * waited[:quarter].mean()


def test_a_lone_packet_takes_the_closed_form():
    sim = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}, microcode="wormhole",
                                            routing__torus_tie="positive"))
    # 0 -> 2 is 2 hops the + way (the tie at k/2 goes +), 0 -> 10 is 2 + 2 through the + wrap links
    for dst, hops in ((2, 2), (10, 4), (3, 1), (12, 1)):
        got = limit.deliveries("torus", (4, 4), sim.params, 8, np.array([5]), np.array([0]), np.array([dst]))
        assert got.tolist() == [5 + zero_load_latency_wormhole(sim.params, hops, 8)]


def test_refuses_what_it_does_not_model():
    sim = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}, microcode="wormhole",
                                            flow__np_channels=0))
    with pytest.raises(ValueError, match="one NP channel"):
        limit.deliveries("torus", (4, 4), sim.params, 8, np.array([0]), np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="mesh or torus"):
        limit.deliveries("hypercube", (4, 4), sim.params, 8, np.array([0]), np.array([0]), np.array([1]))
    drawn = Simulation(defaults().with_values(topology={"kind": "torus", "dims": [4, 4]}, microcode="wormhole"))
    with pytest.raises(ValueError, match="torus_tie: positive"):
        limit.deliveries("torus", (4, 4), drawn.params, 8, np.array([0]), np.array([0]), np.array([2]))
