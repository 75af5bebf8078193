"""Tables laid out on 64-byte cache lines, for the rows both kernels read at random: a row that starts on a line
and takes whole lines is read from as few lines as its bytes allow, where a row that straddles a line boundary
costs one more miss on a network too large for the cache."""

import numpy as np

CACHE_LINE = 64  # bytes


def line_columns(columns: int, dtype=np.int64) -> int:
    """The columns a row of `columns` (at least one) of `dtype` takes in a line_table: whole cache lines."""
    per_line = CACHE_LINE // np.dtype(dtype).itemsize
    return -(-max(columns, 1) // per_line) * per_line


def line_aligned(shape: tuple[int, ...], dtype=np.int64) -> np.ndarray:
    """An array of zeros whose first element starts a cache line, written now (no first-touch page faults inside
    a run); each row of a table whose rows are whole lines then takes its own lines."""
    count = int(np.prod(shape))
    size = np.dtype(dtype).itemsize
    raw = np.full(count + CACHE_LINE // size, 0, dtype)
    start = (-raw.ctypes.data % CACHE_LINE) // size
    return raw[start:start + count].reshape(shape)


def line_table(rows: int, columns: int, dtype=np.int64) -> np.ndarray:
    """A zeroed table whose every row starts on a cache line: its columns rounded up to whole lines. A row of up to
    8 int64 is then one line, where rows of 5 (E-n's headers) would straddle two in every other row."""
    return line_aligned((rows, line_columns(columns, dtype)), dtype)
