"""Paper 002 (Al-Dubai, Ould-Khaoua & Mackenzie 2002): the PCP broadcast against RD, EDN and NP-D, Section 5's
Figs 4-6, on the flit-level controller with our T3D mapping."""
