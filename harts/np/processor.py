"""The network processor (NP) of every node: it hands the node's packets to the BMU, takes the copies the
BMU delivers, and runs the NP program's procedure on its events (harts.np.program).

The NP is one serial processor per node: each delivered packet that asks for the procedure occupies it
for PR_NP_RECEIVE ticks, in the order the events reach it (timers, sent-notices and arrival notices cost
nothing).
send_packet is non-blocking: a packet reaches the BMU PR_NP_SEND ticks after the NP issued it, without
holding the NP, and all the sends of one procedure run go together, so the links transmit in parallel.
"""

from ..controller.bmu import bmu_enqueue
from ..controller.clock import due_tick, held_tick, schedule
from ..controller.logs import delivered_word, log_delivery, log_visit
from ..controller.packets import (
    complete,
    handed_over,
    mark_contention,
    new_record,
    set_length,
)
from ..controller.records import (
    ACT_DROPPED,
    CONTENTION_QUEUED,
    DROP_CRASHED_NODE,
    E_ARGUMENT,
    E_CONTENTION,
    E_CORRUPT,
    E_CUTS,
    E_DIRECTION,
    E_DISTANCE,
    E_FORGED,
    E_HEADER,
    E_HOPS,
    E_KIND,
    E_LENGTH,
    E_NEXT,
    E_NODE,
    E_ORIGIN,
    E_PORT,
    E_ROUTE,
    E_SENDER,
    E_SERIAL,
    E_STORES,
    E_TICK,
    E_UID,
    E_VALUE,
    FAULT_BOGUS,
    FAULT_CRASH,
    NOTIFY_ARRIVED,
    NOTIFY_DELIVERED,
    NOTIFY_SENT,
    ROUTE_DESTINATION,
    TR_ARGUMENT,
    TR_DEST,
    TR_DIRECTION,
    TR_DISTANCE,
    TR_KIND,
    TR_LENGTH,
    TR_SOURCE,
    TR_UID,
    TRAFFIC_UNICAST,
    VALUE_ALTERED,
    VALUE_TRUE,
)
from ..controller.state import (
    CX_DIR,
    ERR_TOO_MANY_SENDS,
    ND_FAULT,
    ND_INBOX_HEAD,
    ND_INBOX_TAIL,
    ND_NP_FREE,
    PK_CONTENTION,
    PK_CORRUPT,
    PK_CUTS,
    PK_DELIVERIES,
    PK_DEST,
    PK_DIR,
    PK_DISTANCE,
    PK_DROPPED,
    PK_FORGED,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_LEN,
    PK_NOTIFY,
    PK_ORIGIN,
    PK_PARENT,
    PK_READY,
    PK_ROUTE,
    PK_SENDER,
    PK_STORES,
    PK_UID,
    PK_VALUE,
    PR_BMU_SETUP,
    PR_BUS_INTERFACES,
    PR_HEADER_WORDS,
    PR_HOP_LOG,
    PR_NP_RECEIVE,
    PR_NP_SEND,
    PR_PORTS,
    PR_TIE_KEY,
    ST_DROPS,
    ST_ERROR,
    ST_ERROR_CYCLE,
    ST_ERROR_DETAIL,
    ST_EVENT_FREE_COUNT,
    ST_EVENT_FREE_HEAD,
    ST_FORGED,
    ST_LAST_PROGRESS,
)
from ..jit import kernel_call, kernel_part
from ..network.grid import destination_offsets
from .program import (
    EVENT_ARRIVED,
    EVENT_DELIVERED,
    EVENT_FORGE,
    EVENT_INITIATE,
    EVENT_SENT,
    EVENT_TIMER,
    S_ARGUMENT,
    S_DELAY,
    S_DESTINATION,
    S_HEADER,
    S_LENGTH,
    S_NOTIFY,
    S_PORT,
    S_ROUTE,
    SEND_TIMER,
)


@kernel_part
def _np_event_id(params, v):
    return v * (params[PR_PORTS] + params[PR_BUS_INTERFACES] + 1)


@kernel_part
def _new_event(events, stats, kind, v, tick):
    e = stats[ST_EVENT_FREE_HEAD]
    stats[ST_EVENT_FREE_HEAD] = events[e, E_NEXT]
    stats[ST_EVENT_FREE_COUNT] -= 1
    for w in range(events.shape[1]):
        events[e, w] = 0
    events[e, E_KIND] = kind
    events[e, E_NODE] = v
    events[e, E_TICK] = tick
    events[e, E_PORT] = -1
    events[e, E_DIRECTION] = -1
    events[e, E_SERIAL] = -1
    events[e, E_NEXT] = -1
    return e


@kernel_part
def _free_event(events, stats, e):
    events[e, E_NEXT] = stats[ST_EVENT_FREE_HEAD]
    stats[ST_EVENT_FREE_HEAD] = e
    stats[ST_EVENT_FREE_COUNT] += 1


@kernel_part
def _post(machine, controller, processor, clock, stats, e, v, c):
    """Put event e into v's inbox in time order (after events of the same tick) and wake the NP for it."""
    node = controller.node
    events = processor.events
    tick = events[e, E_TICK]
    prev = -1
    cur = node[v, ND_INBOX_HEAD]
    while cur >= 0 and events[cur, E_TICK] <= tick:
        prev = cur
        cur = events[cur, E_NEXT]
    events[e, E_NEXT] = cur
    if prev < 0:
        node[v, ND_INBOX_HEAD] = e
    else:
        events[prev, E_NEXT] = e
    if cur < 0:
        node[v, ND_INBOX_TAIL] = e
    wake = max(c + 1, tick)
    np_id = _np_event_id(machine.params, v)
    if wake < due_tick(clock, np_id):
        schedule(clock, stats, np_id, wake)


@kernel_part
def np_deliver(machine, controller, packets, logs, clock, processor, ci, p, v, tick, hops, cuts, stores, teed, c):
    """A copy of packet p reaches the NP of node v at `tick` (by receiver context ci; `teed`: by a tee, which also sent
    it on): log it, and queue the events the packet asks for: for the NP's procedure here and, at its destination,
    for its sender."""
    params = machine.params
    stats = logs.stats
    pk = packets.table
    serial = log_delivery(controller, packets, logs, params, ci, p, v, tick, hops, cuts, stores, teed)
    pk[p, PK_DELIVERIES] += 1
    stats[ST_LAST_PROGRESS] = c
    if pk[p, PK_NOTIFY] & NOTIFY_ARRIVED != 0 and v == pk[p, PK_DEST]:
        np_notice(machine, controller, packets, logs, clock, processor, p, EVENT_ARRIVED, pk[p, PK_SENDER], tick, c)
    if pk[p, PK_NOTIFY] & NOTIFY_DELIVERED == 0:
        return
    events = processor.events
    e = _new_event(events, stats, EVENT_DELIVERED, v, tick)
    events[e, E_PORT] = ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES])
    events[e, E_DIRECTION] = controller.ctx[ci, CX_DIR]
    events[e, E_SENDER] = pk[p, PK_SENDER]
    events[e, E_LENGTH] = pk[p, PK_LEN]
    events[e, E_ROUTE] = pk[p, PK_ROUTE]
    events[e, E_HOPS] = hops
    events[e, E_CUTS] = cuts
    events[e, E_STORES] = stores
    events[e, E_UID] = pk[p, PK_UID]
    events[e, E_ORIGIN] = pk[p, PK_ORIGIN]
    events[e, E_SERIAL] = serial
    events[e, E_VALUE] = pk[p, PK_VALUE]
    events[e, E_CORRUPT] = pk[p, PK_CORRUPT]
    events[e, E_CONTENTION] = pk[p, PK_CONTENTION]
    events[e, E_FORGED] = pk[p, PK_FORGED]
    for w in range(params[PR_HEADER_WORDS]):
        events[e, E_HEADER + w] = delivered_word(controller, packets, params, p, w, teed)
    _post(machine, controller, processor, clock, stats, e, v, c)


@kernel_part
def np_notice(machine, controller, packets, logs, clock, processor, p, kind, v, tick, c):
    """Packet p, sent by node v's NP, has left v (EVENT_SENT) or is in its destination's NP (EVENT_ARRIVED)
    at `tick`: tell the NP if it asked."""
    pk = packets.table
    if pk[p, PK_NOTIFY] & (NOTIFY_SENT if kind == EVENT_SENT else NOTIFY_ARRIVED) != 0 and pk[p, PK_SENDER] == v:
        _notice(machine, controller, packets, logs, clock, processor, p, kind, v, tick, c)


@kernel_call
def _notice(machine, controller, packets, logs, clock, processor, p, kind, v, tick, c):
    """The notice of np_notice, queued for v's NP (a plain call: most packets ask for none)."""
    pk = packets.table
    events = processor.events
    e = _new_event(events, logs.stats, kind, v, tick)
    events[e, E_DIRECTION] = pk[p, PK_DIR]
    events[e, E_SENDER] = v
    events[e, E_LENGTH] = pk[p, PK_LEN]
    events[e, E_ROUTE] = pk[p, PK_ROUTE]
    events[e, E_UID] = pk[p, PK_UID]
    events[e, E_ORIGIN] = pk[p, PK_ORIGIN]
    events[e, E_VALUE] = pk[p, PK_VALUE]
    for w in range(machine.params[PR_HEADER_WORDS]):
        events[e, E_HEADER + w] = packets.header[p, w]
    _post(machine, controller, processor, clock, logs.stats, e, v, c)


@kernel_call
def _make_sends(offsets, machine, controller, packets, logs, clock, processor, count, e, v, c, handed, waited,
                forged):
    """Turn the procedure's send rows into packets handed to the BMU (and timers into events)."""
    params = machine.params
    stats = logs.stats
    events = processor.events
    sends = processor.sends
    pk = packets.table
    if count < 0 or count > sends.shape[0]:
        stats[ST_ERROR] = ERR_TOO_MANY_SENDS
        stats[ST_ERROR_CYCLE] = c
        stats[ST_ERROR_DETAIL] = count
        return
    kind = events[e, E_KIND]
    continues = kind == EVENT_DELIVERED or kind == EVENT_FORGE
    words = params[PR_HEADER_WORDS]
    for s in range(count):
        if sends[s, S_ROUTE] == SEND_TIMER:
            t = _new_event(events, stats, EVENT_TIMER, v, held_tick(stats, c + sends[s, S_DELAY]))
            events[t, E_ARGUMENT] = sends[s, S_ARGUMENT]
            events[t, E_ORIGIN] = events[e, E_ORIGIN]
            events[t, E_VALUE] = events[e, E_VALUE]
            _post(machine, controller, processor, clock, stats, t, v, c)
            continue
        q = new_record(packets, stats, c)
        pk[q, PK_ORIGIN] = events[e, E_ORIGIN]
        pk[q, PK_SENDER] = v
        set_length(pk, params, q, sends[s, S_LENGTH])
        pk[q, PK_ROUTE] = sends[s, S_ROUTE]
        pk[q, PK_DIR] = sends[s, S_PORT]
        pk[q, PK_NOTIFY] = sends[s, S_NOTIFY]
        pk[q, PK_PARENT] = events[e, E_SERIAL]
        if continues:
            # the NP passes on what it received: its path so far, one more store-and-forward restart
            pk[q, PK_HOPS] = events[e, E_HOPS]
            pk[q, PK_HOPS_INHERITED] = events[e, E_HOPS]
            pk[q, PK_CUTS] = events[e, E_CUTS]
            pk[q, PK_STORES] = events[e, E_STORES] + 1
        pk[q, PK_CONTENTION] = events[e, E_CONTENTION]
        if waited:
            # its NP was busy when the event that sends it came
            mark_contention(pk, q, CONTENTION_QUEUED, v, events[e, E_TICK])
        if forged:
            pk[q, PK_VALUE] = VALUE_ALTERED
            pk[q, PK_FORGED] = 1
        else:
            pk[q, PK_VALUE] = events[e, E_VALUE]
            pk[q, PK_CORRUPT] = events[e, E_CORRUPT]  # a damaged payload stays damaged
        for w in range(words):
            packets.header[q, w] = sends[s, S_HEADER + w]
        if sends[s, S_ROUTE] == ROUTE_DESTINATION:
            pk[q, PK_DEST] = sends[s, S_DESTINATION]
            pk[q, PK_DISTANCE] = destination_offsets(offsets, machine, params[PR_TIE_KEY], v,
                                                     sends[s, S_DESTINATION], pk[q, PK_UID], packets.header[q])
        pk[q, PK_READY] = held_tick(stats, handed + sends[s, S_DELAY] + params[PR_BMU_SETUP])
        handed_over(pk, params, q, pk[q, PK_READY])
        bmu_enqueue(controller, packets, clock, stats, params, v, q, c)


@kernel_part
def np_run(offsets, procedure, machine, controller, packets, logs, clock, processor, v, c):
    """The NP of node v at tick c: run the procedure on the events that have reached it, one at a time."""
    params = machine.params
    node = controller.node
    events = processor.events
    stats = logs.stats
    while True:
        e = node[v, ND_INBOX_HEAD]
        if e < 0:
            return
        start = max(events[e, E_TICK], node[v, ND_NP_FREE])
        if start > c:
            schedule(clock, stats, _np_event_id(params, v), start)
            return
        node[v, ND_INBOX_HEAD] = events[e, E_NEXT]
        if events[e, E_NEXT] < 0:
            node[v, ND_INBOX_TAIL] = -1
        kind = events[e, E_KIND]
        decided = c
        if kind == EVENT_DELIVERED:
            decided = c + params[PR_NP_RECEIVE]
            node[v, ND_NP_FREE] = decided
        waited = start > events[e, E_TICK]
        handed = decided + params[PR_NP_SEND]
        count = procedure(events[e], processor.state[v], processor.sends, processor.system)
        _make_sends(offsets, machine, controller, packets, logs, clock, processor, count, e, v, c, handed, waited,
                    False)
        if kind == EVENT_DELIVERED and node[v, ND_FAULT] == FAULT_BOGUS and events[e, E_FORGED] == 0:
            # A Byzantine node forges packets in answer to every genuine copy it gets; forgeries are not
            # answered with more forgeries, or two such nodes would feed each other forever.
            events[e, E_KIND] = EVENT_FORGE
            count = procedure(events[e], processor.state[v], processor.sends, processor.system)
            stats[ST_FORGED] += count
            _make_sends(offsets, machine, controller, packets, logs, clock, processor, count, e, v, c, handed,
                        waited, True)
        _free_event(events, stats, e)
        if stats[ST_ERROR] != 0:
            return


@kernel_part
def np_inject(offsets, procedure, machine, controller, packets, logs, clock, processor, traffic, i, c):
    """Traffic record i reaches its source's NP at tick c: a unicast goes to the BMU; an initiation runs
    the procedure at once."""
    params = machine.params
    stats = logs.stats
    v = traffic[TR_SOURCE, i]
    stats[ST_LAST_PROGRESS] = c
    if traffic[TR_KIND, i] == TRAFFIC_UNICAST:
        p = new_record(packets, stats, c)
        pk = packets.table
        pk[p, PK_UID] = traffic[TR_UID, i]
        pk[p, PK_ORIGIN] = traffic[TR_UID, i]
        pk[p, PK_SENDER] = v
        pk[p, PK_DEST] = traffic[TR_DEST, i]
        set_length(pk, params, p, traffic[TR_LENGTH, i])
        pk[p, PK_ROUTE] = ROUTE_DESTINATION
        pk[p, PK_VALUE] = VALUE_TRUE
        for w in range(params[PR_HEADER_WORDS]):
            packets.header[p, w] = 0
        if controller.node[v, ND_FAULT] == FAULT_CRASH:
            pk[p, PK_DROPPED] = DROP_CRASHED_NODE  # a crashed node originates nothing
            stats[ST_DROPS] += 1
            if params[PR_HOP_LOG] != 0:
                log_visit(logs, pk[p, PK_UID], v, -1, -2, c, c, -1, -1, ACT_DROPPED, 0, 0, DROP_CRASHED_NODE)
            complete(packets, logs, p, c)
            return
        pk[p, PK_DISTANCE] = destination_offsets(offsets, machine, params[PR_TIE_KEY], v, traffic[TR_DEST, i],
                                                 pk[p, PK_UID], packets.header[p])
        pk[p, PK_READY] = c + params[PR_NP_SEND] + params[PR_BMU_SETUP]
        handed_over(pk, params, p, pk[p, PK_READY])
        bmu_enqueue(controller, packets, clock, stats, params, v, p, c)
        return
    if controller.node[v, ND_FAULT] == FAULT_CRASH:
        stats[ST_DROPS] += 1
        return
    events = processor.events
    e = _new_event(events, stats, EVENT_INITIATE, v, c)
    events[e, E_DIRECTION] = traffic[TR_DIRECTION, i]
    events[e, E_DISTANCE] = traffic[TR_DISTANCE, i]
    events[e, E_SENDER] = v
    events[e, E_LENGTH] = traffic[TR_LENGTH, i]
    events[e, E_ARGUMENT] = traffic[TR_ARGUMENT, i]
    events[e, E_UID] = traffic[TR_UID, i]
    events[e, E_ORIGIN] = traffic[TR_UID, i]
    events[e, E_VALUE] = VALUE_TRUE
    count = procedure(events[e], processor.state[v], processor.sends, processor.system)
    _make_sends(offsets, machine, controller, packets, logs, clock, processor, count, e, v, c,
                c + params[PR_NP_SEND], False, False)
    _free_event(events, stats, e)


@kernel_part
def np_inbox_length(node, events, v):
    n = 0
    e = node[v, ND_INBOX_HEAD]
    while e >= 0:
        n += 1
        e = events[e, E_NEXT]
    return n
