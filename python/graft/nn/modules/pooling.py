"""MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d, LPPool1d/2d and
MaxUnpool1d/2d/3d."""
from .. import functional as F
from ._layer_utils import OneCallLayer
from .module import Module


class _Pool2d(OneCallLayer):
    """What MaxPool2d and AvgPool2d share: the options kernel_size, stride (kernel_size when
    None), padding, then the pool's own (``_options`` in its functional's argument order), and the
    repr of the first three."""

    def __init__(self, kernel_size, stride, padding, *own_options):
        super().__init__(kernel_size, stride if stride is not None else kernel_size, padding, *own_options)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """Max over kh x kw windows (stride defaults to kernel_size); return_indices also returns
    the flat position h*W + w of each maximum."""

    _options = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")
    _fn = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__(kernel_size, stride, padding, dilation, ceil_mode, return_indices)

    def extra_repr(self):
        return f"{super().extra_repr()}, dilation={self.dilation}, ceil_mode={self.ceil_mode}"


class AvgPool2d(_Pool2d):
    """Mean over kh x kw windows; count_include_pad counts padding zeros in the divisor,
    divisor_override replaces it."""

    _options = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
    _fn = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


class AdaptiveAvgPool2d(OneCallLayer):
    """Average pooling to a fixed output size (an int, or a pair whose None keeps that dim)."""

    _options = ("output_size",)
    _fn = staticmethod(F.adaptive_avg_pool2d)

    def __init__(self, output_size):
        super().__init__(output_size)


class MaxPool1d(MaxPool2d):
    """Max over windows of the last dim (stride defaults to kernel_size); return_indices also
    returns the position of each maximum."""

    _fn = staticmethod(F.max_pool1d)


class AvgPool1d(OneCallLayer):
    """Mean over windows of the last dim; count_include_pad counts padding zeros in the divisor.
    Its sizes are kept as 1-tuples, as PyTorch's."""

    _options = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad")
    _fn = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        single = F._ntuple1
        super().__init__(single(kernel_size), single(stride if stride is not None else kernel_size), single(padding),
                         ceil_mode, count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling of the last dim to ``output_size``."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveMaxPool2d(OneCallLayer):
    """Max pooling to a fixed output size (an int, or a pair whose None keeps that dim);
    return_indices also returns the position h * W + w of each maximum."""

    _options = ("output_size", "return_indices")
    _fn = staticmethod(F.adaptive_max_pool2d)

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size, return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling of the last dim to ``output_size``."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class LPPool2d(OneCallLayer):
    """The p-norm of each kh x kw window: (sum x^p)^(1/p)."""

    _options = ("norm_type", "kernel_size", "stride", "ceil_mode")
    _fn = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__(norm_type, kernel_size, stride, ceil_mode)


class LPPool1d(LPPool2d):
    """The p-norm of each window of the last dim: (sum x^p)^(1/p)."""

    _fn = staticmethod(F.lp_pool1d)


class _MaxUnpoolNd(Module):
    """What the max unpooling layers share: kernel_size, stride (kernel_size when None) and
    padding kept as n-tuples (``_tuple``), and forward(input, indices, output_size=None)."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.stride = self._tuple(stride if stride is not None else kernel_size)
        self.padding = self._tuple(padding)

    def forward(self, input, indices, output_size=None):
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: the pooled values back at their indices, zeros elsewhere."""

    _tuple = staticmethod(F._ntuple1)
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: the pooled values back at their indices, zeros elsewhere."""

    _tuple = staticmethod(F._pair)
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of a 3-d max pooling: the pooled values back at their indices, zeros
    elsewhere."""

    _tuple = staticmethod(F._ntuple3)
    _fn = staticmethod(F.max_unpool3d)
