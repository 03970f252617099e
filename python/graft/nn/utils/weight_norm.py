"""graft.nn.utils.weight_norm: the hook-based weight normalization of torch.nn.utils
(weight_norm / remove_weight_norm, https://arxiv.org/abs/1602.07868). The parameter ``<name>``
is replaced by ``<name>_g`` (magnitude) and ``<name>_v`` (direction), and a forward pre-hook
recomputes ``module.<name> = g * v / ||v||`` (a plain attribute) before every call. As in
PyTorch 2.x, weight_norm warns that it is deprecated in favor of
graft.nn.utils.parametrizations.weight_norm."""
import warnings

from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of weight_norm: computes ``<name>`` from ``<name>_g`` and ``<name>_v``
    (norms over every dim but ``dim``; -1 or None: over the whole tensor)."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight.detach(), fn.dim)))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Weight normalization of the parameter ``name`` of ``module`` through a forward pre-hook:
    ``<name>`` becomes ``<name>_g * <name>_v / ||<name>_v||``, recomputed before each call, with
    the parameters ``<name>_g`` (norms over every dim but ``dim``, kept as size-1 dims; None:
    the whole tensor's norm) and ``<name>_v``. Deprecated (FutureWarning, as PyTorch 2.x): use
    graft.nn.utils.parametrizations.weight_norm. Returns ``module``."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def _remove_pre_hook(module, key):
    del module._forward_pre_hooks[key]
    module._forward_pre_hooks_with_kwargs.pop(key, None)


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: ``<name>`` is a parameter again, holding the current normalized
    value. Returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            _remove_pre_hook(module, key)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
