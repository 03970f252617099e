"""Conv1d, Conv2d, ConvTranspose2d and their lazy forms (LazyConv1d, LazyConv2d,
LazyConvTranspose2d), whose in_channels comes from the first input."""
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import UninitializedParameter
from ._layer_utils import make_weight_and_bias, reset_kaiming_uniform
from .lazy import LazyModuleMixin
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters, initialisation, repr."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {'replicate', 'zeros', 'reflect', 'circular'}, but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"padding_mode='{padding_mode}' is not supported by graft (only 'zeros')")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        make_weight_and_bias(self, shape, out_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming_uniform(self.weight, self.bias, zero_fan_in_bias=False)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if isinstance(self.padding, str) or self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """A (not transposed) convolution layer: ``_conv`` is its graft.nn.functional op."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        return self._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over [N, C, L] (or [C, L]) input; weight [out, in/groups, k]."""

    _dims = 1
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over [N, C, H, W] (or [C, H, W]) input; weight [out, in/groups, kh, kw]."""

    _dims = 2
    _conv = staticmethod(F.conv2d)


class ConvTranspose2d(_ConvNd):
    """The transpose (adjoint) of Conv2d; weight [in, out/groups, kh, kw]. forward(input,
    output_size) picks the output_padding that gives that size."""

    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if isinstance(padding, str):
            raise ValueError("padding must be an int or a tuple of ints for ConvTranspose2d")
        if padding_mode != "zeros":
            raise ValueError('Only "zeros" padding mode is supported for ConvTranspose2d')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        output_size = list(output_size)
        if len(output_size) == input.dim():
            output_size = output_size[2:] if input.dim() == 4 else output_size[1:]
        if len(output_size) != 2:
            raise ValueError(f"ConvTranspose2D: for {input.dim()}D input, output_size must have 2 or "
                             f"{input.dim()} elements (got {len(output_size) + 2 if input.dim() == 4 else len(output_size)})")
        sizes = [input.size(input.dim() - 2 + d) for d in range(2)]
        smallest = [(sizes[d] - 1) * self.stride[d] - 2 * self.padding[d]
                    + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(2)]
        largest = [smallest[d] + self.stride[d] - 1 for d in range(2)]
        if any(not smallest[d] <= output_size[d] <= largest[d] for d in range(2)):
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {smallest} "
                             f"to {largest} (for an input of {input.shape[-2:]})")
        return tuple(output_size[d] - smallest[d] for d in range(2))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: in_channels is input.size(1) (input.size(0) unbatched)
    at the first forward; then the weight and bias placeholders are materialized and initialized."""

    def _make_placeholders(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._dims + 1
        batch = no_batch + 1
        if input.dim() not in (no_batch, batch):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {batch}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batch else input.shape[0]


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose in_channels comes from the first input; it becomes a Conv1d then."""

    cls_to_become = Conv1d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_placeholders(out_channels, bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose in_channels comes from the first input; it becomes a Conv2d then."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_placeholders(out_channels, bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels comes from the first input; it becomes a
    ConvTranspose2d then."""

    cls_to_become = ConvTranspose2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)
        self._make_placeholders(out_channels, bias, device, dtype)
