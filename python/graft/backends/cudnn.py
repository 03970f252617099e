"""graft.backends.cudnn: cuDNN is never available in graft (no CUDA build). The flags have
PyTorch's defaults and can be set; they change nothing in graft, whose kernels do not use cuDNN."""
import sys

from . import _flags

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = None  # PyTorch's value when cuDNN is not available


def is_available():
    """False: graft is not built with cuDNN."""
    return False


def version():
    """None: graft is not built with cuDNN."""
    return None


def is_acceptable(tensor):
    """False: cuDNN takes no tensor of graft's (they are never CUDA tensors)."""
    return False


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None):
    """Sets the flags given (not None); returns the previous values, as PyTorch's."""
    module = sys.modules[__name__]
    orig = (enabled, benchmark, None, deterministic, allow_tf32)
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark), ("deterministic", _deterministic),
                        ("allow_tf32", _allow_tf32)):
        if value is not None:
            setattr(module, name, value)
    return orig


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """A context manager that sets the flags for its block (PyTorch's defaults: all off but
    allow_tf32) and restores them after."""
    return _flags.temporarily(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                              deterministic=deterministic, allow_tf32=allow_tf32)


_flags.flag_module(__name__, {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                              "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cudnn"})
