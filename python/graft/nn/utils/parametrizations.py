"""graft.nn.utils.parametrizations: torch.nn.utils.parametrizations for graft, built on
graft.nn.utils.parametrize. orthogonal (the matrix exponential, Cayley or Householder map of
the original, with the dynamic trivialization's ``base`` buffer by default), weight_norm
(PyTorch 2.x's: the magnitude g and the direction v are ``parametrizations.<name>.original0`` and
``original1``; PyTorch 1.13 has only the hook-based version) and spectral_norm (power iteration
with the ``_u`` / ``_v`` buffers of the parametrization, advanced at each access in training
mode only). torch.geqrf, which orthogonal's Householder map needs to go back to the reflectors,
is graft._composites.householder._geqrf.

The norms torch computes with its private ops (torch.norm_except_dim, torch._weight_norm) are
written here from graft.linalg.vector_norm; torch.mv is graft.matmul of a matrix and a vector."""
from enum import Enum, auto

from ... import _C, linalg
from ..._composites.householder import _geqrf
from ..._type_info import finfo
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import modules
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    """Whether Q^T Q is the identity within 10 n eps (PyTorch's test of a given initial value)."""
    n, k = Q.shape[-2], Q.shape[-1]
    eye = _C.eye(k, dtype=Q.dtype, device=Q.device)
    return _C.allclose(_C.matmul(Q.mT, Q), eye, atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of the tall A = Q R whose R has a non-negative diagonal (Q's columns times R's signs)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


class _OrthMaps(Enum):
    """The maps orthogonal() offers from an unconstrained matrix to an orthogonal one."""
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


_NO_RIGHT_INVERSE = ("It is not possible to assign to the matrix exponential or the Cayley parametrizations when "
                     "use_trivialization=False.")


class _Orthogonal(Module):
    """orthogonal's parametrization of an (n, k) matrix or batch of them (a wide one is handled
    transposed). ``matrix_exp`` / ``cayley``: X's lower triangle, padded to (n, n), gives the
    skew-symmetric A = X - X^T, mapped to exp(A) or (I - A/2)^-1 (I + A/2), of which the first k
    columns are taken. ``householder``: the reflectors below X's diagonal, with tau = 2 / (1 +
    |v|^2), give an orthogonal product, its columns signed by X's diagonal (cast to int). With
    ``use_trivialization`` the result is multiplied by the buffer ``base``, which right_inverse
    sets to the assigned matrix (completed and orthonormalized), returning the original that makes
    the map the identity."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        """The orthogonal matrix (or batch) that X maps to."""
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        Q = self._householder(X) if self.orthogonal_map == _OrthMaps.householder else self._skew_map(X, n, k)
        if hasattr(self, "base"):
            Q = _C.matmul(self.base, Q)
        return Q.mT if transposed else Q

    def _skew_map(self, X, n, k):
        """The first k columns of exp(A) or of the Cayley transform of A, A = Y - Y^T for Y the
        lower triangle of the tall X padded with zero columns to (n, n)."""
        X = X.tril()
        if n != k:
            X = _C.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], -1)
        A = X - X.mT
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            Q = linalg.matrix_exp(A)
        else:
            eye = _C.eye(n, dtype=A.dtype, device=A.device)
            Q = linalg.solve(_C.add(eye, A, alpha=-0.5), _C.add(eye, A, alpha=0.5))
        return Q[..., :k] if n != k else Q

    @staticmethod
    def _householder(X):
        """The product of the reflectors below the tall X's diagonal (tau = 2 / (1 + |v|^2)), its
        columns multiplied by X's diagonal cast to int (1 or -1; not differentiated)."""
        A = X.tril(-1)
        tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
        Q = linalg.householder_product(A, tau)
        return Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

    @no_grad()
    def right_inverse(self, Q):
        """The original that gives Q: with the trivialization -I, Q (orthonormalized) becoming the
        base; without it, for the Householder map, Q's reflectors (LAPACK's geqrf) with R's signs
        on the diagonal. NotImplementedError for the other maps without the trivialization."""
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map != _OrthMaps.householder:
                raise NotImplementedError(_NO_RIGHT_INVERSE)
            # Q's reflectors, its diagonal that of R made +-1 (flipped where geqrf used no reflection)
            A, tau = _geqrf(Q)
            signs = A.diagonal(dim1=-2, dim2=-1).sign()
            A.diagonal(dim1=-2, dim2=-1).copy_(_C.where(tau == 0.0, -signs, signs))
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # completed to an orthogonal (n, n) matrix with random columns
            N = _C.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(_C.cat([Q, N], -1))
        self.base = Q
        # -I: the original with which every map gives the identity (householder's signs included)
        neg_id = _C.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Makes ``module.<name>`` (a matrix or a batch of matrices, (..., m, n)) orthogonal through a
    parametrization: orthonormal columns when m >= n, orthonormal rows otherwise.

    ``orthogonal_map``: ``"matrix_exp"`` (the exponential of a skew-symmetric matrix),
    ``"cayley"`` (its Cayley transform, (I - A/2)^-1 (I + A/2)) or ``"householder"`` (a product of
    Householder reflectors); default ``"matrix_exp"`` for a square matrix, ``"householder"``
    otherwise. With ``use_trivialization`` (default) the map's result is multiplied by the buffer
    ``module.parametrizations.<name>[0].base`` (the dynamic trivialization framework,
    https://arxiv.org/abs/1909.09501); the initial value is then the tensor itself when it is
    orthogonal, else the Q of its QR decomposition (completed with random columns when not
    square). Assigning ``module.<name> = Q`` sets the base to Q; without the trivialization only
    the Householder map can be assigned to. The original is
    ``module.parametrizations.<name>.original``. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if not isinstance(orth_enum, _OrthMaps):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v, dim):
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but ``dim``, kept as size-1
    dims (dim -1: the norm of the whole tensor, a 0-d tensor)."""
    if dim == -1:
        return linalg.vector_norm(v)
    dim = dim % v.dim()
    moved = v.transpose(0, dim) if dim else v
    norms = linalg.vector_norm(moved.reshape(moved.shape[0], -1), dim=1)
    shape = [1] * v.dim()
    shape[dim] = v.shape[dim]
    return norms.reshape(shape)


def _weight_norm(v, g, dim):
    """torch._weight_norm(v, g, dim): v scaled to the norm g (per slice along ``dim``)."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """weight_norm's parametrization: forward(g, v) = g * v / ||v|| (norms over every dim but
    ``dim``; None: over the whole tensor); right_inverse(w) = (||w||, w)."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight normalization (https://arxiv.org/abs/1602.07868) of ``module.<name>`` as a
    parametrization: ``w = g * v / ||v||``, the magnitude g as
    ``module.parametrizations.<name>.original0`` and the direction v as ``original1``. ``dim``:
    the dim whose slices get their own norm (None: one norm for the whole tensor). The weight is
    recomputed at each access. Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    # graft's Module has no load_state_dict pre-hooks yet: where it gains them, old checkpoints load too
    register_pre_hook = getattr(module, "_register_load_state_dict_pre_hook", None)
    if register_pre_hook is not None:
        register_pre_hook(_legacy_weight_norm_keys(name))
    return module


def _legacy_weight_norm_keys(name):
    """The load_state_dict pre-hook that renames the keys of the hook-based weight_norm
    (``<name>_g``, ``<name>_v``) to the parametrization's."""
    def hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    return hook


class _SpectralNorm(Module):
    """spectral_norm's parametrization: the weight divided by its largest singular value,
    estimated as u . (W v) with the buffers ``_u`` and ``_v``, which each call in training mode
    advances by ``n_power_iterations`` steps of the power method (W: the weight with ``dim``
    first, flattened to a matrix). A 1-d weight is divided by its 2-norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            with no_grad():
                u = weight_mat.new_empty(h).normal_(0, 1)
                v = weight_mat.new_empty(w).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a reasonable estimate

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place: the buffers stay the same tensors
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_C.matmul(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_C.matmul(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies: a later in-place update must not touch what this graph saved
        u = self._u.clone()
        v = self._v.clone()
        sigma = _C.dot(u, _C.matmul(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _is_conv_transpose(module):
    """Whether ``module`` is a transposed convolution (its output channels are weight dim 1)."""
    kinds = tuple(getattr(modules, n) for n in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")
                  if hasattr(modules, n))
    return isinstance(module, kinds)


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization (https://arxiv.org/abs/1802.05957) of ``module.<name>`` as a
    parametrization: the weight divided by its spectral norm, estimated by the power method
    (``n_power_iterations`` steps at each access in training mode; the vectors are the
    parametrization's buffers ``_u`` and ``_v``). ``dim``: the output dim (default 0, 1 for
    transposed convolutions). ``eps``: floor of the norms. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, _C.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
