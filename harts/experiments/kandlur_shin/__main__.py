"""Rewrite Kandlur & Shin's Markdown tables from the result files they summarise, without running anything:

    python -m harts.experiments.kandlur_shin [RESULTS]

claims_link.md, claims_node.md and points.md from `harts reproduce`'s claims_*.json and figures/*.csv,
sensitivity/bmu.md, bmu_saturated.md, spread.md and spread_latency.md from `harts sensitivity`'s CSVs, and
cut_through.md from cut_through.csv (python -m harts.experiments.kandlur_shin.cut_through). RESULTS defaults to the
committed bench/results/reproduce; `python -m harts.experiments.splice` then copies the tables into EXPERIMENTS.md.
"""

import sys
from pathlib import Path

from ..splice import COMMITTED, REPO
from . import cut_through, figures, sensitivity

results = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / COMMITTED
for path in (*figures.write_tables(results), *sensitivity.write_tables(results), *cut_through.write_tables(results)):
    print(f"wrote {path}")
