"""Why SFBCAST's disadvantage shrinks with load (paper statement 8): SBCAST's copies cut through less
the busier the network. One run per link load of SBCAST under the section-5 workload on E-n.

    python -m harts.experiments.kandlur_shin.cut_through [--size 7] [--cycles 60000] [--results RESULTS]

For each load: the share of the nodes on SBCAST copies' paths that they cut through (C / (C + T - 1)
summed over copies: T transmissions, C cut-throughs), the share of copies delivered marked (their tee's
forward was refused and the NP sent them on), and the transmissions per copy. A first row gives the same
for the zero-load tree of the functional model (harts.reference). It writes RESULTS/cut_through.csv and the
Markdown table RESULTS/cut_through.md (`python -m harts.experiments.kandlur_shin` rewrites the table from the
CSV).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from ...controller import records as R
from ...machine.config import hex_config
from ...machine.simulation import Simulation
from ...machine.traffic import length_distribution, paper_workload
from ...np.kandlur_shin import ALGORITHMS, MARKED
from ...output import write_text
from ...reference.kandlur_shin import broadcast_copies
from ..sweep import write_csv

LOADS = (0.05, 0.3, 0.5, 0.7)


def cut_through_under_load(size: int = 7, loads=LOADS, cycles: int = 60_000, seed: int = 7) -> list[dict]:
    rows = []
    for load in loads:
        config = hex_config(size)
        sim = Simulation(config)
        traffic = paper_workload(sim.topology, load, "link", ALGORITHMS["sbcast"], config.bytes_per_cycle, cycles,
                                 np.random.default_rng(seed), *length_distribution(config))
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


def zero_load(size: int = 7) -> dict:
    """The same shares for the functional model's SBCAST tree: what every copy does on an idle network."""
    tree = broadcast_copies("sbcast", size)
    cuts, restarts = sum(c.cut_throughs for c in tree), sum(c.transmissions - 1 for c in tree)
    return {"load": 0.0, "broadcasts": 1, "copies": len(tree), "cut_through_share": cuts / (cuts + restarts),
            "marked_share": 0.0, "transmissions_per_copy": sum(c.transmissions for c in tree) / len(tree)}


def markdown(rows: list[dict]) -> str:
    """The table EXPERIMENTS.md shows (statement 8): a row per link load, the functional model's first."""
    lines = ["| link load | cut through | marked | transmissions per copy |", "|---|---|---|---|"]
    for first, row in enumerate(rows):
        load = "0 (functional model)" if first == 0 else f"{float(row['load']):g}"
        marked = float(row["marked_share"])
        lines.append(f"| {load} | {float(row['cut_through_share']):.1%} | {f'{marked:.1%}' if marked else '0'} | "
                     f"{float(row['transmissions_per_copy']):.2f} |")
    return "\n".join(lines) + "\n"


def write(results: Path, size: int = 7, cycles: int = 60_000) -> list[dict]:
    """Run every load; write results/cut_through.csv and cut_through.md. Returns the rows, the zero-load one first."""
    rows = [zero_load(size), *cut_through_under_load(size, cycles=cycles)]
    results.mkdir(parents=True, exist_ok=True)
    write_csv(rows, results / "cut_through.csv")
    write_text(results / "cut_through.md", markdown(rows))
    return rows


def write_tables(results: Path) -> list[Path]:
    """Rewrite results/cut_through.md from its cut_through.csv, without running."""
    if not (results / "cut_through.csv").is_file():
        return []
    write_text(results / "cut_through.md", markdown(list(csv.DictReader((results / "cut_through.csv").open()))))
    return [results / "cut_through.md"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=7)
    parser.add_argument("--cycles", type=int, default=60_000)
    parser.add_argument("--results", type=Path, default=Path("harts-results"),
                        help="results directory (default: harts-results)")
    args = parser.parse_args()
    for row in write(args.results, args.size, args.cycles):
        print(f"link load {row['load']:g}: {row['broadcasts']} broadcasts, {row['copies']} copies; cut through "
              f"{row['cut_through_share']:.1%} of path nodes, {row['marked_share']:.1%} marked, "
              f"{row['transmissions_per_copy']:.2f} transmissions per copy")
    print(f"wrote {args.results / 'cut_through.csv'} and {args.results / 'cut_through.md'}")


if __name__ == "__main__":
    main()
