"""bench/profile.py --counter instructions, mispredictions and misses read callgrind's output: the counts of
the chosen events at each address of code valgrind found in no object (numba's kernels), not a call's inclusive
cost (the line after `calls=`, counted in the callee already), nothing from named objects; and charge addresses
to source lines by the kernel's line table."""

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"

OUTPUT = """# callgrind format
positions: instr line
events: Ir
summary: 1000

ob=/usr/lib/x86_64-linux-gnu/libc.so.6
fl=/build/malloc.c
fn=malloc
0x100 10 50
ob=???
fl=???
fn=0x000000001bb30000
0x1bb30010 0 7
0x1bb30014 0 3
cob=/usr/lib/x86_64-linux-gnu/libc.so.6
cfi=/build/malloc.c
cfn=malloc
calls=2 0x100 10
0x1bb30018 0 60
0x1bb30018 0 1
fn=0x000000001bb40000
0x1bb30010 0 4
ob=/lib/libpython3.11.so
fl=ceval.c
fn=_PyEval_EvalFrameDefault
0x1bb30010 1 200
"""


@pytest.fixture
def profile(monkeypatch):
    # by its path: bench/profile.py shares its module name with the standard library's profiler
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_profile", BENCH / "profile.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_profile", module)
    spec.loader.exec_module(module)
    return module


def test_the_compiled_code_is_the_addresses_of_unnamed_objects_without_inclusive_call_costs(profile, tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(OUTPUT)
    counts, whole = profile.callgrind_counts(path, ("Ir",))
    # by hand: 7 + 4 at 0x...10 (two functions, one object), 3 at 0x...14, 1 at 0x...18 (not the call's 60);
    # libpython's 200 at the same address is not compiled code
    assert counts == {0x1BB30010: 11, 0x1BB30014: 3, 0x1BB30018: 1}
    assert whole == 1000


def test_an_output_without_its_summary_is_refused(profile, tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(OUTPUT.replace("summary: 1000\n", ""))
    with pytest.raises(SystemExit, match="no summary line"):
        profile.callgrind_counts(path, ("Ir",))


BRANCHES = """positions: instr line
events: Ir Bc Bcm Bi Bim
summary: 900 90 9 20 2
ob=???
fl=???
fn=0x0000000000005000
0x5000 0 4 1 1
0x5004 0 3
0x5008 0 2 0 0 1 1
cob=/usr/lib/x86_64-linux-gnu/libc.so.6
cfi=???
cfn=memcpy
calls=1 0x100 0
0x500c 0 50 10 5 2 2
0x500c 0 1 1
"""


def test_mispredictions_add_the_conditional_and_indirect_ones_and_a_line_may_leave_out_its_trailing_zeros(
        profile, tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(BRANCHES)
    counts, whole = profile.callgrind_counts(path, profile.COUNTERS["mispredictions"][1])
    # by hand: Bcm + Bim at each address; 0x5004's line stops after Ir; the call's inclusive 5 + 2 is skipped
    assert counts == {0x5000: 1, 0x5004: 0, 0x5008: 1, 0x500C: 0}
    assert whole == 9 + 2


CACHE = """positions: instr line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 700 300 100 1 40 20 1 6 3
ob=???
fl=???
fn=0x0000000000007000
0x7000 0 5 2 1 0 1 1 0 1 1
0x7004 0 3 1 0 0 1 0 0 0
0x7008 0 2 1 1 1 1 1 1 1
"""


def test_misses_add_the_last_level_read_and_write_misses_of_data(profile, tmp_path):
    path = tmp_path / "callgrind.out"
    path.write_text(CACHE)
    counts, whole = profile.callgrind_counts(path, profile.COUNTERS["misses"][1])
    # by hand: DLmr + DLmw at each address (0x7004's are 0, 0x7008's line leaves out its DLmw); the instruction
    # misses (ILmr) and the L1d's (D1mr, D1mw) are not summed
    assert counts == {0x7000: 2, 0x7004: 0, 0x7008: 1}
    assert whole == 6 + 3


def test_addresses_are_charged_to_the_line_whose_code_holds_them(profile):
    code = {"base": 0x1000, "end": 0x40, "addresses": [0x0, 0x10, 0x30],
            "places": [("/elsewhere/a.py", 3), ("/elsewhere/a.py", 7), ("/elsewhere/b.py", 2)]}
    lines, functions = Counter(), Counter()
    profile.charge([(0x1000, 5), (0x100F, 1), (0x1010, 2), (0x102F, 4), (0x1030, 8), (0x1040, 16), (0x10, 32)],
                   [code], lines, functions, {})
    # 0x1040 is past the code's end and 0x10 before its base: neither is charged
    assert lines == {("/elsewhere/a.py", 3): 6, ("/elsewhere/a.py", 7): 6, ("/elsewhere/b.py", 2): 8}
    assert functions == {"(numba)": 20}  # files outside the repository


def test_the_code_footprint_counts_one_run_by_position_in_the_code_and_lines_by_the_addresses_of_the_run_with_more(
        profile, monkeypatch):
    # the two processes load the same object at different addresses
    more_codes = [{"base": 0x10000, "end": 0x100, "object": "kernel.o"}]
    fewer_codes = [{"base": 0x20000, "end": 0x100, "object": "kernel.o"}]
    more = Counter({0x10000: 10, 0x10004: 10, 0x10040: 5, 0x10080: 1990, 0x10200: 7})
    fewer = Counter({0x20000: 5, 0x20004: 5, 0x20040: 5, 0x20080: 995})
    texts = {0x0: "mov    0x8(%rsp),%rax", 0x4: "add    %rax,%rbx", 0x40: "mov    0x10(%rsp),%rcx",
             0x80: "mov    %rbx,0x10(%rsp)"}
    monkeypatch.setattr(profile, "instruction_texts", lambda obj: texts)
    code = profile.code_footprint(more, more_codes, fewer, fewer_codes)
    # by hand: one run executes 5 + 5 at offsets 0x0 and 0x4 (one line), none at 0x40 (setup only) and 995 at 0x80
    # (another line); 0x10200 is past the code. 99% of 1,005 is 994.95: the line of 0x80 alone holds it. The stack:
    # 0x0 reads it (5), 0x80 writes it (995).
    assert code == {"bytes": 0x100, "lines_executed": 2, "lines_with_99_percent": 1, "stack_share": 1000 / 1005}


def test_the_cut_through_targets_run_the_same_workload(profile, monkeypatch):
    """The runs the profiler samples or counts (its children's work, without perf or valgrind) run, and engine and limit
    make the same packet-hops, as the limit delivers every packet at the engine's cycle."""
    from argparse import Namespace

    from harts.machine.results import Recorder

    monkeypatch.setattr(Recorder, "drain", Recorder.drain)  # the engine's target stamps it; put it back after
    args = Namespace(size=5, load=0.3, cycles=500)
    hops = {}
    for target in ("engine", "limit"):
        run, functions = profile.cut_through_target(args, target)
        started, ended, hops[target] = run()
        assert 0 <= started < ended
        assert functions()
    assert hops["engine"] == hops["limit"] > 0


def test_the_flit_targets_run(profile):
    from argparse import Namespace

    args = Namespace(kind="mesh", side=4, rate=0.1, cycles=500)
    for target in ("engine", "limit"):
        run, functions = profile.flit_target(args, target)
        started, ended, _ = run()
        assert 0 <= started < ended
        assert functions()
