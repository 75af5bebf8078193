"""Waveforms of the controller: a VCD file of chosen nodes, cycle by cycle, for GTKWave, on either kernel.

The machine says which signals a node has and what they hold (its probe: machine/cut_through.py for the
cut-through kernel's receivers, transmitters, bus slots and BMU; machine/flits.py for the flit-level kernel's
input VCs, allocator grants, credits and circuits); this module only asks the run to pause at the end of
every cycle of the window and writes what the probe reads. Time is in ns; one controller cycle is
clock_period_us x 1000 ns, and a value stamped at cycle c is the state at the end of cycle c.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..output import replacing


@dataclass
class TraceObserver:
    """Samples the chosen nodes at every cycle of [first, last] (called by Simulation.run between kernel calls)."""

    writer: object
    nodes: list[int]
    first: int
    last: int
    ticks_per_cycle: int
    period_ns: int
    variables: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)  # each signal's last value written
    sampled: int = -1  # last cycle written
    changes: int = 0  # values that changed after the first cycle of the window

    def pause_before(self, now: int, proposed: int) -> int:
        """Where the kernel must stop: at the end of every cycle inside the window."""
        cycle = now // self.ticks_per_cycle
        if cycle < self.first:
            return min(proposed, self.first * self.ticks_per_cycle - 1)
        if cycle <= self.last:
            return (cycle + 1) * self.ticks_per_cycle - 1
        return proposed

    def observe(self, now: int, paused: bool, probe) -> None:
        """The state holds for every cycle before `now` that was not sampled yet (idle cycles change nothing
        but what depends on time, which the probe computes per cycle). At the end of the run (not paused) it is
        final once the probe's `settled` tick has passed: sampled up to then, not on to the window's end."""
        if not self.variables:
            for scope, name, kind, size in probe.signals(self.nodes):
                self.variables[f"{scope}.{name}"] = self.writer.register_var(scope, name, kind, size=size)
        if not paused:
            now = max(now, probe.settled(self.nodes))
        upto = min(self.last, (now - 1) // self.ticks_per_cycle if paused else now // self.ticks_per_cycle)
        for cycle in range(max(self.first, self.sampled + 1), upto + 1):
            stamp = cycle * self.period_ns
            for name, value in probe.sample(cycle, self.nodes).items():
                if name in self.values and self.values[name] != value:
                    self.changes += 1
                self.values[name] = value
                self.writer.change(self.variables[name], stamp, value)
            self.sampled = cycle


def trace_run(run, path: str, nodes: list[int], first: int, last: int, clock_period_us: float,
              ticks_per_cycle: int):
    """Run `run(observer)` (a function that runs something with the observer) and write the chosen nodes'
    signals over cycles first..last to `path`. Returns what `run` returned and how many signal values changed
    in the window after its first cycle (0: nothing happened there)."""
    from vcd import VCDWriter

    period_ns = round(clock_period_us * 1000)
    with replacing(path) as temporary, open(temporary, "w") as handle, \
            VCDWriter(handle, timescale="1 ns", date="today", comment=f"harts, cycle = {period_ns} ns") as writer:
        observer = TraceObserver(writer, nodes, first, last, ticks_per_cycle, period_ns)
        returned = run(observer)
    return returned, observer.changes
