"""torch.distributions.Laplace for graft."""
from .. import _C
from ._loc_scale import LocScaleMixin
from .distribution import Distribution
from .utils import finfo_eps

__all__ = ["Laplace"]


class Laplace(LocScaleMixin, Distribution):
    """The Laplace (double exponential) distribution of location ``loc`` and scale ``scale``.
    ``rsample`` is differentiable in both."""

    @property
    def variance(self):
        """2 scale ** 2."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """sqrt(2) scale."""
        return (2 ** 0.5) * self.scale

    def _standard_rsample(self, sample_shape):
        """-sign(u) log(1 - |u|), u uniform in [eps - 1, 1)."""
        shape = self._extended_shape(sample_shape)
        eps = finfo_eps(self.loc.dtype)
        u = _C.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        return -(u.sign() * _C.log1p(-u.abs()))

    def log_prob(self, value):
        """-log(2 scale) - |value - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -_C.log(2 * self.scale) - _C.abs(value - self.loc) / self.scale

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        # (PyTorch's form, on value - loc: the standardized one differs where scale < 0, unvalidated)
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * _C.expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        """The quantile function at ``value``."""
        # (PyTorch's form: loc + scale * (standard quantile) differs in the sign of NaNs outside [0, 1])
        term = value - 0.5
        return self.loc - self.scale * term.sign() * _C.log1p(-2 * term.abs())

    def entropy(self):
        """1 + log(2 scale)."""
        return 1 + _C.log(2 * self.scale)
