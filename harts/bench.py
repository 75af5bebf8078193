"""Engine speed: node-cycles simulated per wall-clock second, compilation excluded and reported apart."""

from __future__ import annotations

import time

from .config import defaults
from .simulation import Simulation


def benchmark(size: int = 9, load: float = 0.3, cycles: int = 50_000, seed: int = 1) -> dict:
    started = time.perf_counter()
    # A tiny run compiles the kernel (or loads it from numba's on-disk cache) before timing.
    Simulation(defaults().with_values(mesh__size=3, traffic__uniform__load=0.1, run__cycles=50)).run()
    compile_seconds = time.perf_counter() - started
    config = defaults().with_values(mesh__size=size, traffic__uniform__load=load, run__cycles=cycles,
                                    run__seed=seed)
    sim = Simulation(config)
    result = sim.run()
    summary = result.summary()
    return {
        "size": size,
        "nodes": sim.topology.n_nodes,
        "load": load,
        "cycles": result.cycles,
        "packets": summary["packets"],
        "wall_seconds": result.wall_seconds,
        "compile_seconds": compile_seconds,
        "node_cycles_per_second": summary["node_cycles_per_second"],
        "cycles_per_second": summary["cycles_per_second"],
        "link_utilisation": summary["link_utilisation"],
        "latency_mean_cycles": summary["latency_mean_cycles"],
    }
