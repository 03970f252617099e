"""torch.distributions.OneHotCategorical for graft: Categorical with one-hot coded values."""
from .. import _C
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from ._params import ParamsMixin
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical"]


class OneHotCategorical(ParamsMixin, Distribution):
    """A categorical distribution over one-hot vectors of size K, given by ``probs`` (normalised over
    the last dimension) or ``logits`` (unnormalised log-probabilities), not both."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True
    _inner_dists = ("_categorical",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, Size(event_shape), validate_args=validate_args)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The normalised probabilities."""
        return self._categorical.probs

    @property
    def logits(self):
        """The normalised log-probabilities."""
        return self._categorical.logits

    @property
    def mean(self):
        """probs."""
        return self._categorical.probs

    @property
    def mode(self):
        """The one-hot vector of the most probable category."""
        probs = self._categorical.probs
        mode = probs.argmax(-1)
        return F.one_hot(mode, num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        """probs (1 - probs)."""
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        """One-hot vectors (probs' dtype) of shape sample_shape + batch_shape + (K,)."""
        sample_shape = Size(sample_shape)
        probs = self._categorical.probs
        num_events = self._categorical._num_events
        indices = self._categorical.sample(sample_shape)
        return F.one_hot(indices, num_events).to(probs.dtype)

    def log_prob(self, value):
        """The log-probability of the category each one-hot vector marks."""
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        """The categorical entropy."""
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        """The K one-hot vectors, shaped (K,) + batch_shape + (K,) (expanded) or (K, 1, ..., 1, K)."""
        n = self.event_shape[0]
        values = _C.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values
