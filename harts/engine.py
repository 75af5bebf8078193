"""The clock: advances every node's controller and NP tick by tick, skipping idle nodes and idle ticks.

A tick is one byte time of a link (a controller cycle is bytes_per_cycle ticks). Links, the bus and the
FIFOs move bytes at tick resolution; a receiver's micro-sequencer starts on the header strobe and then
takes one controller cycle per micro-instruction.
"""


from .jit import kernel_entry, kernel_part
from .network_processor import np_initiate, np_send, np_step
from .receiver import step
from .state import (
    CX_WAKE,
    DROP_CRASHED_NODE,
    ERR_CYCLE_LIMIT,
    ERR_DEADLOCK,
    FAULT_CRASH,
    KIND_INITIATE,
    ND_FAULT,
    ND_NP_WAKE,
    ND_WAKE,
    NEVER,
    PK_CREATE,
    PK_DROPPED,
    PK_KIND,
    PK_SRC,
    PR_DEADLOCK_TICKS,
    PR_INJECTORS,
    PR_LAST_TICK,
    PR_PAUSE_AT,
    PR_PORTS,
    ST_DELIVERIES,
    ST_DROPS,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_LAST_PROGRESS,
    ST_NEXT_TRAFFIC,
    ST_PACKETS,
    ST_PAUSED,
    ST_TIME,
    ST_WOKEN,
)


@kernel_part
def _refresh_node_wake(ctx, node, v, per_node):
    wake = node[ND_NP_WAKE, v]
    for ci in range(v * per_node, (v + 1) * per_node):
        if ctx[CX_WAKE, ci] < wake:
            wake = ctx[CX_WAKE, ci]
    node[ND_WAKE, v] = wake


@kernel_entry
def run_engine(code, ctx, ctx_tags, pkt, tags, tx, node, dlog, stats, params, nbr, axis_pos, axis_neg, scratch,
               n_traffic):
    """Simulate until every packet of the traffic (columns 0..n_traffic-1 of pkt, in creation order) and
    everything it caused has been delivered, or until an error is recorded in stats[ST_ERROR], or until
    the next tick would pass params[PR_PAUSE_AT] (stats[ST_PAUSED] = 1), or until the packet table or
    the delivery log is nearly full (stats[ST_PAUSED] = 2); calling again, with larger tables, resumes.
    `scratch` holds the send_packets of one broadcast procedure run.

    Each tick visits the nodes in order and, within a node, its NP and then its receiver contexts in
    bus-slot order; a node none of whose parts is due this tick is skipped, and the clock jumps over
    ticks in which no part of any node is due.
    """
    n_nodes = node.shape[1]
    per_node = params[PR_PORTS] + params[PR_INJECTORS]
    for v in range(n_nodes):
        _refresh_node_wake(ctx, node, v, per_node)
    # One tick creates at most a few records and deliveries per node; below that much room, return so that
    # the caller can grow the tables.
    room = 16 * n_nodes + 64
    c = stats[ST_TIME]
    stats[ST_PAUSED] = 0
    while True:
        stats[ST_WOKEN] = NEVER
        i = stats[ST_NEXT_TRAFFIC]
        while i < n_traffic and pkt[PK_CREATE, i] <= c:
            v = pkt[PK_SRC, i]
            if node[ND_FAULT, v] == FAULT_CRASH:
                pkt[PK_DROPPED, i] = DROP_CRASHED_NODE  # a crashed node originates nothing
                stats[ST_DROPS] += 1
            elif pkt[PK_KIND, i] == KIND_INITIATE:
                np_initiate(node, pkt, ctx, stats, params, scratch, v, i, c)
            else:
                np_send(node, pkt, ctx, params, v, i, c)
            _refresh_node_wake(ctx, node, v, per_node)
            stats[ST_LAST_PROGRESS] = c
            i += 1
        stats[ST_NEXT_TRAFFIC] = i
        following = NEVER
        for v in range(n_nodes):
            if node[ND_WAKE, v] <= c:
                if node[ND_NP_WAKE, v] <= c:
                    np_step(node, pkt, ctx, dlog, stats, params, scratch, v, c)
                for ci in range(v * per_node, (v + 1) * per_node):
                    if ctx[CX_WAKE, ci] <= c:
                        step(ci, c, code, ctx, ctx_tags, pkt, tags, tx, node, dlog, stats, params, nbr,
                             axis_pos, axis_neg)
                _refresh_node_wake(ctx, node, v, per_node)
            if node[ND_WAKE, v] < following:
                following = node[ND_WAKE, v]
        if stats[ST_ERROR] != 0:
            stats[ST_TIME] = c
            return
        if stats[ST_WOKEN] < following:
            following = stats[ST_WOKEN]
        if i < n_traffic and pkt[PK_CREATE, i] < following:
            following = pkt[PK_CREATE, i]
        if following == NEVER:
            stats[ST_TIME] = c
            return
        if c - stats[ST_LAST_PROGRESS] > params[PR_DEADLOCK_TICKS]:
            stats[ST_ERROR] = ERR_DEADLOCK
            stats[ST_ERROR_CYCLE] = c
            stats[ST_TIME] = c
            return
        if following > params[PR_LAST_TICK]:
            stats[ST_ERROR] = ERR_CYCLE_LIMIT
            stats[ST_ERROR_CYCLE] = c
            stats[ST_TIME] = c
            return
        c = max(c + 1, following)
        if c > params[PR_PAUSE_AT]:
            stats[ST_TIME] = c
            stats[ST_PAUSED] = 1
            return
        if stats[ST_PACKETS] + room > pkt.shape[1] or stats[ST_DELIVERIES] + room > dlog.shape[1]:
            stats[ST_TIME] = c
            stats[ST_PAUSED] = 2
            return
