"""The broadcast procedures the network processor runs (Kandlur & Shin 1991, sections 3 and 4).

BCAST_INIT and the relay procedures of SBCAST, 2-, 3-, 4-, 5- and 6-BCAST are one function deciding on
the broadcast type, as the paper remarks they can be; Algorithm A is one send_packet around a
Hamiltonian cycle. SFBCAST (section 5) is SBCAST's tree with every hop store-and-forward: each
send_packet goes one hop and carries in its tag how many more hops SBCAST's packet would have gone, so
the NP of every node on the way stores and sends it on, while other traffic still cuts through.

Directions are relative to `from_direction`, the direction the copy was travelling: left = from + 1,
right = from - 1 (mod 6). A procedure writes its send_packet calls into `sends`, one row each:
(direction, distance, step, tag).
"""

from .jit import kernel_part

NO_PROCEDURE = 0  # a bare send_packet worm: only RELAY, no relay procedure
SBCAST = 1  # k = 1; 2..6 are k-BCAST with k copies
HAMILTONIAN = 7  # Algorithm A
SFBCAST = 8  # SBCAST's tree with every hop stored and forwarded by the NP

ALGORITHMS = {"sbcast": SBCAST, "2bcast": 2, "3bcast": 3, "4bcast": 4, "5bcast": 5, "6bcast": 6,
              "sfbcast": SFBCAST, "hamiltonian": HAMILTONIAN}
COPIES = {SBCAST: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, SFBCAST: 1, HAMILTONIAN: 1}

TAG_NONE = 0
TAG_A = 1
TAG_B = 2
TAG_C = 3
TAG_D = 4

SEND_DIRECTION = 0
SEND_DISTANCE = 1
SEND_STEP = 2
SEND_TAG = 3


@kernel_part
def _send(sends, count, direction, distance, step, tag):
    sends[count, SEND_DIRECTION] = direction % 6
    sends[count, SEND_DISTANCE] = distance
    sends[count, SEND_STEP] = step
    sends[count, SEND_TAG] = tag
    return count + 1


@kernel_part
def bcast_init(algorithm, n, sends):
    """BCAST_INIT: step-1 packets of distance n-1 in all six directions (Algorithm A: one packet of
    distance 3n(n-1) in direction 0, which visits every node)."""
    if algorithm == HAMILTONIAN:
        return _send(sends, 0, 0, 3 * n * (n - 1), 1, TAG_NONE)
    count = 0
    for direction in range(6):
        if algorithm == SFBCAST:
            count = _send(sends, count, direction, 1, 1, n - 2)
        else:
            count = _send(sends, count, direction, n - 1, 1, TAG_NONE)
    return count


@kernel_part
def relay(algorithm, step, tag, distance, from_direction, n, sends):
    """The relay procedure of `algorithm` for a received copy; returns the number of sends."""
    left = from_direction + 1
    right = from_direction + 5
    count = 0
    if algorithm == HAMILTONIAN or algorithm == NO_PROCEDURE:
        return 0
    if algorithm == SFBCAST:  # tag = hops SBCAST's packet would still go: on one hop, then left at step 1
        if tag != 0:
            count = _send(sends, count, from_direction, 1, step, tag - 1)
            if step == 1:
                count = _send(sends, count, left, 1, 2, tag - 1)
        return count
    if step == 1:
        if algorithm == SBCAST:  # SBCAST_RELAY
            if distance != 0:
                count = _send(sends, count, left, distance, 2, TAG_NONE)
        elif algorithm == 2:  # 2-BCAST
            if distance != 0:
                count = _send(sends, count, left, distance, 2, TAG_NONE)
                count = _send(sends, count, right, distance, 2, TAG_NONE)
            else:
                count = _send(sends, count, right, n - 1, 2, TAG_NONE)
        elif algorithm == 3:  # 3-BCAST
            if distance != 0:
                count = _send(sends, count, left, n - 1, 2, TAG_NONE)
                count = _send(sends, count, right, distance, 2, TAG_NONE)
            else:
                count = _send(sends, count, left, n - 1, 2, TAG_NONE)
                count = _send(sends, count, right, n - 1, 2, TAG_NONE)
        else:  # 6-BCAST lines 4-23; 5- and 4-BCAST are its restrictions (section 4.4)
            if distance == 0:
                # line 5: tag A only in 6-BCAST; line 7-8: excluded in 4-BCAST; line 10: 6-BCAST only
                count = _send(sends, count, left, n - 1, 2, TAG_A if algorithm == 6 else TAG_NONE)
                if algorithm >= 5:
                    count = _send(sends, count, right, n - 1, 2, TAG_B)
                if algorithm == 6:
                    count = _send(sends, count, from_direction, n - 1, 2, TAG_NONE)
            elif distance == n - 2:
                count = _send(sends, count, left, n - 1, 2, TAG_C)
                count = _send(sends, count, right, n - 1, 2, TAG_D)
                count = _send(sends, count, from_direction + 2, 1, 2, TAG_NONE)
                count = _send(sends, count, from_direction + 4, 1, 2, TAG_NONE)
            else:
                count = _send(sends, count, left, n - 1, 2, TAG_NONE)
                count = _send(sends, count, right, n - 1, 2, TAG_NONE)
    elif step == 2 and distance != 0 and algorithm >= 4:  # 6-BCAST lines 24-37: tagged forwarding
        if tag == TAG_A:
            count = _send(sends, count, right, distance, 3, TAG_NONE)
        elif tag == TAG_B:
            count = _send(sends, count, left, distance, 3, TAG_NONE)
        elif tag == TAG_C:
            count = _send(sends, count, left, 1, 3, TAG_NONE)
        elif tag == TAG_D:
            count = _send(sends, count, right, 1, 3, TAG_NONE)
    return count
