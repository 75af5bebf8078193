"""The hop records of a run: one per visit of a packet to a node, in the same layout on both kernels
(controller/records.py, HR_*), kept when a tool asks for them (``Simulation.run(hops=True)``).

A visit says where the packet came in (a receiver, or this node's NP), where it went (a transmitter, this
node's NP, or nowhere), on which virtual channels, when its head and tail came in and went out, what the
node did with it (cut it through, stored it, switched it on flit by flit, delivered it, teed it, dropped it
for a named fault, nacked its probe) and how long it waited there. Times are ticks: ``ticks_per_cycle`` a
cycle (the bytes a link moves per cycle on the cut-through kernel, 1 on the flit-level kernel).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..controller import records as R


@dataclass
class HopRecords:
    rows: np.ndarray  # HR_* rows, one column per visit, in the order the kernel wrote them
    ticks_per_cycle: int
    kernel: str  # "cut_through" or "flit"

    def __len__(self) -> int:
        return self.rows.shape[1]

    def __getitem__(self, field: int) -> np.ndarray:
        """One field of every visit (records.HR_*)."""
        return self.rows[field]

    def cycles(self, field: int) -> np.ndarray:
        """A time field of every visit, in cycles."""
        return self.rows[field] / self.ticks_per_cycle

    def of_packet(self, uid: int) -> np.ndarray:
        """The columns of one packet's visits, in the order its head got to them."""
        columns = np.nonzero(self.rows[R.HR_UID] == uid)[0]
        return columns[np.argsort(self.rows[R.HR_FIRST_IN, columns], kind="stable")]

    def uids(self) -> np.ndarray:
        """The packets that visited some node, ascending."""
        return np.unique(self.rows[R.HR_UID])

    def by_packet(self) -> Iterator[tuple[int, np.ndarray]]:
        """Every packet's uid with the columns of its visits in the order its head got to them, by uid (what
        of_packet gives, for all packets at once)."""
        order = np.lexsort((np.arange(len(self)), self.rows[R.HR_FIRST_IN], self.rows[R.HR_UID]))
        uids = self.rows[R.HR_UID, order]
        starts = np.flatnonzero(np.diff(uids, prepend=uids[:1] - 1)) if len(order) else np.zeros(0, np.int64)
        for start, end in zip(starts, np.append(starts[1:], len(order))):
            yield int(uids[start]), order[start:end]

    def path(self, uid: int) -> list[int]:
        """The nodes one packet visited, its sender first (a circuit's last attempt: the visits of probes that
        were nacked and sent again are left out)."""
        visits = self.of_packet(uid)
        visits = visits[self.rows[R.HR_ACTION, visits] != R.ACT_NACKED]
        return [int(v) for v in self.rows[R.HR_NODE, visits]]

    @staticmethod
    def empty(ticks_per_cycle: int, kernel: str) -> HopRecords:
        return HopRecords(np.zeros((R.HR_ROWS, 0), np.int64), ticks_per_cycle, kernel)
