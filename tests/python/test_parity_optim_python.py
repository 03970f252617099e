"""Parity tier for graft.optim's Python-written optimizers (Adadelta, Adamax, NAdam, RAdam, Rprop,
ASGD, LBFGS): the same parameters and gradients (or the same small model and data) through
torch 1.13's optimizer and graft's, compared step by step; constructor errors, state dicts.

Where torch 1.13 computes something else than PyTorch 2.x (NAdam's second step-size term, which
1.13 divides by ``1 - mu_product * mu * mu_next``; the options 1.13 lacks: NAdam's and RAdam's
decoupled_weight_decay and maximize), graft follows 2.x and is compared with a transcription of
2.x's single-tensor update written with torch ops (``nadam_2x`` / ``radam_2x`` below)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402

# optimizers whose torch 1.13 update is PyTorch 2.x's
OPTIMIZERS = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.3, maximize=True, weight_decay=0.05)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.7), eps=1e-6, weight_decay=0.1)),  # rho_t > 5 from step 2
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05))),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)),  # averaging from step 3
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
]
STEPS = 6


def problem(dtype):
    rng = np.random.default_rng(4321)
    params = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype)]
    grads = [[rng.standard_normal(p.shape).astype(dtype) for p in params] for _ in range(STEPS)]
    # a repeated gradient sign for Rprop's growing step sizes
    grads[2] = [g.copy() for g in grads[1]]
    return params, grads


def run(lib, name, options, dtype, make=None):
    """Steps through problem(dtype) with two parameter groups (the second with its own lr) and
    an lr change after step 3; returns the parameters after each step, the state and the steps."""
    params0, grads = problem(dtype)
    params = [lib.tensor(p.copy(), requires_grad=True) for p in params0]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": 0.003}]
    opt = make(groups) if make else getattr(lib.optim, name)(groups, **options)
    history = []
    for step, step_grads in enumerate(grads):
        for p, g in zip(params, step_grads):
            p.grad = lib.tensor(g.copy())
        if step == 3:
            opt.param_groups[0]["lr"] *= 0.5
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    # (torch 1.13 keeps Adadelta's and Rprop's step as an int, 2.x and graft as a tensor)
    state = [{k: np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=dtype)
              for k, v in opt.state[p].items()} for p in params]
    return history, state


def tolerances(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-13)


def compare(got, want, where, dtype):
    (got_hist, got_state), (want_hist, want_state) = got, want
    for step, (g_params, w_params) in enumerate(zip(got_hist, want_hist)):
        for g, w in zip(g_params, w_params):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, err_msg=f"{where} step {step}", **tolerances(dtype))
    for g, w in zip(got_state, want_state):
        assert list(g) == list(w), where
        for k in w:
            np.testing.assert_allclose(g[k], w[k], err_msg=f"{where} state {k}", **tolerances(dtype))


@pytest.mark.parametrize("optimizer", ["Adadelta", "Adamax", "RAdam", "Rprop", "ASGD"])
def test_optimizer_parity(optimizer):
    for name, options in OPTIMIZERS:
        if name != optimizer:
            continue
        for dtype in ("float32", "float64"):
            compare(run(graft, name, options, dtype), run(torch, name, options, dtype), f"{name}({options}) {dtype}",
                    dtype)


def test_foreach_flag_gives_the_single_tensor_values():
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"):
        plain = run(graft, name, {}, "float64")
        foreach = run(graft, name, dict(foreach=True), "float64")
        compare(foreach, plain, name, "float64")


# PyTorch 2.x's single-tensor updates of NAdam and RAdam, transcribed with torch ops
def nadam_2x(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
             decoupled_weight_decay=False, maximize=False):
    return _Reference(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                   momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                   maximize=maximize), _nadam_2x_update, mu_product=True)


def radam_2x(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
             maximize=False):
    return _Reference(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                   decoupled_weight_decay=decoupled_weight_decay, maximize=maximize),
                      _radam_2x_update)


class _Reference(torch.optim.Optimizer):
    """A torch optimizer running ``update(group, param, grad, state)`` for each parameter."""

    def __init__(self, params, defaults, update, mu_product=False):
        super().__init__(params, defaults)
        self._update, self._mu_product = update, mu_product

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    if self._mu_product:
                        state["mu_product"] = torch.tensor(1.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                self._update(group, p, p.grad, state)
        return loss


def _nadam_2x_update(group, param, grad, state):
    grad = grad if not group["maximize"] else -grad
    (beta1, beta2), lr, wd, eps = group["betas"], group["lr"], group["weight_decay"], group["eps"]
    exp_avg, exp_avg_sq, mu_product, step_t = state["exp_avg"], state["exp_avg_sq"], state["mu_product"], state["step"]
    step_t += 1
    step = step_t.item()
    bias_correction2 = 1 - beta2 ** step
    if wd != 0:
        if group["decoupled_weight_decay"]:
            param.mul_(1 - lr * wd)
        else:
            grad = grad.add(param, alpha=wd)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
    mu_product *= mu
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt()
    mu_product_next = mu_product.item() * mu_next
    denom.add_(eps)
    param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product.item())))
    param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _radam_2x_update(group, param, grad, state):
    grad = grad if not group["maximize"] else -grad
    (beta1, beta2), lr, wd, eps = group["betas"], group["lr"], group["weight_decay"], group["eps"]
    exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
    step_t += 1
    step = step_t.item()
    if wd != 0:
        if group["decoupled_weight_decay"]:
            param.mul_(1 - lr * wd)
        else:
            grad = grad.add(param, alpha=wd)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    bias_corrected_exp_avg = exp_avg / bias_correction1
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
        param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
    else:
        param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


REFERENCE_2X = [
    ("NAdam", nadam_2x, dict()),
    ("NAdam", nadam_2x, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", nadam_2x, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", nadam_2x, dict(lr=0.01, maximize=True)),
    ("RAdam", radam_2x, dict(lr=0.01, betas=(0.5, 0.7), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", radam_2x, dict(lr=0.01, betas=(0.5, 0.7), maximize=True)),
    ("RAdam", radam_2x, dict()),
]


@pytest.mark.parametrize("case", range(len(REFERENCE_2X)))
def test_pytorch_2x_formulas(case):
    name, reference, options = REFERENCE_2X[case]
    for dtype in ("float32", "float64"):
        got = run(graft, name, options, dtype)
        want = run(torch, name, options, dtype, make=lambda groups: reference(groups, **options))
        compare(got, want, f"{name}({options}) {dtype}", dtype)


def test_nadam_differs_from_torch_1_13_only_by_its_mu_product_next():
    # torch 1.13's NAdam divides its second term by 1 - mu_product * mu * mu_next; 2.x (and graft)
    # by 1 - mu_product * mu_next. One step from zero state shows exactly that difference.
    beta1, lr, psi = 0.9, 2e-3, 4e-3
    mu, mu_next = (beta1 * (1.0 - 0.5 * 0.96 ** (k * psi)) for k in (1, 2))
    g = 0.5
    denom = abs(g) + 1e-8  # sqrt(exp_avg_sq / bias_correction2) + eps after one step
    first = -lr * (1 - mu) / (1 - mu) * g / denom
    exp_avg = (1 - beta1) * g
    want_2x = 1.0 + first - lr * mu_next / (1 - mu * mu_next) * exp_avg / denom
    want_113 = 1.0 + first - lr * mu_next / (1 - mu * mu * mu_next) * exp_avg / denom
    values = {}
    for lib in (graft, torch):
        p = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor([g], dtype=lib.float64)
        lib.optim.NAdam([p]).step()
        values[lib.__name__] = p.detach().item()
    # (mu_product is a float32 tensor: 1e-7 relative)
    assert values["graft"] == pytest.approx(want_2x, rel=1e-7) != pytest.approx(want_113, rel=1e-5)
    assert values["torch"] == pytest.approx(want_113, rel=1e-7) != pytest.approx(want_2x, rel=1e-5)


def model_run(lib, name, options, steps=5):
    """A Linear-Tanh-Linear model from fixed float64 weights, MSE loss on fixed data."""
    rng = np.random.default_rng(99)
    weights = [rng.standard_normal(s) * 0.5 for s in ((5, 4), (5,), (2, 5), (2,))]
    x, y = lib.tensor(rng.standard_normal((8, 4))), lib.tensor(rng.standard_normal((8, 2)))
    model = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    opt = getattr(lib.optim, name)(model.parameters(), **options)
    losses = []

    def closure():
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for _ in range(steps):
        losses.append(float(opt.step(closure)))
    return [p.detach().numpy().copy() for p in model.parameters()], losses


MODEL_CASES = [("Adadelta", dict(lr=1.0)), ("Adamax", dict(lr=0.05)), ("RAdam", dict(lr=0.05)),
               ("Rprop", dict(lr=0.05)), ("ASGD", dict(lr=0.1, t0=2)), ("LBFGS", dict(lr=0.5)),
               ("LBFGS", dict(line_search_fn="strong_wolfe"))]


@pytest.mark.parametrize("case", range(len(MODEL_CASES)))
def test_small_model_training_parity(case):
    name, options = MODEL_CASES[case]
    got_params, got_losses = model_run(graft, name, options)
    want_params, want_losses = model_run(torch, name, options)
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-10, atol=1e-12)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)
    assert got_losses[-1] < got_losses[0]


def test_small_model_nadam_matches_the_2x_formula():
    got_params, got_losses = model_run(graft, "NAdam", dict(lr=0.05))
    torch_optim_nadam = torch.optim.NAdam
    torch.optim.NAdam = nadam_2x
    try:
        want_params, want_losses = model_run(torch, "NAdam", dict(lr=0.05))
    finally:
        torch.optim.NAdam = torch_optim_nadam
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-10, atol=1e-12)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)


# -- LBFGS ---------------------------------------------------------------------------------------

def lbfgs_run(lib, options, dtype, steps=3):
    """Least squares plus a quartic term in two parameters; LBFGS steps with a closure."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 4)).astype(dtype), rng.standard_normal(6).astype(dtype)
    w = lib.tensor(rng.standard_normal(4).astype(dtype), requires_grad=True)
    c = lib.tensor(rng.standard_normal(1).astype(dtype), requires_grad=True)
    a_t, b_t = lib.tensor(a), lib.tensor(b)
    opt = lib.optim.LBFGS([w, c], **options)

    def closure():
        opt.zero_grad()
        r = a_t.matmul(w) + c - b_t
        loss = (r * r).sum() + (w ** 4).sum() * 0.1
        loss.backward()
        return loss

    losses = [float(opt.step(closure)) for _ in range(steps)]
    state = opt.state[w]
    return [w.detach().numpy().copy(), c.detach().numpy().copy()], losses, state


LBFGS_CASES = [dict(), dict(line_search_fn="strong_wolfe"), dict(lr=0.5, history_size=3, max_iter=7),
               dict(line_search_fn="strong_wolfe", history_size=2, max_iter=30),
               dict(lr=0.02, line_search_fn="strong_wolfe", max_iter=5),  # the search extrapolates
               dict(max_iter=4, max_eval=3, tolerance_change=1e-3)]


@pytest.mark.parametrize("case", range(len(LBFGS_CASES)))
def test_lbfgs_parity(case):
    options = LBFGS_CASES[case]
    got_params, got_losses, got_state = lbfgs_run(graft, options, "float64")
    want_params, want_losses, want_state = lbfgs_run(torch, options, "float64")
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-12)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert list(got_state) == list(want_state)
    assert (got_state["func_evals"], got_state["n_iter"]) == (want_state["func_evals"], want_state["n_iter"])
    assert len(got_state["old_dirs"]) == len(want_state["old_dirs"])
    np.testing.assert_allclose(float(got_state["t"]), float(want_state["t"]), rtol=1e-10)
    np.testing.assert_allclose(got_state["d"].numpy(), want_state["d"].numpy(), rtol=1e-8, atol=1e-12)


# objectives that drive the strong-Wolfe search through each of its branches: extrapolation past
# a too-short step, cubic steps outside the bracket, no curvature minimum, the zoom phase's
# boundary moves, a bracket below tolerance_change (|x - 1|), the 25-evaluation limit (-x)
LINE_SEARCH_CASES = [
    ("rosenbrock", [3.0, -2.0], dict(line_search_fn="strong_wolfe")),
    ("rosenbrock", [0.0, 0.0], dict(line_search_fn="strong_wolfe", lr=10)),
    ("rosenbrock", [1.2, 1.2], dict(line_search_fn="strong_wolfe", lr=1e4, tolerance_change=1e-5)),
    ("sine", [0.3], dict(line_search_fn="strong_wolfe", lr=50)),
    ("abs", [0.3], dict(line_search_fn="strong_wolfe", lr=50)),
    ("linear", [2.0, -1.0], dict(line_search_fn="strong_wolfe")),
]


def objective(lib, name, x):
    if name == "rosenbrock":
        return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    if name == "sine":
        return lib.sin(3 * x).sum() + (0.1 * x * x).sum()
    if name == "abs":
        return (x - 1).abs().sum()
    return -x.sum()


@pytest.mark.parametrize("case", range(len(LINE_SEARCH_CASES)))
def test_lbfgs_line_search_branches(case):
    name, x0, options = LINE_SEARCH_CASES[case]
    results = []
    for lib in (graft, torch):
        x = lib.tensor(np.array(x0), requires_grad=True)
        opt = lib.optim.LBFGS([x], **options)

        def closure():
            opt.zero_grad()
            loss = objective(lib, name, x)
            loss.backward()
            return loss

        losses = [float(opt.step(closure)) for _ in range(2)]
        results.append((x.detach().numpy().copy(), losses, opt.state[x]["func_evals"], opt.state[x]["n_iter"]))
    (g_x, g_losses, g_evals, g_iters), (w_x, w_losses, w_evals, w_iters) = results
    np.testing.assert_allclose(g_x, w_x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g_losses, w_losses, rtol=1e-10)
    assert (g_evals, g_iters) == (w_evals, w_iters)


def test_lbfgs_float32_parity():
    for options in (dict(), dict(line_search_fn="strong_wolfe")):
        got_params, got_losses, _ = lbfgs_run(graft, options, "float32", steps=1)
        want_params, want_losses, _ = lbfgs_run(torch, options, "float32", steps=1)
        np.testing.assert_allclose(got_losses, want_losses, rtol=1e-6)
        for g, w in zip(got_params, want_params):
            assert g.dtype == w.dtype == np.float32
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_lbfgs_errors_match_torch():
    for lib in (graft, torch):
        a, b = lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)
        with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
            lib.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        opt = lib.optim.LBFGS([a], line_search_fn="wolfe")

        def closure():
            opt.zero_grad()
            loss = ((a - 1) ** 2).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match=r"^only 'strong_wolfe' is supported$"):
            opt.step(closure)
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -1$"):  # PyTorch 2.x's check
        graft.optim.LBFGS([graft.zeros(1, requires_grad=True)], lr=-1)


def test_lbfgs_stops_at_a_zero_gradient_and_returns_the_first_loss():
    for lib in (graft, torch):
        p = lib.ones(2, requires_grad=True)
        opt = lib.optim.LBFGS([p])
        calls = []

        def closure():
            calls.append(lib.is_grad_enabled())
            opt.zero_grad()
            loss = ((p - 1) ** 2).sum()
            loss.backward()
            return loss

        loss = opt.step(closure)
        assert float(loss) == 0.0 and calls == [True]
        assert sorted(opt.state[p]) == ["func_evals", "n_iter"]


def test_lbfgs_state_dict_round_trip_continues_identically():
    options = dict(history_size=4, max_iter=3)
    _, straight, _ = lbfgs_run(graft, options, "float64", steps=4)
    rng = np.random.default_rng(5)
    a, b = graft.tensor(rng.standard_normal((6, 4))), graft.tensor(rng.standard_normal(6))
    w0, c0 = rng.standard_normal(4), rng.standard_normal(1)
    w, c = graft.tensor(w0, requires_grad=True), graft.tensor(c0, requires_grad=True)

    def make():
        opt = graft.optim.LBFGS([w, c], **options)

        def closure():
            opt.zero_grad()
            r = a.matmul(w) + c - b
            loss = (r * r).sum() + (w ** 4).sum() * 0.1
            loss.backward()
            return loss
        return opt, closure

    opt, closure = make()
    losses = [float(opt.step(closure)) for _ in range(2)]
    saved = opt.state_dict()
    opt2, closure2 = make()
    opt2.load_state_dict(saved)
    assert opt2.state[w]["n_iter"] == opt.state[w]["n_iter"]
    losses += [float(opt2.step(closure2)) for _ in range(2)]
    np.testing.assert_allclose(losses, straight, rtol=1e-13)


# -- construction errors, state dicts ---------------------------------------------------------------

ERRORS = [
    ("Adadelta", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(eps=-1e-6), "Invalid epsilon value: -1e-06"),
    ("Adadelta", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("Adamax", dict(lr=-0.5), "Invalid learning rate: -0.5"),
    ("Adamax", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("Adamax", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("NAdam", dict(lr=-1), "Invalid learning rate: -1"),
    ("NAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("NAdam", dict(momentum_decay=-0.1), "Invalid momentum_decay value: -0.1"),
    ("NAdam", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("RAdam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("RAdam", dict(betas=(-0.5, 0.9)), "Invalid beta parameter at index 0: -0.5"),
    ("RAdam", dict(weight_decay=-2), "Invalid weight_decay value: -2"),
    ("Rprop", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("Rprop", dict(etas=(1.1, 1.2)), "Invalid eta values: 1.1, 1.2"),
    ("Rprop", dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    ("Rprop", dict(etas=(0.0, 1.2)), "Invalid eta values: 0.0, 1.2"),
    ("ASGD", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("ASGD", dict(weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
]


@pytest.mark.parametrize("name, options, message", ERRORS)
def test_construction_errors_match_torch(name, options, message):
    for lib in (graft, torch):
        with pytest.raises(ValueError) as info:
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **options)
        assert str(info.value) == message


def test_pytorch_2x_only_checks():
    p = graft.zeros(2, requires_grad=True)
    for name in ("Adadelta", "RAdam", "Rprop", "ASGD", "NAdam"):
        with pytest.raises(ValueError, match="^Tensor lr must be 1-element$"):
            getattr(graft.optim, name)([p], lr=graft.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match="^Invalid learning rate: nan$"):
        graft.optim.Adamax([p], lr=float("nan"))
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        graft.optim.RAdam([p], differentiable=True)


DEFAULTS_2X = {
    "Adadelta": dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False, capturable=False, foreach=None,
                     differentiable=False),
    "Adamax": dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, maximize=False,
                   differentiable=False, capturable=False),
    "NAdam": dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                  decoupled_weight_decay=False, maximize=False, foreach=None, capturable=False, differentiable=False),
    "RAdam": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False, foreach=None,
                  capturable=False, decoupled_weight_decay=False, differentiable=False),
    "Rprop": dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), foreach=None, maximize=False,
                  differentiable=False, capturable=False),
    "ASGD": dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False),
    "LBFGS": dict(lr=1, max_iter=20, max_eval=25, tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100,
                  line_search_fn=None),
}


@pytest.mark.parametrize("name", sorted(DEFAULTS_2X))
def test_defaults_are_pytorch_2x_and_a_superset_of_1_13(name):
    p = graft.zeros(2, requires_grad=True)
    got = getattr(graft.optim, name)([p]).defaults
    assert got == DEFAULTS_2X[name]
    want_113 = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)]).defaults
    for key, value in want_113.items():
        assert got[key] == value, (name, key)


def train(name, reload_at=None):
    """problem()'s gradient sequence through one optimizer over one group; with ``reload_at``, a
    new optimizer takes over there from the old one's state_dict()."""
    params0, grads = problem("float64")
    params = [graft.tensor(p.copy(), requires_grad=True) for p in params0]
    opt = getattr(graft.optim, name)(params, lr=0.01)
    history = []
    for step, step_grads in enumerate(grads):
        if step == reload_at:
            saved = opt.state_dict()
            assert sorted(saved["state"]) == [0, 1]
            opt = getattr(graft.optim, name)(params, lr=0.5)
            opt.load_state_dict(saved)
            assert opt.param_groups[0]["lr"] == 0.01
        for p, g in zip(params, step_grads):
            p.grad = graft.tensor(g.copy())
        opt.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_state_dict_round_trip_resumes_exactly(name):
    # NAdam's mu_product and ASGD's eta and mu are cast to the parameters' dtype (float64) by
    # load_state_dict, as PyTorch casts every state tensor but 'step': later steps round them in
    # float64 instead of float32
    tol = dict(rtol=1e-7, atol=1e-9) if name in ("NAdam", "ASGD") else dict(rtol=0, atol=0)
    for got, want in zip(train(name, reload_at=3), train(name)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("name, key", [("NAdam", "mu_product"), ("ASGD", "eta"), ("ASGD", "mu")])
def test_load_state_dict_casts_scalar_state_but_step_as_pytorch(name, key):
    for lib in (graft, torch):
        p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        opt = getattr(lib.optim, name)([p])
        p.grad = lib.tensor([0.5, -0.5], dtype=lib.float64)
        opt.step()
        assert opt.state[p][key].dtype == lib.float32
        opt.load_state_dict(opt.state_dict())
        assert opt.state[p][key].dtype == lib.float64
        assert opt.state[p]["step"].dtype == lib.float32


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_state_keys_and_types_match_pytorch(name):
    state = {}
    for lib in (graft, torch):
        p = lib.tensor([1.0, -2.0], dtype=lib.float64, requires_grad=True)
        opt = getattr(lib.optim, name)([p])
        p.grad = lib.tensor([0.5, 0.25], dtype=lib.float64)
        opt.step()
        state[lib.__name__] = opt.state_dict()["state"][0]
    got, want = state["graft"], state["torch"]
    assert list(got) == list(want)
    for key, value in got.items():
        assert isinstance(value, graft.Tensor)
        if key in ("step", "mu_product", "eta", "mu"):  # 0-d float32 tensors, as in PyTorch 2.x
            assert value.dim() == 0 and value.dtype == graft.float32, key
        else:
            assert value.dtype == graft.float64 and tuple(value.shape) == (2,)
        np.testing.assert_allclose(value.numpy(), np.asarray(want[key], dtype=np.float64), rtol=1e-7)


def test_old_state_dicts_with_numbers_are_loaded_as_tensors():
    for name, numbers in (("NAdam", dict(step=2, mu_product=0.5)), ("ASGD", dict(step=2, eta=0.01, mu=1.0)),
                          ("Rprop", dict(step=2)), ("Adadelta", dict(step=3))):
        p = graft.tensor([1.0, 2.0], requires_grad=True)
        opt = getattr(graft.optim, name)([p])
        p.grad = graft.tensor([0.5, -0.5])
        opt.step()
        saved = opt.state_dict()
        saved["state"][0].update(numbers)
        opt.load_state_dict(saved)
        for key, value in numbers.items():
            got = opt.state[p][key]
            assert isinstance(got, graft.Tensor) and got.dtype == graft.float32, (name, key)
            assert got.item() == pytest.approx(value, rel=1e-7), (name, key)
        opt.step()


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"])
def test_state_is_optimizer_state_and_steps_do_not_record(name):
    p = graft.tensor([1.0, 2.0, 3.0], requires_grad=True)
    opt = getattr(graft.optim, name)([p])
    p.grad = graft.tensor([0.1, 0.2, 0.3])
    version = p._version
    opt.step()
    assert p.grad_fn is None and p.is_leaf and p._version > version
    for t in opt.state[p].values():
        assert graft._C._optim.memory_category(t) == "optimizer_state"


def test_step_hooks_and_closure():
    p = graft.tensor([1.0, -1.0], requires_grad=True)
    opt = graft.optim.Rprop([p])
    seen = []
    handle = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))

    def closure():
        seen.append(graft.is_grad_enabled())
        loss = (p * p).sum()
        p.grad = None
        loss.backward()
        return loss

    with graft.no_grad():
        loss = opt.step(closure)
    assert seen == ["pre", True, "post"] and loss.detach().item() == 2.0
    handle.remove()
    np.testing.assert_allclose(p.detach().numpy(), [0.99, -0.99])


def test_single_tensor_optimizer_subclass_must_define_its_update():
    from graft.optim._single_tensor import SingleTensorOptimizer

    class NoUpdate(SingleTensorOptimizer):
        pass

    p = graft.ones(1, requires_grad=True)
    p.grad = graft.ones(1)
    with pytest.raises(NotImplementedError):
        NoUpdate([p], {}).step()


def test_parameters_without_grad_get_no_state():
    a, b = graft.ones(2, requires_grad=True), graft.ones(2, requires_grad=True)
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"):
        opt = getattr(graft.optim, name)([a, b])
        a.grad = graft.ones(2)
        b.grad = None
        opt.step()
        assert b not in opt.state and len(opt.state[a]) > 0


def test_asgd_eta_and_mu_follow_pytorch():
    want_eta = lambda step: 0.01 / ((1 + 1e-4 * 0.01 * step) ** 0.75)  # noqa: E731
    for lib in (graft, torch):
        p = lib.zeros(3, requires_grad=True)
        opt = lib.optim.ASGD([p], t0=2)
        for step in range(1, 5):
            p.grad = lib.ones(3)
            opt.step()
            state = opt.state[p]
            assert state["eta"].item() == pytest.approx(want_eta(step), rel=1e-7)
            assert state["mu"].item() == 1 / max(1, step - 2)
    assert math.isclose(want_eta(0), 0.01)
