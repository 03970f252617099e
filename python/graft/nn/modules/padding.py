"""The padding layers (torch.nn.modules.padding, PyTorch 2.x's): ConstantPad1d/2d/3d,
ZeroPad1d/2d/3d, ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, each one
call of F.pad. ``padding`` is an int (the same on every side) or a tuple of 2, 4 or 6 ints."""
import collections.abc

from .. import functional as F
from .module import Module


def _ntuple(x, n):
    """tuple(x) for a sequence, n copies of x otherwise (torch.nn.modules.utils._ntuple)."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return (x,) * n


class _PadNd(Module):
    """A padding layer of ``_sides`` pad values in F.pad's mode ``_mode``."""

    _sides = 2
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, self._sides)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    """Pads with ``value``."""

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``."""


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with ``value``."""

    _sides = 4


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with ``value``."""

    _sides = 6


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    """Pads the last 2 dims with zeros."""

    _sides = 4


class ZeroPad3d(ZeroPad1d):
    """Pads the last 3 dims with zeros."""

    _sides = 6


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its reflection (the edge value not repeated)."""

    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pads the last 2 dims with their reflection."""

    _sides = 4


class ReflectionPad3d(ReflectionPad1d):
    """Pads the last 3 dims with their reflection."""

    _sides = 6


class ReplicationPad1d(_PadNd):
    """Pads the last dim with copies of its edge values."""

    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pads the last 2 dims with copies of their edge values."""

    _sides = 4


class ReplicationPad3d(ReplicationPad1d):
    """Pads the last 3 dims with copies of their edge values."""

    _sides = 6


class CircularPad1d(_PadNd):
    """Pads the last dim circularly (values wrapped from the other end)."""

    _mode = "circular"

    def forward(self, input):
        low = self._sides // 2 + 1
        if input.dim() not in (low, low + 1):
            raise ValueError(f"expected {low}D or {low + 1}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad2d(CircularPad1d):
    """Pads the last 2 dims circularly."""

    _sides = 4


class CircularPad3d(CircularPad1d):
    """Pads the last 3 dims circularly."""

    _sides = 6
