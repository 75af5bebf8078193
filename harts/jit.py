"""How kernel code is compiled.

The kernel never allocates, so it is compiled without numba's reference-counting runtime (``_nrt=False``):
with it, every call and every inlined alias of an array argument costs atomic increments and decrements,
which measured as two thirds of the run time. Every piece of the kernel is also inlined into the clock
loop at numba's IR level (about 1.5x faster again; the price is a one-time compilation of ~12 s, cached
on disk).
"""

from numba import njit

kernel_part = njit(cache=True, inline="always", _nrt=False)
kernel_entry = njit(cache=True, _nrt=False)
