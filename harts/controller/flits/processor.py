"""The network processor (NP) of every node on the flit-level kernel: it makes the node's packets, takes the
copies its ejection channels deliver, and runs the NP program's procedure on its events, as on the
cut-through kernel (harts/np/processor.py; the procedures and their events are the same, harts/np/program.py).

The NP is one serial processor per node: each delivered copy that asks for the procedure occupies it for
PR_NP_RECEIVE cycles; sent-notices, arrival notices and timers cost nothing. Events of one cycle are taken in
the order of the uid of the packet they concern, then their kind, so that the order does not depend on the
order the allocator granted flits in. A packet an NP sends joins the node's NP queue S_DELAY cycles after
the procedure decided (at once for the usual delay 0), and can leave it n_s later.
"""

from ...jit import kernel_call, kernel_part
from ...network.grid import destination_offsets
from ...np.program import (
    EVENT_DELIVERED,
    EVENT_FORGE,
    EVENT_INITIATE,
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
from ..records import (
    ACT_DROPPED,
    CONTENTION_QUEUED,
    DROP_CRASHED_NODE,
    E_ARGUMENT,
    E_CONTENTION,
    E_CORRUPT,
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
    NP_UID_BASE,
    ROUTE_DESTINATION,
    ROUTE_SEGMENTS,
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
from .contexts import enqueue
from .heaps import push, push_birth
from .logs import log_hop
from .pool import new_record, release
from .state import (
    ERR_BAD_SEND,
    ERR_TOO_MANY_SENDS,
    KEY_SPAN,
    ND_FAULT,
    ND_INBOX_HEAD,
    ND_INBOX_TAIL,
    ND_NP_FREE,
    ND_WAKE,
    NEVER,
    PK_CONTENTION,
    PK_CORRUPT,
    PK_DEST,
    PK_DIR,
    PK_DISTANCE,
    PK_DROPPED,
    PK_FLITS,
    PK_FORGED,
    PK_HOPS,
    PK_HOPS_INHERITED,
    PK_LENGTH,
    PK_NOTIFY,
    PK_ORIGIN,
    PK_PARENT,
    PK_ROUTE,
    PK_SOURCE,
    PK_STORES,
    PK_UID,
    PK_VALUE,
    PR_CIRCUIT,
    PR_FLIT_BYTES,
    PR_HEADER_WORDS,
    PR_NP_RECEIVE,
    PR_SEGMENT_WORD,
    PR_SEGMENTS,
    PR_TIE_KEY,
    ST_BIRTHS,
    ST_DROPS,
    ST_ERROR,
    ST_ERROR_DETAIL,
    ST_EVENT_FREE_COUNT,
    ST_EVENT_FREE_HEAD,
    ST_FORGED,
    ST_NP_HEAP,
    ST_UID_NEXT,
    VI_CORRUPT_AT,
    VI_HOPS_AT,
    VI_VALUE_AT,
)


@kernel_part
def _new_event(events, stats, kind, v, t):
    e = stats[ST_EVENT_FREE_HEAD]
    stats[ST_EVENT_FREE_HEAD] = events[e, E_NEXT]
    stats[ST_EVENT_FREE_COUNT] -= 1
    for w in range(events.shape[1]):
        events[e, w] = 0
    events[e, E_KIND] = kind
    events[e, E_NODE] = v
    events[e, E_TICK] = t
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
def _earlier(events, a, b):
    """Whether event a is taken before event b: by cycle, then the uid of the packet, then the kind."""
    if events[a, E_TICK] != events[b, E_TICK]:
        return events[a, E_TICK] < events[b, E_TICK]
    if events[a, E_UID] != events[b, E_UID]:
        return events[a, E_UID] < events[b, E_UID]
    return events[a, E_KIND] < events[b, E_KIND]


@kernel_part
def wake(run, nodes, v, t):
    """Node v's NP has work at cycle t."""
    if t < nodes[v, ND_WAKE]:
        nodes[v, ND_WAKE] = t
        push(run.np_heap, run.stats, ST_NP_HEAP, t * KEY_SPAN + v)


@kernel_part
def _post(switch, run, processor, e, v):
    """Put event e into v's inbox in order and wake the NP for it."""
    nodes = switch.nodes
    events = processor.events
    prev = -1
    cur = nodes[v, ND_INBOX_HEAD]
    while cur >= 0 and not _earlier(events, e, cur):
        prev = cur
        cur = events[cur, E_NEXT]
    events[e, E_NEXT] = cur
    if prev < 0:
        nodes[v, ND_INBOX_HEAD] = e
    else:
        events[prev, E_NEXT] = e
    if cur < 0:
        nodes[v, ND_INBOX_TAIL] = e
    wake(run, nodes, v, events[e, E_TICK])


@kernel_call
def np_copy(machine, switch, packets, logs, run, processor, i, p, v, port, t, serial):
    """Node v's NP has a copy of packet p at cycle t, by input i, and the packet asks for it: an event for the
    procedure, with what the copy's input saw (controller/flits/logs.py, log_copy)."""
    pk = packets.table
    params = machine.params
    events = processor.events
    e = _new_event(events, logs.stats, EVENT_DELIVERED, v, t)
    events[e, E_PORT] = port
    events[e, E_DIRECTION] = port
    events[e, E_SENDER] = pk[p, PK_SOURCE]
    events[e, E_LENGTH] = pk[p, PK_LENGTH] * params[PR_FLIT_BYTES]
    events[e, E_ROUTE] = pk[p, PK_ROUTE]
    events[e, E_HOPS] = switch.visits[i, VI_HOPS_AT]  # the hops the head had made when it got here
    events[e, E_STORES] = pk[p, PK_STORES]
    events[e, E_UID] = pk[p, PK_UID]
    events[e, E_ORIGIN] = pk[p, PK_ORIGIN]
    events[e, E_SERIAL] = serial
    events[e, E_VALUE] = switch.visits[i, VI_VALUE_AT]
    events[e, E_CORRUPT] = switch.visits[i, VI_CORRUPT_AT]
    events[e, E_CONTENTION] = pk[p, PK_CONTENTION]
    events[e, E_FORGED] = pk[p, PK_FORGED]
    for w in range(params[PR_HEADER_WORDS]):
        events[e, E_HEADER + w] = switch.regs[i, w]
    _post(switch, run, processor, e, v)


@kernel_call
def np_notice(machine, switch, packets, logs, run, processor, p, kind, v, t):
    """Packet p, sent by node v's NP, has left v (EVENT_SENT) or is in its destination's NP (EVENT_ARRIVED) at
    cycle t, and its NP asked to hear it: an event for the procedure."""
    pk = packets.table
    events = processor.events
    e = _new_event(events, logs.stats, kind, v, t)
    events[e, E_DIRECTION] = pk[p, PK_DIR]
    events[e, E_SENDER] = v
    events[e, E_LENGTH] = pk[p, PK_LENGTH] * machine.params[PR_FLIT_BYTES]
    events[e, E_ROUTE] = pk[p, PK_ROUTE]
    events[e, E_UID] = pk[p, PK_UID]
    events[e, E_ORIGIN] = pk[p, PK_ORIGIN]
    events[e, E_VALUE] = pk[p, PK_VALUE]
    for w in range(machine.params[PR_HEADER_WORDS]):
        events[e, E_HEADER + w] = packets.origin_header[p, w]
    _post(switch, run, processor, e, v)


@kernel_part
def _join(machine, switch, packets, run, q, v, at, c):
    """Record q joins v's NP queue at cycle `at` (now, or as a birth when that lies ahead)."""
    if at <= c:
        enqueue(machine, switch, packets, run, q, v, c)
    else:
        push_birth(run, ST_BIRTHS, at, packets.table[q, PK_UID], q)


@kernel_call
def _make_sends(offsets, machine, switch, packets, logs, run, processor, count, e, v, c, decided,
                waited, forged):
    """Turn the procedure's send rows into packets (and timers into events)."""
    params = machine.params
    stats = logs.stats
    events = processor.events
    sends = processor.sends
    pk = packets.table
    if count < 0 or count > sends.shape[0]:
        stats[ST_ERROR] = ERR_TOO_MANY_SENDS
        stats[ST_ERROR_DETAIL] = count
        return
    kind = events[e, E_KIND]
    continues = kind == EVENT_DELIVERED or kind == EVENT_FORGE
    words = params[PR_HEADER_WORDS]
    for s in range(count):
        route = sends[s, S_ROUTE]
        if route == SEND_TIMER:
            t = _new_event(events, stats, EVENT_TIMER, v, decided + sends[s, S_DELAY])
            events[t, E_ARGUMENT] = sends[s, S_ARGUMENT]
            events[t, E_ORIGIN] = events[e, E_ORIGIN]
            events[t, E_VALUE] = events[e, E_VALUE]
            _post(switch, run, processor, t, v)
            continue
        if (route != ROUTE_DESTINATION and route != ROUTE_SEGMENTS) or sends[s, S_LENGTH] < 1 or \
                (route == ROUTE_DESTINATION and (sends[s, S_DESTINATION] == v or sends[s, S_DESTINATION] < 0
                                                 or sends[s, S_DESTINATION] >= machine.neighbours.shape[0])):
            stats[ST_ERROR] = ERR_BAD_SEND
            stats[ST_ERROR_DETAIL] = route
            return
        q = new_record(packets, stats, NP_UID_BASE + stats[ST_UID_NEXT], c)
        stats[ST_UID_NEXT] += 1
        pk[q, PK_ORIGIN] = events[e, E_ORIGIN]
        pk[q, PK_SOURCE] = v
        flits = (sends[s, S_LENGTH] + params[PR_FLIT_BYTES] - 1) // params[PR_FLIT_BYTES]
        pk[q, PK_LENGTH] = flits
        pk[q, PK_FLITS] = flits + params[PR_CIRCUIT]
        pk[q, PK_ROUTE] = route
        pk[q, PK_DIR] = sends[s, S_PORT]
        pk[q, PK_NOTIFY] = sends[s, S_NOTIFY]
        pk[q, PK_PARENT] = events[e, E_SERIAL]
        if continues:
            # the NP passes on what it received: its path so far, one more store-and-forward restart
            pk[q, PK_HOPS] = events[e, E_HOPS]
            pk[q, PK_HOPS_INHERITED] = events[e, E_HOPS]
            pk[q, PK_STORES] = events[e, E_STORES] + 1
        pk[q, PK_CONTENTION] = events[e, E_CONTENTION] | (CONTENTION_QUEUED if waited else 0)
        if forged:
            pk[q, PK_VALUE] = VALUE_ALTERED
            pk[q, PK_FORGED] = 1
        else:
            pk[q, PK_VALUE] = events[e, E_VALUE]
            pk[q, PK_CORRUPT] = events[e, E_CORRUPT]  # a damaged payload stays damaged
        for w in range(words):
            packets.header[q, w] = sends[s, S_HEADER + w]
        if route == ROUTE_DESTINATION:
            pk[q, PK_DEST] = sends[s, S_DESTINATION]
            pk[q, PK_DISTANCE] = destination_offsets(offsets, machine, params[PR_TIE_KEY], v,
                                                     sends[s, S_DESTINATION], pk[q, PK_UID], packets.header[q])
        else:
            pk[q, PK_DEST] = _segment_route_end(machine, packets.header, params, q, v)
            if pk[q, PK_DEST] < 0:
                stats[ST_ERROR] = ERR_BAD_SEND
                stats[ST_ERROR_DETAIL] = route
                return
        for w in range(words):
            packets.origin_header[q, w] = packets.header[q, w]
        _join(machine, switch, packets, run, q, v, decided + sends[s, S_DELAY], c)


@kernel_part
def _segment_route_end(machine, header, params, q, v):
    """The node a segment route from v ends at, -1 if it leaves the network or has no hop."""
    word = params[PR_SEGMENT_WORD]
    hops = 0
    for k in range(params[PR_SEGMENTS]):
        port = header[q, word + 1 + 3 * k]
        count = header[q, word + 2 + 3 * k]
        if count == 0:
            break
        if port < 0 or port >= machine.neighbours.shape[1]:
            return -1
        for _ in range(count):
            v = machine.neighbours[v, port]
            if v < 0:
                return -1
        hops += count
    return v if hops > 0 else -1


@kernel_part
def np_run(offsets, procedure, machine, switch, packets, logs, run, processor, v, c):
    """The NP of node v at cycle c: run the procedure on the events that have reached it, one at a time."""
    params = machine.params
    nodes = switch.nodes
    events = processor.events
    stats = logs.stats
    nodes[v, ND_WAKE] = NEVER
    while True:
        e = nodes[v, ND_INBOX_HEAD]
        if e < 0:
            return
        start = max(events[e, E_TICK], nodes[v, ND_NP_FREE])
        if start > c:
            wake(run, nodes, v, start)
            return
        nodes[v, ND_INBOX_HEAD] = events[e, E_NEXT]
        if events[e, E_NEXT] < 0:
            nodes[v, ND_INBOX_TAIL] = -1
        kind = events[e, E_KIND]
        if nodes[v, ND_FAULT] == FAULT_CRASH:  # a crashed NP runs nothing (its timers and notices lapse)
            _free_event(events, stats, e)
            continue
        decided = c
        if kind == EVENT_DELIVERED:
            decided = c + params[PR_NP_RECEIVE]
            nodes[v, ND_NP_FREE] = decided
        waited = start > events[e, E_TICK]
        count = procedure(events[e], processor.state[v], processor.sends, processor.system)
        _make_sends(offsets, machine, switch, packets, logs, run, processor, count, e, v, c, decided,
                    waited, False)
        if stats[ST_ERROR] == 0 and kind == EVENT_DELIVERED and nodes[v, ND_FAULT] == FAULT_BOGUS and \
                events[e, E_FORGED] == 0:
            # A Byzantine node forges packets in answer to every genuine copy it gets; forgeries are not
            # answered with more forgeries, or two such nodes would feed each other forever.
            events[e, E_KIND] = EVENT_FORGE
            count = procedure(events[e], processor.state[v], processor.sends, processor.system)
            stats[ST_FORGED] += count
            _make_sends(offsets, machine, switch, packets, logs, run, processor, count, e, v, c, decided,
                        waited, True)
        _free_event(events, stats, e)
        if stats[ST_ERROR] != 0:
            return


@kernel_part
def np_inject(offsets, procedure, machine, switch, packets, logs, run, processor, traffic, i, c):
    """Traffic record i reaches its source's NP at cycle c: a unicast joins the NP queue; an initiation runs
    the procedure at once."""
    params = machine.params
    stats = logs.stats
    v = traffic[TR_SOURCE, i]
    crashed = switch.nodes[v, ND_FAULT] == FAULT_CRASH
    if traffic[TR_KIND, i] == TRAFFIC_UNICAST:
        p = new_record(packets, stats, traffic[TR_UID, i], c)
        pk = packets.table
        pk[p, PK_ORIGIN] = traffic[TR_UID, i]
        pk[p, PK_SOURCE] = v
        pk[p, PK_DEST] = traffic[TR_DEST, i]
        flits = (traffic[TR_LENGTH, i] + params[PR_FLIT_BYTES] - 1) // params[PR_FLIT_BYTES]
        pk[p, PK_LENGTH] = flits
        pk[p, PK_FLITS] = flits + params[PR_CIRCUIT]
        pk[p, PK_ROUTE] = ROUTE_DESTINATION
        pk[p, PK_VALUE] = VALUE_TRUE
        for w in range(params[PR_HEADER_WORDS]):
            packets.header[p, w] = 0
        if crashed:
            pk[p, PK_DROPPED] = DROP_CRASHED_NODE  # a crashed node originates nothing
            stats[ST_DROPS] += 1
            log_hop(logs, params, pk[p, PK_UID], v, -1, -2, 0, 0, c, c, c, c, ACT_DROPPED, 0, 0, DROP_CRASHED_NODE)
            release(packets, logs, p, c)
            return
        pk[p, PK_DISTANCE] = destination_offsets(offsets, machine, params[PR_TIE_KEY], v, traffic[TR_DEST, i],
                                                 pk[p, PK_UID], packets.header[p])
        for w in range(params[PR_HEADER_WORDS]):
            packets.origin_header[p, w] = packets.header[p, w]
        enqueue(machine, switch, packets, run, p, v, c)
        return
    if crashed:
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
    _make_sends(offsets, machine, switch, packets, logs, run, processor, count, e, v, c, c, False, False)
    _free_event(events, stats, e)
