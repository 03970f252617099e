"""Parity tier: the same parameters and gradient sequence through torch 1.13's and graft's
optimizers and LR schedulers, compared step by step (parameters, state, learning rates)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, betas=(0.9, 0.9), weight_decay=0.3, amsgrad=True, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.05, momentum=0.7)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05, initial_accumulator_value=0.1, eps=1e-8)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]
STEPS = 6


def problem(dtype):
    rng = np.random.default_rng(1234)
    params = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype)]
    grads = [[rng.standard_normal(p.shape).astype(dtype) for p in params] for _ in range(STEPS)]
    return params, grads


def run(lib, name, options, dtype, second_group_lr=None):
    params0, grads = problem(dtype)
    params = [lib.tensor(p.copy(), requires_grad=True) for p in params0]
    groups = [{"params": [params[0]]}, {"params": [params[1]]}]
    if second_group_lr is not None:
        groups[1]["lr"] = second_group_lr
    opt = getattr(lib.optim, name)(groups, **options)
    history = []
    for step, step_grads in enumerate(grads):
        for p, g in zip(params, step_grads):
            p.grad = lib.tensor(g.copy())
        if step == 3:
            opt.param_groups[0]["lr"] *= 0.5  # an lr change takes effect on the next step
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    state = [{k: v.detach().numpy().copy() for k, v in opt.state[p].items() if v is not None and k != "step"}
             for p in params]
    steps = [float(opt.state[p]["step"]) for p in params if "step" in opt.state[p]]
    return history, state, steps


# One test per optimizer (conftest's per-test gc.collect() is slow with torch loaded).
@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_optimizer_parity(optimizer):
    for name, options in OPTIMIZERS:
        if name != optimizer:
            continue
        for dtype in ("float32", "float64"):
            where = f"{name}({options}) {dtype}"
            tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)
            got_hist, got_state, got_steps = run(graft, name, options, dtype, second_group_lr=0.003)
            want_hist, want_state, want_steps = run(torch, name, options, dtype, second_group_lr=0.003)
            for step, (got, want) in enumerate(zip(got_hist, want_hist)):
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype
                    np.testing.assert_allclose(g, w, err_msg=f"{where} step {step}", **tol)
            for g, w in zip(got_state, want_state):
                assert sorted(g) == sorted(w), where
                for k in w:
                    np.testing.assert_allclose(g[k], w[k], err_msg=f"{where} state {k}", **tol)
            assert got_steps == want_steps, where


def test_state_dict_structure_parity():
    got = run_state_dict(graft)
    want = run_state_dict(torch)
    assert list(got["state"]) == list(want["state"]) == [0, 1]
    assert [g["params"] for g in got["param_groups"]] == [g["params"] for g in want["param_groups"]]
    for g, w in zip(got["param_groups"], want["param_groups"]):
        for key in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
            assert g[key] == w[key]
    for i in (0, 1):
        assert list(got["state"][i]) == list(want["state"][i])
        for k, v in want["state"][i].items():
            np.testing.assert_allclose(got["state"][i][k].numpy(), v.numpy(), rtol=1e-6)


def run_state_dict(lib):
    a = lib.tensor([1.0, -2.0], requires_grad=True)
    b = lib.tensor([0.5], requires_grad=True)
    opt = lib.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=0.01, amsgrad=True)
    for g in ([0.1, -0.3], [0.2, 0.4]):
        a.grad = lib.tensor(g)
        b.grad = lib.tensor(g[:1])
        opt.step()
    return opt.state_dict()


SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.3)),
    ("MultiStepLR", dict(milestones=[2, 4, 4, 9], gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.8)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.0005)),
    ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1.0 + e))),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.9, total_iters=6)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.05], total_steps=14)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=14, anneal_strategy="linear", three_phase=True)),
]


def schedule(lib, name, options, optimizer="SGD", steps=13):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    extra = dict(momentum=0.9) if optimizer == "SGD" else {}
    opt = getattr(lib.optim, optimizer)([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, **extra)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **options)
    lrs, moms = [sched.get_last_lr()], []
    for _ in range(steps):
        a.grad = lib.ones(2)
        b.grad = lib.ones(1)
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        moms.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return lrs, moms, [p.detach().numpy().copy() for p in (a, b)]


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_scheduler_parity(optimizer):
    for name, options in SCHEDULERS:
        where = f"{name}({options}) with {optimizer}"
        got_lrs, got_moms, got_params = schedule(graft, name, options, optimizer)
        want_lrs, want_moms, want_params = schedule(torch, name, options, optimizer)
        np.testing.assert_allclose(np.array(got_lrs), np.array(want_lrs), rtol=1e-13, err_msg=where)
        np.testing.assert_allclose(np.array(got_moms, dtype=float), np.array(want_moms, dtype=float), rtol=1e-13,
                                   err_msg=where)
        for g, w in zip(got_params, want_params):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7, err_msg=where)


def test_reduce_lr_on_plateau_parity():
    metrics = [1.0, 0.8, 0.8, 0.81, 0.9, 0.7, 0.7, 0.7, 0.7, 0.69, 0.7, 0.71]
    out = []
    for lib in (graft, torch):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, threshold=0.05,
                                                         threshold_mode="abs", cooldown=1)
        lrs = []
        for m in metrics:
            sched.step(m)
            lrs.append(opt.param_groups[0]["lr"])
        out.append(lrs)
    assert out[0] == out[1]
