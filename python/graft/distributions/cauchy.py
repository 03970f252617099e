"""torch.distributions.Cauchy for graft."""
import math
from numbers import Number

from .. import _C
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]

_INF = float("inf")
_NAN = float("nan")


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution of median ``loc`` and half width at half maximum ``scale``.
    ``rsample`` is differentiable in both."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """NaN (the mean does not exist)."""
        return _C.full(tuple(self._extended_shape()), _NAN, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """inf."""
        return _C.full(tuple(self._extended_shape()), _INF, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        """loc + scale tan(pi (u - 1/2)), u uniform in [0, 1)."""
        shape = self._extended_shape(sample_shape)
        u = _C.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _C.tan(math.pi * (u - 0.5)) * self.scale

    def log_prob(self, value):
        """-log(pi) - log(scale) - log(1 + ((value - loc) / scale) ** 2)."""
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (1 + ((value - self.loc) / self.scale) ** 2).log()

    def cdf(self, value):
        """atan((value - loc) / scale) / pi + 1/2."""
        if self._validate_args:
            self._validate_sample(value)
        return _C.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        """loc + scale tan(pi (value - 1/2))."""
        return _C.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        """log(4 pi scale)."""
        return math.log(4 * math.pi) + self.scale.log()
