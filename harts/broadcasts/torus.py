"""Paper 004's broadcasts (tiling, divide-and-conquer, H-trees) on the circuit-switched controller.

The algorithm's send plan runs through ``plans.run_plan`` on the config's circuit microprogram (it must
follow routes in the header, as circuit.yaml does), which checks every route, copy and phase of the run
against the plan. Here the run is also held against the plan's timing: alpha, delta and tau are
measured by ``harts calibrate`` on a 5x5 torus with the config's timing, and

- on an idle network every send must be created and delivered at the cycles ``circuit_schedule`` (the
  functional model: each send takes alpha + h delta + L tau from what it waits for) gives, or the run
  raises;
- ``contention_free`` says whether every send of the broadcast took exactly alpha + h delta + L tau,
  that is, whether no probe ever waited for a link or an NP channel (it can be false only under other
  traffic);
- ``formula_cycles`` is the paper's own expression for the algorithm, evaluated with the measured terms.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from fractions import Fraction

from ..controller import isa
from ..controller.microcode import assemble
from ..errors import InputError, SimulationError
from ..machine.config import Config
from ..machine.simulation import available_memory, gigabytes
from ..network.build import build_topology, node_count
from ..np.send_plan import circuit_schedule, send_steps
from ..tools.calibrate import LinearCost, measure_linear_cost
from .plans import PlanRun, run_plan

ALGORITHMS = {"tiling": "tiling", "dc": "divide_and_conquer", "htree": "h_tree"}  # name -> module of harts.np
DEFAULT_LENGTH = 100  # flits
# A plan's sends, their routes and the run's copies are Python objects: the tiling on 625x625 (390,624 sends)
# peaked at 4.1 GB, 10.6 kB a send; a plan that would not fit is refused before it is built.
BYTES_PER_SEND = 12_000


@dataclass
class TorusBroadcast:
    run: PlanRun
    cost: LinearCost
    packets: int  # the message goes as this many packets (per sub-message for the H-trees)
    packet_flits: int
    formula: int  # the paper's expression, in cycles, with the measured alpha, delta and tau
    # (created, delivered, hops) of every send, from the broadcast's start; None where a fault stopped it
    sends: list[tuple[int, int, int] | None]

    @property
    def steps(self) -> list[int]:
        """Each send's phase."""
        return send_steps(self.run.plan)

    @property
    def sends_took_their_cost(self) -> bool:
        """Whether every send that arrived took exactly alpha + h delta + L tau: what the contention certificate
        says of a circuit that never waited (the tests hold the two together)."""
        return all(send[1] - send[0] == self.cost.send(send[2], self.packet_flits)
                   for send in self.sends if send is not None)

    def phase_ends(self) -> list[int]:
        """Cycle (from the start) the last send of each phase was delivered, phase 1 first."""
        ends = [0] * max((c.step for c in self.run.copies), default=0)
        for copy in self.run.copies:
            ends[copy.step - 1] = max(ends[copy.step - 1], copy.arrival)
        return ends

    def critical_chain(self) -> list[int]:
        """The sends from the start to the last delivery, each waiting for the one before it (its copy of
        the message, or its own earlier send), first send first."""
        plan = self.run.plan
        arrived = [k for k, send in enumerate(self.sends) if send is not None]
        last = max(arrived, key=lambda k: (self.sends[k][1], -k))
        chain = [last]
        while plan.sends[chain[-1]].parent >= 0:
            chain.append(plan.sends[chain[-1]].parent)
        return chain[::-1]

    def terms(self) -> dict:
        """Paper 004's three components of the time to the last delivery, counted on the critical chain:
        alpha times its sends, delta times its hops, tau times its flits. Their sum is the completion time
        exactly when no send on the chain waited for a link."""
        chain = self.critical_chain()
        starts, hops, flits = len(chain), sum(self.sends[k][2] for k in chain), len(chain) * self.packet_flits
        return {"alpha_count": starts, "delta_count": hops, "tau_count": flits,
                "alpha_cycles": starts * self.cost.alpha, "delta_cycles": hops * self.cost.delta,
                "tau_cycles": flits * self.cost.tau,
                "sum_cycles": starts * self.cost.alpha + hops * self.cost.delta + flits * self.cost.tau}

    def summary(self) -> dict:
        return {**self.run.summary(), "phases": self.run.steps, "completion_cycles": self.run.latency,
                "formula_cycles": self.formula, "alpha_cycles": self.cost.alpha, "delta_cycles_per_hop": self.cost.delta,
                "tau_cycles_per_flit": self.cost.tau, "packets": self.packets, "packet_flits": self.packet_flits,
                "phase_end_cycles": self.phase_ends()}


def run_torus_broadcast(config: Config, algorithm: str, source: int = 0, length: int = DEFAULT_LENGTH,
                        packets: int | None = None, variant: str | None = None, at_cycle: int | None = None,
                        cost: LinearCost | None = None, faults=None, counters: bool = False,
                        progress: bool = False, observer=None) -> TorusBroadcast:
    """One broadcast over the config's traffic (if any). `packets` (D&C, H-trees): how many packets the
    message (each sub-message, for the H-trees) is cut into; by default the paper's B_opt, rounded. `faults`
    replaces the config's: a faulty network leaves some sends undelivered, and then only those that arrived
    are timed (no idle schedule, no critical chain)."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown torus broadcast {algorithm!r}, expected one of {', '.join(ALGORITHMS)}")
    module = importlib.import_module(f"harts.np.{ALGORITHMS[algorithm]}")
    _check_room(node_count(config.topology_spec), 1)
    if assemble(config.microcode_path()).switching != isa.SWITCHING_CIRCUIT:
        raise InputError(f"{algorithm} is a circuit-switched broadcast: the config's microprogram "
                         f"{config['microcode']!r} does not switch circuits (microcode: circuit)")
    topology = build_topology(config.topology_spec)
    cost = cost or measure_linear_cost(config)
    try:
        if algorithm == "tiling":
            if packets not in (None, 1):
                raise ValueError("the tiling broadcast sends the message whole (--packets 1)")
            plan = module.plan(topology, source, variant)
            packets, formula_args = 1, {"variant": variant}
        else:
            if variant is not None:
                raise ValueError("variants are the tiling's, for the 10 x 10 torus")
            packets = packets or module.best_packets(topology, length, cost.alpha, cost.delta, cost.tau)
            _check_room(topology.n_nodes, packets * (2 if algorithm == "htree" else 1))
            plan = module.plan(topology, source, packets)
            formula_args = {"packets": packets}
    except ValueError as exc:
        raise InputError(f"{algorithm} on {topology.name}: {exc}") from None
    run = run_plan(config, plan, length, at_cycle, progress, faults, counters, observer)
    flits = -(-length // plan.pieces)
    # whole packets of whole flits make every printed T(B) a whole number of cycles
    exact = Fraction(module.formula_cycles(topology, flits * plan.pieces, cost.alpha, cost.delta, cost.tau,
                                           **formula_args))
    assert exact.denominator == 1, exact
    formula = int(exact)
    # run_plan has checked that every send took its planned route, so its hops are the route's
    sends = [(run.sends[k].created, run.sends[k].delivered, run.sends[k].hops) if k in run.sends else None
             for k in range(len(plan.sends))]
    broadcast = TorusBroadcast(run, cost, packets, flits, formula, sends)
    if run.background == 0 and not run.result.faults.any():
        expected = circuit_schedule(plan, cost.alpha, cost.delta, cost.tau, flits)
        for k, ((created, delivered, _), planned) in enumerate(zip(sends, expected)):
            if (created, delivered) != planned:
                raise SimulationError(f"{algorithm} on {topology.name}: send {k} ran from {created} to {delivered}, "
                                      f"its idle schedule says {planned[0]} to {planned[1]}")
    return broadcast


def _check_room(nodes: int, pieces: int) -> None:
    """Every node but the source gets every piece by one send: refuse a plan the memory cannot hold."""
    sends = (nodes - 1) * pieces
    available = available_memory()
    if sends * BYTES_PER_SEND > 0.8 * available:
        raise InputError(f"a broadcast of {pieces} piece(s) to {nodes - 1:,} nodes makes {sends:,} sends, about "
                         f"{gigabytes(sends * BYTES_PER_SEND)}; {gigabytes(available)} is available")
