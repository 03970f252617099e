"""graft.utils.hooks: the handle every register_*_hook returns (nn.Module hooks, optimizer step
hooks), as torch.utils.hooks."""
import itertools
import os
import weakref

from ._frames import first_user_frame

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by the register_*_hook methods: ``remove()`` unregisters the hook (also as a
    context manager). Holds the hook dicts weakly so it keeps no module alive."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        extras = [] if extra_dict is None else (extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        registered_at.pop(self.id, None)
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# hook id -> "file.py:LINE" of the user's line that registered it (graft.doctor names it when a
# hook keeps tensors: LD005); the oldest entries go first beyond _MAX_REGISTERED
registered_at = {}
_MAX_REGISTERED = 10_000


def _caller_line():
    f = first_user_frame(2)
    return f"{os.path.basename(f.f_code.co_filename)}:{f.f_lineno}" if f is not None else ""


def _add_hook(hooks, hook, *, prepend=False, flags=()):
    """Registers ``hook`` in the ordered dict ``hooks`` (first instead of last with ``prepend``)
    and returns its RemovableHandle. ``flags`` holds ``(flag_dict, on)`` pairs, the per-hook
    options (with_kwargs, always_call): the hook's id is marked True in each flag_dict whose
    ``on`` is true, and the handle's remove() clears it from every flag_dict."""
    handle = RemovableHandle(hooks, extra_dict=[flag_dict for flag_dict, _ in flags])
    hooks[handle.id] = hook
    registered_at[handle.id] = _caller_line()
    if len(registered_at) > _MAX_REGISTERED:
        del registered_at[next(iter(registered_at))]
    for flag_dict, on in flags:
        if on:
            flag_dict[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle
