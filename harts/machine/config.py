"""Every configuration key, declared once with its default and meaning, and the loader that checks them.

A config file is YAML with the sections below; any key may be omitted and takes its default. MODEL.md
says where each timing default comes from. Errors name the file and line of the offending value.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from ..yamlsource import Located, load_located, located

PACKAGE = Path(__file__).resolve().parent.parent  # harts/


def shipped(directory: str) -> Path:
    """A directory of files that ship with harts (microcode, configs): inside the package when it was
    installed from a wheel (pyproject.toml maps them there), beside it in a source checkout, which an
    editable install runs from."""
    installed = PACKAGE / directory
    return installed if installed.is_dir() else PACKAGE.parent / directory


MICROCODE_DIR = shipped("microcode")
CONFIGS_DIR = shipped("configs")
# The engine counts time in int64 ticks (cycles x bytes per cycle) below state.NEVER = 2^62: with at most
# 2^40 cycles for any duration or creation time and 2^20 bytes per cycle, the latest tick a run can name
# (a creation time plus run.drain_cycles) stays below 2^61. 2^40 cycles take days to simulate even on an
# idle network.
MAX_CYCLES = 2**40
MAX_BYTES = 2**40
MAX_BYTES_PER_CYCLE = 2**20
MAX_PACKETS = 2**47  # traffic packets are numbered below state.NP_UID_BASE = 2^48


# The kernels a key is read by (Key.kernels): the cut-through kernel (microprograms with switching: cut_through) and
# the flit-level kernel (wormhole and circuit switching).
KERNELS = ("cut-through", "flit")
BOTH, CUT_THROUGH, FLIT = KERNELS, KERNELS[:1], KERNELS[1:]


@dataclass(frozen=True)
class Key:
    name: str  # dotted: section.key
    kind: str  # int, float, str, list, mapping; ints, numbers: lists of them, each within minimum..maximum
    default: Any
    meaning: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    above: float | None = None  # the value must be greater than this
    kernels: tuple[str, ...] = ()  # of KERNELS: those whose runs it changes (the config reference says)

    @property
    def allowed(self) -> str:
        """The values the key takes, as the config reference (docs/reference/config.md) shows them."""
        return ", ".join(self.choices) if self.choices else _bounds(self).removeprefix("in ")


KEYS = [
    Key("topology", "mapping", {"kind": "hex", "size": 5},
        "the network: {kind: hex, size: n} (the C-wrapped hexagonal mesh E-n, N = 3n(n-1)+1) | {kind: mesh, "
        "dims: [p, q]} | {kind: torus, dims: [p, q]} (any number of dims: a k-ary n-cube) | {kind: hypercube, "
        "dimension: m} | {kind: mesh_hypercube, levels: m, cube: n}", kernels=BOTH),
    Key("microcode", "str", "harts", "microprogram: a name in microcode/ or a YAML path relative to this file",
        kernels=BOTH),
    Key("np.program", "str", "kandlur_shin",
        "NP program the network processors run: a built-in name (harts/np/) or a .py path relative to this file",
        kernels=BOTH),
    Key("timing.clock_period_us", "float", 1.5, "controller clock cycle in microseconds (paper: 1.5 us)", above=0,
        kernels=BOTH),
    Key("timing.link_rate_mbytes_per_s", "float", 4.0, "peak I/O rate of a link in MBytes/s (paper: 4)", above=0,
        kernels=BOTH),
    Key("timing.idle_gap_bytes", "int", 8, "forced idle time between packets on a link, in byte times", 0, MAX_BYTES,
        kernels=CUT_THROUGH),
    # at most timing.receiver_fifo_bytes (Config.check)
    Key("timing.header_bytes", "int", 6, "bytes a receiver must hold before it can examine the header", 1,
        kernels=CUT_THROUGH),
    Key("timing.link_delay_cycles", "int", 0, "wire delay of a link in cycles", 0, MAX_CYCLES, kernels=BOTH),
    Key("timing.credit_delay_cycles", "int", 1,
        "wormhole and circuit switching: cycles from a flit leaving a buffer slot to its credit setting off back over "
        "the link, which it crosses in timing.link_delay_cycles; the upstream router may fill the slot from then on. "
        "BookSim2's credit_delay (0 there); the two together must be at least 1", 0, MAX_CYCLES, kernels=FLIT),
    Key("timing.bus_delay_cycles", "int", 1,
        "cycles from a receiver's time-sliced bus slot to the transmitter or BMU that reads it", 0, MAX_CYCLES,
        kernels=BOTH),
    Key("timing.bus_slot_bytes", "int", 12,
        "bytes a receiver moves onto the time-sliced bus per cycle (its slot); above the link rate so a "
        "receiver empties its FIFO after the header decision", 1, MAX_BYTES, kernels=CUT_THROUGH),
    Key("timing.receiver_fifo_bytes", "int", 64,
        "receiver FIFO depth: bytes that may pile up before the microprogram starts the packet streaming", 1,
        MAX_BYTES, kernels=CUT_THROUGH),
    Key("timing.bmu_setup_cycles", "int", 1,
        "cycles from a packet being whole in the BMU (or handed over by the NP) to being eligible to send", 0,
        MAX_CYCLES, kernels=CUT_THROUGH),
    Key("timing.np_send_cycles", "int", 1,
        "cycles from the NP issuing send_packet (non-blocking) to the packet being in the BMU", 0, MAX_CYCLES,
        kernels=BOTH),
    Key("timing.np_receive_cycles", "int", 0,
        "NP processing time per delivered packet that runs the NP program's procedure, serial per node", 0,
        MAX_CYCLES, kernels=BOTH),
    Key("timing.deliver_cycles", "int", 1, "cycles from a delivered packet's last byte in the BMU to the NP", 0,
        MAX_CYCLES, kernels=BOTH),
    Key("bmu.capacity_bytes", "int", 65536, "BMU storage for transit packets, in bytes", 1, MAX_BYTES,
        kernels=CUT_THROUGH),
    Key("bmu.when_full", "str", "drop",
        "a packet that must be stored in a full BMU is dropped and counted (drop), or transmitters wait until "
        "the next BMU can promise room (wait: lossless virtual cut-through, can deadlock past saturation)",
        choices=("drop", "wait"), kernels=CUT_THROUGH),
    # far more than a node can use: a mistyped number fails at once instead of allocating gigabytes of contexts
    Key("bmu.bus_interfaces", "int", 6,
        "BMU interfaces on the time-sliced bus: packets the BMU can be sending at once", 1, 1024, kernels=CUT_THROUGH),
    Key("bmu.queues", "str", "single",
        "how packets ready in the BMU wait for an interface: single (one queue in ready order; a packet whose "
        "transmitters are busy holds its interface until one frees, and those behind it wait) or per_output "
        "(such a packet goes back to wait in the queue of the transmitter it needs and frees the interface)",
        choices=("single", "per_output"), kernels=CUT_THROUGH),
    Key("routing.torus_tie", "str", "random",
        "on a torus, the way a packet routed by destination goes round a ring of even side when its destination "
        "is exactly half-way round, where both ways are shortest: drawn per packet and axis from run.seed "
        "(random, as BookSim2's dimension-order torus routing draws it) or always the + way (positive)",
        choices=("random", "positive"), kernels=BOTH),
    Key("flow.flit_bytes", "int", 6,
        "bytes per flit, a whole number of link cycles (a multiple of the bytes a link moves per cycle): the "
        "unit of wormhole and circuit switching, and of traffic.synthetic's packets on every kernel",
        1, MAX_BYTES, kernels=BOTH),
    Key("flow.virtual_channels", "int", 2, "wormhole and circuit switching: virtual channels per link", 1, 64,
        kernels=FLIT),
    Key("flow.buffer_flits", "int", 8,
        "wormhole and circuit switching: depth of every input virtual-channel buffer, in flits", 1, 2**20,
        kernels=FLIT),
    Key("flow.circuit_setup", "str", "wait",
        "circuit switching: a probe that finds its link held waits for it (wait) or releases its partial "
        "circuit and is sent again (retry)", choices=("wait", "retry"), kernels=FLIT),
    Key("flow.dateline", "str", "from_wrap",
        "wormhole with vc: dateline on a torus: which hops of an axis travel in VC class 1: the wrap-around hop "
        "and every later hop of that axis (from_wrap, HARTS's), or every hop of an axis whose route crosses the "
        "wrap-around link, from the first (whole_axis, as BookSim2's dimension-order torus routing assigns its "
        "two VC classes)", choices=("from_wrap", "whole_axis"), kernels=FLIT),
    Key("flow.context_turnaround", "str", "microcode",
        "wormhole and circuit switching: when an input's context takes its next packet after a tail has crossed "
        "the switch: once its wait_tail and done have cost their cycles (microcode, HARTS's: 3 cycles after the "
        "tail with the shipped programs) or the cycle after the tail (immediate: wait_tail and done cost no "
        "cycle, as BookSim2's input VC routes its next head the cycle after its tail's switch allocation)",
        choices=("microcode", "immediate"), kernels=FLIT),
    Key("flow.np_channels", "int", 1,
        "wormhole and circuit switching: channels between a router and its NP, each way: the NP can be sending "
        "this many packets and receiving this many at once (1: one-port; 0: one per link port, all-port)",
        0, 64, kernels=FLIT),
    Key("flow.injection_vcs", "int", 1,
        "wormhole and circuit switching: injection contexts per NP channel; each idle one takes the NP queue's "
        "next packet, starting once the channel has carried the one before, and they share the channel's one "
        "flit per cycle, picked round-robin as a link's VCs are "
        "(1: one packet at a time, HARTS's; 0: one per virtual channel, as BookSim2's injection port has a VC "
        "per VC)", 0, 64, kernels=FLIT),
    Key("flow.vc_choice", "str", "lowest",
        "wormhole and circuit switching: the VC a forward takes among the free ones its policy allows: the lowest "
        "(lowest) or the next after the last one the port gave (round_robin, as BookSim2's VC allocator turns)",
        choices=("lowest", "round_robin"), kernels=FLIT),
    Key("flow.vc_arbitration", "str", "input_order",
        "wormhole and circuit switching: which of the inputs waiting for an output's VC gets one when it is freed: "
        "each retries in input order and the lowest-numbered wins (input_order), or the first in round-robin "
        "order from the input after the one that last took a VC of that output (round_robin, as BookSim2's VC "
        "allocator grants)", choices=("input_order", "round_robin"), kernels=FLIT),
    Key("flow.vc_reuse_cycles", "int", 1,
        "wormhole and circuit switching: a VC that a tail's switch allocation releases at cycle t can be taken by a "
        "forward from cycle t + this. 1: the next cycle, as a forward takes its VC and the switch in one cycle. 2: "
        "as a router that allocates VCs one stage before the switch (BookSim2's vc_alloc_delay and "
        "sw_alloc_delay of 1 each): the head that waited for the VC is switched two cycles after the tail", 1, 64,
        kernels=FLIT),
    Key("flow.retry_cycles", "int", 8,
        "circuit switching with circuit_setup: retry: cycles a source waits, after the nack is home, before it "
        "sends the probe again", 0, MAX_CYCLES, kernels=FLIT),
    Key("traffic.synthetic.pattern", "str", "uniform",
        "destinations of the synthetic traffic (see MODEL.md, Traffic patterns): uniform, transpose, "
        "bit_complement, hotspot, tornado, neighbor, bit_reverse, shuffle, bit_rotation, diagonal or "
        "random_permutation",
        choices=("uniform", "transpose", "bit_complement", "hotspot", "tornado", "neighbor", "bit_reverse",
                 "shuffle", "bit_rotation", "diagonal", "random_permutation"), kernels=BOTH),
    Key("traffic.synthetic.rate", "float", 0.0,
        "offered load in flits (flow.flit_bytes) per node per cycle, packets made as traffic.synthetic.process "
        "says, for run.cycles (0 = no synthetic traffic)", 0, kernels=BOTH),
    Key("traffic.synthetic.process", "str", "poisson",
        "when the synthetic traffic's packets are made: poisson (each sending node a Poisson process) or "
        "bernoulli (each cycle each sending node makes one packet with a fixed probability, BookSim2's default)",
        choices=("poisson", "bernoulli"), kernels=BOTH),
    Key("traffic.synthetic.packet_flits", "ints", (8,),
        "sizes of the synthetic traffic's packets in flits (flow.flit_bytes), a list or one size; each packet's "
        "size is drawn with traffic.synthetic.packet_weights", 1, 2**20, kernels=BOTH),
    Key("traffic.synthetic.packet_weights", "numbers", (),
        "relative weight of each size of traffic.synthetic.packet_flits (empty = equal weights)", 0, kernels=BOTH),
    Key("traffic.synthetic.hotspot_nodes", "list", [],
        "hotspot pattern: the hotspot nodes ([]: the centre node of a mesh or torus, node 0 of other networks)",
        kernels=BOTH),
    Key("traffic.synthetic.hotspot_fraction", "float", 0.2,
        "hotspot pattern: probability that a packet goes to a hotspot node", 0, 1, kernels=BOTH),
    Key("traffic.packets", "list", [], "explicit unicast packets: {cycle, source, destination, length}", kernels=BOTH),
    Key("traffic.broadcasts", "list", [],
        "explicit send_packet worms (kandlur_shin NP program): {cycle, source, direction, distance, length}",
        kernels=CUT_THROUGH),
    Key("traffic.trace", "str", "",
        "file of unicast packets, a line 'cycle source destination flits' each, flits of flow.flit_bytes, in "
        "creation order, relative to this file ('' = none)", kernels=BOTH),
    Key("traffic.uniform.load", "float", 0.0,
        "offered load of uniform Poisson traffic (destinations uniform over the other nodes), read as "
        "traffic.uniform.load_basis says (0 = no uniform traffic)", 0, kernels=BOTH),
    Key("traffic.uniform.load_basis", "str", "link",
        "link: the load is the offered mean link utilisation (per-node generation rate x mean route length / "
        "links per node, over a link's peak I/O rate), so 1.0 is the network's ideal capacity; node: the "
        "load is the per-node generation rate over one link's peak I/O rate", choices=("link", "node"), kernels=BOTH),
    Key("traffic.uniform.lengths", "list", [64, 128, 512], "packet lengths in bytes (header included)", kernels=BOTH),
    Key("traffic.uniform.length_probabilities", "list", [0.3, 0.5, 0.2], "probability of each length", kernels=BOTH),
    Key("faults.crashed", "list", [], "nodes that receive and forward nothing", kernels=BOTH),
    Key("faults.byzantine", "list", [],
        "Byzantine nodes: {node, behaviour} with behaviour alter (forward an altered payload), drop, or bogus "
        "(forward, and also forge packets as the NP program says)", kernels=BOTH),
    Key("faults.dead_links", "list", [],
        "links that lose everything: {node, direction, both} (both: the opposite direction too)", kernels=BOTH),
    Key("faults.corruption_probability", "float", 0.0,
        "probability that one link transmission damages the payload (a checksum detects it)", 0, 1, kernels=BOTH),
    Key("faults.random_crashed", "int", 0, "this many more nodes, drawn at random, crash", 0, kernels=BOTH),
    Key("faults.random_byzantine", "int", 0, "this many more nodes, drawn at random, turn Byzantine", 0, kernels=BOTH),
    Key("faults.random_behaviour", "str", "alter", "behaviour of the random Byzantine nodes: alter, drop, bogus",
        choices=("alter", "drop", "bogus"), kernels=BOTH),
    Key("faults.random_dead_links", "int", 0, "this many links, drawn at random, die (both directions)", 0,
        kernels=BOTH),
    Key("faults.seed", "int", 1, "seed of the random fault draws", 0, kernels=BOTH),
    Key("faults.spare", "list", [0], "nodes never drawn as faulty (e.g. a broadcast's source)", kernels=BOTH),
    Key("reception.rule", "str", "majority",
        "how a node decides a broadcast's value: majority (of the copies by the deadline, one per incoming "
        "link) or first-valid (the first copy whose checksum holds)", choices=("majority", "first-valid"),
        kernels=CUT_THROUGH),
    Key("reception.deadline_cycles", "int", 0,
        "copies arriving later than this after the broadcast started are ignored (0: twice the broadcast's "
        "zero-load latency, see MODEL.md)", 0, MAX_CYCLES, kernels=CUT_THROUGH),
    Key("run.cycles", "int", 20000, "cycles during which uniform traffic is generated (the cut-through kernel "
        "runs to tick 2^31 - 1: cycle 357,913,941 at 6 bytes per cycle)", 1, MAX_CYCLES, kernels=BOTH),
    Key("run.packets", "int", 0,
        "generate this many uniform packets instead of using run.cycles (0 = off; needs traffic.uniform.load, and "
        "is refused beside traffic.synthetic, which runs for run.cycles)", 0, MAX_PACKETS, kernels=BOTH),
    Key("run.warmup_cycles", "int", 0,
        "packets created before this cycle are left out of the statistics (below run.cycles when uniform or "
        "synthetic traffic runs for run.cycles, or nothing would be measured)", 0, MAX_CYCLES, kernels=BOTH),
    Key("run.seed", "int", 1, "random seed; the same config and seed give identical results", 0,
        2**62, kernels=BOTH),  # the kernel's generator starts from 2 * seed + 1 in an int64
    Key("run.drain_cycles", "int", 2_000_000,
        "after the last packet is created, cycles allowed for the network to empty before giving up", 1,
        MAX_CYCLES, kernels=BOTH),
    Key("run.deadlock_cycles", "int", 100_000,
        "cycles without any packet moving, while packets wait, that count as a deadlock", 1,
        MAX_CYCLES, kernels=BOTH),
]
KEY_BY_NAME = {k.name: k for k in KEYS}
# keys that name a file relative to the config file; given by --set, relative to the working directory
FILE_KEYS = ("microcode", "np.program", "traffic.trace")


def key_of(name: str) -> tuple[Key, str | None]:
    """The key a dotted name sets, and the entry it names within a mapping key ('topology.dims': topology, 'dims');
    an unknown name is an InputError listing the keys it could have meant."""
    if name in KEY_BY_NAME:
        return KEY_BY_NAME[name], None
    head, _, entry = name.rpartition(".")
    if head in KEY_BY_NAME and KEY_BY_NAME[head].kind == "mapping":
        return KEY_BY_NAME[head], entry
    section = name.split(".")[0]
    near = [k.name for k in KEYS if k.name.split(".")[0] == section] or [k.name for k in KEYS]
    raise InputError(f"unknown key '{name}', expected one of {', '.join(near)}")


def parse_override(text: str) -> tuple[str, Any]:
    """A `--set KEY=VALUE` argument: the dotted key and its value read as YAML, as a config file would give it
    (4, 0.5, shuffle, [1, 8], {kind: torus, dims: [8, 8]}); a malformed one is an InputError."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals or not name:
        raise InputError(f"--set expects KEY=VALUE (a dotted key of the config table), got {text!r}")
    try:
        key_of(name)
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError as exc:
        raise InputError(f"--set {text}: not a YAML value ({str(exc).splitlines()[0]})") from None
    except InputError as exc:
        raise InputError(f"--set {text}: {exc.message}") from None
    return name, parsed


def with_overrides(config: Config, overrides: list[str]) -> Config:
    """The config with the `--set KEY=VALUE` arguments applied (a later one wins); a bad one is an InputError naming
    the key and what was expected. A file named on the command line is a path from the working directory."""
    parsed = dict(parse_override(text) for text in overrides)
    if not parsed:
        return config
    for name in FILE_KEYS:
        if isinstance(parsed.get(name), str) and Path(parsed[name]).is_file():
            parsed[name] = str(Path(parsed[name]).resolve())
    try:
        config = config.with_values(parsed)
    except InputError as exc:
        raise InputError(f"--set: {exc.message}") from None
    check_run_keys(config)
    return config


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
        if exact.denominator != 1 or exact > MAX_BYTES_PER_CYCLE:
            raise self.error("timing.link_rate_mbytes_per_s",
                             f"link rate x clock period must be a whole number of bytes per cycle, at most "
                             f"{bound(MAX_BYTES_PER_CYCLE)}, got {float(exact):g}")
        return int(exact)

    @property
    def topology_spec(self) -> dict:
        return self["topology"].plain()

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

    def np_program_path(self) -> Path | None:
        """The .py file of the NP program, or None for a built-in one."""
        from ..np.program import BUILT_IN
        name = self["np.program"]
        if name in BUILT_IN:
            return None
        path = self.file_relative(name)
        if not path.is_file():
            raise self.error("np.program", f"NP program {name!r} not found: expected one of {', '.join(BUILT_IN)} "
                                           f"or a .py file (looked for {path})")
        return path

    def trace_path(self) -> Path | None:
        """The traffic.trace file, or None when the config has none."""
        name = self["traffic.trace"]
        if not name:
            return None
        path = self.file_relative(name)
        if not path.is_file() or not os.access(path, os.R_OK):
            found = "is not readable" if path.is_file() else "is not a file" if path.exists() else "was not found"
            raise self.error("traffic.trace", f"'traffic.trace': expected a readable file of packets, {path} {found}")
        return path

    def check(self) -> None:
        """The rules that tie keys together (each key alone is checked as it is read)."""
        self.bytes_per_cycle  # noqa: B018 - raises on a link rate that is not whole bytes per cycle
        header, fifo = self["timing.header_bytes"], self["timing.receiver_fifo_bytes"]
        if fifo < header:
            # at the line of whichever of the two the file sets (the FIFO's if both)
            raise self.error("timing.receiver_fifo_bytes" if "timing.receiver_fifo_bytes" in self.lines
                             else "timing.header_bytes",
                             f"'timing.receiver_fifo_bytes' ({fifo}) must be at least 'timing.header_bytes' "
                             f"({header}): a receiver holds the whole header in its FIFO before it can examine it")
        self.microcode_path()
        self.np_program_path()
        self.trace_path()
        sizes, weights = self["traffic.synthetic.packet_flits"], self["traffic.synthetic.packet_weights"]
        if weights and (len(weights) != len(sizes) or not any(weights)):
            raise self.error("traffic.synthetic.packet_weights",
                             f"'traffic.synthetic.packet_weights' expects one weight per size of "
                             f"'traffic.synthetic.packet_flits' ({len(sizes)}), not all 0, got {list(weights)}")

    def with_values(self, values: dict[str, Any] | None = None, /, **overrides: Any) -> Config:
        """A copy with some keys replaced, checked as a file's are: ``values`` by dotted name
        (``{"flow.virtual_channels": 4}``), ``overrides`` with '.' written as '__' (``flow__virtual_channels=4``).
        A dotted name below a mapping key sets one entry of it (``{"topology.dims": [16, 16]}``). An unknown key or
        a bad value is an InputError naming the key and what was expected.

            for vcs in (2, 4, 8):
                result = Simulation(config.with_values({"flow.virtual_channels": vcs})).run()
        """
        given = dict(values or {})
        given.update({name.replace("__", "."): value for name, value in overrides.items()})
        checked = dict(self.values)
        lines = dict(self.lines)
        for name, value in given.items():
            key, entry = key_of(name)
            if entry is not None:
                value = {**checked[key.name].plain(), entry: value}
            checked[key.name] = _checked(key, value, InputError)
            lines.pop(key.name, None)
        config = Config(checked, self.path, lines)
        config.check()
        return config

    def with_topology(self, **spec: Any) -> Config:
        """A copy on another network: ``with_topology(kind="torus", dims=[8, 8])``."""
        return self.with_values(topology=spec)


def defaults() -> Config:
    """The config of every key's default (configs/default.yaml spells it out)."""
    return Config({k.name: _checked(k, k.default, InputError) for k in KEYS})


def hex_config(size: int, **overrides: Any) -> Config:
    """The defaults on the hexagonal mesh E-size, with some keys replaced (as ``Config.with_values``)."""
    return defaults().with_topology(kind="hex", size=size).with_values(**overrides)


# YAML 1.1 (PyYAML) reads a number with an exponent but no dot, 1e9, as a string.
_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, str) and _EXPONENT.fullmatch(value) else value


def integer(value: Any) -> int | None:
    """A YAML value as the integer the user means (12, 1e9, 1.5e3), or None (1.5, true, 'twelve')."""
    value = _number(value)
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def real(value: Any) -> float | None:
    """A YAML value as the finite number the user means (0.5, 3, 1e-3), or None."""
    value = _number(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        return None
    return float(value)


def bound(value: float) -> str:
    """A limit as people read it: 2^40 rather than 1099511627776."""
    if isinstance(value, int) and value >= 2**20 and value & (value - 1) == 0:
        return f"2^{value.bit_length() - 1}"
    return f"{value}"


def _checked(key: Key, given: Any, error: Callable[[str], InputError]) -> Any:
    """The value `given` for `key` (from a file, a Located; else plain) as the program uses it: a scalar,
    or the list or mapping as a Located, so that its readers see one form whether it came from a file (with
    lines) or not. `error(message)` makes the InputError for a bad one."""
    value = given.value if isinstance(given, Located) else given

    def fail(expected: str) -> InputError:
        shown = given.plain() if isinstance(given, Located) else given
        return error(f"'{key.name}' {expected}, got {shown!r}")

    if key.kind == "list":
        if not isinstance(value, list):
            raise fail("expects a list")
        return _numbers_read(located(given))  # checked by whoever interprets the list, with its line numbers
    if key.kind == "mapping":
        if not isinstance(value, dict):
            raise fail("expects a mapping")
        return _numbers_read(located(given))
    if key.kind in ("ints", "numbers"):
        return _listed(key, given, fail)
    if key.kind == "str":
        if not isinstance(value, str):
            raise fail("expects a string")
        if key.choices and value not in key.choices:
            raise fail(f"must be {', '.join(key.choices[:-1])} or {key.choices[-1]}")
        return value
    number = integer(value) if key.kind == "int" else real(value)
    if number is None:
        raise fail("expects an integer" if key.kind == "int" else "expects a finite number")
    if not _within(key, number):
        raise fail(f"must be {_bounds(key)}")
    return number


def _numbers_read(tree: Located) -> Located:
    """A list or mapping value with every number in it read as a scalar key's is (an integral 8.0 or 1e3 is the
    integer 8 or 1000), so that `dims: [8.0, 8]` means what `cycles: 2000.0` does to whoever checks the entries."""
    if isinstance(tree.value, dict):
        return Located({k: _numbers_read(v) for k, v in tree.value.items()}, tree.line, tree.path)
    if isinstance(tree.value, list):
        return Located([_numbers_read(v) for v in tree.value], tree.line, tree.path)
    number = integer(tree.value)
    if number is None:
        number = real(tree.value)
    return tree if number is None else Located(number, tree.line, tree.path)


def _bounds(key: Key) -> str:
    """The key's bounds as an error message says them."""
    if key.minimum is not None and key.maximum is not None:
        return f"in {bound(key.minimum)}..{bound(key.maximum)}"
    if key.minimum is not None:
        return f">= {bound(key.minimum)}"
    if key.maximum is not None:
        return f"<= {bound(key.maximum)}"
    return f"> {bound(key.above)}" if key.above is not None else ""


def _within(key: Key, number: float) -> bool:
    return (key.minimum is None or number >= key.minimum) and (key.maximum is None or number <= key.maximum) \
        and (key.above is None or number > key.above)


def _listed(key: Key, given: Any, fail: Callable[[str], InputError]) -> tuple:
    """An ints or numbers key's list as a tuple; an ints key also takes one integer as a list of one (so that
    `packet_flits: 8` keeps its meaning)."""
    value = given.value if isinstance(given, Located) else given
    ints = key.kind == "ints"
    expected = f"expects a list of {'integers' if ints else 'finite numbers'} {_bounds(key)}".rstrip() \
        + (" (or one integer)" if ints else "")
    if ints and not isinstance(value, (list, tuple)):
        value = [given]
    if not isinstance(value, (list, tuple)):
        raise fail(expected)
    read = integer if ints else real
    values = [read(item.value if isinstance(item, Located) else item) for item in value]
    if (ints and not values) or any(x is None or not _within(key, x) for x in values):
        raise fail(expected)
    return tuple(values)


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
                config.values[dotted] = _checked(KEY_BY_NAME[dotted], item, item.error)
                config.lines[dotted] = item.line
            elif any(k.name.startswith(dotted + ".") for k in KEYS):
                if not isinstance(item.value, dict):
                    raise item.error(f"'{dotted}' expects a mapping")
                walk(dotted + ".", item)
            else:
                known = sorted({k.name[len(prefix):].split(".")[0] for k in KEYS if k.name.startswith(prefix)})
                raise item.error(f"unknown key '{dotted}', expected one of {', '.join(known)}")

    walk("", root)
    config.check()
    check_run_keys(config)
    return config


def check_run_keys(config: Config) -> None:
    """The run keys a user gives that would be ignored or measure nothing, refused at their line. Checked for a
    file and its --set arguments; code that shortens a run (harts bench --cycles) may not care."""
    packets = config["run.packets"]
    uniform, synthetic = config["traffic.uniform.load"], config["traffic.synthetic.rate"]
    if packets and not uniform:
        raise config.error("run.packets", f"'run.packets' ({packets}) counts the packets of traffic.uniform, and "
                                          f"traffic.uniform.load is 0: set it, or leave run.packets out")
    if packets and synthetic:
        raise config.error("run.packets", f"'run.packets' ({packets}) ends traffic.uniform by count, but "
                                          f"traffic.synthetic runs for run.cycles: leave run.packets out to end "
                                          f"both at run.cycles")
    warmup, cycles = config["run.warmup_cycles"], config["run.cycles"]
    # uniform traffic counted by run.packets goes on past run.cycles, and is measured there
    timed = [name for name, on in (("uniform", uniform and not packets), ("synthetic", synthetic)) if on]
    if timed and warmup >= cycles:
        raise config.error("run.warmup_cycles",
                           f"'run.warmup_cycles' ({warmup}) must be less than 'run.cycles' ({cycles}): "
                           f"{' and '.join(timed)} traffic is generated only before run.cycles, so nothing would "
                           f"be measured")
