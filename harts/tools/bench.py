"""Engine speed: packet-hops and node-cycles simulated per wall-clock second under a config's traffic (by
default uniform Poisson unicasts on E-9), on whichever kernel the config's microprogram needs; the kernel's
loading or compilation excluded and reported apart."""

from __future__ import annotations

from ..machine.config import Config, hex_config
from ..machine.simulation import Simulation


def default_config() -> Config:
    """E-9 (217 nodes) at load 0.3, the reference point of the speed targets."""
    return hex_config(9, traffic__uniform__load=0.3, run__cycles=50_000)


def benchmark(config: Config, load: float | None = None, cycles: int | None = None,
              seed: int | None = None) -> dict:
    overrides = {}
    if load is not None:
        overrides["traffic__uniform__load"] = load
    if cycles is not None:
        overrides["run__cycles"] = cycles
    if seed is not None:
        overrides["run__seed"] = seed
    config = config.with_values(**overrides)
    simulation = Simulation(config)
    result = simulation.run(keep=False)
    summary = result.summary()
    offered = ("offered_node_load", "offered_link_load", "offered_flits_per_node_cycle")
    return {
        "topology": simulation.topology.name,
        "nodes": simulation.topology.n_nodes,
        "switching": simulation.switching,
        **{key: summary[key] for key in offered if key in summary},
        "cycles": float(result.cycles),
        "packets": summary["packets"],
        "packet_hops": summary["packet_hops"],
        **({"events": summary["events"]} if "events" in summary else {}),
        "wall_seconds": result.wall_seconds,
        "kernel_startup_seconds": result.startup_seconds,
        "packet_hops_per_second": summary["packet_hops_per_second"],
        "node_cycles_per_second": summary["node_cycles_per_second"],
        "cycles_per_second": summary["cycles_per_second"],
        "link_utilisation": summary["link_utilisation"],
        "latency_mean_cycles": summary["latency_mean_cycles"],
        "packets_in_flight_peak": summary["packets_in_flight_peak"],
    }
