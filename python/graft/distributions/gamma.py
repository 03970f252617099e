"""torch.distributions.Gamma for graft.

Sampling is Marsaglia and Tsang's method over graft's generator (``_sampling``); ``rsample`` is
differentiable in both parameters, in concentration through the implicit reparameterisation
gradient (``_special.standard_gamma_log_grad``, accurate to ~1e-12 where PyTorch's
``_standard_gamma_grad`` approximates to ~1e-3)."""
from .. import _C
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin
from ._sampling import log_standard_gamma
from ._special import digamma, lgamma, xlogy
from .exp_family import ExponentialFamily
from .utils import finfo_tiny

__all__ = ["Gamma"]


class Gamma(ParamsMixin, ExponentialFamily):
    """The gamma distribution of shape ``concentration`` (alpha) and ``rate`` (beta, 1 / scale)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0
    _param_names = ("concentration", "rate")

    @property
    def mean(self):
        """concentration / rate."""
        return self.concentration / self.rate

    @property
    def mode(self):
        """(concentration - 1) / rate, clamped at 0."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        """concentration / rate ** 2."""
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        batch_shape = self._broadcast_params(concentration=concentration, rate=rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        """Standard gamma draws / rate (at least the dtype's tiny), differentiable in both."""
        shape = tuple(self._extended_shape(sample_shape))
        value = _C.exp(log_standard_gamma(self.concentration.expand(shape))) / self.rate.expand(shape)
        return value.clamp(min=finfo_tiny(value.dtype))

    def log_prob(self, value):
        """The log density at ``value`` (a tensor or number)."""
        if not isinstance(value, _C.Tensor):
            value = _C.tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        """alpha - log(beta) + lgamma(alpha) + (1 - alpha) digamma(alpha)."""
        return (self.concentration - _C.log(self.rate) + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * _C.log(-y.reciprocal())
