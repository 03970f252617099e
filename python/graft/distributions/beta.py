"""torch.distributions.Beta for graft: a two-component Dirichlet, as PyTorch's."""
from numbers import Real

from .. import _C
from . import constraints
from ._params import ParamsMixin
from ._special import lgamma
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ParamsMixin, ExponentialFamily):
    """The beta distribution on [0, 1] of concentrations ``concentration1`` (alpha) and
    ``concentration0`` (beta). ``rsample`` is differentiable in both (see Dirichlet)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _inner_dists = ("_dirichlet",)

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Real) and isinstance(concentration0, Real):
            concentration1_concentration0 = _C.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            concentration1_concentration0 = _C.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_concentration0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        """alpha / (alpha + beta)."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        """The Dirichlet's mode's first component."""
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        """alpha beta / ((alpha + beta) ** 2 (alpha + beta + 1))."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        """The first component of the Dirichlet's draws."""
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _C.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        """The Dirichlet's entropy."""
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        """alpha."""
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        """beta."""
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
