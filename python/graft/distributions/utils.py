"""torch.distributions.utils for graft: argument broadcasting, probabilities <-> logits,
lazy properties."""
import math
from functools import update_wrapper
from numbers import Number

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import enable_grad
from ..nn import functional as F

# torch.finfo's eps, min and tiny of graft's floating dtypes
_FINFO = {_C.float32: (1.1920928955078125e-07, -3.4028234663852886e38, 1.1754943508222875e-38),
          _C.float64: (2.220446049250313e-16, -1.7976931348623157e308, 2.2250738585072014e-308)}


def finfo_eps(dtype):
    """``torch.finfo(dtype).eps``."""
    return _FINFO[dtype][0]


def finfo_min(dtype):
    """``torch.finfo(dtype).min``."""
    return _FINFO[dtype][1]


def finfo_tiny(dtype):
    """``torch.finfo(dtype).tiny`` (the smallest positive normal number)."""
    return _FINFO[dtype][2]


def _infer_size(a, b):
    """ATen's infer_size: the broadcast of two shapes, checked from the right."""
    ndim = max(len(a), len(b))
    out = [1] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        size_a = a[len(a) - 1 - offset] if len(a) - 1 - offset >= 0 else 1
        size_b = b[len(b) - 1 - offset] if len(b) - 1 - offset >= 0 else 1
        if not (size_a == size_b or size_a == 1 or size_b == 1):
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at "
                               f"non-singleton dimension {i}")
        out[i] = size_b if size_a == 1 else size_a
    return out


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (ATen's pairwise rule and error text)."""
    out = []
    for shape in shapes:
        out = _infer_size(out, list(shape))
    return Size(out)


def broadcast_tensors(*tensors):
    """``torch.broadcast_tensors``: each tensor expanded to the common shape (views)."""
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


def broadcast_all(*values):
    """PyTorch's broadcast_all: numbers become tensors (of the first tensor's dtype and device,
    else the default dtype), then all are broadcast to one shape."""
    if not all(isinstance(v, (_C.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, _C.Tensor) for v in values):
        options = dict(dtype=_C.get_default_dtype())
        for value in values:
            if isinstance(value, _C.Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, _C.Tensor) else _C.tensor(v, **options) for v in values]
    return broadcast_tensors(*values)


def standard_normal(shape, dtype, device):
    """Standard normal draws of the given shape."""
    return _C.randn(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value, dim):
    """Sums out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def clamp_probs(probs):
    """Probabilities clamped into [eps, 1 - eps] of their dtype."""
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-probabilities (or, ``is_binary``, log-odds) of clamped probabilities."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return _C.log(ps_clamped) - _C.log1p(-ps_clamped)
    return _C.log(ps_clamped)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (sigmoid, ``is_binary``) or unnormalised logits (softmax)."""
    if is_binary:
        return _C.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def numel(shape):
    """The number of elements of a shape."""
    return math.prod(shape)


class lazy_property:
    """A property computed on first access (with grad mode on) and then stored on the instance
    under the same name, as PyTorch's (``probs`` / ``logits``)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property is on the class: both a lazy_property and a property (so that
    documentation tools see a property), as PyTorch 2.x's."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
