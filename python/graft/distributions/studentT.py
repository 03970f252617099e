"""torch.distributions.StudentT for graft."""
import math

from .. import _C
from . import constraints
from ._loc_scale import LocScaleMixin
from ._special import digamma, lgamma
from .chi2 import Chi2
from .distribution import Distribution
from .utils import standard_normal

__all__ = ["StudentT"]


class StudentT(LocScaleMixin, Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.
    ``rsample`` (X / sqrt(Z / df), X normal, Z chi-squared) is differentiable in all three."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    _param_names = ("df", "loc", "scale")
    _inner_dists = ("_chi2",)
    # as PyTorch's, no CDF nor quantile function
    cdf = Distribution.cdf
    icdf = Distribution.icdf

    @property
    def mean(self):
        """loc (NaN where df <= 1)."""
        m = self.loc.clone()
        m[self.df <= 1] = math.nan
        return m

    @property
    def variance(self):
        """scale ** 2 df / (df - 2) where df > 2, inf for 1 < df <= 2, NaN below."""
        m = self.df.clone()
        big = self.df > 2
        m[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        m[(self.df <= 2) & (self.df > 1)] = math.inf
        m[self.df <= 1] = math.nan
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        batch_shape = self._broadcast_params(df=df, loc=loc, scale=scale)
        self._chi2 = Chi2(self.df)
        Distribution.__init__(self, batch_shape, validate_args=validate_args)

    def _standard_rsample(self, sample_shape):
        """X / sqrt(Z / df), X ~ Normal(0, 1), Z ~ Chi2(df)."""
        x = standard_normal(self._extended_shape(sample_shape), self.df.dtype, self.df.device)
        z = self._chi2.rsample(sample_shape)
        return x * _C.rsqrt(z / self.df)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * _C.log1p(y ** 2.0 / self.df) - z

    def entropy(self):
        """The entropy, batched over batch_shape."""
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
