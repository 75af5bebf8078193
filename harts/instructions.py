"""What each name a microprogram may use means, in one line for the cut-through kernel and one for the flit-level
kernel (wormhole and circuit switching); None where that kernel's programs have no use for it. The generated
reference's tables are these (docs/hooks.py), and tests/test_docs_site.py checks that they name exactly what
harts.controller.isa encodes; microcode/ISA.md tells the whole of it.

Kept out of harts/controller/, whose every file the compiled kernels' cache is keyed on (harts.kernel_cache):
editing a sentence here recompiles nothing.
"""

from __future__ import annotations

from typing import NamedTuple


class Meaning(NamedTuple):
    cut_through: str | None
    flit: str | None


def same(text: str) -> Meaning:
    """A name that means the same on both kernels."""
    return Meaning(text, text)


INSTRUCTIONS = {
    "wait_header": Meaning(
        cut_through=("stall until the first timing.header_bytes bytes are in (a BMU context: at once); the header "
                     "registers are then readable"),
        flit="stall until the head flit is at the front of the input; its route is then readable"),
    "branch": same("go to the label `goto` when the condition holds (`if`) or does not (`unless`)"),
    "jump": same("go to the label `goto`"),
    # a flit-level packet carries its route and no fields of its own
    "set": Meaning("field := value", None),
    "add": Meaning("field := field + value", None),
    "or": Meaning("field := field OR value, bitwise", None),
    "and": Meaning("field := field AND value, bitwise", None),
    "forward": Meaning(
        cut_through=("reserve a transmitter of the route's port and stream the packet onto its link; if none is "
                     "free, go to `else` (`else: retry`: stall until one the route may take frees)"),
        flit=("take a free output VC of the route's port, as `vc` allows, and bind the input to it: the flits cross "
              "the switch from then on; if none is free, go to `else` (`else: retry`: try again next cycle)")),
    "tee": Meaning(
        cut_through=("forward, and deliver the same bus write to this node (a broadcast's relay); with `until: F` "
                     "and F at 0, only deliver"),
        flit=("forward, and bind the input to its ejection channel too: each flit goes down the link and to the NP "
              "in the same cycle")),
    "deliver": Meaning(
        cut_through="stream the packet to this node's NP",
        flit="bind the input to its ejection channel: the NP has the packet when its last flit is through"),
    "store": Meaning("keep the whole packet in the BMU, queued for a bus interface, which runs `inject` on it", None),
    "wait_tail": Meaning(
        cut_through="stall until the packet's last byte has passed this context",
        flit=("stall until the packet's last flit has left this input (no cycle of its own with "
              "flow.context_turnaround: immediate)")),
    "wait": same("spend `cycles` cycles"),
    "done": Meaning(
        cut_through="release the context: a link receiver takes the next packet waiting in its FIFO",
        flit="release the context: it takes the next packet whose head is at the front of its input"),
    "ack": Meaning(
        cut_through=None,
        flit=("the probe has reached its destination; the acknowledgment runs back along the circuit, and the "
              "source's data flits leave once it is home")),
    "nack": Meaning(
        cut_through=None,
        flit=("the probe gives up where it is blocked; its partial circuit is released at once, and the source "
              "sends it again flow.retry_cycles after the nack is home")),
}
CONDITIONS = {
    "arrived": same("the route has no hop left: every route offset is 0, or no segment is left"),
    "local": Meaning(cut_through="the context is a BMU bus interface, not a link receiver",
                     flit="the context is an injection input, not a link receiver"),
    "setup_retries": Meaning(None, "circuit: flow.circuit_setup is retry"),
}
PSEUDO_FIELDS = {
    "route": Meaning(
        cut_through=("how the packet is routed: destination (route offsets), direction (straight on), segments "
                     "(source-routed) or table (a route table)"),
        flit="how the packet is routed: destination (route offsets) or segments (source-routed)"),
    "segment_code": same("the code of the current segment of a source-routed packet, -1 when none is left"),
}
VIAS = {
    "adaptive": Meaning(
        cut_through=("a productive port, the axis with the most hops left first; if its transmitter is busy, the "
                     "other productive ones in turn"),
        flit=("a productive port, the axis with the most hops left first; if it has no free VC, the other "
              "productive ones in turn")),
    "dimension_order": same("the port of the lowest axis with hops left, and no other"),
    "straight": Meaning("the direction the packet travels in (a packet the NP sent by direction: that direction)",
                        None),
    "segment": same("the port of the current segment of a source-routed packet"),
    "table": Meaning("the port the packet's route table gives for this node", None),
}
# flit level only: which VCs of the chosen port a forward may take (its `vc` operand)
VCS = {
    "any": "any free VC of the port",
    "dateline": ("on a torus, VCs 0..ceil(V/2)-1 before the wrap-around link of the axis (flow.dateline says which "
                 "hops), the rest after; elsewhere any"),
    "circuit": "every VC of the port at once: a circuit holds the whole link",
    "escape": "the escape VC of minimal adaptive routing: VC 0 (on a torus, VC 1 past the dateline)",
    "adaptive": "the VCs above the escape VCs",
    "lower": "VCs 0..ceil(V/2)-1: one class of traffic",
    "upper": "VCs ceil(V/2)..V-1: another class, which never waits for the lower one",
}
