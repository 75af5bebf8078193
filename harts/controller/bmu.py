"""Buffer management unit: transit storage with its capacity, the flow control that protects it, and the
queue feeding its bus interfaces.

The queue holds this node's own packets (handed over by the NP) and transit packets stored whole, ordered
by the tick they become ready; an idle bus interface (bmu.bus_interfaces of them) takes the head and runs
the microprogram's inject entry on it. With bmu.queues: single, a packet whose transmitters are busy holds
its interface until one frees, and the packets behind it wait; with per_output, it goes back to the queue,
ready again when the transmitter it waits for frees, so it waits for its output without holding an
interface. A full BMU drops a packet it must store (bmu.when_full: drop), or (wait) transmitters start a
packet towards it only when it can promise room for the whole packet: the flow control of virtual
cut-through.
"""

from ..jit import kernel_call, kernel_part
from .clock import due_tick, schedule
from .logs import log_visit
from .packets import hold, mark_contention, release
from .records import (
    ACT_DROPPED,
    CONTENTION_QUEUED,
    CONTENTION_STORED,
    DROP_BMU_OVERFLOW,
)
from .state import (
    CX_ARRIVE,
    CX_FROM_STORE,
    CX_IDLE_FROM,
    CX_PKT,
    CX_TAKEN,
    ND_BMU_CHANGED,
    ND_BMU_CREDIT,
    ND_BMU_INTEGRAL,
    ND_BMU_PEAK,
    ND_BMU_USED,
    ND_INTERFACE_BUSY,
    ND_LOOKS_SKIPPED,
    ND_QUEUE_CHANGED,
    ND_QUEUE_HEAD,
    ND_QUEUE_INTEGRAL,
    ND_QUEUE_LEN,
    ND_QUEUE_TAIL,
    NEVER,
    PK_DROPPED,
    PK_IN_BMU,
    PK_LEN,
    PK_NEXT,
    PK_PREV,
    PK_READY,
    PK_REFUSED_AT,
    PK_STORED_AT,
    PK_STORES,
    PK_UID,
    PK_VISIT_IN,
    PK_VISIT_PORT,
    PK_WAITS_FOR,
    PR_BMU_CAPACITY,
    PR_BMU_DROPS_WHEN_FULL,
    PR_BUS_INTERFACES,
    PR_HOP_LOG,
    PR_PORTS,
    ST_CURRENT,
    ST_DROPS,
    ST_LATEST,
    ST_OVERFLOWS,
    ST_STORED_IN,
    TX_WAIT_HEAD,
    TX_WAIT_TAIL,
    TX_WAIT_TURN,
)


@kernel_part
def bmu_free_bytes(node, params, v):
    return params[PR_BMU_CAPACITY] - node[v, ND_BMU_USED] - node[v, ND_BMU_CREDIT]


@kernel_part
def bmu_change(node, v, c, used_delta, credit_delta):
    """Apply a change in stored and promised bytes at tick c, keeping the occupancy integral exact."""
    node[v, ND_BMU_INTEGRAL] += node[v, ND_BMU_USED] * (c - node[v, ND_BMU_CHANGED])
    node[v, ND_BMU_CHANGED] = c
    node[v, ND_BMU_USED] += used_delta
    node[v, ND_BMU_CREDIT] += credit_delta
    held = node[v, ND_BMU_USED] + node[v, ND_BMU_CREDIT]
    node[v, ND_BMU_PEAK] = max(node[v, ND_BMU_PEAK], held)


@kernel_part
def _queue_change(node, v, c, delta):
    """The ready queue gains or loses a packet at tick c, keeping its length integral exact."""
    node[v, ND_QUEUE_INTEGRAL] += node[v, ND_QUEUE_LEN] * (c - node[v, ND_QUEUE_CHANGED])
    node[v, ND_QUEUE_CHANGED] = c
    node[v, ND_QUEUE_LEN] += delta


@kernel_part
def bmu_reserve(node, params, u, length, c):
    """A packet is about to stream into node u: with waiting flow control, promise room for all of it, or
    refuse (False) when there is none."""
    if params[PR_BMU_DROPS_WHEN_FULL] != 0:
        return True
    if bmu_free_bytes(node, params, u) < length:
        return False
    bmu_change(node, u, c, 0, length)
    return True


@kernel_part
def bmu_end_promise(node, params, v, length, c):
    """The packet a promise was made for starts streaming on (to a transmitter or into the BMU)."""
    if params[PR_BMU_DROPS_WHEN_FULL] == 0:
        bmu_change(node, v, c, 0, -length)


@kernel_part
def bmu_store(controller, packets, logs, clock, params, ci, v, p, ready, c):
    """Link receiver ci keeps packet p whole in v's BMU, ready for a bus interface at `ready`; or, in a
    full BMU that drops, drops it (the bytes still arrive, and are thrown away)."""
    stats = logs.stats
    pk = packets.table
    length = pk[p, PK_LEN]
    hop_log = params[PR_HOP_LOG] != 0
    receiver = ci - v * (params[PR_PORTS] + params[PR_BUS_INTERFACES])
    arrive = controller.ctx[ci, CX_ARRIVE]
    if params[PR_BMU_DROPS_WHEN_FULL] != 0 and bmu_free_bytes(controller.node, params, v) < length:
        pk[p, PK_DROPPED] = DROP_BMU_OVERFLOW
        stats[ST_OVERFLOWS] += 1
        stats[ST_DROPS] += 1
        if hop_log:
            log_visit(logs, pk[p, PK_UID], v, receiver, -2, arrive, arrive + length, -1, -1, ACT_DROPPED, 0, 0,
                      DROP_BMU_OVERFLOW)
        return
    bmu_change(controller.node, v, c, length, 0)
    pk[p, PK_IN_BMU] = 1
    pk[p, PK_STORES] += 1
    mark_contention(pk, p, CONTENTION_STORED, v, c)
    stats[ST_STORED_IN] += length
    pk[p, PK_READY] = ready
    if hop_log:
        # the bus interface that sends it on writes its visit
        pk[p, PK_VISIT_PORT] = receiver
        pk[p, PK_VISIT_IN] = arrive
        pk[p, PK_STORED_AT] = c
        pk[p, PK_REFUSED_AT] = -1
    bmu_enqueue(controller, packets, clock, stats, params, v, p, c)


@kernel_part
def bmu_enqueue(controller, packets, clock, stats, params, v, p, c):
    """Insert packet p (PK_READY already set) into v's ready queue and wake a sleeping bus interface."""
    node = controller.node
    pk = packets.table
    hold(packets, p)
    ready = pk[p, PK_READY]
    # Walk back from the tail to the last packet ready no later than this one (packets become ready in
    # nearly the order they are queued, so this is a step or two however long the queue).
    before = node[v, ND_QUEUE_TAIL]
    while before >= 0 and pk[before, PK_READY] > ready:
        before = pk[before, PK_PREV]
    after = node[v, ND_QUEUE_HEAD] if before < 0 else pk[before, PK_NEXT]
    pk[p, PK_PREV] = before
    pk[p, PK_NEXT] = after
    if before < 0:
        node[v, ND_QUEUE_HEAD] = p
    else:
        pk[before, PK_NEXT] = p
    if after < 0:
        node[v, ND_QUEUE_TAIL] = p
    else:
        pk[after, PK_PREV] = p
    _queue_change(node, v, c, 1)
    ports = params[PR_PORTS]
    per_node = ports + params[PR_BUS_INTERFACES]
    first = v * per_node + ports
    ctx = controller.ctx
    if node[v, ND_LOOKS_SKIPPED] >= c:
        _bring_back_looks(ctx, clock, stats, v, first, params[PR_BUS_INTERFACES], c)
        node[v, ND_LOOKS_SKIPPED] = -1
    for ci in range(first, first + params[PR_BUS_INTERFACES]):
        e = ci + v + 1
        wake = max(c, ready, ctx[ci, CX_IDLE_FROM])
        if ctx[ci, CX_PKT] < 0 and due_tick(clock, e) > wake:
            # an idle interface asleep until a packet behind this one is ready (or for good) looks again
            schedule(clock, stats, e, wake)
            break


@kernel_call
def _bring_back_looks(ctx, clock, stats, v, first, interfaces, c):
    """The ready queue of node v changes at tick c: the looks at it that bmu_next_look skipped and that are
    still to come could now find a packet, so they happen after all."""
    current = stats[ST_CURRENT]
    for ci in range(first, first + interfaces):
        e = ci + v + 1
        look = ctx[ci, CX_IDLE_FROM]
        # (the interface running now, giving its packet back, schedules its own look when it returns)
        if ctx[ci, CX_PKT] < 0 and due_tick(clock, e) > look and \
                ((look > c and e != current) or (look == c and e > current)):
            schedule(clock, stats, e, look)


@kernel_part
def bmu_wait_for_output(controller, packets, logs, clock, params, ci, v, p, t, free, c):
    """Per-output queues: bus interface ci of node v, refused transmitter t (the first of those packet p
    can use to free, at tick `free`), gives p back to wait in t's queue. Each queue lets one packet at a
    time back into the ready queue, when its transmitter frees, so waiting packets cost no interface."""
    ctx = controller.ctx
    tx = controller.tx
    pk = packets.table
    pk[p, PK_IN_BMU] = ctx[ci, CX_FROM_STORE]
    ctx[ci, CX_PKT] = -1
    controller.node[v, ND_INTERFACE_BUSY] += ctx[ci, CX_IDLE_FROM] - ctx[ci, CX_TAKEN]
    had_turn = pk[p, PK_WAITS_FOR]
    hold(packets, p)
    if had_turn >= 0:
        # refused again in its turn: it keeps its place at the head
        tx[had_turn, TX_WAIT_TURN] = -1
        pk[p, PK_NEXT] = tx[t, TX_WAIT_HEAD]
        tx[t, TX_WAIT_HEAD] = p
        if tx[t, TX_WAIT_TAIL] < 0:
            tx[t, TX_WAIT_TAIL] = p
        if had_turn != t:
            _next_turn(controller, packets, logs, clock, params, v, had_turn, c, c)
    else:
        pk[p, PK_NEXT] = -1
        if tx[t, TX_WAIT_TAIL] < 0:
            tx[t, TX_WAIT_HEAD] = p
        else:
            pk[tx[t, TX_WAIT_TAIL], PK_NEXT] = p
        tx[t, TX_WAIT_TAIL] = p
    pk[p, PK_WAITS_FOR] = t
    if tx[t, TX_WAIT_TURN] < 0:
        _next_turn(controller, packets, logs, clock, params, v, t, free, c)
    release(packets, logs, p, c)  # the interface's hold; t's queue holds it now


@kernel_part
def bmu_turn_used(controller, packets, logs, clock, params, v, p, free, c):
    """Packet p, let out of its transmitter's queue for its turn, has been sent; the next packet of that
    queue gets its turn at `free`, when the transmitter frees."""
    t = packets.table[p, PK_WAITS_FOR]
    packets.table[p, PK_WAITS_FOR] = -1
    controller.tx[t, TX_WAIT_TURN] = -1
    _next_turn(controller, packets, logs, clock, params, v, t, free, c)


@kernel_part
def _next_turn(controller, packets, logs, clock, params, v, t, ready, c):
    """The head of transmitter t's queue, if any, goes back to the ready queue, ready at `ready`."""
    tx = controller.tx
    pk = packets.table
    p = tx[t, TX_WAIT_HEAD]
    if p < 0:
        return
    tx[t, TX_WAIT_HEAD] = pk[p, PK_NEXT]
    if pk[p, PK_NEXT] < 0:
        tx[t, TX_WAIT_TAIL] = -1
    tx[t, TX_WAIT_TURN] = p
    pk[p, PK_READY] = max(c, ready)
    bmu_enqueue(controller, packets, clock, logs.stats, params, v, p, c)
    release(packets, logs, p, c)  # t's queue lets go of it


@kernel_part
def bmu_next_look(node, packets, stats, v, t):
    """An idle bus interface of node v is due to look at the ready queue at tick t: the tick it must wake.
    A look that finds nothing ready only puts it to sleep until the head is ready, so it sleeps until then at
    once; bmu_enqueue brings the look back if a packet is queued before t."""
    head = node[v, ND_QUEUE_HEAD]
    ready = NEVER if head < 0 else packets.table[head, PK_READY]
    if ready <= t:
        return t
    node[v, ND_LOOKS_SKIPPED] = max(node[v, ND_LOOKS_SKIPPED], t)
    # the look would have been an event at t: the run lasts until then at least
    stats[ST_LATEST] = max(stats[ST_LATEST], t)
    return ready


@kernel_part
def bmu_pop_ready(node, packets, v, c):
    """Take the head of v's ready queue if it is ready at tick c; -1 if none. Also returns the head's ready
    tick (NEVER for an empty queue). A packet taken later than it was ready waited behind others from then."""
    pk = packets.table
    head = node[v, ND_QUEUE_HEAD]
    if head < 0:
        return -1, NEVER
    ready = pk[head, PK_READY]
    if ready > c:
        return -1, ready
    following = pk[head, PK_NEXT]
    node[v, ND_QUEUE_HEAD] = following
    if following < 0:
        node[v, ND_QUEUE_TAIL] = -1
    else:
        pk[following, PK_PREV] = -1
    pk[head, PK_NEXT] = -1
    _queue_change(node, v, c, -1)
    if c > ready:
        mark_contention(pk, head, CONTENTION_QUEUED, v, ready)
    return head, ready
