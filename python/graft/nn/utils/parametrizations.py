"""graft.nn.utils.parametrizations: torch.nn.utils.parametrizations for graft, built on
graft.nn.utils.parametrize. weight_norm (PyTorch 2.x's: the magnitude g and the direction v are
``parametrizations.<name>.original0`` and ``original1``; PyTorch 1.13 has only the hook-based
version) and spectral_norm (power iteration with the ``_u`` / ``_v`` buffers of the
parametrization, advanced at each access in training mode only). ``orthogonal`` is not provided:
it needs a QR decomposition and matrix_exp, which graft does not have yet.

The norms torch computes with its private ops (torch.norm_except_dim, torch._weight_norm) are
written here from graft.linalg.vector_norm; torch.mv is graft.matmul of a matrix and a vector."""
from ... import _C, linalg
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import modules
from ..modules.module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


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
