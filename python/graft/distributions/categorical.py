"""torch.distributions.Categorical for graft.

Sampling draws with graft.multinomial (with replacement), as PyTorch's Categorical does; a
category of probability 0 is never drawn. The distribution is PyTorch's; the values drawn for a
seed differ from PyTorch's (graft's generator is not PyTorch's)."""
import math

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from ._probs_or_logits import ProbsOrLogitsMixin, given_param_shape
from .distribution import Distribution
from .utils import broadcast_tensors, finfo_min, numel

__all__ = ["Categorical"]


class Categorical(ProbsOrLogitsMixin, Distribution):
    """A categorical distribution over {0, ..., K-1}, given by ``probs`` (normalised over the last
    dimension) or ``logits`` (unnormalised log-probabilities), not both."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    param_shape = given_param_shape
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, param = self._given(probs, logits)
        if param.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self._set_param("probs", probs / probs.sum(-1, keepdim=True))
        else:  # normalised
            self._set_param("logits", logits - logits.logsumexp(dim=-1, keepdim=True))
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def _expand_extra(self, new):
        super()._expand_extra(new)
        new._num_events = self._num_events

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. K-1."""
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        """NaN (a categorical distribution has no mean), shaped like the batch."""
        return self._constant(math.nan, self.probs)

    @property
    def mode(self):
        """The most probable category."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN, shaped like the batch."""
        return self._constant(math.nan, self.probs)

    def sample(self, sample_shape=Size()):
        """int64 category indices of shape sample_shape + batch_shape."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = _C.multinomial(probs_2d, numel(sample_shape), True).t()  # (n, batch)
            return samples_2d.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        """The log-probability of the categories in ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        """-sum(p log p) over the categories."""
        min_real = finfo_min(self.logits.dtype)
        logits = _C.clamp(self.logits, min=min_real)
        p_log_p = logits * self.probs
        return -p_log_p.sum(-1)

    def enumerate_support(self, expand=True):
        """The categories 0 .. K-1 (int64), shaped (K,) + batch_shape (expanded) or (K, 1, ..., 1)."""
        return self._enumerated(_C.arange(self._num_events, dtype=_C.int64, device=self._param.device), expand)
