"""The link map of `harts run --link-map`: the numbers it colours by, the strokes that draw every link, and
the refusal of a path it could not write."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harts.machine.config import defaults
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.network import build_topology
from harts.tools.link_map import KEEP_RIGHT, STUB, draw_link_map, link_strokes

from .helpers import nothing_cut_off, unwritable_directory

REPO = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_link_utilisation_is_the_bytes_each_link_carried(tmp_path):
    # Torus 5x4 (node = x + 5y; ports +x, +y, -x, -y): one-axis routes, one at a time, so each has
    # exactly one path; two cross a wrap link and one runs back over the first one's links.
    config = defaults().with_topology(kind="torus", dims=[5, 4])
    packets = [  # (cycle, source, destination, length)
        (0, 0, 2, 128),  # +x: 0 -> 1 -> 2
        (200, 4, 0, 64),  # +x over the wrap link 4 -> 0
        (400, 0, 10, 512),  # +y: 0 -> 5 -> 10
        (600, 15, 0, 64),  # +y over the wrap link 15 -> 0
        (800, 2, 0, 128),  # -x: 2 -> 1 -> 0
    ]
    result = Simulation(config).run(unicast(*zip(*packets)))
    by_hand = {(0, 0): 128, (1, 0): 128, (4, 0): 64, (0, 1): 512, (5, 1): 512, (15, 1): 64, (2, 2): 128,
               (1, 2): 128}
    links = result.topology.links()
    carried = result.link_utilisation() * result.ticks_per_cycle * float(result.cycles)
    expected = [by_hand.get((int(node), int(port)), 0) for node, port, _ in links]
    assert carried == pytest.approx(expected)
    summary = result.summary()
    assert summary["link_utilisation"] == pytest.approx(result.link_utilisation().mean())
    assert summary["bmu_utilisation"] == pytest.approx(result.network.bmu_utilisation().mean())
    assert result.network.bmu_utilisation().shape == (20,)
    # on an idle network every packet cuts through: only the sources' bus interfaces ever held one
    busy, _ = result.node_load()
    assert sorted(np.nonzero(busy)[0].tolist()) == [0, 2, 4, 15]
    assert summary["bmu_interface_utilisation"] == pytest.approx(busy.mean())
    out = tmp_path / "map.png"
    draw_link_map(result, str(out))
    assert out.read_bytes()[:8] == PNG_SIGNATURE and nothing_cut_off(out)


@pytest.mark.parametrize("spec", [
    {"kind": "hex", "size": 4}, {"kind": "mesh", "dims": [3, 4]}, {"kind": "torus", "dims": [3, 4, 3]},
    {"kind": "hypercube", "dimension": 4}, {"kind": "mesh_hypercube", "levels": 3, "cube": 4},
], ids=lambda spec: spec["kind"])
def test_every_directed_link_is_drawn_once_or_as_two_stubs(spec):
    topo = build_topology(spec)
    links = topo.links()
    strokes, owner, labels = link_strokes(topo)
    wraps = topo.wrap_links()[links[:, 0], links[:, 1]]
    assert np.bincount(owner, minlength=len(links)).tolist() == np.where(wraps, 2, 1).tolist()
    xy = topo.positions()
    stub = wraps[owner]
    # A plain link runs from its sender to its receiver, kept to the right of the line between them.
    for end, column in ((0, 0), (-1, 2)):
        gap = np.linalg.norm(strokes[~stub, end] - xy[links[owner[~stub], column]], axis=1)
        assert np.allclose(gap, KEEP_RIGHT)
    # A wrap link's stubs are short (a little longer than STUB where they start an arc), and each is
    # labelled with the node at its other end.
    assert (np.linalg.norm(strokes[stub, -1] - strokes[stub, 0], axis=1) < 1.1 * STUB).all()
    assert sorted(text for _, text in labels) == sorted(str(v) for v in links[wraps, 2])


def harts(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("where, words", [
    ("no/such/directory/map.png", "cannot write no/such/directory/map.png (No such file or directory)"),
    ("directory.png", "is a directory"),
    ("map.txt", "expected a file name ending in one of"),
])
def test_a_path_that_cannot_be_written_is_refused_before_the_run(tmp_path, where, words):
    (tmp_path / "directory.png").mkdir()
    proc = harts("run", str(REPO / "configs" / "uniform_e9.yaml"), "--link-map", where, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harts: error: ") and words in lines[0], proc.stderr


def test_a_directory_without_write_permission_is_refused(tmp_path):
    locked = unwritable_directory(tmp_path)
    proc = harts("run", "configs/uniform_e9.yaml", "--link-map", str(locked / "map.png"))
    assert proc.returncode == 2 and proc.stdout == "" and "(Permission denied)" in proc.stderr
