"""Parity tier for the activation ops generated from src/ops/ops.yaml (graft._C._activation_ops:
silu, softplus, leaky_relu, elu, hardsigmoid, hardswish, mish, log_sigmoid, hardshrink,
softshrink, ...), against Debian's PyTorch. A new declaration is tested here without an edit:
values and grad_fn names at the defaults and at other arguments, first and second derivatives,
NaN, infinities and signed zeros, float32, the refusal of integer and bool inputs, the in-place
forms; then torch.nn.functional's wrappers (inplace=, selu, logsigmoid)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402
import graft.nn.functional as F  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

ACTIVATIONS = {name: (where, dict(args)) for name, where, args in graft._C._activation_ops}
NAMES = list(ACTIVATIONS)
INPLACE = [name for name in NAMES if hasattr(graft._C._nn, name + "_")]
# PyTorch 1.13's hardsigmoid backward scales by 1/6 rounded to float32 (3e-8 off) in float64
# too; graft divides by 6
GRAD_RTOL = {"hardsigmoid": 1e-7, "F.hardsigmoid": 1e-7}


def torch_op(name, inplace=False):
    name = name + "_" if inplace else name
    return getattr(torch._C._nn, name) if hasattr(torch._C._nn, name) else getattr(torch, name)


def graft_op(name, inplace=False):
    return getattr(graft._C._nn, name + "_" if inplace else name)


def other_args(name):
    """Arguments away from the defaults (all positive, as some ops require)."""
    return {arg: default * 1.5 + 0.25 for arg, default in ACTIVATIONS[name][1].items()}


def samples(seed=0, n=9):
    # [-4, 4] crosses every kink of the declared ops (0, +-lambd, +-3) at random points
    return np.random.default_rng(seed).uniform(-4, 4, n)


def test_the_activation_family_holds_the_moved_and_the_new_ops():
    for name in ("silu", "softplus", "leaky_relu", "elu", "hardsigmoid", "hardswish", "mish", "log_sigmoid",
                 "hardshrink", "softshrink"):
        assert name in NAMES
    assert graft.hardshrink is graft._C.hardshrink and hasattr(graft.Tensor, "hardshrink")
    assert not hasattr(graft, "leaky_relu") and not hasattr(graft.Tensor, "softplus")  # as PyTorch


@pytest.mark.parametrize("args", ["defaults", "other"])
@pytest.mark.parametrize("name", NAMES)
def test_values_gradients_and_grad_fn_match_pytorch(name, args):
    kwargs = {} if args == "defaults" else other_args(name)
    v = samples()
    out = []
    for lib, op in ((torch, torch_op(name)), (graft, graft_op(name))):
        x = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        y = op(x, **kwargs)
        # (y * y): the first derivative depends on x through y also for the piecewise-linear ops
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        try:
            (gg,) = lib.autograd.grad((g * lib.arange(1.0, 10.0, dtype=lib.float64)).sum(), x)
            gg = gg.numpy()
        except RuntimeError as e:  # PyTorch 1.13 has no double backward for hardsigmoid
            assert lib is torch and "derivative for aten::" in str(e) and "is not implemented" in str(e)
            gg = None
        grad_fn = type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()
        out.append((y.detach().numpy(), g.detach().numpy(), gg, grad_fn))
    (ty, tg, tgg, tname), (y, g, gg, gname) = out
    np.testing.assert_allclose(y, ty, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, tg, rtol=GRAD_RTOL.get(name, 1e-10), atol=1e-12)
    if tgg is not None:  # else the registry's gradgradcheck covers graft's second derivative
        np.testing.assert_allclose(gg, tgg, rtol=1e-9, atol=1e-11)
    assert gname == tname


@pytest.mark.parametrize("name", NAMES)
def test_special_values_and_float32_match_pytorch(name):
    data = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-30, -1e-30, 30.0, -30.0, 3.0, -3.0, 0.5, -0.5]
    for dtype in ("float32", "float64"):
        t = torch_op(name)(torch.tensor(data, dtype=getattr(torch, dtype)))
        g = graft_op(name)(graft.tensor(data, dtype=getattr(graft, dtype)))
        assert str(g.dtype) == str(t.dtype).replace("torch", "graft")
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-37)
        number = ~np.isnan(t.numpy())
        np.testing.assert_array_equal(np.signbit(g.numpy())[number], np.signbit(t.numpy())[number])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", [[3, -2, 0], [True, False]], ids=["int", "bool"])
def test_integer_and_bool_inputs_are_refused_as_pytorch(name, data):
    with pytest.raises(RuntimeError) as te:
        torch_op(name)(torch.tensor(data))
    with pytest.raises(RuntimeError) as ge:
        graft_op(name)(graft.tensor(data))
    assert str(ge.value) == str(te.value)


@pytest.mark.parametrize("name", INPLACE)
def test_in_place_forms_match_pytorch(name):
    v = samples(seed=1)
    kwargs = other_args(name)
    out = []
    for lib, op in ((torch, torch_op(name, inplace=True)), (graft, graft_op(name, inplace=True))):
        leaf = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        x = leaf * 1.0  # a non-leaf: in place is allowed and recorded
        r = op(x, **kwargs)
        assert r is x
        r.sum().backward()
        out.append((x.detach().numpy(), leaf.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=GRAD_RTOL.get(name, 1e-10), atol=1e-12)


@pytest.mark.parametrize("name", INPLACE)
def test_in_place_on_a_leaf_that_requires_grad_is_refused_as_pytorch(name):
    with pytest.raises(RuntimeError) as te:
        torch_op(name, inplace=True)(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as ge:
        graft_op(name, inplace=True)(graft.ones(2, requires_grad=True))
    assert str(ge.value) == str(te.value)


def test_softshrink_refuses_a_negative_lambda_as_pytorch():
    for lambd in (-1, -0.5):
        with pytest.raises(RuntimeError) as te:
            TF.softshrink(torch.ones(2), lambd)
        with pytest.raises(RuntimeError) as ge:
            F.softshrink(graft.ones(2), lambd)
        assert str(ge.value) == str(te.value)


FUNCTIONAL = [
    ("silu", {}), ("silu", {"inplace": True}),
    ("softplus", {"beta": 2, "threshold": 1}),
    ("leaky_relu", {"negative_slope": 0.2}), ("leaky_relu", {"inplace": True}),
    ("elu", {"alpha": 0.5}), ("elu", {"inplace": True}),
    ("selu", {}), ("selu", {"inplace": True}),
    ("hardsigmoid", {}), ("hardsigmoid", {"inplace": True}),
    ("hardswish", {}), ("hardswish", {"inplace": True}),
    ("mish", {}), ("mish", {"inplace": True}),
    ("logsigmoid", {}),
    ("hardshrink", {"lambd": 1.5}),
    ("softshrink", {"lambd": 1.5}),
]


@pytest.mark.parametrize("name,kwargs", FUNCTIONAL, ids=[f"{n}-{'-'.join(k) or 'defaults'}" for n, k in FUNCTIONAL])
def test_nn_functional_wrappers_match_pytorch(name, kwargs):
    v = samples(seed=2)
    out = []
    for lib, f in ((torch, TF), (graft, F)):
        leaf = lib.tensor(v, dtype=lib.float64, requires_grad=True)
        x = leaf * 1.0
        y = getattr(f, name)(x, **kwargs)
        assert (y is x) == bool(kwargs.get("inplace"))
        y.backward(lib.linspace(-1, 1, len(v), dtype=lib.float64))
        grad_fn = type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name()
        out.append((y.detach().numpy(), leaf.grad.numpy(), grad_fn))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=GRAD_RTOL.get("F." + name, 1e-10), atol=1e-12)
    if not kwargs.get("inplace"):  # PyTorch's in-place forms have nodes of their own (EluBackward1, ...)
        assert out[1][2] == out[0][2]


def test_the_cpp_api_has_the_activations_with_pytorchs_defaults():
    x = graft.tensor([-2.0, -0.25, 0.75, 4.0])
    assert F.leaky_relu(x).tolist() == pytest.approx([-0.02, -0.0025, 0.75, 4.0])
    assert F.elu(x).tolist() == pytest.approx([math.expm1(-2), math.expm1(-0.25), 0.75, 4.0])
    assert F.hardshrink(x).tolist() == [-2.0, 0.0, 0.75, 4.0]
    assert x.hardshrink(1.0).tolist() == [-2.0, 0.0, 0.0, 4.0]


MODULES = [("ELU", ()), ("ELU", (0.5, True)), ("SELU", ()), ("SELU", (True,)), ("Hardsigmoid", ()),
           ("Hardsigmoid", (True,)), ("Hardswish", (True,)), ("Mish", ()), ("Mish", (True,)), ("LogSigmoid", ()),
           ("Hardshrink", ()), ("Hardshrink", (1.5,)), ("Softshrink", (1.5,)), ("SiLU", (True,)),
           ("LeakyReLU", (0.2,)), ("Softplus", (2, 1))]


@pytest.mark.parametrize("cls,args", MODULES, ids=[f"{c}{a}" for c, a in MODULES])
def test_activation_modules_match_pytorch(cls, args):
    v = samples(seed=3)
    out = []
    for lib in (torch, graft):
        module = getattr(lib.nn, cls)(*args)
        x = lib.tensor(v, dtype=lib.float64) * 1.0
        y = module(x)
        out.append((repr(module), y.numpy(), y is x))
    assert out[1][0] == out[0][0]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12, atol=1e-14)
    assert out[1][2] == out[0][2]


@pytest.mark.parametrize("lambd", ["0d", "0d_grad", "1d", "int", "bool", "big_int", "str"])
def test_number_arguments_are_parsed_as_pytorch(lambd):
    def arg(lib):
        return {"0d": lambda: lib.tensor(1.0), "0d_grad": lambda: lib.tensor(1.0, requires_grad=True),
                "1d": lambda: lib.tensor([1.0]), "int": lambda: 1, "bool": lambda: True, "big_int": lambda: 2**63,
                "str": lambda: "1"}[lambd]()
    results = []
    for lib, f in ((torch, TF), (graft, F)):
        try:
            results.append(("ok", f.hardshrink(lib.tensor([-2.0, 0.5, 3.0]), arg(lib)).tolist()))
        except (TypeError, RuntimeError) as e:
            results.append((type(e).__name__, str(e).replace(" (position 2)", "")))
    assert results[1] == results[0]


# ---- threshold and relu's gradient (threshold_backward, with a node of its own) ----

def _thresholded(lib, op, inplace):
    x = lib.tensor([-1.0, 0.5, 2.0, float("nan"), 0.75], dtype=lib.float64, requires_grad=True)
    if op == "relu":
        y = lib.relu_(x.clone()) if inplace else lib.relu(x)
    else:
        y = lib.threshold_(x.clone(), 0.5, -3.0) if inplace else lib.threshold(x, 0.5, -3.0)
    g, = lib.autograd.grad((y * lib.arange(5.0, dtype=lib.float64)).sum(), x, create_graph=True)
    # a gradient penalty: the second derivative through relu is zero, not an error
    h, = lib.autograd.grad((g * g).sum(), x)
    return y, g, h


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("op", ["relu", "threshold"])
def test_first_gradient_of_relu_and_threshold_has_a_graph_as_pytorch(op, inplace):
    (ty, tg, th), (gy, gg, gh) = _thresholded(torch, op, inplace), _thresholded(graft, op, inplace)
    for t, g in ((ty, gy), (tg, gg), (th, gh)):
        np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())
    assert gy.grad_fn.name() == ty.grad_fn.name()  # ThresholdBackward0/1, ReluBackward0
    assert gg.grad_fn.name() == tg.grad_fn.name() == "ThresholdBackwardBackward0"
    assert [f is None for f, _ in gg.grad_fn.next_functions] == [f is None for f, _ in tg.grad_fn.next_functions]


@pytest.mark.parametrize("data, args", [([1, 2, 3], (1.5, 0)), ([1, 2, 3], (1, 2.7)), ([1, 2, 3], (1e20, 0)),
                                        ([1.0, 2.0], (1.5, 1e300)), ([True], (1, 0))])
def test_threshold_converts_its_numbers_as_pytorch(data, args):
    results = []
    for lib in (torch, graft):
        try:
            results.append(lib.threshold(lib.tensor(data), *args).tolist())
        except RuntimeError as e:
            results.append(str(e))
    assert results[1] == results[0]


def test_threshold_module_and_functional_match_pytorch():
    assert repr(graft.nn.Threshold(0.1, 20)) == repr(torch.nn.Threshold(0.1, 20))
    assert repr(graft.nn.Threshold(0.1, 20, True)) == repr(torch.nn.Threshold(0.1, 20, True))
    for lib, fn in ((torch, TF), (graft, F)):
        x = lib.tensor([0.5, 1.0, 2.0])
        assert fn.threshold(x, 1.0, 9.0, inplace=True) is x and x.tolist() == [9.0, 9.0, 2.0]
