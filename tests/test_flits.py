"""The flit-level kernel against the plain-Python reference model (harts/reference/flits.py), its closed
forms, its deadlock report and its invariants."""

import numpy as np
import pytest

from harts.controller import records as R
from harts.controller.flits.params import FlitParams
from harts.errors import InputError, SimulationError
from harts.machine.config import MICROCODE_DIR, defaults
from harts.machine.flits import DeadlockError
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast
from harts.reference import flits as reference
from harts.tools.calibrate import calibrate_flits

MESH = {"kind": "mesh", "dims": [4, 3]}
TORUS = {"kind": "torus", "dims": [4, 5]}
CUBE = {"kind": "hypercube", "dimension": 3}


def machine(spec, microcode="wormhole", **values):
    return Simulation(defaults().with_values(topology=spec, microcode=microcode, **values))


def random_workload(n_nodes, count, seed, spread):
    """(create, source, destination, flits) of random unicasts."""
    rng = np.random.default_rng(seed)
    source = rng.integers(0, n_nodes, count)
    destination = (source + rng.integers(1, n_nodes, count)) % n_nodes
    create = np.sort(rng.integers(0, spread, count))
    flits = rng.integers(1, 7, count)
    return create, source, destination, flits


def run(sim, create, source, destination, flits, **options):
    """The workload on the kernel: the result, and each packet's delivery cycle by uid."""
    traffic = unicast(create, source, destination, np.asarray(flits) * sim.params.flit_bytes)
    result = sim.run(traffic, **options)
    delivered = np.full(len(traffic), -1, np.int64)
    delivered[result.deliveries[R.DL_UID]] = result.deliveries[R.DL_TICK]
    return result, delivered


CASES = [  # topology, microprogram, VCs, buffer depth, extra config
    (MESH, "wormhole", 1, 2, {}),
    (MESH, "wormhole", 2, 3, {}),
    (MESH, "wormhole", 2, 8, {}),
    (MESH, "wormhole_adaptive", 2, 4, {}),
    (TORUS, "wormhole", 2, 2, {}),
    (TORUS, "wormhole", 2, 5, {}),
    (TORUS, "wormhole_adaptive", 3, 3, {}),
    (CUBE, "wormhole", 1, 4, {}),
    (MESH, "circuit", 1, 4, {}),
    (TORUS, "circuit", 2, 6, {"flow__circuit_setup": "retry", "flow__retry_cycles": 3}),
    (MESH, "wormhole", 2, 4, {"flow__flit_bytes": 12, "timing__link_delay_cycles": 2}),
    (TORUS, "wormhole", 2, 3, {"flow__dateline": "whole_axis"}),
    (TORUS, "wormhole", 4, 2, {"flow__dateline": "whole_axis", "routing__torus_tie": "positive"}),
    (MESH, "wormhole", 2, 3, {"flow__context_turnaround": "immediate"}),
    (MESH, "wormhole", 1, 8, {"flow__context_turnaround": "immediate", "timing__link_delay_cycles": 1}),
    (TORUS, "wormhole_adaptive", 3, 3, {"flow__context_turnaround": "immediate"}),
    (TORUS, "circuit", 2, 6, {"flow__context_turnaround": "immediate", "flow__circuit_setup": "retry",
                              "flow__retry_cycles": 3}),
    (MESH, "wormhole", 2, 3, {"flow__injection_vcs": 0}),
    (TORUS, "wormhole", 4, 8, {"flow__injection_vcs": 3, "flow__context_turnaround": "immediate",
                               "flow__dateline": "whole_axis"}),
    (MESH, "wormhole", 2, 4, {"flow__injection_vcs": 2, "flow__np_channels": 2}),
    (MESH, "circuit", 1, 4, {"flow__injection_vcs": 2}),
    (MESH, "wormhole", 2, 3, {"flow__vc_choice": "round_robin", "flow__injection_vcs": 0,
                              "flow__context_turnaround": "immediate"}),
    (TORUS, "wormhole", 4, 4, {"flow__vc_choice": "round_robin", "flow__dateline": "whole_axis"}),
    (TORUS, "wormhole_adaptive", 3, 3, {"flow__vc_choice": "round_robin"}),
    (MESH, "wormhole", 2, 3, {"flow__vc_arbitration": "round_robin", "flow__vc_choice": "round_robin",
                              "flow__injection_vcs": 0, "flow__context_turnaround": "immediate"}),
    (MESH, "wormhole", 1, 2, {"flow__vc_arbitration": "round_robin"}),
    (TORUS, "wormhole", 4, 4, {"flow__vc_arbitration": "round_robin", "flow__dateline": "whole_axis"}),
    (TORUS, "wormhole", 3, 2, {"flow__vc_arbitration": "round_robin"}),
    (TORUS, "wormhole_adaptive", 3, 3, {"flow__vc_arbitration": "round_robin"}),
    (TORUS, "circuit", 2, 6, {"flow__vc_arbitration": "round_robin", "flow__circuit_setup": "retry",
                              "flow__retry_cycles": 3}),
    (MESH, "circuit", 1, 4, {"flow__vc_arbitration": "round_robin", "flow__injection_vcs": 2}),
    (MESH, "wormhole", 2, 3, {"flow__vc_reuse_cycles": 2}),
    (MESH, "wormhole", 1, 2, {"flow__vc_reuse_cycles": 3, "flow__vc_arbitration": "round_robin"}),
    (TORUS, "wormhole", 2, 4, {"flow__vc_reuse_cycles": 2, "flow__vc_arbitration": "round_robin",
                               "flow__vc_choice": "round_robin", "flow__injection_vcs": 0,
                               "flow__context_turnaround": "immediate"}),
    (TORUS, "wormhole_adaptive", 3, 3, {"flow__vc_reuse_cycles": 2}),
    (TORUS, "circuit", 2, 6, {"flow__vc_reuse_cycles": 3, "flow__circuit_setup": "retry", "flow__retry_cycles": 3}),
    (MESH, "circuit", 1, 4, {"flow__vc_reuse_cycles": 2, "flow__vc_arbitration": "round_robin"}),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("spec, microcode, vcs, depth, extra", CASES)
def test_kernel_and_reference_agree_on_every_delivery(spec, microcode, vcs, depth, extra, seed):
    sim = machine(spec, microcode, flow__virtual_channels=vcs, flow__buffer_flits=depth, **extra)
    create, source, destination, flits = random_workload(sim.topology.n_nodes, 60, seed, spread=120)
    result, delivered = run(sim, create, source, destination, flits)
    expected = reference.run_traced(sim.topology, sim.microprogram, sim.params,
                                    zip(range(len(create)), create, source, destination, flits))
    assert [expected.delivered[k] for k in range(len(create))] == delivered.tolist()
    # every refused forward the reference tries again each cycle, the kernel counts without running it
    assert result.summary()["microinstructions"] == expected.instructions
    # the workload is dense enough to block: some packet is slower than it would be alone
    alone = (reference.zero_load_latency_circuit if microcode == "circuit" else reference.zero_load_latency_wormhole)
    zero = [alone(sim.params, int(h), int(m)) for h, m in zip(sim.topology.distance(source, destination), flits)]
    assert (delivered - create > np.asarray(zero)).any()


@pytest.mark.parametrize("spec", [MESH, TORUS, CUBE])
@pytest.mark.parametrize("microcode", ["wormhole", "circuit"])
def test_calibrate_fits_its_model_with_residual_zero(spec, microcode):
    config = defaults().with_values(topology=spec, microcode=microcode)
    cal = calibrate_flits(config)
    f = FlitParams.from_config(config)
    assert cal.max_residual == 0
    lk = f.link_latency
    if microcode == "wormhole":
        # closed form of MODEL.md: T = n_s + 1 + Lk + (h-1)(2 + Lk) + 2 + (M-1)k + b + k + n_d
        assert cal.terms == {"S_cycles": f.np_send + 1 + lk + 2 + f.bus_delay + f.deliver,
                             "r_cycles_per_flit": f.flit_cycles, "d_cycles_per_hop": 2 + lk}
    else:
        # T = alpha + h delta + L tau with delta = (3 + Lk) + (1 + w) + Lk: the probe's transit hop
        # (wait_header, two branches, forward), its acknowledgment's and the data's
        assert cal.terms == {"alpha_cycles": f.np_send + 2 - 3 + 2 + f.bus_delay + f.deliver,
                             "delta_cycles_per_hop": 3 + lk + f.ack_hop + lk, "tau_cycles_per_flit": f.flit_cycles}
    assert max(p["hops"] for p in cal.probes) == sim_diameter(spec)


def sim_diameter(spec):
    sim = machine(spec)
    return int(sim.topology.distance(np.zeros(sim.topology.n_nodes - 1, np.int64),
                                     np.arange(1, sim.topology.n_nodes)).max())


def test_a_deadlock_names_its_cycle_of_waiting_channels(tmp_path):
    """Dimension-order routing on a ring with one VC and no dateline: every node sends two hops round the
    ring at once (half-way, all the + way), each packet longer than the buffers: each packet's head waits at
    the next node for the +x VC that node's own packet holds, whose head waits in turn one node further on."""
    any_vc = tmp_path / "wormhole_any.yaml"
    any_vc.write_text((MICROCODE_DIR / "wormhole.yaml").read_text().replace("vc: dateline", "vc: any"))
    config = defaults().with_values(topology={"kind": "torus", "dims": [4, 3]}, microcode=str(any_vc),
                                    flow__virtual_channels=1, flow__buffer_flits=2, run__deadlock_cycles=500,
                                    routing__torus_tie="positive")
    sim = Simulation(config)
    ring = np.arange(4)
    with pytest.raises(DeadlockError) as caught:
        run(sim, 0, ring, (ring + 2) % 4, 8)
    cycle = caught.value.cycle
    assert cycle[0] == cycle[-1] and len(cycle) == 9
    # round the ring: each node's +x receiver waits for the +x VC its injection holds, which waits for
    # buffer room in the next node's +x receiver
    assert sorted(cycle[:-1]) == sorted([f"node {v} ({v},0) receiver +x0 VC 0" for v in range(4)]
                                        + [f"node {v} ({v},0) injection" for v in range(4)])
    for waiting, waited in zip(cycle, cycle[1:]):
        node = int(waiting.split()[1])
        assert int(waited.split()[1]) == (node + ("receiver" in waited)) % 4
    # with the dateline and 2 VCs the same packets are delivered
    dateline = machine({"kind": "torus", "dims": [4, 3]}, flow__virtual_channels=2, flow__buffer_flits=2)
    assert (run(dateline, 0, ring, (ring + 2) % 4, 8)[1] > 0).all()


def test_runs_are_deterministic_and_respect_buffer_depth():
    sim = machine(TORUS, flow__buffer_flits=3)
    create, source, destination, flits = random_workload(sim.topology.n_nodes, 400, 7, spread=300)
    (first, once), (_, twice) = run(sim, create, source, destination, flits, hops=True), \
        run(sim, create, source, destination, flits)
    assert once.tolist() == twice.tolist()
    assert first.network.peak_flits == 3  # reached, never exceeded (the run checks the latter)
    # every data flit crossed every link of its route once: link flits = sum of flits x hops
    hops = sim.topology.distance(source, destination)
    assert first.network.flits_out[:, :sim.topology.n_ports].sum() == int((flits * hops).sum())
    pl = first.packets
    assert (pl[R.PL_HOPS][np.argsort(pl[R.PL_UID])] == hops).all()
    for k in range(0, len(create), 37):
        nodes = first.hops.path(k)
        assert nodes[0] == source[k] and nodes[-1] == destination[k] and len(nodes) == hops[k] + 1
        assert all(b in sim.topology.neighbours[a] for a, b in zip(nodes, nodes[1:]))


@pytest.mark.parametrize("values, expected", [
    ({"flow__flit_bytes": 8}, "must be a multiple of the 6 bytes"),
    ({"microcode": "wormhole_adaptive", "flow__virtual_channels": 2}, "needs 'flow.virtual_channels' >= 3"),
    ({"flow__virtual_channels": 1}, "needs 'flow.virtual_channels' >= 2"),
])
def test_configs_the_flit_model_cannot_run_are_refused_in_one_line(values, expected):
    config = defaults().with_values(topology=TORUS, **{"microcode": "wormhole", **values})
    with pytest.raises(InputError) as caught:
        Simulation(config)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("turnaround, gap", [("microcode", 8 + 4), ("immediate", 8 + 2)])
def test_context_turnaround_sets_how_soon_a_packet_follows_another_through_the_same_inputs(turnaround, gap):
    """Two 8-flit packets made at cycle 0 at node 0 of the 4x3 mesh for its neighbour 1 (one hop, the same
    output VC 0, so the same input VC there). By MODEL.md's rules: the first's head leaves at 2 (wait_header,
    forward), its tail at M + 1; at node 1 its head is usable at 2 + Lk = 4, delivered from 6 (wait_header,
    branch, deliver), its tail ejected at M + 5, and the NP has it b + k + n_d = 3 later: M + 8. With microcode
    turnaround the source's wait_tail runs at M + 2 and done at M + 3, free from M + 4: the second leaves at
    M + 5, usable at node 1 at M + 7, but that input's context is free only from M + 8 (its wait_tail at M + 6,
    done at M + 7): ejected from M + 10, M + 4 after the first. Immediate: the source is free at M + 2, the
    second leaves at M + 3, is usable at M + 5, the input is free at M + 6: ejected from M + 8, M + 2 after."""
    sim = machine(MESH, flow__context_turnaround=turnaround)
    _, delivered = run(sim, [0, 0], [0, 0], [1, 1], [8, 8])
    assert delivered.tolist() == [8 + 8, 8 + 8 + gap]


@pytest.mark.parametrize("choice, gap", [("lowest", 8 + 2), ("round_robin", 8 + 1)])
def test_a_round_robin_vc_choice_lets_a_packet_follow_another_in_the_other_vc(choice, gap):
    """The two packets of test_context_turnaround_... with immediate turnaround and 2 VCs. With the lowest free VC
    the second takes VC 0 again, behind the first's tail in node 1's input VC 0, whose context is free from M + 6:
    wait_header, branch, deliver from M + 6, ejected from M + 8. Round-robin gives it VC 1 (the port's last was 0):
    usable at node 1 at M + 5 in an idle input, delivered from M + 7 (the first's tail has left the ejection
    channel at M + 5): its NP has it one cycle sooner."""
    sim = machine(MESH, flow__context_turnaround="immediate", flow__vc_choice=choice)
    result, delivered = run(sim, [0, 0], [0, 0], [1, 1], [8, 8], hops=True)
    assert delivered.tolist() == [8 + 8, 8 + 8 + gap]
    out_vcs = [int(result.hops.rows[R.HR_OUT_VC, result.hops.of_packet(uid)[0]]) for uid in (0, 1)]  # at the source
    assert out_vcs == ([0, 0] if choice == "lowest" else [0, 1])


@pytest.mark.parametrize("reuse", [1, 2, 3])
def test_a_vc_a_tail_releases_is_taken_vc_reuse_cycles_after_the_tail(reuse):
    """Nodes 0 and 1 each send 8 flits to node 2 at cycle 0 over one VC, so the two share node 1's east output and
    one waits there for the other's tail. The tail is granted at t, and its link time ends at t + k (HR_LAST_OUT,
    k = 1 here); the waiting head takes the VC, and the switch, at t + flow.vc_reuse_cycles (HR_FIRST_OUT)."""
    sim = machine(MESH, flow__virtual_channels=1, flow__buffer_flits=16, flow__vc_reuse_cycles=reuse)
    assert sim.params.flit_cycles == 1
    result, _ = run(sim, [0, 0], [0, 1], [2, 2], [8, 8], hops=True)
    rows = result.hops.rows
    at_node_1 = [next(c for c in result.hops.of_packet(uid) if rows[R.HR_NODE, c] == 1) for uid in (0, 1)]
    first, second = sorted(at_node_1, key=lambda c: rows[R.HR_FIRST_OUT, c])
    assert rows[R.HR_FIRST_OUT, second] - (rows[R.HR_LAST_OUT, first] - 1) == reuse


@pytest.mark.parametrize("arbitration, order", [("round_robin", ["A", "C", "B"]), ("input_order", ["A", "B", "C"])])
def test_an_input_that_asks_before_a_freed_vc_can_be_taken_is_ranked_in_turn(arbitration, order):
    """One VC, flow.vc_reuse_cycles 4, two injection contexts. Node 1 sends A and C (8 flits each) to node 2 at cycle
    0, node 0 sends B there. A takes node 1's east VC first; B, from the west input, waits for it. C's context starts
    once the NP channel has carried A's 8 flits and asks 3 cycles after A's tail, inside the 4 cycles before the VC
    can be taken. round_robin: C's context follows A's, the port's last taker, so C comes before B in turn and takes
    the VC. input_order: B's input is the lower, and it wins."""
    sim = machine(MESH, flow__virtual_channels=1, flow__buffer_flits=16, flow__injection_vcs=2,
                  flow__vc_reuse_cycles=4, flow__vc_arbitration=arbitration)
    result, _ = run(sim, [0, 0, 0], [1, 0, 1], [2, 2, 2], [8, 8, 8], hops=True)
    rows = result.hops.rows
    out = {name: rows[R.HR_FIRST_OUT, next(c for c in result.hops.of_packet(uid) if rows[R.HR_NODE, c] == 1)]
           for name, uid in (("A", 0), ("B", 1), ("C", 2))}
    assert sorted(out, key=out.get) == order


@pytest.mark.parametrize("credit", [0, 2])
def test_each_credit_cycle_slows_a_lone_packet_through_a_one_flit_buffer(credit):
    """A lone packet of M = 8 flits one hop through input buffers of 1 flit: flit i + 1 leaves the source when the
    slot flit i took downstream is credited back. Flit i is usable there Lk after its grant, granted on at once
    (the ejection channel is idle), and its slot is credited C = timing.credit_delay_cycles + w later. So flits leave
    Lk + C apart, and every cycle of credit delay moves the tail, and the delivery, M - 1 cycles."""
    def delivery(c):
        sim = machine(MESH, flow__buffer_flits=1, timing__link_delay_cycles=1, timing__credit_delay_cycles=c)
        return int(run(sim, [0], [0], [1], [8])[1][0])
    assert delivery(credit) - delivery(1) == (credit - 1) * (8 - 1)


def test_a_credit_delay_of_zero_needs_a_link_delay():
    with pytest.raises(InputError, match="credit_delay_cycles"):
        machine(MESH, timing__credit_delay_cycles=0, timing__link_delay_cycles=0)


@pytest.mark.parametrize("arbitration, sources", [
    ("input_order", [0, 1, 2, 1, 2, 1, 2, 1, 2, 0, 0, 0]),
    ("round_robin", [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]),
])
def test_vc_arbitration_decides_which_waiting_input_takes_a_freed_vc(arbitration, sources):
    """Q_3 with one VC: nodes 0, 1 and 2 each make four 16-flit packets for node 4 at cycle 0. All cross node 0's
    dimension-2 output: node 1's from its receiver 0, node 2's from its receiver 1, node 0's from its injection
    input, numbered after the link inputs. Node 0's own first packet takes the output first. Each packet holds it
    for 16 flits, long enough for the other two sources' next packets to wait for it; the releasing source's next
    packet is behind its tail in the same input VC, not yet asking. In input order the lower of the two waiting
    link inputs wins each time, and node 0 waits until both streams are through. In round robin the turn goes to
    the input after the last taker, the injection input wrapping round to receiver 0: the sources alternate."""
    sim = machine(CUBE, flow__virtual_channels=1, flow__vc_arbitration=arbitration)
    create, source = [0] * 12, [0, 1, 2] * 4
    _, delivered = run(sim, create, source, [4] * 12, [16] * 12)
    assert [source[uid] for uid in np.argsort(delivered, kind="stable")] == sources
    expected = reference.run_traced(sim.topology, sim.microprogram, sim.params,
                                    zip(range(12), create, source, [4] * 12, [16] * 12))
    assert [expected.delivered[k] for k in range(12)] == delivered.tolist()


@pytest.mark.parametrize("injection_vcs", [1, 2])
def test_injection_vcs_let_a_packet_leave_beside_one_that_waits(injection_vcs):
    """4x3 mesh, 1 VC (ports 0/1 are +x/+y). Node 0 sends 16 flits to node 3 at cycle 0: its head takes node 1's
    +x output at cycle 6 (forward at 2, usable at node 1 at 4, wait_header, branch) and holds it until its tail
    has left at 21. At cycle 5 node 1 makes 8 flits for node 2 (+x: its forward at 7 finds the VC
    held, and retries) and then 8 flits for node 5 (+y, a free link). With one injection context the second
    waits in the NP queue until the first has left whole. With two it starts in the second context once the channel
    has carried the first's 8 flits, M k after the first started (at 6, ready n_s = 1 after it was made): at 14,
    alone on its link, so it takes what a lone packet does from its start, 1 + Lk + 2 + (M-1)k + b + k + n_d = 15
    cycles (MODEL.md's zero-load closed form with h = 1, less n_s), and arrives at 29."""
    sim = machine(MESH, flow__virtual_channels=1, flow__injection_vcs=injection_vcs)
    _, delivered = run(sim, [0, 5, 5], [0, 1, 1], [3, 2, 5], [16, 8, 8])
    f = sim.params
    lone = f.np_send + 1 + f.link_latency + 2 + 7 * f.flit_cycles + f.bus_delay + f.flit_cycles + f.deliver
    assert lone == 16
    if injection_vcs == 2:
        assert delivered[2] == 6 + 8 * f.flit_cycles + lone - f.np_send == 29
    else:
        # the 16 flits cross node 1 at 6..21, so +x is free from 22: the 8 flits leave at 22..29, wait_tail at
        # 30, done at 31, and the queued packet starts at 32 (ready since 6) and takes lone - n_s from there
        assert delivered[2] == 32 + lone - f.np_send


def test_a_router_of_more_than_64_physical_ports_is_refused_in_one_line():
    """The allocator keeps a router's physical inputs and outputs as bits of one word: 17 dimensions give 34 link
    ports, and all-port NP channels 34 more."""
    config = defaults().with_values(topology={"kind": "mesh", "dims": [2] * 17}, microcode="wormhole",
                                    flow__np_channels=0)
    with pytest.raises(InputError) as caught:
        Simulation(config)
    assert "34 link ports and 34 NP channels" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("where", ["at the start", "after the tail"])
def test_a_microprogram_that_loops_through_private_instructions_stops_the_run(tmp_path, where):
    """Branch, jump, wait_header and wait change nothing a flit-level context reads, so a context that comes back to
    one of them on one packet would loop for ever: the run stops naming the input and the instruction. At the
    start the loop runs ahead of the clock when the context takes its packet; after the tail it runs in the
    cycle the tail's grant wakes the context."""
    start = "  - {label: inject, op: wait_header}\n"
    head, inject = (MICROCODE_DIR / "wormhole.yaml").read_text().split(start)
    if where == "at the start":
        start += "  - {label: spin, op: jump, goto: spin}\n"
    else:
        inject = inject.replace("  - {op: done}\n", "  - {label: spin, op: wait, cycles: 2}\n"
                                                    "  - {op: jump, goto: spin}\n")
    looping = tmp_path / "looping.yaml"
    looping.write_text(head + start + inject)
    sim = machine(MESH, microcode=str(looping))
    with pytest.raises(SimulationError, match=r"cycle \d+: the microprogram loops for ever: .* at node 0 \(0,0\) "
                                              r"injection, .*looping.yaml:\d+: '(jump|wait)' \(address \d+\)"):
        run(sim, 0, 0, 5, 3)


def test_a_run_that_reaches_the_rows_cycle_limit_stops_there_in_one_line():
    """Input and buffer rows hold cycles in 32 bits (flits/state.py, ROW_DTYPE). With a 10^9-cycle link delay a
    packet's head lands two hops on near cycle 2 x 10^9, within 2^31 - 1, and three hops on near 3 x 10^9, past
    it: that run stops with the cycle it would have held, where a wrapped cycle would have run on with a wrong
    time. A delay past 2^30 cycles is refused before any run (a buffer slot never used has its credit back from
    cycle 0)."""
    sim = machine(MESH, timing__link_delay_cycles=1_000_000_000, run__drain_cycles=10**10)
    with pytest.raises(SimulationError) as err:
        run(sim, 0, 0, 3, 2)
    assert "the run reached a cycle the flit-level kernel's input and buffer rows cannot hold: cycle 3,000,000," in \
        str(err.value), str(err.value)
    assert "past 2,147,483,647 (2^31 - 1); shorten the run or its timing delays" in str(err.value)
    assert run(sim, 0, 0, 2, 2)[1][0] == reference.zero_load_latency_wormhole(sim.params, 2, 2)  # two hops, alone
    with pytest.raises(InputError, match="a link delay of 1,073,741,824 cycles; the flit-level kernel takes at "
                                         "most 1,073,741,823"):
        machine(MESH, timing__link_delay_cycles=2**30)
