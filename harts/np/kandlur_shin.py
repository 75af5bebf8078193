"""The NP program of paper 000 (Kandlur & Shin, "Reliable Broadcast Algorithms for HARTS", 1991): the
network processor's side of the RELAY primitive, BCAST_INIT and the relay procedures of SBCAST, 2-, 3-,
4-, 5- and 6-BCAST, SFBCAST (section 5) and Algorithm A (a Hamiltonian cycle), sections 3 and 4.

* RELAY, NP side: a copy that arrives *marked* (the controller's forward reservation failed) is sent on by
  the NP in the direction it was travelling with the distance left, as a new send_packet.
* The relay procedures are one function deciding on the broadcast type, as the paper remarks they can
  be; 5- and 4-BCAST are 6-BCAST's restrictions of section 4.4. Algorithm A is one send_packet of
  distance 3n(n-1) in direction 0. SFBCAST is SBCAST's tree with every hop store-and-forward: each
  send_packet goes one hop and `hops_left` says how many more hops SBCAST's packet would have gone,
  so the NP of every node on the way stores and sends it on, while other traffic still cuts through.
* A Byzantine 'bogus' node forges a distance-1 copy for each of its neighbours per genuine copy.

Directions are relative to the direction a copy was travelling in: left = +1, right = -1 (mod 6). The
header fields: `distance` and `flags` (bit 0: marked), which the microprogram uses, and `algorithm`,
`step` (the paper's broadcast step, 1-3), `tag` (6-BCAST's A-D) and `hops_left` (SFBCAST), which only the
NP reads. The reference model of the trees, harts/reference/kandlur_shin.py, is an independent
transcription of the paper's pseudo-code used to test this one.
"""

import numpy as np

from .kandlur_shin_checks import problems
from .program import (
    E_ARGUMENT,
    E_DIRECTION,
    E_DISTANCE,
    E_KIND,
    E_LENGTH,
    EVENT_DELIVERED,
    EVENT_FORGE,
    EVENT_INITIATE,
    NOTIFY_DELIVERED,
    ROUTE_DIRECTION,
    Program,
    header_field,
    procedure,
    procedure_part,
    send_packet,
    set_field,
)

NO_PROCEDURE = 0  # a bare send_packet worm: only RELAY, no relay procedure
SBCAST = 1  # k = 1; 2..6 are k-BCAST with k copies
HAMILTONIAN = 7  # Algorithm A
SFBCAST = 8

ALGORITHMS = {"sbcast": SBCAST, "2bcast": 2, "3bcast": 3, "4bcast": 4, "5bcast": 5, "6bcast": 6,
              "sfbcast": SFBCAST, "hamiltonian": HAMILTONIAN}
COPIES = {SBCAST: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, SFBCAST: 1, HAMILTONIAN: 1}

TAG_NONE = 0
TAG_A = 1
TAG_B = 2
TAG_C = 3
TAG_D = 4

MARKED = 1  # flags bit: the controller's forward failed, the NP sends the copy on

# the program's header fields, in the order of FIELDS (system.field[i] is the header word of field i)
DISTANCE = 0
FLAGS = 1
ALGORITHM = 2
STEP = 3
TAG = 4
HOPS_LEFT = 5
FIELDS = ("distance", "flags", "algorithm", "step", "tag", "hops_left")


@procedure_part
def _worm(sends, row, system, direction, distance, length, algorithm, step, tag, hops_left):
    """send_packet(direction, distance): a worm teed at every node it passes. Returns row + 1."""
    send_packet(sends, row, ROUTE_DIRECTION, direction % 6, -1, length, NOTIFY_DELIVERED)
    set_field(sends, row, system, DISTANCE, distance)
    set_field(sends, row, system, ALGORITHM, algorithm)
    set_field(sends, row, system, STEP, step)
    set_field(sends, row, system, TAG, tag)
    set_field(sends, row, system, HOPS_LEFT, hops_left)
    return row + 1


@procedure_part
def _bcast_init(sends, system, algorithm, n, length):
    """BCAST_INIT: step-1 packets of distance n-1 in all six directions (Algorithm A: one packet of
    distance 3n(n-1) in direction 0, which visits every node)."""
    if algorithm == HAMILTONIAN:
        return _worm(sends, 0, system, 0, 3 * n * (n - 1), length, algorithm, 1, TAG_NONE, 0)
    count = 0
    for direction in range(6):
        if algorithm == SFBCAST:
            count = _worm(sends, count, system, direction, 1, length, algorithm, 1, TAG_NONE, n - 2)
        else:
            count = _worm(sends, count, system, direction, n - 1, length, algorithm, 1, TAG_NONE, 0)
    return count


@procedure_part
def _relay(sends, count, system, algorithm, step, tag, hops_left, distance, arrived, n, length):
    """The relay procedure of `algorithm` for a copy that arrived travelling in direction `arrived`."""
    left = arrived + 1
    right = arrived + 5
    if algorithm == HAMILTONIAN or algorithm == NO_PROCEDURE:
        return count
    if algorithm == SFBCAST:  # on one hop, then left at step 1, while SBCAST's packet would still go
        if hops_left != 0:
            count = _worm(sends, count, system, arrived, 1, length, algorithm, step, TAG_NONE, hops_left - 1)
            if step == 1:
                count = _worm(sends, count, system, left, 1, length, algorithm, 2, TAG_NONE, hops_left - 1)
        return count
    if step == 1:
        if algorithm == SBCAST:  # SBCAST_RELAY
            if distance != 0:
                count = _worm(sends, count, system, left, distance, length, algorithm, 2, TAG_NONE, 0)
        elif algorithm == 2:  # 2-BCAST
            if distance != 0:
                count = _worm(sends, count, system, left, distance, length, algorithm, 2, TAG_NONE, 0)
                count = _worm(sends, count, system, right, distance, length, algorithm, 2, TAG_NONE, 0)
            else:
                count = _worm(sends, count, system, right, n - 1, length, algorithm, 2, TAG_NONE, 0)
        elif algorithm == 3:  # 3-BCAST
            if distance != 0:
                count = _worm(sends, count, system, left, n - 1, length, algorithm, 2, TAG_NONE, 0)
                count = _worm(sends, count, system, right, distance, length, algorithm, 2, TAG_NONE, 0)
            else:
                count = _worm(sends, count, system, left, n - 1, length, algorithm, 2, TAG_NONE, 0)
                count = _worm(sends, count, system, right, n - 1, length, algorithm, 2, TAG_NONE, 0)
        else:  # 6-BCAST lines 4-23; 5- and 4-BCAST are its restrictions (section 4.4)
            if distance == 0:
                # line 5: tag A only in 6-BCAST; lines 7-8: excluded in 4-BCAST; line 10: 6-BCAST only
                count = _worm(sends, count, system, left, n - 1, length, algorithm, 2,
                              TAG_A if algorithm == 6 else TAG_NONE, 0)
                if algorithm >= 5:
                    count = _worm(sends, count, system, right, n - 1, length, algorithm, 2, TAG_B, 0)
                if algorithm == 6:
                    count = _worm(sends, count, system, arrived, n - 1, length, algorithm, 2, TAG_NONE, 0)
            elif distance == n - 2:
                count = _worm(sends, count, system, left, n - 1, length, algorithm, 2, TAG_C, 0)
                count = _worm(sends, count, system, right, n - 1, length, algorithm, 2, TAG_D, 0)
                count = _worm(sends, count, system, arrived + 2, 1, length, algorithm, 2, TAG_NONE, 0)
                count = _worm(sends, count, system, arrived + 4, 1, length, algorithm, 2, TAG_NONE, 0)
            else:
                count = _worm(sends, count, system, left, n - 1, length, algorithm, 2, TAG_NONE, 0)
                count = _worm(sends, count, system, right, n - 1, length, algorithm, 2, TAG_NONE, 0)
    elif step == 2 and distance != 0 and algorithm >= 4:  # 6-BCAST lines 24-37: tagged forwarding
        if tag == TAG_A:
            count = _worm(sends, count, system, right, distance, length, algorithm, 3, TAG_NONE, 0)
        elif tag == TAG_B:
            count = _worm(sends, count, system, left, distance, length, algorithm, 3, TAG_NONE, 0)
        elif tag == TAG_C:
            count = _worm(sends, count, system, left, 1, length, algorithm, 3, TAG_NONE, 0)
        elif tag == TAG_D:
            count = _worm(sends, count, system, right, 1, length, algorithm, 3, TAG_NONE, 0)
    return count


def _run(event, state, sends, system):
    n = system.params[0]
    length = event[E_LENGTH]
    kind = event[E_KIND]
    if kind == EVENT_INITIATE:
        algorithm = event[E_ARGUMENT]
        if algorithm == NO_PROCEDURE:  # the traffic asks for one send_packet(direction, distance)
            return _worm(sends, 0, system, event[E_DIRECTION], event[E_DISTANCE], length, NO_PROCEDURE, 0,
                         TAG_NONE, 0)
        return _bcast_init(sends, system, algorithm, n, length)
    algorithm = header_field(event, system, ALGORITHM)
    step = header_field(event, system, STEP)
    distance = header_field(event, system, DISTANCE)
    arrived = event[E_DIRECTION]
    if kind == EVENT_FORGE:
        if algorithm == NO_PROCEDURE:
            return 0
        count = 0
        for direction in range(6):
            count = _worm(sends, count, system, direction, 1, length, NO_PROCEDURE, step, TAG_NONE, 0)
        return count
    if kind != EVENT_DELIVERED:
        return 0
    count = 0
    tag = header_field(event, system, TAG)
    hops_left = header_field(event, system, HOPS_LEFT)
    if header_field(event, system, FLAGS) & MARKED != 0 and distance > 0:
        # RELAY's forward failed at the link level: the NP sends the copy on itself.
        count = _worm(sends, 0, system, arrived, distance, length, algorithm, step, tag, hops_left)
    return _relay(sends, count, system, algorithm, step, tag, hops_left, distance, arrived, n, length)


def _parameters(topology) -> np.ndarray:
    """system.params: [n], the hex mesh size (0 on other topologies, where only bare worms make sense)."""
    return np.array([int(topology.shape[0]) if topology.kind == "hex" else 0], dtype=np.int64)


def _check(result) -> list[str]:
    return problems(result, COPIES, MARKED)


PROGRAM = Program(
    name="kandlur_shin",
    description="paper 000: RELAY's NP side, BCAST_INIT, SBCAST, 2..6-BCAST, SFBCAST, Algorithm A",
    procedure=procedure(_run),
    fields=FIELDS,
    parameters=_parameters,
    arguments=ALGORITHMS,
    check=_check,
)
