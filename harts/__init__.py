"""harts: cycle-accurate emulator of the HARTS routing controller and of broadcast algorithms built on it.

``harts.load_config(path)`` reads and checks a config; ``Config.with_values`` changes keys of it; ``harts.Simulation(
config)`` (harts.machine.simulation) picks the kernel the config's microprogram switches by and runs it:

    import harts

    config = harts.load_config("booksim2_mesh_8x8")
    for rate in (0.1, 0.2, 0.3):
        result = harts.Simulation(config.with_values({"traffic.synthetic.rate": rate})).run(keep=False)
        print(rate, result.summary()["accepted_flits_per_node_cycle"])
"""

from .kernel_cache import drop_stale_kernel_cache

drop_stale_kernel_cache()

__all__ = ["Config", "Simulation", "load_config"]


def __getattr__(name: str):
    # imported on first use, so that `harts --help` and the package's light modules load no numba
    if name == "Simulation":
        from .machine.simulation import Simulation
        return Simulation
    if name in ("Config", "load_config"):
        from .machine import config
        return getattr(config, name)
    raise AttributeError(f"module 'harts' has no attribute {name!r}")
