"""Paper 001's IHC all-to-all broadcast on the engine, in dedicated mode, against Table II evaluated with the
timing MODEL.md derives from the parameters (S = 7, r = 1/6, d = 5 cycles), not with the engine's own
calibration."""

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from harts.config import defaults
from harts.experiments.lee_shin.ata import default_eta, ihc, ks_ata

REPO = Path(__file__).resolve().parent.parent
S, R, D = Fraction(7), Fraction(1, 6), Fraction(5)


def table_two(n: int, eta: int, length: int) -> Fraction:
    """eta (tau_S + mu alpha + (N - 2) alpha), with tau_S + mu alpha = S + rM and alpha = d."""
    return eta * (S + R * length + (n - 2) * D)


@pytest.mark.parametrize("spec, eta", [
    ({"kind": "hex", "size": 3}, 19),
    ({"kind": "hex", "size": 6}, 7),
    ({"kind": "torus", "dims": [4, 4]}, 2),
    ({"kind": "torus", "dims": [6, 6]}, 3),
    ({"kind": "hypercube", "dimension": 4}, 2),
    ({"kind": "hypercube", "dimension": 8}, 2),
], ids=lambda x: str(x))
def test_dedicated_ihc_takes_table_two_exactly_without_contention(spec, eta):
    run = ihc(defaults().with_values(topology=spec), eta, 2)
    gamma = {"hex": 6, "torus": 4}.get(spec["kind"], spec.get("dimension"))
    assert run.length == 48  # 2 x (d = 30 bytes) less the 8-byte idle gap, in whole cycles
    assert run.completion_cycles == table_two(run.nodes, eta, 48)
    assert run.contention_free and run.first_contention is None
    assert run.copies_per_node_min == run.copies_per_node_max == run.gamma == gamma


def test_overlapped_stages_save_mu_minus_one_squared_alpha():
    config = defaults().with_values(topology={"kind": "torus", "dims": [6, 6]})
    plain, overlapped = ihc(config, 3, 3), ihc(config, 3, 3, overlapped=True)
    assert plain.length == overlapped.length == 78  # floor(3 x 5 - 8/6) = 13 cycles
    assert plain.completion_cycles == table_two(36, 3, 78) == 570
    assert overlapped.completion_cycles == 570 - (3 - 1) ** 2 * D
    assert overlapped.contention_free


@pytest.mark.parametrize("spec, eta, where", [
    ({"kind": "torus", "dims": [4, 4]}, 1, "node 0"),  # eta < mu: the packets cannot all be in flight
    ({"kind": "hex", "size": 3}, 2, "from node 18"),  # N = 19 mod 2 != 0: node 18 and node 0 both start
], ids=["eta-below-mu", "eta-not-dividing-N"])
def test_a_schedule_whose_packets_meet_is_reported_with_where(spec, eta, where):
    run = ihc(defaults().with_values(topology=spec), eta, 2)
    assert not run.contention_free
    assert run.completion_cycles > table_two(run.nodes, eta, 48)
    assert where in run.first_contention and "refused a transmitter" in run.first_contention
    assert run.copies_per_node_min == run.gamma  # late, but every copy arrives


def test_default_eta_is_the_smallest_divisor_of_n_from_mu():
    assert default_eta(16, 2) == 2 and default_eta(36, 5) == 6 and default_eta(19, 2) == 19


def test_harts_ata_prints_the_interface_fields(tmp_path):
    config = tmp_path / "torus.yaml"
    config.write_text("topology: {kind: torus, dims: [4, 4]}\n")
    out = subprocess.run([sys.executable, "-m", "harts.cli", "ata", "--config", str(config), "--json"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["completion_cycles"] == data["formula_cycles"] == 170
    assert data["contention_free"] and data["copies_per_node_min"] == data["copies_per_node_max"] == 4


@pytest.mark.parametrize("n", [3, 5, 7])
def test_ks_ata_takes_n_six_bcasts_of_three_restarts_and_2n_minus_5_cut_throughs(n):
    """Section V-B: 3 store-and-forward operations and 2m - 5 cut-throughs per broadcast, N in turn."""
    run = ks_ata(defaults().with_values(topology={"kind": "hex", "size": n}), 2)
    nodes = 3 * n * (n - 1) + 1
    assert run.completion_cycles == nodes * (3 * (S + R * 48) + (2 * n - 5) * D)
    assert run.contention_free and run.copies_per_node_min == run.copies_per_node_max == 6
    # Table II prints a lower bound of 2m - 5, 2 sqrt((N-1)/3) - 5
    assert run.printed_formula_cycles < float(run.formula_cycles)
