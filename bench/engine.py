"""Engine speed: packet-hops per second (and node-cycles per second) under uniform Poisson unicast traffic on
E-9, E-41, a 32x32 torus and the hypercube Q10, at loads 0.1, 0.3 and 0.5, one core, the kernel's loading
excluded. Writes bench/results/engine.json.

    python bench/engine.py [--repeat 3] [--only E-9]

Targets (issue 8): at least 10 M packet-hops/s on E-9 at load 0.3; E-41 within 25% of E-9's packet-hop
rate. The load is the offered mean link utilisation (traffic.uniform.load_basis: link), so every network
is compared at the same link utilisation; the measured one is in the JSON.
"""

import argparse
import statistics
import sys

from record import write_results

from harts.machine.config import defaults
from harts.machine.simulation import load_kernel
from harts.tools.bench import benchmark

NETWORKS = {
    "E-9": ({"kind": "hex", "size": 9}, 50_000),
    "E-41": ({"kind": "hex", "size": 41}, 5_000),
    "torus 32x32": ({"kind": "torus", "dims": [32, 32]}, 10_000),
    "Q10": ({"kind": "hypercube", "dimension": 10}, 20_000),
}
LOADS = (0.1, 0.3, 0.5)
TARGET_E9 = 10e6
TARGET_RATIO = 0.75


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per point; the median is reported")
    parser.add_argument("--only", choices=sorted(NETWORKS), help="one network")
    args = parser.parse_args()
    load_kernel()
    points = []
    for name, (topology, cycles) in NETWORKS.items():
        if args.only and name != args.only:
            continue
        for load in LOADS:
            config = defaults().with_values(topology=topology)
            runs = [benchmark(config, load=load, cycles=cycles) for _ in range(args.repeat)]
            rates = [r["packet_hops_per_second"] for r in runs]
            point = dict(runs[0])
            point["network"] = name
            point["load"] = load
            point["packet_hops_per_second"] = statistics.median(rates)
            point["all_packet_hops_per_second"] = rates
            points.append(point)
            print(f"{name:12s} load {load}: {point['packet_hops_per_second'] / 1e6:6.2f} M packet-hops/s, "
                  f"{point['node_cycles_per_second'] / 1e6:6.1f} M node-cycles/s, link utilisation "
                  f"{point['link_utilisation']:.2f}, {point['packets']} packets, {point['wall_seconds']:.2f} s",
                  flush=True)
    rate = {(p["network"], p["load"]): p["packet_hops_per_second"] for p in points}
    out = {
        "targets": {"E-9 packet-hops/s at load 0.3": TARGET_E9, "E-41 / E-9 packet-hop rate": TARGET_RATIO},
        "points": points,
    }
    if ("E-9", 0.3) in rate:
        out["E-9 at 0.3 meets target"] = rate["E-9", 0.3] >= TARGET_E9
    for load in LOADS:
        if ("E-9", load) in rate and ("E-41", load) in rate:
            out[f"E-41 / E-9 at {load}"] = rate["E-41", load] / rate["E-9", load]
    write_results("engine", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
