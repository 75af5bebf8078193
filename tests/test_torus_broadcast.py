"""Paper 004 on the circuit-switched controller: whole broadcasts run by the kernel against the paper's
formulas (typed here from the paper, evaluated with alpha, delta, tau worked out by hand from the config),
against the plan's idle schedule, under background traffic, and through `harts broadcast`."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harts.broadcasts.torus import run_torus_broadcast
from harts.errors import InputError, SimulationError
from harts.machine.config import load_config
from harts.tools.calibrate import LinearCost, measure_linear_cost

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "configs" / "circuit_torus_25x25.yaml"
L = 100


def cli(*args):
    return subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)


def torus(n, m=None, **values):
    return load_config(CONFIG).with_topology(kind="torus", dims=[n, m or n]).with_values(**values)


def test_the_shipped_torus_timing_by_hand():
    """circuit.yaml with np_send 49, bus delay 1, flit 1 cycle, no wire delay, deliver 1 (MODEL.md):
    alpha = n_s + b + 1 + n_d = 52; delta = (3 + Lk) + (1 + w) + Lk = 5 + 1 + 2 = 8 with Lk = b + k + w = 2;
    tau = k = 1."""
    assert measure_linear_cost(torus(25)) == LinearCost(52, 8, 1)


ALPHA, DELTA, TAU = 52, 8, 1
TILING = [  # (dims, variant, phases, the paper's time)
    ((5, 5), None, 2, 2 * ALPHA + 4 * DELTA + 2 * L * TAU),  # Theorem 2, k = 1
    ((25, 25), None, 4, 4 * ALPHA + 24 * DELTA + 4 * L * TAU),  # k = 2
    ((125, 125), None, 6, 6 * ALPHA + 124 * DELTA + 6 * L * TAU),  # k = 3
    ((10, 10), "slanting", 3, 3 * ALPHA + 10 * DELTA + 3 * L * TAU),
    ((10, 10), "square_blocks", 3, 3 * ALPHA + 11 * DELTA + 3 * L * TAU),
    ((10, 10), "four_squares", 3, 3 * ALPHA + 14 * DELTA + 3 * L * TAU),
    ((10, 5), None, 3, 3 * ALPHA + 8 * DELTA + 3 * L * TAU),
    ((5, 10), None, 3, 3 * ALPHA + 8 * DELTA + 3 * L * TAU),
]


@pytest.mark.parametrize("dims, variant, phases, expected", TILING,
                         ids=[f"{d[0]}x{d[1]}-{v}" for d, v, _, _ in TILING])
def test_tiling_takes_the_papers_time_to_the_cycle(dims, variant, phases, expected):
    for source in (0, dims[0] * dims[1] // 2 + 1):
        broadcast = run_torus_broadcast(torus(*dims), "tiling", source, L, variant=variant)
        s = broadcast.summary()
        assert s["completion_cycles"] == s["formula_cycles"] == expected
        assert s["copies_per_node_min"] == s["copies_per_node_max"] == 1
        assert s["contention_free"] and s["phases"] == phases
        terms = broadcast.terms()
        assert terms["sum_cycles"] == expected and terms["alpha_count"] == phases


def test_the_idle_schedule_is_checked_send_by_send():
    """A delta one cycle off makes every idle send disagree with the plan's schedule: the run raises."""
    with pytest.raises(SimulationError, match="idle schedule"):
        run_torus_broadcast(torus(5), "tiling", 0, L, cost=LinearCost(ALPHA, DELTA + 1, TAU))


def test_under_background_circuits_phases_stretch_and_nothing_is_lost():
    idle = run_torus_broadcast(torus(25), "tiling", 0, L)
    loaded = run_torus_broadcast(torus(25, flow__circuit_setup="retry", traffic__synthetic__rate=0.01,
                                       traffic__synthetic__packet_flits=16,
                                       run__warmup_cycles=1000, run__cycles=20000), "tiling", 0, L)
    s = loaded.summary()
    assert s["background_packets"] > 1000
    assert s["copies_per_node_min"] == s["copies_per_node_max"] == 1
    assert s["completion_cycles"] > idle.run.latency and not s["contention_free"]
    # no phase can end before its idle end: each waits for the one before
    assert all(a >= b for a, b in zip(loaded.phase_ends(), idle.phase_ends()))


def test_cli_json_has_the_issues_fields(tmp_path):
    done = cli("broadcast", "--algorithm", "tiling", "--config", str(CONFIG), "--json", "--plot",
               str(tmp_path / "tiling.png"))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["phases"] == 4 and data["completion_cycles"] == data["formula_cycles"] == 4 * ALPHA + 24 * DELTA \
        + 4 * L * TAU and data["contention_free"] is True
    assert len(data["sends"]) == 624 and {s["phase"] for s in data["sends"]} == {1, 2, 3, 4}
    assert (tmp_path / "tiling.png").stat().st_size > 10_000


@pytest.mark.parametrize("args, words", [
    (["--algorithm", "tiling", "--variant", "slanting"], "10 x 10"),
    (["--algorithm", "tiling", "--packets", "3"], "whole"),
    (["--algorithm", "tiling", "--source", "625"], "0..624"),
    (["--algorithm", "tiling", "--size", "5"], "--size"),
    (["--algorithm", "pcp", "--packets", "2"], "--packets"),
])
def test_bad_torus_broadcasts_end_in_one_line(args, words):
    done = cli("broadcast", "--config", str(CONFIG), *args)
    assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_size_the_tiling_does_not_cover_is_an_input_error():
    with pytest.raises(InputError, match="5\\^k x 5\\^k"):
        run_torus_broadcast(torus(6), "tiling", 0, L)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("packets", [1, 4])
def test_divide_and_conquer_takes_the_printed_t_of_b(k, packets):
    """Section 5: T(B) = k alpha + 2^k delta + k B tau + (L/B - 1)(alpha + 2^(k-1) delta + B tau)."""
    b = L // packets
    expected = k * ALPHA + 2 ** k * DELTA + k * b * TAU + (packets - 1) * (ALPHA + 2 ** (k - 1) * DELTA + b * TAU)
    broadcast = run_torus_broadcast(torus(2 ** k), "dc", 0, L, packets=packets)
    s = broadcast.summary()
    assert s["completion_cycles"] == s["formula_cycles"] == expected
    assert s["phases"] == k + packets - 1 and s["contention_free"]
    assert s["copies_per_node_min"] == s["copies_per_node_max"] == 1  # of every packet
    assert s["copies_total"] == (4 ** k - 1) * packets


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("packets", [1, 4])
def test_h_trees_take_their_schedule_not_the_printed_t_of_b(k, packets):
    """The schedule section 5 describes, by hand: the first packets of X and Y cross 2k - 1 phases (3x3: 2,
    nothing is left to fill) and d = 2^k - 1 hops (2^k from 31x31 up, where a fill path is 2 hops from a
    last-phase node); every further packet of each half costs the source two sends of 2^(k-2) hops, since
    its ports alternate between X and Y. The printed T(B) counts one."""
    b = -(-L // (2 * packets))  # the runner cuts L into whole-flit packets: 13 flits each for 8
    if k == 2:
        first = 2 * (ALPHA + DELTA + b * TAU)
    else:
        first = (2 * k - 1) * (ALPHA + b * TAU) + (2 ** k - 1 + (k >= 5)) * DELTA
    expected = first + 2 * (packets - 1) * (ALPHA + 2 ** (k - 2) * DELTA + b * TAU)
    printed = (2 * k - 1) * ALPHA + (2 ** k - 1) * DELTA + (2 * k - 1) * b * TAU \
        + (packets - 1) * (ALPHA + 2 ** (k - 2) * DELTA + b * TAU)
    broadcast = run_torus_broadcast(torus(2 ** k - 1), "htree", 0, L, packets=packets)
    s = broadcast.summary()
    assert s["completion_cycles"] == expected and s["formula_cycles"] == printed
    assert s["contention_free"] and s["copies_per_node_min"] == s["copies_per_node_max"] == 1
    assert s["copies_total"] == ((2 ** k - 1) ** 2 - 1) * 2 * packets
    if packets > 1 or k in (2, 5):
        assert expected != printed


def test_a_plan_the_memory_cannot_hold_is_refused_before_it_is_built(tmp_path):
    """255 nodes x 100,000 packets = 25.5 million sends at about 12 kB each: more than this machine has."""
    done = cli("broadcast", "--algorithm", "dc", "--config", str(REPO / "configs" / "circuit_torus_16x16.yaml"),
               "--packets", "100000")
    assert done.returncode == 2 and "25,500,000 sends" in done.stderr and "available" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
