"""Identity, Linear, LazyLinear and Bilinear layers."""
import math

from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import UninitializedParameter
from ._layer_utils import make_weight_and_bias, reset_kaiming_uniform
from .lazy import LazyModuleMixin
from .module import Module


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b. weight [out_features, in_features] and bias [out_features] start
    uniform in +-1/sqrt(in_features), as PyTorch's."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        make_weight_and_bias(self, (out_features, in_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming_uniform(self.weight, self.bias, zero_fan_in_bias=True)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dim of its first input; it becomes a Linear then
    (see LazyModuleMixin). Until that, in_features is 0 and weight / bias are placeholders."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # no bias yet: it would be replaced at once
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class NonDynamicallyQuantizableLinear(Linear):
    """The Linear that MultiheadAttention uses for out_proj (named as in PyTorch)."""


class Bilinear(Module):
    """y = x1^T A x2 + b with weight A [out_features, in1_features, in2_features]; weight and
    bias start uniform in +-1/sqrt(in1_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        make_weight_and_bias(self, (out_features, in1_features, in2_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
