"""The front door: one configured machine, ready to run traffic, whichever kernel its switching needs.

    sim = Simulation(load_config("configs/uniform_e9.yaml"))
    result = sim.run()            # or sim.run(traffic) with traffic built by harts.machine.traffic
    result.summary()

``Simulation(config)`` reads the microprogram's ``switching`` and returns the machine that runs it: virtual
cut-through on the cut-through kernel (machine/cut_through.py), wormhole and circuit switching on the
flit-level kernel (machine/flits.py). Both take the same traffic, run the same NP programs, apply the same
faults, keep the same logs and hop records, check their invariants and return one result type
(machine/results.py). What the two share in building a run is here.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..controller import isa
from ..controller import records as R
from ..controller.microcode import Microprogram, assemble
from ..errors import InputError, SimulationError
from ..faults.fault_set import faults_from_config
from ..network import Topology, build_topology, node_count, port_count
from ..np.program import Program, load_program
from .config import Config, hex_config
from .statistics import Window
from .traffic import Traffic, TrafficSource, build_traffic, unicast

LOG_ROWS = 1 << 15  # delivery, packet and hop log rows between drains, at most
FIRST_LOG_ROWS = 1 << 12  # ... at first, at least (first_log_rows)
# The kernel returns about this often (wall seconds) to show progress and honour Ctrl-C, whatever the
# run's length or speed; numba code does not see signals.
SLICE_SECONDS = 0.2
MIN_SLICE_CYCLES = 1000
# glibc's mallopt parameters (malloc.h), and how much freed memory a process keeps for its next run (and the
# largest array taken from the heap rather than mapped on its own)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_KEPT_BYTES = 1 << 30
# node-cycles in the first slice, before the kernel's speed on the run is known: at most about 0.05 s at the rates
# bench/ measures (the flit kernel's ~20 M router-cycles/s; the cut-through kernel's E-9 at load 0.5, ~30 M), so a
# short run on a small network is one or two kernel calls rather than five doublings from MIN_SLICE_CYCLES
FIRST_SLICE_NODE_CYCLES = 1_000_000
SWITCHING_NAMES = {isa.SWITCHING_CUT_THROUGH: "cut_through", isa.SWITCHING_WORMHOLE: "wormhole",
                   isa.SWITCHING_CIRCUIT: "circuit"}


@dataclass(frozen=True)
class HeaderLayout:
    """Where each header word is: the route offsets (one per axis) first, then the segment words and the
    route-table word if the microprogram routes that way, then the microprogram's fields and the NP
    program's own fields."""

    axes: int
    segment_word: int  # -1: none
    segments: int
    table_word: int  # -1: none
    fields: dict[str, int]

    microprogram_fields: int  # the first of `fields` are the microprogram's

    @property
    def registers(self) -> int:
        """Words the microprogram may read or write: the route words and its own fields."""
        return self.axes + (1 + 3 * self.segments if self.segments else 0) + (self.table_word >= 0) \
            + self.microprogram_fields

    @property
    def words(self) -> int:
        return self.registers + len(self.fields) - self.microprogram_fields

    def route(self) -> np.ndarray:
        return np.array([self.axes, self.segment_word, self.segments, self.table_word], dtype=np.int64)


def first_log_rows(packets_known: int, most: int) -> int:
    """Rows the logs start with: a row each for the packets a run is given whole (a delivery and a packet record
    each) and an eighth more, within FIRST_LOG_ROWS..`most`. Logs that fill up are drained and doubled up to
    `most`, so a short run does not clear or map the 12 MB of logs it would never write."""
    return min(most, max(FIRST_LOG_ROWS, packets_known + packets_known // 8))


def header_layout(topology: Topology, microprogram: Microprogram, program: Program) -> HeaderLayout:
    word = topology.n_axes
    segment_word = -1
    if microprogram.segments:
        segment_word = word
        word += 1 + 3 * microprogram.segments
    table_word = -1
    if microprogram.table:
        table_word = word
        word += 1
    fields = {}
    for name in list(microprogram.fields) + [f for f in program.fields if f not in microprogram.fields]:
        fields[name] = word
        word += 1
    return HeaderLayout(topology.n_axes, segment_word, microprogram.segments, table_word, fields,
                        len(microprogram.fields))


class Simulation:
    """One configured machine: topology, microprogram, NP program, faults and parameters, ready to run traffic.

    ``Simulation(config)`` is an instance of the subclass for the microprogram's switching (a
    CutThroughSimulation or a FlitSimulation); both run traffic with ``run()`` and return a Result."""

    kernel: str  # "cut_through" or "flit"

    def __new__(cls, config: Config, microprogram: Microprogram | None = None, program: Program | None = None):
        assembled = None
        if cls is Simulation:
            assembled = microprogram or assemble(config.microcode_path())
            if assembled.switching == isa.SWITCHING_CUT_THROUGH:
                from .cut_through import CutThroughSimulation as cls
            else:
                from .flits import FlitSimulation as cls
        machine = super().__new__(cls)
        machine._assembled = assembled  # so that __init__ does not assemble it again
        return machine

    def __init__(self, config: Config, microprogram: Microprogram | None = None, program: Program | None = None):
        self.config = config
        self.microprogram = microprogram or self._assembled or assemble(config.microcode_path())
        del self._assembled
        self.program = program or load_program(config.np_program_path() or config["np.program"])
        self.nodes, self.ports = self.network_size()
        self.ticks_per_cycle = ticks_per_cycle(config, self.microprogram)
        worms = config["traffic.broadcasts"].value
        if worms and self.kernel == "flit":
            raise worms[0].error(f"a traffic.broadcasts worm is sent by direction, which the flit-level controller "
                                 f"does not route ({config['microcode']!r} switches by {self.switching}): worms run "
                                 f"on a cut-through microprogram (microcode: harts)")

    @property
    def switching(self) -> str:
        return SWITCHING_NAMES[self.microprogram.switching]

    def network_size(self) -> tuple[int, int]:
        """Nodes and ports of the config's network, from its spec alone (nothing is built yet)."""
        try:
            return node_count(self.config.topology_spec), port_count(self.config.topology_spec)
        except ValueError as exc:
            raise topology_error(self.config, str(exc)) from None

    def traffic_source(self, traffic: Traffic | TrafficSource | None, last_cycle,
                       runs_up_to: str) -> tuple[Traffic | TrafficSource, TrafficSource]:
        """The run's traffic (the config's when None) and its source. Traffic created past `last_cycle`, the last
        cycle the kernel's 32-bit rows hold, is refused before the run in one line that starts with `runs_up_to`
        (naming run.cycles when it is the config's)."""
        from_config = traffic is None
        if from_config:
            traffic = build_traffic(self.config, self.topology)
        source = TrafficSource(traffic, (), int(traffic.create.max(initial=0))) if isinstance(traffic, Traffic) \
            else traffic
        if source.horizon_cycles > last_cycle:
            text = f"{runs_up_to}, and this traffic is created until cycle {source.horizon_cycles:,}"
            raise self.config.error("run.cycles", text) if from_config else SimulationError(text)
        return traffic, source

    def _next_chunk(self, chunks: Lookahead, uids: int, window: Window) -> tuple[np.ndarray, int, bool]:
        """The next traffic table (records.TR_* rows, times in the kernel's ticks), the uid after it, and whether
        more traffic follows; what it offers in the measurement window is counted in `window`."""
        chunk = chunks.take()
        if chunk is None:
            return np.zeros((R.TR_ROWS, 0), np.int64), uids, False
        flit_bytes = self.config["flow.flit_bytes"]
        # lengths as the kernel counts them: bytes on the cut-through kernel, ceil(bytes / flit_bytes) flits at flit
        # level
        length = chunk.length if self.kernel == "cut_through" else -(-chunk.length // flit_bytes)
        window.count(chunk.create, chunk.source, length, chunk.kind)
        table = np.zeros((R.TR_ROWS, len(chunk)), np.int64)
        table[R.TR_CREATE] = chunk.create * self.ticks_per_cycle
        table[R.TR_SOURCE] = chunk.source
        table[R.TR_DEST] = chunk.destination
        table[R.TR_LENGTH] = chunk.length
        table[R.TR_KIND] = chunk.kind
        table[R.TR_DIRECTION] = chunk.direction
        table[R.TR_DISTANCE] = chunk.distance
        table[R.TR_ARGUMENT] = chunk.argument
        table[R.TR_UID] = np.arange(uids, uids + len(chunk))
        return table, uids + len(chunk), chunks.more

    def refuse_if_too_big(self, needed: int, key: str, what: str) -> None:
        """Stop before allocating if the tables would not fit in memory."""
        available = available_memory()
        if needed > 0.8 * available:
            raise self.config.error(key, f"{what} needs about {gigabytes(needed)} of memory; {gigabytes(available)} "
                                         f"is available")

    def build(self) -> None:
        """The topology, the header layout and the faults, once the size is known to fit."""
        self.topology = build_topology(self.config.topology_spec)
        self.layout = header_layout(self.topology, self.microprogram, self.program)
        for name in self.program.fields:
            if name not in self.layout.fields:
                raise self.config.error("np.program", f"NP program {self.program.name!r} needs header field {name!r}")
        self.faults = faults_from_config(self.config, self.topology)

    def run(self, traffic: Traffic | TrafficSource | None = None, check: bool = True, progress: bool = False,
            slice_cycles: int | None = None, faults=None, observer=None, keep: bool = True, hops: bool = False,
            snapshots: tuple[int, ...] = (), counters: bool = False):
        """Run traffic (default: the config's) until the network is empty; check the invariants; a Result.

        ``keep``: keep every delivery and packet record in the result (False: only what the summary needs, so
        that memory does not grow with the length of the run). ``hops``: also keep the hop records, every visit
        of every packet to a node (``Result.hops``, for packet traces). ``counters``: keep what the link map
        draws of the nodes (flit level: buffer occupancy integrals; the cut-through kernel always keeps its
        BMU's). ``snapshots``: cycles at which to copy the network's counters (cut-through kernel).
        ``progress``: a bar on stderr. ``faults`` replaces the config's faults for this run. ``observer`` (see
        harts.tools.trace) is called with a probe of the machine's state whenever the kernel returns and decides
        where it pauses. The kernel runs in slices of simulated time (``slice_cycles``; default: sized as it
        goes to about SLICE_SECONDS of wall time each) so that Ctrl-C is honoured, and progress shown, between
        slices."""
        raise NotImplementedError


def ticks_per_cycle(config: Config, microprogram: Microprogram | None = None) -> int:
    """The kernel's ticks per cycle: a link's bytes per cycle on the cut-through kernel (it times bytes), one on
    the flit-level kernel."""
    microprogram = microprogram or assemble(config.microcode_path())
    return config.bytes_per_cycle if microprogram.switching == isa.SWITCHING_CUT_THROUGH else 1


def kernel_load_notice(cached: bool) -> None:
    if not cached:
        print("harts: compiling the simulation kernel (first run only: 0.5-3 minutes on a 2-core machine)",
              file=sys.stderr, flush=True)


@functools.cache
def keep_freed_memory() -> bool:
    """Ask the C library to keep the memory a run frees for the next run in this process, instead of handing it
    back to the system (glibc's mallopt; elsewhere this does nothing and returns False). Without it every run of a
    sweep worker or a benchmark's repeats gets its tables as fresh pages, which the system maps and clears one
    by one as the kernel first touches them (about 2,100 page faults in a 20,000-cycle run of an 8x8 mesh at 0.1;
    bench/SPEED.md, the stop of 11:12-14:12). The process keeps its largest run's memory until it ends. Room a run
    may never use is mapped apart (flits.state.mapped_zeros), so that it is not cleared whole."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_MMAP_THRESHOLD, _KEPT_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, _KEPT_BYTES))


def available_memory() -> int:
    """Bytes this process can still allocate without swapping (MemAvailable), or a generous guess."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 40


def gigabytes(count: int) -> str:
    value = count / 2**30
    return f"{value:.1f} GB" if value < 1e6 else f"{value:.2g} GB"


def topology_error(config: Config, message: str) -> InputError:
    """A bad topology spec, reported at the line of the key the message names (else of the section)."""
    keys = config["topology"].value
    line = config.lines.get("topology")
    # the key quoted first in the message is the one it is about (else a key it mentions)
    quoted = sorted((message.index(f"'{key}'"), key) for key in keys if f"'{key}'" in message)
    named = [key for _, key in quoted] or [key for key in keys if key in message]
    if named and keys[named[0]].line is not None:
        line = keys[named[0]].line
    return InputError(f"'topology': {message}", config.path, line)


class Lookahead:
    """Traffic chunks, one ahead, so the kernel can be told whether more traffic follows."""

    def __init__(self, chunks):
        self._chunks = chunks
        self._next = next(chunks, None)

    @property
    def more(self) -> bool:
        return self._next is not None

    def take(self) -> Traffic | None:
        chunk = self._next
        self._next = next(self._chunks, None)
        return chunk


class Slices:
    """How much simulated time the kernel runs before it returns: about SLICE_SECONDS of wall time, resized
    after each slice from the time it took (or a fixed number of cycles)."""

    def __init__(self, ticks_per_cycle: int, fixed_cycles: int | None, never: int, nodes: int):
        self.ticks = ticks_per_cycle * (fixed_cycles or max(MIN_SLICE_CYCLES, FIRST_SLICE_NODE_CYCLES // nodes))
        self.fixed = fixed_cycles is not None
        self.minimum = MIN_SLICE_CYCLES * ticks_per_cycle
        self.never = never
        self.started = time.perf_counter()

    def start(self) -> None:
        self.started = time.perf_counter()

    def resize(self) -> None:
        if self.fixed:
            return
        seconds = time.perf_counter() - self.started
        if seconds < SLICE_SECONDS / 2:
            # capped so that the pause tick (now + slice, now < 2^61) stays an int64
            self.ticks = min(2 * self.ticks, self.never // 2)
        elif seconds > 2 * SLICE_SECONDS:
            self.ticks = max(self.minimum, self.ticks // 2)


def progress_bar(total_cycles: int):
    from tqdm import tqdm
    return tqdm(total=total_cycles, unit="cycle", unit_scale=True, desc="simulating", leave=False, file=sys.stderr)


def cycle_text(ticks: int, ticks_per_cycle: int) -> str:
    """A tick as cycles: '1,000,000', or '17 2/3' between cycle edges."""
    whole, part = divmod(ticks, ticks_per_cycle)
    fraction = Fraction(part, ticks_per_cycle)
    return f"{whole:,}" + (f" {fraction.numerator}/{fraction.denominator}" if part else "")


def load_kernel() -> None:
    """Load the compiled kernels from numba's disk cache (compiling them the first time) in this process."""
    from .config import defaults
    Simulation(hex_config(3)).run(unicast([0], [0], [1], [64]))
    Simulation(defaults().with_values(topology={"kind": "mesh", "dims": [2, 2]}, microcode="wormhole")).run(
        unicast([0], [0], [1], [6]))


__all__ = ["Simulation", "load_kernel"]
