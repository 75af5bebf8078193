"""Waveforms of the controller: a VCD file of chosen nodes, cycle by cycle, for GTKWave.

For each traced node v:
  n{v}.rx{q}.pc, n{v}.rx{q}.packet      link receiver q: microprogram counter, packet uid + 1 (0: idle)
  n{v}.bmu{i}.pc, n{v}.bmu{i}.packet    BMU bus interface i, the same
  n{v}.tx{d}.busy, n{v}.tx{d}.owner     transmitter d: sending (or in its idle gap); packet uid + 1
  n{v}.bus.slot{q}                      1 while receiver q writes a packet onto the time-sliced bus
  n{v}.bmu.queue, n{v}.bmu.bytes        packets waiting in the BMU ready queue; transit bytes stored
Time is in ns; one controller cycle is clock_period_us x 1000 ns, and a value stamped at cycle c is the
state at the end of cycle c. Packet uids are traffic indices, or from 2^48 on for packets NPs sent. The
run is traced with one event per micro-instruction (no run-ahead, harts.controller.receiver), so every
program counter is what the sequencer holds in that cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..controller import state as S
from ..controller.receiver import tail_time


@dataclass
class TraceObserver:
    """Samples the state at every cycle of [first, last] (called by Simulation.run between kernel calls)."""

    writer: object
    nodes: list[int]
    first: int
    last: int
    bpc: int
    ports: int
    interfaces: int
    period_ns: int
    variables: dict = field(default_factory=dict)
    sampled: int = -1  # last cycle written

    def pause_before(self, now: int, proposed: int) -> int:
        """Where the kernel must stop: at the end of every cycle inside the window."""
        cycle = now // self.bpc
        if cycle < self.first:
            return min(proposed, self.first * self.bpc - 1)
        if cycle <= self.last:
            return (cycle + 1) * self.bpc - 1
        return proposed

    def observe(self, now: int, paused: bool, state: dict) -> None:
        """The state holds for every cycle before `now` that was not sampled yet (idle cycles change
        nothing but what depends on time, which is computed per cycle). At the end of the run (not paused)
        it is final once the traced transmitters' idle gaps are over: sampled up to then, not on to the
        window's end, however far that is."""
        if not paused:
            tx = state["controller"].tx
            rows = [v * self.ports + d for v in self.nodes for d in range(self.ports)]
            now = max(now, int(tx[rows, S.TX_FREE].max()))
        upto = min(self.last, (now - 1) // self.bpc if paused else now // self.bpc)
        for cycle in range(max(self.first, self.sampled + 1), upto + 1):
            self._sample(cycle, state)
            self.sampled = cycle

    def _sample(self, cycle: int, state: dict) -> None:
        controller = state["controller"]
        ctx, tx, node = controller.ctx, controller.tx, controller.node
        pkt = state["packets"].table
        params = state["machine"].params
        tick = cycle * self.bpc
        stamp = cycle * self.period_ns
        per_node = self.ports + self.interfaces
        for v in self.nodes:
            for k in range(per_node):
                ci = v * per_node + k
                name = f"rx{k}" if k < self.ports else f"bmu{k - self.ports}"
                packet = int(ctx[ci, S.CX_PKT])
                self._change(stamp, f"n{v}.{name}.pc", int(ctx[ci, S.CX_PC]) if packet >= 0 else 0)
                self._change(stamp, f"n{v}.{name}.packet", int(pkt[packet, S.PK_UID]) + 1 if packet >= 0 else 0)
                if k < self.ports:
                    writing = packet >= 0 and ctx[ci, S.CX_STREAMING] != 0 and \
                        tick < tail_time(ci, packet, False, ctx, pkt, params)
                    self._change(stamp, f"n{v}.bus.slot{k}", int(writing))
            for d in range(self.ports):
                t = v * self.ports + d
                # busy from the packet's first byte to the end of the idle gap after it
                busy = int(tx[t, S.TX_PACKETS] > 0 and tx[t, S.TX_START] <= tick < tx[t, S.TX_FREE])
                self._change(stamp, f"n{v}.tx{d}.busy", busy)
                self._change(stamp, f"n{v}.tx{d}.owner", int(tx[t, S.TX_UID]) + 1 if busy else 0)
            self._change(stamp, f"n{v}.bmu.queue", int(node[v, S.ND_QUEUE_LEN]))
            self._change(stamp, f"n{v}.bmu.bytes", int(node[v, S.ND_BMU_USED]))

    def _change(self, stamp: int, name: str, value: int) -> None:
        self.writer.change(self.variables[name], stamp, value)


def write_trace(sim, traffic, path: str, nodes: list[int], first: int, last: int):
    """Run `traffic` on `sim` and write the chosen nodes' signals over cycles first..last to `path`."""
    from vcd import VCDWriter

    config = sim.config
    ports, interfaces = sim.topology.n_ports, config["bmu.bus_interfaces"]
    period_ns = round(config["timing.clock_period_us"] * 1000)
    comment = f"harts: {sim.topology.name}, cycle = {period_ns} ns"
    with open(path, "w") as handle, VCDWriter(handle, timescale="1 ns", date="today", comment=comment) as writer:
        observer = TraceObserver(writer, nodes, first, last, config.bytes_per_cycle, ports, interfaces,
                                 period_ns)
        for v in nodes:
            for k in range(ports + interfaces):
                name = f"rx{k}" if k < ports else f"bmu{k - ports}"
                observer.variables[f"n{v}.{name}.pc"] = writer.register_var(f"n{v}.{name}", "pc", "integer", size=16)
                observer.variables[f"n{v}.{name}.packet"] = writer.register_var(f"n{v}.{name}", "packet", "integer",
                                                                                size=64)
            for d in range(ports):
                observer.variables[f"n{v}.tx{d}.busy"] = writer.register_var(f"n{v}.tx{d}", "busy", "wire", size=1)
                observer.variables[f"n{v}.tx{d}.owner"] = writer.register_var(f"n{v}.tx{d}", "owner", "integer",
                                                                              size=64)
            for q in range(ports):
                observer.variables[f"n{v}.bus.slot{q}"] = writer.register_var(f"n{v}.bus", f"slot{q}", "wire", size=1)
            observer.variables[f"n{v}.bmu.queue"] = writer.register_var(f"n{v}.bmu", "queue", "integer", size=16)
            observer.variables[f"n{v}.bmu.bytes"] = writer.register_var(f"n{v}.bmu", "bytes", "integer", size=32)
        return sim.run(traffic, observer=observer)
