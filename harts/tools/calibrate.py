"""Zero-load calibration: measure S, r and d of the latency model S + rM + (h-1)d from unicast runs."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..controller import records
from ..errors import InputError, SimulationError
from ..faults.fault_set import FAULT_KEYS, refuse_faults, without_faults
from ..machine.config import Config
from ..machine.simulation import Simulation
from ..machine.traffic import unicast

LENGTHS = (64, 128, 512)


@dataclass
class Calibration:
    topology: str
    S: Fraction
    r: Fraction
    d: Fraction
    max_residual: Fraction
    probes: list[dict]  # hops, length, destination, latency, model

    def as_dict(self) -> dict:
        return {
            "S_cycles": float(self.S), "r_cycles_per_byte": float(self.r), "d_cycles": float(self.d),
            "S": str(self.S), "r": str(self.r), "d": str(self.d),
            "max_residual_cycles": float(self.max_residual), "probes": len(self.probes),
            "hops_checked": sorted({p["hops"] for p in self.probes}),
            "lengths_checked": list(LENGTHS),
        }


def _refuse_faults(config: Config) -> None:
    """A probe a fault loses has no latency: fitting it as one gave S = r = d = 0 with node 0 crashed."""
    refuse_faults(config, FAULT_KEYS, "calibration measures every probe on",
                  "leave them out (harts run and harts faults measure what faults cost)")


def calibrate(config: Config, lengths=LENGTHS) -> Calibration:
    """Send one packet at a time from node 0 to every other node, at every length, on an idle network."""
    _refuse_faults(config)
    sim = Simulation(config)
    topo = sim.topology
    destinations = np.arange(1, topo.n_nodes)
    hops = topo.distance(np.zeros(len(destinations), np.int64), destinations)
    # Spacing so that no probe can meet the previous one: far more than any zero-load latency.
    spacing = 10 * (max(lengths) + 64 * int(hops.max()))
    dst = np.repeat(destinations, len(lengths))
    length = np.tile(np.asarray(lengths), len(destinations))
    create = np.arange(len(dst)) * spacing
    result = sim.run(unicast(create, np.zeros(len(dst)), dst, length))
    dl = result.deliveries
    _refuse_lost_probes(dl, dst)
    ticks = np.zeros(len(dst), dtype=np.int64)
    ticks[dl[records.DL_UID]] = dl[records.DL_TICK] - dl[records.DL_CREATE]
    latency = [Fraction(int(t), result.ticks_per_cycle) for t in ticks]
    hop_of = np.repeat(hops, len(lengths))

    def measured(h: int, m: int) -> Fraction:
        i = next(k for k in range(len(dst)) if hop_of[k] == h and length[k] == m)
        return latency[i]

    m0, m1 = lengths[0], lengths[1]
    r = (measured(1, m1) - measured(1, m0)) / (m1 - m0)
    S = measured(1, m0) - r * m0
    d = measured(2, m0) - measured(1, m0) if hops.max() >= 2 else Fraction(0)
    probes = []
    worst = Fraction(0)
    for k in range(len(dst)):
        model = S + r * int(length[k]) + (int(hop_of[k]) - 1) * d
        worst = max(worst, abs(model - latency[k]))
        probes.append({"hops": int(hop_of[k]), "length": int(length[k]), "destination": int(dst[k]),
                       "latency": latency[k], "model": model})
    return Calibration(topo.name, S, r, d, worst, probes)


def _refuse_lost_probes(deliveries: np.ndarray, destinations: np.ndarray) -> None:
    """Every probe (uid k went to destinations[k]) must have arrived: a lost one has no latency to fit."""
    arrived = np.zeros(len(destinations), bool)
    arrived[deliveries[records.DL_UID]] = True
    if not arrived.all():
        lost = sorted({int(v) for v in destinations[~arrived]})
        raise SimulationError(f"{int((~arrived).sum())} probes from node 0 were not delivered (to node"
                              f"{'s' if len(lost) > 1 else ''} {', '.join(map(str, lost[:10]))}"
                              f"{', ...' if len(lost) > 10 else ''}): the microprogram lost them on an idle, "
                              f"fault-free network, and a lost probe has no latency to fit")


FLIT_LENGTHS = (1, 4, 16)  # data flits per probe packet


@dataclass
class FlitCalibration:
    """The zero-load model of a wormhole or circuit microprogram, fitted and checked on every destination."""

    topology: str
    model: str  # the formula, in the names of `terms`
    terms: dict[str, Fraction]  # name -> cycles (per hop / per flit where the name says)
    max_residual: Fraction
    probes: list[dict]  # hops, flits, destination, latency, model

    def as_dict(self) -> dict:
        return {"model": self.model, **{f"{k}": float(v) for k, v in self.terms.items()},
                "exact": {k: str(v) for k, v in self.terms.items()},
                "max_residual_cycles": float(self.max_residual), "probes": len(self.probes),
                "hops_checked": sorted({p["hops"] for p in self.probes}), "flits_checked": list(FLIT_LENGTHS)}


def calibrate_flits(config: Config, lengths=FLIT_LENGTHS) -> FlitCalibration:
    """One packet at a time from node 0 to every other node at every length, on an idle network: fit the
    model from the 1- and 2-hop probes, then take the largest residual over all of them.

    Wormhole: S + r*M + (h-1)*d with M in flits. Circuit: alpha + h*delta + L*tau as paper 004 writes it,
    L the data flits."""
    from ..controller import isa

    _refuse_faults(config)
    sim = Simulation(config)
    topo = sim.topology
    destinations = np.arange(1, topo.n_nodes)
    hops = topo.distance(np.zeros(len(destinations), np.int64), destinations)
    f = sim.params
    # no probe can meet the previous one: far more than any zero-load latency
    spacing = 4 * (max(lengths) * f.flit_cycles + int(hops.max()) * (3 * f.link_latency + 8) + 64)
    dst = np.repeat(destinations, len(lengths))
    flits = np.tile(np.asarray(lengths), len(destinations))
    dl = sim.run(unicast(np.arange(len(dst)) * spacing, 0, dst, flits * f.flit_bytes)).deliveries
    _refuse_lost_probes(dl, dst)
    latency = np.zeros(len(dst), np.int64)
    latency[dl[records.DL_UID]] = dl[records.DL_TICK] - dl[records.DL_CREATE]
    hop_of = np.repeat(hops, len(lengths))

    def measured(h: int, m: int) -> Fraction:
        return Fraction(int(latency[(hop_of == h) & (flits == m)][0]))

    m0, m1 = lengths[0], lengths[1]
    per_flit = (measured(1, m1) - measured(1, m0)) / (m1 - m0)
    per_hop = measured(2, m0) - measured(1, m0) if hops.max() >= 2 else Fraction(0)
    if sim.microprogram.switching == isa.SWITCHING_CIRCUIT:
        alpha = measured(1, m0) - per_hop - per_flit * m0
        terms = {"alpha_cycles": alpha, "delta_cycles_per_hop": per_hop, "tau_cycles_per_flit": per_flit}
        model_text = "alpha + h*delta + L*tau"

        def model(h, m):
            return alpha + h * per_hop + m * per_flit
    else:
        start = measured(1, m0) - per_flit * m0
        terms = {"S_cycles": start, "r_cycles_per_flit": per_flit, "d_cycles_per_hop": per_hop}
        model_text = "S + r*M + (h-1)*d"

        def model(h, m):
            return start + per_flit * m + (h - 1) * per_hop
    probes = []
    worst = Fraction(0)
    for k in range(len(dst)):
        predicted = model(int(hop_of[k]), int(flits[k]))
        worst = max(worst, abs(predicted - int(latency[k])))
        probes.append({"hops": int(hop_of[k]), "flits": int(flits[k]), "destination": int(dst[k]),
                       "latency": int(latency[k]), "model": predicted})
    return FlitCalibration(topo.name, model_text, terms, worst, probes)


@dataclass(frozen=True)
class LinearCost:
    """Paper 004's linear cost model of one circuit: alpha + h*delta + L*tau cycles, as measured."""

    alpha: int
    delta: int
    tau: int

    def send(self, hops: int, flits: int) -> int:
        return self.alpha + hops * self.delta + flits * self.tau


CALIBRATION_TORUS = {"kind": "torus", "dims": [5, 5]}


def measure_linear_cost(config: Config) -> LinearCost:
    """alpha, delta and tau of the config's circuit microprogram and timing, measured on a 5x5 torus (every
    destination, every length, residual zero) rather than on the config's own network, whose every node
    would take as long to probe for no more information: a broadcast on an idle network then checks
    every one of its sends against these terms."""
    # the config's faults name nodes and links of its own network, not of this one
    fit = calibrate_flits(without_faults(config).with_values(topology=CALIBRATION_TORUS))
    terms = fit.terms
    if fit.max_residual != 0 or any(value.denominator != 1 for value in terms.values()):
        raise InputError(f"{config.microcode_path()}: its circuits do not take alpha + h delta + L tau whole cycles "
                         f"on an idle 5x5 torus (largest residual {float(fit.max_residual)} cycles)")
    return LinearCost(*(int(terms[name]) for name in ("alpha_cycles", "delta_cycles_per_hop", "tau_cycles_per_flit")))
