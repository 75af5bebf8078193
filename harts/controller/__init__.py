"""The routing controller: receivers running the microprogram, transmitters, links, the time-sliced bus,
the BMU, the packet pool, and the clock that drives them (the numba kernel)."""
