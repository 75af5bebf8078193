"""Traffic read from a trace file (traffic.trace): unicast packets, one a line, streamed a block of lines at a time.

A line is ``cycle source destination flits``: four integers separated by spaces, tabs or commas. ``#`` starts a
comment that runs to the end of its line; blank lines are skipped. Cycles never decrease from one packet to the
next; nodes are 0..N-1 and a packet's source and destination differ; a packet is ``flits`` flits of
flow.flit_bytes, 1..2^20 of them, and must fit in a BMU (bmu.capacity_bytes) and hold a header
(timing.header_bytes) as an explicit packet must.

The file is never held whole: ``TraceFile.chunks`` parses a block of lines at once with numpy and hands the
simulation one chunk of traffic per block, and ``TraceFile.horizon`` reads the last packet from the file's end,
so a run's memory does not grow with the trace's length. A block that numpy refuses, or whose values break a
rule, is read again line by line to name the first bad line.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .config import MAX_CYCLES, bound
from .traffic import Traffic, unicast

BLOCK_LINES = 1 << 16
MAX_FLITS = 2**20
TAIL_BYTES = 1 << 12  # read from the end for the last packet, doubled while it holds only comments
_COMMAS = bytes.maketrans(b",", b" ")
_INTEGER = re.compile(rb"[+-]?[0-9]+")


@dataclass(frozen=True)
class TraceFile:
    """A trace file of a network of `nodes` nodes, read for a machine of these flit, header and BMU sizes."""

    path: Path
    nodes: int
    flit_bytes: int
    header_bytes: int
    capacity_bytes: int
    block_lines: int = BLOCK_LINES

    def chunks(self) -> Iterator[Traffic]:
        """The trace's packets in creation order, one chunk per block of lines that holds any."""
        previous, number = 0, 1  # the creation cycle of the packet before the block; the block's first line
        with open(self.path, "rb") as handle:
            while lines := list(itertools.islice(handle, self.block_lines)):
                table = self._block(lines, number, previous)
                number += len(lines)
                if len(table):
                    previous = int(table[-1, 0])
                    yield unicast(table[:, 0], table[:, 1], table[:, 2], table[:, 3] * self.flit_bytes)

    def horizon(self) -> int:
        """The creation cycle of the last packet (0 if there is none), from the last lines of the file."""
        with open(self.path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            size = TAIL_BYTES
            while True:
                start = max(0, end - size)
                handle.seek(start)
                tail = handle.read(end - start)
                stop = len(tail)
                # the first line of the tail may have begun before it, unless the tail is the whole file
                while (begin := tail.rfind(b"\n", 0, stop) + 1) or start == 0:
                    packet = self._line(tail[begin:stop], 0)
                    if isinstance(packet, str):
                        raise InputError(packet, str(self.path), _line_number(handle, start + begin))
                    if packet is not None:
                        return packet[0]
                    if begin == 0:
                        return 0
                    stop = begin - 1
                size *= 2

    def _block(self, lines: list[bytes], number: int, previous: int) -> np.ndarray:
        """The packets of a block of lines whose first is line `number`, as rows (cycle, source, destination,
        flits), after a packet created at cycle `previous`."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a block of only comments and blank lines has "no data"
                table = np.loadtxt(io.BytesIO(b"".join(lines).translate(_COMMAS)), dtype=np.int64, comments="#",
                                   ndmin=2)
        except ValueError:
            return self._line_by_line(lines, number, previous)
        if not len(table):
            return np.zeros((0, 4), np.int64)
        if table.shape[1] != 4 or not self._sound(table, previous):
            return self._line_by_line(lines, number, previous)
        return table

    def _sound(self, table: np.ndarray, previous: int) -> bool:
        """Whether every row keeps the rules that _line checks line by line."""
        cycle, source, destination, flits = table.T
        nodes = self.nodes
        return bool(cycle[0] >= previous and (cycle[1:] >= cycle[:-1]).all() and cycle[-1] <= MAX_CYCLES
                    and ((source >= 0) & (source < nodes) & (destination >= 0) & (destination < nodes)).all()
                    and (source != destination).all()
                    and ((flits >= 1) & (flits <= MAX_FLITS) & (flits * self.flit_bytes <= self.capacity_bytes)
                         & (flits * self.flit_bytes >= self.header_bytes)).all())

    def _line_by_line(self, lines: list[bytes], number: int, previous: int) -> np.ndarray:
        rows = []
        for offset, text in enumerate(lines):
            packet = self._line(text, previous)
            if isinstance(packet, str):
                raise InputError(packet, str(self.path), number + offset)
            if packet is not None:
                rows.append(packet)
                previous = packet[0]
        return np.asarray(rows, np.int64).reshape(-1, 4)

    def _line(self, text: bytes, previous: int) -> tuple[int, int, int, int] | str | None:
        """A line's packet (cycle, source, destination, flits), None for a line without one, or what was expected
        of it, given the creation cycle of the packet before it."""
        fields = text.split(b"#", 1)[0].translate(_COMMAS).split()
        if not fields:
            return None
        if len(fields) != 4 or not all(_INTEGER.fullmatch(field) for field in fields):
            shown = text.rstrip(b"\r\n").decode("utf-8", "replace")
            return f"expected four integers 'cycle source destination flits', got {shown!r}"
        cycle, source, destination, flits = (int(field) for field in fields)
        if not 0 <= cycle <= MAX_CYCLES:
            return f"cycle {cycle}: expected a cycle in 0..{bound(MAX_CYCLES)}"
        if cycle < previous:
            return f"cycle {cycle} is before the previous packet's, {previous}: expected packets in creation order"
        for name, node in (("source", source), ("destination", destination)):
            if not 0 <= node < self.nodes:
                return f"{name} {node}: expected a node in 0..{self.nodes - 1}"
        if source == destination:
            return f"source and destination are both {source}: expected a packet to another node"
        if not 1 <= flits <= MAX_FLITS:
            return f"flits {flits}: expected 1..{bound(MAX_FLITS)}"
        length = flits * self.flit_bytes
        if length > self.capacity_bytes:
            return (f"a packet of {flits} flits is {length} bytes (flow.flit_bytes {self.flit_bytes}), more than "
                    f"bmu.capacity_bytes ({self.capacity_bytes}): every packet must fit in a BMU")
        if length < self.header_bytes:
            return (f"a packet of {flits} flits is {length} bytes (flow.flit_bytes {self.flit_bytes}), less than "
                    f"timing.header_bytes ({self.header_bytes}): every packet holds its header")
        return cycle, source, destination, flits


def _line_number(handle, offset: int) -> int:
    """The number of the line that starts at byte `offset` (counting the lines before it: only to name a bad
    one)."""
    handle.seek(0)
    newlines = 0
    while offset > 0:
        block = handle.read(min(offset, 1 << 20))
        newlines += block.count(b"\n")
        offset -= len(block)
    return newlines + 1
