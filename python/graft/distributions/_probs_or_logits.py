"""The ``probs`` / ``logits`` pair shared by Bernoulli, Geometric, Binomial and Categorical: exactly
one is given, the other is computed on first use (a lazy property), and the given one (``_param``)
is kept through ``expand``."""
from ._params import ParamsMixin
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ProbsOrLogitsMixin", "given_param_shape"]


class ProbsOrLogitsMixin(ParamsMixin):
    """Mixin of a distribution given by ``probs`` or ``logits``, not both. ``_binary``: the logits
    are log-odds (sigmoid back to probs), else normalised log-probabilities (softmax)."""

    _param_names = ("probs", "logits")
    _binary = True

    @staticmethod
    def _given(probs, logits):
        """("probs", probs) or ("logits", logits), whichever is given (ValueError unless exactly one)."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        return ("probs", probs) if probs is not None else ("logits", logits)

    def _set_param(self, name, value):
        """Sets the given parameter (``probs`` or ``logits``) and ``_param``."""
        setattr(self, name, value)
        self._param = value

    def _broadcast_probs_or_logits(self, probs, logits, **others):
        """Broadcasts the given one of probs and logits with ``others`` (numbers or tensors, before it)
        into attributes; returns the batch shape (as ``_broadcast_params``)."""
        name, value = self._given(probs, logits)
        batch_shape = self._broadcast_params(**others, **{name: value})
        self._param = getattr(self, name)
        return batch_shape

    @lazy_property
    def logits(self):
        """The log-odds or normalised log-probabilities (from clamped probs when given probs)."""
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        """The probabilities (sigmoid or softmax of the logits when given logits)."""
        return logits_to_probs(self.logits, is_binary=self._binary)

    def _expand_extra(self, new):
        new._param = new.logits if "logits" in self.__dict__ else new.probs


def _param_shape(self):
    """The shape of the given parameter."""
    return self._param.size()


# ``param_shape``, for the distributions whose PyTorch twins have it (``param_shape = given_param_shape``)
given_param_shape = property(_param_shape)
