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


# --- Synthetic injection processes and packet sizes (patterns.synthetic_packets) ---

def _sha256(*arrays) -> str:
    import hashlib
    return hashlib.sha256(b"".join(np.ascontiguousarray(a, np.int64).tobytes() for a in arrays)).hexdigest()


@pytest.mark.parametrize("spec, pattern, args, count, digest", [
    ({"kind": "mesh", "dims": [4, 4]}, "uniform", {}, 240,
     "5492f3c57bbf2c9315a00e9eed9da29b4c894763147ebc0151136e1976177907"),
    ({"kind": "torus", "dims": [4, 4]}, "transpose", {}, 239,
     "43d5c5c7088e910bfc57a2646ac500ffe43e3576e7085441de767793197fea52"),
    ({"kind": "mesh", "dims": [4, 4]}, "hotspot", {"hotspot_nodes": [5], "hotspot_fraction": 0.3}, 240,
     "2165368a249f64ea694cd01862b16996a4a95eff440b2124cc3805b1e5d44f06"),
])
def test_poisson_packets_of_one_size_are_those_drawn_before_sizes_could_vary(spec, pattern, args, count, digest):
    """Pins the Poisson generator: the digests are of (create, source, destination) as synthetic_packets drew
    them (rate 0.3, 4-flit packets, 200 cycles, seed 7) before packet sizes and Bernoulli injection were added, so
    a config that names one size keeps its packets draw for draw."""
    from harts.machine.patterns import synthetic_packets
    topology = build_topology(spec)
    for size in (4, [4], (4,)):
        create, source, destination, flits = synthetic_packets(topology, pattern, 0.3, size, 200, 7, **args)
        assert len(create) == count and _sha256(create, source, destination) == digest
        assert (flits == 4).all()


@pytest.mark.parametrize("pattern, senders, p", [
    ("uniform", list(range(16)), 0.5 * 16 / 16 / 4),
    # transpose on 4x4: the 4 diagonal nodes send nothing, so each of the other 12 sends 16/12 times as much
    ("transpose", [n for n in range(16) if n % 4 != n // 4], 0.5 * 16 / 12 / 4),
])
def test_bernoulli_injection_makes_a_binomial_number_of_packets_per_sender(pattern, senders, p):
    """Each sender makes a packet in each of the cycles with probability p = rate x N / N_send / flits, so its count
    is Binomial(cycles, p): every sender's within 4.5 sigma of cycles x p, and their total within 4 sigma."""
    from harts.machine.patterns import synthetic_packets
    cycles = 6000
    create, source, destination, flits = synthetic_packets(build_topology({"kind": "torus", "dims": [4, 4]}), pattern,
                                                           0.5, 4, cycles, 3, process="bernoulli")
    counts = np.bincount(source, minlength=16)
    assert sorted(np.flatnonzero(counts).tolist()) == senders
    sigma = np.sqrt(cycles * p * (1 - p))
    assert (np.abs(counts[senders] - cycles * p) < 4.5 * sigma).all()
    assert abs(counts.sum() - len(senders) * cycles * p) < 4 * sigma * np.sqrt(len(senders))
    assert create.min() >= 0 and create.max() < cycles and (np.diff(create) >= 0).all()
    pairs = create * 16 + source
    assert len(np.unique(pairs)) == len(create)  # at most one packet per node per cycle
    assert (destination != source).all() and (flits == 4).all()


def test_bernoulli_gaps_are_geometric():
    """The cycles between a sender's packets follow P(gap = k) = (1 - p)^(k - 1) p: the share of gaps of 1 is p."""
    from harts.machine.patterns import synthetic_packets
    create, source, _, _ = synthetic_packets(build_topology({"kind": "mesh", "dims": [4, 4]}), "uniform", 0.8, 2,
                                             20000, 5, process="bernoulli")
    p = 0.4
    gaps = np.concatenate([np.diff(create[source == s]) for s in range(16)])
    assert gaps.min() >= 1
    assert abs((gaps == 1).mean() - p) < 4 * np.sqrt(p * (1 - p) / len(gaps))
    assert abs(gaps.mean() - 1 / p) < 4 * np.sqrt((1 - p) / p**2 / len(gaps))


def test_bernoulli_at_probability_1_sends_every_cycle_and_the_same_seed_draws_the_same_packets():
    from harts.machine.patterns import synthetic_packets
    topology = build_topology({"kind": "mesh", "dims": [3, 3]})
    create, source, _, _ = synthetic_packets(topology, "uniform", 4.0, 4, 50, 1, process="bernoulli")
    assert create.tolist() == np.repeat(np.arange(50), 9).tolist() and source.tolist() == list(range(9)) * 50
    first = synthetic_packets(topology, "uniform", 0.6, 4, 500, 11, process="bernoulli")
    again = synthetic_packets(topology, "uniform", 0.6, 4, 500, 11, process="bernoulli")
    other = synthetic_packets(topology, "uniform", 0.6, 4, 500, 12, process="bernoulli")
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[1], other[1])


def test_packet_sizes_are_drawn_with_their_weights_and_the_rate_stays_in_flits():
    """Sizes 2 and 8 weighted 3:1 have mean 3.5 flits: 0.5 flits/node/cycle on 16 nodes for 5000 cycles is
    40000 flits, about 11429 packets, a quarter of them of 8 flits."""
    from harts.machine.patterns import synthetic_packets
    topology = build_topology({"kind": "mesh", "dims": [4, 4]})
    for process in ("poisson", "bernoulli"):
        _, _, _, flits = synthetic_packets(topology, "uniform", 0.5, [2, 8], 5000, 9, process=process,
                                           packet_weights=[3, 1])
        packets = 0.5 * 16 * 5000 / 3.5
        assert set(flits.tolist()) == {2, 8}
        assert abs(len(flits) - packets) < 4 * np.sqrt(packets)
        assert abs((flits == 8).mean() - 0.25) < 4 * np.sqrt(0.25 * 0.75 / len(flits))
    _, _, _, flits = synthetic_packets(topology, "uniform", 0.5, [1, 2, 3], 5000, 9)  # equal weights
    shares = np.bincount(flits, minlength=4)[1:] / len(flits)
    assert (np.abs(shares - 1 / 3) < 4 * np.sqrt(2 / 9 / len(flits))).all()


def _config_file(tmp_path, text: str, name="c.yaml"):
    from harts.machine.config import load_config
    path = tmp_path / name
    path.write_text(text)
    return load_config(path)


MESH = "topology: {kind: mesh, dims: [4, 4]}\nmicrocode: wormhole\n"


def test_a_rate_bernoulli_cannot_offer_is_refused_at_the_rate_naming_the_largest(tmp_path):
    """Transpose on 4x4 with 2-flit packets: 12 senders of at most one packet a cycle offer at most
    2 x 12 / 16 = 1.5 flits per node per cycle."""
    from harts.errors import InputError
    from harts.machine.traffic import synthetic_traffic
    text = MESH + "traffic:\n  synthetic:\n    pattern: transpose\n    process: bernoulli\n    rate: RATE\n" \
                  "    packet_flits: 2\n"
    config = _config_file(tmp_path, text.replace("RATE", "1.6"))
    with pytest.raises(InputError) as refusal:
        synthetic_traffic(config, build_topology(config.topology_spec))
    assert refusal.value.line == 7 and "at most 1.5 flits per node per cycle, not 1.6" in str(refusal.value)
    config = _config_file(tmp_path, text.replace("RATE", "1.5"))
    assert len(synthetic_traffic(config, build_topology(config.topology_spec))) == 12 * 20000


@pytest.mark.parametrize("text, line, message", [
    ("packet_flits: [4, 0]", 5, "'traffic.synthetic.packet_flits' expects a list of integers in 1..2^20 (or one "
                                "integer), got [4, 0]"),
    ("packet_flits: []", 5, "expects a list of integers in 1..2^20"),
    ("packet_flits: 2.5", 5, "expects a list of integers in 1..2^20"),
    ("packet_weights: [1, x]", 5, "'traffic.synthetic.packet_weights' expects a list of finite numbers >= 0, got "
                                  "[1, 'x']"),
    ("packet_weights: 1", 5, "expects a list of finite numbers >= 0"),
    ("packet_flits: [4, 8]\n    packet_weights: [1, 2, 3]", 6, "one weight per size of "
                                                               "'traffic.synthetic.packet_flits' (2)"),
    ("packet_flits: [4, 8]\n    packet_weights: [0, 0.0]", 6, "not all 0"),
    ("process: geometric", 5, "'traffic.synthetic.process' must be poisson or bernoulli"),
])
def test_bad_sizes_weights_and_processes_are_refused_at_their_line(tmp_path, text, line, message):
    from harts.errors import InputError
    with pytest.raises(InputError) as refusal:
        _config_file(tmp_path, MESH + "traffic:\n  synthetic:\n    " + text + "\n")
    assert refusal.value.line == line and message in refusal.value.message


def test_sizes_read_from_a_file_as_one_integer_or_a_list(tmp_path):
    one = _config_file(tmp_path, MESH + "traffic:\n  synthetic: {packet_flits: 8}\n")
    listed = _config_file(tmp_path, MESH + "traffic:\n  synthetic: {packet_flits: [2, 1e3], packet_weights: [1, .5]}\n")
    assert one["traffic.synthetic.packet_flits"] == (8,)
    assert listed["traffic.synthetic.packet_flits"] == (2, 1000)
    assert listed["traffic.synthetic.packet_weights"] == (1.0, 0.5)


# --- Trace files (trace_file.py) and the merged stream (TrafficSource) ---

def _trace_reader(path, block_lines=1 << 16, nodes=16):
    from harts.machine.trace_file import TraceFile
    return TraceFile(path, nodes, 6, 6, 600, block_lines)


def _whole(reader) -> Traffic:
    return Traffic.concatenate(list(reader.chunks()))


def test_a_trace_read_a_few_lines_at_a_time_is_the_trace_read_whole(tmp_path):
    rng = np.random.default_rng(4)
    create = np.sort(rng.integers(0, 300, 500))
    source = rng.integers(0, 16, 500)
    destination = (source + rng.integers(1, 16, 500)) % 16
    flits = rng.integers(1, 101, 500)
    lines = ["# cycle source destination flits"]
    for k, row in enumerate(zip(create, source, destination, flits)):
        lines.append(("{},{},{},{}" if k % 3 else "{} {}\t{}  {}").format(*row) + ("  # note" if k % 7 == 0 else ""))
        if k % 11 == 0:
            lines += ["", "   ", "#"]
    path = tmp_path / "trace.txt"
    path.write_text("\n".join(lines) + "\n")
    whole = _whole(_trace_reader(path))
    assert whole.create.tolist() == create.tolist() and whole.source.tolist() == source.tolist()
    assert whole.destination.tolist() == destination.tolist() and whole.length.tolist() == (flits * 6).tolist()
    for block in (1, 2, 7, 64):
        chunks = list(_trace_reader(path, block).chunks())
        assert len(chunks) > 1
        pieces = Traffic.concatenate(chunks)
        assert all(np.array_equal(getattr(pieces, name), getattr(whole, name)) for name in Traffic.__dataclass_fields__)


@pytest.mark.parametrize("bad, message", [
    ("5 1 2", "expected four integers 'cycle source destination flits', got '5 1 2'"),
    ("5 1 2 3 4", "expected four integers"),
    ("5 1 2 x", "expected four integers"),
    ("5.0 1 2 3", "expected four integers"),
    ("-1 1 2 3", "cycle -1: expected a cycle in 0..2^40"),
    ("1 1 2 3", "cycle 1 is before the previous packet's, 4: expected packets in creation order"),
    ("5 16 2 3", "source 16: expected a node in 0..15"),
    ("5 1 -1 3", "destination -1: expected a node in 0..15"),
    ("5 3 3 3", "source and destination are both 3"),
    ("5 1 2 0", "flits 0: expected 1..2^20"),
    ("5 1 2 2000000", "flits 2000000: expected 1..2^20"),
    ("5 1 2 101", "a packet of 101 flits is 606 bytes (flow.flit_bytes 6), more than bmu.capacity_bytes (600)"),
])
def test_every_kind_of_bad_trace_line_is_refused_at_its_line(tmp_path, bad, message):
    from harts.errors import InputError
    good = "0 1 2 3\n# comment\n\n4 2 1 3\n"
    for text, line in ((good + bad + "\n", 5), (good + "4 1 2 3\n" + bad + "\n8 1 2 3\n", 6)):
        path = tmp_path / "trace.txt"
        path.write_text(text)
        for block in (1, 3, 1 << 16):
            with pytest.raises(InputError) as refusal:
                _whole(_trace_reader(path, block))
            assert (refusal.value.path, refusal.value.line) == (str(path), line)
            assert message in refusal.value.message


def test_a_bad_last_line_is_refused_before_the_run_at_its_line(tmp_path):
    from harts.errors import InputError
    path = tmp_path / "trace.txt"
    path.write_text("0 1 2 3\n" * 5000 + "9 1 1 3\n# end\n")
    with pytest.raises(InputError) as refusal:
        _trace_reader(path).horizon()
    assert refusal.value.line == 5001 and "source and destination are both 1" in refusal.value.message


def test_the_horizon_is_the_last_packets_cycle(tmp_path):
    from harts.machine.trace_file import TAIL_BYTES
    path = tmp_path / "trace.txt"
    for text, horizon in [("", 0), ("# nothing\n\n", 0), ("3 1 2 3", 3), ("3 1 2 3\n17,0,5,1\n", 17),
                          ("1 1 2 3\n" * 1000 + "250 4 2 1  # last\n" + "# trailing comment\n" * TAIL_BYTES, 250),
                          ("x" * 3 * TAIL_BYTES + "\n12 1 2 3\r\n\r\n", 12)]:
        path.write_text(text)
        assert _trace_reader(path).horizon() == horizon


def test_streams_and_explicit_packets_merge_in_creation_order_a_whole_cycle_at_a_time():
    from harts.machine.traffic import TrafficSource

    def stream(creates, source):
        return iter([unicast(np.asarray(c, np.int64), source, source + 1, 8) for c in creates])

    explicit = unicast([0, 3, 3, 9, 40], 0, 1, 8)
    first = [[0, 1, 3, 3], [3, 5], [], [5, 6, 9]]
    second = [[2, 3], [3, 3, 3], [4, 8, 9, 9, 12], [30]]
    source = TrafficSource(explicit, (stream(first, 1), stream(second, 2)), 40)
    chunks = list(source.chunks())
    merged = Traffic.concatenate(chunks)
    # in a cycle: explicit packets (source 0), then the first stream's (1), then the second's (2)
    expected = sorted([(c, 0) for c in explicit.create.tolist()] + [(c, 1) for part in first for c in part]
                      + [(c, 2) for part in second for c in part])
    assert list(zip(merged.create.tolist(), merged.source.tolist())) == expected
    for before, after in zip(chunks, chunks[1:]):
        assert before.create[-1] < after.create[0]  # no cycle is split between chunks
    assert len(chunks) > 2


def test_a_config_with_a_trace_has_traffic_and_a_missing_trace_is_refused_at_its_line(tmp_path):
    from harts.errors import InputError
    from harts.machine.traffic import build_traffic, has_traffic
    (tmp_path / "packets.txt").write_text("3 0 5 2\n8 1 2 1\n")
    config = _config_file(tmp_path, MESH + "traffic:\n  trace: packets.txt\n")
    assert has_traffic(config)
    source = build_traffic(config, build_topology(config.topology_spec))
    assert source.horizon_cycles == 8
    assert Traffic.concatenate(list(source.chunks())).length.tolist() == [12, 6]
    with pytest.raises(InputError) as refusal:
        _config_file(tmp_path, MESH + "traffic:\n  trace: missing.txt\n")
    assert refusal.value.line == 4 and "missing.txt" in refusal.value.message


def test_a_trace_runs_as_the_same_packets_given_in_the_config(tmp_path):
    """The same 120 packets on the 8x8 wormhole torus, once from a trace file and once as traffic.packets: the
    same deliveries, tick for tick."""
    import yaml

    from harts.machine.config import CONFIGS_DIR, load_config
    from harts.machine.simulation import Simulation
    rng = np.random.default_rng(8)
    create = np.sort(rng.integers(0, 400, 120))
    source = rng.integers(0, 64, 120)
    destination = (source + rng.integers(1, 64, 120)) % 64
    flits = rng.integers(1, 17, 120)
    (tmp_path / "trace.txt").write_text("".join(f"{c} {s} {d} {f}\n" for c, s, d, f in
                                                zip(create, source, destination, flits)))
    base = yaml.safe_load((CONFIGS_DIR / "wormhole_torus_8x8.yaml").read_text())
    base["traffic"] = {"trace": "trace.txt"}
    (tmp_path / "traced.yaml").write_text(yaml.safe_dump(base))
    base["traffic"] = {"packets": [{"cycle": int(c), "source": int(s), "destination": int(d), "length": int(f) * 6}
                                   for c, s, d, f in zip(create, source, destination, flits)]}
    (tmp_path / "listed.yaml").write_text(yaml.safe_dump(base))
    traced = Simulation(load_config(tmp_path / "traced.yaml")).run()
    listed = Simulation(load_config(tmp_path / "listed.yaml")).run()
    assert traced.summary()["packets"] == listed.summary()["packets"]
    assert traced.deliveries.shape[1] == 120
    assert np.array_equal(traced.deliveries, listed.deliveries)
    also = Simulation(load_config(CONFIGS_DIR / "wormhole_torus_8x8.yaml").with_values(
        traffic__synthetic__rate=0, traffic__trace=str(tmp_path / "trace.txt"))).run()
    assert np.array_equal(also.deliveries, listed.deliveries)


def test_a_trace_packet_too_short_for_its_header_is_refused(tmp_path):
    """With 2-byte flits and 6-byte headers a packet needs 3 flits, as an explicit packet needs 6 bytes."""
    from harts.errors import InputError
    from harts.machine.trace_file import TraceFile
    path = tmp_path / "trace.txt"
    path.write_text("0 1 2 3\n1 1 2 2\n")
    with pytest.raises(InputError) as refusal:
        _whole(TraceFile(path, 16, 2, 6, 600))
    assert refusal.value.line == 2 and "a packet of 2 flits is 4 bytes (flow.flit_bytes 2), less than " \
                                      "timing.header_bytes (6)" in refusal.value.message
