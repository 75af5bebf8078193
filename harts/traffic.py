"""Traffic: the packets the NPs are asked to send, built before the run as plain arrays.

All randomness is drawn here from one numpy Generator seeded by run.seed, so the same config and seed
give the same packets and therefore the same run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import Config
from .state import KIND_BROADCAST, KIND_INITIATE, KIND_UNICAST
from .topology import Topology
from .yamlsource import Located


@dataclass
class Traffic:
    """Packets in creation order. Broadcast worms have destination -1, a direction and a distance;
    broadcast initiations (KIND_INITIATE) have an algorithm (harts.relay.ALGORITHMS)."""

    create: np.ndarray
    source: np.ndarray
    destination: np.ndarray
    length: np.ndarray
    kind: np.ndarray
    direction: np.ndarray
    distance: np.ndarray
    algorithm: np.ndarray

    def __len__(self) -> int:
        return len(self.create)

    @staticmethod
    def concatenate(parts: list["Traffic"]) -> "Traffic":
        fields = {name: np.concatenate([getattr(p, name) for p in parts]).astype(np.int64)
                  for name in Traffic.__dataclass_fields__}
        order = np.argsort(fields["create"], kind="stable")
        return Traffic(**{name: values[order] for name, values in fields.items()})


def _empty() -> Traffic:
    z = np.zeros(0, dtype=np.int64)
    return Traffic(z, z, z, z, z, z, z, z)


def unicast(create, source, destination, length) -> Traffic:
    create = np.asarray(create, dtype=np.int64)
    k = len(create)
    return Traffic(create, np.asarray(source, np.int64), np.asarray(destination, np.int64),
                   np.asarray(length, np.int64), np.full(k, KIND_UNICAST, np.int64),
                   np.zeros(k, np.int64), np.zeros(k, np.int64), np.zeros(k, np.int64))


def broadcast_worms(create, source, direction, distance, length) -> Traffic:
    create = np.asarray(create, dtype=np.int64)
    k = len(create)
    return Traffic(create, np.asarray(source, np.int64), np.full(k, -1, np.int64),
                   np.asarray(length, np.int64), np.full(k, KIND_BROADCAST, np.int64),
                   np.asarray(direction, np.int64), np.asarray(distance, np.int64), np.zeros(k, np.int64))


def broadcasts(create, source, algorithm, length) -> Traffic:
    """Broadcasts of a whole algorithm: the source's NP runs BCAST_INIT at `create` (in cycles)."""
    create = np.asarray(create, dtype=np.int64)
    k = len(create)
    return Traffic(create, np.asarray(source, np.int64), np.full(k, -1, np.int64),
                   np.asarray(length, np.int64), np.full(k, KIND_INITIATE, np.int64),
                   np.zeros(k, np.int64), np.zeros(k, np.int64),
                   np.broadcast_to(np.asarray(algorithm, np.int64), (k,)).copy())


def _records(config: Config, name: str, fields: dict[str, tuple[int, int]]) -> dict[str, list]:
    """Check a list of {field: int} records; ranges are (low, high) inclusive. 'item' holds each entry."""
    out: dict[str, list] = {f: [] for f in fields}
    out["item"] = []
    listing = config[name]
    items = listing.value if isinstance(listing, Located) else []
    for item in items:
        if not isinstance(item.value, dict):
            raise item.error(f"each entry of '{name}' must be a mapping with keys {', '.join(fields)}")
        for key in item.value:
            if key not in fields:
                raise item.value[key].error(f"unknown field '{key}' in '{name}', expected {', '.join(fields)}")
        for key, (low, high) in fields.items():
            if key not in item.value:
                raise item.error(f"entry of '{name}' is missing '{key}'")
            value = item.value[key]
            if isinstance(value.value, bool) or not isinstance(value.value, int) or not low <= value.value <= high:
                raise value.error(f"'{key}' must be an integer in {low}..{high}, got {value.value!r}")
            out[key].append(value.value)
        out["item"].append(item)
    return out


def build_traffic(config: Config, topology: Topology) -> Traffic:
    """All traffic of a config: explicit packets, explicit broadcast worms and uniform Poisson traffic."""
    n = topology.n_nodes
    big = 2**40
    header = config["timing.header_bytes"]
    parts = [_empty()]
    explicit = _records(config, "traffic.packets", {
        "cycle": (0, big), "source": (0, n - 1), "destination": (0, n - 1), "length": (header, big)})
    for src, dst, item in zip(explicit["source"], explicit["destination"], explicit["item"]):
        if src == dst:
            raise item.error("a packet's source and destination must differ")
    parts.append(unicast(explicit["cycle"], explicit["source"], explicit["destination"], explicit["length"]))
    worms = _records(config, "traffic.broadcasts", {
        "cycle": (0, big), "source": (0, n - 1), "direction": (0, topology.n_ports - 1),
        "distance": (1, big), "length": (header, big)})
    parts.append(broadcast_worms(worms["cycle"], worms["source"], worms["direction"], worms["distance"],
                                 worms["length"]))
    if config["traffic.uniform.load"] > 0:
        lengths, probabilities = _length_distribution(config)
        parts.append(uniform_poisson(topology, config["traffic.uniform.load"], lengths, probabilities,
                                     config.bytes_per_cycle, config["run.cycles"], config["run.packets"],
                                     np.random.default_rng(config["run.seed"])))
    return Traffic.concatenate(parts)


def _length_distribution(config: Config) -> tuple[np.ndarray, np.ndarray]:
    header = config["timing.header_bytes"]
    lengths_item = config["traffic.uniform.lengths"]
    probs_item = config["traffic.uniform.length_probabilities"]
    lengths = lengths_item.plain() if isinstance(lengths_item, Located) else lengths_item
    probs = probs_item.plain() if isinstance(probs_item, Located) else probs_item

    if not lengths or not all(isinstance(x, int) and not isinstance(x, bool) and x >= header for x in lengths):
        raise _error(config, "traffic.uniform.lengths", f"expected a list of integers >= header_bytes ({header})")
    if len(probs) != len(lengths) or not all(isinstance(x, (int, float)) and x >= 0 for x in probs) \
            or abs(sum(probs) - 1.0) > 1e-9:
        raise _error(config, "traffic.uniform.length_probabilities",
                     f"expected {len(lengths)} non-negative numbers summing to 1")
    return np.asarray(lengths, dtype=np.int64), np.asarray(probs, dtype=float)


def _error(config: Config, name: str, message: str):
    return config.error(name, f"'{name}': {message}")


PAPER_LENGTHS = (64, 128, 512)
PAPER_LENGTH_PROBABILITIES = (0.3, 0.5, 0.2)
PAPER_MEAN_LENGTH = float(np.dot(PAPER_LENGTHS, PAPER_LENGTH_PROBABILITIES))  # 185.6 bytes
PAPER_BROADCAST_PROBABILITY = 0.001


def _poisson_times(rng: np.random.Generator, rate: float, cycles: int, count: int = 0) -> np.ndarray:
    """Arrival times of a Poisson process of `rate` per cycle: the first `count`, or all before `cycles`."""
    if count:
        return np.cumsum(rng.exponential(1.0 / rate, size=count))
    expected = rate * cycles
    times = np.cumsum(rng.exponential(1.0 / rate, size=int(expected + 6 * np.sqrt(expected) + 16)))
    return times[times < cycles]


def paper_workload(topology: Topology, load: float, algorithm: int, bytes_per_cycle: int, cycles: int,
                   rng: np.random.Generator) -> Traffic:
    """The workload of the paper's section 5: Poisson generation at every node; each packet is a
    broadcast (of `algorithm`) with probability 0.001 and otherwise regular, its destination drawn with
    probability inversely proportional to its distance from the source; lengths 64, 128 and 512 bytes
    with probabilities 0.3, 0.5 and 0.2 for both types; `load` is the generation rate over the peak I/O
    rate of a link."""
    n = topology.n_nodes
    lengths = np.asarray(PAPER_LENGTHS, dtype=np.int64)
    times = _poisson_times(rng, n * load * bytes_per_cycle / PAPER_MEAN_LENGTH, cycles)
    k = len(times)
    source = rng.integers(0, n, size=k)
    length = lengths[rng.choice(len(lengths), size=k, p=PAPER_LENGTH_PROBABILITIES)]
    is_broadcast = rng.random(k) < PAPER_BROADCAST_PROBABILITY
    # The mesh is node-symmetric, so the destination law is one law over offsets (dst - src) mod N.
    offsets = np.arange(1, n)
    weights = 1.0 / np.abs(topology.routing_tags_many(np.zeros(n - 1, np.int64), offsets)).sum(axis=1)
    offset = rng.choice(offsets, size=k, p=weights / weights.sum())
    create = np.floor(times).astype(np.int64)
    regular = ~is_broadcast
    return Traffic.concatenate([
        unicast(create[regular], source[regular], (source[regular] + offset[regular]) % n, length[regular]),
        broadcasts(create[is_broadcast], source[is_broadcast], algorithm, length[is_broadcast]),
    ])


def uniform_poisson(topology: Topology, load: float, lengths: np.ndarray, probabilities: np.ndarray,
                    bytes_per_cycle: int, cycles: int, max_packets: int, rng: np.random.Generator) -> Traffic:
    """Poisson arrivals at every node, destinations uniform over the other nodes.

    ``load`` is the paper's link load: the per-node generation rate in bytes per cycle divided by the
    peak I/O rate of a link (bytes_per_cycle). The superposition of the N node processes is one Poisson
    process of N times the rate whose events pick their node uniformly, which is how it is drawn.
    """
    n = topology.n_nodes
    rate = n * load * bytes_per_cycle / float(np.dot(lengths, probabilities))  # packets per cycle, all nodes
    times = _poisson_times(rng, rate, cycles, max_packets)
    k = len(times)
    source = rng.integers(0, n, size=k)
    destination = (source + rng.integers(1, n, size=k)) % n
    length = lengths[rng.choice(len(lengths), size=k, p=probabilities)]
    return unicast(np.floor(times).astype(np.int64), source, destination, length)
