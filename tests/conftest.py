"""The edit-test loop's subset: `python -m pytest -m quick` runs, in about a minute, one or more test files
for every part of the machine (networks, both kernels against their closed forms and reference models, the
flit-level NP and faults, send plans, the tools, the docs). The whole suite stays the judge."""

import pytest

QUICK_FILES = {
    "test_network.py", "test_kernel.py", "test_regression.py", "test_engine.py", "test_clock.py", "test_bmu.py",
    "test_flits.py", "test_flit_machine.py", "test_flit_reference.py", "test_flit_limit.py", "test_patterns.py",
    "test_switching.py",
    "test_plan_broadcast.py", "test_send_plans.py", "test_broadcast.py", "test_broadcast_table.py",
    "test_hamiltonian.py", "test_tiling.py", "test_divide_and_conquer.py", "test_dominating_nodes.py",
    "test_packet_trace.py", "test_link_map.py", "test_tools.py", "test_docs.py",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in QUICK_FILES:
            item.add_marker(pytest.mark.quick)
