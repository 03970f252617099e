"""Module calls under graft.doctor: the outermost call of each forward (a forward-only loop's
step, see docs/notes/doctor.md "Steps") and, when the doctor records sites, every call's module
path ("Net.encoder.0"), so that saved tensors are attributed to the module whose forward saved
them (the peak's per-module view, checkpointing advice). While the doctor watches, every
nn.Module call goes through the wrapper installed here (nn.modules.module._doctor_calls): it
costs a few attribute reads per call, and leaves modules without hooks on their fast path."""
import threading

from .. import _C


class _Stack(threading.local):
    def __init__(self):
        self.modules = []  # (module, path) of the calls in progress on this thread


class _Handle:
    def remove(self):
        from ..nn.modules import module as _module
        _module._doctor_calls = None


def install(on_outermost, scopes):
    """Installs the wrapper; returns a handle whose remove() uninstalls it. ``on_outermost(module)``
    runs before each call made outside any module's forward; ``scopes`` pushes the module paths."""
    from ..nn.modules import module as _module
    stack = _Stack()
    push, pop = _C._doctor_push_scope, _C._doctor_pop_scope

    def call(module, args, kwargs):
        calls = stack.modules
        if not calls:
            on_outermost(module)
            path = type(module).__name__
        elif scopes:
            parent, parent_path = calls[-1]
            child = next((n for n, m in parent._modules.items() if m is module), None)
            path = parent_path + "." + (child if child is not None else type(module).__name__)
        else:
            path = ""
        calls.append((module, path))
        if scopes:
            push(path)
        try:
            return module._call_unwatched(args, kwargs)
        finally:
            calls.pop()
            if scopes:
                pop()

    _module._doctor_calls = call
    return [_Handle()]
