"""What faults do to a transmission, inside the kernel: a dead link, or a crashed or dropping node at its
far end, swallows what is sent on it; an altering Byzantine node alters the value of what it sends; a
link damages a payload with a probability (corruption), drawn from a small generator of the kernel's
own, seeded by run.seed. The fault sets themselves are made in fault_set.py."""

from ..controller.records import (
    DROP_BYZANTINE_NODE,
    DROP_CRASHED_NODE,
    DROP_DEAD_LINK,
    FAULT_ALTER,
    FAULT_CRASH,
    FAULT_DROP,
    VALUE_ALTERED,
)
from ..controller.state import (
    ND_FAULT,
    PK_CORRUPT,
    PK_VALUE,
    PR_CORRUPTION_PER_MILLION,
    ST_CORRUPTED,
    ST_RANDOM,
    TX_DEAD,
)
from ..jit import kernel_part


@kernel_part
def lost_on_arrival(tx, node, t, u):
    """DROP_* if a packet sent by transmitter t never reaches a working receiver at node u, else 0."""
    if tx[t, TX_DEAD] != 0:
        return DROP_DEAD_LINK
    if node[u, ND_FAULT] == FAULT_CRASH:
        return DROP_CRASHED_NODE
    if node[u, ND_FAULT] == FAULT_DROP:
        return DROP_BYZANTINE_NODE
    return 0


@kernel_part
def damage(node, pk, stats, params, v, p):
    """What node v's faults and its link do to packet p on its way out."""
    if node[v, ND_FAULT] == FAULT_ALTER:
        pk[p, PK_VALUE] = VALUE_ALTERED
    if params[PR_CORRUPTION_PER_MILLION] > 0 and _random(stats) % 1000000 < params[PR_CORRUPTION_PER_MILLION]:
        pk[p, PK_CORRUPT] = 1
        stats[ST_CORRUPTED] += 1


@kernel_part
def _random(stats):
    """xorshift64*: a small deterministic generator whose state lives in stats[ST_RANDOM]."""
    x = stats[ST_RANDOM]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    stats[ST_RANDOM] = x
    return (x * 2685821657736338717) >> 33 & 0x7FFFFFFF
