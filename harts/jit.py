"""How kernel code is compiled.

The kernel never allocates, so it is compiled without numba's reference-counting runtime (``_nrt=False``):
with it, every call and every alias of an array argument costs atomic increments and decrements.

The state travels as named tuples of arrays, which a call passes by value (hundreds of bytes), so the
hot path is inlined into the clock loop at numba's IR level (``kernel_part``; measured about 2.4x faster
than calls). Inlining copies a function into every call site, and numba's compile time grows with the
copies, so the large parts each have one call site, and rare paths (the clock's overflow heap, NP
program plumbing, the hop log's writers) stay plain calls (``kernel_call``). Inlined, the hop log's
writers, which run only when a tool asks for hop records, slowed the run without them by about 2%.
"""

from numba import njit

kernel_part = njit(cache=True, forceinline=True, _nrt=False)
kernel_call = njit(cache=True, _nrt=False)
kernel_entry = njit(cache=True, _nrt=False)
