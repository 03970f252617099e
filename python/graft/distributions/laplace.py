"""torch.distributions.Laplace for graft."""
from numbers import Number

from .. import _C
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo_eps

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace (double exponential) distribution of location ``loc`` and scale ``scale``.
    ``rsample`` is differentiable in both."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """2 scale ** 2."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """sqrt(2) scale."""
        return (2 ** 0.5) * self.scale

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        """loc - scale sign(u) log(1 - |u|), u uniform in [eps - 1, 1)."""
        shape = self._extended_shape(sample_shape)
        eps = finfo_eps(self.loc.dtype)
        u = _C.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * _C.log1p(-u.abs())

    def log_prob(self, value):
        """-log(2 scale) - |value - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -_C.log(2 * self.scale) - _C.abs(value - self.loc) / self.scale

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _C.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        """The quantile function at ``value``."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _C.log1p(-2 * term.abs())

    def entropy(self):
        """1 + log(2 scale)."""
        return 1 + _C.log(2 * self.scale)
