"""What the benchmarks that count under valgrind (cache_misses.py, profile.py --counter) share.

Numba keys its disk cache by the processor, and a process under valgrind sees another one, for which numba would
compile the kernels again, under valgrind (more than 10 minutes). So every process of such a count, the native
one that compiles first and those valgrind runs, compiles for a generic processor."""

import os
import shutil


def generic_environment() -> dict:
    return {**os.environ, "NUMBA_CPU_NAME": "generic"}


def missing(counted: str) -> bool:
    """Whether valgrind is missing, after saying that nothing is `counted` (the benchmark is then skipped)."""
    if shutil.which("valgrind") is not None:
        return False
    print(f"valgrind is not installed: no {counted} counted (skipped)")
    return True
