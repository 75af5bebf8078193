"""All-to-all reliable broadcast of paper 001 (Lee & Shin 1994) on the engine: IHC, KS-ATA, VSQ-ATA,
VRS-ATA and FRS, in dedicated mode against their Table II formulas evaluated with the engine's calibrated
S, r and d, in the worst case (every hop stored, queueing delay D) against Table IV, and over background
traffic.

The paper's symbols map onto the engine's latency model S + rM + (h-1)d (MODEL.md, "Lee & Shin's IHC"):
tau_S + mu alpha = S + rM (a packet's start-up and transmission), alpha = d (one cut-through). A packet
is mu FIFO lengths long, L tau_L = mu alpha; here that is the longest whole number of cycles that, with
the forced idle gap after it, fits in mu d: M = bytes_per_cycle x floor(mu d - idle gap), so that packets
started eta >= mu hops apart never wait for a transmitter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ...choices import ATA_ALGORITHMS, require_names
from ...controller import isa
from ...controller import records as R
from ...controller.microcode import assemble
from ...controller.state import ST_FIFO_PEAK
from ...errors import InputError, SimulationError
from ...faults.fault_set import without_faults
from ...machine.config import Config
from ...machine.simulation import Simulation
from ...machine.traffic import Traffic, build_traffic, initiations
from ...network import node_count, port_count
from ...network.hamiltonian import directed_cycles
from ...np.kandlur_shin import ALGORITHMS as KANDLUR_SHIN
from ...output import save_figure
from ...reference.ihc import senders
from ...reference.rs import rs_hops
from ...reference.vsq import check as vsq_check
from ...reference.vsq import longest as vsq_longest
from ...reference.vsq import slowest as vsq_slowest
from ...tools.calibrate import calibrate


@dataclass
class AtaRun:
    algorithm: str
    topology: str
    nodes: int
    gamma: int  # copies of each message each node gets
    mu: int
    length: int
    S: Fraction
    r: Fraction
    d: Fraction
    completion_cycles: Fraction
    formula_cycles: Fraction  # best case: the paper's formula with S, r, d and exact counts of each path
    contention_free: bool
    copies_per_node_min: int
    copies_per_node_max: int
    first_contention: str | None
    eta: int | None = None  # IHC only
    overlapped: bool = False
    queueing: int | None = None  # D: the worst case, every hop stored and forwarded
    stored_hops: int | None = None  # the worst case: stored hops on a broadcast's longest path (IHC: all stages)
    printed_formula_cycles: float | None = None  # Table II as printed, where its counts differ
    fifo_peak_bytes: int | None = None  # the most bytes a receiver FIFO held, the background's included
    copies: np.ndarray | None = field(default=None, repr=False)  # [node, source]: copies delivered
    true_copies: np.ndarray | None = field(default=None, repr=False)  # ... of them with the source's value
    arrivals: np.ndarray | None = field(default=None, repr=False)  # cycles from the start, each copy's arrival

    def as_dict(self) -> dict:
        out = {k: (float(v) if isinstance(v, Fraction) else v) for k, v in self.__dict__.items()
               if k not in ("copies", "true_copies", "arrivals")}
        out["exact"] = self.completion_cycles == self.formula_cycles
        return out


# A stored hop of a worm or chain costs S + rM + D and one cycle more: the receiver marks the copy (an `or`
# micro-instruction) before delivering it, so that the NP sends it on (microcode/*store_and_forward.yaml).
MARK_CYCLES = 1


def default_eta(nodes: int, mu: int) -> int:
    """The smallest interleaving distance eta >= mu that divides N: with N mod eta != 0 the last sender of
    a stage is fewer than eta hops behind the first, and their packets meet (the paper assumes
    N mod mu = 0). On E-n, N = 3n(n-1)+1 is often prime, and then only eta = N fits."""
    return next(eta for eta in range(mu, nodes + 1) if nodes % eta == 0)


def on_controller(config: Config, program: str, microcode: str) -> Config:
    """The config an algorithm runs on: its NP program and microprogram, and a BMU bus interface per port,
    since the paper assumes every link of a node can be used at once (section IV). Each algorithm's
    microprogram is a cut-through one, so a config that asks for wormhole or circuit switching is refused
    rather than run by cut-through."""
    own = assemble(config.microcode_path())
    if own.switching != isa.SWITCHING_CUT_THROUGH:
        switching = next(name for name, value in isa.SWITCHINGS.items() if value == own.switching)
        raise config.error("microcode", f"paper 001's algorithms run on the cut-through controller here, each with "
                                        f"its own microprogram; the config's microprogram {own.name!r} switches by "
                                        f"{switching}: leave 'microcode' out, as configs/torus_8x8.yaml does")
    return config.with_values(microcode=microcode, np__program=program,
                              bmu__bus_interfaces=max(config["bmu.bus_interfaces"],
                                                      port_count(config.topology_spec)))


def prepare(config: Config, program: str, microcode: str, mu: int, length: int | None):
    """The config an algorithm runs on, the S, r, d calibrated on it without its faults, and the packet
    length (mu FIFO lengths unless given)."""
    config = on_controller(config, program, microcode)
    timing = calibrate(without_faults(config))
    return config, timing, packet_length(mu, timing.d, config) if length is None else length


def queued(config: Config, queueing: int) -> Config:
    """Every store-and-forward restart waits `queueing` = D cycles more: Table IV's queueing delay."""
    return config.with_values(timing__bmu_setup_cycles=config["timing.bmu_setup_cycles"] + queueing)


def packet_length(mu: int, d: Fraction, config: Config) -> int:
    """mu FIFO lengths in bytes: whole cycles that, with the idle gap after them, fit in mu x d cycles."""
    bpc = config.bytes_per_cycle
    cycles = math.floor(mu * d - Fraction(config["timing.idle_gap_bytes"], bpc))
    length = cycles * bpc
    if length < config["timing.header_bytes"]:
        raise InputError(f"mu = {mu} gives packets of {length} bytes, shorter than the header "
                         f"({config['timing.header_bytes']} bytes): use a larger mu")
    return length


def ihc(config: Config, eta: int, mu: int, length: int | None = None, overlapped: bool = False,
        queueing: int | None = None, early: int | None = None) -> AtaRun:
    """One IHC all-to-all broadcast in dedicated mode. Stage i starts when stage i - 1 has taken its
    formula time tau_S + mu alpha + (N-2) alpha; overlapped, the stages run from eta-1 down to 0 and each
    starts (mu-1) alpha earlier (section VI-A). Each of the eta - 1 stages after the first then ends
    (mu-1) alpha earlier, so the schedule saves (eta-1)(mu-1) alpha (overlap_saving): the paper's
    (mu-1)^2 alpha, stated for eta = mu, is that saving at eta = mu. With `queueing` = D cycles, the worst
    case of section VI-B: cut-through is switched off (ihc_store_and_forward.yaml), so every hop is stored
    and forwarded, and waits D more (timing.bmu_setup_cycles + D): a stage takes
    (N - 1)(S + rM + D + MARK_CYCLES). `early`, overlapped only, starts each stage that many alphas early
    instead of mu - 1 (not the paper's schedule: EXPERIMENTS.md, Overlapped stages)."""
    if early is not None and not overlapped:
        raise InputError("starting stages early is an overlapped schedule's")
    early = mu - 1 if early is None else early
    config, timing, length = prepare(config, "ihc", "ihc", mu, length)
    if queueing is not None:
        if overlapped:
            raise InputError("the worst case stores every hop: its stages cannot overlap")
        return _ihc_worst_case(config, timing, eta, mu, length, queueing)
    sim = Simulation(config)
    topology = sim.topology
    n = topology.n_nodes
    cycles = directed_cycles(topology)
    stage = timing.S + timing.r * length + (n - 2) * timing.d
    step = stage - early * timing.d if overlapped else stage
    create, source, cycle_of = [], [], []
    for j, cycle in enumerate(cycles):
        for i in range(eta):
            start = _whole((eta - 1 - i if overlapped else i) * step, "a stage", config)
            for v in senders(cycle, eta, i):
                create.append(start)
                source.append(int(v))
                cycle_of.append(j)
    formula = eta * stage - (overlap_saving(eta, mu, early) * timing.d if overlapped else 0)
    return run_schedule(sim, timing, "ihc", len(cycles), mu, length, formula,
                        initiations(*_in_time_order(create, source, 0, length, cycle_of, n - 1)),
                        eta=eta, overlapped=overlapped)


def overlap_saving(eta: int, mu: int, early: int | None = None) -> int:
    """The cut-throughs (alphas) the overlapped schedule saves: eta - 1 stages, each started `early` (by
    default mu - 1) alphas early. Section VI-A states (mu-1)^2 for eta = mu, which this is there."""
    return (eta - 1) * (mu - 1 if early is None else early)


def _ihc_worst_case(config: Config, timing, eta: int, mu: int, length: int, queueing: int) -> AtaRun:
    sim = Simulation(queued(config.with_values(microcode="ihc_store_and_forward"), queueing))
    n = sim.topology.n_nodes
    cycles = directed_cycles(sim.topology)
    stage = (n - 1) * (timing.S + timing.r * length + queueing + MARK_CYCLES)
    _whole(stage, "a stage", config)
    create, source, cycle_of = [], [], []
    for j, cycle in enumerate(cycles):
        for i in range(eta):
            for v in senders(cycle, eta, i):
                create.append(int(i * stage))
                source.append(int(v))
                cycle_of.append(j)
    traffic = initiations(*_in_time_order(create, source, 0, length, cycle_of, n - 1))
    return run_schedule(sim, timing, "ihc", len(cycles), mu, length, eta * stage, traffic, eta=eta,
                        queueing=queueing, stored_hops=eta * (n - 1))


def ks_ata(config: Config, mu: int, length: int | None = None, queueing: int | None = None) -> AtaRun:
    """KS-ATA (section V-B): every node in turn runs Kandlur & Shin's 6-BCAST, the next starting when the
    previous one's best-case latency 3(S + rM) + (2n - 5)d has passed (paper 000, Table I). With `queueing`
    = D, the worst case (_one_at_a_time_worst_case)."""
    if config.topology_spec["kind"] != "hex":
        raise InputError("KS-ATA runs on the hexagonal mesh only (Kandlur & Shin's 6-BCAST)")
    config, timing, length = prepare(config, "kandlur_shin", "harts", mu, length)
    n_nodes, side = node_count(config.topology_spec), int(config.topology_spec["size"])
    if queueing is not None:  # the longest path: 3 packets and 2n - 5 cut-throughs, all stored
        return _one_at_a_time_worst_case(config, timing, "ks", 6, mu, length, KANDLUR_SHIN["6bcast"],
                                         "store_and_forward", 2 * side - 2, queueing)
    sim = Simulation(config)
    one = 3 * (timing.S + timing.r * length) + (2 * side - 5) * timing.d
    traffic = _one_at_a_time(n_nodes, _whole(one, "a broadcast", config), KANDLUR_SHIN["6bcast"], length)
    # Table II's count of cut-throughs, 2 sqrt((N-1)/3) - 5, is a lower bound on the 2n - 5 of the text
    printed = n_nodes * (3 * (timing.S + timing.r * length) + (2 * math.sqrt((n_nodes - 1) / 3) - 5) * timing.d)
    return run_schedule(sim, timing, "ks", 6, mu, length, n_nodes * one, traffic,
                        printed_formula_cycles=float(printed))


def vsq_ata(config: Config, mu: int, length: int | None = None, queueing: int | None = None) -> AtaRun:
    """VSQ-ATA (section V-C): every node in turn runs VSQ on the odd square torus (harts.reference.vsq), the
    next starting when the previous one's best case has passed. With `queueing` = D, the worst case
    (_one_at_a_time_worst_case)."""
    spec = config.topology_spec
    dims = spec.get("dims", [])
    if spec["kind"] != "torus" or len(dims) != 2 or dims[0] != dims[1]:
        raise InputError("VSQ-ATA runs on square 2-D tori of odd side (the paper's SQ_m)")
    if dims[0] % 2 == 0:
        raise InputError(f"VSQ-ATA runs on square 2-D tori of odd side: on SQ_{dims[0]}, {vsq_check(int(dims[0]))[0]}, "
                         f"so one crash could take two of a node's four copies (the pattern is ours, since the "
                         f"paper's Fig. 9 is missing: harts.reference.vsq)")
    config, timing, length = prepare(config, "vsq", "harts", mu, length)
    n_nodes, side = node_count(spec), int(dims[0])
    if queueing is not None:
        return _one_at_a_time_worst_case(config, timing, "vsq", 4, mu, length, 0, "store_and_forward",
                                         vsq_longest(side), queueing)
    sim = Simulation(config)
    one = vsq_slowest(side, timing.S, timing.r, timing.d, length)
    traffic = _one_at_a_time(n_nodes, _whole(one, "a broadcast", config), 0, length)
    # Table II: 3 store-and-forward operations and 2 sqrt(N) - 6 cut-throughs per broadcast
    printed = n_nodes * (3 * (timing.S + timing.r * length) + (2 * side - 6) * timing.d)
    return run_schedule(sim, timing, "vsq", 4, mu, length, n_nodes * one, traffic,
                        printed_formula_cycles=float(printed))


def vrs_ata(config: Config, mu: int, length: int | None = None, queueing: int | None = None) -> AtaRun:
    """VRS-ATA (section V-A): every node in turn runs VRS on the hypercube, the next starting when the
    previous one's best case (its slowest copy's T(S + rM) + Cd, harts.reference.rs) has passed. With
    `queueing` = D, the worst case (_one_at_a_time_worst_case)."""
    if config.topology_spec["kind"] != "hypercube":
        raise InputError("VRS-ATA runs on the hypercube only (Ramanathan & Shin's broadcast)")
    config, timing, length = prepare(config, "vrs", "vrs", mu, length)
    n_nodes, m = node_count(config.topology_spec), int(config.topology_spec["dimension"])
    if queueing is not None:  # the longest path: one hop per step, m + 1 steps
        return _one_at_a_time_worst_case(config, timing, "vrs", m, mu, length, 0, "vrs_store_and_forward", m + 1,
                                         queueing)
    sim = Simulation(config)
    one = max(h.transmissions * (timing.S + timing.r * length) + h.cut_throughs * timing.d for h in rs_hops(m))
    traffic = _one_at_a_time(n_nodes, _whole(one, "a broadcast", config), 0, length)
    # Table II/III: (log2 N - 1) store-and-forward operations and 2 cut-throughs per broadcast
    printed = n_nodes * ((m - 1) * (timing.S + timing.r * length) + 2 * timing.d)
    return run_schedule(sim, timing, "vrs", m, mu, length, n_nodes * one, traffic,
                        printed_formula_cycles=float(printed))


def _one_at_a_time_worst_case(config: Config, timing, algorithm: str, gamma: int, mu: int, length: int,
                              argument: int, microcode: str, longest_hops: int, queueing: int) -> AtaRun:
    """Section VI-B's worst case of an algorithm run from each node in turn: its microprogram with cut-through
    switched off stores every copy at every hop, and each restart waits D more; the next broadcast starts
    when the previous one's longest path of `longest_hops` stored hops has passed."""
    sim = Simulation(queued(config.with_values(microcode=microcode), queueing))
    n_nodes = sim.topology.n_nodes
    one = longest_hops * (timing.S + timing.r * length + queueing + MARK_CYCLES)
    traffic = _one_at_a_time(n_nodes, _whole(one, "a broadcast", config), argument, length)
    return run_schedule(sim, timing, algorithm, gamma, mu, length, n_nodes * one, traffic, queueing=queueing,
                        stored_hops=longest_hops)


def frs_ata(config: Config, mu: int, length: int | None = None, queueing: int | None = None) -> AtaRun:
    """FRS (Fraigniaud): all nodes run RS at once, store-and-forward, merging per link and step; its time is
    (log2 N + 1) tau_S + (N - 1) mu alpha, here (m + 1) S + (N - 1) rM. With `queueing` = D, every step
    waits D more (Table IV: D is added to tau_S)."""
    if config.topology_spec["kind"] != "hypercube":
        raise InputError("FRS runs on the hypercube only (Fraigniaud's algorithm)")
    config, timing, length = prepare(config, "frs", "harts", mu, length)
    delay = queueing or 0
    sim = Simulation(queued(config, delay))
    n_nodes, m = sim.topology.n_nodes, int(config.topology_spec["dimension"])
    traffic = initiations(*_in_time_order([0] * n_nodes, list(range(n_nodes)), 0, length, 0, 0))
    formula = (m + 1) * (timing.S + delay) + (n_nodes - 1) * timing.r * length
    return run_schedule(sim, timing, "frs", m, mu, length, formula, traffic, merged=True, queueing=queueing,
                        stored_hops=None if queueing is None else m + 1)


BY_NAME = {"ks": ks_ata, "vsq": vsq_ata, "vrs": vrs_ata, "frs": frs_ata}  # all but IHC, which takes eta
ALGORITHMS = ATA_ALGORITHMS
require_names(("ihc", *BY_NAME), ALGORITHMS, "harts.experiments.lee_shin.ata.BY_NAME")


def run_algorithm(config: Config, algorithm: str, mu: int = 2, eta: int | None = None, length: int | None = None,
                  overlapped: bool = False, queueing: int | None = None, early: int | None = None) -> AtaRun:
    """Any of ALGORITHMS on the config's network; eta (default: default_eta), overlapped and early (ihc) are
    IHC's."""
    if algorithm != "ihc":
        if eta is not None or overlapped or early is not None:
            raise InputError(f"eta and overlapped stages are IHC's, not {algorithm.upper()}'s")
        return BY_NAME[algorithm](config, mu, length, queueing)
    spec = config.topology_spec
    if spec["kind"] == "hypercube" and int(spec["dimension"]) % 2 == 1:
        m = int(spec["dimension"])
        raise InputError(f"IHC needs the links split into Hamiltonian cycles, and Q{m} has none: each node has "
                         f"{m} links, an odd number, and a cycle uses 2 at each node (paper 001's LC1: gamma even; "
                         f"its Theorem 2 would first delete one link per node, which is not built)")
    nodes = node_count(spec)
    if eta is not None and eta > nodes:
        raise InputError(f"eta is at most the {nodes} nodes of the network, got {eta}")
    if queueing is None:  # the worst case stores every hop: no two packets are ever cut through at once
        check_interleaving(config, nodes, eta, mu, length)
    try:
        return ihc(config, default_eta(nodes, mu) if eta is None else eta, mu, length, overlapped, queueing,
                   early)
    except ValueError as exc:  # a network without a Hamiltonian decomposition
        raise InputError(str(exc)) from None


def check_interleaving(config: Config, nodes: int, eta: int | None, mu: int, length: int | None) -> None:
    """IHC's analysis (section IV) keeps packets started eta hops apart from meeting because each is at most
    mu FIFO lengths, so rM plus the forced idle gap after it fit in mu d cycles, and eta >= mu ("eta < mu
    cannot be used"). Refuses an eta or a length outside that, naming the ones that fit."""
    if eta is not None and eta < mu:
        raise InputError(f"IHC's stages start eta hops apart, and eta < mu cannot be used (section IV): got eta = "
                         f"{eta}, mu = {mu}; use --eta {default_eta(nodes, mu)} or leave it out")
    if length is None:
        return  # mu FIFO lengths, as packet_length makes it
    _, timing, largest = prepare(config, "ihc", "ihc", mu, None)
    sent, gap = timing.r * length, Fraction(config["timing.idle_gap_bytes"], config.bytes_per_cycle)
    if sent + gap > mu * timing.d:
        raise InputError(f"IHC needs packets of at most mu FIFO lengths: rM + the idle gap = {float(sent):.4g} + "
                         f"{float(gap):.4g} = {float(sent + gap):.4g} cycles, more than mu d = {mu} x {timing.d} = "
                         f"{float(mu * timing.d):.4g}: use --length {largest} or less with --mu {mu}, or --mu "
                         f"{math.ceil((sent + gap) / timing.d)} or more with --length {length}")


def _whole(cycles: Fraction, what: str, config: Config) -> int:
    """A schedule's start time, which must be a whole cycle (initiations are given in cycles)."""
    if cycles.denominator != 1:
        raise InputError(f"{what} takes {float(cycles):g} cycles, not a whole number: choose a length that is a "
                         f"multiple of {config.bytes_per_cycle} bytes")
    return int(cycles)


def _one_at_a_time(n_nodes: int, period: int, argument: int, length: int) -> Traffic:
    """Node k starts its reliable broadcast at k x period: each in turn (section V)."""
    return initiations(*_in_time_order([k * period for k in range(n_nodes)], list(range(n_nodes)), argument,
                                       length, 0, 0))


def _in_time_order(create, source, argument, length, direction, distance):
    """initiations() arguments sorted by creation time, each broadcast to one array per record."""
    create = np.asarray(create, dtype=np.int64)
    k = len(create)
    order = np.argsort(create, kind="stable")
    columns = [np.broadcast_to(np.asarray(x, dtype=np.int64), (k,))[order] for x in
               (create, source, argument, length, direction, distance)]
    return columns


def run_schedule(sim: Simulation, timing, algorithm: str, gamma: int, mu: int, length: int, formula: Fraction,
                 traffic, merged: bool = False, **extra) -> AtaRun:
    """Run an all-to-all schedule and read back its completion and copies (`merged`: messages carry several
    packets, counted by their bytes). With uniform traffic in the config (the paper's rho > 0), the
    schedule starts at run.warmup_cycles over that background, and only its own copies are counted."""
    start = 0
    if sim.config["traffic.uniform.load"] > 0:
        start = sim.config["run.warmup_cycles"]
        own = Traffic(**{**traffic.__dict__, "create": traffic.create + start})
        traffic = Traffic.concatenate([own, *build_traffic(sim.config, sim.topology).chunks()])
    try:
        result = sim.run(traffic)
    except SimulationError as exc:
        if start and "receiver FIFO overflow" in str(exc):
            raise SimulationError(f"{exc}. Raise timing.receiver_fifo_bytes: over background traffic, IHC's "
                                  f"receivers hold several packets (EXPERIMENTS.md, Lee & Shin, Receiver FIFOs)"
                                  ) from None
        raise
    n = sim.topology.n_nodes
    dl = result.deliveries
    dl = dl[:, traffic.kind[dl[R.DL_ORIGIN]] == R.TRAFFIC_INITIATE]
    completion = Fraction(int(dl[R.DL_TICK].max()), result.ticks_per_cycle) - start
    copies = true_copies = None
    if merged:
        # merged messages carry many packets: count packets by bytes, per node, over the N - 1 sources
        received = np.bincount(dl[R.DL_NODE], weights=dl[R.DL_LENGTH], minlength=n)
        off_diagonal = (received / (length * (n - 1))).astype(np.int64)
    else:
        # copies of each source's message at each node
        copies = np.zeros((n, n), dtype=np.int64)
        np.add.at(copies, (dl[R.DL_NODE], traffic.source[dl[R.DL_ORIGIN]]), 1)
        off_diagonal = copies[~np.eye(n, dtype=bool)]
        true = (dl[R.DL_VALUE] == R.VALUE_TRUE) & (dl[R.DL_CORRUPT] == 0)
        true_copies = np.zeros((n, n), dtype=np.int64)
        np.add.at(true_copies, (dl[R.DL_NODE, true], traffic.source[dl[R.DL_ORIGIN, true]]), 1)
    return AtaRun(algorithm, sim.topology.name, n, gamma, mu, length, timing.S, timing.r, timing.d, completion,
                  formula, not (dl[R.DL_CONTENTION] != 0).any(), int(off_diagonal.min()), int(off_diagonal.max()),
                  _first_contention(result, dl, traffic), copies=copies, true_copies=true_copies,
                  fifo_peak_bytes=int(result.stats[ST_FIFO_PEAK]), arrivals=np.sort(dl[R.DL_TICK]) / result.ticks_per_cycle - start, **extra)


def startup(run: AtaRun) -> Fraction:
    """tau_S as the run's formula uses it. In the worst case a stored hop restarts in S + MARK_CYCLES: the
    receiver marks the copy for its NP in one more cycle; FRS's NP restarts its messages itself (tau_S = S).
    Elsewhere tau_S + mu alpha = S + rM."""
    if run.queueing is not None and run.algorithm != "frs":
        return run.S + MARK_CYCLES
    return run.S


def formula_name(run: AtaRun) -> str:
    """Which formula the run's formula_cycles is, with the parameters it is evaluated with."""
    values = f"S = {run.S}, r = {run.r}, d = {run.d}"
    if run.queueing is not None:
        why = (f"tau_S = S + {MARK_CYCLES} = {startup(run)}: the receiver marks each stored copy for its NP in one "
               f"more cycle" if run.algorithm != "frs" else f"tau_S = S = {run.S}: its NP restarts each message itself")
        return f"Table IV with {why}, mu alpha = rM = {run.r * run.length}, alpha = d = {run.d}, D = {run.queueing}"
    if run.algorithm == "ihc":
        base = "eta(S + rM + (N-2)d)"
        if run.overlapped and run.eta == run.mu:
            base += " - (mu-1)^2 d (section VI-A, eta = mu)"
        elif run.overlapped:
            base += (" - (eta-1)(mu-1)d (eta > mu: each later stage starts (mu-1)d early; the paper's (mu-1)^2 d "
                     "is for eta = mu)")
        return f"best case {base} with {values}"
    return f"best case with {values}"


def plot_arrivals(run: AtaRun, path: str) -> None:
    """The copies delivered against time, with the formula's completion: where a run leaves its schedule."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    count = np.arange(1, len(run.arrivals) + 1)
    ax.step(run.arrivals, count, where="post", color="C0", label="engine")
    ax.axvline(float(run.formula_cycles), color="C3", ls="--",
               label=f"{'Table IV' if run.queueing is not None else 'best case'}: {float(run.formula_cycles):g}")
    ax.set_xlabel("cycles from the start")
    ax.set_ylabel("copies delivered" + (" (merged messages)" if run.algorithm == "frs" else ""))
    what = (f"eta = {run.eta}, " if run.eta is not None else "") + f"M = {run.length} bytes"
    worst = f", every hop stored, D = {run.queueing}" if run.queueing is not None else ""
    ax.set_title(f"{run.algorithm.upper()} on {run.topology} ({run.nodes} nodes), {what}{worst}: "
                 f"{'contention-free' if run.contention_free else 'contention'}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path, dpi=130)
    plt.close(fig)


WAITS = ((R.CONTENTION_STORED, "was stored (no transmitter was free)"),
         (R.CONTENTION_RETRIED, "was refused a transmitter"),
         (R.CONTENTION_QUEUED, "queued behind another packet (its header was in before its receiver was free)"))


def _first_contention(result, dl, traffic) -> str | None:
    """The first wait of the schedule's packets, from the packet log: whose packet, at which node and cycle,
    and what for; and how many packets first waited at that cycle. A delivered copy carries its packet's marks
    as they stand when it is delivered, which can include a wait of its head further on, so the copies' marks
    would name a copy that was not late (MODEL.md, "Lee & Shin's IHC")."""
    if not (dl[R.DL_CONTENTION] != 0).any():
        return None
    pl = result.packets
    own = traffic.kind[pl[R.PL_ORIGIN]] == R.TRAFFIC_INITIATE
    waited = np.nonzero(own & (pl[R.PL_CONTENDED_AT] >= 0))[0]
    if len(waited) == 0:
        return "copies carry contention marks, but no packet of the schedule logged a wait"
    ticks = pl[R.PL_CONTENDED_AT, waited]
    first = waited[np.lexsort((pl[R.PL_UID, waited], ticks))[0]]
    tick = int(pl[R.PL_CONTENDED_AT, first])
    kind = int(pl[R.PL_CONTENDED_KIND, first])
    what = " and ".join(name for bit, name in WAITS if kind & bit)
    others = int((ticks == tick).sum()) - 1
    return (f"at node {int(pl[R.PL_CONTENDED_NODE, first])}, cycle {float(Fraction(tick, result.ticks_per_cycle)):g}, "
            f"node {int(traffic.source[pl[R.PL_ORIGIN, first]])}'s packet {what}"
            + (f"; {others} more packets first waited at that cycle" if others else ""))
