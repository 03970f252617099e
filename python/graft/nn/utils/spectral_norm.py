"""graft.nn.utils.spectral_norm: the hook-based spectral normalization of torch.nn.utils
(spectral_norm / remove_spectral_norm, https://arxiv.org/abs/1802.05957). The parameter
``<name>`` becomes ``<name>_orig``, the power-method vectors are the buffers ``<name>_u`` and
``<name>_v``, and a forward pre-hook sets ``module.<name> = <name>_orig / sigma`` (a plain
attribute) before every call, advancing u and v in training mode only. A state_dict hook records
the format's version in the state_dict's metadata (``spectral_norm``: ``<name>.version``: 1), as
PyTorch's. Not provided: PyTorch's load_state_dict pre-hook that converts checkpoints of the
format before version 1 (graft's Module has no load pre-hooks, and the conversion needs a
pseudo-inverse); checkpoints of the current format load as they are."""
from ... import _C
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from .parametrizations import _is_conv_transpose

__all__ = ["SpectralNorm", "SpectralNormStateDictHook", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of spectral_norm (format version 1: ``<name>_v`` is a buffer and eval
    mode computes sigma = u . (W v) from the stored vectors)."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight with ``dim`` first, as a (size of dim, -1) matrix."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma``; with ``do_power_iteration`` u and v first advance (in place:
        the buffers stay the same tensors) by n_power_iterations steps."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(_C.matmul(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(_C.matmul(weight_mat, v), dim=0, eps=self.eps))
                # copies: a later in-place update must not touch what this graph saved
                u = u.clone()
                v = v.clone()
        sigma = _C.dot(u, _C.matmul(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # ``<name>`` stays readable (e.g. by weight initializers) as a plain attribute
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        return fn


class SpectralNormStateDictHook:
    """Records ``<name>.version`` under ``spectral_norm`` in the module's state_dict metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        # the metadata entry itself (graft's state_dict hands hooks a copy of it)
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is not None and prefix[:-1] in metadata:
            local_metadata = metadata[prefix[:-1]]
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Spectral normalization of the parameter ``name`` of ``module`` through a forward
    pre-hook: before each call ``<name>`` is set to ``<name>_orig`` divided by its spectral norm,
    estimated by the power method (n_power_iterations steps per call in training mode, on the
    buffers ``<name>_u`` and ``<name>_v``). ``dim``: the output dim (default 0, 1 for transposed
    convolutions). graft.nn.utils.parametrizations.spectral_norm is the newer form. Returns
    ``module``."""
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undoes spectral_norm: ``<name>`` is a parameter again, holding the current normalized
    value (u and v as they are). Returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            module._forward_pre_hooks_with_kwargs.pop(key, None)
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for key, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[key]
            break
    return module
