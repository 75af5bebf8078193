"""Routing at the flit level: binding an input to an output, claiming virtual channels by the microprogram's VC
policy, moving a packet's route (offsets or segments) on by a hop, the conditions a microprogram branches on,
and releasing what an input held (MODEL.md, Routes and VC policies in detail)."""

from ...jit import kernel_part
from .. import isa
from ..conditions import compare, current_segment_code
from ..records import ROUTE_SEGMENTS
from .state import (
    CX_PKT,
    ERR_NO_LINK,
    ERR_NO_ROUTE,
    IN_BOUND_FROM,
    IN_DOWN,
    IN_LISTED,
    IN_OUT,
    IN_OVC,
    IN_TEE,
    IN_WAIT_FOR,
    NEVER,
    PK_ROUTE,
    PK_WRAPPED,
    PR_AXES,
    PR_CIRCUIT,
    PR_CLASS_SPLIT,
    PR_ESCAPES,
    PR_HALF,
    PR_NP_CHANNELS,
    PR_PORTS,
    PR_SEGMENT_WORD,
    PR_SEGMENTS,
    PR_SETUP_RETRIES,
    PR_VC_ARBITRATION_ROUND_ROBIN,
    PR_VC_ROUND_ROBIN,
    PR_VCS,
    PR_WHOLE_AXIS,
    PT_LAST_TAKER,
    PT_NEXT_VC,
    PT_PARKED,
    PT_WOKEN,
    PT_WOKEN_AT,
    ST_ACTIVE,
    ST_ERROR,
    VI_REUSABLE_AT,
    VI_WAITS_ON,
    VI_WANTS,
    WANT_SHIFT,
    WANTS_WHOLE_PORT,
    held_cycle,
    input_node,
)
from .wheel import turn, unpark, wake_next


@kernel_part
def bind(machine, switch, run, i, output, vc, c):
    inputs = switch.inputs
    inputs[i, IN_WAIT_FOR] = -1
    inputs[i, IN_OUT] = output
    inputs[i, IN_OVC] = vc
    ports = machine.params[PR_PORTS]
    down = machine.downstream[input_node(machine, i) * ports + output] if output < ports else -1
    inputs[i, IN_DOWN] = down + vc if down >= 0 else -1
    inputs[i, IN_BOUND_FROM] = held_cycle(run.stats, c)
    if inputs[i, IN_LISTED] == 0:
        inputs[i, IN_LISTED] = 1
        word = i >> 6
        run.bound_bits[word] |= 1 << (i & 63)
        run.bound_top[word >> 6] |= 1 << (word & 63)
        run.stats[ST_ACTIVE] += 1


@kernel_part
def _wrap_ahead(machine, node, port, hops):
    """Whether the next `hops` hops through `port` (one axis, one way) take a wrap-around link."""
    for _ in range(hops):
        if machine.wraps[node, port] != 0:
            return True
        node = machine.neighbours[node, port]
    return False


@kernel_part
def _outranked(switch, i, row, base, low, high, c):
    """flow.vc_arbitration round_robin: input i, asking at cycle c for a VC in [low, high) of output row `row`, must
    leave the last one free to the input due to take it (designate) if that one comes first in turn, as BookSim2's
    VC allocator ranks the requests of a cycle."""
    ports = switch.ports
    due = ports[row, PT_WOKEN]
    if due < 0:
        return False
    if due == i or c > ports[row, PT_WOKEN_AT]:
        ports[row, PT_WOKEN] = -1  # it is trying now, or it has had its turn
        return False
    if turn(switch, row, due) > turn(switch, row, i):
        return False
    wants = switch.visits[due, VI_WANTS]
    due_low = wants & ((1 << WANT_SHIFT) - 1)
    due_high = (wants >> WANT_SHIFT) & ((1 << WANT_SHIFT) - 1)
    free = 0
    contested = False
    for vc in range(low, high):
        if switch.owner[base + vc] < 0 and switch.reusable[base + vc] <= c:
            free += 1
            contested = contested or due_low <= vc < due_high
    return contested and free == 1


@kernel_part
def _claim(machine, switch, packets, i, node, port, policy, c):
    """Take a VC of this port free at cycle c by the policy; the VC taken, or -1 (the input then waits for the owner
    of the first candidate, and VI_WANTS holds the VCs it could take). A VC is free once no input owns it and its
    reusable cycle (flow.vc_reuse_cycles) has come."""
    params = machine.params
    vcs = params[PR_VCS]
    pkt = switch.inputs[i, CX_PKT]
    axis = machine.port_axis[port]
    crossing = machine.wraps[node, port] != 0 or (packets.table[pkt, PK_WRAPPED] >> axis) & 1 != 0
    low = 0
    high = vcs
    if policy == isa.VC_DATELINE:
        split = params[PR_CLASS_SPLIT]
        if split < vcs:
            if not crossing and params[PR_WHOLE_AXIS] != 0 and packets.table[pkt, PK_ROUTE] != ROUTE_SEGMENTS:
                crossing = _wrap_ahead(machine, node, port, abs(packets.header[pkt, axis]))
            if crossing:
                low = split
            else:
                high = split
    elif policy == isa.VC_ESCAPE:
        low = 1 if params[PR_ESCAPES] == 2 and crossing else 0
        high = low + 1
    elif policy == isa.VC_ADAPTIVE:
        low = params[PR_ESCAPES]
    elif policy == isa.VC_LOWER:
        high = params[PR_HALF]
    elif policy == isa.VC_UPPER:
        low = params[PR_HALF]
    base = (node * params[PR_PORTS] + port) * vcs
    owner = switch.owner
    reusable = switch.reusable
    if policy == isa.VC_CIRCUIT:
        ready = 0  # the whole port can be taken from this cycle
        for vc in range(vcs):
            if owner[base + vc] >= 0:
                ready = NEVER
                switch.inputs[i, IN_WAIT_FOR] = owner[base + vc]
                break
            ready = max(ready, reusable[base + vc])
        if ready > c:
            switch.visits[i, VI_WANTS] = (vcs << WANT_SHIFT) | WANTS_WHOLE_PORT
            switch.visits[i, VI_REUSABLE_AT] = ready
            return -1
        for vc in range(vcs):
            owner[base + vc] = i
        return 0
    row = node * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + port
    if params[PR_VC_ARBITRATION_ROUND_ROBIN] != 0 and _outranked(switch, i, row, base, low, high, c):
        switch.inputs[i, IN_WAIT_FOR] = switch.ports[row, PT_WOKEN]
        switch.visits[i, VI_WANTS] = low | (high << WANT_SHIFT)
        switch.visits[i, VI_REUSABLE_AT] = NEVER
        return -1
    # flow.vc_choice: the lowest free VC, or round-robin from the one after the port's last given (BookSim2's VC
    # allocator), so that a flow's packets take turns in the VCs and one does not wait behind the other's tail
    first = low
    rotating = params[PR_VC_ROUND_ROBIN] != 0
    if rotating and low <= switch.ports[row, PT_NEXT_VC] < high:
        first = switch.ports[row, PT_NEXT_VC]
    ready = NEVER  # the soonest a free VC of the range can be taken
    for step in range(high - low):
        vc = first + step
        if vc >= high:
            vc -= high - low
        if owner[base + vc] < 0:
            if reusable[base + vc] <= c:
                owner[base + vc] = i
                if rotating:
                    switch.ports[row, PT_NEXT_VC] = vc + 1
                return vc
            ready = min(ready, reusable[base + vc])
    if low < high:
        switch.inputs[i, IN_WAIT_FOR] = owner[base + low]
    switch.visits[i, VI_WANTS] = low | (high << WANT_SHIFT)
    switch.visits[i, VI_REUSABLE_AT] = ready
    return -1


@kernel_part
def segment_code(params, header, pkt):
    """The code of the packet's current segment, -1 when no segment is left."""
    return current_segment_code(header, pkt, params[PR_SEGMENT_WORD], params[PR_SEGMENTS])


@kernel_part
def _take_port(machine, switch, packets, run, i, node, port, policy, c):
    """Claim a VC of the port by the policy and bind input i to it: the VC, or -1 if none is free (-2: no link)."""
    if machine.neighbours[node, port] < 0:
        run.stats[ST_ERROR] = ERR_NO_LINK
        return -2
    params = machine.params
    vc = _claim(machine, switch, packets, i, node, port, policy, c)
    row = node * (params[PR_PORTS] + params[PR_NP_CHANNELS]) + port
    if vc < 0:
        switch.visits[i, VI_WAITS_ON] = row
    else:
        bind(machine, switch, run, i, port, vc, c)
        if machine.wraps[node, port] != 0:
            packets.table[switch.inputs[i, CX_PKT], PK_WRAPPED] |= 1 << machine.port_axis[port]
        if params[PR_VC_ARBITRATION_ROUND_ROBIN] != 0:
            switch.ports[row, PT_LAST_TAKER] = i
            # a VC still free goes on to the next waiting input that can take one (wake_next)
            if switch.ports[row, PT_PARKED] >= 0:
                vcs = params[PR_VCS]
                wake_next(switch, run, row, (node * params[PR_PORTS] + port) * vcs, vcs, c)
    return vc


@kernel_part
def forward(machine, switch, packets, run, i, pc, c):
    """Execute a forward (or a tee's forward) at cycle c: 1 if a VC was taken, 0 if not, -1 on a run-time error."""
    params = machine.params
    code = machine.code
    node = input_node(machine, i)
    pkt = switch.inputs[i, CX_PKT]
    header = packets.header
    via = code[isa.CODE_ARG, pc]
    policy = code[isa.CODE_VC, pc]
    if via == isa.VIA_SEGMENT:
        if segment_code(params, header, pkt) < 0:
            run.stats[ST_ERROR] = ERR_NO_ROUTE
            return -1
        word = params[PR_SEGMENT_WORD]
        k = header[pkt, word]
        vc = _take_port(machine, switch, packets, run, i, node, header[pkt, word + 1 + 3 * k], policy, c)
        if vc == -2:
            return -1
        if vc < 0:
            return 0
        header[pkt, word + 2 + 3 * k] -= 1
        if header[pkt, word + 2 + 3 * k] == 0:
            header[pkt, word] = k + 1
        return 1
    offsets = header[pkt]
    tried = 0  # bit a: axis a's port was tried
    while True:
        # dimension order: the lowest axis with hops left; adaptive: the axis with the most hops left first
        # (ties: the lower), then the others in that order
        axis = -1
        rank = 0
        for a in range(params[PR_AXES]):
            left = abs(offsets[a])
            if left == 0 or (tried >> a) & 1 != 0:
                continue
            if via == isa.VIA_DIMENSION_ORDER:
                axis = a
                break
            if left > rank:
                axis = a
                rank = left
        if axis < 0:
            break
        port = machine.axis_positive[axis] if offsets[axis] > 0 else machine.axis_negative[axis]
        vc = _take_port(machine, switch, packets, run, i, node, port, policy, c)
        if vc == -2:
            return -1
        if vc >= 0:
            offsets[axis] += -1 if offsets[axis] > 0 else 1
            return 1
        if via == isa.VIA_DIMENSION_ORDER:
            return 0
        tried |= 1 << axis
    if tried == 0:
        run.stats[ST_ERROR] = ERR_NO_ROUTE
        return -1
    return 0


@kernel_part
def condition(machine, packets, pkt, local, pc):
    code = machine.code
    params = machine.params
    kind = code[isa.CODE_ARG, pc]
    segments = packets.table[pkt, PK_ROUTE] == ROUTE_SEGMENTS
    if kind == isa.COND_ARRIVED:
        if segments:
            return segment_code(params, packets.header, pkt) < 0
        for a in range(params[PR_AXES]):
            if packets.header[pkt, a] != 0:
                return False
        return True
    if kind == isa.COND_LOCAL:
        return local
    if kind == isa.COND_SETUP_RETRIES:
        return params[PR_SETUP_RETRIES] != 0
    # a flit-level packet has no header fields of its own: only the pseudo-fields have values
    field = code[isa.CODE_FIELD, pc]
    value = -1
    if field == isa.FIELD_ROUTE:
        value = packets.table[pkt, PK_ROUTE]
    elif field == isa.FIELD_SEGMENT_CODE:
        value = segment_code(params, packets.header, pkt) if segments else -1
    return compare(value, code[isa.CODE_COMPARE, pc], code[isa.CODE_VALUE, pc])


@kernel_part
def release_output(machine, switch, run, i, c, reuse_from):
    """The input lets go of its output at cycle c: the VC (a circuit: every VC of the port) is free again, to be
    taken from cycle reuse_from, and the contexts parked on the port try for it then."""
    params = machine.params
    inputs = switch.inputs
    output = inputs[i, IN_OUT]
    ports = params[PR_PORTS]
    vcs = params[PR_VCS]
    if output < ports:
        node = input_node(machine, i)
        base = (node * ports + output) * vcs
        if params[PR_CIRCUIT] != 0:
            for vc in range(vcs):
                switch.owner[base + vc] = -1
                switch.reusable[base + vc] = reuse_from
        else:
            switch.owner[base + inputs[i, IN_OVC]] = -1
            switch.reusable[base + inputs[i, IN_OVC]] = reuse_from
        row = node * (ports + params[PR_NP_CHANNELS]) + output
        if switch.ports[row, PT_PARKED] >= 0:
            if params[PR_VC_ARBITRATION_ROUND_ROBIN] != 0:
                wake_next(switch, run, row, base, vcs, c)
            else:
                unpark(switch, run, row, c, reuse_from)
    inputs[i, IN_OUT] = -1
    inputs[i, IN_TEE] = -1
