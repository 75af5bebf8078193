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
* **Hypercube Q_m, m a power of two** (Theorem 1's even case, after Foregger [11]: C_L x C_L decomposes
  into 2 HCs): Q_2 is a 4-cycle in Gray order; Q_2k = Q_k x Q_k (low and high k address bits), and the
  product of the i-th HCs of the two halves is an L x L torus (L = 2^k), which the staircase splits into
  two HCs. The k/2 products use disjoint links, so Q_2k gets k HCs. Other even m need Theorem 1's odd
  case (Aubert & Schneider's decomposition of a product of three cycles [2]), not built here.
"""

from __future__ import annotations

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
    if topology.kind == "hypercube":
        m = int(topology.shape[0])
        if m >= 2 and m & (m - 1) == 0:
            return hypercube_cycles(m)
    raise ValueError(f"no Hamiltonian decomposition for {topology.name}: built for the hexagonal mesh, the "
                     f"square 2-D torus and the hypercube of dimension 2, 4, 8, 16, ...")


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


def hypercube_cycles(m: int) -> list[np.ndarray]:
    """m/2 edge-disjoint HCs of Q_m for m a power of two, as node addresses in cycle order."""
    if m == 2:
        return [np.array([0, 1, 3, 2])]
    half = m // 2
    low = hypercube_cycles(half)
    cycles = []
    for a, b in zip(low, low):
        for columns, rows in staircase(a, b):
            cycles.append(columns | (rows << half))
    return cycles


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
