"""torch.distributions.LogNormal for graft: exp of a Normal."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """exp(X) for X ~ Normal(loc, scale). ``rsample`` is differentiable in both."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with loc and scale expanded to ``batch_shape``."""
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The mean of the log."""
        return self.base_dist.loc

    @property
    def scale(self):
        """The standard deviation of the log."""
        return self.base_dist.scale

    @property
    def mean(self):
        """exp(loc + scale ** 2 / 2)."""
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        """exp(loc - scale ** 2)."""
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        """(exp(scale ** 2) - 1) exp(2 loc + scale ** 2)."""
        return (self.scale.pow(2).exp() - 1) * (2 * self.loc + self.scale.pow(2)).exp()

    def entropy(self):
        """The Normal's entropy + loc."""
        return self.base_dist.entropy() + self.loc
