"""NP programs: the broadcast and collective algorithms the network processor runs, as data.

An NP program is a Python module with a ``PROGRAM = Program(...)`` whose procedure is a numba function
with the fixed signature ``PROCEDURE_SIGNATURE``, made by the ``@procedure`` decorator::

    @procedure
    def run(event, state, sends, system):     # -> number of rows written into `sends`
        ...

The kernel calls it on every event of a node's NP, one at a time, in time order:

* ``EVENT_INITIATE``: the traffic asks this node to start something (``event[E_ARGUMENT]``: which;
  ``E_LENGTH``, ``E_DIRECTION`` and ``E_DISTANCE`` as the traffic gives them);
* ``EVENT_DELIVERED``: a packet sent with ``NOTIFY_DELIVERED`` (a copy, a worm's tee, a unicast) reached
  this node; its header as delivered follows at ``E_HEADER``;
* ``EVENT_SENT``: the last byte of a packet this NP sent with ``NOTIFY_SENT`` has left the node;
* ``EVENT_ARRIVED``: a packet this NP sent by destination with ``NOTIFY_ARRIVED`` is in its destination's
  NP, at the tick it was delivered there (an end-to-end acknowledgment); as for ``EVENT_SENT``, the event
  gives the packet's uid, length, route and value, and at ``E_HEADER`` its header with the program's own
  fields as it sent them. Packets routed otherwise have no destination and hear nothing;
* ``EVENT_TIMER``: a timer this procedure set has expired (``E_ARGUMENT``: the value it set);
* ``EVENT_FORGE``: (only at a Byzantine node with behaviour 'bogus') what to forge in answer to the
  copy just delivered; the kernel marks the result forged and gives it the altered value.

``state`` is this node's own row of ``Program.state_words`` integers, kept between events. The procedure
writes one row of ``sends`` per packet (or timer) with the helpers below; header fields are addressed as
``system.field[i]`` for the i-th of the program's declared ``fields``. Packets sent on a delivery carry
its value and continue its path counts (hops, cut-throughs, store-and-forward restarts + 1); a re-send
is a store-and-forward step. Nothing here needs a change to the kernel: the kernel takes the procedure
as a first-class function argument and is compiled once for all programs.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import typeof, types

from ..controller.records import (
    E_ARGUMENT,
    E_CONTENTION,
    E_CORRUPT,
    E_CUTS,
    E_DIRECTION,
    E_DISTANCE,
    E_FORGED,
    E_HEADER,
    E_HOPS,
    E_KIND,
    E_LENGTH,
    E_NODE,
    E_ORIGIN,
    E_PORT,
    E_ROUTE,
    E_SENDER,
    E_SERIAL,
    E_STORES,
    E_TICK,
    E_UID,
    E_VALUE,
    NOTIFY_ARRIVED,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    ROUTE_DESTINATION,
    ROUTE_DIRECTION,
    ROUTE_SEGMENTS,
    ROUTE_TABLE,
    System,
)
from ..errors import InputError
from ..jit import cached_when_asked, njit

__all__ = [
    "EVENT_ARRIVED",
    "EVENT_DELIVERED",
    "EVENT_FORGE",
    "EVENT_INITIATE",
    "EVENT_SENT",
    "EVENT_TIMER",
    "E_ARGUMENT",
    "E_CONTENTION",
    "E_CORRUPT",
    "E_CUTS",
    "E_DIRECTION",
    "E_DISTANCE",
    "E_FORGED",
    "E_HEADER",
    "E_HOPS",
    "E_KIND",
    "E_LENGTH",
    "E_NODE",
    "E_ORIGIN",
    "E_PORT",
    "E_ROUTE",
    "E_SENDER",
    "E_SERIAL",
    "E_STORES",
    "E_TICK",
    "E_UID",
    "E_VALUE",
    "LAYOUT_AXES",
    "LAYOUT_SEGMENT_SLOTS",
    "LAYOUT_SEGMENT_WORD",
    "LAYOUT_TABLE_WORD",
    "NOTIFY_ARRIVED",
    "NOTIFY_DELIVERED",
    "NOTIFY_SENT",
    "ROUTE_DESTINATION",
    "ROUTE_DIRECTION",
    "ROUTE_SEGMENTS",
    "ROUTE_TABLE",
    "S_HEADER",
    "Program",
    "header_field",
    "load_program",
    "procedure",
    "procedure_part",
    "send_packet",
    "send_timer",
    "set_field",
    "set_segment",
]

EVENT_INITIATE = 0
EVENT_DELIVERED = 1
EVENT_SENT = 2
EVENT_TIMER = 3
EVENT_FORGE = 4
EVENT_ARRIVED = 5  # a packet this NP sent with NOTIFY_ARRIVED is in its destination's NP

# One row of `sends` per packet or timer.
S_ROUTE = 0  # ROUTE_* of the packet, or SEND_TIMER
S_PORT = 1  # the first port (ROUTE_DIRECTION: its direction)
S_DESTINATION = 2  # ROUTE_DESTINATION: where to; the kernel writes the route offsets
S_LENGTH = 3  # bytes, header included
S_DELAY = 4  # ticks after the procedure ran that the packet reaches the BMU (or the timer fires)
S_NOTIFY = 5  # NOTIFY_* bits
S_ARGUMENT = 6  # timers: the value E_ARGUMENT returns
S_HEADER = 7  # the packet's header words follow
SEND_TIMER = 4
MAX_SENDS = 64  # rows one procedure run may write

# system.route: where the route words of a header are
LAYOUT_AXES = 0  # number of route offsets (words 0..A-1)
LAYOUT_SEGMENT_WORD = 1  # word of the current segment index (-1: no segment routing)
LAYOUT_SEGMENT_SLOTS = 2  # segment slots; slot k is (port, hops, code) at SEGMENT_WORD + 1 + 3k
LAYOUT_TABLE_WORD = 3  # word of the route table number (-1: no table routing)

_I1 = types.int64[::1]
_I2 = types.int64[:, ::1]
SYSTEM_TYPE = typeof(System(np.zeros(1, np.int64), np.zeros((1, 1), np.int64), np.zeros((1, 1), np.int64),
                            np.zeros(1, np.int64), np.zeros(4, np.int64)))
PROCEDURE_SIGNATURE = types.int64(_I1, _I1, _I2, SYSTEM_TYPE)


def procedure(function):
    """Compile an NP procedure (cached on disk; it must not allocate)."""
    return njit(PROCEDURE_SIGNATURE, cache=True, _nrt=False)(function)


def procedure_part(function):
    """Compile a helper of NP procedures, inlined into them."""
    return cached_when_asked(_nrt=False, inline="always")(function)


@cached_when_asked(_nrt=False, inline="always")
def header_field(event, system, i):
    """The value of the program's i-th declared header field in a delivered packet's header."""
    return event[E_HEADER + system.field[i]]


@cached_when_asked(_nrt=False, inline="always")
def send_packet(sends, row, route, port, destination, length, notify):
    """Start a send row: a packet of `length` bytes routed by `route` (ROUTE_*), through `port` first
    (ROUTE_DIRECTION) or to `destination` (ROUTE_DESTINATION); its header words start at 0. Returns
    row + 1."""
    sends[row, S_ROUTE] = route
    sends[row, S_PORT] = port
    sends[row, S_DESTINATION] = destination
    sends[row, S_LENGTH] = length
    sends[row, S_DELAY] = 0
    sends[row, S_NOTIFY] = notify
    sends[row, S_ARGUMENT] = 0
    for w in range(S_HEADER, sends.shape[1]):
        sends[row, w] = 0
    return row + 1


@cached_when_asked(_nrt=False, inline="always")
def send_timer(sends, row, delay, value):
    """A timer: EVENT_TIMER with E_ARGUMENT = value, `delay` ticks from now. Returns row + 1."""
    sends[row, S_ROUTE] = SEND_TIMER
    sends[row, S_DELAY] = delay
    sends[row, S_ARGUMENT] = value
    return row + 1


@cached_when_asked(_nrt=False, inline="always")
def set_field(sends, row, system, i, value):
    """Set the program's i-th declared header field of a send row."""
    sends[row, S_HEADER + system.field[i]] = value


@cached_when_asked(_nrt=False, inline="always")
def set_segment(sends, row, system, k, port, hops, code):
    """Segment k of a source-routed send row: `hops` hops through `port`, with `code` for the microprogram."""
    word = S_HEADER + system.route[LAYOUT_SEGMENT_WORD]
    sends[row, word + 1 + 3 * k] = port
    sends[row, word + 2 + 3 * k] = hops
    sends[row, word + 3 + 3 * k] = code


@dataclass(frozen=True)
class Program:
    """An NP program: its procedure and what the rest of the machine needs to know about it."""

    name: str
    description: str
    procedure: object  # compiled with @procedure
    fields: tuple[str, ...] = ()  # header fields it reads or writes, by name
    state_words: int = 0  # per-node state the procedure keeps between events
    parameters: Callable | None = None  # (topology) -> int64 array: system.params
    arguments: dict = field(default_factory=dict)  # names of the initiation arguments it understands
    check: Callable | None = None  # (result) -> list of problems: the program's own end-of-run invariants
    route_tables: Callable | None = None  # (topology) -> int64 (T, N): port of route table t at node v


BUILT_IN = ("kandlur_shin", "ihc", "vrs", "frs", "vsq")


def load_program(source: str | Path) -> Program:
    """A built-in program by name (harts/np/NAME.py), or the Python file at `source` defining PROGRAM."""
    if isinstance(source, str) and source in BUILT_IN:
        return importlib.import_module(f"harts.np.{source}").PROGRAM
    path = Path(source)
    spec = importlib.util.spec_from_file_location(f"harts_np_{path.stem}", path)
    if spec is None:
        raise InputError("expected a Python file (.py) defining PROGRAM", str(path))
    module = importlib.util.module_from_spec(spec)
    # numba's disk cache finds a compiled procedure's globals through its module's name
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # whatever the user's module raises (numba's typing errors too) is bad input
        raise InputError(f"cannot load the NP program: {_summary(exc)}", str(path), _line_in(exc, path)) from None
    program = getattr(module, "PROGRAM", None)
    if not isinstance(program, Program):
        raise InputError("expected a module-level PROGRAM = harts.np.program.Program(...)", str(path))
    return program


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # an ANSI terminal's select-graphic-rendition code


def _summary(exc: Exception) -> str:
    """One line for an exception: numba's errors open with the pipeline step and close with 'During: ...',
    the cause is between. Numba colours its messages when colorama is installed: the colour codes are dropped."""
    lines = [line.strip() for line in _COLOUR.sub("", str(exc)).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].startswith("Failed in"):
        lines = [line for line in lines[1:] if not line.startswith("During")] or lines
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")


def _line_in(exc: Exception, path: Path) -> int | None:
    """The line of the user's file the exception came from (a SyntaxError's own, else its traceback's). Python
    names the file as it pleases (absolute, for a relative `path`), so the two are compared resolved."""
    mine = path.resolve()

    def same(filename: str | None) -> bool:
        return filename is not None and Path(filename).resolve() == mine

    if isinstance(exc, SyntaxError) and same(exc.filename):
        return exc.lineno
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if same(frame.filename)]
    return lines[-1] if lines else None
