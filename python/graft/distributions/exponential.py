"""torch.distributions.Exponential for graft."""
from .. import _C
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(ParamsMixin, ExponentialFamily):
    """The exponential distribution of rate ``rate`` (1 / scale). ``rsample`` is differentiable."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _param_names = ("rate",)

    @property
    def mean(self):
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def mode(self):
        """0."""
        return _C.zeros_like(self.rate)

    @property
    def stddev(self):
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """rate ** -2."""
        return self.rate.pow(-2)

    def __init__(self, rate, validate_args=None):
        super().__init__(self._broadcast_params(rate=rate), validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        """-log(1 - u) / rate with u uniform in [0, 1)."""
        shape = self._extended_shape(sample_shape)
        u = _C.rand(tuple(shape), dtype=self.rate.dtype, device=self.rate.device)
        return -_C.log1p(-u) / self.rate

    def log_prob(self, value):
        """log(rate) - rate * value."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """1 - exp(-rate * value)."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - _C.exp(-self.rate * value)

    def icdf(self, value):
        """-log(1 - value) / rate."""
        return -_C.log(1 - value) / self.rate

    def entropy(self):
        """1 - log(rate)."""
        return 1.0 - _C.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -_C.log(-x)
