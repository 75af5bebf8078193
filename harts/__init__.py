"""harts: cycle-accurate emulator of the HARTS routing controller and of broadcast algorithms built on it.

``harts.Simulation(config)`` is the front door (harts.machine.simulation): it picks the kernel the config's
microprogram switches by and runs traffic on it."""

from .kernel_cache import drop_stale_kernel_cache

drop_stale_kernel_cache()


def __getattr__(name: str):
    # imported on first use, so that `harts --help` and the package's light modules load no numba
    if name == "Simulation":
        from .machine.simulation import Simulation
        return Simulation
    raise AttributeError(f"module 'harts' has no attribute {name!r}")
