"""One broadcast of papers 002 and 003 (PCP, RD, EDN, NP-D, MH) on the flit-level controller, copy by copy;
paper 004's broadcasts run through here too (harts/broadcasts/torus.py).

The algorithm's send plan (harts/np/send_plan.py) is the data of an NP program (harts/np/plan_program.py):
every NP sends the plan's sends when what they wait for happens there. The kernel runs it, over the config's
own traffic if it has any, with hop records on, and reports every copy an NP got. A fault-free run is then
held against the plan's functional model: every send's route in the run is the plan's, and the copies are
exactly the plan's. Under faults, the copies that arrived are a subset of the plan's and the routes up to
where a fault stopped them are the plan's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..controller import records as R
from ..errors import InputError, SimulationError
from ..machine.config import Config
from ..machine.results import Result, earliest_wait
from ..machine.simulation import Simulation
from ..machine.traffic import Traffic, build_traffic
from ..np import (
    coded_path,
    dominating_nodes,
    mesh_hypercube,
    network_partitioning,
    recursive_doubling,
)
from ..np.plan_program import plan_program, start_traffic
from ..np.send_plan import (
    TRIGGER_COPY,
    TRIGGER_DELIVERED,
    TRIGGER_SENT,
    TRIGGER_START,
    SendPlan,
    expected_copies,
    route_copies,
    send_steps,
    shared_links_by_step,
)

ALGORITHMS = {"pcp": coded_path.plan, "rd": recursive_doubling.plan, "edn": dominating_nodes.plan,
              "npd": network_partitioning.plan, "mh": mesh_hypercube.plan}
OWN_SEND = (TRIGGER_SENT, TRIGGER_DELIVERED)  # triggers a sender's own earlier send fires


@dataclass(frozen=True)
class PlanCopy:
    send: int  # index in the plan's sends
    node: int
    piece: int
    step: int
    arrival: int  # cycles after the broadcast started
    sender: int
    path: tuple[int, ...]  # the source ... node, through every relay


@dataclass(frozen=True)
class SendTimes:
    created: int  # cycles after the broadcast started: when its NP made it
    delivered: int  # ... when it was in the NP at its route's end
    hops: int  # links its head crossed (its last attempt's, in circuit switching)


@dataclass
class PlanRun:
    plan: SendPlan
    length: int  # flits of the whole message
    start: int  # cycle the broadcast started
    copies: list[PlanCopy]
    sends: dict[int, SendTimes]  # per send that reached its route's end
    result: Result
    background: int  # packets of the config's own traffic in the run

    @property
    def steps(self) -> int:
        return max((c.step for c in self.copies), default=0)

    @property
    def latency(self) -> int:
        """From the start to the last copy in an NP, in cycles."""
        return max((c.arrival for c in self.copies), default=0)

    def first_contention(self) -> dict | None:
        """The earliest wait of any of the broadcast's own packets, or None."""
        pl = self.result.packets
        wait = earliest_wait(pl[:, pl[R.PL_UID] >= R.NP_UID_BASE])
        if wait is None:
            return None
        tick, uid, node, mark = wait
        return {"uid": uid, "node": node, "cycle": tick - self.start, "kind": R.CONTENTION_NAMES[mark]}

    def summary(self) -> dict:
        topology = self.plan.topology
        counts = Counter((c.node, c.piece) for c in self.copies)
        crashed = self.result.faults.node_fault == R.FAULT_CRASH  # a crashed node receives nothing by definition
        others = [counts[(v, piece)] for v in range(topology.n_nodes) if v != self.plan.source and not crashed[v]
                  for piece in range(self.plan.pieces)]
        dl = self.result.deliveries
        background = dl[R.DL_UID] < R.NP_UID_BASE
        latency = dl[R.DL_TICK, background] - dl[R.DL_CREATE, background]
        first = self.first_contention()
        return {
            "algorithm": self.plan.algorithm,
            "topology": topology.name,
            "switching": self.result.switching,
            "source": self.plan.source,
            "source_label": topology.coordinates(self.plan.source),
            "length_flits": self.length,
            "pieces": self.plan.pieces,
            "np_channels": self.result.config["flow.np_channels"] or topology.n_ports,
            "steps": self.steps,
            "latency_cycles": self.latency,
            "copies_per_node_min": min(others),
            "copies_per_node_max": max(others),
            "copies_total": len(self.copies),
            "sends": len(self.plan.sends),
            "links_shared_within_a_step": sum(shared_links_by_step(self.plan).values()),
            "contention_free": first is None,
            "first_contention": first,
            "background_packets": self.background,
            "background_latency_mean_cycles": float(latency.mean()) if len(latency) else None,
            "peak_buffer_flits": self.result.network.peak_flits,
        }


def make_plan(topology, algorithm: str, source: int, partition: str | None = None) -> SendPlan:
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown broadcast {algorithm!r}, expected one of {', '.join(ALGORITHMS)}")
    if partition is not None and algorithm != "pcp":
        raise InputError(f"--partition is PCP's choice of sides, not {algorithm}'s")
    if not 0 <= source < topology.n_nodes:
        raise InputError(f"source must be a node of {topology.name} (0..{topology.n_nodes - 1}), got {source}")
    try:
        if algorithm == "pcp":
            return coded_path.plan(topology, source, partition=partition)
        return ALGORITHMS[algorithm](topology, source)
    except ValueError as exc:
        raise InputError(f"{algorithm} on {topology.name}: {exc}") from None


def run_plan(config: Config, plan: SendPlan, length: int, at_cycle: int | None = None, progress: bool = False,
             faults=None, counters: bool = False, observer=None) -> PlanRun:
    """Run the plan over the config's own traffic (if any), starting at run.warmup_cycles unless `at_cycle` says
    otherwise, by the switching of the config's microprogram (which must follow routes in the header if the
    plan's sends have any); hold its copies against the plan's. `faults` replaces the config's for this run;
    `counters` and `observer` keep what the link map and a waveform need."""
    flits = -(-length // plan.pieces)
    probe = Simulation(config)
    routed = any(send.segments for send in plan.sends)
    if probe.kernel != "flit" or (routed and not probe.microprogram.segments):
        raise InputError(f"{plan.algorithm} runs on a flit-level microprogram" + (
                         " that follows routes in the header (microcode cpr or circuit)" if routed else "")
                         + f"; {config['microcode']!r} switches by {probe.switching}"
                         + ("" if probe.kernel != "flit" else " and declares no header segments"))
    if probe.topology.name != plan.topology.name:
        raise InputError(f"the plan is for {plan.topology.name}, the config's network is {probe.topology.name}")
    # the last packet made takes at least this long to leave its sender, and the run gives up on the network
    # emptying run.drain_cycles after it was made
    sending = flits * probe.params.flit_cycles
    if sending > config["run.drain_cycles"]:
        raise config.error("run.drain_cycles",
                           f"--length {length:,} flits{f' in {plan.pieces} pieces' if plan.pieces > 1 else ''} "
                           f"take at least {sending:,} cycles a packet to send, more than run.drain_cycles "
                           f"({config['run.drain_cycles']:,}) allows the network to empty: shorten --length or "
                           f"raise run.drain_cycles")
    length_bytes = flits * config["flow.flit_bytes"]
    try:
        program = plan_program(plan, length_bytes, probe.microprogram.segments)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    simulation = Simulation(config, probe.microprogram, program)
    start = config["run.warmup_cycles"] if at_cycle is None else at_cycle
    background = build_traffic(config, simulation.topology)
    traffic = Traffic.concatenate([start_traffic(plan.sends, [start] * len(plan.sends)), *background.chunks()])
    result = simulation.run(traffic, progress=progress, faults=faults, hops=True, counters=counters,
                            observer=observer)
    faulty = result.faults.any()
    copies, sends = _copies(plan, result, start, complete=not faulty)
    return PlanRun(plan, length, start, copies, sends, result, int((traffic.kind == R.TRAFFIC_UNICAST).sum()))


def _copies(plan: SendPlan, result: Result, start: int, complete: bool) -> tuple[list[PlanCopy], dict]:
    """The run's copies of the plan's sends, each with its full path from the source, and each send's times;
    raises if a route or copy of the run is not the plan's (and, on a fault-free network, if one is missing)."""
    topology = plan.topology
    dl = result.deliveries
    own = np.nonzero(dl[R.DL_UID] >= R.NP_UID_BASE)[0]
    send_of_copy = result.header("send")[own]
    uid_of_send = {int(s): int(u) for s, u in zip(send_of_copy, dl[R.DL_UID, own])}
    hops = result.hops
    walked = {k: tuple(hops.path(uid)) for k, uid in uid_of_send.items()}
    for k, route in walked.items():
        send = plan.sends[k]
        if send.segments:
            # a route in the header is the plan's: the run must have followed it (up to a fault)
            planned = route_copies(topology, send)[-1][1]
            wrong = route != planned[: len(route)] or (complete and route != planned)
        else:
            # a route by destination is the microprogram's: any shortest one (the torus's ties go either way)
            left = topology.distance(np.asarray(route), np.full(len(route), send.destination))
            wrong = route[0] != send.sender or bool((np.diff(left) != -1).any()) or (complete and left[-1] != 0)
            planned = "a shortest path to " + str(send.destination)
        if wrong:
            raise SimulationError(f"{plan.algorithm}: send {k} went {route}, its plan says {planned}")
    steps = send_steps(plan)
    ran = sorted(((int(s), int(v), int(t)) for s, v, t in zip(send_of_copy, dl[R.DL_NODE, own], dl[R.DL_TICK, own])),
                 key=lambda c: (c[2], c[0], c[1]))
    planned_copies = expected_copies(plan)
    expected = Counter((c.send, c.node, c.step) for c in planned_copies)
    got = Counter((s, v, steps[s]) for s, v, _ in ran)
    extra, missing = got - expected, expected - got
    if extra or (complete and missing):
        raise SimulationError(f"{plan.algorithm}: the run's copies differ from the plan's: "
                              f"{sum(extra.values())} extra (e.g. {next(iter(extra), None)}), "
                              f"{sum(missing.values())} missing (e.g. {next(iter(missing), None)}) "
                              f"as (send, node, step)")
    full: dict[tuple[int, int], tuple[int, ...]] = {}
    copies = []
    for s, v, t in ran:
        send = plan.sends[s]
        before = (plan.source,) if send.trigger != TRIGGER_COPY else full[(send.parent, send.sender)]
        if send.trigger in OWN_SEND:
            before = _holding_path(plan, s, full)
        route = walked[s]
        full[(s, v)] = before + route[1: route.index(v) + 1]
        copies.append(PlanCopy(s, v, send.piece, steps[s], t - start, send.sender, full[(s, v)]))
    pl = result.packets
    column = {int(u): c for c, u in enumerate(pl[R.PL_UID])}
    arrival = {(s, v): t for s, v, t in ran}
    sends = {}
    for k, uid in uid_of_send.items():
        end = plan.sends[k].destination
        if (k, end) in arrival:
            c = column[uid]
            sends[k] = SendTimes(int(pl[R.PL_CREATE, c]) - start, arrival[(k, end)] - start,
                                 int(pl[R.PL_HOPS, c] - pl[R.PL_HOPS_INHERITED, c]))
    return copies, sends


def _holding_path(plan: SendPlan, k: int, full: dict) -> tuple[int, ...]:
    """The path by which the sender of send k (which waits for one of its own sends to leave or arrive) got
    what it sends on."""
    while plan.sends[k].trigger in OWN_SEND:
        k = plan.sends[k].parent
    send = plan.sends[k]
    if send.trigger == TRIGGER_START:
        return (plan.source,)
    return full[(send.parent, send.sender)]

