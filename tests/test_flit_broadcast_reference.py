"""The flit-level reference (harts/reference/flits.py) for broadcasts: NP channels, segment routes, tee and
copies, packets that wait for a trigger; hand-derived alone, then against the numba kernel on random
workloads of unicasts and coded worms."""

import random
from dataclasses import dataclass
from pathlib import Path

import pytest

from harts.controller.flits.params import FlitParams
from harts.controller.microcode import assemble
from harts.machine.config import defaults
from harts.network.build import build_topology
from harts.reference import flits as F

HERE = Path(__file__).resolve().parent
CODED_PATH = HERE / "programs" / "flit_coded.yaml"
CODED = assemble(CODED_PATH)
CPR_PATH = HERE.parent / "microcode" / "cpr.yaml"  # the shipped coded path program: coded worms in the upper VCs
WORMHOLE = assemble(HERE.parent / "microcode" / "wormhole.yaml")
PASS, ABSORB, ABSORB_AND_PASS = 0b10, 0b01, 0b11  # the codes of coded path routing (harts.np.send_plan)
LINE = {"kind": "mesh", "dims": [6, 2]}  # two rows of 6: ports +x0 0, +x1 1, -x0 2, -x1 3
MESH = {"kind": "mesh", "dims": [4, 4]}
MH = {"kind": "mesh_hypercube", "levels": 3, "cube": 4}


def params(k=1, V=2, B=8, b=1, w=0, n_s=1, n_d=1, C=1):
    return FlitParams(flit_bytes=6 * k, flit_cycles=k, virtual_channels=V, buffer_flits=B, bus_delay=b,
                      link_delay=w, np_send=n_s, deliver=n_d, circuit_retry=False, retry_cycles=4, np_channels=C)


# ---- the reference alone, by hand ---------------------------------------------------------------------------

def test_mesh_hypercube_routes_agree_with_the_topology():
    topology = build_topology(MH)
    for src in range(topology.n_nodes):
        for dst in range(topology.n_nodes):
            assert F.route_offsets(topology, src, dst) == topology.route_offsets(src, dst)[0].tolist()


def test_a_unicast_on_the_mesh_hypercube_takes_the_closed_form():
    topology = build_topology(MH)
    p = params()
    for dst in range(1, topology.n_nodes):
        hops = sum(abs(x) for x in F.route_offsets(topology, 0, dst))
        assert F.run(topology, WORMHOLE, p, [(0, 0, 0, dst, 3)]) == {0: F.zero_load_latency_wormhole(p, hops, 3)}


def test_a_coded_worm_leaves_a_copy_at_every_node_it_crosses():
    """6x2 mesh, k 1, b 1, w 0 (Lk 2), n_s 1, n_d 1, V 2, B 8, one NP channel; flit_coded.yaml. Node 0 sends 4 flits by
    the segment (port +x0, 5 hops, code 11): every node it crosses tees, node 5 delivers.
      Source: ready at 1: wait_header 1, branch (route) 2, forward 3: flits granted 3, 4, 5, 6.
      Transit node i (1..4): the head lands Lk = 2 after it left; wait_header, branch (arrived), branch
      (route), branch (code == 11), tee: the tee runs 4 cycles after the head landed and the head leaves
      at once (link and ejection both free, both pick it). So the head leaves node i at 3 + 6i, the tail
      3 cycles later, consumed by node i's ejection in the same cycle: a copy at 6 + 6i + b + k + n_d =
      9 + 6i: 15, 21, 27, 33.
      Node 5: the head lands at 27 + 2 = 29; wait_header 29, branch (arrived: node 4's tee used the last
      hop) 30, deliver 31: flits ejected 31..34, delivered at 34 + 3 = 37."""
    line = build_topology(LINE)
    trace = F.run_traced(line, CODED, params(), [F.Send(0, 0, 0, None, 4, ((0, 5, ABSORB_AND_PASS),))])
    assert trace.copies == [(0, 1, 15), (0, 2, 21), (0, 3, 27), (0, 4, 33), (0, 5, 37)]
    assert trace.delivered == {0: 37} and trace.created == {0: 0} and trace.step == {0: 1}
    # a node that leaves by a PASS segment forwards in the same cycle a tee would: no copy, same times
    # (the source's forward takes segment 0 down to 1 hop, node 1's takes it to 0: node 2 leaves by segment 1)
    trace = F.run_traced(line, CODED, params(), [F.Send(0, 0, 0, 5, 4, ((0, 2, PASS), (0, 3, ABSORB_AND_PASS)))])
    assert trace.copies == [(0, 2, 21), (0, 3, 27), (0, 4, 33), (0, 5, 37)]


def test_an_absorbing_node_ends_the_worm_with_a_deliver():
    """cpr.yaml, 6x2 mesh, defaults as above. Node 0 sends 4 flits by (+x0, 2 hops, 10 pass), (+x0, 3 hops,
    01 absorb): node 2 leaves by the absorb segment, so it delivers and the worm ends there, 3 hops short of
    its route's end. cpr.yaml's source: wait_header, branch (route), forward; a passing node: wait_header
    and four branches (route, arrived, code 01, code 11), forward; the absorbing node: wait_header, three
    branches, deliver.
      Source: ready 1, forward 3: flits leave 3..6, land at node 1 at 5..8; node 1 forwards at 5 + 5 = 10:
      flits land at node 2 at 12..15; node 2 delivers at 12 + 4 = 16: ejected 16..19, NP at 22."""
    trace = F.run_traced(build_topology(LINE), assemble(CPR_PATH), params(),
                         [F.Send(0, 0, 0, None, 4, ((0, 2, PASS), (0, 3, ABSORB)))])
    assert trace.copies == [(0, 2, 22)] and trace.delivered == {0: 22}


def test_a_teed_flit_waits_for_the_ejection_it_shares():
    """6x2 mesh, defaults as above, flit_coded.yaml. Node 0 sends the worm 0 -> 5 (3 flits, code 11) at 0
    and node 7 a unicast 7 -> 1 (4 flits) at 3, which arrives at node 1 on receiver 3 (-x1). Node 1's
    outputs: links 0..3, ejection channels 4.. (physical inputs likewise: receivers 0..3, injection 4..).
      Worm: its flits land at node 1 at 5, 6, 7 and its tee runs at 9 (as in the test above): the head is
      granted at 9, and both outputs' pointers move to 1 (physical input 0, + 1).
      Unicast: ready 4; wait_header 4, branch 5, forward 6: its flits leave node 7 at 6..9 and land at
      node 1 at 8..11; wait_header 8, branch 9, deliver 10.
      C 1: from 10 both ask for the one ejection channel. At 10 the ejection's pointer (1) finds receiver
      3 (the unicast) before receiver 0, while the link's pointer (1) finds the worm: the worm, picked by
      only one of its outputs, is not granted and its link sends nothing; the unicast is (pointer 4).
      11: the worm (pointer 1 again), 12 the unicast, 13 the worm's tail (copy at 13 + b + k + n_d = 16),
      14 and 15 the unicast (delivered 18).
      C 2: receiver 3 ejects through channel 1: the worm's flits leave node 1 at 9, 10, 11 (copy 14), the
      unicast's are ejected 10..13 (delivered 16).
    Either way the worm reaches node 2 with its head at 11, the rest by 15, and its tee there runs at 15:
    from node 2 on its copies are those of the test above, one cycle earlier (3 flits, not 4)."""
    line = build_topology(LINE)
    sends = [F.Send(0, 0, 0, None, 3, ((0, 5, ABSORB_AND_PASS),)), F.Send(1, 3, 7, 1, 4)]
    later = [(0, 2, 20), (0, 3, 26), (0, 4, 32), (0, 5, 36)]
    one = F.run_traced(line, CODED, params(C=1), sends)
    assert sorted(one.copies) == sorted([(0, 1, 16), (1, 1, 18)] + later)
    assert one.delivered == {0: 36, 1: 18}
    two = F.run_traced(line, CODED, params(C=2), sends)
    assert sorted(two.copies) == sorted([(0, 1, 14), (1, 1, 16)] + later)
    assert two.delivered == {0: 36, 1: 16}


@pytest.mark.parametrize("C, expected", [(1, {0: 15, 1: 17}), (2, {0: 15, 1: 11})])
def test_np_channels_send_packets_of_one_node_in_parallel(C, expected):
    """6x2 mesh, defaults of the reference's tests, wormhole.yaml. Node 0 creates at 0 A: 0 -> 2 (+x0, 3
    flits) and B: 0 -> 6 (+x1, 3 flits).
      Alone, 2 hops take n_s + 1 + Lk + (2 + Lk) + 2 + 2k + b + k + n_d = 15 and 1 hop 11.
      C 1: A is taken at creation (channel 0) and starts at 1: wait_header 1, forward 2, flits granted 2, 3,
      4; wait_tail (3) sees the tail at 5, done 6: the channel is free from 7 and B, taken at that done,
      starts at 7 = 6 cycles late: 17.
      C 2: channel 1 takes B at creation; both start at 1 and use different outputs: A 15, B 11."""
    assert F.run(build_topology(LINE), WORMHOLE, params(C=C), [(0, 0, 0, 2, 3), (1, 0, 0, 6, 3)]) == expected


@pytest.mark.parametrize("C, expected", [(1, {0: 15, 1: 16}), (2, {0: 12, 1: 12}), (4, {0: 12, 1: 12})])
def test_receivers_share_the_ejection_channel_p_mod_c(C, expected):
    """Node 7 receives A: 6 -> 7 (+x0, receiver 0) and B: 1 -> 7 (+x1, receiver 1), 4 flits each, both
    created at 0. Both heads land at 4: wait_header 4, branch 5, deliver 6. Alone each takes 12.
      C 1: one ejection; its pointer starts at 0: A (physical input 0) at 6, B at 7 (pointer 1), A 8,
      B 9, ...: A's tail at 12 (NP at 15), B's at 13 (16).
      C 2 or 4: receiver 0 ejects through channel 0, receiver 1 through channel 1: both at 6..9, 12."""
    assert F.run(build_topology(LINE), WORMHOLE, params(C=C), [(0, 0, 6, 7, 4), (1, 0, 1, 7, 4)]) == expected


def test_a_chain_of_packets_triggered_by_copies():
    """6x2 mesh, wormhole.yaml. P0: 0 -> 2 (3 flits) at 0; P1: 2 -> 4, 5 cycles after node 2 has P0;
    P2: 4 -> 10, as soon as node 4 has P1. Each alone takes its closed form: 2 hops 15, 1 hop 11.
    P0's copy at node 2 at 15; P1 created 20, copy at 4 at 35; P2 created 35, delivered 46."""
    sends = [F.Send(0, 0, 0, 2, 3), F.Send(1, 5, 2, 4, 3, (), F.TRIGGER_COPY, 0),
             F.Send(2, 0, 4, 10, 3, (), F.TRIGGER_COPY, 1)]
    trace = F.run_traced(build_topology(LINE), WORMHOLE, params(), sends)
    assert trace.created == {0: 0, 1: 20, 2: 35}
    assert trace.step == {0: 1, 1: 2, 2: 3}
    assert trace.copies == [(0, 2, 15), (1, 4, 35), (2, 10, 46)]
    assert trace.delivered == {0: 15, 1: 35, 2: 46}


def test_a_tee_copy_triggers_too():
    """The worm of the first test leaves its copy at node 3 at 27: a packet 3 -> 9 (1 hop, 3 flits) waiting
    for it with delay 2 is created at 29 and delivered 12 later: wormhole.yaml's 11 (the closed form) and
    one more for flit_coded.yaml's branch on the route at the source."""
    sends = [F.Send(0, 0, 0, None, 4, ((0, 5, ABSORB_AND_PASS),)), F.Send(1, 2, 3, 9, 3, (), F.TRIGGER_COPY, 0)]
    trace = F.run_traced(build_topology(LINE), CODED, params(), sends)
    assert trace.created[1] == 29 and trace.delivered[1] == 29 + F.zero_load_latency_wormhole(params(), 1, 3) + 1
    assert trace.step == {0: 1, 1: 2}


@pytest.mark.parametrize("delay, created, delivered", [(2, 7, 18), (0, 5, 17)])
def test_a_packet_triggered_by_a_send_leaves_after_it(delay, created, delivered):
    """6x2 mesh, wormhole.yaml. P0: 0 -> 2, 3 flits, at 0: granted at its injection input at 2, 3, 4 (tail).
    P1: 0 -> 6 (1 hop, 3 flits alone 11) waits for P0's send: created at 4 + k + delay.
      delay 2: created 7, ready 8; channel 0 (P0's done at 6) is free from 7: starts at 8, delivered 18.
      delay 0: created 5, ready 6, but the channel is free only from 7: one cycle late, 5 + 11 + 1 = 17."""
    sends = [F.Send(0, 0, 0, 2, 3), F.Send(1, delay, 0, 6, 3, (), F.TRIGGER_SENT, 0)]
    trace = F.run_traced(build_topology(LINE), WORMHOLE, params(), sends)
    assert trace.created == {0: 0, 1: created} and trace.delivered == {0: 15, 1: delivered}
    assert trace.step == {0: 1, 1: 2}


def test_a_trigger_that_never_comes_is_an_error_naming_the_packets():
    # P1 waits for a copy of P0 at node 3, which P0 (0 -> 2) never reaches; P2 for P1 to leave node 3
    sends = [F.Send(0, 0, 0, 2, 3), F.Send(1, 0, 3, 4, 3, (), F.TRIGGER_COPY, 0),
             F.Send(2, 0, 3, 5, 3, (), F.TRIGGER_SENT, 1)]
    with pytest.raises(F.ReferenceStuck) as caught:
        F.run_traced(build_topology(LINE), WORMHOLE, params(), sends)
    assert caught.value.never_created == [1, 2] and caught.value.undelivered == []
    with pytest.raises(ValueError, match="source"):  # a send trigger needs the parent's own source
        F.run_traced(build_topology(LINE), WORMHOLE, params(), [F.Send(0, 0, 0, 2, 3),
                                                                 F.Send(1, 0, 1, 4, 3, (), F.TRIGGER_SENT, 0)])


def test_tee_and_deliver_at_the_injection_input_are_errors(tmp_path):
    bad = tmp_path / "tee_inject.yaml"
    bad.write_text(CODED_PATH.read_text().replace("{label: inject_coded, op: forward", "{label: inject_coded, op: tee"))
    with pytest.raises(RuntimeError, match="tee at node 0"):
        F.run_traced(build_topology(LINE), assemble(bad), params(), [F.Send(0, 0, 0, None, 2, ((0, 2, PASS),))])


# ---- the reference against the kernel -------------------------------------------------------------------------

def dimension_ordered_route(topology, rng, src, max_segments=4):
    """A straight or L route from src (one or two axes, in axis order, each a random direction and length
    that stays inside the network), cut into at most max_segments segments with random codes."""
    pos, neg = topology.axis_positive.tolist(), topology.axis_negative.tolist()
    nbr = topology.neighbours.tolist()

    def reach(v, port):  # hops possible from v through `port` without leaving the network or coming back
        seen, hops = {v}, 0
        while nbr[v][port] >= 0 and nbr[v][port] not in seen:
            v = nbr[v][port]
            seen.add(v)
            hops += 1
        return hops

    while True:
        axes = sorted(rng.sample(range(topology.n_axes), rng.choice([1, 2])))
        runs, v = [], src
        for axis in axes:
            options = [(port, reach(v, port)) for port in sorted({pos[axis], neg[axis]}) if reach(v, port)]
            if not options:
                continue
            port, longest = rng.choice(options)
            hops = rng.randint(1, longest)
            runs.append([port, hops])
            for _ in range(hops):
                v = nbr[v][port]
        if runs:
            break
    while len(runs) < max_segments and rng.random() < 0.6:
        splittable = [i for i, (_, hops) in enumerate(runs) if hops >= 2]
        if not splittable:
            break
        i = rng.choice(splittable)
        cut = rng.randint(1, runs[i][1] - 1)
        runs[i:i + 1] = [[runs[i][0], cut], [runs[i][0], runs[i][1] - cut]]
    return tuple((port, hops, rng.choice([PASS, ABSORB_AND_PASS])) for port, hops in runs)


def copy_nodes(topology, src, segments):
    """Where a coded worm leaves copies: every node whose segment to leave by has code 11, and its end."""
    nbr = topology.neighbours.tolist()
    hops = [(port, code) for port, count, code in segments for _ in range(count)]
    path = [src]
    for port, _ in hops:
        path.append(nbr[path[-1]][port])
    return [path[i] for i in range(1, len(hops)) if hops[i][1] == ABSORB_AND_PASS] + [path[-1]]


def random_broadcast_workload(topology, seed, count, spread, circuit=False):
    """Unicasts and coded worms (circuit: circuits routed by destination or by segments, which leave one copy,
    at their end); about a third wait for a copy, a send or (circuit) a delivery of an earlier packet."""
    rng = random.Random(seed)
    triggers = [F.TRIGGER_COPY, F.TRIGGER_SENT] + ([F.TRIGGER_DELIVERED] if circuit else [])
    sends, reached = [], []
    for uid in range(count):
        trigger, parent = F.TRIGGER_NONE, -1
        if uid and rng.random() < 0.35:
            parent = rng.randrange(uid)
            trigger = rng.choice(triggers)
            src = rng.choice(reached[parent]) if trigger == F.TRIGGER_COPY else sends[parent].src
            create = rng.randrange(12)  # the delay after the trigger
        else:
            src, create = rng.randrange(topology.n_nodes), rng.randrange(spread)
        flits = rng.randint(1, 6)
        if rng.random() < 0.5:
            segments = dimension_ordered_route(topology, rng, src)
            dst = F.segment_route_end(topology, src, segments)
            reached.append([dst] if circuit else copy_nodes(topology, src, segments))
        else:
            segments, dst = (), rng.choice([v for v in range(topology.n_nodes) if v != src])
            reached.append([dst])
        sends.append(F.Send(uid, create, src, dst, flits, segments, trigger, parent))
    return sends


@dataclass
class KernelRun:
    """What the kernel did with the reference's sends, per send (its uid): created, delivered, copies, paths."""

    created: list
    delivered: list
    copies: list  # (uid, node, cycle)
    paths: dict  # uid -> the nodes its head went through, the sender first (the last attempt's)


def kernel_run(sim, sends):
    """The reference's sends run by the kernel as the NP program of sends (harts/np/plan_program.py): a send
    that waits for nothing is an initiation at its creation cycle, a triggered one is sent by its NP `create`
    cycles after its trigger. Created is when it joined its NP's queue (the NP made it at its trigger; the
    reference counts from the queue)."""
    from harts.controller import records as R
    from harts.machine.simulation import Simulation
    from harts.machine.traffic import Traffic
    from harts.np.plan_program import sends_program, start_traffic
    from harts.np.send_plan import Send

    topology = sim.topology
    assert [s.uid for s in sends] == list(range(len(sends)))
    planned = [Send(s.src, s.trigger, s.parent, F.segment_route_end(topology, s.src, s.segments) if s.dst is None
                    else s.dst, tuple(tuple(x) for x in s.segments)) for s in sends]
    delays = [s.create if s.trigger != F.TRIGGER_NONE else 0 for s in sends]
    program = sends_program("reference workload", planned, [s.flits * sim.params.flit_bytes for s in sends], delays,
                            sim.microprogram.segments)
    machine = Simulation(sim.config, sim.microprogram, program)
    traffic = Traffic.concatenate([start_traffic(planned, [s.create for s in sends])])
    result = machine.run(traffic, hops=True)
    dl = result.deliveries
    send = result.header("send")
    uid_of = {int(k): int(u) for k, u in zip(send, dl[R.DL_UID])}
    copies = [(int(k), int(v), int(c)) for k, v, c in zip(send, dl[R.DL_NODE], dl[R.DL_TICK])]
    created_at = {int(u): int(c) for u, c in zip(result.packets[R.PL_UID], result.packets[R.PL_CREATE])}
    n = len(sends)
    return KernelRun([created_at[uid_of[k]] + delays[k] for k in range(n)],
                     [max(c for k2, _, c in copies if k2 == k) for k in range(n)], copies,
                     {k: result.hops.path(uid_of[k]) for k in range(n)})


def alone(topology, program, p, send):
    """The packet's latency with nothing else in the network (created at 0, untriggered)."""
    return F.run(topology, program, p, [F.Send(0, 0, send.src, send.dst, send.flits, send.segments)])[0]


def kernel_machine(spec, C, V=2, B=8, program=CODED_PATH, setup="wait"):
    """The kernel for a reference workload. Half-way ties go the + way: the sends are the NP's, numbered by
    the kernel as it makes them, and a drawn tie is keyed on that number, which the reference does not know
    (test_flit_machine compares drawn ties on traffic, whose numbers both models share)."""
    from harts.machine.simulation import Simulation

    config = defaults().with_values(topology=spec, microcode=str(program), flow__virtual_channels=V,
                                    flow__buffer_flits=B, flow__np_channels=C, flow__circuit_setup=setup,
                                    run__deadlock_cycles=F.DEADLOCK_CYCLES, routing__torus_tie="positive")
    sim = Simulation(config)
    assert sim.params.np_channels == C
    return sim


def test_two_teed_inputs_sharing_both_outputs_take_turns():
    """Two teeing inputs that need the same link and the same ejection channel. When both outputs picked
    independently, each picked a different one of them for ever (a livelock this case found); a teeing input
    now asks its ejection channel only once its link picked it. 6x2 mesh, defaults as above,
    flit_coded.yaml, all codes 11. P2: 6 -> 7 -> 8 -> 2 (4 flits, +x0 2 hops, -x1 1) at 0; P0: 9 -> 8 -> 2
    (1 flit, -x0 1, -x1 1) at 5; P1: 2 -> 8 (1 flit, +x1 1) at 7.
      P2 leaves node 6 at 3..6; node 7 tees at 9 (flits 9..12, copy 15); lands at node 8 at 11..14, whose
      tee runs at 15 (VC 1 of port 3). P0 lands at node 8 (receiver 2) at 10, tee at 14 (VC 0 of port 3).
      P1 lands at node 8 (receiver 1) at 12, deliver at 14.
      C 1, node 8: at 14 the ejection's pointer (0) finds P1 (physical input 1) first, P0 is not granted,
      P1 is (copy 17; ejection pointer 2). At 15 the link's pointer (0) picks P2 (input 0) over P0 (input
      2); only P2 then asks the ejection: granted (both pointers 1). At 16 the link's order 1, 2, .. puts
      P0 first: granted (copy 19; pointers 3). At 17, 18, 19 P2 again (tail 19: copy 22).
      Node 2 (receiver 3 for both; P0 in VC 0, P2 in VC 1): P2's flits land at 17, 19, 20, 21 and its
      context delivers at 19 (wait_header 17, branch 18); flit 0 goes at 19, input pointer to VC 0. P0
      lands at 18 and delivers at 20: at 20 the input picks VC 0, P0 (copy 23); P2's flits go at 21, 22,
      23 (copy 26).
      C 2: receivers 0 and 2 eject through channel 0, receiver 1 through channel 1: at 14 P0 and P1 are
      both granted; at 15 P2's tee takes the VC 0 P0 freed, goes at 15..18 (copy 21), and at node 2 waits
      behind P0 in that VC: P0's context there (wait_header 16, branch 17, deliver 18, wait_tail 19, done
      20) is free from 21, P2's runs wait_header 21, branch 22, deliver 23: ejected 23..26, NP at 29."""
    line = build_topology(LINE)
    sends = [F.Send(0, 5, 9, None, 1, ((2, 1, ABSORB_AND_PASS), (3, 1, ABSORB_AND_PASS))),
             F.Send(1, 7, 2, None, 1, ((1, 1, ABSORB_AND_PASS),)),
             F.Send(2, 0, 6, None, 4, ((0, 2, ABSORB_AND_PASS), (3, 1, ABSORB_AND_PASS)))]
    trace = F.run_traced(line, CODED, params(C=1), sends)
    assert sorted(trace.copies) == [(0, 2, 23), (0, 8, 19), (1, 8, 17), (2, 2, 26), (2, 7, 15), (2, 8, 22)]
    assert kernel_run(kernel_machine(LINE, 1), sends).delivered == [23, 17, 26]
    trace = F.run_traced(line, CODED, params(C=2), sends)
    assert sorted(trace.copies) == [(0, 2, 21), (0, 8, 17), (1, 8, 17), (2, 2, 29), (2, 7, 15), (2, 8, 21)]
    assert kernel_run(kernel_machine(LINE, 2), sends).delivered == [21, 17, 29]


COMPARE_CASES = [(spec, C, V, B) for spec in (MESH, MH) for C in (1, 2, 4) for V in (2, 3) for B in (2, 4, 8)]


@pytest.mark.parametrize("program", [CODED_PATH, CPR_PATH], ids=["flit_coded", "cpr"])
@pytest.mark.parametrize("spec, C, V, B", COMPARE_CASES,
                         ids=[f"{'mesh' if s is MESH else 'MH'}-C{c}-V{v}-B{b}" for s, c, v, b in COMPARE_CASES])
def test_kernel_and_reference_agree_on_broadcast_workloads(spec, C, V, B, program):
    """Every packet's creation cycle, step and delivery cycle and the copies, in the order they are made, are the
    same. flit_coded.yaml puts unicasts and coded worms in the same VCs, cpr.yaml in separate halves."""
    from harts.np import send_plan as S

    assert (S.TRIGGER_START, S.TRIGGER_COPY, S.TRIGGER_SENT) == (F.TRIGGER_NONE, F.TRIGGER_COPY, F.TRIGGER_SENT)
    sim = kernel_machine(spec, C, V, B, program)
    seed = COMPARE_CASES.index((spec, C, V, B)) + (100 if program == CPR_PATH else 0)
    sends = random_broadcast_workload(sim.topology, seed, count=70, spread=100)
    expected = assert_kernel_agrees_with_reference(sim, sends)
    # the workload has both kinds of packets, both triggers, copies along the way, chains of steps > 2
    assert {s.trigger for s in sends} == {F.TRIGGER_NONE, F.TRIGGER_COPY, F.TRIGGER_SENT}
    assert len(expected.copies) > len(sends) and max(expected.step.values()) >= 3


def assert_kernel_agrees_with_reference(sim, sends):
    """Every packet's creation, step and delivery cycle and the copies, in the order they are made, are the same in
    the kernel and the reference; and the workload is dense enough to block: some packet is slower than it would be
    alone, none faster. Returns the reference's trace."""
    expected = F.run_traced(sim.topology, sim.microprogram, sim.params, sends)
    result = kernel_run(sim, sends)
    n = len(sends)
    assert result.created == [expected.created[i] for i in range(n)]
    assert result.delivered == [expected.delivered[i] for i in range(n)]
    assert result.copies == expected.copies  # in the same order: cycle by cycle, node by node, physical input by input
    latency = {i: expected.delivered[i] - expected.created[i] for i in range(n)}
    zero = {i: alone(sim.topology, sim.microprogram, sim.params, sends[i]) for i in range(n)}
    assert all(latency[i] >= zero[i] for i in range(n))
    assert any(latency[i] > zero[i] for i in range(n))
    return expected


CIRCUIT_PATH = HERE.parent / "microcode" / "circuit.yaml"
TORUS = {"kind": "torus", "dims": [5, 4]}
CIRCUIT_CASES = [(spec, C, setup) for spec in (TORUS, MESH) for C in (1, 4) for setup in ("wait", "retry")]


@pytest.mark.parametrize("spec, C, setup", CIRCUIT_CASES,
                         ids=[f"{s['kind']}-C{c}-{setup}" for s, c, setup in CIRCUIT_CASES])
def test_kernel_and_reference_agree_on_circuit_workloads(spec, C, setup):
    """circuit.yaml: circuits routed by destination and along segments (wrapping round the torus), packets
    waiting for a copy, a send or a delivery; creation, step, delivery and copies all the same."""
    from harts.np import send_plan as S

    assert S.TRIGGER_DELIVERED == F.TRIGGER_DELIVERED
    sim = kernel_machine(spec, C, program=CIRCUIT_PATH, setup=setup)
    assert sim.params.circuit_retry == (setup == "retry")
    seed = 500 + CIRCUIT_CASES.index((spec, C, setup))
    sends = random_broadcast_workload(sim.topology, seed, count=60, spread=150, circuit=True)
    assert_kernel_agrees_with_reference(sim, sends)
    assert {s.trigger for s in sends} == {F.TRIGGER_NONE, F.TRIGGER_COPY, F.TRIGGER_SENT, F.TRIGGER_DELIVERED}
    assert any(s.segments for s in sends) and any(not s.segments for s in sends)


def test_a_circuit_along_segments_takes_the_closed_form_and_its_delivery_triggers_the_next():
    """5x4 torus, circuit.yaml, defaults of these tests (Lk 2, ack 1 per hop, n_s 1, n_d 1, k 1): alone, h hops
    and M flits take 4 + 8h + M. P0: node 0 along (+y 1, -x 2), wrapping past x = 0: (0,1) = 5, (4,1) = 9,
    (3,1) = 8, 3 hops, 2 flits: 30. P1: node 0 -> 1, 1 hop, 2 flits, waits for P0's delivery: created at 30,
    delivered 14 later."""
    torus = build_topology(TORUS)
    sends = [F.Send(0, 0, 0, None, 2, ((1, 1, PASS), (2, 2, PASS))), F.Send(1, 0, 0, 1, 2, (), F.TRIGGER_DELIVERED, 0)]
    trace = F.run_traced(torus, assemble(CIRCUIT_PATH), params(), sends)
    assert trace.copies == [(0, 8, 30), (1, 1, 44)]
    assert trace.created == {0: 0, 1: 30} and trace.step == {0: 1, 1: 2}
    assert F.zero_load_latency_circuit(params(), 3, 2) == 30
    result = kernel_run(kernel_machine(TORUS, 1, program=CIRCUIT_PATH), sends)
    assert result.delivered == [30, 44] and result.paths[0] == [0, 5, 9, 8]
