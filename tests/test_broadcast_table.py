"""Which broadcast runs where (harts/broadcasts/table.py): every (algorithm, shipped config) pair is accepted or
refused as written out by hand here, a refusal comes before anything is built or run, in one line that names a
config that fits; the table agrees with the plan modules' own checks; `harts faults` takes the same table; and
`harts ata` refuses an IHC packet longer than mu FIFO lengths and a wormhole or circuit config."""

import subprocess
import sys
from pathlib import Path

import pytest

from harts import cli as harts_cli
from harts.broadcasts import kandlur_shin, plans, torus
from harts.broadcasts.plans import make_plan
from harts.broadcasts.table import (
    BROADCASTS,
    CIRCUIT_ROUTES,
    RELAY,
    WORMHOLE_ROUTES,
    check_broadcast,
)
from harts.cli import main
from harts.controller.microcode import assemble
from harts.errors import InputError
from harts.machine.config import CONFIGS_DIR, MICROCODE_DIR, defaults, load_config
from harts.network.build import build_topology
from harts.np import divide_and_conquer, h_tree, tiling

REPO = Path(__file__).resolve().parent.parent
PAPER_000 = ("sbcast", "2bcast", "3bcast", "4bcast", "5bcast", "6bcast", "sfbcast", "hamiltonian")
HEX_CONFIGS = ("default.yaml", "explicit_e5.yaml", "store_and_forward_e9.yaml", "uniform_e9.yaml")
# By hand from each config's topology, microcode and flow.np_channels against the papers' networks: the only
# pairs that fit. mesh_8x8, mesh_hypercube_9x8 and torus_8x8 run the cut-through HARTS microprogram;
# wormhole_torus_8x8 routes by dimension order only, which RD's unicasts need and nothing else;
# circuit_mesh_8x8 and hypercube_q6 are no paper's network.
FITS = {
    *{(name, config) for name in PAPER_000 for config in HEX_CONFIGS},
    *{(name, "t3d_mesh_8x8.yaml") for name in ("pcp", "rd", "edn", "npd")},  # 8x8 = 2^3 x 2^3
    ("rd", "wormhole_torus_8x8.yaml"),
    ("rd", "booksim2_mesh_8x8.yaml"), ("rd", "booksim2_torus_8x8.yaml"),  # one-port wormhole, by destination
    ("mh", "t3d_mesh_hypercube_9x8.yaml"),
    ("tiling", "circuit_torus_25x25.yaml"),  # 25 = 5^2
    ("dc", "circuit_torus_16x16.yaml"),  # 16 = 2^4
    ("htree", "circuit_torus_15x15.yaml"),  # 15 = 2^4 - 1
}
SHIPPED = sorted(path.name for path in CONFIGS_DIR.glob("*.yaml"))


class Ran(Exception):
    """Raised by the stand-ins for the runners: the command got past its checks."""


@pytest.fixture
def runners_stopped(monkeypatch):
    """Every broadcast runner, and plan building, raise Ran instead of working."""
    def stop(*args, **kwargs):
        raise Ran
    for module, name in ((kandlur_shin, "run_broadcast"), (plans, "make_plan"), (plans, "run_plan"),
                         (torus, "run_torus_broadcast")):
        monkeypatch.setattr(module, name, stop)


def broadcast(capsys, *args):
    """harts broadcast in this process: (exit code, stderr lines), or Ran if it got to a runner."""
    code = main(["broadcast", *map(str, args)])
    return code, capsys.readouterr().err.strip().splitlines()


def test_the_hand_list_covers_every_algorithm_and_shipped_config():
    assert set(BROADCASTS) == {name for name, _ in FITS} and len(BROADCASTS) == 16
    assert {config for _, config in FITS} <= set(SHIPPED)


@pytest.mark.parametrize("config", SHIPPED)
@pytest.mark.parametrize("algorithm", list(BROADCASTS))
def test_every_shipped_pair_is_run_or_refused_in_one_line_before_anything_is_built(capsys, runners_stopped,
                                                                                   algorithm, config):
    path = CONFIGS_DIR / config
    if (algorithm, config) in FITS:
        with pytest.raises(Ran):
            broadcast(capsys, "--algorithm", algorithm, "--config", path)
        return
    code, lines = broadcast(capsys, "--algorithm", algorithm, "--config", path)
    assert code == 2 and len(lines) == 1 and lines[0].startswith(f"harts: error: {path}"), lines
    assert "Traceback" not in lines[0] and (algorithm in lines[0] or "tiling broadcast" in lines[0]), lines
    # what would fit: a shipped config the hand list says runs this algorithm
    named = [name for name in SHIPPED if f"configs/{name}" in lines[0].split(str(path), 1)[1]]
    assert named and all((algorithm, name) in FITS for name in named), lines


@pytest.mark.parametrize("algorithm, config, words", [
    ("pcp", "mesh_8x8.yaml", "pcp runs on a 2-D mesh by wormhole switching with a microprogram that follows routes "
                             "in the header (microcode: cpr) and needs all-port NPs"),
    ("pcp", "mesh_8x8.yaml", "the config's microprogram 'harts' switches by cut-through and its flow.np_channels is "
                             "1 of 4 ports: set microcode: cpr and flow.np_channels: 0, as configs/t3d_mesh_8x8.yaml"),
    ("mh", "mesh_hypercube_9x8.yaml", "set microcode: wormhole and flow.np_channels: 0, as "
                                      "configs/t3d_mesh_hypercube_9x8.yaml does"),
    ("rd", "mesh_8x8.yaml", "'harts' switches by cut-through: set microcode: wormhole, as"),  # RD: any NP ports
    ("dc", "wormhole_torus_8x8.yaml", "'wormhole' switches by wormhole and its flow.np_channels is 1 of 4"),
    ("dc", "torus_8x8.yaml", "'harts' switches by cut-through and its flow.np_channels is 1 of 4"),
    ("6bcast", "torus_8x8.yaml", "6bcast runs on a hexagonal mesh E-n (n >= 3), not on torus 8x8: use --size N, "
                                 "or a hex config such as configs/uniform_e9.yaml"),
    ("tiling", "circuit_torus_16x16.yaml", "not on torus 16x16: use a config such as configs/circuit_torus_25x25"),
    ("htree", "circuit_torus_16x16.yaml", "htree needs a (2^k - 1) x (2^k - 1) torus with k >= 2, not torus 16x16"),
    ("npd", "circuit_mesh_8x8.yaml", "the config's microprogram 'circuit' switches by circuit"),
    ("pcp", "wormhole_torus_8x8.yaml", "pcp needs a 2-D mesh, not torus 8x8"),
])
def test_a_refusal_says_what_does_not_fit(capsys, runners_stopped, algorithm, config, words):
    code, lines = broadcast(capsys, "--algorithm", algorithm, "--config", CONFIGS_DIR / config)
    assert code == 2 and words in lines[0], lines


def test_a_microprogram_of_the_right_switching_that_lacks_what_the_algorithm_needs_is_named(capsys, tmp_path):
    wormhole = tmp_path / "w.yaml"
    wormhole.write_text("topology: {kind: mesh, dims: [8, 8]}\nmicrocode: wormhole\nflow: {np_channels: 0}\n")
    with pytest.raises(InputError, match="'wormhole' follows no route in the header .no header segments.: set "
                                         "microcode: cpr, as configs/t3d_mesh_8x8.yaml does"):
        check_broadcast(load_config(wormhole), "pcp")
    relay = tmp_path / "r.yaml"
    relay.write_text("topology: {kind: hex, size: 3}\nmicrocode: ihc\n")
    with pytest.raises(InputError, match="'ihc' does not relay send_packet worms"):
        check_broadcast(load_config(relay), "sbcast")


def test_the_switching_requirements_pick_these_shipped_microprograms():
    def fitting(switching):
        return {path.stem for path in MICROCODE_DIR.glob("*.yaml") if switching.fits(assemble(path))}
    assert fitting(RELAY) == {"harts", "store_and_forward"}  # ihc.yaml and vrs.yaml relay by table and segments
    assert fitting(WORMHOLE_ROUTES) == {"cpr"}
    assert fitting(CIRCUIT_ROUTES) == {"circuit"}


@pytest.mark.parametrize("channels, pcp, rd", [(0, True, True), (4, True, True), (2, False, True), (1, False, True)])
def test_all_port_is_np_channels_0_or_one_per_port(channels, pcp, rd):
    config = load_config(CONFIGS_DIR / "t3d_mesh_8x8.yaml").with_values(flow__np_channels=channels)
    for algorithm, fits in (("pcp", pcp), ("rd", rd)):
        if fits:
            check_broadcast(config, algorithm)
        else:
            with pytest.raises(InputError, match=f"flow.np_channels is {channels} of 4 ports"):
                check_broadcast(config, algorithm)


def test_an_unknown_algorithm_is_refused_naming_the_sixteen():
    with pytest.raises(InputError, match="unknown broadcast '7bcast'; expected one of sbcast, 2bcast, .*, htree$"):
        check_broadcast(defaults(), "7bcast")


def mesh(x, y):
    return {"kind": "mesh", "dims": [x, y]}


def torus_spec(x, y):
    return {"kind": "torus", "dims": [x, y]}


def mh(m, n):
    return {"kind": "mesh_hypercube", "levels": m, "cube": n}


NETWORKS = [mesh(2, 2), mesh(4, 4), mesh(5, 4), mesh(8, 4), mesh(6, 6), mesh(8, 8), mesh(16, 16),
            {"kind": "mesh", "dims": [4, 4, 4]}, torus_spec(3, 3), torus_spec(4, 4), torus_spec(5, 5),
            torus_spec(6, 6), torus_spec(7, 7), torus_spec(8, 8), torus_spec(8, 4), torus_spec(10, 10),
            torus_spec(5, 10), torus_spec(10, 5), torus_spec(15, 15), torus_spec(16, 16), torus_spec(25, 25),
            mh(1, 4), mh(3, 2), mh(3, 4), mh(9, 8), mh(4, 16), {"kind": "hex", "size": 3},
            {"kind": "hypercube", "dimension": 4}]
# By hand, from the papers' definitions (and our EDN/NP-D reconstructions' 4 x 4 blocks)
DEFINED = {
    "pcp": {"mesh 2x2", "mesh 4x4", "mesh 5x4", "mesh 8x4", "mesh 6x6", "mesh 8x8", "mesh 16x16"},
    "rd": {"mesh 2x2", "mesh 4x4", "mesh 8x4", "mesh 8x8", "mesh 16x16", "torus 4x4", "torus 8x8", "torus 8x4",
           "torus 16x16"},
    "edn": {"mesh 4x4", "mesh 8x8", "mesh 16x16"},
    "npd": {"mesh 8x8", "mesh 16x16"},
    "mh": {"MH(1,4)", "MH(3,4)", "MH(9,8)", "MH(4,16)"},
    "tiling": {"torus 5x5", "torus 10x10", "torus 5x10", "torus 10x5", "torus 25x25"},
    "dc": {"torus 4x4", "torus 8x8", "torus 16x16"},
    "htree": {"torus 3x3", "torus 7x7", "torus 15x15"},
}
PLANS = {"tiling": lambda topology: tiling.plan(topology, 0),
         "dc": lambda topology: divide_and_conquer.plan(topology, 0, 1),
         "htree": lambda topology: h_tree.plan(topology, 0, 1)}


@pytest.mark.parametrize("algorithm", list(DEFINED))
def test_the_table_accepts_a_network_exactly_where_the_plan_builds(algorithm):
    base = load_config(REPO / BROADCASTS[algorithm].config)
    accepted, built = set(), set()
    for spec in NETWORKS:
        topology = build_topology(spec)
        try:
            check_broadcast(base.with_topology(**spec), algorithm)
            accepted.add(topology.name)
        except InputError:
            pass
        try:
            (PLANS.get(algorithm) or (lambda t: make_plan(t, algorithm, 0)))(topology)
            built.add(topology.name)
        except (ValueError, InputError):
            pass
    assert accepted == built == DEFINED[algorithm]


def test_paper_000_runs_on_every_hex_size_and_nothing_else():
    base = load_config(CONFIGS_DIR / "uniform_e9.yaml")
    for size in (3, 4, 12):
        check_broadcast(base.with_topology(kind="hex", size=size), "4bcast")
    for spec in NETWORKS:
        if spec["kind"] != "hex":
            with pytest.raises(InputError, match="use --size N, or a hex config"):
                check_broadcast(base.with_topology(**spec), "sfbcast")


def test_the_new_mh_config_is_the_t3d_mapping_paper_003_is_reproduced_with():
    from harts.experiments.al_mahadeen.mesh_hypercube import t3d_config
    shipped, reproduced = load_config(CONFIGS_DIR / "t3d_mesh_hypercube_9x8.yaml"), t3d_config(9, 8)
    plain = {key: getattr(value, "plain", lambda v=value: v)() for key, value in shipped.values.items()}
    assert plain == {key: getattr(value, "plain", lambda v=value: v)() for key, value in reproduced.values.items()}


def test_size_picks_the_hexagonal_mesh_for_paper_000_only(capsys, runners_stopped):
    with pytest.raises(Ran):  # the config's other keys, on E-4
        broadcast(capsys, "--algorithm", "3bcast", "--size", "4", "--config", CONFIGS_DIR / "torus_8x8.yaml")
    code, lines = broadcast(capsys, "--algorithm", "pcp", "--size", "4", "--config", CONFIGS_DIR / "t3d_mesh_8x8.yaml")
    assert code == 2 and "--size picks a hexagonal mesh for paper 000" in lines[0]


def test_end_to_end_a_fitting_pair_runs_and_a_misfit_is_refused():
    done = subprocess.run([sys.executable, "-m", "harts.cli", "broadcast", "--algorithm", "rd", "--config",
                           "configs/t3d_mesh_8x8.yaml", "--length", "10"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and "steps" in done.stdout, done.stderr
    refused = subprocess.run([sys.executable, "-m", "harts.cli", "broadcast", "--algorithm", "rd", "--config",
                              "configs/mesh_8x8.yaml"], capture_output=True, text=True, cwd=REPO)
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines() == [
        "harts: error: configs/mesh_8x8.yaml: rd runs on a 2-D mesh or torus whose sides are powers of two by "
        "wormhole switching with a microprogram that routes by destination (microcode: wormhole); the config's "
        "microprogram 'harts' switches by cut-through: set microcode: wormhole, as configs/t3d_mesh_8x8.yaml does"]


# harts faults takes the same table


@pytest.fixture
def trials_recorded(monkeypatch):
    """harts faults' two reports record the algorithms they were asked for instead of running trials."""
    asked = []
    from harts.faults import tolerance

    def decisions(config, name, *args, **kwargs):
        asked.append(name)
        return []

    def reached(args, config, algorithms, kind, count):
        asked.extend(algorithms)
        return 0
    monkeypatch.setattr(tolerance, "tolerance", decisions)
    monkeypatch.setattr(harts_cli, "_reached_tolerance", reached)
    return asked


@pytest.mark.parametrize("config", SHIPPED)
def test_faults_all_means_every_algorithm_that_fits_the_config(capsys, trials_recorded, config):
    code = main(["faults", "--algorithm", "all", "--crash", "1", "--trials", "1", "--config",
                 str(CONFIGS_DIR / config)])
    expected = [name for name in BROADCASTS if (name, config) in FITS]
    if expected:
        assert code == 0 and trials_recorded == expected
    else:
        lines = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "no broadcast runs on this config" in lines[0], lines


def test_faults_refuses_a_misfit_as_broadcast_does(capsys, trials_recorded):
    path = CONFIGS_DIR / "mesh_8x8.yaml"
    assert main(["faults", "--algorithm", "pcp", "--crash", "1", "--config", str(path)]) == 2
    refusal = capsys.readouterr().err
    assert main(["broadcast", "--algorithm", "pcp", "--config", str(path)]) == 2
    assert capsys.readouterr().err == refusal and len(refusal.strip().splitlines()) == 1
    assert main(["faults", "--algorithm", "6bcast,pcp", "--crash", "1", "--size", "3"]) == 2
    assert "pcp needs a 2-D mesh, not E-3" in capsys.readouterr().err and trials_recorded == []


# harts ata: IHC's packet must fit in mu FIFO lengths; paper 001 runs on the cut-through controller


def ata(capsys, *args):
    """harts ata in this process: (exit code, stderr lines but the note of a first kernel compilation, which
    the calibration behind the IHC check may need)."""
    code = main(["ata", *map(str, args)])
    lines = capsys.readouterr().err.strip().splitlines()
    return code, [line for line in lines if not line.startswith("harts: compiling")]


def test_ihc_refuses_a_packet_longer_than_mu_fifo_lengths_naming_what_fits(capsys):
    """E-5 with the default timing: S = 7, r = 1/6, d = 5 cycles, the idle gap 8 bytes = 8/6 cycles
    (MODEL.md, How S, r and d arise). M = 30 bytes at mu = 1: rM + gap = 30/6 + 8/6 = 19/3 = 6.333 cycles
    > mu d = 5. The largest length that fits mu = 1 in whole cycles: 6 floor(5 - 8/6) = 6 x 3 = 18 bytes;
    the smallest mu that fits 30 bytes: ceil((19/3) / 5) = ceil(1.267) = 2. M = 24: 4 + 1.333 = 5.333 > 5,
    refused too. Q_4, M = 54 at mu = 2: 9 + 1.333 = 10.33 > 10; 6 floor(10 - 8/6) = 48; ceil(10.33 / 5) = 3."""
    code, lines = ata(capsys, "--algorithm", "ihc", "--mu", "1", "--length", "30")
    assert code == 2 and lines == [
        "harts: error: harts ata: IHC needs packets of at most mu FIFO lengths: rM + the idle gap = 5 + 1.333 = 6.333 "
        "cycles, more than mu d = 1 x 5 = 5: use --length 18 or less with --mu 1, or --mu 2 or more with --length 30"]
    code, lines = ata(capsys, "--mu", "1", "--length", "24")
    assert code == 2 and "5.333 cycles" in lines[0] and "--length 18 or less" in lines[0]
    q4 = defaults().with_topology(kind="hypercube", dimension=4)
    from harts.experiments.lee_shin.ata import run_algorithm
    with pytest.raises(InputError, match=r"= 9 \+ 1.333 = 10.33 cycles, more than mu d = 2 x 5 = 10: use --length 48 "
                                         r"or less with --mu 2, or --mu 3 or more with --length 54"):
        run_algorithm(q4, "ihc", mu=2, length=54)


def test_a_packet_that_fits_mu_runs_and_the_worst_case_takes_any_length():
    """The largest fitting length (48 bytes at mu = 2 on Q_4) runs contention-free and exactly on Table II,
    eta (S + rM + (N-2)d) = 2 (7 + 8 + 14 x 5) = 170; the worst case stores every hop, so 54 bytes run."""
    from harts.experiments.lee_shin.ata import run_algorithm
    q4 = defaults().with_topology(kind="hypercube", dimension=4)
    run = run_algorithm(q4, "ihc", mu=2, length=48)
    assert run.contention_free and run.completion_cycles == run.formula_cycles == 170
    assert run_algorithm(q4, "ihc", mu=2, length=54, queueing=0).contention_free


def test_ihc_refuses_eta_below_mu(capsys):
    """Section IV: "eta < mu cannot be used". Q_4 has 16 nodes: the smallest eta >= 3 dividing 16 is 4."""
    q4 = defaults().with_topology(kind="hypercube", dimension=4)
    from harts.experiments.lee_shin.ata import run_algorithm
    with pytest.raises(InputError, match="eta < mu cannot be used .section IV.: got eta = 2, mu = 3; use --eta 4"):
        run_algorithm(q4, "ihc", mu=3, eta=2)


@pytest.mark.parametrize("algorithm, topology, microcode", [
    ("ihc", "{kind: torus, dims: [8, 8]}", "wormhole"), ("ihc", "{kind: hex, size: 3}", "circuit"),
    ("ks", "{kind: hex, size: 3}", "wormhole"), ("vsq", "{kind: torus, dims: [5, 5]}", "circuit"),
    ("vrs", "{kind: hypercube, dimension: 4}", "cpr"), ("frs", "{kind: hypercube, dimension: 4}", "wormhole"),
])
def test_ata_refuses_a_wormhole_or_circuit_config(capsys, tmp_path, algorithm, topology, microcode):
    path = tmp_path / "c.yaml"
    path.write_text(f"topology: {topology}\nmicrocode: {microcode}\n")
    switching = assemble(MICROCODE_DIR / f"{microcode}.yaml").switching
    code, lines = ata(capsys, "--algorithm", algorithm, "--config", path)
    assert code == 2 and lines == [
        f"harts: error: harts ata: {path}:2: paper 001's algorithms run on the cut-through controller here, each "
        f"with its own microprogram; the config's microprogram {microcode!r} switches by "
        f"{'wormhole' if switching == 1 else 'circuit'}: leave 'microcode' out, as configs/torus_8x8.yaml does"]


def test_ata_on_the_shipped_wormhole_config_is_refused_in_one_line(capsys):
    code, lines = ata(capsys, "--config", CONFIGS_DIR / "wormhole_torus_8x8.yaml")
    assert code == 2 and len(lines) == 1 and "switches by wormhole" in lines[0]
