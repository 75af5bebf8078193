"""Engine speed: node-cycles simulated per wall-clock second, compilation excluded and reported apart."""

from __future__ import annotations

from .config import defaults
from .simulation import Simulation


def benchmark(size: int = 9, load: float = 0.3, cycles: int = 50_000, seed: int = 1) -> dict:
    config = defaults().with_values(mesh__size=size, traffic__uniform__load=load, run__cycles=cycles,
                                    run__seed=seed)
    sim = Simulation(config)
    result = sim.run()
    summary = result.summary()
    return {
        "size": size,
        "nodes": sim.topology.n_nodes,
        "load": load,
        "cycles": float(result.cycles),
        "packets": summary["packets"],
        "wall_seconds": result.wall_seconds,
        "kernel_startup_seconds": result.startup_seconds,
        "node_cycles_per_second": summary["node_cycles_per_second"],
        "cycles_per_second": summary["cycles_per_second"],
        "link_utilisation": summary["link_utilisation"],
        "latency_mean_cycles": summary["latency_mean_cycles"],
    }
