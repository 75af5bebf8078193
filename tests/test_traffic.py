"""The paper's workload: its destinations and both readings of its load (MODEL.md, Traffic)."""

import numpy as np
import pytest

from harts.machine.traffic import (
    Traffic,
    paper_destinations,
    paper_mean_hops,
    paper_node_load,
    unicast,
)
from harts.network import build_topology


@pytest.mark.parametrize("n", [3, 5, 7, 9, 12])
def test_one_over_distance_destinations_give_n_over_2_hops_on_e_n(n):
    """E-n has 6k nodes at distance k (k = 1..n-1); weights 1/k make every distance equally likely, so the
    mean route is (1 + ... + (n-1)) / (n-1) = n/2 hops (INDEX.md)."""
    topo = build_topology({"kind": "hex", "size": n})
    offsets, probabilities = paper_destinations(topo)
    distance = topo.distance(np.zeros(len(offsets), np.int64), offsets)
    assert sorted(np.bincount(distance)[1:].tolist()) == [6 * k for k in range(1, n)]
    assert probabilities.sum() == pytest.approx(1.0)
    assert paper_mean_hops(topo) == pytest.approx(n / 2, rel=1e-12)


@pytest.mark.parametrize("n", [5, 7, 9])
def test_a_link_load_is_12_over_n_times_as_much_per_node_on_e_n(n):
    """Six links per node carry load L each; a node's packets cross n/2 of them: it generates 6L / (n/2)."""
    topo = build_topology({"kind": "hex", "size": n})
    assert paper_node_load(topo, 0.7, "link") == pytest.approx(0.7 * 12 / n, rel=1e-12)
    assert paper_node_load(topo, 0.7, "node") == 0.7


def test_concatenating_orders_by_creation_and_hands_back_a_lone_ordered_part_unchanged():
    ordered = unicast([0, 2, 2, 5], [0, 1, 2, 3], [1, 2, 3, 4], 8)
    assert Traffic.concatenate([ordered]) is ordered
    shuffled = unicast([5, 0, 2, 2], [3, 0, 1, 2], [4, 1, 2, 3], 8)
    one = Traffic.concatenate([shuffled])
    assert one.create.tolist() == [0, 2, 2, 5] and one.source.tolist() == [0, 1, 2, 3]  # stable among ties
    narrow = Traffic(*(np.asarray(getattr(ordered, name), np.int32) for name in Traffic.__dataclass_fields__))
    assert Traffic.concatenate([narrow]).create.dtype == np.int64
    both = Traffic.concatenate([shuffled, ordered])
    assert both.create.tolist() == [0, 0, 2, 2, 2, 2, 5, 5] and both.source.tolist() == [0, 0, 1, 2, 1, 2, 3, 3]
