"""Parity tier for the ops generated from src/ops/ops.yaml, against Debian's PyTorch. Every op
listed in graft._C._unary_float_ops, _unary_rounding_ops, _unary_keep_ops, _unary_predicate_ops,
_binary_ops and
_binary_predicate_ops is covered (so a new declaration is tested here without an edit): function,
method and in-place values, integer and bool inputs, grad_fn names, first and second
derivatives, the in-place form's refusal of an integer tensor; the predicates on every float
class, integers and bools; the binary ops with broadcasting, mixed dtypes, ties and NaN, and
their refusals."""
import pathlib

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

OPS = list(graft._C._unary_float_ops)
PREDICATES = list(graft._C._unary_predicate_ops)
ROUNDING = list(graft._C._unary_rounding_ops)
KEEP = list(graft._C._unary_keep_ops)
BINARY = list(graft._C._binary_ops)
BINARY_PREDICATES = list(graft._C._binary_predicate_ops)

# Inputs inside each op's domain. The domain of an op is declared once, in src/ops/ops.yaml
# (`domain:`), which the C++ registry's cases are generated from too; the names mean the ranges
# of tests/ops/op_registry.h's Domain (NonZero: |x| >= 0.25).
OPS_YAML = pathlib.Path(__file__).resolve().parents[2] / "src" / "ops" / "ops.yaml"
RANGES = {"Any": (-2, 2), "Positive": (0.5, 2), "NonZero": (-2, 2), "Unit": (-0.9, 0.9), "AboveOne": (1.25, 3),
          "Wide": (-5, 5)}
DOMAIN = {op["name"]: op["domain"] for family in yaml.safe_load(OPS_YAML.read_text()).values()
          if isinstance(family, list) for op in family if isinstance(op, dict) and "domain" in op}


def torch_result_or_same_error(torch_call, *graft_calls):
    """torch_call()'s result; when it raises RuntimeError, checks that each of graft_calls raises
    one with the same text, and returns None."""
    try:
        return torch_call()
    except RuntimeError as e:
        for call in graft_calls:
            with pytest.raises(RuntimeError) as ge:
                call()
            assert str(ge.value) == str(e)
        return None


def values(op, n=7, seed=0):
    lo, hi = RANGES[DOMAIN.get(op, "Any")]
    v = np.random.default_rng(seed).uniform(lo, hi, n)
    if DOMAIN.get(op) == "NonZero":
        v = np.where(np.abs(v) < 0.25, 0.5, v)
    return v


def test_every_unary_float_op_has_its_domain_declared():
    assert set(OPS) <= set(DOMAIN), sorted(set(OPS) - set(DOMAIN))
    assert set(DOMAIN.values()) <= set(RANGES)
    assert DOMAIN["log"] == "Positive" and DOMAIN["acosh"] == "AboveOne" and DOMAIN["reciprocal"] == "NonZero"


def test_the_generated_ops_include_the_ones_that_lived_in_the_bindings():
    for name in ("exp", "log", "tanh", "sigmoid", "log2", "log10", "exp2", "expm1", "reciprocal", "asinh", "erfc"):
        assert name in OPS
        assert getattr(graft, name) is getattr(graft._C, name)


@pytest.mark.parametrize("op", OPS)
def test_values_and_gradients_match_pytorch(op):
    v = values(op)
    out = []
    for lib in (torch, graft):
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        y = getattr(lib, op)(x)
        m = getattr(x, op)()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        out.append((y.detach().numpy(), m.detach().numpy(), g.detach().numpy(), gg.numpy(), type(y.grad_fn).__name__
                    if lib is torch else y.grad_fn.name()))
    (ty, tm, tg, tgg, tname), (y, m, g, gg, name) = out
    np.testing.assert_allclose(y, ty, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m, tm, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, tg, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg, tgg, rtol=1e-9, atol=1e-11)
    assert name == tname


@pytest.mark.parametrize("op,node", [("tanh", "TanhBackwardBackward0"), ("sigmoid", "SigmoidBackwardBackward0")])
def test_tanh_and_sigmoid_gradients_are_pytorchs_backward_ops(op, node):
    # their gradient is one fused op (PyTorch's tanh_backward / sigmoid_backward), recorded under
    # create_graph with PyTorch's node, whose own gradients give the third derivative
    out = []
    for lib in (torch, graft):
        x = lib.tensor(values(op), dtype=lib.float64, requires_grad=True)
        y = getattr(lib, op)(x)
        w = lib.tensor(np.linspace(0.5, 1.5, len(values(op))), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(y, x, w, create_graph=True)
        name = type(g.grad_fn).__name__ if lib is torch else g.grad_fn.name()
        (gx, gw) = lib.autograd.grad((g * g).sum(), (x, w), create_graph=True)
        (gxx,) = lib.autograd.grad(gx.sum(), x)
        out.append((name, g.detach().numpy(), gx.detach().numpy(), gw.detach().numpy(), gxx.numpy()))
    assert out[0][0] == out[1][0] == node
    for t, g in zip(out[0][1:], out[1][1:]):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)
    assert not hasattr(graft, op + "_backward")  # C++ only, as torch keeps it in torch.ops.aten


@pytest.mark.parametrize("op", OPS)
def test_integer_inputs_give_the_default_float_dtype(op):
    lo, hi = RANGES[DOMAIN.get(op, "Any")]
    ints = [i for i in range(-2, 4) if lo <= i <= hi] or [0]
    t = getattr(torch, op)(torch.tensor(ints))
    g = getattr(graft, op)(graft.tensor(ints))
    assert g.dtype == graft.float32 and t.dtype == torch.float32
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("op", OPS)
def test_in_place_form_matches_and_refuses_an_integer_tensor(op):
    v = values(op, seed=1)
    a, b = torch.tensor(v), graft.tensor(v)
    ra, rb = getattr(a, op + "_")(), getattr(b, op + "_")()
    assert rb is b and ra is a
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-14)
    with pytest.raises(RuntimeError) as te:
        getattr(torch.tensor([1, 2]), op + "_")()
    with pytest.raises(RuntimeError) as ge:
        getattr(graft.tensor([1, 2]), op + "_")()
    assert str(ge.value) == str(te.value)


@pytest.mark.parametrize("op", OPS)
def test_in_place_on_a_non_leaf_records_the_op(op):
    v = values(op, seed=2)
    # torch's out-of-place gradient is the reference: torch 1.13 has no derivative for the
    # in-place asinh_, acosh_ and atanh_ ("the derivative for 'inplace version of asinh' is
    # not implemented"), which graft records as any other in-place op
    x = torch.tensor(v, requires_grad=True)
    getattr(torch, op)(x * 1.0).sum().backward()
    g = graft.tensor(v, requires_grad=True)
    y = g * 1.0
    getattr(y, op + "_")()
    assert y.grad_fn.name() == type(getattr(torch, op)(x * 1.0).grad_fn).__name__
    y.sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), x.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        getattr(graft.tensor(v, requires_grad=True), op + "_")()


def test_the_predicates_include_isnan_and_isfinite():
    for name in ("isnan", "isfinite", "isinf", "isposinf", "isneginf", "signbit"):
        assert name in PREDICATES
        assert getattr(graft, name) is getattr(graft._C, name)


@pytest.mark.parametrize("op", PREDICATES)
@pytest.mark.parametrize("data", [[1.5, -float("inf"), float("inf"), float("nan"), -0.0, 0.0, -2.0, 3e300],
                                  [-3, 0, 5], [True, False]], ids=["float", "int", "bool"])
def test_predicates_match_pytorch(op, data):
    for dt in ((torch.float32, graft.float32), (torch.float64, graft.float64)) if isinstance(data[0], float) else [
            (None, None)]:
        t = torch.tensor(data, dtype=dt[0]) if dt[0] is not None else torch.tensor(data)
        g = graft.tensor(data, dtype=dt[1]) if dt[1] is not None else graft.tensor(data)
        tr, gr, gm = getattr(torch, op)(t), getattr(graft, op)(g), getattr(g, op)()
        assert gr.dtype == graft.bool and gr.tolist() == tr.tolist() and gm.tolist() == tr.tolist()


@pytest.mark.parametrize("op", PREDICATES)
def test_predicates_never_require_grad(op):
    x = graft.tensor([1.0, float("inf")], requires_grad=True)
    y = getattr(graft, op)(x)
    assert not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("op", ROUNDING)
def test_rounding_ops_match_pytorch(op):
    halves = [1.5, -2.5, 0.5, -0.5, 2.7, -2.7, 1e300, -0.0]  # round: halves to even, as PyTorch
    for dt in ("float32", "float64"):
        t = getattr(torch, op)(torch.tensor(halves, dtype=getattr(torch, dt)))
        g = getattr(graft, op)(graft.tensor(halves, dtype=getattr(graft, dt)))
        m = getattr(graft.tensor(halves, dtype=getattr(graft, dt)), op)()
        assert g.dtype == getattr(graft, dt)
        np.testing.assert_array_equal(g.numpy(), t.numpy())
        np.testing.assert_array_equal(m.numpy(), t.numpy())
        np.testing.assert_array_equal(np.signbit(g.numpy()), np.signbit(t.numpy()))  # -0.0 kept


@pytest.mark.parametrize("op", ROUNDING)
@pytest.mark.parametrize("data", [[-3, 0, 5], [True, False]], ids=["int", "bool"])
def test_rounding_ops_on_integers_and_bools_as_pytorch(op, data):
    expected = torch_result_or_same_error(lambda: getattr(torch, op)(torch.tensor(data)),
                                          lambda: getattr(graft, op)(graft.tensor(data)),
                                          lambda: getattr(graft.tensor(data), op + "_")())
    if expected is None:
        return
    got = getattr(graft, op)(graft.tensor(data))
    assert got.tolist() == expected.tolist() and str(got.dtype) == str(expected.dtype).replace("torch", "graft")


@pytest.mark.parametrize("op", ROUNDING)
def test_rounding_gradients_and_in_place_match_pytorch(op):
    v = [1.3, -2.6, 0.2]
    out = []
    for lib in (torch, graft):
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        y = getattr(lib, op)(x)
        y.sum().backward()
        z = x.detach().clone()
        getattr(z, op + "_")()
        out.append((x.grad.numpy(), z.numpy(), type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])
    assert out[1][2] == out[0][2]


def test_the_binary_families_hold_the_ops_that_were_hand_written():
    for name in ("maximum", "minimum"):
        assert name in BINARY
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
        assert name in BINARY_PREDICATES
    for name in BINARY + BINARY_PREDICATES:
        assert getattr(graft, name) is getattr(graft._C, name)


def binary_operands(lib, seed):
    rng = np.random.default_rng(seed)
    a = lib.tensor(rng.uniform(-2, 2, (2, 3)), requires_grad=True)
    b = lib.tensor(rng.uniform(-2, 2, (3,)), requires_grad=True)
    return a, b


@pytest.mark.parametrize("op", BINARY)
def test_binary_values_and_gradients_match_pytorch(op):
    out = []
    for lib in (torch, graft):
        a, b = binary_operands(lib, 3)  # broadcast (2, 3) with (3,)
        y = getattr(lib, op)(a, b)
        m = getattr(a, op)(b)
        ga, gb = lib.autograd.grad(y.sum(), (a, b), create_graph=True)
        second = (ga * ga).sum() + (gb * gb).sum()  # needs grad only where a formula depends on a or b
        gga, ggb = lib.autograd.grad(second, (a, b), allow_unused=True) if second.requires_grad else (None, None)
        zero = lib.zeros(())
        out.append([y.detach().numpy(), m.detach().numpy(), ga.detach().numpy(), gb.detach().numpy(),
                    (gga if gga is not None else zero).numpy(), (ggb if ggb is not None else zero).numpy(),
                    (type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name(), second.requires_grad)])
    expected, got = out
    assert got[-1] == expected[-1]
    for g, t in zip(got[:-1], expected[:-1]):
        np.testing.assert_allclose(g, np.broadcast_to(t, g.shape) if t.ndim == 0 else t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("bool", "bool"), ("int64", "float32"),
                                    ("float32", "float64")])
def test_binary_dtypes_and_refusals_match_pytorch(op, dtypes):
    data = ([1, -2, 3, 0], [2, -2, 0, 5]) if dtypes[0] != "bool" else ([True, False, True, False],
                                                                     [True, True, False, False])
    ta, tb = (torch.tensor(d, dtype=getattr(torch, dt)) for d, dt in zip(data, dtypes))
    ga, gb = (graft.tensor(d, dtype=getattr(graft, dt)) for d, dt in zip(data, dtypes))
    expected = torch_result_or_same_error(lambda: getattr(torch, op)(ta, tb), lambda: getattr(graft, op)(ga, gb))
    if expected is None:
        return
    got = getattr(graft, op)(ga, gb)
    assert str(got.dtype) == str(expected.dtype).replace("torch", "graft")
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected.numpy().astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("op", BINARY)
def test_binary_ties_nan_and_infinities_match_pytorch(op):
    x = [1.0, 2.0, float("nan"), 0.0, float("nan"), float("inf"), -float("inf"), -0.0, 3.0]
    y = [0.0, 2.0, 1.0, float("nan"), float("nan"), float("inf"), -float("inf"), 0.0, -0.0]
    expected = getattr(torch, op)(torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64))
    got = getattr(graft, op)(graft.tensor(x, dtype=graft.float64), graft.tensor(y, dtype=graft.float64))
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_take_only_a_tensor_other(op):
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        getattr(graft, op)(graft.ones(2), 2)


@pytest.mark.parametrize("op", BINARY_PREDICATES)
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "int64"), ("bool", "bool"),
                                    ("int64", "float64"), ("bool", "int32")])
def test_binary_predicates_match_pytorch(op, dtypes):
    data = ([1, 0, 3, -2, 0, 5], [1, 2, 0, -2, 0, 4]) if "bool" not in dtypes[0] else (
        [True, False, True, False, True, True], [1, 0, 0, 1, 1, 0])
    t = getattr(torch, op)(*(torch.tensor(d, dtype=getattr(torch, dt)) for d, dt in zip(data, dtypes)))
    ga, gb = (graft.tensor(d, dtype=getattr(graft, dt)) for d, dt in zip(data, dtypes))
    g, m = getattr(graft, op)(ga, gb), getattr(ga, op)(gb)
    assert g.dtype == graft.bool and g.tolist() == t.tolist() and m.tolist() == t.tolist()
    assert not getattr(graft, op)(ga.double().requires_grad_(), gb).requires_grad


@pytest.mark.parametrize("op", BINARY_PREDICATES)
@pytest.mark.parametrize("number", [2, 2.5, True])
def test_binary_predicates_with_a_number_match_pytorch(op, number):
    data = [1, 2, 3, 0]
    try:
        expected = getattr(torch, op)(torch.tensor(data), number)
    except TypeError:
        with pytest.raises(TypeError):
            getattr(graft, op)(graft.tensor(data), number)
        return
    assert getattr(graft, op)(graft.tensor(data), number).tolist() == expected.tolist()
    assert getattr(graft.tensor(data), op)(number).tolist() == expected.tolist()


def test_the_unary_keep_family_holds_neg_abs_sign_relu():
    for name in ("neg", "abs", "sign", "relu"):
        assert name in KEEP and getattr(graft, name) is getattr(graft._C, name)


@pytest.mark.parametrize("op", KEEP)
def test_unary_keep_values_and_gradients_match_pytorch(op):
    v = np.random.default_rng(4).uniform(-2, 2, 7)
    out = []
    for lib in (torch, graft):
        x = lib.tensor(v, requires_grad=True)
        y = getattr(lib, op)(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x) if g.requires_grad else (lib.zeros(()),)  # sign: a constant 0
        out.append((y.detach().numpy(), getattr(x, op)().detach().numpy(), g.detach().numpy(), gg.numpy(),
                    (type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name(), g.requires_grad)))
    expected, got = out
    assert got[-1] == expected[-1]
    for a, b in zip(got[:-1], expected[:-1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", KEEP)
@pytest.mark.parametrize("data", [[3, -2, 0, 7], [True, False, True], [float("nan"), -0.0, 0.0, -1.5, float("inf")]],
                         ids=["int", "bool", "nan_zeros_inf"])
def test_unary_keep_dtypes_values_and_refusals_match_pytorch(op, data):
    for dt in ("int32", "int64") if isinstance(data[0], int) and not isinstance(data[0], bool) else (None,):
        t = torch.tensor(data, dtype=getattr(torch, dt) if dt else None)
        g = graft.tensor(data, dtype=getattr(graft, dt) if dt else None)
        expected = torch_result_or_same_error(lambda: getattr(torch, op)(t), lambda: getattr(graft, op)(g),
                                              lambda: getattr(g, op + "_")())
        if expected is None:
            continue
        got = getattr(graft, op)(g)
        assert str(got.dtype) == str(expected.dtype).replace("torch", "graft")
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(expected.numpy()))
        assert getattr(g, op + "_")() is g
        np.testing.assert_array_equal(g.numpy(), expected.numpy())


BITWISE = list(graft._C._binary_bitwise_ops)


def test_the_bitwise_and_logical_not_ops_are_generated():
    assert BITWISE == ["bitwise_and", "bitwise_or", "bitwise_xor"]
    assert "logical_not" in PREDICATES
    for name in BITWISE + ["logical_not"]:
        assert getattr(graft, name) is getattr(graft._C, name)


@pytest.mark.parametrize("op", BITWISE)
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "int64"), ("bool", "bool"), ("bool", "int32"),
                                    ("float32", "int64"), ("int64", "float64")])
def test_bitwise_ops_match_pytorch(op, dtypes):
    data = ([12, -7, 0, 5, 255, -1], [10, 3, -8, 5, 1, 0]) if dtypes[0] != "bool" else (
        [True, False, True, False, True, True], [1, 0, 0, 1, 1, 0])
    ta, tb = (torch.tensor(d, dtype=getattr(torch, dt)) for d, dt in zip(data, dtypes))
    ga, gb = (graft.tensor(d, dtype=getattr(graft, dt)) for d, dt in zip(data, dtypes))
    expected = torch_result_or_same_error(lambda: getattr(torch, op)(ta, tb), lambda: getattr(graft, op)(ga, gb))
    if expected is None:
        return
    for got in (getattr(graft, op)(ga, gb), getattr(ga, op)(gb)):
        assert str(got.dtype) == str(expected.dtype).replace("torch", "graft") and got.tolist() == expected.tolist()


@pytest.mark.parametrize("op", BITWISE)
@pytest.mark.parametrize("number", [6, -1, True, 2**40, 2.5])
@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_bitwise_ops_with_a_number_match_pytorch(op, number, dtype):
    data = [12, -7, 0, 5] if dtype != "bool" else [True, False, True, False]
    t, g = torch.tensor(data, dtype=getattr(torch, dtype)), graft.tensor(data, dtype=getattr(graft, dtype))
    expected = torch_result_or_same_error(lambda: getattr(torch, op)(t, number), lambda: getattr(graft, op)(g, number))
    if expected is None:
        return
    got = getattr(graft, op)(g, number)
    assert str(got.dtype) == str(expected.dtype).replace("torch", "graft") and got.tolist() == expected.tolist()


@pytest.mark.parametrize("data", [[0.0, -0.0, float("nan"), 2.5, -float("inf")], [0, 3, -2], [True, False]],
                         ids=["float", "int", "bool"])
def test_logical_not_matches_pytorch(data):
    expected = torch.logical_not(torch.tensor(data))
    g = graft.tensor(data)
    assert graft.logical_not(g).tolist() == expected.tolist() and g.logical_not().tolist() == expected.tolist()


# the overloads of the arithmetic and the reductions and the views (ops.yaml's function family):
# each picks PyTorch's node, a wrapped number shows as a None input, and the gradients match
OVERLOADS = ["x + 1", "x + y", "x.add(y, alpha=2)", "1 - x", "x - y", "x * 2", "2 * x", "x * y", "x / 2", "x / y",
             "x.div(2, rounding_mode='floor')", "x % 0.3", "x ** 2", "x ** y", "x.pow(2.5)", "x.clamp(0.4, 0.9)",
             "lib.clamp(x, y)", "x.sum()", "x.sum(0)", "x.sum(1, keepdim=True)", "x.sum(dtype=lib.float64)",
             "x.mean()", "x.mean(1)", "x.prod()", "x.prod(0)", "x.square()",
             # rounding_mode=None is true division (DivBackward2); dtype= converts first (mean and prod
             # record no cast: the engine converts the gradient; softmax records ToCopyBackward0);
             # max(other) is maximum; a 0-d bound is a number, a tensor bound the Tensor overload
             "x.div(y, rounding_mode=None)", "lib.div(x, 2, rounding_mode=None)", "x.mean(dtype=lib.float64)",
             "x.mean(1, keepdim=True, dtype=lib.float64)", "x.prod(dtype=lib.float64)", "x.prod(1, True)",
             "x.softmax(1, dtype=lib.float64)", "lib.log_softmax(x, 0)", "x.softmax(-1, None)", "x.max(y)",
             "lib.min(x, y)", "lib.clamp(x, y[0, 0], 0.9)", "lib.clamp(x, min=y)", "x.clamp(max=y[0])",
             # where: Tensor.where's self is the second argument; numbers are wrapped numbers
             "lib.where(y > 0.7, x, y)", "x.where(y > 0.7, y * 2)", "lib.where(y > 0.7, x, 2.5)",
             "lib.where(y > 0.7, 0.5, x)",
             # the views (view: true), with their nodes' names and gradients
             "x.t()", "x.transpose(0, 1)", "x.transpose(-1, -2)", "x.permute(1, 0)", "x.unsqueeze(0)",
             "x.unsqueeze(-1)", "x.unsqueeze(0).squeeze()", "x.unsqueeze(1).squeeze(1)", "x.expand(4, 2, 3)",
             "x.select(1, -1)", "x.narrow(1, 1, 2)", "x.narrow(1, -2, 2)", "x[::2]", "x[1:]", "x[-1]", "x.view(3, 2)",
             "x.view(-1)",
             # Python's indexing records PyTorch's nodes: a slice for every ':' (full ones too), alias
             # for '...'; a number base is wrapped (pow.Tensor_Tensor, a None input)
             "x[:, 1:3]", "x[:]", "x[...]", "x[1:, :]", "x[:, None]", "2 ** x",
             # list arguments (a None input for a tensor without grad, a skipped 1-D empty one), list
             # results (views sharing one node: the gradient of an unused output is zeros), two
             # outputs (the gradient goes where the indices say) and to()'s copy
             "lib.cat([x, y * 2, x], 1)", "lib.cat([x, lib.zeros(0)], 0)", "lib.stack([x, x * 2], 0)",
             "lib.stack([x, y], -1)", "x.split(1, 1)[1]", "lib.split(x, [1, 2], 1)[0]", "x.split([2, 1], 1)[1]",
             "x.chunk(2, 1)[0]", "x.expand(2, 3, implicit=True)",
             "x.unbind(1)[2]", "x.max(1)[0]", "x.min(0, keepdim=True)[0]", "x.to(lib.float64)",
             "lib.nn.functional.max_pool2d(x.view(1, 1, 2, 3), 2, 1, return_indices=True)[0]",
             "lib.nn.functional.max_pool2d(x.view(1, 2, 3), 2, 2, padding=1)",
             # advanced indexing: integer lists, a mask, index_put with and without accumulate
             "x[[0, 1], [2, 0]]", "x[x > 0.7]", "x.index_put((lib.tensor([1, 0]),), y[:1] * 2)",
             "x.index_put((lib.tensor([1, 1]), lib.tensor([0, 0])), x[0, 0] * 3, accumulate=True)",
             "lib.index_put(x * 1, [lib.tensor([0, 1])], y[0, :1])",
             # the in-place forms (ops.yaml's inplace): the out-of-place op's node on self's history;
             # x.mul_(x) must not save the tensor whose history it becomes
             "(x * 1).add_(y, alpha=2)", "(x * 1).mul_(x)", "(x * 1).sub_(2)", "(x * 1).div_(y)",
             "(x * 1).clamp_(0.5, 0.9)", "(x * 1).square_()", "(x * 1).masked_fill_(y > 0.7, 0.0)",
             "(x * 1).index_put_((lib.tensor([1, 0]),), x[0] * 2)", "(x * 1).div_(2, rounding_mode='floor')",
             # the in-place-only ops (ops.yaml's inplace_only): the node on self's history before the write
             "(x * 1).fill_(2.0)", "(x * 1).fill_(x[0, 1])", "lib.zeros(2, 3).fill_(x[1, 2] * 2)", "(x * 1).zero_()",
             "(x * 1).copy_(y)", "(x * 1).copy_(y, non_blocking=True)", "lib.zeros(2, 3).copy_(x * 2)",
             "lib.zeros(2, 3, dtype=lib.float64).copy_(x[0])"]


@pytest.mark.parametrize("expr", OVERLOADS)
def test_overloads_pick_pytorch_nodes_and_gradients(expr):
    data = np.random.default_rng(1).uniform(0.25, 1.25, (2, 3))
    seen = []
    for lib in (torch, graft):
        x = lib.tensor(data, dtype=lib.float32, requires_grad=True)
        y = lib.tensor(data[::-1].copy(), dtype=lib.float32)
        out = eval(expr, {"lib": lib, "x": x, "y": y})
        inputs = [None if f is None else f.name().split("::")[-1] for f, _ in out.grad_fn.next_functions]
        (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True) if g.requires_grad else (None,)
        seen.append((out.grad_fn.name().split("::")[-1], inputs, out.detach().numpy(), g.detach().numpy(), g.dtype == lib.float32,
                     None if gg is None else gg.numpy()))
    (t_name, t_inputs, t_out, t_g, t_g32, t_gg), (name, inputs, out, g, g32, gg) = seen
    assert (name, inputs) == (t_name, t_inputs)
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)
    assert g32 and t_g32  # sum(dtype=float64)'s gradient comes back as x's float32
    if t_gg is None or gg is None:
        assert (t_gg is None or not t_gg.any()) and (gg is None or not gg.any())
    else:
        np.testing.assert_allclose(gg, t_gg, rtol=1e-4, atol=1e-5)


# as_strided of inputs of any geometry (transposed, sliced, expanded: graft refused the
# non-contiguous ones before as_strided was declared), windows that overlap themselves included
AS_STRIDED = ["x.as_strided((2, 2), (1, 3), 1)", "x.t().as_strided((2, 2), (1, 2), 1)", "x.as_strided((4, 2), (1, 1))",
              "x[:, 1].as_strided((2,), (3,))", "x[0].expand(2, 3).as_strided((3,), (1,))",
              "x.t()[1:].as_strided((2, 2), (2, 1), 1)"]


@pytest.mark.parametrize("expr", AS_STRIDED)
def test_as_strided_gradients_match_pytorch_for_any_input_geometry(expr):
    data = np.random.default_rng(1).uniform(0.25, 1.25, (2, 3))
    seen = []
    for lib in (torch, graft):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        out = eval(expr, {"x": x})
        weights = lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))
        (g,) = lib.autograd.grad((out * weights).sum(), x)
        seen.append((out.grad_fn.name(), out.detach().numpy(), g.numpy()))
    (t_name, t_out, t_g), (name, out, g) = seen
    assert name == t_name == "AsStridedBackward0"
    np.testing.assert_allclose(out, t_out)
    np.testing.assert_allclose(g, t_g)
