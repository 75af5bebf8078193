"""The flit-level detector of deadlock and livelock (MODEL.md, Deadlock and livelock), and what `harts microcode check`
refuses before any run (microcode/ISA.md, Checks before a run): every stuck run names its cycle, within a bound of
its last progress, while traffic is still being made."""

import itertools
import re

import numpy as np
import pytest

from harts.cli import main
from harts.controller import records as R
from harts.errors import SimulationError
from harts.machine.config import CONFIGS_DIR, MICROCODE_DIR, defaults, load_config
from harts.machine.flits import DeadlockError, LivelockError
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast

RING = {"kind": "torus", "dims": [4, 3]}


def circuit_torus_16x16(**values):
    """Paper 004's torus under the issue's load: uniform 8-flit circuits at 0.05 flits per node per cycle, made for
    run.cycles = 20,000 cycles."""
    return load_config(CONFIGS_DIR / "circuit_torus_16x16.yaml").with_values(traffic__synthetic__rate=0.05,
                                                                            **values)


def fired_at(error) -> int:
    return int(re.match(r"(?:dead|live)lock at cycle (\d+):", str(error)).group(1))


def node_of(name: str) -> int:
    return int(name.split()[1])


def stuck(config, traffic=None):
    """The error a run of the config stops with."""
    with pytest.raises((DeadlockError, LivelockError)) as caught:
        Simulation(config).run(traffic)
    assert "\n" not in str(caught.value)
    return caught.value


def test_a_circuit_deadlock_names_its_ring_of_circuits_bound_cycles_after_the_last_progress():
    """With `wait` the torus jams within a few thousand cycles while its NPs go on making packets until cycle
    20,000. The detector fires D + 1 cycles after the last progress, whatever D is (the run is the same until it
    fires), so before the traffic ends; it names a cycle of inputs: each waits for the owner of the link it asked
    for (at its own node) or for the next input along a circuit (at the next node), and one link is an
    acknowledgment never returned."""
    fired = {}
    for bound in (2000, 3000):
        error = stuck(circuit_torus_16x16(run__deadlock_cycles=bound))
        assert isinstance(error, DeadlockError)
        assert f"no flit moved for {bound} cycles; waiting cycle: " in str(error)
        fired[bound] = fired_at(error)
        cycle = error.cycle
    assert fired[3000] - fired[2000] == 1000
    last_progress = fired[2000] - 2000 - 1
    assert 0 < last_progress and fired[3000] < 20_000
    assert cycle[0] == cycle[-1] and len(cycle) > 3
    topology = Simulation(circuit_torus_16x16()).topology
    for waiting, waited in itertools.pairwise(cycle):
        a, b = node_of(waiting), node_of(waited)
        assert a == b or b in topology.neighbours[a], (waiting, waited)
    assert "circuits waiting for their acknowledgments: packet " in str(error)


def test_circuits_that_hold_each_others_links_name_the_ring_they_form():
    """Every node of a ring of 4 sends a circuit two hops the + way at cycle 0 (ties half-way round go +). Each
    probe takes its source's link, then waits at the next node for the link that node's own probe holds: node v's
    receiver waits for node v's injection (the owner), which waits for node v+1's receiver (where its probe is,
    the acknowledgment's source)."""
    config = defaults().with_values(topology=RING, microcode="circuit", run__deadlock_cycles=500,
                                    routing__torus_tie="positive")
    ring = np.arange(4)
    error = stuck(config, unicast(0, ring, (ring + 2) % 4, 48))
    assert isinstance(error, DeadlockError)
    cycle = error.cycle
    assert cycle[0] == cycle[-1] and len(cycle) == 9
    assert sorted(cycle[:-1]) == sorted([f"node {v} ({v},0) receiver +x0 VC 0" for v in range(4)]
                                        + [f"node {v} ({v},0) injection" for v in range(4)])
    for waiting, waited in itertools.pairwise(cycle):
        assert node_of(waited) == (node_of(waiting) + ("injection" in waiting)) % 4
    # the circuits are set up within a hundred cycles of their creation at 0, and nothing moves after that
    assert 500 < fired_at(error) < 500 + 100


def write_without_ack(tmp_path):
    """circuit.yaml with its `ack` taken out: a probe that reaches its destination is delivered unacknowledged.
    Returns the file and the line of that `deliver`."""
    text = (MICROCODE_DIR / "circuit.yaml").read_text()
    text = re.sub(r"  - \{label: accept, op: ack,[^\n]*\}\n  - \{op: deliver\}",
                  "  - {label: accept, op: deliver}", text)
    assert "op: ack" not in text
    path = tmp_path / "no_ack.yaml"
    path.write_text(text)
    return path, text.splitlines().index("  - {label: accept, op: deliver}") + 1


def test_a_circuit_program_without_ack_is_refused_by_check_and_run_anyway_names_its_circuit(tmp_path, capsys):
    path, line = write_without_ack(tmp_path)
    assert main(["microcode", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"harts: error: {path}:{line}: 'deliver' "), err
    assert "never acknowledged" in err[0]
    # run anyway: node 0's circuit to node 2 reaches it and stays: the source's data wait for the acknowledgment
    # that node 2 never sends, and node 2 waits for those data
    config = defaults().with_values(topology={"kind": "mesh", "dims": [3, 3]}, microcode=str(path),
                                    run__deadlock_cycles=300)
    error = stuck(config, unicast(0, 0, 2, 48))
    assert error.cycle == ["node 0 (0,0) injection", "node 1 (1,0) receiver +x0 VC 0",
                           "node 2 (2,0) receiver +x0 VC 0", "node 0 (0,0) injection"]
    assert "(node 0 (0,0) to node 2 (2,0)) (delivered without an acknowledgment)" in str(error)
    assert 300 < fired_at(error) < 300 + 100


def test_a_retried_set_up_that_never_succeeds_is_a_livelock_naming_its_circuits():
    """The ring above with `flow.circuit_setup: retry`: every probe is refused at the next node by that node's
    own circuit, all four nack at once, back off alike and meet again, for ever. Nothing but probes moves, so
    the last progress is the first packet's joining an empty network at cycle 0, and the detector fires D + 1
    cycles after it, though every probe may be backing off then."""
    config = defaults().with_values(topology=RING, microcode="circuit", run__deadlock_cycles=500,
                                    routing__torus_tie="positive", flow__circuit_setup="retry",
                                    flow__retry_cycles=8)
    ring = np.arange(4)
    error = stuck(config, unicast(0, ring, (ring + 2) % 4, 48))
    assert isinstance(error, LivelockError)
    assert str(error).startswith("livelock at cycle ")
    assert fired_at(error) == 500 + 1
    circuits = error.circuits
    assert circuits[0] == circuits[-1] and len(circuits) == 5
    sources = [int(re.match(r"packet \d+ \(node (\d+)", c).group(1)) for c in circuits]
    # each is refused by the circuit of the node its probe reached: the next one round the ring
    assert all(b == (a + 1) % 4 for a, b in itertools.pairwise(sources))
    assert all(f"(node {v} ({v},0) to node {(v + 2) % 4} ({(v + 2) % 4},0))" in str(error) for v in range(4))


def test_the_16x16_torus_with_retried_set_ups_stops_as_a_livelock_in_one_line(capsys):
    """The issue's run spun for two million cycles and blamed run.drain_cycles; now it stops, while its NPs still
    make packets, with exit 1 and the circuits that refuse each other in turn."""
    code = main(["run", str(CONFIGS_DIR / "circuit_torus_16x16.yaml"), "--set", "traffic.synthetic.rate=0.05",
                 "--set", "flow.circuit_setup=retry", "--set", "run.deadlock_cycles=2000"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    match = re.match(r"harts: simulation error: livelock at cycle (\d+): .* circuits each refused by the next: "
                     r"(packet \d+) .* -> \2 \(", err[0])
    assert match and int(match.group(1)) < 20_000, err[0]


def test_a_quiet_spell_longer_than_the_bound_between_packets_is_no_deadlock():
    """An empty network is not stuck: a packet made D x 3 cycles after the last one was delivered starts the clock
    afresh."""
    sim = Simulation(defaults().with_values(topology=RING, microcode="circuit", run__deadlock_cycles=200))
    result = sim.run(unicast([0, 600], [0, 5], [5, 0], 48))
    assert sorted(result.deliveries[R.DL_UID].tolist()) == [0, 1]


def flit_program(tmp_path, old, new):
    text = (MICROCODE_DIR / "wormhole.yaml").read_text()
    assert text.count(old) == 1
    path = tmp_path / "edited.yaml"
    path.write_text(text.replace(old, new))
    return path, new.splitlines()


def check_line(capsys, path):
    code = main(["microcode", "check", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err


@pytest.mark.parametrize("loop", [
    "  - {label: spin, op: jump, goto: spin}\n",
    "  - {label: spin, op: wait, cycles: 2}\n  - {op: branch, unless: arrived, goto: spin}\n",
])
def test_check_refuses_an_instruction_that_loops_without_consuming_input(tmp_path, capsys, loop):
    inject = "  - {label: inject, op: wait_header}\n"
    path, _ = flit_program(tmp_path, inject, inject + loop)
    line = path.read_text().splitlines().index(loop.splitlines()[0]) + 1
    code, err = check_line(capsys, path)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"harts: error: {path}:{line}: "), err
    assert "can loop for ever" in err[0]


def test_a_loop_through_a_wait_tail_whose_tail_is_through_is_refused_by_check_and_stops_the_run(tmp_path, capsys):
    """After its tail a wait_tail waits for nothing: a loop of it and a wait is refused by check and, run anyway,
    stops the run naming an instruction of the loop (it ran for ever inside one context step before)."""
    tail = "  - {op: wait_tail}\n  - {op: done}\n  - {label: eject, op: deliver}\n"
    path, _ = flit_program(tmp_path, tail, "  - {label: again, op: wait_tail}\n  - {op: wait, cycles: 3}\n"
                                           "  - {op: jump, goto: again}\n  - {label: eject, op: deliver}\n")
    line = path.read_text().splitlines().index("  - {label: again, op: wait_tail}") + 1
    code, err = check_line(capsys, path)
    assert code == 2 and err[0].startswith(f"harts: error: {path}:{line}: 'wait_tail' can loop for ever"), err
    sim = Simulation(defaults().with_values(topology={"kind": "mesh", "dims": [3, 3]}, microcode=str(path)))
    with pytest.raises(SimulationError, match=r"the microprogram loops for ever: .* at node 1 \(1,0\) receiver "
                                              r"\+x0 VC 0, .*edited.yaml:\d+: '(wait_tail|wait|jump)'"):
        sim.run(unicast(0, 0, 2, 48))


def test_check_accepts_a_cycle_whose_conditions_cannot_hold_together(tmp_path, capsys):
    """A branch that goes on only if the packet has arrived, to one that comes back only if it has not: no packet
    can go round."""
    eject = "  - {label: eject, op: deliver}\n"
    path, _ = flit_program(tmp_path, eject, "  - {label: eject, op: branch, if: arrived, goto: there}\n"
                                            "  - {op: jump, goto: out}\n"
                                            "  - {label: there, op: branch, unless: arrived, goto: eject}\n"
                                            "  - {label: out, op: deliver}\n")
    code, err = check_line(capsys, path)
    assert code == 0 and err == []


@pytest.mark.parametrize("program", sorted(p.name for p in MICROCODE_DIR.glob("*.yaml")))
def test_check_accepts_every_shipped_microprogram(capsys, program):
    assert main(["microcode", "check", str(MICROCODE_DIR / program)]) == 0
    assert capsys.readouterr().err == ""
