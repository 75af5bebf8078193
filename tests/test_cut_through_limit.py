"""The speed-of-light model of the cut-through kernel (bench/limits/cut_through.py) is the same machine: on the
same packets it delivers every one at the engine's tick, on an idle network and where packets wait, are
stored in the BMU, retry and are dropped by a full BMU."""

import numpy as np
import pytest

from bench.limits.cut_through import Limit, workload
from harts.controller import records as R
from harts.controller import state as S
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.network import build_topology

from .helpers import closed_form, config


def engine_deliveries(cfg, traffic):
    """Each packet's delivery tick on the engine (-1: never delivered), and the run."""
    result = Simulation(cfg).run(traffic)
    ticks = np.full(len(traffic), -1, np.int64)
    uids = result.deliveries[R.DL_UID]
    assert len(np.unique(uids)) == len(uids)
    ticks[uids] = result.deliveries[R.DL_TICK]
    return ticks, result


def test_an_idle_network_delivers_at_the_closed_form():
    """Every destination of E-5 from node 0 at each of the paper's lengths, one packet at a time: S + rM + (h-1)d
    derived by hand from the parameters (tests/helpers.py), not from either implementation."""
    cfg = config(5)
    n = build_topology(cfg.topology_spec).n_nodes
    destinations = np.tile(np.arange(1, n), 3)
    lengths = np.repeat([64, 128, 512], n - 1)
    create = np.arange(len(destinations)) * 1000  # far enough apart that no two meet
    traffic = unicast(create, 0, destinations, lengths)
    delivered, hops, _ = Limit(cfg).run(traffic)
    S_, r, d = closed_form(cfg)
    distance = build_topology(cfg.topology_spec).distance(np.zeros(len(destinations), np.int64), destinations)
    bpc = cfg.bytes_per_cycle
    expected = [c * bpc + (S_ + r * m + (h - 1) * d) * bpc for c, m, h in zip(create, lengths, distance)]
    assert list(delivered) == expected
    assert hops == distance.sum()


@pytest.mark.parametrize("size, load, cycles, seed, overrides", [
    (3, 0.05, 2000, 1, {}),
    (5, 0.05, 2000, 2, {}),
    (5, 0.3, 2000, 3, {}),
    (5, 0.5, 2000, 4, {}),
    (5, 1.0, 800, 5, {"bmu__capacity_bytes": 2048}),  # past saturation, with BMUs small enough to overflow
])
def test_every_packet_is_delivered_at_the_engines_tick(size, load, cycles, seed, overrides):
    cfg = config(size, traffic__uniform__load=load, run__cycles=cycles, run__seed=seed, **overrides)
    traffic = workload(cfg)
    expected, result = engine_deliveries(cfg, traffic)
    delivered, hops, _ = Limit(cfg).run(traffic)
    assert np.array_equal(delivered, expected)
    assert hops == result.stats[S.ST_HOPS]
    if load >= 0.3:
        # the comparison covers what loaded runs do: transmitters refused, packets stored and queued
        marks = result.packets[R.PL_CONTENTION]
        assert result.stats[S.ST_STORED_IN] > 0
        for kind in (R.CONTENTION_RETRIED, R.CONTENTION_STORED, R.CONTENTION_QUEUED):
            assert (marks & kind != 0).sum() > 10
    if overrides:
        assert result.stats[S.ST_OVERFLOWS] > 100
        assert (delivered < 0).sum() == result.stats[S.ST_OVERFLOWS]


@pytest.mark.parametrize("overrides, words", [
    ({"timing__bus_delay_cycles": 2}, "timing.bus_delay_cycles"),
    ({"bmu__queues": "per_output"}, "bmu.queues"),
    ({"microcode": "store_and_forward"}, "microcode"),
])
def test_a_config_the_model_does_not_fold_in_is_refused(overrides, words):
    with pytest.raises(ValueError, match=words):
        Limit(config(5, **overrides))
