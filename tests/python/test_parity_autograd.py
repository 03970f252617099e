"""Parity tier: the same small autograd programs in torch and in graft, comparing values and
gradients (composite functions, Hessian-vector products, custom Functions with double
backward, hooks, saved-tensor hooks, gradcheck)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402

LIBS = (torch, graft)


def _np(t):
    return None if t is None else np.asarray(t.detach().tolist())


def _same(program):
    """Runs program(lib) for torch and graft; returns both results (lists of arrays/values)."""
    return program(torch), program(graft)


def _assert_close(a, b, rtol=1e-6, atol=1e-8):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        elif isinstance(x, (str, bool, int, tuple)):
            assert x == y
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def _inputs(lib):
    x = lib.tensor([[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([0.2, -0.4, 1.1], dtype=lib.float64, requires_grad=True)
    return x, w


def test_grad_of_a_composite_function():
    def program(lib):
        x, w = _inputs(lib)
        h = (x * w).tanh()
        y = (h.sigmoid() * x.exp()).sum(1).log_softmax(0).sum() + (w * w).mean()
        y.backward()
        return [_np(y), _np(x.grad), _np(w.grad)]

    _assert_close(*_same(program))


def test_autograd_grad_with_grad_outputs_and_retain_graph():
    def program(lib):
        x, w = _inputs(lib)
        y = x.matmul(w.unsqueeze(1)).squeeze(1).sigmoid()
        v = lib.tensor([1.0, -2.0], dtype=lib.float64)
        gx, gw = lib.autograd.grad(y, (x, w), v, retain_graph=True)
        gx2, = lib.autograd.grad(y.sum(), x)
        return [_np(gx), _np(gw), _np(gx2)]

    _assert_close(*_same(program))


def test_hessian_vector_product_via_create_graph():
    def program(lib):
        _, w = _inputs(lib)
        f = (w * w * w).sum() + (w[0] * w[1]).exp() + w.sin().prod()
        g, = lib.autograd.grad(f, w, create_graph=True)
        v = lib.tensor([1.0, 0.5, -1.0], dtype=lib.float64)
        hv, = lib.autograd.grad(g, w, grad_outputs=v)
        return [_np(g), _np(hv)]

    _assert_close(*_same(program))


def _cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x * x * ctx.k, None

    return Cube


def test_custom_function_double_backward():
    def program(lib):
        x, _ = _inputs(lib)
        cube = _cube(lib)
        y = cube.apply(x, 0.5)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return [_np(y), _np(g), _np(gg), y.grad_fn.name(), y.grad_fn.needs_input_grad,
                lib.autograd.gradgradcheck(cube.apply, (x, 0.5))]

    _assert_close(*_same(program))


def test_custom_function_flags():
    def program(lib):
        seen = []

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.set_materialize_grads(False)
                idx = (x > 0).long()
                ctx.mark_non_differentiable(idx)
                y.mul_(2)
                ctx.mark_dirty(y)
                return x.exp(), idx, y, x * 3

            @staticmethod
            def backward(ctx, g_exp, g_idx, g_y, g_three):
                seen.append((g_idx is None, g_three is None))
                return g_exp * 2, g_y * 2

        x, _ = _inputs(lib)
        y = lib.ones(2, 3, dtype=lib.float64, requires_grad=True) * 1
        e, idx, y2, _ = Fn.apply(x, y)
        (e.sum() + y2.sum()).backward()
        return [_np(e), _np(idx), y2 is y, _np(x.grad), seen[0], idx.requires_grad]

    _assert_close(*_same(program))


def test_tensor_hooks_and_retain_grad():
    def program(lib):
        x, w = _inputs(lib)
        x.register_hook(lambda g: g * 10)
        h = x * w
        h.register_hook(lambda g: g + 1)
        h.retain_grad()  # after the hook: 1.13 and 2.x agree that .grad sees the hooked value
        handle = w.register_hook(lambda g: g * 0)
        handle.remove()
        (h.tanh() ** 2).sum().backward()
        return [_np(x.grad), _np(w.grad), _np(h.grad)]

    _assert_close(*_same(program))


def test_saved_tensors_hooks_counts_and_values():
    def program(lib):
        x, w = _inputs(lib)
        log = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t.detach(),
                                                    lambda t: log.append("unpack") or t):
            y = (x * w).exp().sum()
        y.backward()
        return [_np(x.grad), _np(w.grad), tuple(log)]

    _assert_close(*_same(program))


def test_gradcheck_results_agree():
    def program(lib):
        x, w = _inputs(lib)

        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        return [lib.autograd.gradcheck(lambda a, b: (a * b).sin(), (x, w)),
                lib.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False),
                lib.autograd.gradgradcheck(lambda a: a.exp() * a, (x,))]

    _assert_close(*_same(program))


@pytest.mark.parametrize("exponent", [-2 ** 63, 2 ** 62 + 1, -3, 3, 0.5])
def test_pow_gradient_for_integer_exponents_at_the_int64_edges(exponent):
    # PyTorch takes exponent - 1 in double: in int64, -2**63 - 1 wrapped to 2**63 - 1 and swapped
    # the gradient's zeros and infinities ([-0., -inf] at [2, 0.5])
    def program(lib):
        x = lib.tensor([2.0, 0.5, 1.0], requires_grad=True)
        (x ** exponent).sum().backward()
        return [x.grad]
    a, b = _same(program)
    np.testing.assert_array_equal(_np(a[0]), _np(b[0]))
    assert np.array_equal(np.signbit(_np(a[0])), np.signbit(_np(b[0])))
