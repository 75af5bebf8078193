"""The logs the caller drains: one row per copy delivered to an NP (the delivery log, with each copy's
header as delivered), one per packet record when it completes (the packet log), both only when the run keeps
their rows, and, when asked for, one per visit of a packet record to a node (the hop log, records.HR_*).
Every delivery and record is observed (observations.py) whether or not its row is written. Nothing in the
kernel reads the logs back."""

from ..jit import kernel_call, kernel_part
from .observations import observe_delivery, observe_packet
from .records import (
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
    CX_DIR,
    PK_BYTES_RECEIVED,
    PK_BYTES_SENT,
    PK_CONTENDED_AT,
    PK_CONTENDED_KIND,
    PK_CONTENDED_NODE,
    PK_CONTENTION,
    PK_CORRUPT,
    PK_CREATE,
    PK_CUTS,
    PK_DELIVERIES,
    PK_DEST,
    PK_DIR,
    PK_DISTANCE,
    PK_DROPPED,
    PK_FORGED,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_INJECTED,
    PK_LEN,
    PK_ORIGIN,
    PK_PARENT,
    PK_ROUTE,
    PK_SENDER,
    PK_STORES,
    PK_UID,
    PK_VALUE,
    PR_BUS_INTERFACES,
    PR_HEADER_WORDS,
    PR_PORTS,
    PR_REGISTER_WORDS,
    ST_DELIVERIES,
    ST_DELIVERY_SERIAL,
    ST_HOP_ROWS,
    ST_LOGGED,
)


@kernel_part
def log_delivery(controller, packets, logs, params, ci, p, v, tick, hops, cuts, stores, teed):
    """A copy of packet p reaches the NP of node v at `tick` by receiver context ci (`teed`: by a tee that also sent
    it on): observed, and a row of the log if the run keeps them; returns its serial."""
    stats = logs.stats
    pk = packets.table
    serial = stats[ST_DELIVERY_SERIAL]
    stats[ST_DELIVERY_SERIAL] = serial + 1
    observe_delivery(logs, pk[p, PK_UID], pk[p, PK_ROUTE], v, pk[p, PK_DEST], pk[p, PK_SENDER], pk[p, PK_LEN],
                     pk[p, PK_CREATE], pk[p, PK_INJECTED], hops, tick)
    dl = logs.deliveries
    if dl.shape[1] == 0:
        return serial
    d = stats[ST_DELIVERIES]
    stats[ST_DELIVERIES] = d + 1
    port = ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES])
    dl[DL_SERIAL, d] = serial
    dl[DL_UID, d] = pk[p, PK_UID]
    dl[DL_ORIGIN, d] = pk[p, PK_ORIGIN]
    dl[DL_NODE, d] = v
    dl[DL_TICK, d] = tick
    dl[DL_HOPS, d] = hops
    dl[DL_CUTS, d] = cuts
    dl[DL_STORES, d] = stores
    dl[DL_PORT, d] = port
    dl[DL_DIR, d] = controller.ctx[ci, CX_DIR]
    dl[DL_SENDER, d] = pk[p, PK_SENDER]
    dl[DL_DEST, d] = pk[p, PK_DEST]
    dl[DL_PARENT, d] = pk[p, PK_PARENT]
    dl[DL_CREATE, d] = pk[p, PK_CREATE]
    dl[DL_ROUTE, d] = pk[p, PK_ROUTE]
    dl[DL_VALUE, d] = pk[p, PK_VALUE]
    dl[DL_CORRUPT, d] = pk[p, PK_CORRUPT]
    dl[DL_CONTENTION, d] = pk[p, PK_CONTENTION]
    dl[DL_LENGTH, d] = pk[p, PK_LEN]
    dl[DL_INJECTED, d] = pk[p, PK_INJECTED]
    for w in range(params[PR_HEADER_WORDS]):
        logs.delivery_header[d, w] = delivered_word(controller, packets, params, p, w, teed)
    return serial


@kernel_part
def delivered_word(controller, packets, params, p, w, teed):
    """Word w of packet p's header as a receiver delivers it: the registers, as the microprogram left them (a tee's
    as it saved them before its forward), then the NP program's words."""
    if teed and w < params[PR_REGISTER_WORDS]:
        return controller.tee_registers[w]
    return packets.header[p, w]


@kernel_part
def log_packet(packets, logs, p, c):
    """Packet record p completes at tick c: observed, and a row of the log if the run keeps them."""
    pk = packets.table
    observe_packet(logs, pk[p, PK_UID], pk[p, PK_ROUTE], pk[p, PK_SENDER], pk[p, PK_LEN], pk[p, PK_CREATE],
                   pk[p, PK_HOPS], pk[p, PK_HOPS_INHERITED], pk[p, PK_STORES], pk[p, PK_BYTES_SENT],
                   pk[p, PK_BYTES_RECEIVED], pk[p, PK_DROPPED], pk[p, PK_CONTENTION], pk[p, PK_DELIVERIES],
                   pk[p, PK_CONTENDED_KIND], pk[p, PK_CONTENDED_AT], pk[p, PK_CONTENDED_NODE], pk[p, PK_DISTANCE])
    log = logs.packets
    if log.shape[1] == 0:
        return
    stats = logs.stats
    i = stats[ST_LOGGED]
    stats[ST_LOGGED] = i + 1
    log[PL_UID, i] = pk[p, PK_UID]
    log[PL_ORIGIN, i] = pk[p, PK_ORIGIN]
    log[PL_SENDER, i] = pk[p, PK_SENDER]
    log[PL_DEST, i] = pk[p, PK_DEST]
    log[PL_LEN, i] = pk[p, PK_LEN]
    log[PL_ROUTE, i] = pk[p, PK_ROUTE]
    log[PL_PARENT, i] = pk[p, PK_PARENT]
    log[PL_CREATE, i] = pk[p, PK_CREATE]
    log[PL_HOPS, i] = pk[p, PK_HOPS]
    log[PL_CUTS, i] = pk[p, PK_CUTS]
    log[PL_STORES, i] = pk[p, PK_STORES]
    log[PL_BYTES_SENT, i] = pk[p, PK_BYTES_SENT]
    log[PL_BYTES_RECEIVED, i] = pk[p, PK_BYTES_RECEIVED]
    log[PL_DROPPED, i] = pk[p, PK_DROPPED]
    log[PL_CONTENTION, i] = pk[p, PK_CONTENTION]
    log[PL_DELIVERIES, i] = pk[p, PK_DELIVERIES]
    log[PL_COMPLETE, i] = c
    log[PL_DIR, i] = pk[p, PK_DIR]
    log[PL_HOPS_INHERITED, i] = pk[p, PK_HOPS_INHERITED]
    log[PL_FORGED, i] = pk[p, PK_FORGED]
    waited = pk[p, PK_CONTENDED_KIND] != 0
    log[PL_CONTENDED_AT, i] = pk[p, PK_CONTENDED_AT] if waited else -1
    log[PL_CONTENDED_NODE, i] = pk[p, PK_CONTENDED_NODE] if waited else -1
    log[PL_CONTENDED_KIND, i] = pk[p, PK_CONTENDED_KIND]


@kernel_call
def log_visit(logs, uid, v, in_port, out_port, first_in, last_in, first_out, last_out, action, stored, blocked,
              fault):
    """One visit of packet `uid` to node v (records.HR_*); the caller writes it only when the run keeps a hop
    log (PR_HOP_LOG). This kernel has no virtual channels and no credits: those fields are 0."""
    stats = logs.stats
    i = stats[ST_HOP_ROWS]
    stats[ST_HOP_ROWS] = i + 1
    hops = logs.hops
    hops[HR_UID, i] = uid
    hops[HR_NODE, i] = v
    hops[HR_IN_PORT, i] = in_port
    hops[HR_OUT_PORT, i] = out_port
    hops[HR_VC, i] = 0
    hops[HR_OUT_VC, i] = 0
    hops[HR_FIRST_IN, i] = first_in
    hops[HR_LAST_IN, i] = last_in
    hops[HR_FIRST_OUT, i] = first_out
    hops[HR_LAST_OUT, i] = last_out
    hops[HR_ACTION, i] = action
    hops[HR_STORED, i] = stored
    hops[HR_BLOCKED_OUTPUT, i] = blocked
    hops[HR_BLOCKED_CREDIT, i] = 0
    hops[HR_FAULT, i] = fault
