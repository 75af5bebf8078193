"""The numbers that fix the flit-level model's timing, taken from the config (MODEL.md, Flow-controlled switching)."""

from __future__ import annotations

from dataclasses import dataclass

from ...network.grid import torus_tie_key


@dataclass(frozen=True)
class FlitParams:
    flit_bytes: int  # F
    flit_cycles: int  # k: cycles a link is busy per flit (F / bytes per cycle)
    virtual_channels: int  # V
    buffer_flits: int  # B: depth of every input VC buffer
    bus_delay: int  # b
    link_delay: int  # w
    np_send: int  # n_s: creation to the injection queue
    deliver: int  # n_d: last flit off the ejection bus to the NP
    circuit_retry: bool  # flow.circuit_setup == retry
    retry_cycles: int  # back-off of a probe that gave up, after its nack reached the source
    np_channels: int = 1  # C: injection and ejection channels per node (flow.np_channels; 0 there means P)
    torus_tie_key: int = 0  # routing.torus_tie: 0, a destination half-way round a torus ring goes +; else the
    # key each packet's way is drawn from (harts.network.grid.tie_goes_negative)
    dateline_whole_axis: bool = False  # flow.dateline == whole_axis
    injection_vcs: int = 1  # J: injection contexts per NP channel (flow.injection_vcs; 0 there means V)
    immediate_turnaround: bool = False  # flow.context_turnaround == immediate: wait_tail and done cost no cycle
    vc_round_robin: bool = False  # flow.vc_choice == round_robin: from the VC after the port's last one given
    vc_arbitration_round_robin: bool = False  # flow.vc_arbitration == round_robin: a freed VC goes to the waiting
    # input after the port's last taker
    vc_reuse: int = 1  # flow.vc_reuse_cycles: a VC a tail releases at t can be taken from t + this
    credit_cycles: int = 1  # timing.credit_delay_cycles: a freed slot's credit sets off back this much later

    @property
    def link_latency(self) -> int:
        """Lk: a flit granted the switch at t is usable in the downstream buffer from t + Lk."""
        return self.bus_delay + self.flit_cycles + self.link_delay

    @property
    def credit_delay(self) -> int:
        """C: a buffer slot freed at t can be written by the upstream transmitter from t + C."""
        return self.credit_cycles + self.link_delay

    @property
    def ack_hop(self) -> int:
        """Cycles an acknowledgment (or nack) takes per hop back to the source."""
        return 1 + self.link_delay

    def flits(self, length_bytes):
        """Flits of a packet of this many bytes (header included): at least one."""
        return max(1, -(-int(length_bytes) // self.flit_bytes))

    @classmethod
    def from_config(cls, config) -> FlitParams:
        bpc = config.bytes_per_cycle
        return cls(flit_bytes=config["flow.flit_bytes"], flit_cycles=config["flow.flit_bytes"] // bpc,
                   virtual_channels=config["flow.virtual_channels"], buffer_flits=config["flow.buffer_flits"],
                   bus_delay=config["timing.bus_delay_cycles"], link_delay=config["timing.link_delay_cycles"],
                   np_send=config["timing.np_send_cycles"], deliver=config["timing.deliver_cycles"],
                   circuit_retry=config["flow.circuit_setup"] == "retry", retry_cycles=config["flow.retry_cycles"],
                   np_channels=config["flow.np_channels"], torus_tie_key=torus_tie_key(config),
                   dateline_whole_axis=config["flow.dateline"] == "whole_axis",
                   immediate_turnaround=config["flow.context_turnaround"] == "immediate",
                   vc_round_robin=config["flow.vc_choice"] == "round_robin",
                   vc_arbitration_round_robin=config["flow.vc_arbitration"] == "round_robin",
                   vc_reuse=config["flow.vc_reuse_cycles"], credit_cycles=config["timing.credit_delay_cycles"],
                   injection_vcs=config["flow.injection_vcs"] or config["flow.virtual_channels"])
