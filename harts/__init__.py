"""harts: cycle-accurate emulator of the HARTS routing controller and of broadcast algorithms built on it."""

from .kernel_cache import drop_stale_kernel_cache

drop_stale_kernel_cache()
