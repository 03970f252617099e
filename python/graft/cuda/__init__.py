"""graft.cuda: torch.cuda's names on a graft built without CUDA.

is_available() is False and device_count() 0; every function behaves as PyTorch's torch.cuda
does on a build without CUDA (statistics 0 or empty, device calls raise AssertionError
"Torch not compiled with CUDA enabled"). graft's memory API for the CPU is graft.cpu.
"""
from .. import _C
from . import memory  # noqa: F401
from . import amp  # noqa: F401  (GradScaler, the deprecated torch.cuda.amp spelling)
from .memory import (  # noqa: F401  (re-exported API)
    memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
    reset_peak_memory_stats, reset_accumulated_memory_stats, empty_cache, memory_stats,
    memory_stats_as_nested_dict, memory_summary, memory_snapshot, memory_by_category,
    set_per_process_memory_fraction, mem_get_info, is_initialized,
)

OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    """False: graft was built without CUDA."""
    return False


def device_count():
    """0: graft was built without CUDA."""
    return 0


def init():
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()


def current_device():
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()


def synchronize(device=None):
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()


def get_rng_state(device="cuda"):
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()


def set_rng_state(new_state, device="cuda"):
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()


def manual_seed(seed):
    """Does nothing: PyTorch queues the seeding until CUDA initialises, which never happens here."""


def manual_seed_all(seed):
    """Does nothing (see manual_seed)."""


def seed():
    """Does nothing (see manual_seed)."""


def seed_all():
    """Does nothing (see manual_seed)."""


def initial_seed():
    """AssertionError("Torch not compiled with CUDA enabled")."""
    memory._lazy_init()
