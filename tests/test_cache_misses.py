"""bench/cache_misses.py reads cachegrind's output: the whole process's counts from its summary line, the compiled
code's from the lines of functions valgrind cannot name in files it cannot name (numba's kernels), and nothing
from named functions or named files, whatever their order in the file."""

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

OUTPUT = """desc: I1 cache:         32768 B, 64 B, 8-way associative
cmd: python bench/cache_misses.py --child engine 9 0.1 50000 1
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=???
fn=???
0 10 0 0 4 1 1 2 1 1
fn=llvm::BitstreamCursor::readRecord
0 100 0 0 40 9 9 20 9 9
fl=/tmp/python-build/Python/ceval.c
fn=???
512 1000 0 0 400 30 30 200 30 30
fl=???
fn=???
0 5 0 0 2 1 0 1 0 0
summary: 1115 0 0 446 41 40 223 40 40
"""


@pytest.fixture
def cache_misses(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import cache_misses

    return cache_misses


def test_the_compiled_code_is_the_unnamed_functions_of_unnamed_files(cache_misses, tmp_path):
    path = tmp_path / "cachegrind.out"
    path.write_text(OUTPUT)
    counts = cache_misses._counts(path)
    # by hand: the two '???' function blocks in '???' files, 10 + 5 instructions and so on
    assert counts["compiled_code"] == {
        "instructions": {"all": 15},
        "references": {"reads": 6, "writes": 3, "all": 9},
        "l1_misses": {"reads": 2, "writes": 1, "all": 3},
        "last_level_misses": {"reads": 1, "writes": 1, "all": 2},
    }
    assert counts["process"] == {
        "instructions": {"all": 1115},
        "references": {"reads": 446, "writes": 223, "all": 669},
        "l1_misses": {"reads": 41, "writes": 40, "all": 81},
        "last_level_misses": {"reads": 40, "writes": 40, "all": 80},
    }


def test_an_output_without_its_summary_is_refused(cache_misses, tmp_path):
    path = tmp_path / "cachegrind.out"
    path.write_text(OUTPUT.rsplit("summary", 1)[0])
    with pytest.raises(SystemExit, match="no summary line"):
        cache_misses._counts(path)
