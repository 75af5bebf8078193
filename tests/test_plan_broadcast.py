"""Papers 002 and 003 on the flit-level controller: the kernel's runs of the send plans against the plans'
functional model (routes, copies, steps), zero-load arrival times against closed forms derived by hand
from cpr.yaml's instruction counts, runs under load, and `harts broadcast` for these algorithms."""

import heapq
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harts.broadcasts.plans import make_plan, run_plan
from harts.machine.config import defaults
from harts.network.build import build_topology
from harts.np.coded_path import allowed_partitions
from harts.np.send_plan import TRIGGER_COPY, TRIGGER_SENT, route_copies

REPO = Path(__file__).resolve().parent.parent
MESH = {"kind": "mesh", "dims": [5, 4]}


def cli(*args):
    return subprocess.run([sys.executable, "-m", "harts.cli", *args], capture_output=True, text=True, cwd=REPO)


def config(spec, **values):
    return defaults().with_topology(**spec).with_values(microcode="cpr", flow__np_channels=0, **values)


def test_pcp_from_every_source_and_partition_runs_as_planned():
    """run_plan raises if any route, copy or step of the run differs from the plan's functional model."""
    topology = build_topology(MESH)
    for source in range(topology.n_nodes):
        for partition in allowed_partitions(topology, source):
            run = run_plan(config(MESH), make_plan(topology, "pcp", source, partition), 6)
            summary = run.summary()
            assert summary["copies_per_node_min"] == summary["copies_per_node_max"] == 1
            assert summary["steps"] == 2  # Theorem 1


@pytest.mark.parametrize("algorithm, spec, sources, steps", [
    ("rd", {"kind": "mesh", "dims": [4, 4]}, range(16), 4),
    ("edn", {"kind": "mesh", "dims": [8, 8]}, [0, 9, 27, 63], None),
    ("npd", {"kind": "mesh", "dims": [8, 8]}, [0, 36], 5),
    ("mh", {"kind": "mesh_hypercube", "levels": 5, "cube": 8}, range(0, 40, 3), None),
])
def test_the_other_broadcasts_run_as_planned(algorithm, spec, sources, steps):
    topology = build_topology(spec)
    for source in sources:
        run = run_plan(config(spec), make_plan(topology, algorithm, source), 5)
        summary = run.summary()
        assert summary["copies_per_node_min"] == summary["copies_per_node_max"] == 1
        if steps is not None:
            assert summary["steps"] == steps  # RD: log2 16; NP-D: k + 2 with k = 3


def zero_load_arrivals(plan, flits, p):
    """Every copy's arrival by hand from cpr.yaml (MODEL.md), with Lk = b + k + w:
    - source: wait_header, branch, forward: the head is granted n_s + 2 after creation;
    - a coded path's transit or teeing node: wait_header and 4 branches, then forward or tee: the head
      leaves 5 cycles after it lands; its end: wait_header, 2 branches, deliver: 3 cycles;
    - a unicast's transit node: wait_header, 2 branches, forward: 3 cycles; its end: 3 cycles;
    - the tail follows the head (M - 1)k later; the NP has the copy b + k + n_d after the tail is ejected;
    - a send waiting for its own earlier send is created k after that send's tail was granted at the source;
    - one context per input: a head that lands where an earlier packet's context still runs starts when it is
      free, 3 cycles after that packet's tail left (wait_tail, done); likewise an injection channel (the
      lowest free one takes the packet).
    Valid while no flit waits for buffer room or a busy link, which the plans' step structure keeps true."""
    k, b, w = p["k"], p["b"], 0
    lk = b + k + w
    head_granted, copies = {}, {}
    context_free: dict = {}  # (node, arriving port, VC) -> cycle its context is free
    channel_free: dict = {}  # (node, channel) -> cycle
    children: dict = {}
    for i, send in enumerate(plan.sends):
        children.setdefault(send.parent, []).append(i)
    ready = [(0, i) for i in children.get(-1, [])]  # (creation cycle, send): sends in the order they are created
    while ready:
        created, i = heapq.heappop(ready)
        send = plan.sends[i]
        channel = min(range(p["channels"]), key=lambda c: (max(channel_free.get((send.sender, c), 0), created), c))
        start = max(created + p["n_s"], channel_free.get((send.sender, channel), 0))
        head_granted[i] = start + 2
        channel_free[(send.sender, channel)] = head_granted[i] + (flits - 1) * k + 3
        copies_here = route_copies(plan.topology, send)
        route = copies_here[-1][1]
        absorbing = {node for node, _ in copies_here}
        transit = 5 if send.segments else 3
        vc = 1 if send.segments else 0
        lands = head_granted[i] + lk
        for j, node in enumerate(route[1:], start=1):
            port = next(q for q in range(plan.topology.n_ports) if plan.topology.neighbours[route[j - 1], q] == node)
            key = (node, port, vc)
            begins = max(lands, context_free.get(key, 0))
            last = j == len(route) - 1
            leaves = begins + (3 if last else transit)
            context_free[key] = leaves + (flits - 1) * k + 3
            if node in absorbing:
                copies[(i, node)] = leaves + (flits - 1) * k + b + k + p["n_d"]
            lands = leaves + lk
        for child in children.get(i, []):
            waits = plan.sends[child]
            if waits.trigger == TRIGGER_COPY:
                heapq.heappush(ready, (copies[(i, waits.sender)], child))
            else:
                assert waits.trigger == TRIGGER_SENT
                heapq.heappush(ready, (head_granted[i] + (flits - 1) * k + k, child))
    return copies


@pytest.mark.parametrize("algorithm, spec, source", [
    ("pcp", {"kind": "mesh", "dims": [6, 5]}, 14),
    ("pcp", {"kind": "mesh", "dims": [8, 8]}, 27),
    ("pcp", {"kind": "mesh", "dims": [8, 8]}, 25),
    ("rd", {"kind": "mesh", "dims": [8, 4]}, 0),
    ("mh", {"kind": "mesh_hypercube", "levels": 9, "cube": 8}, 40),
])
@pytest.mark.parametrize("flits", [1, 7])
def test_zero_load_arrivals_equal_the_closed_form(algorithm, spec, source, flits):
    topology = build_topology(spec)
    plan = make_plan(topology, algorithm, source)
    run = run_plan(config(spec), plan, flits, at_cycle=0)
    ran = {(c.send, c.node): c.arrival for c in run.copies}
    assert ran == zero_load_arrivals(plan, flits, {"k": 1, "b": 1, "n_s": 1, "n_d": 1,
                                                           "channels": topology.n_ports})


@pytest.mark.parametrize("rate", [0.1, 0.4])
def test_pcp_under_uniform_load_delivers_every_copy_once_without_deadlock(rate):
    """Theorem 2 under load: coded worms in the upper VC, unicasts in the lower; a deadlock would raise."""
    spec = {"kind": "mesh", "dims": [8, 8]}
    topology = build_topology(spec)
    loaded = config(spec, traffic__synthetic__rate=rate, traffic__synthetic__packet_flits=8, run__cycles=6000,
                    run__warmup_cycles=2000)
    for source in (0, 19, 36):
        run = run_plan(loaded, make_plan(topology, "pcp", source), 100)
        summary = run.summary()
        assert summary["copies_per_node_min"] == summary["copies_per_node_max"] == 1
        assert summary["background_packets"] > 1000
    idle = run_plan(config(spec), make_plan(topology, "pcp", 36), 100).latency
    assert run.latency > idle  # the load is felt


def test_harts_broadcast_pcp_json_lists_every_copy_with_its_path_and_step():
    proc = cli("broadcast", "--algorithm", "pcp", "--config", "configs/t3d_mesh_8x8.yaml", "--source", "19", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["steps"] == 2 and data["copies_per_node_min"] == data["copies_per_node_max"] == 1
    assert len(data["copies"]) == 63 and data["np_channels"] == 4
    for copy in data["copies"]:
        assert copy["path"][0] == 19 and copy["path"][-1] == copy["node"] and copy["step"] in (1, 2)


def test_harts_broadcast_mh_reproduces_paper_003_example_step_count(tmp_path):
    plot = tmp_path / "mh.png"
    proc = cli("broadcast", "--algorithm", "mh", "--config", "configs/t3d_mesh_hypercube_9x8.yaml", "--source", "40",
               "--json", "--plot", str(plot))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["steps"] == 6 and data["copies_total"] == 71 and data["source_label"] == "(6,000)"
    assert plot.stat().st_size > 10_000


@pytest.mark.parametrize("args, words", [
    (["--algorithm", "pcp", "--config", "configs/torus_8x8.yaml"], "pcp needs a 2-D mesh, not torus 8x8"),
    (["--algorithm", "rd", "--config", "configs/mesh_8x8.yaml", "--partition", "vertical"], "--partition"),
    (["--algorithm", "pcp", "--size", "5"], "--size"),
    (["--algorithm", "edn", "--config", "configs/t3d_mesh_8x8.yaml", "--source", "64"], "source must be a node"),
    (["--algorithm", "mh", "--config", "configs/mesh_8x8.yaml"], "mh needs a mesh-hypercube, not mesh 8x8"),
    (["--algorithm", "sbcast", "--partition", "vertical"], "--partition"),
])
def test_bad_broadcast_arguments_end_in_one_line(args, words):
    proc = cli("broadcast", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr, proc.stderr
