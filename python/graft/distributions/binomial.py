"""torch.distributions.Binomial for graft (sampling: ``_sampling.sample_binomial``)."""
from .. import _C
from .._tensor import Size
from . import constraints
from ._probs_or_logits import ProbsOrLogitsMixin, given_param_shape
from ._sampling import sample_binomial
from ._special import lgamma
from .distribution import Distribution

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """clamp(x, min=0) with gradient 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ProbsOrLogitsMixin, Distribution):
    """The number of successes in ``total_count`` Bernoulli trials of success probability ``probs``
    or log-odds ``logits`` (not both); total_count broadcasts with the parameter."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    param_shape = given_param_shape
    _param_names = ("total_count", "probs", "logits")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = self._broadcast_probs_or_logits(probs, logits, total_count=total_count)
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. total_count."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        """total_count probs."""
        return self.total_count * self.probs

    @property
    def mode(self):
        """floor((total_count + 1) probs), at most total_count."""
        return _C.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self):
        """total_count probs (1 - probs)."""
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """Counts (floats of the parameter's dtype) of shape sample_shape + batch_shape."""
        shape = tuple(self._extended_shape(sample_shape))
        return sample_binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """log C(n, k) + k logit - n log(1 + e^logit), in a form stable for any logit."""
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        # n log(1 + e^logit) = n max(logit, 0) + n log1p(e^-|logit|)
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * _C.log1p(_C.exp(-_C.abs(self.logits))) - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def _common_total_count(self, method):
        """The total count, as an int, where all agree (NotImplementedError naming ``method`` if not)."""
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
        return total_count

    def entropy(self):
        """-sum p log p over the support (a common total_count only)."""
        self._common_total_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(_C.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        """The values 0 .. total_count, shaped (n + 1,) + batch_shape (expanded) or (n + 1, 1, ..., 1)."""
        total_count = self._common_total_count("enumerate_support")
        values = _C.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        return self._enumerated(values, expand)
