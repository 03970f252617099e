"""LocalResponseNorm, CrossMapLRN2d, LayerNorm and GroupNorm."""
from ...autograd import function as _autograd_function
from .. import functional as F
from .. import init
from ._layer_utils import make_affine_params
from .module import Module


class LocalResponseNorm(Module):
    """Divides each element by (k + alpha * mean of the squares over the ``size`` channels around
    it) ** beta; input (N, C, *)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _channel_window_sums(t, before, after):
    """For each channel c of ``t`` (dim 1), the sum of channels c - before .. c + after that exist."""
    channels = t.size(1)
    padded = F.pad(t.unsqueeze(1), (0, 0, 0, 0, before, after)).squeeze(1)
    total = padded.narrow(1, 0, channels)
    for shift in range(1, before + after + 1):
        total = total + padded.narrow(1, shift, channels)
    return total


class _CrossMapLRN2dFunction(_autograd_function.Function):
    """The legacy cross-channel LRN of a 4-D input, with its own backward. The forward's window of
    channel c is c - (p - 1) .. c + (p - 1) for p = (size - 1) // 2 + 1, plus channel 0 once c >= p
    (the running sum never drops it); the backward is the legacy one, whose window, shifted by
    one channel, is not the exact gradient of that forward."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        half = int((size - 1) / 2 + 1) - 1
        squares = input * input
        sums = _channel_window_sums(squares, half, half)
        rest = input.size(1) - half - 1
        if rest > 0:  # channel 0 stays in the sums from channel half + 1 on
            stuck = squares.narrow(1, 0, 1).expand(-1, rest, -1, -1)
            sums = sums + F.pad(stuck, (0, 0, 0, 0, half + 1, 0))
        scale = sums * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.lrn = (size, alpha, beta)
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        (size, alpha, beta), channels = ctx.lrn, input.size(1)
        lead = int(size - (size - 1) / 2)  # where channel 0 of the ratios sits in the padded window
        if lead + channels > channels + size - 1:
            raise RuntimeError(f"start ({lead}) + length ({channels}) exceeds dimension size "
                               f"({channels + size - 1}).")
        ratio = grad_output * output / scale
        # accumulated over channels c - lead .. c + size - 1 - lead
        accum = _channel_window_sums(ratio, lead, size - 1 - lead)
        grad_input = scale.pow(-beta) * grad_output - (2 * alpha * beta / size) * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """The legacy cross-channel local response normalization of a 4-D (N, C, H, W) input:
    x / (k + alpha / size * sum of squares over neighbouring channels) ** beta."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims; weight (ones) and bias (zeros)
    of that shape when elementwise_affine."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        make_affine_params(self, self.normalized_shape, elementwise_affine, device, dtype, bias=bias)
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalizes each of ``num_groups`` channel groups per sample; per-channel affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        make_affine_params(self, num_channels, affine, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
