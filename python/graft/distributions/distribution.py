"""torch.distributions.Distribution for graft: batch and event shapes, PyTorch's argument and
sample validation (``validate_args``; on by default, as ``__debug__``), sampling entry points."""
import warnings

from .. import _C
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The abstract base class of probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Sets whether distributions validate their arguments by default (a bool)."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. "
                              + "Please set `arg_constraints = {}` or initialize the distribution "
                              + "with `validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not valid.all():
                    raise ValueError(f"Expected parameter {param} "
                                     f"({type(value).__name__} of shape {tuple(value.shape)}) "
                                     f"of distribution {repr(self)} "
                                     f"to satisfy the constraint {repr(constraint)}, "
                                     f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with the parameters expanded to ``batch_shape`` (views; no checks)."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint each parameter satisfies, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean."""
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        """The mode."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance."""
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        """The standard deviation."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Samples of shape ``sample_shape + batch_shape + event_shape`` (not differentiable)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Reparameterized samples (differentiable in the parameters) where the distribution has them."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))``, with PyTorch's deprecation warning."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        """The log of the probability density/mass function at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """The values of a discrete distribution's support."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, batched over batch_shape."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return _C.exp(self.entropy())

    def _extended_shape(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _constant(self, value, like):
        """``value`` everywhere, shaped batch_shape + event_shape, with the dtype and device of ``like``."""
        return _C.full(tuple(self._extended_shape()), value, dtype=like.dtype, device=like.device)

    def _enumerated(self, values, expand):
        """The values of a discrete support, along a new leftmost dimension: shaped (n,) + batch_shape
        (``expand``) or (n, 1, ..., 1)."""
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    def _validate_sample(self, value):
        """PyTorch's checks of a value to score: a tensor, the event shape on the right, a shape
        broadcastable with batch_shape + event_shape, within the support."""
        if not isinstance(value, _C.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable "
                          + "sample validation. Please initialize the distribution with "
                          + "`validate_args=False` to turn off validation.")
            return
        assert support is not None
        valid = support.check(value)
        if not valid.all():
            raise ValueError("Expected value argument "
                             f"({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({repr(support)}) "
                             f"of the distribution {repr(self)}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args = [(p, self.__dict__[p]) for p in param_names]
        args_string = ", ".join([f"{p}: {v if v.numel() == 1 else v.size()}" for p, v in args])
        return self.__class__.__name__ + "(" + args_string + ")"
