"""What the layers share: creating their weight and bias parameters (the normalization layers'
affine ones too), PyTorch's default initialisation of them, extra_repr's list of the options
that differ from the defaults, and the base of the layers that are one call of a function."""
import math

from ... import _C
from .. import init
from ..parameter import Parameter
from .module import Module


def make_weight_and_bias(module, weight_shape, bias_size, bias, device, dtype):
    """Registers ``weight`` (uninitialised, weight_shape) and ``bias`` ([bias_size], or None when
    ``bias`` is false) on ``module``, on ``device`` with ``dtype``."""
    module.weight = Parameter(_C.empty(weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(_C.empty(bias_size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def make_affine_params(module, shape, affine, device, dtype, bias=True):
    """A normalization layer's per-element ``weight`` and ``bias`` (uninitialised, ``shape``)
    when ``affine``, else both None; with bias false only ``weight`` is made (LayerNorm)."""
    if affine:
        make_weight_and_bias(module, shape, shape, bias, device, dtype)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_kaiming_uniform(weight, bias, zero_fan_in_bias):
    """PyTorch's Linear/Conv initialisation: weight kaiming_uniform(a=sqrt(5)), bias U(+-1/sqrt(fan_in)).
    With fan_in 0 the bias is zeroed (Linear) when ``zero_fan_in_bias``, else left as it is (Conv)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is None:
        return
    fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
    if fan_in > 0 or zero_fan_in_bias:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def changed_options(module, **defaults):
    """", name=value" for each option of ``module`` that is not its default, in order, as PyTorch's
    extra_repr writes them: a bool default is compared by identity (``is not True``), others by
    ``!=``."""
    s = ""
    for name, default in defaults.items():
        value = getattr(module, name)
        changed = value is not default if isinstance(default, bool) else value != default
        if changed:
            s += f", {name}={value}"
    return s


class OneCallLayer(Module):
    """A layer whose forward is one call, ``_fn(input, *options)``: the options are the attributes
    named by ``_options``, which __init__ sets from its arguments in that order and extra_repr
    lists as ``name=value``."""

    _options = ()

    def __init__(self, *values):
        super().__init__()
        for name, value in zip(self._options, values):
            setattr(self, name, value)

    def forward(self, input):
        return self._fn(input, *(getattr(self, name) for name in self._options))

    def extra_repr(self):
        return ", ".join(f"{name}={getattr(self, name)}" for name in self._options)
