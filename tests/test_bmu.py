"""The buffer management unit: its bus interfaces, its queues and their wake-ups."""

from fractions import Fraction

from harts.controller import records as R
from harts.machine.simulation import Simulation
from harts.machine.traffic import unicast

from .helpers import closed_form, config

# E-5: node 60 -> 0 -> 1 is the only shortest route from 60 to 1 (two hops in direction 0)
A, V, B = 60, 0, 1


def test_an_idle_interface_asleep_until_a_stored_packet_is_whole_wakes_for_one_ready_sooner():
    # V's only interface sends Q towards B; S from A reaches V meanwhile and is stored (the transmitter is
    # Q's), whole some 170 cycles later. The interface, idle after Q, sleeps until S is whole; V's own P,
    # handed over at cycle 100, is ready long before that and must not wait for S.
    cfg = config(5, bmu__bus_interfaces=1)
    traffic = unicast([0, 0, 100], [V, A, V], [B, B, A], [512, 1024, 64])
    result = Simulation(cfg).run(traffic)
    assert result.packet(1)[R.PL_STORES] == 1
    S_, r, _ = closed_form(cfg)
    assert result.unicast_latency(2) == S_ + r * 64
    assert result.unicast_latency(2) < Fraction(30)


def _head_of_line(queues):
    # V's two interfaces: one streams Q1 to B; the other takes Q2, also for B, and is refused the busy
    # transmitter; Q3, for A through a free transmitter, is ready one cycle after Q2.
    cfg = config(5, bmu__bus_interfaces=2, bmu__queues=queues)
    traffic = unicast([0, 1, 2], [V, V, V], [B, B, A], [512, 64, 64])
    return cfg, Simulation(cfg).run(traffic)


def test_one_queue_blocks_a_packet_for_a_free_output_behind_one_for_a_busy_output():
    cfg, result = _head_of_line("single")
    S_, r, _ = closed_form(cfg)
    # Q3 waits until Q1's interface is done: Q1's 512 bytes take 512/6 cycles on the link
    assert result.unicast_latency(2) > S_ + r * 64 + Fraction(512, 6) - 4
    assert result.packet(2)[R.PL_CONTENTION] & R.CONTENTION_QUEUED


def test_per_output_queues_let_a_packet_for_a_free_output_pass():
    cfg, result = _head_of_line("per_output")
    S_, r, _ = closed_form(cfg)
    # Q3 leaves as soon as the second interface has given Q2 back: wait_header, branch and the refused
    # forward take 3 cycles from Q2's ready tick, one after Q3's, so Q3 starts 2 cycles late
    assert result.unicast_latency(2) == S_ + r * 64 + 2
    assert result.packet(1)[R.PL_CONTENTION] & R.CONTENTION_RETRIED
    assert result.unicast_latency(1) > result.unicast_latency(0)  # behind Q1 on the same link


def test_counters_over_a_window_add_up_to_the_whole_run():
    cfg = config(5, traffic__uniform__load=0.5, run__cycles=3000)
    result = Simulation(cfg).run(snapshots=(1000, 2000))
    first, second = result.snapshots[1000], result.snapshots[2000]
    final = result.network.counters()
    assert first.tick == 1000 * cfg.bytes_per_cycle and second.tick == 2000 * cfg.bytes_per_cycle
    for name in ("link_bytes", "bmu_byte_ticks", "queue_packet_ticks", "interface_busy", "interface_blocked"):
        a, b, c = (getattr(x, name) for x in (first, second, final))
        assert (a <= b).all() and (b <= c).all() and c.sum() > 0, name
    # the window from 1000 to 2000 cycles carries a third of the uniform traffic's bytes, give or take
    window = (second.link_bytes - first.link_bytes).sum()
    assert 0.25 < window / final.link_bytes.sum() < 0.42


def test_a_refused_packet_that_holds_its_interface_counts_as_blocked_time():
    _, single = _head_of_line("single")
    _, per_output = _head_of_line("per_output")
    assert single.summary()["bmu_interface_blocked"] > 0.3  # Q2 waits most of Q1's 85 cycles
    assert per_output.summary()["bmu_interface_blocked"] == 0
