"""pytest setup for graft's Python suites: every test must end with the CPU allocator back
where it started (the Python twin of the C++ suites' leak check; see docs/notes/testing.md)."""
import gc

import pytest

import graft


@pytest.fixture(autouse=True)
def _no_leaked_memory(request):
    gc.collect()
    before = graft._C._cpu_memory_allocated()
    yield
    gc.collect()
    after = graft._C._cpu_memory_allocated()
    if "allow_leak" not in request.keywords:
        assert after == before, f"{request.node.name} leaked {after - before} bytes of graft memory"


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_leak: the test keeps graft memory alive on purpose")
