"""Parity tier for activation checkpointing: the same programs with torch.utils.checkpoint
(Debian's PyTorch 1.13) and graft.utils.checkpoint give the same outputs and gradients -
backward, autograd.grad, double backward, nested checkpoints, kwargs and non-tensor values,
checkpoint_sequential - and the same behaviour where values cannot match (dropout draws from
each library's own generator: in both, the checkpointed gradients equal the plain ones)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.utils.checkpoint  # noqa: E402,F401
import torch.utils.checkpoint  # noqa: E402,F401

LIBS = (torch, graft)


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist())


def _both(program):
    results = [program(lib) for lib in LIBS]
    a, b = results
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None or isinstance(x, (str, bool, int, float)):
            assert x == y
        else:
            np.testing.assert_allclose(y, x, rtol=1e-10, atol=1e-12)
    return results


def _params(lib, *shapes):
    rng = np.random.default_rng(7)
    return [lib.tensor(rng.standard_normal(s), dtype=lib.float64, requires_grad=True) for s in shapes]


def _block(lib, x, w, b):
    return (x @ w + b).tanh() * x.sigmoid() + (x * x).sum(1, keepdim=True).sqrt()


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_match(use_reentrant):
    def program(lib):
        x, w, b = _params(lib, (5, 4), (4, 4), (4,))
        h = lib.utils.checkpoint.checkpoint(_block, lib, x, w, b, use_reentrant=use_reentrant)
        out = lib.utils.checkpoint.checkpoint(_block, lib, h, w, b, use_reentrant=use_reentrant).pow(2).mean()
        out.backward()
        return [_np(out), _np(x.grad), _np(w.grad), _np(b.grad)]

    _both(program)


def test_autograd_grad_kwargs_and_non_tensor_outputs():
    def program(lib):
        x, w, b = _params(lib, (3, 4), (4, 4), (4,))

        def fn(a, scale, *, weight, bias=None):
            return (a @ weight + bias).exp() * scale, "tag", scale

        out, tag, scale = lib.utils.checkpoint.checkpoint(fn, x, 0.5, weight=w, bias=b, use_reentrant=False)
        gx, gb = lib.autograd.grad(out.sum(), (x, b))
        return [_np(out), tag, scale, _np(gx), _np(gb)]

    _both(program)


def test_double_backward_matches():
    def program(lib):
        x, w, b = _params(lib, (3, 4), (4, 4), (4,))
        y = lib.utils.checkpoint.checkpoint(_block, lib, x, w, b, use_reentrant=False).pow(3).sum()
        gx, gw = lib.autograd.grad(y, (x, w), create_graph=True)
        v = lib.ones(3, 4, dtype=lib.float64)
        hx, hw = lib.autograd.grad((gx * v).sum() + gw.pow(2).sum(), (x, w))
        ok = lib.autograd.gradgradcheck(
            lambda a: lib.utils.checkpoint.checkpoint(_block, lib, a, w, b, use_reentrant=False).sum(), (x,))
        return [_np(gx), _np(gw), _np(hx), _np(hw), ok]

    _both(program)


def test_nested_checkpoints_match():
    def program(lib):
        x, w, b = _params(lib, (3, 4), (4, 4), (4,))
        ck = lib.utils.checkpoint.checkpoint

        def outer(a):
            h = ck(_block, lib, a, w, b, use_reentrant=False)
            return ck(lambda t: ck(_block, lib, t, w, b, use_reentrant=False).cos(), h, use_reentrant=False)

        out = ck(outer, x, use_reentrant=False).sum()
        return [_np(out)] + [_np(g) for g in lib.autograd.grad(out, (x, w, b))]

    _both(program)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_matches(use_reentrant):
    rng = np.random.default_rng(3)
    data = [rng.standard_normal(s) for s in ((6, 5), (6,), (6, 6), (6,), (2, 6), (2,))]
    x_np = rng.standard_normal((4, 5))

    def program(lib):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 2), nn.Sigmoid())
        model.double()
        with lib.no_grad():
            for p, d in zip(model.parameters(), data):
                p.copy_(lib.tensor(d, dtype=lib.float64))
        x = lib.tensor(x_np, dtype=lib.float64, requires_grad=True)
        if lib is torch:  # 1.13's checkpoint_sequential has no use_reentrant (always reentrant)
            out = lib.utils.checkpoint.checkpoint_sequential(model, 3, x)
        else:
            out = lib.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant)
        out.sum().backward()
        return [_np(out), _np(x.grad)] + [_np(p.grad) for p in model.parameters()]

    _both(program)


def test_dropout_gradients_equal_the_plain_ones_in_both():
    def program(lib):
        lib.manual_seed(11)
        x = lib.randn(6, 8, requires_grad=True)
        lin = lib.nn.Linear(8, 8)

        def fn(a):
            return lib.nn.functional.dropout(lin(a), p=0.4, training=True).sum(1)

        state = lib.get_rng_state()
        g_plain, = lib.autograd.grad(fn(x).sum(), x)
        lib.set_rng_state(state)
        g_ckpt, = lib.autograd.grad(lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False).sum(), x)
        return [bool(lib.equal(g_plain, g_ckpt))]

    assert _both(program)[1] == [True]


def test_no_grad_and_error_types_match():
    def program(lib):
        x, w, b = _params(lib, (3, 4), (4, 4), (4,))
        with lib.no_grad():
            out = lib.utils.checkpoint.checkpoint(_block, lib, x, w, b, use_reentrant=False)
        y = lib.utils.checkpoint.checkpoint(_block, lib, x, w, b, use_reentrant=True).sum()
        try:  # 1.13 and 2.x word this error differently; both raise RuntimeError
            lib.autograd.grad(y, x)
            error = None
        except RuntimeError as e:
            error = type(e).__name__
        try:
            lib.utils.checkpoint.checkpoint(_block, lib, x, w, b, use_reentrant=True, foo=1)
        except ValueError as e:
            value_error = str(e)
        return [out.grad_fn is None, out.requires_grad, error, value_error]

    _both(program)
