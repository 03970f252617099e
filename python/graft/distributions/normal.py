"""torch.distributions.Normal for graft."""
import math
from numbers import Number, Real

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from ._special import erfinv
from .exp_family import ExponentialFamily
from .utils import broadcast_all, standard_normal

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale`` (numbers or
    tensors, broadcast together). ``rsample`` is differentiable in both."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        """The mean (loc)."""
        return self.loc

    @property
    def mode(self):
        """The mode (loc)."""
        return self.loc

    @property
    def stddev(self):
        """The standard deviation (scale)."""
        return self.scale

    @property
    def variance(self):
        """The variance (scale ** 2)."""
        return self.stddev.pow(2)

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        """Samples (not differentiable) of shape sample_shape + batch_shape."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return self.loc.expand(shape) + standard_normal(shape, self.loc.dtype, self.loc.device) * self.scale

    def rsample(self, sample_shape=Size()):
        """loc + eps * scale with standard normal eps: differentiable in loc and scale."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        # compute the variance
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _C.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        """The quantile function at ``value``: loc + scale sqrt(2) erfinv(2 value - 1)."""
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """0.5 + 0.5 log(2 pi) + log(scale)."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + _C.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * _C.log(-math.pi / y)
