"""torch.distributions.Categorical for graft.

Sampling draws with graft.multinomial (with replacement), as PyTorch's Categorical does; a
category of probability 0 is never drawn. The distribution is PyTorch's; the values drawn for a
seed differ from PyTorch's (graft's generator is not PyTorch's)."""
from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import broadcast_tensors, finfo_min, lazy_property, logits_to_probs, numel, probs_to_logits

__all__ = ["Categorical"]

_NAN = float("nan")


class Categorical(Distribution):
    """A categorical distribution over {0, ..., K-1}, given by ``probs`` (normalised over the last
    dimension) or ``logits`` (unnormalised log-probabilities), not both."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            # Normalize
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameter expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = Size(tuple(batch_shape) + (self._num_events,))
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. K-1."""
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """Normalised log-probabilities (from clamped probs when given probs)."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """The probabilities (softmax of the logits when given logits)."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._param.size()

    @property
    def mean(self):
        """NaN (a categorical distribution has no mean), shaped like the batch."""
        return _C.full(tuple(self._extended_shape()), _NAN, dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        """The most probable category."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN, shaped like the batch."""
        return _C.full(tuple(self._extended_shape()), _NAN, dtype=self.probs.dtype, device=self.probs.device)

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
        values = _C.arange(self._num_events, dtype=_C.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
