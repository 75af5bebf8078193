"""Traffic: what the network processors are asked to send, as plain arrays in creation order.

Uniform Poisson traffic is generated, and a trace file read (trace_file.py), as streams of chunks, so a long
run holds only the traffic of the chunks in progress; explicit packets from the config are merged into them.
All randomness is drawn from one numpy Generator seeded by run.seed, so the same config and seed give the
same packets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..controller.records import TRAFFIC_INITIATE, TRAFFIC_UNICAST
from ..network import Topology
from ..yamlsource import Located
from .config import (
    KEY_BY_NAME,
    MAX_BYTES,
    MAX_CYCLES,
    MAX_PACKETS,
    Config,
    bound,
    integer,
    real,
)

CHUNK_PACKETS = 1 << 16  # uniform packets drawn at a time
LOAD_BASES = KEY_BY_NAME["traffic.uniform.load_basis"].choices  # the readings of a load


@dataclass
class Traffic:
    """Packets in creation order (`create` in cycles). An initiation (TRAFFIC_INITIATE) makes its source's
    NP run the NP program's procedure with `argument`, `length`, `direction` and `distance` (for the
    kandlur_shin program: argument 0 is one send_packet(direction, distance) worm, otherwise the broadcast
    algorithm to start)."""

    create: np.ndarray
    source: np.ndarray
    destination: np.ndarray
    length: np.ndarray
    kind: np.ndarray
    direction: np.ndarray
    distance: np.ndarray
    argument: np.ndarray

    def __len__(self) -> int:
        return len(self.create)

    def is_int64_in_order(self) -> bool:
        return all(getattr(self, name).dtype == np.int64 for name in Traffic.__dataclass_fields__) and \
            bool((self.create[1:] >= self.create[:-1]).all())

    def __getitem__(self, index) -> Traffic:
        return Traffic(**{name: getattr(self, name)[index] for name in Traffic.__dataclass_fields__})

    @staticmethod
    def concatenate(parts: list[Traffic]) -> Traffic:
        """The parts as one, in creation order (stable)."""
        parts = [p for p in parts if len(p)]
        if len(parts) == 1 and parts[0].is_int64_in_order():
            return parts[0]  # what a run given its whole traffic gets: copying and sorting it would be wasted
        fields = {name: np.concatenate([getattr(p, name) for p in parts] + [np.zeros(0, np.int64)]).astype(np.int64)
                  for name in Traffic.__dataclass_fields__}
        order = np.argsort(fields["create"], kind="stable")
        return Traffic(**{name: values[order] for name, values in fields.items()})


def no_traffic() -> Traffic:
    z = np.zeros(0, dtype=np.int64)
    return Traffic(z, z, z, z, z, z, z, z)


def unicast(create, source, destination, length) -> Traffic:
    """Unicast packets (lengths in bytes, header included); scalars apply to every packet."""
    create, source, destination, length = (np.ascontiguousarray(a, dtype=np.int64) for a in np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(x, dtype=np.int64)) for x in (create, source, destination, length))))
    k = len(create)
    return Traffic(create, source, destination, length, np.full(k, TRAFFIC_UNICAST, np.int64),
                   np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64))


def initiations(create, source, argument, length, direction=0, distance=0) -> Traffic:
    """The sources' NPs run their procedure's initiation at `create` (cycles) with these arguments; scalars
    apply to every initiation."""
    create, source, argument, length, direction, distance = (
        np.ascontiguousarray(a, dtype=np.int64) for a in np.broadcast_arrays(
            *(np.atleast_1d(np.asarray(x, dtype=np.int64)) for x in (create, source, argument, length, direction,
                                                                     distance))))
    k = len(create)
    return Traffic(create, source, np.full(k, -1, np.int64), length, np.full(k, TRAFFIC_INITIATE, np.int64),
                   direction, distance, argument)


def worms(create, source, direction, distance, length) -> Traffic:
    """send_packet(direction, distance) worms of the kandlur_shin NP program (argument 0)."""
    return initiations(create, source, 0, length, direction, distance)


@dataclass
class TrafficSource:
    """A config's traffic: explicit packets and worms, and streams of chunks of packets (uniform Poisson, a
    trace file), each in creation order."""

    explicit: Traffic
    streams: tuple[Iterator[Traffic], ...]
    horizon_cycles: int  # creation time of the last packet, or an estimate while a stream is not done

    def chunks(self) -> Iterator[Traffic]:
        """The whole traffic in creation order, a chunk at a time; a chunk never ends inside a cycle (the
        kernel injects a cycle's packets together). In a cycle the explicit packets come first, then each
        stream's in turn. Only the stream that is furthest behind is read, so each holds at most about a chunk."""
        held = [no_traffic() for _ in self.streams]  # read from each stream, not yet handed on
        # the creation cycle of the last packet read from each stream: all its packets before it are read
        reached = [-1] * len(self.streams)
        live = list(range(len(self.streams)))
        given = 0  # explicit packets handed on
        while True:
            until = min((reached[i] for i in live), default=None)  # everything created before it is read
            stop = _before(self.explicit, until)
            cuts = [_before(part, until) for part in held]
            out = Traffic.concatenate([self.explicit[given:stop]] + [part[:cut] for part, cut in zip(held, cuts)])
            given, held = stop, [part[cut:] for part, cut in zip(held, cuts)]
            if len(out):
                yield out
            if until is None:
                return
            behind = min(live, key=reached.__getitem__)
            chunk = next(self.streams[behind], None)
            if chunk is None:
                live.remove(behind)
            elif len(chunk):
                held[behind] = Traffic.concatenate([held[behind], chunk])
                reached[behind] = int(chunk.create[-1])


def _before(traffic: Traffic, cycle: int | None) -> int:
    """How many packets of `traffic` are created before `cycle` (all of them when it is None)."""
    return len(traffic) if cycle is None else int(np.searchsorted(traffic.create, cycle))


def _records(config: Config, name: str, fields: dict[str, tuple[int, int]]) -> dict[str, list]:
    """Check a list of {field: int} records; ranges are (low, high) inclusive. 'item' holds each entry."""
    out: dict[str, list] = {f: [] for f in fields}
    out["item"] = []
    for item in config[name].value:
        if not isinstance(item.value, dict):
            raise item.error(f"each entry of '{name}' must be a mapping with keys {', '.join(fields)}")
        for key in item.value:
            if key not in fields:
                raise item.value[key].error(f"unknown field '{key}' in '{name}', expected {', '.join(fields)}")
        for key, (low, high) in fields.items():
            if key not in item.value:
                raise item.error(f"entry of '{name}' is missing '{key}'")
            value = integer(item.value[key].value)
            if value is None or not low <= value <= high:
                raise item.value[key].error(f"'{key}' must be an integer in {low}..{bound(high)}, "
                                            f"got {item.value[key].value!r}")
            out[key].append(value)
        out["item"].append(item)
    return out


def _check_fits(length: int, config: Config, item: Located) -> None:
    capacity = config["bmu.capacity_bytes"]
    if length > capacity:
        raise item.error(f"a packet of {length} bytes is longer than bmu.capacity_bytes ({capacity}): every packet "
                         f"must fit in a BMU, which stores it whenever it cannot cut through")


def build_traffic(config: Config, topology: Topology) -> TrafficSource:
    """All traffic of a config: explicit packets, explicit worms, uniform Poisson and synthetic traffic."""
    n = topology.n_nodes
    header = config["timing.header_bytes"]
    explicit = _records(config, "traffic.packets", {
        "cycle": (0, MAX_CYCLES), "source": (0, n - 1), "destination": (0, n - 1), "length": (header, MAX_BYTES)})
    for src, dst, item in zip(explicit["source"], explicit["destination"], explicit["item"]):
        if src == dst:
            raise item.error("a packet's source and destination must differ")
    # a worm of d hops takes at least d cycles
    worm_records = _records(config, "traffic.broadcasts", {
        "cycle": (0, MAX_CYCLES), "source": (0, n - 1), "direction": (0, topology.n_ports - 1),
        "distance": (1, MAX_CYCLES), "length": (header, MAX_BYTES)})
    for records in (explicit, worm_records):
        for length, item in zip(records["length"], records["item"]):
            _check_fits(length, config, item.value["length"])
    given = Traffic.concatenate([
        unicast(explicit["cycle"], explicit["source"], explicit["destination"], explicit["length"]),
        worms(worm_records["cycle"], worm_records["source"], worm_records["direction"],
              worm_records["distance"], worm_records["length"])])
    horizon = int(given.create.max(initial=0))
    streams = []
    load = config["traffic.uniform.load"]
    if load > 0:
        lengths, probabilities = length_distribution(config)
        rate = n * uniform_node_load(config, topology) * config.bytes_per_cycle / float(np.dot(lengths, probabilities))
        packets, cycles = config["run.packets"], config["run.cycles"]
        # Refused up front: the generator would otherwise run for ever (or past the int64 ticks) in chunks.
        if packets and packets / rate > MAX_CYCLES:
            raise config.error("run.packets", f"{packets} uniform packets at load {load:g} take about "
                                              f"{packets / rate:.3g} cycles to generate, more than the "
                                              f"{bound(MAX_CYCLES)} a run can last")
        if not packets and rate * cycles > MAX_PACKETS:
            raise config.error("run.cycles", f"{cycles} cycles at load {load:g} generate about {rate * cycles:.3g} "
                                             f"uniform packets, more than the {bound(MAX_PACKETS)} a run can number")
        horizon = max(horizon, int(packets / rate) if packets else cycles)
        streams.append(uniform_poisson(topology, rate, lengths, probabilities, cycles, packets,
                                       np.random.default_rng(config["run.seed"])))
    synthetic = synthetic_traffic(config, topology)
    if len(synthetic):
        given = Traffic.concatenate([given, synthetic])
        horizon = max(horizon, int(synthetic.create.max()))
    trace = config.trace_path()
    if trace is not None:
        from .trace_file import TraceFile
        reader = TraceFile(trace, n, config["flow.flit_bytes"], header, config["bmu.capacity_bytes"])
        horizon = max(horizon, reader.horizon())
        streams.append(reader.chunks())
    return TrafficSource(given, tuple(streams), horizon)


# The keys that give a config traffic of its own, and their values when it has none.
NO_TRAFFIC = {"traffic.packets": [], "traffic.broadcasts": [], "traffic.uniform.load": 0, "traffic.synthetic.rate": 0,
              "traffic.trace": ""}


def traffic_keys(config: Config) -> list[str]:
    """The keys that give the config traffic of its own (explicit packets or worms, uniform, synthetic or a trace)."""
    return [name for name in NO_TRAFFIC
            if (config[name].value if isinstance(config[name], Located) else config[name])]


def has_traffic(config: Config) -> bool:
    return bool(traffic_keys(config))


def without_traffic(config: Config) -> Config:
    """The same machine, idle but for what a command sends itself."""
    return config.with_values(NO_TRAFFIC)


def synthetic_traffic(config: Config, topology: Topology) -> Traffic:
    """The config's synthetic traffic (`traffic.synthetic.*` for `run.cycles` cycles, seed `run.seed`): packets of
    `packet_flits` flits of `flow.flit_bytes` (drawn with `packet_weights`), at `rate` flits per node per cycle,
    made by `process`, destinations by the pattern."""
    from .patterns import RateTooHigh, synthetic_packets

    rate = config["traffic.synthetic.rate"]
    if rate <= 0:
        return no_traffic()
    n = topology.n_nodes
    hotspots = config["traffic.synthetic.hotspot_nodes"].plain()
    if any(not isinstance(v, int) or not 0 <= v < n for v in hotspots):
        raise config.error("traffic.synthetic.hotspot_nodes", f"hotspot nodes must be nodes 0..{n - 1}, got {hotspots}")
    try:
        create, source, destination, flits = synthetic_packets(
            topology, config["traffic.synthetic.pattern"], rate, config["traffic.synthetic.packet_flits"],
            config["run.cycles"], config["run.seed"], config["traffic.synthetic.process"],
            config["traffic.synthetic.packet_weights"], hotspot_nodes=hotspots or None,
            hotspot_fraction=config["traffic.synthetic.hotspot_fraction"], permutation_seed=config["run.seed"])
    except RateTooHigh as exc:
        raise config.error("traffic.synthetic.rate", f"'traffic.synthetic.rate': {exc}") from None
    except ValueError as exc:
        raise config.error("traffic.synthetic.pattern", str(exc)) from None
    return unicast(create, source, destination, flits * config["flow.flit_bytes"])


def node_load(load: float, basis: str, topology: Topology, mean_hops: float) -> float:
    """Per-node generation rate over one link's peak I/O rate, for `load` read under `basis`: 'node' is that
    rate itself; 'link' is the offered mean link utilisation, generation x mean hops / links per node."""
    if basis == "node":
        return load
    return load * links_per_node(topology) / mean_hops


def links_per_node(topology: Topology) -> float:
    return len(topology.links()) / topology.n_nodes


def uniform_node_load(config: Config, topology: Topology) -> float:
    """The config's uniform traffic as per-node generation over one link's rate."""
    return node_load(config["traffic.uniform.load"], config["traffic.uniform.load_basis"], topology,
                     topology.mean_distance())


def length_distribution(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """traffic.uniform.lengths and length_probabilities, checked."""
    header = config["timing.header_bytes"]
    lengths_item = config["traffic.uniform.lengths"]
    lengths = [integer(item.value) for item in lengths_item.value]
    probs = [real(item.value) for item in config["traffic.uniform.length_probabilities"].value]
    if not lengths or not all(x is not None and x >= header for x in lengths):
        raise _error(config, "traffic.uniform.lengths", f"expected a list of integers >= header_bytes ({header})")
    for length, item in zip(lengths, lengths_item.value):
        _check_fits(length, config, item)
    if len(probs) != len(lengths) or not all(x is not None and x >= 0 for x in probs) \
            or abs(sum(probs) - 1.0) > 1e-9:
        raise _error(config, "traffic.uniform.length_probabilities",
                     f"expected {len(lengths)} non-negative numbers summing to 1")
    return np.asarray(lengths, dtype=np.int64), np.asarray(probs, dtype=float)


def _error(config: Config, name: str, message: str):
    return config.error(name, f"'{name}': {message}")


def uniform_poisson(topology: Topology, rate: float, lengths: np.ndarray, probabilities: np.ndarray,
                    cycles: int, max_packets: int, rng: np.random.Generator) -> Iterator[Traffic]:
    """Poisson arrivals of `rate` packets per cycle over all nodes (the superposition of the nodes' own
    processes, whose events pick their node uniformly), destinations uniform over the other nodes:
    the first `max_packets`, or all before `cycles`, a chunk at a time."""
    n = topology.n_nodes
    clock = 0.0
    produced = 0
    while True:
        k = CHUNK_PACKETS if not max_packets else min(CHUNK_PACKETS, max_packets - produced)
        if k <= 0:
            return
        times = clock + np.cumsum(rng.exponential(1.0 / rate, size=k))
        clock = float(times[-1])
        if not max_packets:
            times = times[times < cycles]
        source = rng.integers(0, n, size=len(times))
        destination = (source + rng.integers(1, n, size=len(times))) % n
        length = lengths[rng.choice(len(lengths), size=len(times), p=probabilities)]
        produced += len(times)
        yield unicast(np.floor(times).astype(np.int64), source, destination, length)
        if not max_packets and clock >= cycles:
            return


PAPER_LENGTHS = (64, 128, 512)
PAPER_LENGTH_PROBABILITIES = (0.3, 0.5, 0.2)
PAPER_MEAN_LENGTH = float(np.dot(PAPER_LENGTHS, PAPER_LENGTH_PROBABILITIES))  # 185.6 bytes
PAPER_BROADCAST_PROBABILITY = 0.001


def _poisson_times(rng: np.random.Generator, rate: float, cycles: int) -> np.ndarray:
    """Arrival times of a Poisson process of `rate` per cycle before `cycles`."""
    expected = rate * cycles
    times = np.cumsum(rng.exponential(1.0 / rate, size=int(expected + 6 * np.sqrt(expected) + 16)))
    return times[times < cycles]


def paper_destinations(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Section 5's destination law on the hexagonal mesh, with probability inversely proportional to the
    distance from the source. The mesh is node-symmetric (circulant), so it is one law over the offsets
    (dst - src) mod N: the offsets 1..N-1 and their probabilities."""
    if topology.kind != "hex":
        raise ValueError("the paper's workload is defined on the hexagonal mesh")
    n = topology.n_nodes
    offsets = np.arange(1, n)
    weights = 1.0 / topology.distance(np.zeros(n - 1, np.int64), offsets)
    return offsets, weights / weights.sum()


def paper_mean_hops(topology: Topology) -> float:
    """Mean route length of the regular packets under paper_destinations."""
    offsets, probabilities = paper_destinations(topology)
    return float(probabilities @ topology.distance(np.zeros(len(offsets), np.int64), offsets))


def paper_node_load(topology: Topology, load: float, basis: str) -> float:
    """Section 5's load as per-node generation over a link's rate. Under 'link' the load is the offered
    mean link utilisation of the regular packets (broadcasts add to it, see MODEL.md)."""
    return node_load(load, basis, topology, paper_mean_hops(topology))


def paper_workload(topology: Topology, load: float, basis: str, algorithm: int, bytes_per_cycle: int,
                   cycles: int, rng: np.random.Generator, lengths: np.ndarray,
                   length_probabilities: np.ndarray) -> Traffic:
    """The workload of paper 000's section 5 on the hexagonal mesh: Poisson generation at every node; each
    packet is a broadcast (of `algorithm`) with probability 0.001 and otherwise regular, its destination
    drawn by paper_destinations; `lengths` with `length_probabilities` for both types (the paper's: 64, 128
    and 512 bytes with 0.3, 0.5 and 0.2); `load` read under `basis` (LOAD_BASES)."""
    offsets, probabilities = paper_destinations(topology)
    n = topology.n_nodes
    rate = n * paper_node_load(topology, load, basis) * bytes_per_cycle / float(np.dot(lengths, length_probabilities))
    times = _poisson_times(rng, rate, cycles)
    k = len(times)
    source = rng.integers(0, n, size=k)
    length = lengths[rng.choice(len(lengths), size=k, p=length_probabilities)]
    is_broadcast = rng.random(k) < PAPER_BROADCAST_PROBABILITY
    offset = rng.choice(offsets, size=k, p=probabilities)
    create = np.floor(times).astype(np.int64)
    regular = ~is_broadcast
    return Traffic.concatenate([
        unicast(create[regular], source[regular], (source[regular] + offset[regular]) % n, length[regular]),
        initiations(create[is_broadcast], source[is_broadcast], algorithm, length[is_broadcast]),
    ])
