"""torch.distributions.Geometric for graft."""
from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._probs_or_logits import ProbsOrLogitsMixin
from .distribution import Distribution
from .utils import broadcast_all, finfo_tiny

__all__ = ["Geometric"]


class Geometric(ProbsOrLogitsMixin, Distribution):
    """The number of failures before the first success in Bernoulli trials of success probability
    ``probs`` (in (0, 1]) or log-odds ``logits``, not both."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(self._broadcast_probs_or_logits(probs, logits), validate_args=validate_args)
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
