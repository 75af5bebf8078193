"""Every configuration key, declared once with its default and meaning, and the loader that checks them.

A config file is YAML with the sections below; any key may be omitted and takes its default. MODEL.md
says where each timing default comes from. Errors name the file and line of the offending value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from .errors import InputError
from .yamlsource import Located, load_located

PACKAGE = Path(__file__).resolve().parent


def shipped(directory: str) -> Path:
    """A directory of files that ship with harts (microcode, configs): inside the package when it was
    installed from a wheel (pyproject.toml maps them there), beside it in a source checkout, which an
    editable install runs from."""
    installed = PACKAGE / directory
    return installed if installed.is_dir() else PACKAGE.parent / directory


MICROCODE_DIR = shipped("microcode")
CONFIGS_DIR = shipped("configs")


@dataclass(frozen=True)
class Key:
    name: str  # dotted: section.key
    kind: str  # int, float, str, list, mapping
    default: Any
    meaning: str
    minimum: float | None = None


KEYS = [
    Key("topology", "mapping", {"kind": "hex", "size": 5},
        "the network: {kind: hex, size: n} (the C-wrapped hexagonal mesh E-n, N = 3n(n-1)+1) | {kind: mesh, "
        "dims: [p, q]} | {kind: torus, dims: [p, q]} (any number of dims: a k-ary n-cube) | {kind: hypercube, "
        "dimension: m} | {kind: mesh_hypercube, levels: m, cube: n}"),
    Key("microcode", "str", "harts", "microprogram: a name in microcode/ or a YAML path relative to this file"),
    Key("np.program", "str", "kandlur_shin",
        "NP program the network processors run: a built-in name (harts/np/) or a .py path relative to this file"),
    Key("timing.clock_period_us", "float", 1.5, "controller clock cycle in microseconds (paper: 1.5 us)", 0),
    Key("timing.link_rate_mbytes_per_s", "float", 4.0, "peak I/O rate of a link in MBytes/s (paper: 4)", 0),
    Key("timing.idle_gap_bytes", "int", 8, "forced idle time between packets on a link, in byte times", 0),
    Key("timing.header_bytes", "int", 6, "bytes a receiver must hold before it can examine the header", 1),
    Key("timing.link_delay_cycles", "int", 0, "wire delay of a link in cycles", 0),
    Key("timing.bus_delay_cycles", "int", 1,
        "cycles from a receiver's time-sliced bus slot to the transmitter or BMU that reads it", 0),
    Key("timing.bus_slot_bytes", "int", 12,
        "bytes a receiver moves onto the time-sliced bus per cycle (its slot); above the link rate so a "
        "receiver empties its FIFO after the header decision", 1),
    Key("timing.receiver_fifo_bytes", "int", 64,
        "receiver FIFO depth: bytes that may pile up before the microprogram starts the packet streaming", 1),
    Key("timing.bmu_setup_cycles", "int", 1,
        "cycles from a packet being whole in the BMU (or handed over by the NP) to being eligible to send", 0),
    Key("timing.np_send_cycles", "int", 1,
        "cycles from the NP issuing send_packet (non-blocking) to the packet being in the BMU", 0),
    Key("timing.np_receive_cycles", "int", 0,
        "NP processing time per delivered packet that runs the NP program's procedure, serial per node", 0),
    Key("timing.deliver_cycles", "int", 1, "cycles from a delivered packet's last byte in the BMU to the NP", 0),
    Key("bmu.capacity_bytes", "int", 65536, "BMU storage for transit packets, in bytes", 1),
    Key("bmu.when_full", "str", "drop",
        "a packet that must be stored in a full BMU is dropped and counted (drop), or transmitters wait until "
        "the next BMU can promise room (wait: lossless virtual cut-through, can deadlock past saturation)"),
    Key("bmu.bus_interfaces", "int", 6,
        "BMU interfaces on the time-sliced bus: packets the BMU can be sending at once", 1),
    Key("bmu.queues", "str", "single",
        "how packets ready in the BMU wait for an interface: single (one queue in ready order; a packet whose "
        "transmitters are busy holds its interface until one frees, and those behind it wait) or per_output "
        "(such a packet goes back to wait for the transmitter it needs and frees the interface)"),
    Key("traffic.packets", "list", [], "explicit unicast packets: {cycle, source, destination, length}"),
    Key("traffic.broadcasts", "list", [],
        "explicit send_packet worms (kandlur_shin NP program): {cycle, source, direction, distance, length}"),
    Key("traffic.uniform.load", "float", 0.0,
        "offered load of uniform Poisson traffic (destinations uniform over the other nodes), read as "
        "traffic.uniform.load_basis says (0 = no uniform traffic)", 0),
    Key("traffic.uniform.load_basis", "str", "link",
        "link: the load is the offered mean link utilisation (per-node generation rate x mean route length / "
        "links per node, over a link's peak I/O rate), so 1.0 is the network's ideal capacity; node: the "
        "load is the per-node generation rate over one link's peak I/O rate"),
    Key("traffic.uniform.lengths", "list", [64, 128, 512], "packet lengths in bytes (header included)"),
    Key("traffic.uniform.length_probabilities", "list", [0.3, 0.5, 0.2], "probability of each length"),
    Key("faults.crashed", "list", [], "nodes that receive and forward nothing"),
    Key("faults.byzantine", "list", [],
        "Byzantine nodes: {node, behaviour} with behaviour alter (forward an altered payload), drop, or bogus "
        "(forward, and also forge packets as the NP program says)"),
    Key("faults.dead_links", "list", [],
        "links that lose everything: {node, direction, both} (both: the opposite direction too)"),
    Key("faults.corruption_probability", "float", 0.0,
        "probability that one link transmission damages the payload (a checksum detects it)", 0),
    Key("faults.random_crashed", "int", 0, "this many more nodes, drawn at random, crash", 0),
    Key("faults.random_byzantine", "int", 0, "this many more nodes, drawn at random, turn Byzantine", 0),
    Key("faults.random_behaviour", "str", "alter", "behaviour of the random Byzantine nodes: alter, drop, bogus"),
    Key("faults.random_dead_links", "int", 0, "this many links, drawn at random, die (both directions)", 0),
    Key("faults.seed", "int", 1, "seed of the random fault draws", 0),
    Key("faults.spare", "list", [0], "nodes never drawn as faulty (e.g. a broadcast's source)"),
    Key("reception.rule", "str", "majority",
        "how a node decides a broadcast's value: majority (of the copies by the deadline, one per incoming "
        "link) or first-valid (the first copy whose checksum holds)"),
    Key("reception.deadline_cycles", "int", 0,
        "copies arriving later than this after the broadcast started are ignored (0: twice the broadcast's "
        "zero-load latency, see MODEL.md)", 0),
    Key("run.cycles", "int", 20000, "cycles during which uniform traffic is generated", 1),
    Key("run.packets", "int", 0, "generate this many uniform packets instead of using run.cycles (0 = off)", 0),
    Key("run.warmup_cycles", "int", 0, "packets created before this cycle are left out of the statistics", 0),
    Key("run.seed", "int", 1, "random seed; the same config and seed give identical results", 0),
    Key("run.drain_cycles", "int", 2_000_000,
        "after the last packet is created, cycles allowed for the network to empty before giving up", 1),
    Key("run.deadlock_cycles", "int", 100_000,
        "cycles without any packet moving, while packets wait, that count as a deadlock", 1),
]
KEY_BY_NAME = {k.name: k for k in KEYS}
# Sections that were replaced: a config that still uses one gets a one-line error naming the replacement.
REPLACED = {"mesh": "'mesh.size' was replaced by 'topology: {kind: hex, size: N}'",
            "bmu.injection_contexts": "'bmu.injection_contexts' was replaced by 'bmu.bus_interfaces'"}


@dataclass
class Config:
    """A checked configuration: ``config["timing.header_bytes"]``; ``line_of`` points back into the file."""

    values: dict[str, Any]
    path: str | None = None
    lines: dict[str, int] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def error(self, name: str, message: str) -> InputError:
        return InputError(message, self.path, self.lines.get(name))

    @property
    def bytes_per_cycle(self) -> int:
        """Bytes a link moves per clock cycle: the peak I/O rate times the cycle time (4 MB/s x 1.5 us = 6)."""
        exact = Fraction(str(self["timing.link_rate_mbytes_per_s"])) * Fraction(str(self["timing.clock_period_us"]))
        if exact.denominator != 1:
            raise self.error("timing.link_rate_mbytes_per_s",
                             f"link rate x clock period must be a whole number of bytes per cycle, got {float(exact)}")
        return int(exact)

    @property
    def topology_spec(self) -> dict:
        value = self["topology"]
        return value.plain() if isinstance(value, Located) else dict(value)

    def file_relative(self, name: str) -> Path:
        """A path given in the config, relative to the config file (or the working directory)."""
        return (Path(self.path).parent if self.path else Path.cwd()) / name

    def microcode_path(self) -> Path:
        name = self["microcode"]
        candidates = [self.file_relative(name), MICROCODE_DIR / f"{name}.yaml", MICROCODE_DIR / name]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        raise self.error("microcode", f"microprogram {name!r} not found (looked for {candidates[0]} "
                                      f"and {candidates[1]})")

    def with_values(self, **overrides: Any) -> Config:
        """A copy with some keys replaced (dotted names with '.' written as '__')."""
        values = dict(self.values)
        for key, value in overrides.items():
            name = key.replace("__", ".")
            if name not in KEY_BY_NAME:
                raise KeyError(name)
            values[name] = value
        return Config(values, self.path, self.lines)

    def with_topology(self, **spec: Any) -> Config:
        """A copy on another network: ``with_topology(kind="torus", dims=[8, 8])``."""
        return self.with_values(topology=spec)


def defaults() -> Config:
    return Config({k.name: k.default for k in KEYS})


def hex_config(size: int, **overrides: Any) -> Config:
    """The defaults on the hexagonal mesh E-size, with some keys replaced (as ``Config.with_values``)."""
    return defaults().with_topology(kind="hex", size=size).with_values(**overrides)


def _check_value(key: Key, item: Located) -> Any:
    value = item.value
    if key.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise item.error(f"'{key.name}' expects an integer, got {value!r}")
    elif key.kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise item.error(f"'{key.name}' expects a number, got {value!r}")
        value = float(value)
    elif key.kind == "str":
        if not isinstance(value, str):
            raise item.error(f"'{key.name}' expects a string, got {value!r}")
    elif key.kind == "list":
        if not isinstance(value, list):
            raise item.error(f"'{key.name}' expects a list, got {item.plain()!r}")
        return item  # checked by whoever interprets the list, with its line numbers
    elif key.kind == "mapping":
        if not isinstance(value, dict):
            raise item.error(f"'{key.name}' expects a mapping, got {item.plain()!r}")
        return item
    if key.minimum is not None and value < key.minimum:
        raise item.error(f"'{key.name}' must be >= {key.minimum}, got {value!r}")
    return value


def config_file(name: str | Path) -> Path:
    """The config file a command names: a path, or else the name of a config that ships with harts
    (``uniform_e9`` or ``uniform_e9.yaml`` for configs/uniform_e9.yaml)."""
    path = Path(name)
    if path.is_file() or path.parent != Path("."):
        return path
    for candidate in (CONFIGS_DIR / f"{path.name}.yaml", CONFIGS_DIR / path.name):
        if candidate.is_file():
            return candidate
    shipped_names = ", ".join(sorted(p.stem for p in CONFIGS_DIR.glob("*.yaml")))
    raise InputError(f"file not found, nor is it the name of a config that ships with harts ({shipped_names})",
                     str(name))


def load_config(path: str | Path) -> Config:
    """Read and check a config file (a path or a shipped config's name, see ``config_file``); unknown keys
    and mistyped values are InputErrors with the line."""
    path = config_file(path)
    root = load_located(path)
    if not isinstance(root.value, dict):
        raise root.error("expected a YAML mapping of sections (topology, microcode, np, timing, bmu, traffic, "
                         "faults, reception, run)")
    config = defaults()
    config.path = str(path)

    def walk(prefix: str, mapping: Located) -> None:
        for name, item in mapping.value.items():
            dotted = f"{prefix}{name}"
            if dotted in REPLACED:
                raise item.error(REPLACED[dotted])
            if dotted in KEY_BY_NAME:
                config.values[dotted] = _check_value(KEY_BY_NAME[dotted], item)
                config.lines[dotted] = item.line
            elif any(k.name.startswith(dotted + ".") for k in KEYS):
                if not isinstance(item.value, dict):
                    raise item.error(f"'{dotted}' expects a mapping")
                walk(dotted + ".", item)
            else:
                known = sorted({k.name[len(prefix):].split(".")[0] for k in KEYS if k.name.startswith(prefix)})
                raise item.error(f"unknown key '{dotted}', expected one of {', '.join(known)}")

    walk("", root)
    config.microcode_path()
    config.bytes_per_cycle  # noqa: B018 - raises on a non-integral link rate
    return config
