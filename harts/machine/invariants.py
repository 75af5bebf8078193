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


class RunChecks:
    def __init__(self, simulation, retried_probes: bool = False):
        self.topology = simulation.topology
        self.config = simulation.config
        # a circuit's probes may cross links several times before the last attempt's path
        self.retried_probes = retried_probes
        self.problems: list[str] = []
        self.bytes_sent = 0

    def _problem(self, count: int, text: str) -> None:
        if count and len(self.problems) < 8:
            self.problems.append(text)

    def take(self, deliveries: np.ndarray, packets: np.ndarray) -> None:
        pl, dl = packets, deliveries
        self.bytes_sent += int(pl[R.PL_BYTES_SENT].sum())
        # every byte put on a link is taken in at the far end (or swallowed by the fault there), and only once
        bad = np.nonzero(pl[R.PL_BYTES_SENT] != pl[R.PL_BYTES_RECEIVED])[0]
        if len(bad):
            i = bad[0]
            self._problem(len(bad), f"{len(bad)} packets lost or duplicated bytes on links (packet {pl[R.PL_UID, i]}: "
                                    f"sent {pl[R.PL_BYTES_SENT, i]}, received {pl[R.PL_BYTES_RECEIVED, i]})")
        own_hops = pl[R.PL_HOPS] - pl[R.PL_HOPS_INHERITED]
        if not self.retried_probes:
            bad = np.nonzero(pl[R.PL_BYTES_SENT] != own_hops * pl[R.PL_LEN])[0]
            self._problem(len(bad), f"{len(bad)} packets sent other than length x hops bytes (flits)")
        # a unicast is delivered exactly once unless a named fault dropped it, and then never
        routed = pl[R.PL_ROUTE] == R.ROUTE_DESTINATION
        dropped = pl[R.PL_DROPPED] != 0
        bad = np.nonzero(routed & (pl[R.PL_DELIVERIES] != np.where(dropped, 0, 1)))[0]
        if len(bad):
            i = bad[0]
            self._problem(len(bad), f"{len(bad)} unicast packets neither delivered exactly once nor dropped by a "
                                    f"fault (packet {pl[R.PL_UID, i]}: delivered {pl[R.PL_DELIVERIES, i]} times, "
                                    f"dropped: {bool(pl[R.PL_DROPPED, i])})")
        # ... over a shortest path: the route offsets only ever shrink
        arrived = np.nonzero(routed & ~dropped)[0]
        if len(arrived):
            shortest = self.topology.distance(pl[R.PL_SENDER, arrived], pl[R.PL_DEST, arrived])
            longer = np.count_nonzero(own_hops[arrived] != shortest)
            self._problem(longer, f"{longer} unicast packets took a path that is not a shortest one")
        # ... at its destination
        wrong = np.nonzero((dl[R.DL_ROUTE] == R.ROUTE_DESTINATION) & (dl[R.DL_NODE] != dl[R.DL_DEST]))[0]
        if len(wrong):
            i = wrong[0]
            self._problem(len(wrong), f"{len(wrong)} unicast packets delivered to the wrong node (packet "
                                      f"{dl[R.DL_UID, i]} to {dl[R.DL_NODE, i]}, destination {dl[R.DL_DEST, i]})")

    def finish(self, result, kernel_problems: list[str]) -> None:
        """The end of the run: the kernel's own end checks (its machine module's), then the NP program's."""
        self.problems.extend(kernel_problems)
        if result.logs.deliveries is not None and result.program.check is not None:
            self.problems.extend(result.program.check(result))
        if self.problems:
            raise SimulationError("invariant violated: " + "; ".join(self.problems))
