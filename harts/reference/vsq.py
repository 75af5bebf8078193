"""Functional model of a VSQ reliable broadcast on the square torus SQ_m (paper 001, section V-C), whose
pattern (Fig. 9) is missing from the text: this one is designed here and checked by `check`.

The source sends a packet in each of the four directions; each spans a tree, the same pattern turned by
0, 90, 180 and 270 degrees. The pattern of the east tree, with h = (m - 1) / 2 and offsets mod m:
  1. the spine: east along row 0, m - 1 hops, teed at every node;
  2. from each spine node in columns 1..h: north h hops and south h hops (a new packet each);
  3. from each of column h's branch nodes: east h hops, to columns h+1..m-1; from each of column 1's:
     west 1 hop, to column 0 (new packets).
So every path has at most 3 packets (T), and straight runs cut through. For odd m this gives every node
4 copies over internally node-disjoint paths, and no directed link carries packets of two trees (the
paper's "interference"); for even m the antipodal row and column make two trees meet, and no pattern of
this family avoids it (tried: both halvings, either way round the middle row), so VSQ is built for odd m.
"""

from __future__ import annotations

from itertools import combinations

MOVES = {"E": (1, 0), "N": (0, 1), "W": (-1, 0), "S": (0, -1)}
TURN = {"E": "N", "N": "W", "W": "S", "S": "E"}  # 90 degrees counter-clockwise


def east_legs(m: int, a: int, b: int) -> list[tuple[str, int]]:
    """The east tree's path from (0, 0) to offset (a, b) as legs (direction, hops); each leg is a packet."""
    h = (m - 1) // 2
    a, b = a % m, b % m
    if b == 0:
        return [("E", a)]
    vertical = ("N", b) if b <= h else ("S", m - b)
    if a == 0:
        return [("E", 1), vertical, ("W", 1)]
    if a <= h:
        return [("E", a), vertical]
    return [("E", h), vertical, ("E", a - h)]


def legs(m: int, tree: int, a: int, b: int) -> list[tuple[str, int]]:
    """Tree `tree` (0 east, 1 north, 2 west, 3 south): the east pattern turned `tree` times."""
    x, y = a, b
    for _ in range(tree):  # turn the destination back into the east tree's frame
        x, y = y, -x
    out = east_legs(m, x, y)
    for _ in range(tree):
        out = [(TURN[d], k) for d, k in out]
    return out


def walk(m: int, path: list[tuple[str, int]], source=(0, 0)) -> list[tuple[tuple[int, int], str]]:
    """The (node entered, direction) of every hop of a path."""
    (x, y), hops = source, []
    for direction, k in path:
        dx, dy = MOVES[direction]
        for _ in range(k):
            x, y = (x + dx) % m, (y + dy) % m
            hops.append(((x, y), direction))
    return hops


def check(m: int) -> list[str]:
    """What is wrong with the pattern on SQ_m (empty: nothing): each path ends at its destination, each
    tree enters every node by one link, the four paths to a node share no inner node, and no directed link
    is used by two trees."""
    problems = []
    nodes = [(a, b) for a in range(m) for b in range(m) if (a, b) != (0, 0)]
    links_of_tree = []
    for tree in range(4):
        entered, links = {}, set()
        for dest in nodes:
            hops = walk(m, legs(m, tree, *dest))
            if hops[-1][0] != dest:
                problems.append(f"tree {tree}: the path to {dest} ends at {hops[-1][0]}")
            at = (0, 0)
            for node, direction in hops:
                link = (at, direction)
                if entered.setdefault(node, link) != link:
                    problems.append(f"tree {tree}: {node} entered twice")
                links.add(link)
                at = node
        links_of_tree.append(links)
    for dest in nodes:
        inner = [{node for node, _ in walk(m, legs(m, tree, *dest))[:-1]} for tree in range(4)]
        for i, j in combinations(range(4), 2):
            if inner[i] & inner[j]:
                problems.append(f"the paths to {dest} of trees {i} and {j} share {sorted(inner[i] & inner[j])}")
    for i, j in combinations(range(4), 2):
        if links_of_tree[i] & links_of_tree[j]:
            problems.append(f"trees {i} and {j} both use {len(links_of_tree[i] & links_of_tree[j])} links")
    return problems


def slowest(m: int, S, r, d, length: int):
    """The best-case latency of one VSQ broadcast: the slowest copy's T(S + rM) + Cd."""
    return max(len(p) * (S + r * length) + (sum(k for _, k in p) - len(p)) * d
               for p in (east_legs(m, a, b) for a in range(m) for b in range(m) if (a, b) != (0, 0)))


def longest(m: int) -> int:
    """Hops on the longest path of one VSQ broadcast: what the worst case stores and forwards."""
    return max(sum(k for _, k in east_legs(m, a, b)) for a in range(m) for b in range(m))
