"""Output files that appear whole or not at all: each is written to a temporary file beside it and renamed over
it once complete, so a run that fails or is interrupted half-way leaves no partial CSV, JSON, PNG or VCD (and an
older file of the same name stays as it was)."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary path beside `path` to write; renamed to `path` when the block ends normally, removed when it
    raises (Ctrl-C too). The temporary name keeps the suffix, so matplotlib picks the same format by it."""
    path = Path(path)
    temporary = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.partial{path.suffix}")
    # created here (O_EXCL: a name no one else holds), with the mode a plain open would give under the umask
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    with replacing(path) as temporary:
        temporary.write_text(text)


def save_figure(figure, path: str | Path, **options) -> None:
    """matplotlib's figure.savefig(path, **options), whole or not at all."""
    with replacing(path) as temporary:
        figure.savefig(temporary, **options)
