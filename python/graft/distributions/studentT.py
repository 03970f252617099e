"""torch.distributions.StudentT for graft."""
import math

from .. import _C
from .._tensor import Size
from . import constraints
from ._special import digamma, lgamma
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, standard_normal

__all__ = ["StudentT"]

_INF = float("inf")
_NAN = float("nan")


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.
    ``rsample`` (X / sqrt(Z / df), X normal, Z chi-squared) is differentiable in all three."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self):
        """loc (NaN where df <= 1)."""
        m = self.loc.clone()
        m[self.df <= 1] = _NAN
        return m

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """scale ** 2 df / (df - 2) where df > 2, inf for 1 < df <= 2, NaN below."""
        m = self.df.clone()
        big = self.df > 2
        m[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        m[(self.df <= 2) & (self.df > 1)] = _INF
        m[self.df <= 1] = _NAN
        return m

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        batch_shape = self.df.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with df, loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        """loc + scale X / sqrt(Z / df), X ~ Normal(0, 1), Z ~ Chi2(df)."""
        shape = self._extended_shape(sample_shape)
        x = standard_normal(shape, self.df.dtype, self.df.device)
        z = self._chi2.rsample(sample_shape)
        y = x * _C.rsqrt(z / self.df)
        return self.loc + self.scale * y

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
