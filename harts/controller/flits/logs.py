"""The flit-level kernel's writers of the logs it shares with the cut-through kernel (controller/records.py):
a row per copy an NP gets and a row per packet record when it completes, when the run keeps their rows (each is
observed either way: controller/observations.py), and, when a tool asks, a row per visit of a packet to a node.
Nothing in the kernel reads them back."""

from ...jit import kernel_part
from ..observations import observe_delivery, observe_packet
from ..records import (
    DL_CONTENTION,
    DL_CORRUPT,
    DL_CREATE,
    DL_CUTS,
    DL_DEST,
    DL_DIR,
    DL_HOPS,
    DL_INJECTED,
    DL_LENGTH,
    DL_NODE,
    DL_ORIGIN,
    DL_PARENT,
    DL_PORT,
    DL_ROUTE,
    DL_SENDER,
    DL_SERIAL,
    DL_STORES,
    DL_TICK,
    DL_UID,
    DL_VALUE,
    HR_ACTION,
    HR_BLOCKED_CREDIT,
    HR_BLOCKED_OUTPUT,
    HR_FAULT,
    HR_FIRST_IN,
    HR_FIRST_OUT,
    HR_IN_PORT,
    HR_LAST_IN,
    HR_LAST_OUT,
    HR_NODE,
    HR_OUT_PORT,
    HR_OUT_VC,
    HR_STORED,
    HR_UID,
    HR_VC,
    PL_BYTES_RECEIVED,
    PL_BYTES_SENT,
    PL_COMPLETE,
    PL_CONTENDED_AT,
    PL_CONTENDED_KIND,
    PL_CONTENDED_NODE,
    PL_CONTENTION,
    PL_CREATE,
    PL_CUTS,
    PL_DELIVERIES,
    PL_DEST,
    PL_DIR,
    PL_DROPPED,
    PL_FORGED,
    PL_HOPS,
    PL_HOPS_INHERITED,
    PL_LEN,
    PL_ORIGIN,
    PL_PARENT,
    PL_ROUTE,
    PL_SENDER,
    PL_STORES,
    PL_UID,
)
from .state import (
    PK_CONTENDED_AT,
    PK_CONTENDED_KIND,
    PK_CONTENDED_NODE,
    PK_CONTENTION,
    PK_COPIES,
    PK_CREATE,
    PK_DEST,
    PK_DIR,
    PK_DISTANCE,
    PK_DROPPED,
    PK_FORGED,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_INJECTED,
    PK_LANDED_FLITS,
    PK_LENGTH,
    PK_LINK_FLITS,
    PK_ORIGIN,
    PK_PARENT,
    PK_ROUTE,
    PK_SOURCE,
    PK_STORES,
    PK_UID,
    PR_HEADER_WORDS,
    PR_HOP_LOG,
    ST_DELIVERIES,
    ST_DELIVERY_SERIAL,
    ST_HOP_ROWS,
    ST_LOGGED,
    VI_CORRUPT_AT,
    VI_HOPS_AT,
    VI_VALUE_AT,
)


@kernel_part
def log_copy(switch, packets, logs, params, i, p, v, port, t):
    """Node v's NP has a copy of packet p from cycle t, by input i (on receiver `port`): observed, and a row of the
    log if the run keeps them; returns its serial. What the copy carries (hops, value) is what the head brought
    to v."""
    stats = logs.stats
    pk = packets.table
    serial = stats[ST_DELIVERY_SERIAL]
    stats[ST_DELIVERY_SERIAL] = serial + 1
    observe_delivery(logs, pk[p, PK_UID], pk[p, PK_ROUTE], v, pk[p, PK_DEST], pk[p, PK_SOURCE], pk[p, PK_LENGTH],
                     pk[p, PK_CREATE], pk[p, PK_INJECTED], switch.visits[i, VI_HOPS_AT], t)
    dl = logs.deliveries
    if dl.shape[1] == 0:
        return serial
    d = stats[ST_DELIVERIES]
    stats[ST_DELIVERIES] = d + 1
    dl[DL_SERIAL, d] = serial
    dl[DL_UID, d] = pk[p, PK_UID]
    dl[DL_ORIGIN, d] = pk[p, PK_ORIGIN]
    dl[DL_NODE, d] = v
    dl[DL_TICK, d] = t
    dl[DL_HOPS, d] = switch.visits[i, VI_HOPS_AT]
    dl[DL_CUTS, d] = 0
    dl[DL_STORES, d] = pk[p, PK_STORES]
    dl[DL_PORT, d] = port
    dl[DL_DIR, d] = port
    dl[DL_SENDER, d] = pk[p, PK_SOURCE]
    dl[DL_DEST, d] = pk[p, PK_DEST]
    dl[DL_PARENT, d] = pk[p, PK_PARENT]
    dl[DL_CREATE, d] = pk[p, PK_CREATE]
    dl[DL_ROUTE, d] = pk[p, PK_ROUTE]
    dl[DL_VALUE, d] = switch.visits[i, VI_VALUE_AT]
    dl[DL_CORRUPT, d] = switch.visits[i, VI_CORRUPT_AT]
    dl[DL_CONTENTION, d] = pk[p, PK_CONTENTION]
    dl[DL_LENGTH, d] = pk[p, PK_LENGTH]
    dl[DL_INJECTED, d] = pk[p, PK_INJECTED]
    for w in range(params[PR_HEADER_WORDS]):
        logs.delivery_header[d, w] = switch.regs[i, w]
    return serial


@kernel_part
def log_packet(packets, logs, p, c):
    """Packet record p completes at cycle c: observed, and a row of the log if the run keeps them."""
    pk = packets.table
    observe_packet(logs, pk[p, PK_UID], pk[p, PK_ROUTE], pk[p, PK_SOURCE], pk[p, PK_LENGTH], pk[p, PK_CREATE],
                   pk[p, PK_HOPS], pk[p, PK_HOPS_INHERITED], pk[p, PK_STORES], pk[p, PK_LINK_FLITS],
                   pk[p, PK_LANDED_FLITS], pk[p, PK_DROPPED], pk[p, PK_CONTENTION], pk[p, PK_COPIES],
                   pk[p, PK_CONTENDED_KIND], pk[p, PK_CONTENDED_AT], pk[p, PK_CONTENDED_NODE], pk[p, PK_DISTANCE])
    log = logs.packets
    if log.shape[1] == 0:
        return
    stats = logs.stats
    r = stats[ST_LOGGED]
    stats[ST_LOGGED] = r + 1
    log[PL_UID, r] = pk[p, PK_UID]
    log[PL_ORIGIN, r] = pk[p, PK_ORIGIN]
    log[PL_SENDER, r] = pk[p, PK_SOURCE]
    log[PL_DEST, r] = pk[p, PK_DEST]
    log[PL_LEN, r] = pk[p, PK_LENGTH]
    log[PL_ROUTE, r] = pk[p, PK_ROUTE]
    log[PL_PARENT, r] = pk[p, PK_PARENT]
    log[PL_CREATE, r] = pk[p, PK_CREATE]
    log[PL_HOPS, r] = pk[p, PK_HOPS]
    log[PL_CUTS, r] = 0
    log[PL_STORES, r] = pk[p, PK_STORES]
    log[PL_BYTES_SENT, r] = pk[p, PK_LINK_FLITS]
    log[PL_BYTES_RECEIVED, r] = pk[p, PK_LANDED_FLITS]
    log[PL_DROPPED, r] = pk[p, PK_DROPPED]
    log[PL_CONTENTION, r] = pk[p, PK_CONTENTION]
    log[PL_DELIVERIES, r] = pk[p, PK_COPIES]
    log[PL_COMPLETE, r] = c
    log[PL_DIR, r] = pk[p, PK_DIR]
    log[PL_HOPS_INHERITED, r] = pk[p, PK_HOPS_INHERITED]
    log[PL_FORGED, r] = pk[p, PK_FORGED]
    log[PL_CONTENDED_AT, r] = pk[p, PK_CONTENDED_AT]
    log[PL_CONTENDED_NODE, r] = pk[p, PK_CONTENDED_NODE]
    log[PL_CONTENDED_KIND, r] = pk[p, PK_CONTENDED_KIND]


@kernel_part
def log_hop(logs, params, uid, v, in_port, out_port, vc, out_vc, first_in, last_in, first_out, last_out, action,
            blocked_output, blocked_credit, fault):
    """One visit of packet `uid` to node v, if the run keeps a hop log."""
    if params[PR_HOP_LOG] == 0:
        return
    stats = logs.stats
    r = stats[ST_HOP_ROWS]
    stats[ST_HOP_ROWS] = r + 1
    hops = logs.hops
    hops[HR_UID, r] = uid
    hops[HR_NODE, r] = v
    hops[HR_IN_PORT, r] = in_port
    hops[HR_OUT_PORT, r] = out_port
    hops[HR_VC, r] = vc
    hops[HR_OUT_VC, r] = out_vc
    hops[HR_FIRST_IN, r] = first_in
    hops[HR_LAST_IN, r] = last_in
    hops[HR_FIRST_OUT, r] = first_out
    hops[HR_LAST_OUT, r] = last_out
    hops[HR_ACTION, r] = action
    hops[HR_STORED, r] = 0
    hops[HR_BLOCKED_OUTPUT, r] = blocked_output
    hops[HR_BLOCKED_CREDIT, r] = blocked_credit
    hops[HR_FAULT, r] = fault


@kernel_part
def contend(packets, p, kind, v, t):
    """Packet p waited at node v at cycle t (records.CONTENTION_* kind): marked, and the first such wait kept."""
    pk = packets.table
    pk[p, PK_CONTENTION] |= kind
    if pk[p, PK_CONTENDED_AT] < 0:
        pk[p, PK_CONTENDED_AT] = t
        pk[p, PK_CONTENDED_NODE] = v
        pk[p, PK_CONTENDED_KIND] = kind
