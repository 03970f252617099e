"""graft.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against torch 1.13's
torch.autograd.functional: the same float64 data through the same functions (written once with
tensor methods; `lib` is graft or torch wherever a module is needed), the same result nesting,
values and error texts. graft-only behaviour (no vmap, no forward-mode AD) is checked on its own."""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402
import graft.autograd.functional as gaf  # noqa: E402

LIBS = (graft, torch)

_rs = np.random.RandomState(1234)
X = _rs.randn(3)
Y = _rs.randn(3)
M = _rs.randn(2, 3)
V2 = _rs.randn(2)
V3 = _rs.randn(3)
W3 = _rs.randn(3)


# ---------------------------------------------------------------------------------------------
# The functions under differentiation


def vec(x):
    return x.exp() * x.sum()


def reducer(m):
    return m.exp().sum(dim=1)


def two_in(x, y):
    return x.sin() * y + y.pow(2)


def two_in_two_out(x, y):
    return x * y.exp(), (x.pow(2) * y).sum()


def one_in_two_out(x):
    return x.pow(2), x.sin().sum()


def scalar(x):
    return x.pow(3).sum() * x.sin().sum()


def scalar2(x, y):
    return (x.pow(2) * y.exp()).sum() + x.sin().sum() * y.sum()


def ignores_y(x, y):
    return x.pow(2) * 2


def scalar_ignores_y(x, y):
    return x.pow(3).sum()


def linear(x):
    return 3 * x


def scalar_linear_in_y(x, y):
    return x.pow(3).sum() + 2 * y.sum()


# ---------------------------------------------------------------------------------------------
# Helpers


def t(lib, arr, requires_grad=False):
    return lib.tensor(np.array(arr, dtype=np.float64), requires_grad=requires_grad)


def fn(lib, name):
    return getattr(lib.autograd.functional, name)


def assert_same(g, ref):
    """Same nesting (Tensor / tuple / tuple of tuples), shapes and values."""
    assert isinstance(g, tuple) == isinstance(ref, tuple), (type(g), type(ref))
    if isinstance(ref, tuple):
        assert len(g) == len(ref)
        for a, b in zip(g, ref):
            assert_same(a, b)
        return
    assert isinstance(g, graft.Tensor)
    assert tuple(g.shape) == tuple(ref.shape)
    np.testing.assert_allclose(g.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)


def both(call):
    """Runs call(lib) for graft and torch and checks that the results agree; returns graft's."""
    res = call(graft)
    assert_same(res, call(torch))
    return res


def requires_grad_flags(res):
    if isinstance(res, tuple):
        return tuple(requires_grad_flags(r) for r in res)
    return res.requires_grad


def raises_same(exc, text, call, libs=LIBS):
    """call(lib) raises ``exc`` with exactly ``text`` (LIB standing for the module's name) in every lib."""
    for lib in libs:
        with pytest.raises(exc, match="^" + re.escape(text.replace("LIB", lib.__name__)) + "$"):
            call(lib)


INDEPENDENT_1 = ("The output of the user-provided function is independent of input 1. This is not allowed in "
                 "strict mode.")
NO_GRAD_OUT_0 = ("Output 0 of the user-provided function does not require gradients. The outputs must be computed "
                 "in a differentiable manner from the input when running in strict mode.")
CONSTANT_JAC_0 = ("The jacobian of the user-provided function is independent of input 0. This is not allowed in "
                  "strict mode when create_graph=True.")
CONSTANT_HESS_0 = ("The hessian of the user-provided function is independent of input 0. This is not allowed in "
                   "strict mode when create_graph=True.")
LINEAR_JAC_1 = ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                "to input 1 is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example).")
V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                "with a single element.")


# ---------------------------------------------------------------------------------------------
# vjp


def test_vjp_single_tensor():
    out, res = both(lambda lib: fn(lib, "vjp")(reducer, t(lib, M), t(lib, V2)))
    assert isinstance(out, graft.Tensor) and isinstance(res, graft.Tensor)
    assert not out.requires_grad and not res.requires_grad


def test_vjp_tuple_inputs_and_outputs():
    out, res = both(lambda lib: fn(lib, "vjp")(two_in_two_out, (t(lib, X), t(lib, Y)), (t(lib, V3), t(lib, 1.5))))
    assert len(out) == 2 and len(res) == 2


def test_vjp_tuple_inputs_single_output():
    out, res = both(lambda lib: fn(lib, "vjp")(two_in, (t(lib, X), t(lib, Y)), t(lib, V3)))
    assert isinstance(out, graft.Tensor) and len(res) == 2


def test_vjp_v_none_for_scalar_output():
    both(lambda lib: fn(lib, "vjp")(scalar, t(lib, X)))


def test_vjp_v_none_needs_single_element_output():
    text = "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
    raises_same(RuntimeError, text, lambda lib: fn(lib, "vjp")(vec, t(lib, X)))


def test_vjp_v_shape_errors():
    inputs = lambda lib: (t(lib, X), t(lib, Y))  # noqa: E731
    raises_same(RuntimeError, "v is a tuple of invalid length: should be 2 but got 1.",
                lambda lib: fn(lib, "vjp")(two_in_two_out, inputs(lib), (t(lib, V3),)))
    raises_same(RuntimeError, "The given v should contain a single Tensor.",
                lambda lib: fn(lib, "vjp")(two_in, inputs(lib), (t(lib, V3), t(lib, V3))))
    raises_same(RuntimeError, "v has invalid size: should be LIB.Size([3]) but got LIB.Size([2]).",
                lambda lib: fn(lib, "vjp")(two_in, inputs(lib), t(lib, V2)))
    raises_same(RuntimeError, "Entry 1 in v has invalid size: should be LIB.Size([]) but got LIB.Size([3]).",
                lambda lib: fn(lib, "vjp")(two_in_two_out, inputs(lib), (t(lib, V3), t(lib, V3))))


def test_vjp_type_errors():
    raises_same(TypeError, "The inputs given to vjp must be either a Tensor or a tuple of Tensors but the given "
                "inputs has type <class 'list'>.", lambda lib: fn(lib, "vjp")(vec, [t(lib, X)], t(lib, V3)))
    raises_same(TypeError, "The inputs given to vjp must be either a Tensor or a tuple of Tensors but the value at "
                "index 1 has type <class 'int'>.", lambda lib: fn(lib, "vjp")(two_in, (t(lib, X), 3), t(lib, V3)))
    raises_same(TypeError, "The outputs of the user-provided function given to vjp must be either a Tensor or a "
                "tuple of Tensors but the given outputs of the user-provided function has type <class 'list'>.",
                lambda lib: fn(lib, "vjp")(lambda x: [x * 2], t(lib, X), t(lib, V3)))


def test_vjp_create_graph_second_derivative():
    def second(lib):
        x, v = t(lib, X, requires_grad=True), t(lib, V3, requires_grad=True)
        out, res = fn(lib, "vjp")(vec, x, v, create_graph=True)
        assert out.requires_grad and res.requires_grad
        return (res,) + lib.autograd.grad((res.pow(2).sum(),), (x, v))
    both(second)


def test_vjp_detaches_without_create_graph():
    x = t(graft, X, requires_grad=True)
    out, res = gaf.vjp(vec, x, t(graft, V3))
    assert not out.requires_grad and not res.requires_grad and x.grad is None


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_arguments_are_left_untouched(name):
    x, v = t(graft, X), t(graft, V3, requires_grad=True)
    y = t(graft, Y, requires_grad=True)
    fn(graft, name)(scalar, x, t(graft, 1.0) if name == "vjp" else v)
    fn(graft, name)(scalar, y, t(graft, 1.0) if name == "vjp" else v)
    assert not x.requires_grad and y.requires_grad and v.requires_grad
    assert y.grad is None and v.grad is None


def test_vjp_independent_input_gives_zeros():
    out, (gx, gy) = both(lambda lib: fn(lib, "vjp")(ignores_y, (t(lib, X), t(lib, Y)), t(lib, V3)))
    assert not gy.detach().numpy().any() and gx.detach().numpy().any()


def test_vjp_strict_errors():
    raises_same(RuntimeError, INDEPENDENT_1,
                lambda lib: fn(lib, "vjp")(ignores_y, (t(lib, X), t(lib, Y)), t(lib, V3), strict=True))
    raises_same(RuntimeError, NO_GRAD_OUT_0,
                lambda lib: fn(lib, "vjp")(lambda x: x.detach() * 2, t(lib, X), t(lib, V3), strict=True))
    raises_same(RuntimeError, CONSTANT_JAC_0,
                lambda lib: fn(lib, "vjp")(linear, t(lib, X), t(lib, V3), create_graph=True, strict=True))


def test_vjp_strict_passes_on_dependent_function():
    both(lambda lib: fn(lib, "vjp")(two_in, (t(lib, X), t(lib, Y)), t(lib, V3), strict=True))


def test_vjp_under_no_grad():
    def call(lib):
        with lib.no_grad():
            return fn(lib, "vjp")(vec, t(lib, X), t(lib, V3))
    both(call)


@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
def test_create_graph_under_no_grad_still_builds_graph(name):
    def call(lib):
        x = t(lib, X, requires_grad=True)
        with lib.no_grad():
            out, res = fn(lib, name)(scalar, x, t(lib, 1.0 if name in ("vjp",) else V3), create_graph=True)
        assert out.requires_grad and res.requires_grad
        return (res,) + lib.autograd.grad((res.sum(),), (x,))
    both(call)


# ---------------------------------------------------------------------------------------------
# jvp


def test_jvp_single_tensor():
    out, res = both(lambda lib: fn(lib, "jvp")(reducer, t(lib, M), t(lib, M[::-1])))
    assert isinstance(res, graft.Tensor) and tuple(res.shape) == (2,) and not res.requires_grad


def test_jvp_tuple_inputs_and_outputs():
    out, res = both(lambda lib: fn(lib, "jvp")(two_in_two_out, (t(lib, X), t(lib, Y)), (t(lib, V3), t(lib, W3))))
    assert len(out) == 2 and len(res) == 2


def test_jvp_single_input_tuple_outputs():
    both(lambda lib: fn(lib, "jvp")(one_in_two_out, t(lib, X), t(lib, V3)))


def test_jvp_v_none_for_single_element_input():
    both(lambda lib: fn(lib, "jvp")(lambda x: x.exp() * 2, t(lib, [0.7])))
    raises_same(RuntimeError, V_NONE_INPUT, lambda lib: fn(lib, "jvp")(vec, t(lib, X)))


def test_jvp_v_shape_errors():
    raises_same(RuntimeError, "v is a tuple of invalid length: should be 2 but got 3.",
                lambda lib: fn(lib, "jvp")(two_in, (t(lib, X), t(lib, Y)), (t(lib, V3),) * 3))
    raises_same(RuntimeError, "Entry 0 in v has invalid size: should be LIB.Size([3]) but got LIB.Size([2]).",
                lambda lib: fn(lib, "jvp")(two_in, (t(lib, X), t(lib, Y)), (t(lib, V2), t(lib, V3))))
    raises_same(RuntimeError, "v has invalid size: should be LIB.Size([2, 3]) but got LIB.Size([3]).",
                lambda lib: fn(lib, "jvp")(reducer, t(lib, M), t(lib, V3)))


def test_jvp_create_graph_second_derivative():
    def second(lib):
        x, v = t(lib, X, requires_grad=True), t(lib, V3, requires_grad=True)
        out, res = fn(lib, "jvp")(vec, x, v, create_graph=True)
        assert out.requires_grad and res.requires_grad
        return (res,) + lib.autograd.grad((res.pow(2).sum(),), (x, v))
    both(second)


def test_jvp_independent_parts_give_zeros():
    out, res = both(lambda lib: fn(lib, "jvp")(ignores_y, (t(lib, X), t(lib, Y)), (t(lib, V3), t(lib, W3))))

    def captured(lib):  # the second output depends only on a captured tensor, not on the input
        w = t(lib, W3, requires_grad=True)
        return fn(lib, "jvp")(lambda x: (x * 2, w * 3), t(lib, X), t(lib, V3))
    out, (jx, jw) = both(captured)
    assert not jw.detach().numpy().any()


def test_jvp_strict_errors():
    raises_same(RuntimeError, INDEPENDENT_1,
                lambda lib: fn(lib, "jvp")(ignores_y, (t(lib, X), t(lib, Y)), (t(lib, V3),) * 2, strict=True))
    raises_same(RuntimeError, NO_GRAD_OUT_0,
                lambda lib: fn(lib, "jvp")(lambda x: x.detach() * 2, t(lib, X), t(lib, V3), strict=True))
    raises_same(RuntimeError, CONSTANT_JAC_0,
                lambda lib: fn(lib, "jvp")(linear, t(lib, X), t(lib, V3), create_graph=True, strict=True))

    def captured(lib):
        w = t(lib, W3, requires_grad=True)
        return fn(lib, "jvp")(lambda x: (x * 2, w * 3), t(lib, X), t(lib, V3), strict=True)
    raises_same(RuntimeError, "The gradient with respect to the input is independent of entry 1 in the grad_outputs "
                "when using the double backward trick to compute forward mode gradients. This is not allowed in "
                "strict mode.", captured)


# ---------------------------------------------------------------------------------------------
# jacobian


def test_jacobian_vector_function():
    res = both(lambda lib: fn(lib, "jacobian")(vec, t(lib, X)))
    assert tuple(res.shape) == (3, 3) and not res.requires_grad


def test_jacobian_matrix_input():
    res = both(lambda lib: fn(lib, "jacobian")(reducer, t(lib, M)))
    assert tuple(res.shape) == (2, 2, 3)


def test_jacobian_tuple_inputs_single_output():
    res = both(lambda lib: fn(lib, "jacobian")(two_in, (t(lib, X), t(lib, Y))))
    assert isinstance(res, tuple) and len(res) == 2 and tuple(res[1].shape) == (3, 3)


def test_jacobian_single_input_tuple_outputs():
    res = both(lambda lib: fn(lib, "jacobian")(one_in_two_out, t(lib, X)))
    assert tuple(res[0].shape) == (3, 3) and tuple(res[1].shape) == (3,)


def test_jacobian_tuple_inputs_and_outputs():
    res = both(lambda lib: fn(lib, "jacobian")(two_in_two_out, (t(lib, X), t(lib, Y))))
    assert [[tuple(j.shape) for j in row] for row in res] == [[(3, 3), (3, 3)], [(3,), (3,)]]


def test_jacobian_create_graph_second_derivative():
    def second(lib):
        x = t(lib, X, requires_grad=True)
        jac = fn(lib, "jacobian")(vec, x, create_graph=True)
        assert jac.requires_grad
        return (jac,) + lib.autograd.grad((jac.pow(2).sum(),), (x,))
    both(second)


def test_jacobian_sees_arguments_apart_from_captured_tensors():
    def call(lib):  # func multiplies its argument by the same tensor, captured: d(a * x)/da = diag(x)
        x = t(lib, X, requires_grad=True)
        return fn(lib, "jacobian")(lambda a: a * x, x, create_graph=True)
    res = both(call)
    np.testing.assert_allclose(res.detach().numpy(), np.diag(X))


def test_jacobian_independent_input_gives_zeros():
    res = both(lambda lib: fn(lib, "jacobian")(ignores_y, (t(lib, X), t(lib, Y))))
    assert not res[1].detach().numpy().any() and res[0].detach().numpy().any()


def test_jacobian_strict_errors():
    raises_same(RuntimeError, "Output 0 of the user-provided function is independent of input 1. This is not "
                "allowed in strict mode.",
                lambda lib: fn(lib, "jacobian")(ignores_y, (t(lib, X), t(lib, Y)), strict=True))
    raises_same(RuntimeError, NO_GRAD_OUT_0,
                lambda lib: fn(lib, "jacobian")(lambda x: x.detach() * 2, t(lib, X), strict=True))
    raises_same(RuntimeError, CONSTANT_JAC_0,
                lambda lib: fn(lib, "jacobian")(linear, t(lib, X), create_graph=True, strict=True))


def test_jacobian_strict_create_graph_names_the_input():
    # Output 1 is linear in input 0: its row of the jacobian for input 0 is constant. (torch 1.13 puts the
    # output's index in this message, "input 1"; graft names the input, as the text says.)
    def func(x, y):
        return x.pow(2) * y, 3 * x + y.pow(2)
    text = CONSTANT_JAC_0
    with pytest.raises(RuntimeError, match="^" + re.escape(text) + "$"):
        gaf.jacobian(func, (t(graft, X), t(graft, Y)), create_graph=True, strict=True)


def test_jacobian_vectorize_is_not_available():
    raises_same(RuntimeError, "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`.",
                lambda lib: fn(lib, "jacobian")(vec, t(lib, X), strict=True, vectorize=True))
    with pytest.raises(NotImplementedError, match=r"vectorize=True needs batched gradients \(vmap"):
        gaf.jacobian(vec, t(graft, X), vectorize=True)


def test_jacobian_forward_mode_errors():
    raises_same(NotImplementedError, 'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.',
                lambda lib: fn(lib, "jacobian")(vec, t(lib, X), create_graph=True, strategy="forward-mode"))
    raises_same(RuntimeError, 'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                'are not supported together (yet). Please either set `strict=False` or '
                '`strategy="reverse-mode"`.',
                lambda lib: fn(lib, "jacobian")(vec, t(lib, X), strict=True, strategy="forward-mode"))
    raises_same(NotImplementedError, "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.",
                lambda lib: fn(lib, "jacobian")(vec, t(lib, X), strategy="forward-mode"))
    with pytest.raises(NotImplementedError, match=r'strategy="forward-mode" needs forward-mode AD'):
        gaf.jacobian(vec, t(graft, X), vectorize=True, strategy="forward-mode")


def test_jacobian_bad_strategy():
    raises_same(AssertionError, 'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                'function has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                'prefer to use "reverse-mode".', lambda lib: fn(lib, "jacobian")(vec, t(lib, X), strategy="fwd"))


# ---------------------------------------------------------------------------------------------
# hessian


def test_hessian_single_tensor():
    res = both(lambda lib: fn(lib, "hessian")(scalar, t(lib, X)))
    assert tuple(res.shape) == (3, 3) and not res.requires_grad


def test_hessian_matrix_input():
    res = both(lambda lib: fn(lib, "hessian")(lambda m: m.pow(3).sum(), t(lib, M)))
    assert tuple(res.shape) == (2, 3, 2, 3)


def test_hessian_two_inputs_is_tuple_of_tuples():
    res = both(lambda lib: fn(lib, "hessian")(scalar2, (t(lib, X), t(lib, M[0]))))
    assert len(res) == 2 and all(len(row) == 2 for row in res)
    np.testing.assert_allclose(res[0][1].numpy(), res[1][0].numpy().T, rtol=1e-12)


def test_hessian_create_graph_third_derivative():
    def third(lib):
        x = t(lib, X, requires_grad=True)
        hess = fn(lib, "hessian")(scalar, x, create_graph=True)
        assert hess.requires_grad
        return (hess,) + lib.autograd.grad((hess.sum(),), (x,))
    both(third)


def test_hessian_independent_input_gives_zeros():
    res = both(lambda lib: fn(lib, "hessian")(scalar_ignores_y, (t(lib, X), t(lib, Y))))
    assert not res[1][1].numpy().any() and not res[0][1].numpy().any() and res[0][0].numpy().any()


def test_hessian_strict_errors():
    raises_same(RuntimeError, LINEAR_JAC_1,
                lambda lib: fn(lib, "hessian")(scalar_linear_in_y, (t(lib, X), t(lib, Y)), strict=True))
    raises_same(RuntimeError, NO_GRAD_OUT_0,
                lambda lib: fn(lib, "hessian")(lambda x: x.detach().sum(), t(lib, X), strict=True))


def test_hessian_output_checks():
    raises_same(RuntimeError, "The function given to hessian should return a single Tensor",
                lambda lib: fn(lib, "hessian")(lambda x: (x.sum(),), t(lib, X)))
    raises_same(RuntimeError, "The Tensor returned by the function given to hessian should contain a single element",
                lambda lib: fn(lib, "hessian")(vec, t(lib, X)))


def test_hessian_unsupported_options():
    raises_same(AssertionError, 'Expected strategy to be either "forward-mode" or "reverse-mode".',
                lambda lib: fn(lib, "hessian")(scalar, t(lib, X), outer_jacobian_strategy="x"))
    raises_same(NotImplementedError, "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.",
                lambda lib: fn(lib, "hessian")(scalar, t(lib, X), outer_jacobian_strategy="forward-mode"))
    with pytest.raises(NotImplementedError, match="vectorize=True needs batched gradients"):
        gaf.hessian(scalar, t(graft, X), vectorize=True)


# ---------------------------------------------------------------------------------------------
# vhp, hvp


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_single_tensor(name):
    out, res = both(lambda lib: fn(lib, name)(scalar, t(lib, X), t(lib, V3)))
    assert isinstance(res, graft.Tensor) and not out.requires_grad and not res.requires_grad


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_tuple_inputs(name):
    out, res = both(lambda lib: fn(lib, name)(scalar2, (t(lib, X), t(lib, Y)), (t(lib, V3), t(lib, W3))))
    assert isinstance(out, graft.Tensor) and isinstance(res, tuple) and len(res) == 2


def test_vhp_equals_hvp_for_symmetric_hessian():
    args = ((t(graft, X), t(graft, Y)), (t(graft, V3), t(graft, W3)))
    assert_same(gaf.vhp(scalar2, *args), gaf.hvp(scalar2, *args))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_v_checks(name):
    both(lambda lib: fn(lib, name)(lambda x: x.pow(4).sum(), t(lib, [0.3])))
    raises_same(RuntimeError, V_NONE_INPUT, lambda lib: fn(lib, name)(scalar, t(lib, X)))
    raises_same(RuntimeError, "v has invalid size: should be LIB.Size([3]) but got LIB.Size([2]).",
                lambda lib: fn(lib, name)(scalar, t(lib, X), t(lib, V2)))
    raises_same(RuntimeError, "v is a tuple of invalid length: should be 2 but got 1.",
                lambda lib: fn(lib, name)(scalar2, (t(lib, X), t(lib, Y)), (t(lib, V3),)))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_output_checks(name):
    raises_same(RuntimeError, f"The function given to {name} should return a single Tensor",
                lambda lib: fn(lib, name)(lambda x: (x.sum(),), t(lib, X), t(lib, V3)))
    raises_same(RuntimeError, f"The Tensor returned by the function given to {name} should contain a single element",
                lambda lib: fn(lib, name)(vec, t(lib, X), t(lib, V3)))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_create_graph_second_derivative(name):
    def second(lib):
        x, v = t(lib, X, requires_grad=True), t(lib, V3, requires_grad=True)
        out, res = fn(lib, name)(scalar, x, v, create_graph=True)
        assert out.requires_grad and res.requires_grad
        return (res,) + lib.autograd.grad((res.pow(2).sum(),), (x, v))
    both(second)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_independent_input_gives_zeros(name):
    out, (hx, hy) = both(lambda lib: fn(lib, name)(scalar_linear_in_y, (t(lib, X), t(lib, Y)), (t(lib, V3),) * 2))
    assert not hy.numpy().any() and hx.numpy().any()

    def captured(lib):  # the gradient depends on a captured tensor only
        w = t(lib, W3, requires_grad=True)
        return fn(lib, name)(lambda x: (x * w.pow(2)).sum(), t(lib, X), t(lib, V3))
    out, res = both(captured)
    assert not res.numpy().any()


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_strict_errors(name):
    v2 = lambda lib: (t(lib, V3), t(lib, W3))  # noqa: E731
    raises_same(RuntimeError, LINEAR_JAC_1,
                lambda lib: fn(lib, name)(scalar_linear_in_y, (t(lib, X), t(lib, Y)), v2(lib), strict=True))
    raises_same(RuntimeError, INDEPENDENT_1,
                lambda lib: fn(lib, name)(scalar_ignores_y, (t(lib, X), t(lib, Y)), v2(lib), strict=True))
    raises_same(RuntimeError, NO_GRAD_OUT_0,
                lambda lib: fn(lib, name)(lambda x: x.detach().sum(), t(lib, X), t(lib, V3), strict=True))
    quadratic = lambda x: (x * x).sum()  # noqa: E731  (its hessian-vector product does not require grad)
    raises_same(RuntimeError, CONSTANT_HESS_0,
                lambda lib: fn(lib, name)(quadratic, t(lib, X), t(lib, V3), create_graph=True, strict=True))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_strict_gradient_of_captured_tensor_only(name):
    def captured(lib):
        w = t(lib, W3, requires_grad=True)
        return fn(lib, name)(lambda x: (x * w.pow(2)).sum(), t(lib, X), t(lib, V3), strict=True)
    text = {"vhp": "The jacobian of the user-provided function is independent of input 0. This is not allowed in "
                   "strict mode.",
            "hvp": "The hessian of the user-provided function is independent of entry 0 in the grad_jacobian. This "
                   "is not allowed in strict mode as it prevents from using the double backward trick to replace "
                   "forward mode AD."}[name]
    raises_same(RuntimeError, text, captured)


def test_importable_as_torch_names():
    import graft.autograd as ga
    assert ga.functional is gaf
    for name in ("vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"):
        assert callable(getattr(graft.autograd.functional, name)) and name in gaf.__all__
