"""torch.distributions.Uniform for graft."""
import math

from .. import _C
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin
from .distribution import Distribution

__all__ = ["Uniform"]


class Uniform(ParamsMixin, Distribution):
    """The uniform distribution on the half-open interval [low, high). ``rsample`` is
    differentiable in both bounds."""

    arg_constraints = {"low": constraints.dependent(is_discrete=False, event_dim=0),
                       "high": constraints.dependent(is_discrete=False, event_dim=0)}
    has_rsample = True
    _param_names = ("low", "high")

    @property
    def mean(self):
        """(high + low) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self):
        """NaN (every point of the interval is a mode)."""
        return math.nan * self.high

    @property
    def stddev(self):
        """(high - low) / sqrt(12)."""
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        """(high - low) ** 2 / 12."""
        return (self.high - self.low).pow(2) / 12

    def __init__(self, low, high, validate_args=None):
        super().__init__(self._broadcast_params(low=low, high=high), validate_args=validate_args)
        if self._validate_args and not _C.lt(self.low, self.high).all():
            raise ValueError("Uniform is not defined when low>= high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """The interval [low, high]."""
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=Size()):
        """low + u * (high - low) with u uniform in [0, 1)."""
        shape = self._extended_shape(sample_shape)
        rand = _C.rand(tuple(shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        """-log(high - low) inside [low, high), -inf outside."""
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return _C.log(lb.mul(ub)) - _C.log(self.high - self.low)

    def cdf(self, value):
        """(value - low) / (high - low), clamped into [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        """value * (high - low) + low."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """log(high - low)."""
        return _C.log(self.high - self.low)
