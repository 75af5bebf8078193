"""Keep numba's on-disk kernel cache honest across edits of the kernel's source files.

numba keys a cached function on its own file only, so a kernel calling functions from another module
would keep running stale machine code after that module changes. The kernel modules are hashed
together and every cached kernel is dropped when the hash changes.
"""

import hashlib
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
KERNEL_MODULES = ("jit", "state", "isa", "bmu", "link", "transmitter", "relay", "network_processor", "receiver",
                  "engine")


def kernel_is_cached() -> bool:
    """Whether a compiled clock loop is on disk (if not, the first run compiles it, which takes a while)."""
    return any((_PACKAGE / "__pycache__").glob("engine.run_engine-*.nbi"))


def drop_stale_kernel_cache() -> None:
    digest = hashlib.sha256()
    for name in KERNEL_MODULES:
        digest.update((_PACKAGE / f"{name}.py").read_bytes())
    cache = _PACKAGE / "__pycache__"
    stamp = cache / "kernel-source.sha256"
    current = digest.hexdigest()
    try:
        if stamp.read_text() == current:
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for stale in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            stale.unlink()
        stamp.write_text(current)
    except OSError:
        pass  # a read-only install simply recompiles
