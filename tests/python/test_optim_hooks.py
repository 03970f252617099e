"""Optimizer step hooks with PyTorch 2.x's names and semantics (torch 1.13 has none, so these
are checked against the documented 2.x behaviour): per-instance register_step_pre_hook /
register_step_post_hook, the global graft.optim.optimizer.register_optimizer_step_*_hook, the
order (global pre, instance pre, step, instance post, global post), pre hooks replacing the
arguments, exactly one run per step() for every Optimizer subclass, and a raising step."""
import copy
import pickle
import warnings

import pytest

import graft
import graft.optim as optim
from graft.optim import optimizer as optimizer_module
from graft.optim.lr_scheduler import StepLR
from graft.utils.hooks import RemovableHandle


def _param():
    p = graft.nn.Parameter(graft.tensor([1.0, -2.0]))
    p.grad = graft.tensor([0.5, 0.25])
    return p


class _Log(list):
    """What the hooks saw, and the handles of the global hooks to remove after the test."""

    def __init__(self):
        super().__init__()
        self.handles = []


@pytest.fixture
def log():
    events = _Log()
    yield events
    for h in events.handles:
        h.remove()
    events.clear()  # the optimizers and tensors the hooks saw (pytest keeps the fixture value)


def _global(log, kind, tag):
    register = (optimizer_module.register_optimizer_step_pre_hook if kind == "pre"
                else optimizer_module.register_optimizer_step_post_hook)
    h = register(lambda opt, args, kwargs: log.append((tag, opt, args, kwargs)))
    log.handles.append(h)
    return h


def test_order_arguments_and_handles(log):
    p = _param()
    opt = optim.SGD([p], lr=0.1)
    _global(log, "pre", "global_pre")
    _global(log, "post", "global_post")
    h_pre = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o, a, k)))
    h_post = opt.register_step_post_hook(lambda o, a, k: log.append(("post", o, a, k)))
    assert isinstance(h_pre, RemovableHandle) and isinstance(h_post, RemovableHandle)
    opt.step()
    # PyTorch's order: global pre hooks, the optimizer's pre hooks, step, its post hooks, global post
    assert [e[0] for e in log] == ["global_pre", "pre", "post", "global_post"]
    for _, o, args, kwargs in log:
        assert o is opt and args == (opt,) and kwargs == {}  # args starts with the optimizer, as PyTorch's
    assert p.tolist() == pytest.approx([0.95, -2.025])

    del log[:]
    closure = lambda: graft.tensor(3.0)  # noqa: E731
    opt.step(closure=closure)
    assert log[0][3] == {"closure": closure} and log[0][2] == (opt,)
    del log[:]
    opt.step(closure)
    assert log[0][2] == (opt, closure)

    del log[:]
    h_pre.remove()
    with h_post:  # a handle is also a context manager that removes the hook on exit
        pass
    opt.step()
    assert [e[0] for e in log] == ["global_pre", "global_post"]
    h_pre.remove()  # removing twice is harmless


def test_pre_hook_may_replace_the_arguments():
    p = _param()
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def replacement():
        calls.append("replacement")
        return graft.tensor(7.0)

    seen = []
    opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": replacement}))
    opt.register_step_post_hook(lambda o, a, k: seen.append((a, k)))
    loss = opt.step(lambda: calls.append("original"))
    assert calls == ["replacement"] and loss.item() == 7.0
    assert seen == [((opt,), {"closure": replacement})]  # post hooks get the replaced arguments


def test_pre_hook_returning_something_else_raises():
    opt = optim.SGD([_param()], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match=r"^<function SGD\.step at 0x[0-9a-f]+> must return None or a tuple of "
                                           r"\(new_args, new_kwargs\), but got 5\.$"):
        opt.step()


class _Plain(optim.Optimizer):
    """A user-defined optimizer with its own step."""

    def __init__(self, params):
        super().__init__(params, dict(lr=1.0))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with graft.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    p.sub_(p.grad * group["lr"])
        return loss


class _CallsSuper(optim.SGD):
    """A subclass whose step calls the (also hooked) step of its base class."""

    def step(self, closure=None):
        return super().step(closure)


class _Inherits(optim.Adam):
    """A subclass without its own step."""


@pytest.mark.parametrize("make", [
    lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: optim.Adam(ps),
    lambda ps: optim.AdamW(ps),
    lambda ps: optim.RMSprop(ps),
    lambda ps: optim.Adagrad(ps),
    lambda ps: _Plain(ps),
    lambda ps: _CallsSuper(ps, lr=0.1),
    lambda ps: _Inherits(ps),
], ids=["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "user", "user_calls_super", "user_inherits"])
def test_every_optimizer_runs_the_hooks_once_per_step(make, log):
    optim.SGD([_param()])  # the base classes' steps are hooked too (PyTorch would run hooks twice below)
    optim.Adam([_param()])
    p = _param()
    opt = make([p])
    assert getattr(type(opt).step, "hooked", False)
    _global(log, "pre", "global_pre")
    _global(log, "post", "global_post")
    opt.register_step_pre_hook(lambda o, a, k: log.append(("pre",)))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post",)))
    before = p.tolist()
    for _ in range(3):
        opt.step()
    assert [e[0] for e in log] == ["global_pre", "pre", "post", "global_post"] * 3
    assert p.tolist() != before


def test_classes_are_wrapped_once():
    first = optim.RMSprop([_param()]).step
    optim.RMSprop([_param()])
    assert optim.RMSprop.step is first.__func__
    assert optim.RMSprop.step.__name__ == "step" and "RMSprop" in optim.RMSprop.step.__qualname__
    assert optim.RMSprop.step.__doc__ and optim.RMSprop.step.hooked is True


def test_a_raising_step_runs_pre_hooks_but_not_post_hooks(log):
    p = _param()
    opt = optim.SGD([p], lr=0.1)
    _global(log, "pre", "global_pre")
    _global(log, "post", "global_post")
    opt.register_step_pre_hook(lambda o, a, k: log.append(("pre",)))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post",)))

    def failing():
        raise ValueError("closure failed")

    with pytest.raises(ValueError, match="closure failed"):
        opt.step(failing)
    assert [e[0] for e in log] == ["global_pre", "pre"]
    assert p.tolist() == [1.0, -2.0]
    del log[:]
    opt.step()  # the next step runs normally (and its hooks once)
    assert [e[0] for e in log] == ["global_pre", "pre", "post", "global_post"]


def test_a_raising_pre_hook_stops_the_step():
    p = _param()
    opt = optim.SGD([p], lr=0.1)

    def refuse(o, a, k):
        raise KeyError("no")

    h = opt.register_step_pre_hook(refuse)
    with pytest.raises(KeyError):
        opt.step()
    assert p.tolist() == [1.0, -2.0]
    h.remove()
    opt.step()
    assert p.tolist() != [1.0, -2.0]


def test_step_with_closure_counts_one_step(log):
    p = graft.nn.Parameter(graft.tensor([1.0, 2.0]))
    opt = optim.SGD([p], lr=0.1)
    steps = []
    _global(log, "post", "global_post")
    opt.register_step_post_hook(lambda o, a, k: steps.append(1))
    closures = []

    def closure():
        closures.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    for _ in range(4):
        loss = opt.step(closure)
    assert len(steps) == 4 and len(closures) == 4 and len(log) == 4
    assert loss.detach().item() == pytest.approx((0.8 ** 6) * 5)


def test_global_hooks_see_every_optimizer_and_a_hook_may_remove_itself(log):
    a, b = optim.SGD([_param()], lr=0.1), optim.Adam([_param()])
    seen = []
    handle = None

    def once(opt, args, kwargs):
        seen.append(opt)
        handle.remove()

    handle = optimizer_module.register_optimizer_step_pre_hook(once)
    log.handles.append(handle)
    _global(log, "pre", "count")
    a.step()
    b.step()
    a.step()
    assert seen == [a]
    assert [e[1] for e in log] == [a, b, a]


def test_step_counting_with_an_lr_scheduler(log):
    """A leak doctor's step count: one per optimizer.step(), with a scheduler wrapping step too,
    and the scheduler's order warning still right."""
    p = _param()
    opt = optim.SGD([p], lr=1.0)
    counted = []
    opt.register_step_post_hook(lambda o, a, k: counted.append(o.param_groups[0]["lr"]))
    sched = StepLR(opt, step_size=1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.step()
            sched.step()
    assert counted == [1.0, 0.5, 0.25]

    opt2 = optim.SGD([_param()], lr=1.0)
    opt2.register_step_pre_hook(lambda o, a, k: counted.append("pre2"))
    sched2 = StepLR(opt2, step_size=1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        sched2.step()
    opt2.step()
    assert counted[-1] == "pre2" and counted.count("pre2") == 1


def test_copies_start_without_instance_hooks_but_keep_global_ones(log):
    opt = optim.Adam([_param()])
    opt.register_step_pre_hook(lambda o, a, k: log.append(("instance", o)))
    _global(log, "pre", "global")
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        del log[:]
        clone.step()
        assert [e[0] for e in log] == ["global"] and log[0][1] is clone
        h = clone.register_step_post_hook(lambda o, a, k: log.append(("clone_post", o)))
        clone.step()
        assert log[-1] == ("clone_post", clone)
        h.remove()


def test_load_state_dict_keeps_the_hooks():
    opt = optim.SGD([_param()], lr=0.1, momentum=0.9)
    steps = []
    opt.register_step_post_hook(lambda o, a, k: steps.append(1))
    opt.step()
    opt.load_state_dict(opt.state_dict())
    opt.step()
    assert steps == [1, 1]
