"""Paper 003 (Al-Mahadeen & Omari): the all-port broadcast on the mesh-hypercube MH(m, n), run on the flit-level
controller: the MH(9,8) example, steps against size, and what the shared links of n >= 16 cost."""
