"""Links: the wire between a transmitter and the receiver at the far end. A packet on a link is held by it
until the receiver takes it (receiver.accept); the topology's in-port table says which receiver of the
neighbour the link arrives on."""

from ..jit import kernel_part
from .packets import hold
from .state import PR_BUS_INTERFACES, PR_LINK_DELAY, PR_PORTS


@kernel_part
def far_end(machine, v, direction):
    """The node at the far end of node v's link through port `direction` (-1: no link) and the receiver
    context the link arrives on there."""
    params = machine.params
    u = machine.links[v, direction]
    return u, u * (params[PR_PORTS] + params[PR_BUS_INTERFACES]) + arrives_on(machine, v, direction)


@kernel_part
def arrives_on(machine, v, direction):
    """The port of the far end that node v's link through port `direction` arrives on (state.link_table)."""
    return machine.links[v, machine.params[PR_PORTS] + direction]


@kernel_part
def carry(machine, packets, p, out_start):
    """Packet p goes onto a link, its first byte at tick out_start: the link holds it, and its first byte reaches
    the far end (far_end) at the tick returned."""
    hold(packets, p)
    return out_start + machine.params[PR_LINK_DELAY]
