"""torch.distributions.transforms for graft: invertible transforms with log-abs-det-Jacobians, for
TransformedDistribution and the constraint registry. Covered: Transform (and ``.inv``),
ComposeTransform, identity_transform, IndependentTransform, ReshapeTransform, ExpTransform,
PowerTransform, SigmoidTransform, SoftplusTransform, TanhTransform, AbsTransform,
AffineTransform, SoftmaxTransform, StickBreakingTransform, with PyTorch's caching (cache_size 0
or 1), signs, shapes and equality."""
import functools
import math
import numbers
import operator
import weakref

from .. import _C
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from .utils import broadcast_all, broadcast_shapes, finfo_eps, finfo_tiny, lazy_property, numel, sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "TanhTransform", "Transform", "identity_transform"]


class Transform:
    """An invertible (or pseudo-invertible) map with a computable log |det J|. Subclasses give
    ``_call`` and/or ``_inverse``, ``domain``/``codomain`` constraints, and (bijective ones)
    ``log_abs_det_jacobian``. ``cache_size=1`` memoizes the latest (x, y) pair."""

    bijective = False

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass  # no caching
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        """The event dimension of domain and codomain (when they agree)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``t.inv.inv is t``)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        """The sign of the Jacobian's determinant (bijective univariate transforms)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """This transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        return self._with_cache(cache_size)

    def _with_cache(self, cache_size):
        """A copy of this transform with another cache size."""
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        """y = t(x)."""
        return self._through_cache(x, forward=True)

    def _inv_call(self, y):
        return self._through_cache(y, forward=False)

    def _through_cache(self, value, forward):
        """t(value) (``forward``) or t^-1(value), memoizing the latest (x, y) pair when cache_size is 1."""
        compute = self._call if forward else self._inverse
        if self._cache_size == 0:
            return compute(value)
        known, other = self._cached_x_y if forward else self._cached_x_y[::-1]
        if value is known:
            return other
        result = compute(value)
        self._cached_x_y = (value, result) if forward else (result, value)
        return result

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| at (x, y = t(x))."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The output shape for an input shape (the same, by default)."""
        return shape

    def inverse_shape(self, shape):
        """The input shape for an output shape (the same, by default)."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (``t.inv``)."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self._inv)})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _adjusted_event_dim(parts, forward):
    """The event dimension a chain of parts needs (the largest any part sees)."""
    if forward:
        event_dim = parts[0].domain.event_dim
        for part in parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        return event_dim
    event_dim = parts[-1].codomain.event_dim
    for part in reversed(parts):
        event_dim += part.domain.event_dim - part.codomain.event_dim
        event_dim = max(event_dim, part.domain.event_dim)
    return event_dim


class ComposeTransform(Transform):
    """The composition of ``parts`` (applied first to last)."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = _adjusted_event_dim(self.parts, forward=False)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = _adjusted_event_dim(self.parts, forward=True)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def _with_cache(self, cache_size):
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return _C.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(sum_rightmost(part.log_abs_det_jacobian(x_in, y_out), event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "(\n    " + ",\n    ".join([repr(p) for p in self.parts]) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dimensions summed out of
    its log |det J|."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def _with_cache(self, cache_size):
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{self.__class__.__name__}({repr(self.base_transform)}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` of a tensor to ``out_shape`` (unit Jacobian)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if numel(self.in_shape) != numel(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _with_cache(self, cache_size):
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        return _reshape_shape(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _reshape_shape(shape, self.out_shape, self.in_shape)


def _reshape_shape(shape, from_shape, to_shape):
    if len(shape) < len(from_shape):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(from_shape)
    if Size(shape[cut:]) != from_shape:
        raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {from_shape}")
    return Size(tuple(shape[:cut]) + tuple(to_shape))


class _ParameterFreeTransform(Transform):
    """A transform without parameters: equal to every instance of its class, the one that derives
    from this directly (as PyTorch's ``ExpTransform.__eq__`` is ``isinstance(other, ExpTransform)``,
    also for subclasses)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if _ParameterFreeTransform in cls.__bases__:
            cls._equal_to = cls

    def __eq__(self, other):
        return isinstance(other, self._equal_to)


class ExpTransform(_ParameterFreeTransform):
    """y = exp(x)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent (on positive x)."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def _with_cache(self, cache_size):
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    return _C.clamp(_C.sigmoid(x), min=finfo_tiny(x.dtype), max=1.0 - finfo_eps(x.dtype))


class SigmoidTransform(_ParameterFreeTransform):
    """y = 1 / (1 + exp(-x)), x = logit(y) (clipped into the open unit interval)."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        y = y.clamp(min=finfo_tiny(y.dtype), max=1.0 - finfo_eps(y.dtype))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(_ParameterFreeTransform):
    """y = log(1 + exp(x)) (linear above 20)."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(_ParameterFreeTransform):
    """y = tanh(x) (the inverse is not clamped: use cache_size=1 near +-1)."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return _C.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) in a stable form
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_ParameterFreeTransform):
    """y = |x| (not bijective; the inverse is the identity)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, pointwise, with ``event_dim`` rightmost dimensions summed in log |det J|."""

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    codomain = domain

    def _with_cache(self, cache_size):
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, numbers.Number) and isinstance(theirs, numbers.Number):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = _C.full_like(x, math.log(abs(scale)))
        else:
            result = _C.abs(scale).log()
        if self.event_dim:
            result = result.view(tuple(result.size()[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape


def _vector_shape(shape):
    """``shape``, checked to have a dimension for the vectors."""
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(_ParameterFreeTransform):
    """y = exp(x) normalised over the last dimension (onto the simplex; not bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _vector_shape(shape)

    inverse_shape = forward_shape


def _stick_breaking_offset(x, k):
    """log of (k, k - 1, ..., 1) for the last dimension (of size k) of x."""
    return _C.arange(k, 0, -1, dtype=x.dtype, device=x.device).log()


class StickBreakingTransform(_ParameterFreeTransform):
    """Unconstrained vectors of size K - 1 onto the K-simplex by stick breaking (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        shifted = x - _stick_breaking_offset(x, x.shape[-1])
        z = _clipped_sigmoid(shifted)
        # the cumulative product of 1 - z, as exp(cumsum(log(1 - z)))
        z_cumprod = _C.exp(_C.cumsum(F.logsigmoid(-shifted), -1))
        ones = _C.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype, device=x.device)
        return _C.cat([z, ones], -1) * _C.cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        sf = 1 - _C.cumsum(y_crop, -1)
        # clamped: sf can round to <= 0 when y[..., -1] ~ 0
        sf = _C.clamp(sf, min=finfo_tiny(y.dtype))
        return y_crop.log() - sf.log() + _stick_breaking_offset(y, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_breaking_offset(x, x.shape[-1])
        # 1 - sigmoid(x) = exp(-x) sigmoid(x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _vector_shape(shape)
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        _vector_shape(shape)
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))
