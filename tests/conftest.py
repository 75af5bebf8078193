"""The edit-test loop's subset: `python -m pytest -m quick` runs, in about a minute, one or more test files
for every part of the machine (networks, both kernels against their closed forms and reference models, the
flit-level NP and faults, send plans, the tools, the docs). The whole suite stays the judge.

The suite runs in one process per core (pytest-xdist, pyproject.toml's addopts), a test file to a process.
Each process has both kernels before its first test, so that no test sees a first compilation (several check
that a command prints one line and nothing else)."""

import fcntl

import pytest

QUICK_FILES = {
    "test_network.py", "test_kernel.py", "test_regression.py", "test_engine.py", "test_clock.py", "test_bmu.py",
    "test_flits.py", "test_flit_machine.py", "test_flit_reference.py", "test_flit_limit.py", "test_patterns.py",
    "test_switching.py", "test_observations.py", "test_statistics.py",
    "test_plan_broadcast.py", "test_send_plans.py", "test_broadcast.py", "test_broadcast_table.py",
    "test_hamiltonian.py", "test_tiling.py", "test_divide_and_conquer.py", "test_dominating_nodes.py",
    "test_packet_trace.py", "test_link_map.py", "test_tools.py", "test_docs.py",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in QUICK_FILES:
            item.add_marker(pytest.mark.quick)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels(tmp_path_factory, worker_id):
    """Both kernels compiled, or loaded from numba's disk cache. One process compiles a kernel while the others
    wait for it and then load it; the processes take the two kernels in opposite orders, so in a fresh clone
    the two compilations run side by side."""
    from harts.controller.engine import compiled_kernel
    from harts.controller.flits.kernel import compiled_flit_kernel

    kernels = [("cut-through", compiled_kernel), ("flit", compiled_flit_kernel)]
    if worker_id != "master" and int(worker_id.removeprefix("gw")) % 2:
        kernels.reverse()
    shared = tmp_path_factory.getbasetemp().parent  # the same folder for every process of this session
    for name, compiled in kernels:
        with open(shared / f"{name}-kernel.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            compiled()
