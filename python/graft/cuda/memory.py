"""torch.cuda's memory API on a graft without CUDA: each function returns or raises what
PyTorch's does on a build without CUDA (Debian's torch 1.13, observed): the statistics read 0
or empty while CUDA is not initialised (it never is here), functions that need the device
raise AssertionError("Torch not compiled with CUDA enabled"), and those that go straight to
the extension find no CUDA entry point in graft._C (AttributeError)."""
import collections

from .. import _C
from ..cpu import memory as _cpu_memory

__all__ = list(_cpu_memory.__all__)  # the API graft.cpu's allocator has
_CATEGORIES = _cpu_memory._CATEGORIES


def is_initialized():
    """False: CUDA is never initialised in a build without it."""
    return False


def _lazy_init():
    raise AssertionError("Torch not compiled with CUDA enabled")


def _get_device_index(device):
    """PyTorch's check of a CUDA device argument: a CPU device is a ValueError; None stays None
    (there is no current device)."""
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return device.index
    return device


def memory_stats_as_nested_dict(device=None):
    """{}: CUDA is not initialised."""
    return {}


def memory_stats(device=None):
    """An empty OrderedDict: CUDA is not initialised."""
    return collections.OrderedDict(memory_stats_as_nested_dict(device))


def memory_allocated(device=None):
    """0: CUDA is not initialised."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    """0: CUDA is not initialised."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    """0: CUDA is not initialised."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    """0: CUDA is not initialised."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_by_category(device=None):
    """Every category at 0 bytes (graft's extra; sums to memory_allocated())."""
    return {name: 0 for name in _CATEGORIES}


def reset_peak_memory_stats(device=None):
    """AttributeError, as PyTorch without CUDA: the extension has no CUDA allocator."""
    device = _get_device_index(device)
    return _C._cuda_resetPeakMemoryStats(device)


def reset_accumulated_memory_stats(device=None):
    """AttributeError, as PyTorch without CUDA: the extension has no CUDA allocator."""
    device = _get_device_index(device)
    return _C._cuda_resetAccumulatedMemoryStats(device)


def empty_cache():
    """Nothing to release: CUDA is not initialised."""


def memory_summary(device=None, abbreviated=False):
    """KeyError('allocated_bytes.all.current'), as PyTorch without CUDA: the table is built from
    memory_stats(), which is empty."""
    _get_device_index(device)
    raise KeyError("allocated_bytes.all.current")


def memory_snapshot():
    """AttributeError, as PyTorch without CUDA: the extension has no CUDA allocator."""
    return _C._cuda_memorySnapshot()


def set_per_process_memory_fraction(fraction, device=None):
    """AssertionError("Torch not compiled with CUDA enabled")."""
    _lazy_init()


def mem_get_info(device=None):
    """AssertionError("Torch not compiled with CUDA enabled") (ValueError for a CPU device)."""
    _get_device_index(device)
    _lazy_init()


def _record_memory_history(enabled="all", *args, device=None, **kwargs):
    """AssertionError("Torch not compiled with CUDA enabled"), in either form."""
    _get_device_index(device)
    _lazy_init()


def _snapshot(device=None):
    """AssertionError("Torch not compiled with CUDA enabled")."""
    _get_device_index(device)
    _lazy_init()


def _dump_snapshot(filename="dump_snapshot.pickle"):
    """AssertionError("Torch not compiled with CUDA enabled"), from _snapshot()."""
    _snapshot()


def _set_allocator_settings(env):
    """AttributeError, as PyTorch without CUDA: the extension has no CUDA allocator."""
    return _C._cuda_cudaCachingAllocator_set_allocator_settings(env)
