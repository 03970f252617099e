"""torch.distributions.Bernoulli for graft."""
import math

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._probs_or_logits import ProbsOrLogitsMixin, given_param_shape
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(ProbsOrLogitsMixin, ExponentialFamily):
    """The Bernoulli distribution, given by ``probs`` (of 1) or ``logits`` (log-odds), not both."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0
    param_shape = given_param_shape

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._broadcast_probs_or_logits(probs, logits), validate_args=validate_args)

    @property
    def mean(self):
        """probs."""
        return self.probs

    @property
    def mode(self):
        """1 where probs > 0.5, 0 below, NaN at 0.5."""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        """probs * (1 - probs)."""
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """0./1. samples (the parameter's dtype) of shape sample_shape + batch_shape."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = self.probs.expand(shape)
            return (_C.rand(tuple(shape), dtype=probs.dtype, device=probs.device) < probs).to(probs.dtype)

    def log_prob(self, value):
        """value * log(p) + (1 - value) * log(1 - p), through the logits."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """The entropy, through the logits."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        """The values 0. and 1., shaped (2,) + batch_shape (expanded) or (2, 1, ..., 1)."""
        return self._enumerated(_C.arange(2, dtype=self._param.dtype, device=self._param.device), expand)

    @property
    def _natural_params(self):
        return (_C.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return _C.log(1 + _C.exp(x))
