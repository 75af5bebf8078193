"""Which broadcast runs where: one row of data for each algorithm of `harts broadcast`, and the check that
refuses an (algorithm, config) pair before anything is built or run.

A broadcast is defined on some networks (its paper's; the plan module's own check says which sizes), on one
way of switching (the microprogram's `switching`, and what the microprogram must do with the algorithm's
packets) and on some NP port counts (`flow.np_channels`, a key of the flit-level controller). `harts faults`
reports for it what every non-faulty node decided (paper 000's k-reliable broadcasts) or the share of
non-faulty nodes the message reached (the others, whose papers claim no fault tolerance).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import choices
from ..controller import isa
from ..controller.microcode import Microprogram, assemble
from ..controller.records import ROUTE_DIRECTION
from ..errors import InputError
from ..machine.config import Config
from ..machine.simulation import topology_error
from ..network.build import build_topology, node_count, port_count
from ..network.hexmesh import MIN_SIZE as MIN_HEX_SIZE
from ..network.topology import Topology
from ..np import (
    coded_path,
    divide_and_conquer,
    dominating_nodes,
    h_tree,
    kandlur_shin,
    mesh_hypercube,
    network_partitioning,
    recursive_doubling,
    tiling,
)

SWITCHING_NAMES = {value: name.replace("_", "-") for name, value in isa.SWITCHINGS.items()}
DECISIONS = "decisions"  # harts faults: what every non-faulty node decided, by the reception rule
REACHED = "reached"  # harts faults: the share of non-faulty nodes that got the message


@dataclass(frozen=True)
class Switching:
    """What a broadcast needs of the microprogram: its switching, and something it must do besides."""

    mode: int  # isa.SWITCHING_*
    does: str  # what the microprogram must do, as "a microprogram that ..."
    does_not: str  # ... and as said of one that does not
    microcode: str  # the shipped microprogram that does it
    handles: Callable[[Microprogram], bool]  # whether a microprogram of that switching does it

    def fits(self, program: Microprogram) -> bool:
        return program.switching == self.mode and self.handles(program)

    def __str__(self) -> str:
        return f"{SWITCHING_NAMES[self.mode]} switching with a microprogram that {self.does}"


def _relays_worms(program: Microprogram) -> bool:
    """RELAY (paper 000): the receivers tell a send_packet worm by its route and count its distance down."""
    code = program.code
    on_route = ((code[isa.CODE_OP] == isa.OP_BRANCH) & (code[isa.CODE_ARG] == isa.COND_COMPARE)
                & (code[isa.CODE_FIELD] == isa.FIELD_ROUTE) & (code[isa.CODE_COMPARE] == isa.CMP_EQ)
                & (code[isa.CODE_VALUE] == ROUTE_DIRECTION))
    return bool(on_route.any()) and "distance" in program.fields


def _follows_header_routes(program: Microprogram) -> bool:
    return program.segments > 0


RELAY = Switching(isa.SWITCHING_CUT_THROUGH, "relays send_packet worms",
                  "does not relay send_packet worms (no branch on route == direction, or no 'distance' field)",
                  "harts", _relays_worms)
WORMHOLE = Switching(isa.SWITCHING_WORMHOLE, "routes by destination", "does not route by destination",
                     "wormhole", lambda program: True)
WORMHOLE_ROUTES = Switching(isa.SWITCHING_WORMHOLE, "follows routes in the header",
                            "follows no route in the header (no header segments)", "cpr", _follows_header_routes)
CIRCUIT_ROUTES = Switching(isa.SWITCHING_CIRCUIT, "follows routes in the header",
                           "follows no route in the header (no header segments)", "circuit", _follows_header_routes)


@dataclass(frozen=True)
class Broadcast:
    """One algorithm of `harts broadcast`: where it runs, and what `harts faults` reports for it."""

    name: str
    paper: str  # ../shared/papers/INDEX.md numbers them
    topology: str  # the networks it is defined on, in words
    require_topology: Callable[[Topology], object]  # ValueError naming what it needs, unless it runs there
    switching: Switching
    all_port: bool  # needs an NP channel per link port (flow.np_channels: 0); else any count
    faults: str  # DECISIONS or REACHED
    config: str  # a shipped config it runs on, named in refusals


HEX = f"hexagonal mesh E-n (n >= {MIN_HEX_SIZE})"


def _paper_000(name: str) -> Broadcast:
    def require_hexagonal(topology: Topology) -> None:
        if topology.kind != "hex":
            raise ValueError(f"{name} runs on a {HEX}, not on {topology.name}")

    return Broadcast(name, "000", HEX, require_hexagonal, RELAY, False, DECISIONS, "configs/uniform_e9.yaml")


T3D_MESH = "configs/t3d_mesh_8x8.yaml"
BROADCASTS: dict[str, Broadcast] = {
    **{name: _paper_000(name) for name in kandlur_shin.ALGORITHMS},
    "pcp": Broadcast("pcp", "002", coded_path.TOPOLOGY, coded_path.require_topology, WORMHOLE_ROUTES, True,
                     REACHED, T3D_MESH),
    "rd": Broadcast("rd", "002", recursive_doubling.TOPOLOGY, recursive_doubling.require_topology,
                    WORMHOLE, False, REACHED, T3D_MESH),  # Barnett et al.'s one-port algorithm, unicasts only
    "edn": Broadcast("edn", "002", dominating_nodes.TOPOLOGY, dominating_nodes.order_of, WORMHOLE_ROUTES, True,
                     REACHED, T3D_MESH),
    "npd": Broadcast("npd", "002", network_partitioning.TOPOLOGY, network_partitioning.order_of, WORMHOLE_ROUTES,
                     True, REACHED, T3D_MESH),
    "mh": Broadcast("mh", "003", mesh_hypercube.TOPOLOGY, mesh_hypercube.require_topology, WORMHOLE, True,
                    REACHED, "configs/t3d_mesh_hypercube_9x8.yaml"),  # unicasts only
    "tiling": Broadcast("tiling", "004", tiling.TOPOLOGY, tiling.require_topology, CIRCUIT_ROUTES, True, REACHED,
                        "configs/circuit_torus_25x25.yaml"),
    "dc": Broadcast("dc", "004", divide_and_conquer.TOPOLOGY, divide_and_conquer.order_of, CIRCUIT_ROUTES, True,
                    REACHED, "configs/circuit_torus_16x16.yaml"),
    "htree": Broadcast("htree", "004", h_tree.TOPOLOGY, h_tree.order_of, CIRCUIT_ROUTES, True, REACHED,
                       "configs/circuit_torus_15x15.yaml"),
}
choices.require_names(BROADCASTS, choices.BROADCASTS, "harts.broadcasts.table.BROADCASTS")


def check_broadcast(config: Config, algorithm: str) -> Broadcast:
    """The algorithm's row, or an InputError in one line saying what of the config does not fit it and what
    would: its network, then its microprogram, then its NP ports."""
    if algorithm not in BROADCASTS:
        raise InputError(f"unknown broadcast {algorithm!r}; expected one of {', '.join(BROADCASTS)}")
    broadcast = BROADCASTS[algorithm]
    spec = config.topology_spec
    try:
        node_count(spec)
    except ValueError as exc:
        raise topology_error(config, str(exc)) from None
    try:
        broadcast.require_topology(build_topology(spec))
    except ValueError as exc:
        instead = "--size N, or a hex config" if broadcast.paper == "000" else "a config"
        raise config.error("topology", f"{exc}: use {instead} such as {broadcast.config}") from None
    needs, wrong, fixes = [], [], []
    program, switching = assemble(config.microcode_path()), broadcast.switching
    if not switching.fits(program):
        needs.append(f"runs on a {broadcast.topology} by {switching} (microcode: {switching.microcode})")
        wrong.append(f"microprogram {program.name!r} " + (f"switches by {SWITCHING_NAMES[program.switching]}"
                                                          if program.switching != switching.mode
                                                          else switching.does_not))
        fixes.append(f"microcode: {switching.microcode}")
    channels, ports = config["flow.np_channels"], port_count(spec)
    if broadcast.all_port and channels not in (0, ports):
        needs.append("needs all-port NPs, one channel per link port")
        wrong.append(f"flow.np_channels is {channels} of {ports} ports")
        fixes.append("flow.np_channels: 0")
    if needs:
        raise config.error("microcode" if "microcode" in fixes[0] else "flow.np_channels",
                           f"{algorithm} {' and '.join(needs)}; the config's {' and its '.join(wrong)}: set "
                           f"{' and '.join(fixes)}, as {broadcast.config} does")
    return broadcast


def runs_on(config: Config, algorithm: str) -> bool:
    try:
        check_broadcast(config, algorithm)
    except InputError:
        return False
    return True
