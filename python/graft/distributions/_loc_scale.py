"""The location-scale family shared by Normal, Laplace, Cauchy and StudentT: X = loc + scale * Z for
Z of the standard member (loc 0, scale 1). ``rsample`` is loc + scale * (standard draws), hence
differentiable in loc and scale; the CDF and its inverse are the standard member's, standardized."""
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin

__all__ = ["LocCenteredMixin", "LocScaleMixin"]


class LocCenteredMixin:
    """Mixin (before the Distribution base) of a distribution whose mean and mode are its ``loc``
    (the location-scale family, MultivariateNormal, LowRankMultivariateNormal)."""

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc


class LocScaleMixin(LocCenteredMixin, ParamsMixin):
    """Mixin (listed before the Distribution base) of a location-scale distribution. Subclasses give
    ``_standard_rsample(sample_shape)`` (standard draws shaped sample_shape + batch_shape) and, where
    they have them, ``_standard_cdf``, ``_standard_icdf`` and ``_standard_entropy`` (a number)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(self._broadcast_params(loc=loc, scale=scale), validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        """loc + scale * (standard draws): differentiable in loc and scale."""
        return self.loc + self.scale * self._standard_rsample(sample_shape)

    def _standardize(self, value):
        """(value - loc) / scale."""
        return (value - self.loc) / self.scale

    def cdf(self, value):
        """The standard member's CDF at the standardized ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return self._standard_cdf(self._standardize(value))

    def icdf(self, value):
        """loc + scale * (the standard member's quantile at ``value``)."""
        return self.loc + self.scale * self._standard_icdf(value)

    def entropy(self):
        """The standard member's entropy + log(scale)."""
        return self._standard_entropy + self.scale.log()

    def _standard_rsample(self, sample_shape):
        raise NotImplementedError

    def _standard_cdf(self, value):
        raise NotImplementedError

    def _standard_icdf(self, value):
        raise NotImplementedError

    @property
    def _standard_entropy(self):
        raise NotImplementedError
