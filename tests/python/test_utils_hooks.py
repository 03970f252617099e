"""graft.utils.hooks._add_hook: the registration every register_*_hook shares (Module's
forward/backward/state_dict hooks, the global module hooks, optimizer step hooks)."""
from collections import OrderedDict

from graft.utils.hooks import RemovableHandle, _add_hook


def _hook_a(*args):
    return None


def _hook_b(*args):
    return None


def test_add_hook_appends_and_returns_handle():
    hooks = OrderedDict()
    h1 = _add_hook(hooks, _hook_a)
    h2 = _add_hook(hooks, _hook_b)
    assert isinstance(h1, RemovableHandle)
    assert list(hooks.items()) == [(h1.id, _hook_a), (h2.id, _hook_b)]
    h1.remove()
    assert list(hooks) == [h2.id]


def test_add_hook_prepend_puts_it_first():
    hooks = OrderedDict()
    h1 = _add_hook(hooks, _hook_a)
    h2 = _add_hook(hooks, _hook_b, prepend=True)
    assert list(hooks) == [h2.id, h1.id]


def test_add_hook_flags_are_set_when_on_and_cleared_by_remove():
    hooks, with_kwargs, always_call = OrderedDict(), OrderedDict(), OrderedDict()
    h1 = _add_hook(hooks, _hook_a, flags=[(with_kwargs, True), (always_call, False)])
    h2 = _add_hook(hooks, _hook_b, flags=[(with_kwargs, False), (always_call, True)])
    assert with_kwargs == {h1.id: True}
    assert always_call == {h2.id: True}
    h1.remove()
    h2.remove()
    assert not hooks and not with_kwargs and not always_call
