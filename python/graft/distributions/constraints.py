"""torch.distributions.constraints for graft: the constraints a distribution's parameters and
samples satisfy, with PyTorch's ``check`` results and reprs (the ones graft's distributions
use, and their usual companions), the matrix ones (lower_triangular, lower_cholesky,
corr_cholesky, square, symmetric, positive_semidefinite, positive_definite) included."""
from .. import _C, linalg
from .utils import finfo_eps

__all__ = ["Constraint", "boolean", "corr_cholesky", "dependent", "dependent_property", "greater_than",
           "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "nonnegative", "nonnegative_integer", "one_hot",
           "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real", "real_vector",
           "simplex", "square", "symmetric", "unit_interval"]


class Constraint:
    """A region over which a variable is valid. ``check(value)`` returns a bool tensor of the
    batch shape (``event_dim`` rightmost dimensions are reduced over)."""

    is_discrete = False  # Default to continuous.
    event_dim = 0  # Default to univariate.

    def check(self, value):
        """A bool tensor saying, per event, whether ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other variables (``check`` refuses)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """A dependent constraint with these static attributes."""
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent constraint (validation skips those)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: a distribution's ``support`` that depends
    on its parameters (``@constraints.dependent_property(is_discrete=..., event_dim=...)``)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        super().__init__(fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` with ``reinterpreted_batch_ndims`` more event dimensions (checked all
    together)."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        assert isinstance(base_constraint, Constraint)
        assert isinstance(reinterpreted_batch_ndims, int)
        assert reinterpreted_batch_ndims >= 0
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        result = result.reshape(tuple(result.shape[:result.dim() - self.reinterpreted_batch_ndims]) + (-1,))
        return result.all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}({repr(self.base_constraint)}, {self.reinterpreted_batch_ndims})"


class _Boolean(Constraint):
    """0 or 1."""

    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    """One-hot vectors (the last dimension): 0s and a single 1."""

    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = (value == 0) | (value == 1)
        is_normalized = value.sum(-1).eq(1)
        return is_boolean.all(-1) & is_normalized


class _Bounded(Constraint):
    """A constraint given by the bounds named in ``_bounds`` (attributes, listed by the repr)."""

    _bounds = ("lower_bound", "upper_bound")

    def __repr__(self):
        bounds = ", ".join(f"{name}={getattr(self, name)}" for name in self._bounds)
        return self.__class__.__name__[1:] + f"({bounds})"


class _IntegerInterval(_Bounded):
    """Integers in [lower_bound, upper_bound]."""

    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)


class _IntegerGreaterThan(_Bounded):
    """Integers >= lower_bound."""

    is_discrete = True
    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Real(Constraint):
    """The extended reals (NaN excluded)."""

    def check(self, value):
        return value == value  # False for NANs.


class _GreaterThan(_Bounded):
    """Values > lower_bound."""

    _bounds = ("lower_bound",)

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value


class _GreaterThanEq(_GreaterThan):
    """Values >= lower_bound."""

    def check(self, value):
        return self.lower_bound <= value


class _LessThan(_Bounded):
    """Values < upper_bound."""

    _bounds = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound


class _Interval(_Bounded):
    """Values in [lower_bound, upper_bound]."""

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    """Values in [lower_bound, upper_bound)."""

    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    """Nonnegative vectors (the last dimension) summing to 1 (within 1e-6)."""

    event_dim = 1

    def check(self, value):
        return _C.all(value >= 0, dim=-1) & ((value.sum(-1) - 1).abs() < 1e-6)


def _isclose(a, b, rtol=1e-05, atol=1e-06):
    """torch.isclose(a, b, rtol, atol) of float tensors (NaNs unequal)."""
    error = (a - b).abs()
    return (a == b) | (error.isfinite() & (error <= atol + (rtol * b).abs()))


def _each_matrix(value, test):
    """``test(matrix)`` (a bool) of each matrix of ``value`` (the last two dims), as a bool tensor of
    the batch shape."""
    n, m = value.shape[-2:]
    flat = value.reshape(-1, n, m)
    results = [test(flat[i]) for i in range(flat.shape[0])]
    return _C.tensor(results, dtype=_C.bool, device=value.device).reshape(tuple(value.shape[:-2]))


def _has_cholesky(value):
    """Whether each matrix of ``value`` has a Cholesky factorization (torch.linalg.cholesky_ex's
    ``info == 0``): the whole batch at once, matrix by matrix where that fails."""
    try:
        linalg.cholesky(value)
    except linalg.LinAlgError:
        return _each_matrix(value, _cholesky_succeeds)
    return _C.full(tuple(value.shape[:-2]), True, dtype=_C.bool, device=value.device)


def _cholesky_succeeds(matrix):
    """Whether one matrix has a Cholesky factorization."""
    try:
        linalg.cholesky(matrix)
    except linalg.LinAlgError:
        return False
    return True


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""

    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with positive diagonals."""

    event_dim = 2

    def check(self, value):
        lower_triangular = _LowerTriangular().check(value)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return lower_triangular & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower-triangular square matrices with positive diagonals and rows of unit length (within
    10 n eps of the dtype)."""

    event_dim = 2

    def check(self, value):
        tol = finfo_eps(value.dtype) * value.size(-1) * 10  # 10 is an adjustable fudge factor
        row_norm = linalg.norm(value.detach(), dim=-1)
        unit_row_norm = (row_norm - 1.0).abs().le(tol).all(dim=-1)
        return _LowerCholesky().check(value) & unit_row_norm


class _Square(Constraint):
    """Square matrices."""

    event_dim = 2

    def check(self, value):
        return _C.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=_C.bool,
                       device=value.device)


class _Symmetric(_Square):
    """Symmetric square matrices (to torch.isclose with atol 1e-6)."""

    def check(self, value):
        square_check = super().check(value)
        if not square_check.all():
            return square_check
        return _isclose(value, value.mT).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices with no negative eigenvalue."""

    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factorization."""

    def check(self, value):
        sym_check = super().check(value)
        if not sym_check.all():
            return sym_check
        return _has_cholesky(value)


# the public instances and classes, as torch.distributions.constraints names them
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
