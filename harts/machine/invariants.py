"""Invariants, checked on every run of either kernel: every packet delivered once where it should be or
dropped by a named fault, no byte (flit) lost or duplicated, no buffer over capacity, nothing left behind.
The per-packet checks are the kernel's, made as each delivery and packet record completes
(controller/observations.py), so they cost no memory and need no log rows; the end-of-run checks look at the
machine's state (each kernel's own, in its machine module); the NP program adds its own
(Program.check) when the run kept its logs. A violation is a SimulationError naming the first offending
packet."""

from __future__ import annotations

import numpy as np

from ..controller import observations as O
from ..errors import SimulationError


class RunChecks:
    def __init__(self):
        self.problems: list[str] = []

    def _problem(self, count: int, text: str) -> None:
        if count and len(self.problems) < 8:
            self.problems.append(text)

    def take(self, observed: np.ndarray) -> None:
        """The kernel's per-packet checks over the whole run (logs.observed: controller/observations.py); `c`: its
        counts by name."""
        c = {name: int(observed[getattr(O, "OB_" + name.upper())]) for name in (
            "lost_bytes", "lost_uid", "lost_sent", "lost_received", "bytes_not_hops", "not_once", "not_once_uid",
            "not_once_deliveries", "not_once_dropped", "not_shortest", "wrong_node", "wrong_uid", "wrong_at",
            "wrong_dest")}
        # every byte put on a link is taken in at the far end (or swallowed by the fault there), and only once
        self._problem(c["lost_bytes"], f"{c['lost_bytes']} packets lost or duplicated bytes on links (packet "
                                       f"{c['lost_uid']}: sent {c['lost_sent']}, received {c['lost_received']})")
        self._problem(c["bytes_not_hops"], f"{c['bytes_not_hops']} packets sent other than length x hops bytes (flits)")
        # a unicast is delivered exactly once unless a named fault dropped it, and then never
        self._problem(c["not_once"], f"{c['not_once']} unicast packets neither delivered exactly once nor dropped by a "
                                     f"fault (packet {c['not_once_uid']}: delivered {c['not_once_deliveries']} times, "
                                     f"dropped: {bool(c['not_once_dropped'])})")
        # ... over a shortest path: the route offsets only ever shrink
        self._problem(c["not_shortest"], f"{c['not_shortest']} unicast packets took a path that is not a shortest one")
        # ... at its destination
        self._problem(c["wrong_node"], f"{c['wrong_node']} unicast packets delivered to the wrong node (packet "
                                       f"{c['wrong_uid']} to {c['wrong_at']}, destination {c['wrong_dest']})")

    def finish(self, result, observed: np.ndarray, kernel_problems: list[str]) -> None:
        """The end of the run: the kernel's per-packet checks, its own end checks (its machine module's), then the
        NP program's."""
        self.take(observed)
        self.problems.extend(kernel_problems)
        if result.logs.deliveries is not None and result.program.check is not None:
            self.problems.extend(result.program.check(result))
        if self.problems:
            raise SimulationError("invariant violated: " + "; ".join(self.problems))
