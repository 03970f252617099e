"""graft.autocast / graft.amp.autocast: automatic mixed precision on the CPU, as torch.autocast.

Inside an enabled region the ops of PyTorch's CPU lower-precision list (mm, bmm, matmul, linear,
the convolutions) run with their float32 inputs cast to the region's dtype (bfloat16 by default,
or float16), and the ops of its float32 list (the losses, prod) with their 16-bit inputs cast to
float32; the casts are differentiable, so float32 parameters get float32 gradients. The state is
per thread. graft has no CUDA: a "cuda" region warns and does nothing, as PyTorch without CUDA.
"""
import functools
import warnings

from .. import _C

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_enabled", "set_autocast_cpu_enabled",
           "set_autocast_cpu_dtype", "clear_autocast_cache"]

_CPU_DTYPES = (_C.bfloat16, _C.float16)
# the device types PyTorch 2.x names when a device string is not one of them
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, "
                 "meta, hpu, mtia, privateuseone")


def is_autocast_available(device_type):
    """Whether autocast exists for ``device_type``: the CPU only, in graft."""
    return device_type == "cpu"


def is_autocast_enabled(device_type=None):
    """Whether autocast is on in this thread for ``device_type`` (without one: CUDA's, never in graft)."""
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError("is_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    return device_type == "cpu" and _C._is_autocast_cpu_enabled()


def is_autocast_cpu_enabled():
    """Whether CPU autocast is on in this thread."""
    return _C._is_autocast_cpu_enabled()


def get_autocast_dtype(device_type):
    """The dtype an autocast region of ``device_type`` computes its lower-precision ops in."""
    if device_type == "cpu":
        return _C._get_autocast_cpu_dtype()
    return _C.float16  # PyTorch's default for the devices graft does not have


def get_autocast_cpu_dtype():
    return _C._get_autocast_cpu_dtype()


def set_autocast_enabled(device_type, enabled):
    """Turns autocast on or off in this thread for ``device_type`` (only the CPU has it in graft)."""
    if not isinstance(device_type, str):
        raise TypeError("set_autocast_enabled(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position 2) must be bool, not "
                        f"{type(enabled).__name__}")
    if device_type == "cpu":
        _C._set_autocast_cpu_enabled(enabled)


def set_autocast_cpu_enabled(enabled):
    """Turns CPU autocast on or off in this thread."""
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _C._set_autocast_cpu_enabled(enabled)


def set_autocast_cpu_dtype(dtype):
    _C._set_autocast_cpu_dtype(dtype)


def clear_autocast_cache():
    """graft keeps no cache of cast weights (each op casts its inputs when it runs): nothing to clear."""


class autocast:
    """Context manager and decorator: ``with graft.autocast("cpu"):`` runs the region's
    lower-precision ops in ``dtype`` (bfloat16 by default, or float16); other dtypes warn and
    disable it, as PyTorch's. ``enabled=False`` turns autocast off inside the region (nested
    regions restore the outer state on exit). ``cache_enabled`` is accepted; graft casts weights
    at each op instead of caching them."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = cache_enabled
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device string: {device_type}")
        if device_type == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.")
                enabled = False
        if device_type == "cpu" and enabled and self.fast_dtype not in _CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self.device == "cpu":
            self.prev, self.prev_fastdtype = _C._is_autocast_cpu_enabled(), _C._get_autocast_cpu_dtype()
            _C._set_autocast_cpu_enabled(self._enabled)
            if self.fast_dtype in _CPU_DTYPES:
                _C._set_autocast_cpu_dtype(self.fast_dtype)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.device == "cpu":
            _C._set_autocast_cpu_enabled(self.prev)
            _C._set_autocast_cpu_dtype(self.prev_fastdtype)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorated
