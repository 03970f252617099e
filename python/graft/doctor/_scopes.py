"""Module scopes for graft.doctor's creation sites: while a doctor records sites, every
nn.Module call pushes its path ("Net.encoder.0") so that saved tensors can be attributed to
the module whose forward saved them (the peak's per-module view, checkpointing advice)."""
import threading

from .. import _C

_local = threading.local()


def install():
    """Registers the global module hooks; returns their handles."""
    from ..nn.modules import module as _module
    return [_module.register_module_forward_pre_hook(_push),
            _module.register_module_forward_hook(_pop, always_call=True)]


def _push(module, args):
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    if not stack:
        name = type(module).__name__
    else:
        parent, parent_name = stack[-1]
        child = next((n for n, m in parent._modules.items() if m is module), None)
        name = parent_name + "." + (child if child is not None else type(module).__name__)
    stack.append((module, name))
    _C._doctor_push_scope(name)


def _pop(module, args, output):
    stack = getattr(_local, "stack", None)
    if stack:
        stack.pop()
        _C._doctor_pop_scope()
