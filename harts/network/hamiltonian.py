"""Edge-disjoint Hamiltonian cycles (HCs): the gamma/2 undirected HCs of a gamma-regular network in the
class Lambda of Lee & Shin (paper 001, section III), on which the IHC all-to-all broadcast runs. Each
undirected HC, run both ways, gives two directed HCs, so the gamma directed HCs use every directed link
exactly once.

* **C-wrapped hexagonal mesh H_m** (section III-C): the links of one direction form an HC (Kandlur &
  Shin's Algorithm A); directions 0, 1 and 2 give the three.
* **Square torus SQ_m** (section III-B; its Fig. 3 is missing from the text): the staircase. HC 1
  crosses row y on every horizontal link but the one entering column -y (mod m), then goes up from
  column -y-1; HC 2 is the rest: the same pattern with rows and columns exchanged, so it is an HC too.
  Any m >= 3. (`staircase`; verified for m = 3..12 in tests/test_hamiltonian.py.)
* **Hypercube Q_m, any even m** (Theorem 1, after Foregger [11] and Aubert & Schneider [2]). Q_2 is a
  4-cycle in Gray order. If G = A_1 u ... u A_s and H = B_1 u ... u B_t are unions of edge-disjoint HCs,
  the links of G x H are those of the products A_i x B_i for i < t together with
  (A_t u ... u A_s) x B_t, so it is enough to split each piece into HCs:
  * m = 4k: Q_m = Q_2k x Q_2k (low and high address bits), s = t, and every piece is an L x L torus
    (L = 4^k), which the staircase splits into two HCs (Foregger's C_L x C_L).
  * m = 4k + 2: Q_m = Q_(2k+2) x Q_2k, s = t + 1. The pieces are t - 1 tori C_(2^(2k+2)) x C_(2^2k) of
    unequal sides (Kotzig: two HCs) and one (A_t u A_(t+1)) x B_t, which Aubert & Schneider prove splits
    into three HCs. Their proofs are existence proofs by cases; here each such piece is split by
    `switch_to_cycles`: start from its obvious 2-factors (the layers of each A_i and the fibres of B_t)
    and exchange links around alternating 4-cycles until every factor is one cycle (deterministic seed).
    Q_6 and Q_10 take under a second, Q_14 about 90 s, once per process (cached).
  tests/test_hamiltonian.py checks the result with networkx for m = 2, 4, 6, 8, 10 and 12.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .topology import Topology


def hamiltonian_cycles(topology: Topology) -> list[np.ndarray]:
    """gamma/2 undirected edge-disjoint HCs of the network, each as its N nodes in cycle order (the last
    node is a neighbour of the first). ValueError for a network this module has no decomposition for."""
    if topology.kind == "hex":
        return [topology.walk(0, port, np.arange(topology.n_nodes)) for port in range(3)]
    if topology.kind == "torus" and len(topology.shape) == 2 and topology.shape[0] == topology.shape[1]:
        side = int(topology.shape[0])
        order = np.arange(side)
        return [x + side * y for x, y in staircase(order, order)]
    if topology.kind == "hypercube" and int(topology.shape[0]) % 2 == 0:
        return [cycle.copy() for cycle in hypercube_cycles(int(topology.shape[0]))]
    raise ValueError(f"no Hamiltonian decomposition for {topology.name}: built for the hexagonal mesh, the "
                     f"square 2-D torus and the hypercube of even dimension")


def staircase(columns: np.ndarray, rows: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The two HCs of the product C_L x C_L of two cycles of equal length L, given as the cycles' vertices
    in order: each HC as its column and row vertices, visit by visit."""
    side = len(columns)
    step = np.arange(side * side)
    row = step // side
    # HC 1: row y is entered at column -y and crossed left to right, then left upwards from column -y-1
    column = (step % side - row) % side
    first = (columns[column], rows[row])
    # HC 2: the same with rows and columns exchanged
    return first, (columns[row], rows[column])


@lru_cache(maxsize=None)
def hypercube_cycles(m: int) -> tuple[np.ndarray, ...]:
    """m/2 edge-disjoint HCs of Q_m for even m, as node addresses in cycle order."""
    if m == 2:
        return (np.array([0, 1, 3, 2]),)
    low_bits = m // 2 if m % 4 == 0 else m // 2 + 1
    low, high = hypercube_cycles(low_bits), hypercube_cycles(m - low_bits)
    cycles = []
    if m % 4 == 0:
        for a, b in zip(low, high):
            for columns, rows in staircase(a, b):
                cycles.append(columns | (rows << low_bits))
        return tuple(cycles)
    rng = np.random.default_rng(m)
    pieces = [(low[i:i + 1], high[i]) for i in range(len(high) - 1)] + [(low[len(high) - 1:], high[-1])]
    for layers, fibre in pieces:
        factors = _product_factors(layers, fibre)
        for order in switch_to_cycles(factors, rng):
            a, c = np.divmod(order, len(fibre))
            cycles.append(a | (fibre[c] << low_bits))
    return tuple(cycles)


def _product_factors(layers: tuple[np.ndarray, ...], fibre: np.ndarray) -> list[np.ndarray]:
    """The 2-factors of (A_1 u ... u A_s) x C: each A_i's copies in every layer, and C's copies (fibres).
    Vertex (a, c) is a * len(C) + c, a a node of the A's and c a position on C; each factor as the two
    neighbours of every vertex."""
    n, p = len(layers[0]), len(fibre)
    a, c = np.divmod(np.arange(n * p), p)
    factors = []
    for cycle in layers:
        place = np.empty(n, dtype=np.int64)
        place[cycle] = np.arange(n)
        before, after = cycle[(place[a] - 1) % n], cycle[(place[a] + 1) % n]
        factors.append(np.stack([before * p + c, after * p + c], axis=1))
    factors.append(np.stack([a * p + (c - 1) % p, a * p + (c + 1) % p], axis=1))
    return factors


def switch_to_cycles(factors: list[np.ndarray], rng: np.random.Generator, patience: int = 2_000_000) -> list[np.ndarray]:
    """Exchange links between 2-factors around alternating 4-cycles until each is one HC; returns each as its
    vertices in cycle order.

    For factors X, Y and a 4-cycle u-v-w-x with uv, wx in X and vw, xu in Y, swapping the two pairs keeps
    both 2-factors. In each the two removed links either lie on different cycles, which the swap then
    joins, or on one, which it keeps whole or cuts in two according to their order around it. A swap is
    taken when it lowers the total number of cycles, or, to leave a plateau, with probability 0.3 when it
    keeps it; one that raises it never is."""
    factors = [f.copy() for f in factors]
    labels = [_cycles(f) for f in factors]
    for _ in range(patience):
        counts = [label[2] for label in labels]
        if max(counts) == 1:
            return [_order(f) for f in factors]
        X = int(rng.choice([i for i, count in enumerate(counts) if count > 1]))
        cycle, _, _, length = labels[X]
        # a link of a cycle other than X's longest: the one a joining swap is most likely to find
        u = int(rng.choice(np.nonzero(cycle != np.argmax(length))[0]))
        v = int(factors[X][u, rng.integers(2)])
        for Y in rng.permutation([i for i in range(len(factors)) if i != X]):
            swap = _switch(factors[X], factors[Y], labels[X], labels[Y], u, v, rng)
            if swap is not None:
                w, x = swap
                # X: uv, wx become vw, xu; Y: vw, xu become uv, wx
                for factor, changes in ((factors[X], ((u, v, x), (v, u, w), (w, x, v), (x, w, u))),
                                        (factors[Y], ((v, w, u), (w, v, x), (x, u, w), (u, x, v)))):
                    for vertex, lost, gained in changes:
                        row = factor[vertex]
                        row[0 if row[0] == lost else 1] = gained
                labels[X], labels[Y] = _cycles(factors[X]), _cycles(factors[Y])
                break
    raise RuntimeError(f"no Hamiltonian decomposition found in {patience} tries")


def _switch(fx, fy, lx, ly, u, v, rng):
    """A 4-cycle u-v-w-x alternating X (uv, wx) and Y (vw, xu) whose swap is acceptable, or None."""
    for w in fy[v]:
        for x in fx[w]:
            if x in (u, v) or w == u or u not in fy[x]:
                continue
            change = _cycle_change(lx, u, v, w, x) + _cycle_change(ly, v, w, x, u)
            if change < 0 or (change == 0 and rng.random() < 0.3):
                return int(w), int(x)
    return None


def _cycle_change(label, p1, p2, p3, p4) -> int:
    """Change in a 2-factor's number of cycles when links p1p2 and p3p4 give way to p2p3 and p4p1."""
    cycle, position, _, length = label
    if cycle[p1] != cycle[p3]:
        return -1
    size = length[cycle[p1]]
    step = 1 if position[p2] == (position[p1] + 1) % size else -1
    # walking on from p2, away from p1: reaching p3 before p4 cuts the cycle in two
    ahead_p3, ahead_p4 = ((position[[p3, p4]] - position[p2]) * step) % size
    return 1 if ahead_p3 < ahead_p4 else 0


def _cycles(factor: np.ndarray):
    """Each vertex's cycle and position around it, the number of cycles, and their lengths."""
    n = len(factor)
    cycle = np.full(n, -1, dtype=np.int64)
    position = np.zeros(n, dtype=np.int64)
    lengths = []
    for start in range(n):
        if cycle[start] >= 0:
            continue
        previous, vertex, i = -1, start, 0
        while cycle[vertex] < 0:
            cycle[vertex], position[vertex] = len(lengths), i
            i += 1
            a, b = factor[vertex]
            previous, vertex = vertex, (b if a == previous else a)
        lengths.append(i)
    return cycle, position, len(lengths), np.array(lengths)


def _order(factor: np.ndarray) -> np.ndarray:
    """The vertices of a 2-factor that is one cycle, in cycle order."""
    cycle, position, _, _ = _cycles(factor)
    order = np.empty(len(factor), dtype=np.int64)
    order[position] = np.arange(len(factor))
    return order


def directed_cycles(topology: Topology) -> list[np.ndarray]:
    """The gamma directed HCs: each undirected HC forwards, then each backwards (same starting node)."""
    cycles = hamiltonian_cycles(topology)
    return cycles + [np.concatenate([c[:1], c[:0:-1]]) for c in cycles]


def cycle_ports(topology: Topology, cycle: np.ndarray) -> np.ndarray:
    """For each node of a directed HC, in the HC's order, the port through which it reaches the next."""
    following = np.roll(cycle, -1)
    hits = topology.neighbours[cycle] == following[:, None]
    if not hits.any(axis=1).all():
        raise ValueError(f"not a cycle of {topology.name}: a step joins nodes that are not neighbours")
    return hits.argmax(axis=1)
