"""Functional reference model of the broadcast algorithms: which node receives which copy, over which
path, after how many transmissions and cut-throughs. Pure Python, transcribed procedure by procedure
from the paper's pseudo-code and independent of the engine (it shares no code with harts.relay or the
kernel), so the two can be tested against each other.

A send_packet(direction, distance) from node s is received, teed by RELAY, by the `distance` nodes
s + direction, s + 2 direction, ...; the copy at the i-th of them carries distance - i, has been
transmitted once more than the copy it was sent from and has cut through i - 1 more nodes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Send:
    direction: int
    distance: int
    step: int
    tag: str | None = None


@dataclass(frozen=True)
class Copy:
    node: int
    path: tuple[int, ...]  # from the source to `node`, both included
    transmissions: int  # send_packets on the way (store-and-forward restarts + 1)
    cut_throughs: int  # nodes passed without being stored
    step: int
    tag: str | None
    distance: int  # the distance field it arrived with


# ---- the procedures, as printed ------------------------------------------------------------------

def bcast_init(n: int) -> list[Send]:
    return [Send(d, n - 1, 1) for d in range(6)]


def sbcast_relay(copy: Copy, frm: int, n: int) -> list[Send]:
    if copy.step == 1 and copy.distance != 0:
        return [Send((frm + 1) % 6, copy.distance, 2)]
    return []


def bcast2_relay(copy: Copy, frm: int, n: int) -> list[Send]:
    if copy.step != 1:
        return []
    if copy.distance != 0:
        return [Send((frm + 1) % 6, copy.distance, 2), Send((frm - 1) % 6, copy.distance, 2)]
    return [Send((frm - 1) % 6, n - 1, 2)]


def bcast3_relay(copy: Copy, frm: int, n: int) -> list[Send]:
    if copy.step != 1:
        return []
    if copy.distance != 0:
        return [Send((frm + 1) % 6, n - 1, 2), Send((frm - 1) % 6, copy.distance, 2)]
    return [Send((frm + 1) % 6, n - 1, 2), Send((frm - 1) % 6, n - 1, 2)]


def bcast6_relay(copy: Copy, frm: int, n: int, k: int = 6) -> list[Send]:
    """6-BCAST lines 0-38; k = 5 or 4 applies the restrictions of section 4.4."""
    sends = []
    if copy.step == 1:
        if copy.distance == 0:
            sends.append(Send((frm + 1) % 6, n - 1, 2, "A" if k == 6 else None))  # lines 5-6
            if k != 4:
                sends.append(Send((frm - 1) % 6, n - 1, 2, "B"))  # lines 7-8
            if k == 6:
                sends.append(Send(frm, n - 1, 2, None))  # lines 9-10
        elif copy.distance == n - 2:
            sends.append(Send((frm + 1) % 6, n - 1, 2, "C"))  # lines 12-13
            sends.append(Send((frm - 1) % 6, n - 1, 2, "D"))  # lines 14-15
            sends.append(Send((frm + 2) % 6, 1, 2, None))  # lines 16-17
            sends.append(Send((frm - 2) % 6, 1, 2, None))  # line 18
        else:
            sends.append(Send((frm + 1) % 6, n - 1, 2, None))  # lines 20-21
            sends.append(Send((frm - 1) % 6, n - 1, 2, None))  # line 22
    elif copy.step == 2 and copy.distance != 0:
        if copy.tag == "A":
            sends.append(Send((frm - 1) % 6, copy.distance, 3))  # line 28
        elif copy.tag == "B":
            sends.append(Send((frm + 1) % 6, copy.distance, 3))  # line 30
        elif copy.tag == "C":
            sends.append(Send((frm + 1) % 6, 1, 3))  # line 32
        elif copy.tag == "D":
            sends.append(Send((frm - 1) % 6, 1, 3))  # line 34
    return sends


RELAYS = {
    "sbcast": sbcast_relay,
    "2bcast": bcast2_relay,
    "3bcast": bcast3_relay,
    "4bcast": lambda copy, frm, n: bcast6_relay(copy, frm, n, k=4),
    "5bcast": lambda copy, frm, n: bcast6_relay(copy, frm, n, k=5),
    "6bcast": bcast6_relay,
}


def neighbour(node: int, direction: int, n: int) -> int:
    """The paper's definition: the six neighbours of s are s+1, s+3n-1, s+3n-2 and their opposites."""
    steps = [1, 3 * n - 1, 3 * n - 2, -1, -(3 * n - 1), -(3 * n - 2)]
    return (node + steps[direction]) % (3 * n * (n - 1) + 1)


def broadcast_copies(algorithm: str, n: int, source: int = 0) -> list[Copy]:
    """Every copy a broadcast delivers on an idle network, with its path and its T and C."""
    if algorithm == "hamiltonian":
        initial = [Send(0, 3 * n * (n - 1), 1)]
        relay = None
    else:
        initial = bcast_init(n)
        relay = RELAYS[algorithm]
    copies: list[Copy] = []
    # (node sending, the copy it sends from: path, transmissions, cut-throughs so far, the send)
    pending = [(source, (source,), 0, 0, send) for send in initial]
    while pending:
        sender, path, transmissions, cuts, send = pending.pop(0)
        node = sender
        for i in range(1, send.distance + 1):
            node = neighbour(node, send.direction, n)
            path = path + (node,)
            copy = Copy(node, path, transmissions + 1, cuts + i - 1, send.step, send.tag, send.distance - i)
            copies.append(copy)
            if relay is not None:
                for forwarded in relay(copy, send.direction, n):
                    pending.append((node, path, copy.transmissions, copy.cut_throughs, forwarded))
    return copies


def best_case_latency(copies: list[Copy], S, r, d, length: int):
    """The paper's best case: the slowest copy's T(S + rM) + C d."""
    return max(c.transmissions * (S + r * length) + c.cut_throughs * d for c in copies)
