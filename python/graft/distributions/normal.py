"""torch.distributions.Normal for graft."""
import math
from numbers import Real

from .. import _C
from ._loc_scale import LocScaleMixin
from ._special import erfinv
from .exp_family import ExponentialFamily
from .utils import standard_normal

__all__ = ["Normal"]


class Normal(LocScaleMixin, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale`` (numbers or
    tensors, broadcast together). ``rsample`` is differentiable in both."""

    _mean_carrier_measure = 0
    _standard_entropy = 0.5 + 0.5 * math.log(2 * math.pi)

    @property
    def stddev(self):
        """The standard deviation (scale)."""
        return self.scale

    @property
    def variance(self):
        """The variance (scale ** 2)."""
        return self.stddev.pow(2)

    def _standard_rsample(self, sample_shape):
        return standard_normal(self._extended_shape(sample_shape), self.loc.dtype, self.loc.device)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        # compute the variance
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def _standardize(self, value):
        return (value - self.loc) * self.scale.reciprocal()  # (PyTorch's form)

    def _standard_cdf(self, value):
        return 0.5 * (1 + _C.erf(value / math.sqrt(2)))

    def icdf(self, value):
        """The quantile function at ``value``: loc + scale sqrt(2) erfinv(2 value - 1)."""
        # (PyTorch's order of operations, not the mixin's loc + scale * standard quantile)
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * _C.log(-math.pi / y)
