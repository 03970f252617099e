"""graft.optim.lr_scheduler's ConstantLR, MultiplicativeLR, PolynomialLR, SequentialLR,
ChainedScheduler, CosineAnnealingWarmRestarts and CyclicLR against torch 1.13 (run side by side):
lr sequences over 30 steps, momentum cycling, state dicts, errors."""
import inspect
import re
import warnings

import pytest

import graft
from graft import optim
from graft.optim import lr_scheduler as L

torch = pytest.importorskip("torch")
T = torch.optim.lr_scheduler


def make_optimizers(lib, adam=False):
    """The same two-group optimizer in graft (lib=graft) or torch."""
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.01}]
    if adam:
        return lib.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99))
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def run(lib, build, steps=30, adam=False, key="momentum"):
    """lr rows (get_last_lr() after construction and after each step), the group lrs and the
    groups' momentum (or beta1) after each step."""
    opt = make_optimizers(lib, adam)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = build(lib.optim.lr_scheduler, opt)
    rows, groups, moms = [list(sched.get_last_lr())], [], []
    for _ in range(steps):
        opt.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SequentialLR's switch passes an epoch (deprecated)
            sched.step()
        rows.append(list(sched.get_last_lr()))
        groups.append([g["lr"] for g in opt.param_groups])
        moms.append([g[key][0] if key == "betas" else g.get(key) for g in opt.param_groups])
    return rows, groups, moms, sched


def assert_rows(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, rel=1e-12, abs=1e-18)


def assert_same_as_torch(build, steps=30):
    got, want = run(graft, build, steps), run(torch, build, steps)
    for g, w in zip(got[:3], want[:3]):
        assert_rows(g, w)
    return got[3], want[3]


class Halver:
    """A callable object: LambdaLR-style state dicts keep its __dict__."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, epoch):
        return self.factor


BUILDS = {
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4),
    "ConstantLR-defaults": lambda m, o: m.ConstantLR(o),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    "MultiplicativeLR-per-group": lambda m, o: m.MultiplicativeLR(o, [lambda e: 0.9, lambda e: 1.0 / (1 + 0.1 * e)]),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=8, power=2.0),
    "PolynomialLR-defaults": lambda m, o: m.PolynomialLR(o),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=3), m.ExponentialLR(o, gamma=0.9),
            m.CosineAnnealingLR(o, T_max=5)], milestones=[4, 12]),
    "SequentialLR-constant-step": lambda m, o: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.25, total_iters=10), m.StepLR(o, step_size=3, gamma=0.5)], milestones=[6]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)]),
    "ChainedScheduler-three": lambda m, o: m.ChainedScheduler(
        [m.LinearLR(o, start_factor=0.5, total_iters=5), m.MultiStepLR(o, milestones=[3, 9]),
         m.PolynomialLR(o, total_iters=20, power=0.5)]),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4, eta_min=0.001),
    "CosineAnnealingWarmRestarts-mult": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "CyclicLR-triangular": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.05], step_size_up=3,
                                                    step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                                                  gamma=0.95, base_momentum=0.7, max_momentum=[0.95, 0.9]),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                                 scale_fn=lambda x: 1.0 / (x + 1), scale_mode="iterations"),
    "CyclicLR-no-momentum": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                    cycle_momentum=False),
}


@pytest.mark.parametrize("name", list(BUILDS))
def test_sequences_match_torch(name):
    # get_last_lr(), the groups' lr and their momentum, step by step.
    assert_same_as_torch(BUILDS[name])


def test_multiplicative_lr_callable_object_state():
    got, want = assert_same_as_torch(lambda m, o: m.MultiplicativeLR(o, Halver()))
    assert got.state_dict()["lr_lambdas"] == want.state_dict()["lr_lambdas"] == [{"factor": 0.5}, {"factor": 0.5}]
    with pytest.raises(ValueError, match="^Expected 2 lr_lambdas, but got 1$"):
        L.MultiplicativeLR(make_optimizers(graft), [Halver()])


def test_state_dict_keys_match_torch():
    for name, build in BUILDS.items():
        got, want = run(graft, build, 5)[3], run(torch, build, 5)[3]
        gs, ws = got.state_dict(), want.state_dict()
        if name.startswith("CyclicLR"):
            # PyTorch 2.x drops _scale_fn_ref (1.13 keeps a weakref/None) and keeps a custom
            # scale function only as a callable object's __dict__.
            ws.pop("_scale_fn_ref", None)
            assert gs.pop("_scale_fn_custom") is None
            ws.pop("_scale_fn_custom")
            # 2.x also records use_beta1 when it cycles momentum.
            assert gs.pop("use_beta1", False) is False and ("use_beta1" in gs) is False
        assert sorted(gs) == sorted(ws), name
        if "_schedulers" in gs:
            assert [sorted(s) for s in gs["_schedulers"]] == [sorted(s) for s in ws["_schedulers"]], name
        for key in ("last_epoch", "_step_count", "T_cur", "T_i", "total_size", "step_ratio", "_milestones"):
            if key in ws:
                assert gs[key] == ws[key], (name, key)


@pytest.mark.parametrize("name", ["SequentialLR", "ChainedScheduler-three", "CosineAnnealingWarmRestarts-mult",
                                  "CyclicLR-triangular2"])
def test_state_dict_round_trip(name):
    build = BUILDS[name]
    _, _, _, first = run(graft, build, 7)
    state = first.state_dict()
    rows, _, _, second = run(graft, build, 2)
    second.load_state_dict(state)
    assert "_schedulers" not in state or isinstance(state["_schedulers"], list)
    assert second.state_dict() == state
    assert getattr(second, "last_epoch", None) == getattr(first, "last_epoch", None)
    if name.startswith("CyclicLR"):
        assert second.scale_fn(2) == 0.5  # the mode's function is set up again
    if "_schedulers" in state:
        assert [s.last_epoch for s in second._schedulers] == [s.last_epoch for s in first._schedulers]


def test_constant_lr_closed_form_and_errors():
    for lib in (graft, torch):
        opt = make_optimizers(lib)
        sched = lib.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(2)
            assert sched.get_last_lr() == [0.05, 0.005]
            sched.step(5)
        assert sched.get_last_lr() == [0.1, 0.01]
    for factor in (1.5, -0.1):
        with pytest.raises(ValueError, match="^Constant multiplicative factor expected to be between 0 and 1.$"):
            L.ConstantLR(make_optimizers(graft), factor=factor)


def test_polynomial_lr_closed_form():
    got, want = [], []
    for lib, out in ((graft, got), (torch, want)):
        opt = make_optimizers(lib)
        sched = lib.optim.lr_scheduler.PolynomialLR(opt, total_iters=6, power=1.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (4, 2, 9):
                sched.step(epoch)
                out.append(sched.get_last_lr())
    assert_rows(got, want)


def test_cosine_warm_restarts_epoch_argument():
    # step(epoch) with fractional epochs (per batch), without the deprecation warning.
    got, want = [], []
    for lib, out in ((graft, got), (torch, want)):
        for mult in (1, 2):
            opt = make_optimizers(lib)
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=mult, eta_min=0.002)
            for epoch in (0.5, 1.25, 2.9, 3.0, 4.5, 8.75, 10, 22.5, 1.0):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    opt.step()
                    sched.step(epoch)
                assert not caught
                out.append(sched.get_last_lr() + [sched.T_cur, sched.T_i, sched.last_epoch])
    assert_rows(got, want)


def test_cosine_warm_restarts_errors():
    opt = make_optimizers(graft)
    for kwargs, message in ((dict(T_0=0), "Expected positive integer T_0, but got 0"),
                            (dict(T_0=2.0), "Expected positive integer T_0, but got 2.0"),
                            (dict(T_0=2, T_mult=0), "Expected integer T_mult >= 1, but got 0"),
                            (dict(T_0=2, T_mult=1.5), "Expected integer T_mult >= 1, but got 1.5")):
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            L.CosineAnnealingWarmRestarts(opt, **kwargs)
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            T.CosineAnnealingWarmRestarts(make_optimizers(torch), **kwargs)
    # PyTorch 2.x also checks eta_min's type (1.13 does not).
    with pytest.raises(ValueError, match=re.escape("Expected float or int eta_min, but got 0.1 of type <class 'str'>")):
        L.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0.1")
    sched = L.CosineAnnealingWarmRestarts(opt, T_0=2)
    with pytest.raises(ValueError, match="^Expected non-negative epoch, but got -1$"):
        sched.step(-1)


def _two_optimizer_schedulers():
    opt, other = make_optimizers(graft), make_optimizers(graft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return opt, L.ConstantLR(opt, factor=0.5), L.ExponentialLR(other, gamma=0.9)


def test_sequential_lr_errors():
    # PyTorch 2.x's checks and texts (1.13: "... but got schedulers at index 1 to be different than
    # the optimizer passed in.", and no check for an empty list, a missing optimizer or a plateau).
    opt, s1, s2 = _two_optimizer_schedulers()
    with pytest.raises(ValueError, match="^" + re.escape(
            "SequentialLR expects all schedulers to belong to the same optimizer, but got scheduler ExponentialLR "
            "at index 1 has SGD (") + "[\\s\\S]*" + re.escape("), which is different from SGD.") + "$"):
        L.SequentialLR(opt, [s1, s2], milestones=[2])
    with pytest.raises(ValueError, match="^SequentialLR expects at least one scheduler, but got no scheduler.$"):
        L.SequentialLR(opt, [], milestones=[])
    with pytest.raises(TypeError, match=re.escape("SequentialLR at index 1 should have `optimizer` as its attribute.")):
        L.SequentialLR(opt, [s1, object()], milestones=[2])
    with pytest.raises(ValueError, match=re.escape(
            "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
            "specified when calling `step`, but got one at index 1 in the given schedulers sequence.")):
        L.SequentialLR(opt, [s1, L.ReduceLROnPlateau(opt)], milestones=[2])
    for lib in (graft, torch):
        m = lib.optim.lr_scheduler
        opt = make_optimizers(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s1 = m.ConstantLR(opt)
        with pytest.raises(ValueError, match=re.escape(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
                "milestone points, but got number of schedulers 1 and the number of milestones to be equal to 1")):
            m.SequentialLR(opt, [s1], milestones=[2])


def test_sequential_lr_undoes_nested_schedulers():
    # PyTorch 2.x undoes the initial step of schedulers inside a ChainedScheduler too (1.13 fails
    # on it): up to the milestone the lrs are the ChainedScheduler's alone.
    def chained(m, o):
        return m.ChainedScheduler([m.ConstantLR(o, factor=0.1, total_iters=2), m.ExponentialLR(o, gamma=0.9)])

    def sequential(m, o):
        return m.SequentialLR(o, [chained(m, o), m.StepLR(o, step_size=2, gamma=0.5)], milestones=[5])

    got = run(graft, sequential, 8)
    want = run(torch, chained, 4)
    assert_rows(got[0][:5], want[0])
    assert [s.last_epoch for s in got[3]._schedulers[0]._schedulers] == [4, 4]
    # then StepLR from its epoch 0 (closed form: the initial lr).
    assert_rows(got[0][5:], [[0.1, 0.01], [0.1, 0.01], [0.05, 0.005], [0.05, 0.005]])


def test_chained_scheduler_errors_and_last_lr():
    # PyTorch 2.x's optional optimizer, checks and texts (1.13: "... but got schedulers at index 0
    # and 1 to be different").
    opt, s1, s2 = _two_optimizer_schedulers()
    with pytest.raises(ValueError, match="^" + re.escape(
            "ChainedScheduler expects all schedulers to belong to the same optimizer, but got scheduler "
            "ExponentialLR at index 1 has SGD (") + "[\\s\\S]*" + re.escape("), which is different from SGD.") + "$"):
        L.ChainedScheduler([s1, s2])
    with pytest.raises(ValueError, match="^ChainedScheduler expects at least one scheduler to be chained, but got "
                                         "no scheduler.$"):
        L.ChainedScheduler([])
    with pytest.raises(TypeError, match=re.escape("ChainedScheduler at index 1 should have `optimizer` as its")):
        L.ChainedScheduler([s1, object()])
    with pytest.raises(ValueError, match=re.escape("ChainedScheduler does not support `ReduceLROnPlateau`")):
        L.ChainedScheduler([s1, L.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="at index 0 has SGD"):
        L.ChainedScheduler([s1], optimizer=s2.optimizer)
    chained = L.ChainedScheduler((s1,), optimizer=opt)
    assert chained.get_last_lr() == [0.05, 0.005] and chained.optimizer is opt
    for lib in (graft, torch):
        opt = make_optimizers(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            chained = lib.optim.lr_scheduler.ChainedScheduler([lib.optim.lr_scheduler.ConstantLR(opt, factor=0.5)])
        assert chained.get_last_lr() == [0.05, 0.005] and chained.optimizer is opt


def test_cyclic_lr_sets_lr_and_momentum_at_construction():
    for lib in (graft, torch):
        opt = make_optimizers(lib)
        lib.optim.lr_scheduler.CyclicLR(opt, base_lr=[0.02, 0.002], max_lr=0.1, base_momentum=0.5,
                                        max_momentum=0.8)
        assert [g["lr"] for g in opt.param_groups] == [0.02, 0.002]
        assert [g["momentum"] for g in opt.param_groups] == [0.8, 0.8]
    # PyTorch 2.x records the group's base/max momentum as OneCycleLR does.
    opt = make_optimizers(graft)
    L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, base_momentum=0.5, max_momentum=0.8)
    assert opt.param_groups[1]["base_momentum"] == 0.5 and opt.param_groups[1]["max_momentum"] == 0.8


def test_cyclic_lr_cycles_beta1_as_momentum():
    # PyTorch 2.x cycles Adam's beta1 exactly as SGD's momentum (1.13 refuses Adam): compare
    # with torch's SGD momentum under the same settings.
    build = BUILDS["CyclicLR-exp_range"]
    got = run(graft, build, adam=True, key="betas")
    want = run(torch, build)
    for g, w in zip(got[:3], want[:3]):
        assert_rows(g, w)
    opt = make_optimizers(graft, adam=True)
    L.CyclicLR(opt, base_lr=0.01, max_lr=0.1)
    assert opt.param_groups[0]["betas"] == (0.9, 0.99)


def test_cyclic_lr_errors():
    opt = make_optimizers(graft)
    with pytest.raises(ValueError, match="^mode is invalid and scale_fn is None$"):
        L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="sine")
    # PyTorch 2.x's message (1.13: "expected 2 values for max_lr, got 3").
    with pytest.raises(ValueError, match=re.escape(
            "max_lr must have the same length as optimizer.param_groups. max_lr has 3 values, param_groups has 2.")):
        L.CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.1, 0.1])
    plain = optim.Adagrad([graft.zeros(1, requires_grad=True)])
    with pytest.raises(ValueError, match=re.escape(
            "optimizer must support momentum or beta1 with `cycle_momentum` option enabled")):
        L.CyclicLR(plain, base_lr=0.01, max_lr=0.1)
    L.CyclicLR(plain, base_lr=0.01, max_lr=0.1, cycle_momentum=False)
    with pytest.raises(TypeError, match="^list is not an Optimizer$"):
        L.CyclicLR([], base_lr=0.01, max_lr=0.1)


def test_get_lr_outside_step_warns():
    for name in ("ConstantLR", "MultiplicativeLR", "PolynomialLR", "CosineAnnealingWarmRestarts",
                 "CyclicLR-triangular"):
        _, _, _, sched = run(graft, BUILDS[name], 1)
        with pytest.warns(UserWarning, match=re.escape("please use `get_last_lr()`")):
            sched.get_lr()


def test_exported():
    for name in ("ConstantLR", "MultiplicativeLR", "PolynomialLR", "SequentialLR", "ChainedScheduler",
                 "CosineAnnealingWarmRestarts", "CyclicLR"):
        assert name in L.__all__ and issubclass(getattr(L, name), L.LRScheduler)
        got = inspect.signature(getattr(L, name))
        want = inspect.signature(getattr(T, name))
        extra = ["optimizer"] if name == "ChainedScheduler" else []  # PyTorch 2.x's optional optimizer
        assert list(got.parameters) == list(want.parameters) + extra, name
        for param in want.parameters.values():
            if param.name != "verbose":  # PyTorch 2.x: "deprecated" (1.13: False)
                assert got.parameters[param.name].default == param.default, (name, param.name)


def test_cosine_warm_restarts_step_neither_counts_nor_warns():
    for lib in (graft, torch):
        opt = make_optimizers(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3)
            sched.step()  # before optimizer.step(): other schedulers warn here
            sched.step()
        assert not caught and sched._step_count == 0


class Scale:
    """A callable scale function object: CyclicLR's state dict keeps its __dict__."""

    def __init__(self):
        self.power = 1.0

    def __call__(self, x):
        return 1.0 / (x ** self.power)


def test_cyclic_lr_state_dict_scale_functions():
    # Loading sets the mode's scale function up again (the state dict holds none).
    opt = make_optimizers(graft)
    source = L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, mode="exp_range", gamma=0.5)
    state = source.state_dict()
    assert "_scale_fn_ref" not in state and state["_scale_fn_custom"] is None
    target = L.CyclicLR(make_optimizers(graft), base_lr=0.01, max_lr=0.1, mode="triangular")
    target.load_state_dict(state)
    assert target.scale_mode == "iterations" and target.scale_fn(3) == 0.125
    assert "_scale_fn_custom" in state  # the caller's dict is left whole
    # A custom callable object travels as its __dict__; a plain function as None.
    scale = Scale()
    scale.power = 2.0
    custom = L.CyclicLR(make_optimizers(graft), base_lr=0.01, max_lr=0.1, scale_fn=scale)
    state = custom.state_dict()
    assert state["_scale_fn_custom"] == {"power": 2.0}
    other = L.CyclicLR(make_optimizers(graft), base_lr=0.01, max_lr=0.1, scale_fn=Scale())
    other.load_state_dict(state)
    assert other.scale_fn(2) == 0.25
    assert L.CyclicLR(make_optimizers(graft), base_lr=0.01, max_lr=0.1,
                      scale_fn=lambda x: 1.0).state_dict()["_scale_fn_custom"] is None


def test_tensor_lr_is_written_in_place():
    # A tensor lr (PyTorch 2.x) stays the same tensor; CyclicLR and CosineAnnealingWarmRestarts
    # fill it like the other schedulers.
    builds = [(lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2), [0.01, 0.055, 0.1]),
              (lambda o: L.CosineAnnealingWarmRestarts(o, T_0=3), [0.1, 0.075, 0.025])]
    for build, want in builds:
        lr = graft.tensor(0.1, dtype=graft.float64)
        opt = optim.SGD([graft.zeros(1, requires_grad=True)], lr=lr, momentum=0.9)
        sched = build(opt)
        got = [lr.item()]
        for _ in range(2):
            opt.step()
            sched.step()
            got.append(lr.item())
        assert opt.param_groups[0]["lr"] is lr
        assert got == pytest.approx(want, rel=1e-12)


def test_cosine_warm_restarts_wraps_t_cur_modulo():
    # PyTorch 2.x wraps T_cur modulo T_i (1.13 subtracts T_i once, leaving 5.5 here).
    opt = make_optimizers(graft)
    sched = L.CosineAnnealingWarmRestarts(opt, T_0=3)
    sched.load_state_dict(dict(sched.state_dict(), T_cur=7.5))
    opt.step()
    sched.step()
    assert sched.T_cur == 2.5 and sched.T_i == 3


def test_multiplicative_lr_rejects_non_callables():
    # PyTorch 2.x's check (1.13 fails only when it calls the value).
    with pytest.raises(TypeError, match="^lr_lambda should be a function, but got float$"):
        L.MultiplicativeLR(make_optimizers(graft), 0.9)
    with pytest.raises(TypeError, match="^lr_lambda should be a function, but got str$"):
        L.MultiplicativeLR(make_optimizers(graft), [lambda e: 0.9, "x"])
    with pytest.raises(ValueError, match="^Expected 2 lr_lambdas, but got 1$"):
        L.MultiplicativeLR(make_optimizers(graft), ["x"])
