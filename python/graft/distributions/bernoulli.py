"""torch.distributions.Bernoulli for graft."""
from numbers import Number

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]

_NAN = float("nan")


class Bernoulli(ExponentialFamily):
    """The Bernoulli distribution, given by ``probs`` (of 1) or ``logits`` (log-odds), not both."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
            new._param = new.logits
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """probs."""
        return self.probs

    @property
    def mode(self):
        """1 where probs > 0.5, 0 below, NaN at 0.5."""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        mode[self.probs == 0.5] = _NAN
        return mode

    @property
    def variance(self):
        """probs * (1 - probs)."""
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        """The log-odds (from clamped probs when given probs)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of 1 (sigmoid of the logits when given logits)."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._param.size()

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
        values = _C.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (_C.log(self.probs / (1 - self.probs)),)

    def _log_normalizer(self, x):
        return _C.log(1 + _C.exp(x))
