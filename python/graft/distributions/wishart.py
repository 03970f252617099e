"""torch.distributions.Wishart for graft.

The scale matrix is given, as MultivariateNormal's covariance, by exactly one of
``covariance_matrix``, ``precision_matrix`` or ``scale_tril``, and everything is computed from its
Cholesky factor L. ``rsample`` is PyTorch's Bartlett decomposition, (L A)(L A)^T with A lower
triangular, sqrt(Chi2(df - i)) draws on the diagonal and standard normal ones below: differentiable
in the scale matrix and, through the Chi2 draws' implicit reparameterisation gradient, in ``df``.

One difference from PyTorch: its ``rsample`` flags the samples that *pass* the positive-definite
check as singular (``is_singular = self.support.check(sample)``), so that it warns "Singular sample
detected." and draws again on every call; graft's flags those that fail it, as the code intends:
it warns and redraws (up to ``max_try_correction`` times) only when a draw really is singular."""
import math
import warnings
from numbers import Number

from .. import _C, linalg
from .._composites.linalg import tril_indices
from .._composites.shape import broadcast_shapes
from .._tensor import Size
from . import constraints
from ._batch_linalg import _half_log_det
from ._params import ParamsMixin
from ._special import digamma, mvlgamma
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _MATRICES, _given_matrices, _scale_tril_of
from .utils import finfo_eps, lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: sum_{j < p} digamma(x - j / 2) (x > (p - 1) / 2)."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = _C.arange(p, dtype=x.dtype, device=x.device).div(2)
    return digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    """x (positive) clamped below at the dtype's eps."""
    return x.clamp(min=finfo_eps(x.dtype))


def _chi2_of(df, batch_shape, n, like):
    """Chi2(df - i) for i = 0..n-1 along a new last dimension (the Bartlett diagonal's squares), of
    batch shape batch_shape + (n,)."""
    offsets = _C.arange(n, dtype=like.dtype, device=like.device).expand(tuple(batch_shape) + (-1,))
    return Chi2(df=df.unsqueeze(-1) - offsets)


class Wishart(ParamsMixin, ExponentialFamily):
    """The Wishart distribution over positive definite n x n matrices, of ``df`` degrees of freedom
    (a number or tensor, greater than n - 1) and scale matrix given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` (its inverse) or ``scale_tril`` (its lower Cholesky
    factor). The mean is df * covariance_matrix."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0
    _param_names = ("df",) + _MATRICES

    @property
    def arg_constraints(self):
        """The matrices' constraints, and df > n - 1."""
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = _given_matrices(covariance_matrix, precision_matrix, scale_tril)
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")

        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = _C.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]

        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                          "< ndim.", stacklevel=2)

        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        self._unbroadcasted_scale_tril = _scale_tril_of(name, param)
        self._dist_chi2 = _chi2_of(self.df, batch_shape, self._event_shape[-1], self._unbroadcasted_scale_tril)

    def _expand_extra(self, new):
        batch_shape = tuple(new.df.shape)  # (ParamsMixin's expand has expanded df)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(batch_shape + tuple(self.event_shape))
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        new._dist_chi2 = _chi2_of(new.df, batch_shape, self.event_shape[-1], new._unbroadcasted_scale_tril)

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor L of the scale matrix, expanded to the batch shape."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """The scale matrix L L^T, expanded to the batch shape."""
        L = self._unbroadcasted_scale_tril
        return _C.matmul(L, L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The inverse of the scale matrix (cholesky_solve of the identity), expanded to the batch shape."""
        identity = _C.eye(self._event_shape[-1], device=self._unbroadcasted_scale_tril.device,
                          dtype=self._unbroadcasted_scale_tril.dtype)
        return _C.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self, df):
        """``df`` (batch-shaped, or 0-dim when given as a number) as batch_shape + (1, 1). (PyTorch views
        it so, which fails for a number df with batched matrices: graft expands it first.)"""
        return df.expand(self._batch_shape).reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        """df * covariance_matrix."""
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        """(df - n - 1) * covariance_matrix; NaN where df <= n + 1."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        """df (V_ij ** 2 + V_ii V_jj), V the covariance_matrix."""
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V.pow(2) + diag_V.unsqueeze(-1) * diag_V.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape=Size()):
        """(L A)(L A)^T for Bartlett's A: sqrt(Chi2(df - i)) on the diagonal, N(0, 1) below."""
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = _C.randn(tuple(sample_shape) + tuple(self._batch_shape) + (p * (p - 1) // 2,),
                                    dtype=noise.dtype, device=noise.device)
        chol = _C.matmul(self._unbroadcasted_scale_tril, noise)
        return _C.matmul(chol, chol.transpose(-2, -1))

    def _singular(self, sample):
        """Per sample (the batch reduced), whether any of its matrices fails the support check."""
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        return is_singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett draws, differentiable in df and the scale matrix. A singular draw (one failing
        the positive-definite check) is warned about and drawn again, up to ``max_try_correction``
        (10) times; it may remain singular (then log_prob is -inf or NaN there)."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self._singular(sample)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular[is_singular.clone()] = self._singular(sample_new)
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        """The log density at ``value`` (positive definite matrices)."""
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + _half_log_det(L)) - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - _C.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        """The entropy, batched over batch_shape."""
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * (p * _log_2 / 2 + _half_log_det(self._unbroadcasted_scale_tril))
                + mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + mvlgamma(y + (p + 1) / 2, p=p))
