"""One front door for the sixteen broadcasts of the five papers: ``run_broadcast(config, name, ...)`` checks the
(algorithm, config) pair against the table (table.py) before anything is built, runs the algorithm on the
machine the config describes (its microprogram picks the kernel), and returns a BroadcastOutcome: the
summary every broadcast gives (latency, copies per node, the contention certificate), its copies, and,
under faults, which non-faulty nodes the message reached.

Each paper's own reading of its runs stays in its module: paper 000's trees (kandlur_shin.py: Table I's
transmissions and cut-throughs, the marked copies), the send plans of papers 002-004 held against their
functional model (plans.py), and paper 004's timing against its formulas (torus.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..controller import records as R
from ..errors import InputError
from ..faults.fault_set import faults_from_config, silenced_source
from ..machine.config import Config
from ..machine.results import Result
from ..network.build import build_topology
from . import kandlur_shin, plans, torus
from .table import Broadcast, check_broadcast

DEFAULT_LENGTH = {"000": 64, "002": 100, "003": 100, "004": torus.DEFAULT_LENGTH}  # bytes for 000, else flits


@dataclass
class BroadcastOutcome:
    """One broadcast run: the algorithm's row of the table, and its paper's reading of the run."""

    algorithm: Broadcast
    run: kandlur_shin.BroadcastRun | plans.PlanRun | torus.TorusBroadcast
    source: int

    @property
    def result(self) -> Result:
        """The machine's run (its logs, hop records, counters)."""
        return self.run.run.result if isinstance(self.run, torus.TorusBroadcast) else self.run.result

    @property
    def plan_run(self) -> plans.PlanRun | None:
        return self.run.run if isinstance(self.run, torus.TorusBroadcast) else \
            self.run if isinstance(self.run, plans.PlanRun) else None

    def summary(self) -> dict:
        """The paper's summary; on a faulty network also which nodes are faulty and how many of the others the
        message reached, since copies, latency and contention are then of the reached ones only."""
        data = self.run.summary()
        faults = self.result.faults
        if faults.any():
            receivers = faults.node_fault == R.FAULT_NONE
            receivers[self.source] = False
            data["faulty_nodes"] = faults.faulty_nodes.tolist()
            data["dead_links"] = int(faults.dead_transmitters.sum())  # directed
            data["reached_nodes"] = int(self.reached()[receivers].sum())
            data["non_faulty_receivers"] = int(receivers.sum())
        return data

    def listing(self) -> dict:
        """What `--json` adds: every copy with its path (paper 004: every send with its times)."""
        if isinstance(self.run, torus.TorusBroadcast):
            return {"sends": [{"sender": s.sender, "destination": s.destination, "piece": s.piece, "phase": step,
                               "created_cycles": times[0], "delivered_cycles": times[1], "hops": times[2]}
                              for s, step, times in zip(self.run.run.plan.sends, self.run.steps, self.run.sends)
                              if times is not None]}
        if isinstance(self.run, plans.PlanRun):
            return {"copies": [{"node": c.node, "piece": c.piece, "step": c.step, "arrival_cycles": c.arrival,
                                "sender": c.sender, "path": list(c.path)}
                               for c in sorted(self.run.copies, key=lambda c: (c.arrival, c.node, c.piece))]}
        return {"copies": [{"node": c.node, "arrival_cycles": float(c.arrival), "path": list(c.path),
                            "transmissions": c.transmissions, "cut_throughs": c.cut_throughs, "marked": c.marked,
                            "contention_free": c.contention == 0}
                           for c in sorted(self.run.copies, key=lambda c: (c.arrival, c.node))]}

    def reached(self) -> np.ndarray:
        """Per node, whether it got the whole message (every piece) with the source's value and an intact
        payload: what a broadcast that claims no fault tolerance delivers under faults."""
        result = self.result
        n = result.topology.n_nodes
        dl = result.deliveries
        own = dl[R.DL_UID] >= R.NP_UID_BASE  # the broadcast's own packets (the background is traffic)
        good = own & (dl[R.DL_VALUE] == R.VALUE_TRUE) & (dl[R.DL_CORRUPT] == 0)
        plan_run = self.plan_run
        if plan_run is None:
            got = np.zeros(n, bool)
            got[dl[R.DL_NODE, good]] = True
        else:
            pieces = np.array([send.piece for send in plan_run.plan.sends], np.int64)
            piece = pieces[result.header("send")[good]]
            have = np.zeros((n, plan_run.plan.pieces), bool)
            have[dl[R.DL_NODE, good], piece] = True
            got = have.all(axis=1)
        got[self.source] = True
        return got


def check_packet_length(config: Config, length: int, command: str = "harts broadcast") -> None:
    """A cut-through broadcast's packet must hold its header and fit in a BMU, which stores it whenever it
    cannot cut through."""
    header, capacity = config["timing.header_bytes"], config["bmu.capacity_bytes"]
    if length < header:
        raise InputError(f"{command}: --length must be at least the header ({header} bytes), got {length}")
    if length > capacity:
        raise InputError(f"{command}: --length must be at most bmu.capacity_bytes ({capacity}): every packet must "
                         f"fit in a BMU, which stores it whenever it cannot cut through; got {length}")


def run_broadcast(config: Config, name: str, source: int = 0, length: int | None = None, packets: int | None = None,
                  variant: str | None = None, partition: str | None = None, at_cycle: int | None = None,
                  faults=None, hops: bool = False, counters: bool = False, progress: bool = False,
                  cost=None, observer=None) -> BroadcastOutcome:
    """One broadcast of `name` from `source` over the config's own traffic (if any), starting at
    run.warmup_cycles unless `at_cycle` says otherwise. `length` in bytes for paper 000, in flits for the others
    (default: DEFAULT_LENGTH); `packets` and `variant` are paper 004's, `partition` PCP's. `faults` replaces the
    config's; `hops`, `counters` and `observer` keep what the packet trace, the link map and a waveform need
    (plans keep hop records always: their routes are checked from them); `cost` is paper 004's alpha, delta and
    tau if already measured. Refuses a misfit pair, or an option the algorithm does not take, in one line."""
    if name not in ("tiling", "dc", "htree") and (packets is not None or variant is not None):
        raise InputError(f"--packets and --variant are for tiling, dc and htree, not {name}")
    if partition is not None and name != "pcp":
        raise InputError(f"--partition is PCP's choice of sides, not {name}'s")
    row = check_broadcast(config, name)
    topology = build_topology(config.topology_spec)
    if not 0 <= source < topology.n_nodes:
        raise InputError(f"--source must be a node of {topology.name} (0..{topology.n_nodes - 1}), got {source}")
    if faults is None:  # the config's: a source they silence is a mistake (a trial's is a data point)
        silenced = silenced_source(config, faults_from_config(config, topology), topology, source)
        if silenced is not None:
            raise silenced
    length = DEFAULT_LENGTH[row.paper] if length is None else length
    if row.paper == "000":
        check_packet_length(config, length)
        run = kandlur_shin.run_broadcast(config, name, source, length, at_cycle, progress, faults, hops, counters,
                                         observer)
    elif row.paper == "004":
        run = torus.run_torus_broadcast(config, name, source, length, packets, variant, at_cycle, cost, faults,
                                        counters, progress, observer)
    else:
        plan = plans.make_plan(topology, name, source, partition)
        run = plans.run_plan(config, plan, length, at_cycle, progress, faults, counters, observer)
    return BroadcastOutcome(row, run, source)
