"""Invariants, checked on every run of either kernel: every packet delivered once where it should be or
dropped by a named fault, no byte (flit) lost or duplicated, no buffer over capacity, nothing left behind.
The per-packet checks run on the logs as they are drained, so they cost no memory; the end-of-run checks
look at the machine's state (each kernel's own, in its machine module); the NP program adds its own
(Program.check) when the run kept its logs. A violation is a SimulationError naming the first offending
packet."""

from __future__ import annotations

import numpy as np

from ..controller import records as R
from ..errors import SimulationError
from . import log_sums


class RunChecks:
    def __init__(self, simulation, retried_probes: bool = False):
        self.topology = simulation.topology
        self.config = simulation.config
        # a circuit's probes may cross links several times before the last attempt's path: their bytes are not
        # length x hops
        self.retried_probes = retried_probes
        self.problems: list[str] = []
        self.bytes_sent = 0

    def _problem(self, count: int, text: str) -> None:
        if count and len(self.problems) < 8:
            self.problems.append(text)

    def take(self, deliveries: np.ndarray, packets: np.ndarray) -> None:
        pl, dl = packets, deliveries
        found = log_sums.packet_checks(self.topology, pl, dl, not self.retried_probes)
        self.bytes_sent += int(found[log_sums.CHECK_BYTES_SENT])
        # every byte put on a link is taken in at the far end (or swallowed by the fault there), and only once
        if found[log_sums.CHECK_LOST_BYTES]:
            i = found[log_sums.CHECK_LOST_BYTES_FIRST]
            self._problem(found[log_sums.CHECK_LOST_BYTES],
                          f"{found[log_sums.CHECK_LOST_BYTES]} packets lost or duplicated bytes on links (packet "
                          f"{pl[R.PL_UID, i]}: sent {pl[R.PL_BYTES_SENT, i]}, received {pl[R.PL_BYTES_RECEIVED, i]})")
        self._problem(found[log_sums.CHECK_BYTES_NOT_HOPS],
                      f"{found[log_sums.CHECK_BYTES_NOT_HOPS]} packets sent other than length x hops bytes (flits)")
        # a unicast is delivered exactly once unless a named fault dropped it, and then never
        if found[log_sums.CHECK_NOT_ONCE]:
            i = found[log_sums.CHECK_NOT_ONCE_FIRST]
            self._problem(found[log_sums.CHECK_NOT_ONCE],
                          f"{found[log_sums.CHECK_NOT_ONCE]} unicast packets neither delivered exactly once nor "
                          f"dropped by a fault (packet {pl[R.PL_UID, i]}: delivered {pl[R.PL_DELIVERIES, i]} times, "
                          f"dropped: {bool(pl[R.PL_DROPPED, i])})")
        # ... over a shortest path: the route offsets only ever shrink
        longer = found[log_sums.CHECK_NOT_SHORTEST]
        self._problem(longer, f"{longer} unicast packets took a path that is not a shortest one")
        # ... at its destination
        if found[log_sums.CHECK_WRONG_NODE]:
            i = found[log_sums.CHECK_WRONG_NODE_FIRST]
            self._problem(found[log_sums.CHECK_WRONG_NODE],
                          f"{found[log_sums.CHECK_WRONG_NODE]} unicast packets delivered to the wrong node (packet "
                          f"{dl[R.DL_UID, i]} to {dl[R.DL_NODE, i]}, destination {dl[R.DL_DEST, i]})")

    def finish(self, result, kernel_problems: list[str]) -> None:
        """The end of the run: the kernel's own end checks (its machine module's), then the NP program's."""
        self.problems.extend(kernel_problems)
        if result.logs.deliveries is not None and result.program.check is not None:
            self.problems.extend(result.program.check(result))
        if self.problems:
            raise SimulationError("invariant violated: " + "; ".join(self.problems))
