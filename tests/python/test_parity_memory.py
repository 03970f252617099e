"""Parity tier: graft.cuda against torch.cuda on builds without CUDA (every call returns the
same value or raises the same exception type with the same message, torch._C read as
graft._C), and graft.cpu's nested statistics flattened by PyTorch's own memory_stats()."""
import collections
import warnings

import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="compares with a PyTorch built without CUDA")

CALLS = [
    ("is_available", (), {}), ("device_count", (), {}), ("is_initialized", (), {}),
    ("memory_allocated", (), {}), ("memory_allocated", (0,), {}), ("memory_allocated", ("cuda:0",), {}),
    ("memory_allocated", ("cpu",), {}), ("max_memory_allocated", (), {}), ("memory_reserved", (), {}),
    ("max_memory_reserved", ("cpu",), {}), ("memory_stats", (), {}), ("memory_stats", ("cpu",), {}),
    ("memory_stats_as_nested_dict", (), {}), ("empty_cache", (), {}),
    ("reset_peak_memory_stats", (), {}), ("reset_peak_memory_stats", (0,), {}),
    ("reset_peak_memory_stats", ("cpu",), {}), ("reset_accumulated_memory_stats", (), {}),
    ("reset_accumulated_memory_stats", ("cpu",), {}),
    ("memory_summary", (), {}), ("memory_summary", ("cpu",), {}), ("memory_summary", (), {"abbreviated": True}),
    ("memory_snapshot", (), {}),
    ("set_per_process_memory_fraction", (0.5,), {}), ("set_per_process_memory_fraction", (2,), {}),
    ("mem_get_info", (), {}), ("mem_get_info", (0,), {}), ("mem_get_info", ("cpu",), {}),
    ("memory._record_memory_history", (True,), {}), ("memory._record_memory_history", (False,), {}),
    ("memory._snapshot", (), {}), ("memory._set_allocator_settings", ("max_split_size_mb:20",), {}),
    ("current_device", (), {}), ("synchronize", (), {}), ("init", (), {}),
]


def outcome(module, name, args, kwargs):
    fn = module
    for part in name.split("."):
        fn = getattr(fn, part)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "returns", fn(*args, **kwargs)
    except Exception as e:  # the outcome is what is compared
        return type(e).__name__, str(e).replace("torch._C", "graft._C")


@pytest.mark.parametrize("name, args, kwargs", CALLS, ids=[f"{c[0]}{c[1]}{c[2] or ''}" for c in CALLS])
def test_graft_cuda_matches_torch_cuda_without_cuda(name, args, kwargs):
    expected = outcome(torch.cuda, name, args, kwargs)
    got = outcome(graft.cuda, name, args, kwargs)
    assert got == expected
    if expected[0] == "returns":
        assert type(got[1]) is type(expected[1])


def test_nested_stats_flatten_to_graft_memory_stats_by_pytorchs_rule(monkeypatch):
    t = graft.zeros(1000)
    nested = graft.cpu.memory_stats_as_nested_dict()
    flat = graft.cpu.memory_stats()
    # torch.cuda.memory_stats flattens memory_stats_as_nested_dict() with "." and sorts by key
    monkeypatch.setattr(torch.cuda.memory, "memory_stats_as_nested_dict", lambda device=None: nested)
    torch_flat = torch.cuda.memory.memory_stats()
    assert type(torch_flat) is collections.OrderedDict
    assert list(torch_flat.items()) == list(flat.items())
    del t
