"""torch.distributions.MultivariateNormal for graft.

Everything is computed from the Cholesky factor L of the covariance (``_unbroadcasted_scale_tril``,
kept at the batch shape it was given with): the given ``scale_tril``, graft.linalg.cholesky of a
given covariance, or PyTorch's ``_precision_to_scale_tril`` of a given precision. ``rsample`` is
loc + L eps, differentiable in loc and in the given matrix (through graft's Cholesky and
triangular-solve backwards); ``log_prob`` takes the Mahalanobis distance by triangular solves."""
import math

from .. import _C, linalg
from .._composites.shape import broadcast_shapes
from .._tensor import Size
from . import constraints
from ._batch_linalg import _batch_mahalanobis, _batch_mv, _half_log_det
from ._loc_scale import LocCenteredMixin
from ._params import ParamsMixin
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 without inverting P: from the Cholesky factor of P with its
    rows and columns reversed (PyTorch's construction)."""
    # Ref: https://nbviewer.jupyter.org/gist/fehiepsi/5ef8e09e61604f10607380467eb82006#Precision-to-scale_tril
    Lf = linalg.cholesky(_C.flip(P, (-2, -1)))
    L_inv = _C.transpose(_C.flip(Lf, (-2, -1)), -2, -1)
    Id = _C.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    L = linalg.solve_triangular(L_inv, Id, upper=False)
    return L


def _given_matrices(covariance_matrix, precision_matrix, scale_tril):
    """[(name, matrix)] of the matrices given (not None), in the order of _MATRICES."""
    return [(name, matrix) for name, matrix in zip(_MATRICES, (covariance_matrix, precision_matrix, scale_tril))
            if matrix is not None]


def _scale_tril_of(name, matrix):
    """The lower Cholesky factor of the covariance given as ``matrix`` of parametrization ``name``."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return linalg.cholesky(matrix)
    return _precision_to_scale_tril(matrix)


def _given_matrix(covariance_matrix, precision_matrix, scale_tril):
    """(name, matrix) of the one matrix given (ValueError unless exactly one, or if it has fewer
    than two dimensions), in PyTorch's texts."""
    given = _given_matrices(covariance_matrix, precision_matrix, scale_tril)
    if len(given) != 1:
        raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
    name, matrix = given[0]
    if matrix.dim() < 2:
        what = "scale_tril matrix" if name == "scale_tril" else name
        raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
    return name, matrix


class MultivariateNormal(LocCenteredMixin, ParamsMixin, Distribution):
    """The multivariate normal distribution of mean vector ``loc`` and covariance given by exactly
    one of ``covariance_matrix`` (positive definite), ``precision_matrix`` (its inverse, positive
    definite) or ``scale_tril`` (its lower Cholesky factor, positive diagonal). The batch shape
    broadcasts loc's (all but the last dimension) with the matrix's (all but the last two)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _param_names = ("loc",) + _MATRICES

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _given_matrix(covariance_matrix, precision_matrix, scale_tril)
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))

        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(name, matrix)

    def _expand_extra(self, new):
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor L of the covariance, expanded to the batch shape."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """The covariance L L^T, expanded to the batch shape."""
        return _C.matmul(self._unbroadcasted_scale_tril, self._unbroadcasted_scale_tril.mT).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The inverse of the covariance (cholesky_inverse of L), expanded to the batch shape."""
        return _C.cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def variance(self):
        """The diagonal of the covariance (the row sums of L ** 2)."""
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()):
        """loc + L eps for standard normal eps: differentiable in loc and the given matrix."""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        """The log density at ``value``: -(n log(2 pi) + Mahalanobis distance) / 2 - log |L|."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        """n (1 + log(2 pi)) / 2 + log |L|, batched over batch_shape."""
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
