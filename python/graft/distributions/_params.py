"""The parameter plumbing that PyTorch's distributions each write out and graft's share: parameters
given as numbers or tensors broadcast together into attributes (the batch shape is () when all are
numbers, else their common shape), and ``expand`` over those parameters and inner distributions."""
from numbers import Number

from .._tensor import Size
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["ParamsMixin"]


class ParamsMixin:
    """Mixin (listed before the Distribution base) of a distribution whose state is the tensors named
    in ``_param_names`` (each shaped batch_shape + trailing dimensions of its own; those not set, such
    as a lazy ``logits`` not computed yet, are skipped) and the distributions named in
    ``_inner_dists`` (of the same batch shape). It gives ``expand``, with PyTorch's check of
    subclasses that define their own ``__init__`` against the class that took the mixin in."""

    _param_names = ()
    _inner_dists = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # the class PyTorch's expand names: the distribution taking a mixin of this kind in directly
        if issubclass(cls, Distribution) and any(issubclass(base, ParamsMixin) and not issubclass(base, Distribution)
                                                 for base in cls.__bases__):
            cls._expand_class = cls

    def _broadcast_params(self, **params):
        """Broadcasts the parameters (numbers or tensors, by name) together into attributes of those
        names; returns the batch shape: () when all are numbers, else their common shape."""
        values = broadcast_all(*params.values())
        for name, value in zip(params, values):
            setattr(self, name, value)
        if all(isinstance(value, Number) for value in params.values()):
            return Size()
        return values[0].size()

    def expand(self, batch_shape, _instance=None):
        """The distribution with its parameters expanded to ``batch_shape`` (views; no checks)."""
        new = self._get_checked_instance(self._expand_class, _instance)
        batch_shape = Size(batch_shape)
        for name in self._param_names:
            if name in self.__dict__:
                param = self.__dict__[name]
                own_dims = tuple(param.shape[len(self._batch_shape):])
                setattr(new, name, param.expand(tuple(batch_shape) + own_dims))
        for name in self._inner_dists:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        self._expand_extra(new)
        super(ParamsMixin, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_extra(self, new):
        """Sets on ``new`` (the expanded copy) the rest of the state it needs (nothing, by default)."""
