"""Module calls under graft.doctor: the outermost call of each forward (a forward-only loop's
step, see docs/notes/doctor.md "Steps") and, when the doctor records sites, every call's module
path ("Net.encoder.0"), so that saved tensors are attributed to the module whose forward saved
them (the peak's per-module view, checkpointing advice)."""
import threading

from .. import _C

_local = threading.local()


def install(on_outermost, scopes):
    """Registers the global module hooks; returns their handles. ``on_outermost(module)`` runs
    before each call made outside any module's forward; ``scopes`` pushes the module paths."""
    from ..nn.modules import module as _module

    def push(module, args):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        if not stack:
            on_outermost(module)
        if not scopes:
            stack.append((module, ""))
            return
        if not stack:
            name = type(module).__name__
        else:
            parent, parent_name = stack[-1]
            child = next((n for n, m in parent._modules.items() if m is module), None)
            name = parent_name + "." + (child if child is not None else type(module).__name__)
        stack.append((module, name))
        _C._doctor_push_scope(name)

    def pop(module, args, output):
        stack = getattr(_local, "stack", None)
        if stack:
            stack.pop()
            if scopes:
                _C._doctor_pop_scope()

    return [_module.register_module_forward_pre_hook(push), _module.register_module_forward_hook(pop, always_call=True)]
