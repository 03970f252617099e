"""graft.cpu: the CPU device, with torch.cpu's device functions and torch.cuda's memory API.

The memory functions (memory_allocated, memory_stats, memory_summary, empty_cache, ...) read
graft's CPU caching allocator, which has the policy and statistics of PyTorch's CUDA one; see
graft.cpu.memory and docs/memory.md.
"""
from . import memory  # noqa: F401
from . import amp  # noqa: F401  (GradScaler, the deprecated torch.cpu.amp spelling)
from .memory import (  # noqa: F401  (re-exported API)
    memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
    reset_peak_memory_stats, reset_accumulated_memory_stats, empty_cache, memory_stats,
    memory_stats_as_nested_dict, memory_summary, memory_snapshot, memory_by_category,
    set_per_process_memory_fraction, mem_get_info,
)


def is_available():
    """Always True: the CPU is always there (torch.cpu.is_available)."""
    return True


def device_count():
    """Always 1 (torch.cpu.device_count)."""
    return 1


def current_device():
    """Always "cpu" (torch.cpu.current_device)."""
    return "cpu"


def synchronize(device=None):
    """Does nothing: CPU work is synchronous (torch.cpu.synchronize)."""
    memory._device(device)
