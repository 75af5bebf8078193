"""One broadcast of papers 002 and 003 (PCP, RD, EDN, NP-D, MH) on the flit-level controller, copy by copy;
paper 004's broadcasts run through here too (harts/torus_broadcast.py).

The algorithm's send plan (harts/np/send_plan.py) becomes packets that wait for their trigger; the kernel
runs them, over the config's synthetic traffic if it has any, and reports every copy an NP got. The run is
then held against the plan's functional model: every send's route in the run is the plan's, every node
other than the source holds each piece of the message exactly once, and the copies are the plan's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..machine.config import Config
from ..controller import isa
from ..controller.flits import state as S
from ..controller.microcode import assemble
from ..errors import InputError, SimulationError
from ..machine.flits import (
    FlitResult,
    FlitSimulation,
    Packets,
    config_packets,
    packets,
)
from ..np import (
    coded_path,
    dominating_nodes,
    mesh_hypercube,
    network_partitioning,
    recursive_doubling,
)
from ..np.send_plan import (
    TRIGGER_COPY,
    TRIGGER_DELIVERED,
    TRIGGER_SENT,
    TRIGGER_START,
    SendPlan,
    expected_copies,
    route_copies,
    shared_links_by_step,
)

ALGORITHMS = {"pcp": coded_path.plan, "rd": recursive_doubling.plan, "edn": dominating_nodes.plan,
              "npd": network_partitioning.plan, "mh": mesh_hypercube.plan}
TRIGGERS = {TRIGGER_START: S.TRIGGER_NONE, TRIGGER_COPY: S.TRIGGER_COPY, TRIGGER_SENT: S.TRIGGER_SENT,
            TRIGGER_DELIVERED: S.TRIGGER_DELIVERED}
OWN_SEND = (TRIGGER_SENT, TRIGGER_DELIVERED)  # triggers a sender's own earlier send fires
SHIPPED_MICROCODE = {isa.SWITCHING_WORMHOLE: "cpr", isa.SWITCHING_CIRCUIT: "circuit"}


@dataclass(frozen=True)
class PlanCopy:
    node: int
    piece: int
    step: int
    arrival: int  # cycles after the broadcast started
    sender: int
    path: tuple[int, ...]  # the source ... node, through every relay


@dataclass
class PlanRun:
    plan: SendPlan
    length: int  # flits of the whole message
    start: int  # cycle the broadcast started
    copies: list[PlanCopy]
    result: FlitResult
    background: int  # packets of the config's own traffic in the run

    @property
    def steps(self) -> int:
        return max(c.step for c in self.copies)

    @property
    def latency(self) -> int:
        """From the start to the last copy in an NP, in cycles."""
        return max(c.arrival for c in self.copies)

    def summary(self) -> dict:
        topology = self.plan.topology
        counts = Counter((c.node, c.piece) for c in self.copies)
        others = [counts[(v, piece)] for v in range(topology.n_nodes) if v != self.plan.source
                  for piece in range(self.plan.pieces)]
        background = np.arange(len(self.result.sent)) >= len(self.plan.sends)
        latency = self.result.latency[background]
        return {
            "algorithm": self.plan.algorithm,
            "topology": topology.name,
            "source": self.plan.source,
            "source_label": topology.coordinates(self.plan.source),
            "length_flits": self.length,
            "pieces": self.plan.pieces,
            "np_channels": self.result.params.np_channels,
            "steps": self.steps,
            "latency_cycles": self.latency,
            "copies_per_node_min": min(others),
            "copies_per_node_max": max(others),
            "copies_total": len(self.copies),
            "sends": len(self.plan.sends),
            "links_shared_within_a_step": sum(shared_links_by_step(self.plan).values()),
            "background_packets": self.background,
            "background_latency_mean_cycles": float(latency.mean()) if len(latency) else None,
            "peak_buffer_flits": self.result.peak_flits,
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


def flit_config(config: Config, switching: int = isa.SWITCHING_WORMHOLE) -> Config:
    """The config to run a plan on: its own microprogram if that switches as asked and follows routes in
    the header, else the shipped one (cpr.yaml for wormhole, circuit.yaml) with everything else of the config."""
    program = assemble(config.microcode_path())
    if program.switching == switching and program.segments:
        return config
    return config.with_values(microcode=SHIPPED_MICROCODE[switching])


def plan_packets(plan: SendPlan, length: int, start: int) -> Packets:
    """The plan's sends as packets: the source's created at `start`, the others waiting for their trigger
    (no delay beyond the controller's own: the NP's start-up is timing.np_send_cycles and deliver_cycles)."""
    sends = plan.sends
    slots = max((len(s.segments) for s in sends), default=0)
    segments = np.zeros((len(sends), slots, 3), np.int64)
    for k, send in enumerate(sends):
        for j, segment in enumerate(send.segments):
            segments[k, j] = segment
    trigger = [TRIGGERS[s.trigger] for s in sends]
    create = [start if s.trigger == TRIGGER_START else 0 for s in sends]
    flits = -(-length // plan.pieces)
    return packets(create, [s.sender for s in sends], [s.destination for s in sends], flits, segments=segments,
                   trigger=trigger, parent=[s.parent for s in sends])


def run_plan(config: Config, plan: SendPlan, length: int, at_cycle: int | None = None,
             progress=None, switching: int = isa.SWITCHING_WORMHOLE) -> PlanRun:
    """Run the plan over the config's synthetic traffic (if any), starting at run.warmup_cycles unless
    `at_cycle` says otherwise, by wormhole or circuit switching; check its copies against the plan's."""
    config = flit_config(config, switching)
    simulation = FlitSimulation(config)
    if simulation.topology.name != plan.topology.name:
        raise InputError(f"the plan is for {plan.topology.name}, the config's network is {simulation.topology.name}")
    start = config["run.warmup_cycles"] if at_cycle is None else at_cycle
    own = plan_packets(plan, length, start)
    background = config_packets(config, simulation)
    joined = packets(*(np.concatenate([getattr(own, name), getattr(background, name)])
                       for name in ("create", "source", "destination", "flits")),
                     segments=_padded(own.segments, len(background)),
                     trigger=np.concatenate([own.trigger, background.trigger]),
                     parent=np.concatenate([own.parent, background.parent]))
    result = simulation.run(joined, progress=progress)
    return PlanRun(plan, length, start, _copies(plan, result, start), result, len(background))


def _padded(segments: np.ndarray, extra: int) -> np.ndarray:
    return np.concatenate([segments, np.zeros((extra, segments.shape[1], 3), np.int64)])


def _copies(plan: SendPlan, result: FlitResult, start: int) -> list[PlanCopy]:
    """The run's copies of the plan's sends, each with its full path from the source; raises if the run's
    routes or copies differ from the plan's functional model."""
    topology = plan.topology
    n = len(plan.sends)
    for k, send in enumerate(plan.sends):
        walked = tuple(result.path_nodes(k))
        planned = route_copies(topology, send)[-1][1]
        if walked != planned:
            raise SimulationError(f"{plan.algorithm}: send {k} went {walked}, its plan says {planned}")
    ran = [(int(p), int(v), int(t)) for p, v, t in zip(*result.copies) if p < n]
    planned_copies = expected_copies(plan)
    expected = Counter((c.send, c.node, c.step) for c in planned_copies)
    got = Counter((p, v, int(result.step[p])) for p, v, _ in ran)
    if got != expected:
        extra, missing = got - expected, expected - got
        raise SimulationError(f"{plan.algorithm}: the run's copies differ from the plan's: "
                              f"{sum(extra.values())} extra (e.g. {next(iter(extra), None)}), "
                              f"{sum(missing.values())} missing (e.g. {next(iter(missing), None)}) "
                              f"as (send, node, step)")
    prefix = {(c.send, c.node): c.path for c in planned_copies}
    full: dict[tuple[int, int], tuple[int, ...]] = {}
    copies = []
    for p, v, t in ran:
        send = plan.sends[p]
        before = (plan.source,) if send.trigger != TRIGGER_COPY else full[(send.parent, send.sender)]
        if send.trigger in OWN_SEND:
            before = _holding_path(plan, p, full)
        full[(p, v)] = before + prefix[(p, v)][1:]
        copies.append(PlanCopy(v, send.piece, int(result.step[p]), t - start, send.sender, full[(p, v)]))
    return copies


def _holding_path(plan: SendPlan, k: int, full: dict) -> tuple[int, ...]:
    """The path by which the sender of send k (which waits for one of its own sends to leave or arrive) got
    what it sends on."""
    while plan.sends[k].trigger in OWN_SEND:
        k = plan.sends[k].parent
    send = plan.sends[k]
    if send.trigger == TRIGGER_START:
        return (plan.source,)
    return full[(send.parent, send.sender)]
