"""Buffer management unit: transit storage with its capacity, and the ready queue feeding the transmitters.

The ready queue holds this node's own packets (handed over by the NP) and transit packets stored whole,
ordered by the cycle they become ready; BMU injection contexts take them from its head.
"""


from .jit import kernel_part
from .state import (
    CX_PKT,
    CX_WAKE,
    ND_BMU_CHANGED,
    ND_BMU_CREDIT,
    ND_BMU_INTEGRAL,
    ND_BMU_PEAK,
    ND_BMU_USED,
    ND_QUEUE_HEAD,
    ND_QUEUE_LEN,
    ND_QUEUE_TAIL,
    NEVER,
    PK_NEXT,
    PK_READY,
    PR_BMU_CAPACITY,
    PR_INJECTORS,
    PR_PORTS,
)


@kernel_part
def bmu_free_bytes(node, params, v):
    return params[PR_BMU_CAPACITY] - node[ND_BMU_USED, v] - node[ND_BMU_CREDIT, v]


@kernel_part
def bmu_change(node, v, c, used_delta, credit_delta):
    """Apply a change in stored and promised bytes at tick c, keeping the occupancy integral exact."""
    node[ND_BMU_INTEGRAL, v] += node[ND_BMU_USED, v] * (c - node[ND_BMU_CHANGED, v])
    node[ND_BMU_CHANGED, v] = c
    node[ND_BMU_USED, v] += used_delta
    node[ND_BMU_CREDIT, v] += credit_delta
    held = node[ND_BMU_USED, v] + node[ND_BMU_CREDIT, v]
    if held > node[ND_BMU_PEAK, v]:
        node[ND_BMU_PEAK, v] = held


@kernel_part
def bmu_enqueue(node, pkt, ctx, params, v, p, c):
    """Insert packet p (PK_READY already set) into v's ready queue and wake a sleeping injection context."""
    ready = pkt[PK_READY, p]
    tail = node[ND_QUEUE_TAIL, v]
    pkt[PK_NEXT, p] = -1
    if tail < 0:
        node[ND_QUEUE_HEAD, v] = p
        node[ND_QUEUE_TAIL, v] = p
    elif pkt[PK_READY, tail] <= ready:
        pkt[PK_NEXT, tail] = p
        node[ND_QUEUE_TAIL, v] = p
    else:
        # Rare: a packet that becomes ready before the tail does; walk from the head to its place.
        prev = -1
        cur = node[ND_QUEUE_HEAD, v]
        while pkt[PK_READY, cur] <= ready:
            prev = cur
            cur = pkt[PK_NEXT, cur]
        pkt[PK_NEXT, p] = cur
        if prev < 0:
            node[ND_QUEUE_HEAD, v] = p
        else:
            pkt[PK_NEXT, prev] = p
    node[ND_QUEUE_LEN, v] += 1
    ports = params[PR_PORTS]
    first = v * (ports + params[PR_INJECTORS]) + ports
    for ci in range(first, first + params[PR_INJECTORS]):
        if ctx[CX_PKT, ci] < 0 and ctx[CX_WAKE, ci] == NEVER:
            ctx[CX_WAKE, ci] = max(c, ready)
            break


@kernel_part
def bmu_pop_ready(node, pkt, v, c):
    """Take the head of v's ready queue if it is ready at tick c; -1 if none. Also returns the head's ready tick."""
    head = node[ND_QUEUE_HEAD, v]
    if head < 0:
        return -1, NEVER
    if pkt[PK_READY, head] > c:
        return -1, pkt[PK_READY, head]
    node[ND_QUEUE_HEAD, v] = pkt[PK_NEXT, head]
    if node[ND_QUEUE_HEAD, v] < 0:
        node[ND_QUEUE_TAIL, v] = -1
    pkt[PK_NEXT, head] = -1
    node[ND_QUEUE_LEN, v] -= 1
    return head, pkt[PK_READY, head]
