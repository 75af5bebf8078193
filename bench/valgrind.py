"""What the benchmarks that count under valgrind (cache_misses.py, profile.py --counter) share.

Numba keys its disk cache by the processor, and a process under valgrind sees another one, for which numba would
compile the kernels again, under valgrind (more than 10 minutes). So every process of such a count, the native
one that compiles first and those valgrind runs, compiles for a generic processor."""

import os
import shutil

# the caches valgrind simulates, all with 64-byte lines: the L1d of the AMD EPYC these counts were first made on (32 KiB,
# 8-way) and, by default, a 1 MiB 16-way last level (twice one of its cores' L2), kept so that counts compare across
# hosts
L1_BYTES, L1_WAYS = 32768, 8
LAST_LEVEL_BYTES, LAST_LEVEL_WAYS = 1 << 20, 16


def cache_options(l1: int = L1_BYTES, last_level: int = LAST_LEVEL_BYTES) -> list[str]:
    """valgrind's options for simulating those caches (cachegrind's and callgrind's alike)."""
    return ["--cache-sim=yes", f"--D1={l1},{L1_WAYS},64", f"--LL={last_level},{LAST_LEVEL_WAYS},64"]


def generic_environment() -> dict:
    return {**os.environ, "NUMBA_CPU_NAME": "generic"}


def missing(counted: str) -> bool:
    """Whether valgrind is missing, after saying that nothing is `counted` (the benchmark is then skipped)."""
    if shutil.which("valgrind") is not None:
        return False
    print(f"valgrind is not installed: no {counted} counted (skipped)")
    return True
