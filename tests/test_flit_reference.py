"""The plain-Python flit-level reference (harts/reference/flits.py) alone: closed forms, hand-derived
contention, credit and circuit set-up timings, deadlock and its dateline cure."""

import random
from pathlib import Path

import pytest

from harts.controller.flits.params import FlitParams
from harts.controller.microcode import assemble
from harts.network.build import build_topology
from harts.reference import flits as F

MICROCODE = Path(__file__).resolve().parent.parent / "microcode"
WORMHOLE = assemble(MICROCODE / "wormhole.yaml")
ADAPTIVE = assemble(MICROCODE / "wormhole_adaptive.yaml")
CIRCUIT = assemble(MICROCODE / "circuit.yaml")
MESH = {"kind": "mesh", "dims": [4, 4]}
TOPOLOGIES = [MESH, {"kind": "torus", "dims": [5, 5]}, {"kind": "hypercube", "dimension": 3}]


def params(k=1, V=2, B=8, b=1, w=0, n_s=1, n_d=1, retry=False, retry_cycles=4):
    return FlitParams(flit_bytes=6 * k, flit_cycles=k, virtual_channels=V, buffer_flits=B, bus_delay=b,
                      link_delay=w, np_send=n_s, deliver=n_d, circuit_retry=retry, retry_cycles=retry_cycles)


def shallowest(k, b, w, **kw):
    """The smallest buffer the zero-load derivation allows: a slot freed when its flit lands and leaves
    (t) is written again at t + C by the flit granted Lk + C after it, and flits are k apart, so B k >= Lk + C."""
    return params(k=k, b=b, w=w, B=-(-(b + k + w + 1 + w) // k), **kw)


@pytest.mark.parametrize("spec", [MESH, {"kind": "torus", "dims": [5, 5]}, {"kind": "torus", "dims": [4, 6]},
                                  {"kind": "hypercube", "dimension": 3}, {"kind": "mesh", "dims": [3, 2, 2]}])
def test_route_offsets_agree_with_the_topology(spec):
    topology = build_topology(spec)
    for src in range(topology.n_nodes):
        for dst in range(topology.n_nodes):
            assert F.route_offsets(topology, src, dst) == topology.route_offsets(src, dst)[0].tolist()


@pytest.mark.parametrize("spec", TOPOLOGIES, ids=lambda s: s["kind"])
@pytest.mark.parametrize("p", [
    shallowest(k=1, b=1, w=0, n_s=1, n_d=1),
    shallowest(k=2, b=2, w=1, n_s=3, n_d=2, V=3),
    shallowest(k=1, b=0, w=0, n_s=0, n_d=0),
    shallowest(k=3, b=1, w=2, n_s=2, n_d=0),
], ids=["defaults", "k2b2w1", "zeros", "k3w2"])
def test_a_single_packet_takes_exactly_the_closed_form(spec, p):
    topology = build_topology(spec)
    for dst in range(1, topology.n_nodes):
        hops = sum(abs(x) for x in F.route_offsets(topology, 0, dst))
        for flits in (1, 2, 5):
            assert F.run(topology, WORMHOLE, p, [(3, 0, 0, dst, flits)]) == \
                {3: F.zero_load_latency_wormhole(p, hops, flits)}
            assert F.run(topology, CIRCUIT, p, [(3, 0, 0, dst, flits)]) == \
                {3: F.zero_load_latency_circuit(p, hops, flits)}
            # created later: everything shifts by the creation cycle
            assert F.run(topology, WORMHOLE, p, [(3, 40, 0, dst, flits)])[3] == \
                40 + F.zero_load_latency_wormhole(p, hops, flits)


def test_closed_forms_by_hand():
    p = params()  # k 1, b 1, w 0 (Lk 2, C 1), n_s 1, n_d 1
    # 1 + 1 + 2 + 1*(2+2) + 2 + 3*1 + 1 + 1 + 1
    assert F.zero_load_latency_wormhole(p, 2, 4) == 16
    # the same plus 1 at the source and 1 at the transit node (the branch on route == segments),
    # h(1 + w) = 2 for the acknowledgment and h Lk = 4 for the data behind it
    assert F.zero_load_latency_circuit(p, 2, 4) == 24


def test_two_packets_contending_for_one_link():
    """4x4 mesh, k 1, b 1, w 0 (Lk 2), n_s 1, n_d 1, V 2, B 8. A: node 0 -> 2, 4 flits; B: node 1 -> 2,
    6 flits; both created at 0. Both need link 1 -> 2 (port 0 of node 1).
      B: node 1's injection starts at 1, forward at 2 takes VC 0 of port 0; its flits leave at 2, 3, 4, 5.
      A: leaves node 0 at 2..5, lands at node 1 (input port 0 VC 0) at 4..7; that context runs
         wait_header 4, branch 5, forward 6: VC 0 is B's, so VC 1.
      Node 1, output 0 from cycle 6: its pointer is 0 (B, physical input 4, won last at 5), so A (physical
      input 0) wins at 6, B at 7, A at 8, B at 9 (B's tail), A at 10, 11. A lands at node 2 (port 0,
      VC 1) at 8, 10, 12, 13; B (port 0, VC 0) at 4, 5, 6, 7, 9, 11.
      Node 2: B's context delivers at 6 (wait_header 4, branch 5); A's at 10 (8, 9). The ejection takes B
      at 6, 7, 8, 9. At 10 both VCs of physical input 0 are candidates and its VC pointer is 1 (B's VC 0
      won last): A at 10, B 11, A 12, B 13 (tail), A 14, 15 (tail).
      Delivered at tail + b + k + n_d = tail + 3: B 16, A 18."""
    assert F.run(build_topology(MESH), WORMHOLE, params(), [(0, 0, 0, 2, 4), (1, 0, 1, 2, 6)]) == {0: 18, 1: 16}


@pytest.mark.parametrize("depth,hops,expected", [(1, 1, 30), (2, 1, 19), (3, 1, 16), (8, 1, 16), (1, 2, 34)])
def test_shallow_buffers_throttle_a_long_packet_by_credits(depth, hops, expected):
    """One 8-flit packet, k 1, b 1, w 0: Lk 2, C 1, n_s 1, n_d 1. The head leaves the source at 2 and lands
    at 4; at the destination wait_header 4, branch 5, deliver 6: the head is ejected at 6.
      B 1: each flit needs the slot of the one before it, freed when that one is ejected at e; the next
      leaves the source at e + C and is ejected at e + C + Lk = e + 3. Tail at 6 + 7*3 = 27, NP at 30.
      B 2: flit 1 goes at 3 (slot 1 never used) and is ejected at 7 (the ejection is busy at 6); flit i >= 2
      waits for flit i - 2's slot, ejected 3 cycles after it: 6, 7, 9, 10, 12, 13, 15, 16. NP at 19.
      B 3 = (Lk + C) / k: no flit waits; the closed form 16.
      B 1 over 2 hops: the head reaches the middle node at 4 and leaves at 6 (wait_header, branch,
      forward), lands at 8 and is ejected at 10 (slot freed at 10). Flit 1 leaves the source at 7 (the
      middle slot freed at 6), lands at 9 and leaves at 11 (the last slot was freed at 10), ejected 13;
      from then on every flit moves 3 cycles after the one before it: tail at 10 + 7*3 = 31, NP at 34."""
    topology = build_topology(MESH)
    assert F.run(topology, WORMHOLE, params(B=depth), [(0, 0, 0, hops, 8)]) == {0: expected}


def ring_workload(topology, side):
    """Every node sends 8 flits two hops along its row in the + direction (halfway round a ring of 4
    goes the + way), so every + link of every row carries two packets: with one VC each packet holds the
    link its successor needs."""
    return [(v, 0, v, v - v % side + (v % side + 2) % side, 8) for v in range(topology.n_nodes)]


def test_a_torus_ring_deadlocks_with_one_vc_and_not_with_the_dateline(tmp_path):
    any_vc = tmp_path / "wormhole_any.yaml"
    any_vc.write_text((MICROCODE / "wormhole.yaml").read_text().replace("vc: dateline", "vc: any"))
    program = assemble(any_vc)
    topology = build_topology({"kind": "torus", "dims": [4, 4]})
    packets = ring_workload(topology, 4)
    # B 2 < 8 flits: each worm's tail is still in its source's queue when its head is blocked
    with pytest.raises(F.ReferenceDeadlock) as caught:
        F.run(topology, program, params(V=1, B=2), packets)
    assert caught.value.cycle >= F.DEADLOCK_CYCLES
    done = F.run(topology, WORMHOLE, params(V=2, B=2), packets)
    assert sorted(done) == list(range(16))
    # the cycle of waits is broken at the wrap link: the worms that cross it go first, the others follow
    assert done[3] == min(done.values())


def test_dateline_needs_two_vcs_on_a_torus():
    with pytest.raises(ValueError, match="dateline"):
        F.run(build_topology({"kind": "torus", "dims": [4, 4]}), WORMHOLE, params(V=1), [(0, 0, 0, 1, 1)])


@pytest.mark.parametrize("retry,a_delivered", [(False, 50), (True, 60)])
def test_circuit_setup_waits_or_retries(retry, a_delivered):
    """4x4 mesh, defaults (Lk 2, ack 1 cycle per hop), retry_cycles 4. B: 1 -> 3, 10 flits; A: 0 -> 3,
    4 flits; both created at 0. A source runs wait_header, branch, forward; a transit node wait_header,
    two branches, forward.
      B alone: probe leaves node 1 at 3, forward at node 2 at 8, ack at node 3 at 12, back at 14, data
      leave node 1 at 14..23 (the tail frees port 0 of node 1 from 24), ejected 18..27: NP at 30.
      A's probe lands at node 1 at 5 and its forward at 8 finds the port held.
      wait: forward at 8, 10, ..., 24 (branch in between) succeeds at 24; lands at node 2 at 26, whose
        context ends B (tail at 25, wait_tail 26, done 27) at 28: wait_header 28, branches 29 and 30,
        forward 31, lands at node 3 at 33 (idle from 30): ack at 35, back at 38, data ejected 44..47: NP
        at 50.
      retry: branch 9, nack 10 (1 hop): ready at 10 + 1 + 4 = 15; wait_header 15, branch 16, forward 17,
        lands at node 1 at 19, forward 22 fails again, nack 24: ready at 29. From there the path is free:
        29 + (closed form - n_s = 31) = 60."""
    p = params(retry=retry)
    got = F.run(build_topology(MESH), CIRCUIT, p, [(0, 0, 0, 3, 4), (1, 0, 1, 3, 10)])
    assert got == {0: a_delivered, 1: 30}
    assert F.zero_load_latency_circuit(p, 2, 10) == 30


@pytest.mark.parametrize("spec", [MESH, {"kind": "torus", "dims": [4, 4]}, {"kind": "hypercube", "dimension": 3}],
                         ids=lambda s: s["kind"])
@pytest.mark.parametrize("program,retry", [(WORMHOLE, False), (ADAPTIVE, False), (CIRCUIT, True)],
                         ids=["wormhole", "adaptive", "circuit_retry"])
def test_random_traffic_is_delivered_no_sooner_than_alone(spec, program, retry):
    """run() asserts its invariants itself (buffers within B, every packet delivered once, nothing owned
    or bound at the end); contention can only delay a packet, never speed it up."""
    topology = build_topology(spec)
    rng = random.Random(7)
    packets = []
    for uid in range(80):
        src = rng.randrange(topology.n_nodes)
        dst = rng.randrange(topology.n_nodes - 1)
        packets.append((uid, rng.randrange(150), src, dst + (dst >= src), rng.randrange(1, 7)))
    p = params(V=3, B=3, retry=retry)
    got = F.run(topology, program, p, packets)
    assert got == F.run(topology, program, p, list(reversed(packets)))  # input order does not matter
    alone = F.zero_load_latency_circuit if program is CIRCUIT else F.zero_load_latency_wormhole
    for uid, create, src, dst, flits in packets:
        hops = sum(abs(x) for x in F.route_offsets(topology, src, dst))
        # the adaptive inject path runs one instruction more (a jump) than wormhole.yaml's
        assert got[uid] >= create + alone(p, hops, flits) + (program is ADAPTIVE)
