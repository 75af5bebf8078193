"""harts: cycle-accurate emulator of the HARTS routing controller and its reliable broadcast algorithms."""

from ._kernel_cache import drop_stale_kernel_cache

drop_stale_kernel_cache()
