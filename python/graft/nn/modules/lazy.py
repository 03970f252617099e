"""LazyModuleMixin (torch.nn.modules.lazy): modules whose parameter shapes come from their first
input. Until then they hold UninitializedParameter / UninitializedBuffer placeholders; a forward
pre-hook calls ``initialize_parameters(*args, **kwargs)`` on the first call, which materializes
them in place (an optimizer built before keeps the same Parameter objects), and the module then
becomes its ``cls_to_become`` (LazyLinear -> Linear)."""
import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import _MaterializedBuffer, is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before the non-lazy module class (``class LazyLinear(LazyModuleMixin, Linear)``).
    state_dict keeps uninitialized placeholders as they are; load_state_dict materializes them to
    the loaded tensors' shapes first (the module stays lazy until its first forward, which then
    keeps the loaded values)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materializes each placeholder whose state_dict entry is an initialized tensor to that
        tensor's shape, so that loading copies into it (PyTorch's load_state_dict pre-hook)."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param) and not is_lazy(state_dict[key]):
                with no_grad():
                    param.materialize(state_dict[key].shape)
        self._settle_buffers()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self._lazy_load_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def _settle_buffers(self):
        """Materialized buffers become plain graft tensors (sharing their storage)."""
        for name, buf in self._buffers.items():
            if type(buf) is _MaterializedBuffer:
                self._buffers[name] = buf.detach().requires_grad_(buf.requires_grad)

    def initialize_parameters(self, *args, **kwargs):
        """Materializes and initializes the placeholders from the first input(s)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initializes the parameters from the first call's arguments, drops
        itself and turns the module into ``cls_to_become``."""
        module.initialize_parameters(*args, **(kwargs or {}))
        module._settle_buffers()
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        handle = module._initialize_hook
        if handle.hooks_dict_ref() is module._forward_pre_hooks:
            handle.remove()
        else:  # a deep copy's handle points at the original module's dicts: drop this module's own hook
            for hooks in (module._forward_pre_hooks, module._forward_pre_hooks_with_kwargs):
                hooks.pop(handle.id, None)
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
