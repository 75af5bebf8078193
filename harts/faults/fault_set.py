"""Faults: which nodes crash or turn Byzantine, which links are dead, how often a link damages a payload.

Given explicitly in a config (`faults.crashed`, `faults.byzantine`, `faults.dead_links`) or drawn at
random with a seed (`faults.random_*`); `faults.spare` lists nodes that are never drawn (the source of
a broadcast under study, typically).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..controller import records as R
from ..errors import InputError
from ..machine.config import Config
from ..network import Topology
from ..yamlsource import Located

BEHAVIOURS = {"alter": R.FAULT_ALTER, "drop": R.FAULT_DROP, "bogus": R.FAULT_BOGUS}


@dataclass
class FaultSet:
    node_fault: np.ndarray  # FAULT_* per node
    dead_transmitters: np.ndarray  # 1 per (node * ports + direction) whose link is dead
    corruption_probability: float = 0.0
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def none(topology: Topology) -> FaultSet:
        return FaultSet(np.zeros(topology.n_nodes, np.int64), np.zeros(topology.n_nodes * topology.n_ports, np.int64))

    @property
    def faulty_nodes(self) -> np.ndarray:
        return np.nonzero(self.node_fault != R.FAULT_NONE)[0]

    def any(self) -> bool:
        return bool(self.node_fault.any() or self.dead_transmitters.any() or self.corruption_probability > 0)

    def kill_link(self, topology: Topology, node: int, direction: int, both: bool) -> None:
        self.dead_transmitters[node * topology.n_ports + direction] = 1
        if both:
            other = int(topology.neighbours[node, direction])
            self.dead_transmitters[other * topology.n_ports + int(topology.opposite[direction])] = 1

    def copy(self) -> FaultSet:
        return FaultSet(self.node_fault.copy(), self.dead_transmitters.copy(), self.corruption_probability,
                        list(self.notes))


def random_faults(topology: Topology, rng: np.random.Generator, crashed: int = 0, byzantine: int = 0,
                  behaviour: str = "alter", dead_links: int = 0, spare=(0,)) -> FaultSet:
    """Distinct random nodes crash or turn Byzantine (never those in `spare`); random links die (both ways)."""
    faults = FaultSet.none(topology)
    candidates = np.setdiff1d(np.arange(topology.n_nodes), np.asarray(spare, dtype=np.int64))
    chosen = rng.choice(candidates, size=crashed + byzantine, replace=False)
    faults.node_fault[chosen[:crashed]] = R.FAULT_CRASH
    faults.node_fault[chosen[crashed:]] = BEHAVIOURS[behaviour]
    links = topology.links()
    for row in rng.choice(len(links), size=dead_links, replace=False):
        faults.kill_link(topology, int(links[row, 0]), int(links[row, 1]), both=True)
    return faults


def faults_from_config(config: Config, topology: Topology) -> FaultSet:
    n = topology.n_nodes
    faults = FaultSet.none(topology)
    for item in _items(config, "faults.crashed"):
        faults.node_fault[_node(item, n)] = R.FAULT_CRASH
    for item in _items(config, "faults.byzantine"):
        if not isinstance(item.value, dict) or set(item.value) != {"node", "behaviour"}:
            raise item.error("each entry of 'faults.byzantine' must be {node, behaviour}")
        behaviour = item.value["behaviour"]
        if behaviour.value not in BEHAVIOURS:
            raise behaviour.error(f"'behaviour' must be one of {', '.join(BEHAVIOURS)}, got {behaviour.value!r}")
        faults.node_fault[_node(item.value["node"], n)] = BEHAVIOURS[behaviour.value]
    for item in _items(config, "faults.dead_links"):
        if not isinstance(item.value, dict) or not {"node", "direction"} <= set(item.value) <= \
                {"node", "direction", "both"}:
            raise item.error("each entry of 'faults.dead_links' must be {node, direction[, both]}")
        direction = item.value["direction"]
        if isinstance(direction.value, bool) or not isinstance(direction.value, int) or \
                not 0 <= direction.value < topology.n_ports:
            raise direction.error(f"'direction' must be 0..{topology.n_ports - 1}, got {direction.value!r}")
        both = item.value.get("both")
        if both is not None and not isinstance(both.value, bool):
            raise both.error("'both' must be true or false")
        node = _node(item.value["node"], n)
        if topology.neighbours[node, direction.value] < 0:
            raise direction.error(f"node {node} has no link in direction {direction.value}")
        faults.kill_link(topology, node, direction.value, bool(both and both.value))
    spare = [_node(item, n) for item in _items(config, "faults.spare")]
    crashed, byzantine = config["faults.random_crashed"], config["faults.random_byzantine"]
    dead_links = config["faults.random_dead_links"]
    if crashed or byzantine or dead_links:
        candidates = n - len(set(spare) | set(faults.faulty_nodes.tolist()))
        if crashed + byzantine > candidates:
            name = "faults.random_byzantine" if byzantine else "faults.random_crashed"
            raise config.error(name, f"'faults.random_crashed' + 'faults.random_byzantine' ({crashed + byzantine}) "
                                     f"must be at most {candidates}: the nodes of {topology.name} that are not "
                                     f"spare or faulty already")
        if dead_links > len(topology.links()):
            raise config.error("faults.random_dead_links",
                               f"'faults.random_dead_links' ({dead_links}) must be at most "
                               f"{len(topology.links())}, the (directed) links of {topology.name}")
        drawn = random_faults(topology, np.random.default_rng(config["faults.seed"]), crashed, byzantine,
                              config["faults.random_behaviour"], dead_links, spare=spare + list(faults.faulty_nodes))
        faults.node_fault = np.maximum(faults.node_fault, drawn.node_fault)
        faults.dead_transmitters |= drawn.dead_transmitters
    faults.corruption_probability = config["faults.corruption_probability"]
    return faults


def _items(config: Config, name: str) -> list[Located]:
    return config[name].value


def _node(item: Located, n: int) -> int:
    if isinstance(item.value, bool) or not isinstance(item.value, int) or not 0 <= item.value < n:
        raise item.error(f"expected a node number 0..{n - 1}, got {item.value!r}")
    return item.value


# The keys that make a config faulty: node and link faults (given or drawn), then damaged payloads.
NODE_AND_LINK_FAULT_KEYS = ("faults.crashed", "faults.byzantine", "faults.dead_links", "faults.random_crashed",
                            "faults.random_byzantine", "faults.random_dead_links")
FAULT_KEYS = (*NODE_AND_LINK_FAULT_KEYS, "faults.corruption_probability")


def fault_keys(config: Config, keys: tuple[str, ...] = FAULT_KEYS) -> list[str]:
    """Those of `keys` the config sets to a fault: a list that is not empty, or a number that is not 0."""
    return [name for name in keys
            if (config[name].value if isinstance(config[name], Located) else config[name])]


def refuse_faults(config: Config, keys: tuple[str, ...], needs: str, advice: str) -> None:
    """If the config sets any of `keys`: an InputError at the line of the first, '`needs` a fault-free network, and
    this config has faults (the keys): `advice`'."""
    found = fault_keys(config, keys)
    if found:
        raise config.error(found[0], f"{needs} a fault-free network, and this config has faults "
                                     f"({', '.join(found)}): {advice}")


def without_faults(config: Config) -> Config:
    """The same machine with no faults."""
    return config.with_values({name: [] if isinstance(config[name], Located) else 0 for name in FAULT_KEYS})


def silenced_source(config: Config, faults: FaultSet, topology: Topology, source: int) -> InputError | None:
    """Why a broadcast from `source` could reach no other node under the config's `faults`, at the line of the key
    that says so; or None. It reaches none when it crashed, or when every link out of it is dead or leads to a
    crashed node (a live neighbour is reached, or the fault is elsewhere)."""
    if faults.node_fault[source] == R.FAULT_CRASH:
        given = any(item.value == source for item in _items(config, "faults.crashed"))
        key = "faults.crashed" if given else "faults.random_crashed"
        return config.error(key, f"the source, node {source}, is crashed ({key}): a broadcast from it reaches no "
                                 f"node; choose another --source")
    ports = topology.n_ports
    ways_out = [(port, int(node)) for port, node in enumerate(topology.neighbours[source]) if node >= 0]
    if all(faults.dead_transmitters[source * ports + port] or faults.node_fault[node] == R.FAULT_CRASH
           for port, node in ways_out):
        keys = fault_keys(config, ("faults.dead_links", "faults.random_dead_links", "faults.crashed",
                                   "faults.random_crashed"))
        return config.error(keys[0], f"the source, node {source}, is cut off: every link out of it is dead or leads "
                                     f"to a crashed node ({', '.join(keys)}), so a broadcast from it reaches no "
                                     f"node; choose another --source")
    return None
