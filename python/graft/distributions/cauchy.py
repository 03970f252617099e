"""torch.distributions.Cauchy for graft."""
import math

from .. import _C
from ._loc_scale import LocScaleMixin
from .distribution import Distribution

__all__ = ["Cauchy"]


class Cauchy(LocScaleMixin, Distribution):
    """The Cauchy (Lorentz) distribution of median ``loc`` and half width at half maximum ``scale``.
    ``rsample`` is differentiable in both."""

    _standard_entropy = math.log(4 * math.pi)

    @property
    def mean(self):
        """NaN (the mean does not exist)."""
        return self._constant(math.nan, self.loc)

    @property
    def variance(self):
        """inf."""
        return self._constant(math.inf, self.loc)

    def _standard_rsample(self, sample_shape):
        """tan(pi (u - 1/2)), u uniform in [0, 1)."""
        shape = self._extended_shape(sample_shape)
        return self._standard_icdf(_C.rand(tuple(shape), dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        """-log(pi) - log(scale) - log(1 + ((value - loc) / scale) ** 2)."""
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (1 + ((value - self.loc) / self.scale) ** 2).log()

    def _standard_cdf(self, value):
        return _C.atan(value) / math.pi + 0.5

    def _standard_icdf(self, value):
        return _C.tan(math.pi * (value - 0.5))
