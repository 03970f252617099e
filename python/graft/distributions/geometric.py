"""torch.distributions.Geometric for graft."""
from numbers import Number

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo_tiny, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    """The number of failures before the first success in Bernoulli trials of success probability
    ``probs`` (in (0, 1]) or log-odds ``logits``, not both."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        probs_or_logits = probs if probs is not None else logits
        batch_shape = Size() if isinstance(probs_or_logits, Number) else probs_or_logits.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs must be positive too, beyond unit_interval
            value = self.probs
            valid = value > 0
            if not valid.all():
                invalid_value = value.detach()[~valid]
                raise ValueError("Expected parameter probs "
                                 f"({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {repr(self)} "
                                 f"to be positive but found invalid values:\n{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """1 / probs - 1."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        """0."""
        return _C.zeros_like(self.probs)

    @property
    def variance(self):
        """(1 / probs - 1) / probs."""
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        """The log-odds (from clamped probs when given probs)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The success probability (sigmoid of the logits when given logits)."""
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()):
        """floor(log(u) / log(1 - probs)), u uniform in [tiny, 1) (floats of probs' dtype)."""
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            probs = self.probs
            u = _C.rand(shape, dtype=probs.dtype, device=probs.device).clamp(min=finfo_tiny(probs.dtype))
            return (u.log() / (-probs).log1p()).floor()

    def log_prob(self, value):
        """k log(1 - p) + log(p) (0 at k = 0 for p = 1)."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        """The Bernoulli entropy / probs, through the logits."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
