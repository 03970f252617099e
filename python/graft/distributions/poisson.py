"""torch.distributions.Poisson for graft (sampling: ``_sampling.sample_poisson``)."""
from .. import _C
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin
from ._sampling import sample_poisson
from ._special import lgamma, xlogy
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ParamsMixin, ExponentialFamily):
    """The Poisson distribution of rate ``rate``: P(k) = rate^k e^-rate / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _param_names = ("rate",)

    @property
    def mean(self):
        """rate."""
        return self.rate

    @property
    def mode(self):
        """floor(rate)."""
        return self.rate.floor()

    @property
    def variance(self):
        """rate."""
        return self.rate

    def __init__(self, rate, validate_args=None):
        super().__init__(self._broadcast_params(rate=rate), validate_args=validate_args)

    def sample(self, sample_shape=Size()):
        """Counts (floats of rate's dtype) of shape sample_shape + batch_shape."""
        shape = tuple(self._extended_shape(sample_shape))
        return sample_poisson(self.rate.expand(shape))

    def log_prob(self, value):
        """k log(rate) - rate - log(k!)."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self):
        return (_C.log(self.rate),)

    def _log_normalizer(self, x):
        return _C.exp(x)
