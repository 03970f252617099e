"""pytest setup for graft's Python suites: every passing test must end with the CPU allocator
holding no more bytes than when it started (the Python twin of the C++ suites' leak check; see
docs/notes/testing.md). A failed test is not checked: its traceback keeps its tensors alive."""
import gc

import pytest

import graft


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.graft_call_failed = report.failed


@pytest.fixture(autouse=True)
def _no_leaked_memory(request):
    gc.collect()
    before = graft._C._cpu_memory_allocated()
    yield
    if getattr(request.node, "graft_call_failed", True) or "allow_leak" in request.keywords:
        return
    gc.collect()
    after = graft._C._cpu_memory_allocated()
    assert after <= before, f"{request.node.name} leaked {after - before} bytes of graft memory"


def pytest_collection_finish(session):
    # Everything imported so far (pytest, numpy, torch for the parity tier) lives for the whole
    # session: move it out of the collector's way so that the per-test gc.collect() is cheap.
    gc.collect()
    gc.freeze()


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_leak: the test keeps graft memory alive on purpose")
