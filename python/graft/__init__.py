"""graft: PyTorch's tensors, autograd and training API over graft's C++ core.

Ordinary PyTorch code of the covered subset runs after ``import graft as torch``. The C++
library is the single implementation; this package is a thin layer that gives it PyTorch's
names. See README.md ("Python") and docs/python.md.
"""
import threading as _threading

from . import _C
from ._C import (  # noqa: F401  (re-exported API)
    Tensor, dtype, device, OutOfMemoryError, Generator, default_generator,
    memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d,
    bool, int32, int64, float32, float64, float16, bfloat16, float, double, half, long, int,
    tensor, as_tensor, from_numpy, from_dlpack,
    zeros, ones, empty, full, rand, randn, randint, randperm, arange, linspace, eye, scalar_tensor,
    zeros_like, ones_like, empty_like, full_like, rand_like, randn_like, randint_like,
    set_num_threads, get_num_threads, get_default_dtype, set_default_dtype,
    is_tensor, is_grad_enabled, is_inference_mode_enabled,
    cat, concat, stack, split, chunk, unbind, unflatten, reshape, transpose, permute, squeeze,
    unsqueeze, t, select, clone, detach, numel, swapaxes, is_floating_point,
    add, sub, subtract, mul, multiply, div, divide, true_divide, floor_divide, remainder, pow,
    greater, less, greater_equal, less_equal, not_equal, allclose, equal,
    negative, absolute,
    square, clamp, clip, clamp_min, clamp_max, where,
    sum, mean, prod, max, min, amax, var, std, softmax, log_softmax, any, all,
    count_nonzero, dot, outer, masked_fill, nonzero,
)
from ._C import amin  # noqa: F401

# the ops declared in src/ops/ops.yaml (exp, log, tanh, sigmoid, ..., neg, abs, relu, ...,
# isnan, isfinite, ..., maximum, atan2, ..., eq, lt, logical_and, ..., the activations that
# PyTorch has at the top level, hardshrink, and the function and composite ops bound as torch
# functions, mm, gather, flatten, ...): generated bindings
globals().update({_name: getattr(_C, _name)
                 for _name in _C._unary_float_ops + _C._unary_rounding_ops + _C._unary_keep_ops + _C._unary_predicate_ops
                 + _C._binary_ops + _C._binary_predicate_ops + _C._binary_bitwise_ops + _C._function_ops
                 + tuple(_name for _name, _where, _args in _C._activation_ops if _where == "torch")})
from ._C import threshold_  # noqa: F401
# torch/functional.py's functions: varargs and string forms over the ops above
from .functional import (  # noqa: F401
    block_diag, cartesian_prod, cdist, cross, einsum, meshgrid, tensordot, unique, unique_consecutive,
)


def _inplace_function(name):
    """torch.<name>(input, ...): the Tensor method of that name, called on ``input``."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return method(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"In-place {name[:-1]} of ``input`` (Tensor.{name})."
    return function


# torch's in-place functions (torch.relu_(x), torch.exp_(x)) are the Tensor methods of their names
for _name in ("abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
              "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
              "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
              "floor_", "frac_", "index_put_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_",
              "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_",
              "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_"):
    if hasattr(Tensor, _name):
        globals()[_name] = _inplace_function(_name)
from ._tensor import Size, return_types  # noqa: F401  (also registers them with _C)
from ._tensor_types import (  # noqa: F401
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, BoolTensor,
)
from . import _tensor_new  # noqa: F401  (Tensor.new_zeros, new_full, new_tensor, ...)
from .random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state  # noqa: F401
from . import random  # noqa: F401
from .autograd.grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from . import autograd  # noqa: F401
from . import cpu, cuda  # noqa: F401
from . import amp  # noqa: F401
from .amp.autocast_mode import (  # noqa: F401
    autocast, is_autocast_enabled, is_autocast_cpu_enabled, get_autocast_dtype, get_autocast_cpu_dtype,
    set_autocast_enabled, set_autocast_cpu_enabled, set_autocast_cpu_dtype, clear_autocast_cache,
)
from . import optim  # noqa: F401
from . import utils  # noqa: F401
from .serialization import save, load  # noqa: F401
from . import nn  # noqa: F401
from . import linalg  # noqa: F401
from .linalg import _torch_norm as norm  # noqa: F401  (torch.norm: the linalg norms, as PyTorch 2.x)
from . import backends, distributed, jit, onnx  # noqa: F401
from . import func  # noqa: F401  (torch.func: grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call)
from .func import vmap  # noqa: F401  (torch.vmap, 2.x)
from ._compile import compile  # noqa: F401
from ._type_info import finfo, iinfo  # noqa: F401
from . import _composites  # noqa: F401  (torch composites: movedim, hstack, quantile, cov, ...; Tensor methods)

__version__ = "0.1.0"


def __getattr__(name):
    """graft.doctor and graft.distributions load on first use (``import graft`` stays as fast as
    it was)."""
    if name in ("doctor", "distributions"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'graft' has no attribute '{name}'")


def get_default_device():
    """The device factories use when given none (PyTorch 2.x's torch.get_default_device)."""
    return _C._get_default_device()


def set_default_device(device):
    """Sets the device factories and module constructors use when given none ("cpu" or
    "meta"; None means "cpu") in this thread, as PyTorch 2.x's torch.set_default_device (a
    device context of the thread: other threads keep theirs, a new thread starts with cpu)."""
    _C._set_default_device("cpu" if device is None else device)


_device_stacks = _threading.local()  # per thread: the defaults `with device(...)` replaced


def _device_enter(self):
    # `with graft.device("meta"):` makes it this thread's default device inside the block (PyTorch 2.x)
    stack = _device_stacks.__dict__.setdefault("stack", [])
    stack.append(get_default_device())
    set_default_device(self)
    return self


def _device_exit(self, *exc):
    set_default_device(_device_stacks.stack.pop())
    return False


device.__enter__ = _device_enter
device.__exit__ = _device_exit
