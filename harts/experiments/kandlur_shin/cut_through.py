"""Why SFBCAST's disadvantage shrinks with load (paper statement 8): SBCAST's copies cut through less
the busier the network. One run per link load of SBCAST under the section-5 workload on E-n.

    python -m harts.experiments.kandlur_shin.cut_through [--size 7] [--cycles 60000]

For each load: the share of the nodes on SBCAST copies' paths that they cut through (C / (C + T - 1)
summed over copies: T transmissions, C cut-throughs), the share of copies delivered marked (their tee's
forward was refused and the NP sent them on), and the transmissions per copy.
"""

from __future__ import annotations

import argparse

import numpy as np

from ...controller import records as R
from ...machine.config import hex_config
from ...machine.simulation import Simulation
from ...machine.traffic import paper_workload
from ...np.kandlur_shin import ALGORITHMS, MARKED

LOADS = (0.05, 0.3, 0.5, 0.7)


def cut_through_under_load(size: int = 7, loads=LOADS, cycles: int = 60_000, seed: int = 7) -> list[dict]:
    rows = []
    for load in loads:
        config = hex_config(size)
        sim = Simulation(config)
        traffic = paper_workload(sim.topology, load, "link", ALGORITHMS["sbcast"], config.bytes_per_cycle, cycles,
                                 np.random.default_rng(seed))
        result = sim.run(traffic)
        initiations = np.nonzero(traffic.kind == R.TRAFFIC_INITIATE)[0]
        copies, _ = result.copies_of(initiations)
        cuts = result.deliveries[R.DL_CUTS, copies]
        restarts = result.deliveries[R.DL_STORES, copies]
        rows.append({"load": load, "broadcasts": len(initiations), "copies": len(copies),
                     "cut_through_share": float(cuts.sum() / (cuts.sum() + restarts.sum())),
                     "marked_share": float(((result.header("flags")[copies] & MARKED) != 0).mean()),
                     "transmissions_per_copy": float((restarts + 1).mean())})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=7)
    parser.add_argument("--cycles", type=int, default=60_000)
    args = parser.parse_args()
    for row in cut_through_under_load(args.size, cycles=args.cycles):
        print(f"link load {row['load']:g}: {row['broadcasts']} broadcasts, {row['copies']} copies; cut through "
              f"{row['cut_through_share']:.1%} of path nodes, {row['marked_share']:.1%} marked, "
              f"{row['transmissions_per_copy']:.2f} transmissions per copy")


if __name__ == "__main__":
    main()
