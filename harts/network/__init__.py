"""Network topologies for the emulator: HARTS's hexagonal mesh, grids (mesh, torus), hypercubes and the
mesh-hypercube, all described by one ``Topology`` the simulation kernel can read."""

from .build import KINDS, build_topology, node_count, port_count
from .topology import Topology

__all__ = ["KINDS", "Topology", "build_topology", "node_count", "port_count"]
