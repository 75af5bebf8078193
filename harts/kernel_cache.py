"""Keep numba's on-disk cache honest across edits of the kernel's source files.

numba keys a cached function on its own file only, so a kernel calling functions from other modules
(the controller's parts, the NP processor, procedure helpers) would keep running stale machine code
after one of them changes. Every source file that compiled code depends on is hashed together, and all
of the package's cached machine code is dropped when the hash changes.
"""

import hashlib
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_COMPILED_SOURCES = ("jit.py", "controller/*.py", "controller/flits/*.py", "np/*.py", "network/*.py",
                     "faults/injection.py")


def kernel_is_cached(folder: str, function: str) -> bool:
    """Whether a compiled kernel (`function` as numba names it, module.name, in the package's `folder`) is on
    disk; if not, the first run compiles it, which takes a while."""
    return any((_PACKAGE / folder / "__pycache__").glob(f"{function}-*.nbi"))


def drop_stale_kernel_cache() -> None:
    digest = hashlib.sha256()
    for pattern in _COMPILED_SOURCES:
        for path in sorted(_PACKAGE.glob(pattern)):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    stamp = _PACKAGE / "__pycache__" / "kernel-source.sha256"
    current = digest.hexdigest()
    try:
        if stamp.read_text() == current:
            return
    except OSError:
        pass
    try:
        for cache in _PACKAGE.glob("**/__pycache__"):
            for stale in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                stale.unlink()
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(current)
    except OSError:
        pass  # a read-only install simply recompiles
