"""torch.distributions.LowRankMultivariateNormal for graft: the multivariate normal of covariance
W W^T + D (W = ``cov_factor``, n x m; D = diag(``cov_diag``)), with PyTorch's capacitance-matrix
formulas: the log determinant by the matrix determinant lemma and the Mahalanobis distance by the
Woodbury identity, both through the Cholesky factor of the m x m capacitance C = I + W^T D^-1 W.
``rsample`` (loc + W eps_W + sqrt(D) eps_D) is differentiable in all three parameters."""
import math

from .. import _C, linalg
from .._tensor import Size
from . import constraints
from ._batch_linalg import (_add_identity, _batch_capacitance_tril, _batch_lowrank_logdet,
                            _batch_lowrank_mahalanobis, _batch_mv)
from ._loc_scale import LocCenteredMixin
from ._params import ParamsMixin
from .distribution import Distribution
from .utils import broadcast_tensors, lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _check_shapes(loc, cov_factor, cov_diag):
    """PyTorch's checks of the parameters' dimensions (ValueError, in its texts)."""
    if loc.dim() < 1:
        raise ValueError("loc must be at least one-dimensional.")
    event_shape = loc.shape[-1:]
    if cov_factor.dim() < 2:
        raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
    if cov_factor.shape[-2:-1] != event_shape:
        raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
    if cov_diag.shape[-1:] != event_shape:
        raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")


class LowRankMultivariateNormal(LocCenteredMixin, ParamsMixin, Distribution):
    """The multivariate normal distribution of mean ``loc`` (batch_shape + (n,)) and covariance
    cov_factor @ cov_factor^T + diag(cov_diag), ``cov_factor`` shaped batch_shape + (n, m) and
    ``cov_diag`` batch_shape + (n,) (the batch shapes broadcast)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _param_names = ("loc", "cov_factor", "cov_diag")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        _check_shapes(loc, cov_factor, cov_diag)
        event_shape = loc.shape[-1:]
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                 cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]

        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _expand_extra(self, new):
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def variance(self):
        """The diagonal of the covariance: the row sums of W ** 2, + D."""
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag).expand(
            self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor of the covariance, as D^1/2 chol(I + D^-1/2 W W^T D^-1/2) (whose
        eigenvalues are at least 1, hence well conditioned), expanded to the batch shape."""
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        Dinvsqrt_W = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        K = _add_identity(_C.matmul(Dinvsqrt_W, Dinvsqrt_W.mT))
        scale_tril = cov_diag_sqrt_unsqueeze * linalg.cholesky(K)
        return scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """W W^T + D, expanded to the batch shape."""
        covariance_matrix = (_C.matmul(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_factor.mT)
                             + _C.diag_embed(self._unbroadcasted_cov_diag))
        return covariance_matrix.expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The inverse of the covariance by the Woodbury identity, D^-1 - A^T A with A = C_L^-1 W^T D^-1
        (C_L the capacitance's Cholesky factor), expanded to the batch shape."""
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision_matrix = _C.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - _C.matmul(A.mT, A)
        return precision_matrix.expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        """loc + W eps_W + sqrt(D) eps_D for standard normal eps_W (m-vectors) and eps_D (n-vectors):
        differentiable in all three parameters."""
        shape = self._extended_shape(sample_shape)
        W_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_W = standard_normal(W_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_D = standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        """The log density at ``value``: -(n log(2 pi) + log |cov| + Mahalanobis distance) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        """(n (1 + log(2 pi)) + log |cov|) / 2, batched over batch_shape."""
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
