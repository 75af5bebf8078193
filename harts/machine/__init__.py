"""The machine: a config, the traffic it runs, the simulation that picks the kernel for its switching, the
results and hop records of a run, and the invariants every run is held to."""
