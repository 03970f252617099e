"""nn.Dropout1d/2d/3d, AlphaDropout, FeatureAlphaDropout and their functionals: the zeroing
structure (whole channels), the scaling, the expectation, eval and p=0 identity, the in-place
flag, autograd, and PyTorch's errors and warnings (texts compared with torch 1.13's, which are
PyTorch 2.x's)."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn.functional as GF  # noqa: E402

ALPHA = 1.7580993408473766  # -SELU's saturation value, as ATen's alpha dropout


def alpha_coefficients(p):
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    return a, ALPHA * a * p, ALPHA * a * (p - 1)  # scale, shift of kept elements, dropped value


def channel_values(out, batched):
    """(channels, elements per channel) of an output whose dim 1 (dim 0 unbatched) is channels."""
    out = out.detach().numpy()
    if not batched:
        out = out[None]
    return out.reshape(out.shape[0] * out.shape[1], -1)


@pytest.mark.parametrize("fn, shape", [("dropout1d", (8, 6, 5)), ("dropout1d", (6, 5)), ("dropout2d", (8, 6, 3, 4)),
                                       ("dropout3d", (8, 6, 2, 3, 2)), ("dropout3d", (6, 2, 3, 2))])
def test_whole_channels_are_zeroed_and_the_rest_scaled(fn, shape):
    graft.manual_seed(0)
    x = graft.rand(*shape) + 1.0
    out = getattr(GF, fn)(x, 0.4)
    ratio = channel_values(out / x, batched=len(shape) == {"dropout1d": 3, "dropout2d": 4, "dropout3d": 5}[fn])
    for row in ratio:
        assert np.allclose(row, 0.0) or np.allclose(row, 1 / 0.6)
    dropped = np.isclose(ratio[:, 0], 0.0)
    assert 0 < dropped.sum() < len(dropped)


@pytest.mark.parametrize("fn, shape", [("dropout1d", (400, 50, 2)), ("dropout2d", (400, 50, 2, 2)),
                                       ("dropout3d", (400, 50, 1, 2, 2))])
def test_expectation_is_kept(fn, shape):
    graft.manual_seed(1)
    x = graft.ones(*shape, dtype=graft.float64)
    out = getattr(GF, fn)(x, 0.3)
    assert abs(out.mean().item() - 1.0) < 0.03
    zero_channels = (channel_values(out, True)[:, 0] == 0).mean()
    assert abs(zero_channels - 0.3) < 0.02


def test_alpha_dropout_values_and_moments():
    graft.manual_seed(2)
    p = 0.2
    x = graft.randn(2000, 50, dtype=graft.float64)
    out = GF.alpha_dropout(x, p, training=True)
    a, shift, dropped_value = alpha_coefficients(p)
    got, xs = out.numpy(), x.numpy()
    dropped = np.isclose(got, dropped_value, rtol=0, atol=1e-12) & ~np.isclose(xs * a + shift, dropped_value)
    np.testing.assert_allclose(got[~dropped], xs[~dropped] * a + shift, rtol=1e-12, atol=1e-12)
    assert abs(dropped.mean() - p) < 0.01
    assert abs(got.mean()) < 0.02 and abs(got.std() - 1.0) < 0.02


def test_feature_alpha_dropout_drops_whole_channels():
    graft.manual_seed(3)
    p = 0.5
    x = graft.randn(30, 8, 3, 3, dtype=graft.float64)
    out = GF.feature_alpha_dropout(x, p, training=True)
    a, shift, dropped_value = alpha_coefficients(p)
    rows, xs = channel_values(out, True), channel_values(x, True)
    kept = np.isclose(rows, xs * a + shift, rtol=1e-12).all(axis=1)
    dropped = np.isclose(rows, dropped_value, rtol=1e-12).all(axis=1)
    assert (kept ^ dropped).all() and 0 < dropped.sum() < len(dropped)


FUNCTIONALS = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]
SHAPES = {"dropout1d": (2, 3, 4), "dropout2d": (2, 3, 4, 4), "dropout3d": (2, 3, 2, 2, 2), "alpha_dropout": (2, 3, 4),
          "feature_alpha_dropout": (2, 3, 4)}


@pytest.mark.parametrize("fn", FUNCTIONALS)
def test_eval_and_p0_return_the_input_itself(fn):
    for lib in (graft, torch):
        F = lib.nn.functional
        x = lib.ones(*SHAPES[fn])
        assert getattr(F, fn)(x, 0.5, False) is x
        assert getattr(F, fn)(x, 0.0, True) is x
        empty = lib.ones(0, *SHAPES[fn][1:])
        assert getattr(F, fn)(empty, 0.5, True) is empty
    # alpha dropout defaults to training=False, as PyTorch's
    x = graft.ones(2, 3, 4)
    assert GF.alpha_dropout(x) is x and GF.feature_alpha_dropout(x) is x


@pytest.mark.parametrize("fn", FUNCTIONALS)
def test_p1_multiplies_by_zero_as_pytorch(fn):
    values = np.array([1.0, -2.0, np.inf, np.nan])
    outs = []
    for lib in (graft, torch):
        x = lib.tensor(np.broadcast_to(values, SHAPES[fn][:-1] + (4,)).copy())
        outs.append(getattr(lib.nn.functional, fn)(x, 1.0, True).numpy())
    np.testing.assert_array_equal(outs[0], outs[1])  # 0 * inf and 0 * nan are nan


@pytest.mark.parametrize("fn", FUNCTIONALS)
def test_inplace_writes_the_input(fn):
    graft.manual_seed(4)
    x = graft.rand(*SHAPES[fn]) + 1.0
    before = x.clone()
    version = x._version
    out = getattr(GF, fn)(x, 0.5, True, True)
    assert out is x and x._version > version
    assert not graft.equal(x, before)


@pytest.mark.parametrize("fn, shape", [("dropout1d", (3, 4)), ("dropout3d", (3, 2, 2, 2))])
def test_unbatched_inplace_keeps_the_shape(fn, shape):
    graft.manual_seed(5)
    x = graft.ones(*shape)
    out = getattr(GF, fn)(x, 0.5, True, True)
    assert out is x and tuple(x.shape) == shape
    rows = x.numpy().reshape(shape[0], -1)
    assert all(np.all(r == 0) or np.all(r == 2) for r in rows)
    for lib in (graft, torch):  # not in place: a new tensor of the same shape
        y = lib.ones(*shape)
        assert tuple(getattr(lib.nn.functional, fn)(y, 0.5, True).shape) == shape


def test_gradient_is_the_channel_mask():
    graft.manual_seed(6)
    x = graft.randn(4, 5, 3, requires_grad=True)
    out = GF.dropout1d(x * 1.0, 0.5)
    out.sum().backward()
    grad = x.grad.numpy()
    mask = (out / x).detach().numpy()
    np.testing.assert_allclose(grad, mask, rtol=1e-6)
    assert set(np.unique(grad)) <= {0.0, 2.0}


MODULES = [("Dropout1d", "dropout1d"), ("Dropout2d", "dropout2d"), ("Dropout3d", "dropout3d"),
           ("AlphaDropout", "alpha_dropout"), ("FeatureAlphaDropout", "feature_alpha_dropout")]


@pytest.mark.parametrize("name, fn", MODULES)
def test_modules(name, fn):
    for lib in (graft, torch):
        layer = getattr(lib.nn, name)(0.25)
        assert repr(layer) == f"{name}(p=0.25, inplace=False)"
        assert repr(getattr(lib.nn, name)(inplace=True)) == f"{name}(p=0.5, inplace=True)"
        assert layer.training and list(layer.state_dict()) == []
        x = lib.ones(*SHAPES[fn])
        assert layer.eval()(x) is x
        layer.train()
        out = layer(x)
        assert out is not x and tuple(out.shape) == tuple(x.shape)
        with pytest.raises(ValueError) as info:
            getattr(lib.nn, name)(1.5)
        assert str(info.value) == "dropout probability has to be between 0 and 1, but got 1.5"


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_modules_ignore_inplace(name):
    for lib in (graft, torch):
        x = lib.ones(4, 3, 2)
        out = getattr(lib.nn, name)(0.5, inplace=True)(x)
        assert out is not x and bool((x == 1).all())


@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d", "Dropout3d"])
def test_channel_dropout_modules_honour_inplace(name):
    x = graft.ones(*SHAPES[name.lower()])
    assert getattr(graft.nn, name)(0.5, inplace=True)(x) is x


def raised(lib, fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            getattr(lib.nn.functional, fn)(*args)
            error = None
        except Exception as e:  # noqa: BLE001 (compared below)
            error = (type(e), str(e))
    return error, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("fn, shape, p", [
    ("dropout1d", (5,), 0.5), ("dropout1d", (2, 3, 4, 5), 0.5), ("dropout1d", (2, 3), 1.5),
    ("dropout2d", (2, 3, 4), 0.5), ("dropout2d", (2, 3), 0.5), ("dropout2d", (2, 3, 4, 5, 6), 0.5),
    ("dropout2d", (4,), 0.5), ("dropout2d", (4,), 0.0), ("dropout2d", (2, 3, 4, 4), -0.1),
    ("dropout3d", (2, 3, 4), 0.5), ("dropout3d", (3, 2, 2, 2), 0.5), ("dropout3d", (1, 2, 3, 4, 5, 6), 0.5),
    ("alpha_dropout", (3,), 2.0), ("feature_alpha_dropout", (3,), 0.5),
])
def test_errors_and_warnings_match_torch(fn, shape, p):
    got = raised(graft, fn, graft.ones(*shape), p, True)
    want = raised(torch, fn, torch.ones(*shape), p, True)
    assert got == want


@pytest.mark.parametrize("fn, args", [
    ("dropout1d", ((2, 3, 4), 0.5, "abc")), ("dropout2d", ((2, 3, 4, 4), 0.5, 1)),
    ("dropout3d", ((2, 3, 2, 2, 2), float("nan"), True)), ("alpha_dropout", ((3, 4), 0.5, None)),
    ("feature_alpha_dropout", ((3, 4), float("nan"), True)), ("dropout2d", ((2, 3, 4, 4), float("nan"), False)),
    ("alpha_dropout", ((3, 4), "p", True)), ("feature_alpha_dropout", ((2, 3), 0.5, 2.0)),
])
def test_argument_parser_checks_match_torch(fn, args):
    shape, p, train = args
    for inplace in (False, True):
        got = raised(graft, fn, graft.ones(*shape), p, train, inplace)
        want = raised(torch, fn, torch.ones(*shape), p, train, inplace)
        assert got == want


def test_non_tensor_input_is_refused_as_pytorch():
    for fn in ("alpha_dropout", "feature_alpha_dropout"):
        got, _ = raised(graft, fn, [1.0, 2.0], 0.5, True)
        want, _ = raised(torch, fn, [1.0, 2.0], 0.5, True)
        assert got == want == (TypeError, f"{fn}(): argument 'input' (position 1) must be Tensor, not list")
    p_tensor = raised(graft, "alpha_dropout", graft.ones(2), graft.tensor(0.5, requires_grad=True), True)
    assert p_tensor[0] == (TypeError, "alpha_dropout(): argument 'p' (position 2) must be float, not Tensor")
    out = GF.alpha_dropout(graft.ones(2), graft.tensor(0.0), True)  # a 0-d tensor p is a number
    assert bool((out == 1).all())


@pytest.mark.parametrize("fn, shape", [("dropout1d", (3, 4)), ("dropout3d", (3, 2, 2, 2))])
def test_unbatched_inplace_refuses_leaves_that_require_grad(fn, shape):
    for training in (True, False):
        errors = []
        for lib in (graft, torch):
            leaf = lib.ones(*shape, requires_grad=True)
            view = lib.ones(1, *shape, requires_grad=True)[0]
            for x in (leaf, view):
                with pytest.raises(RuntimeError) as info:
                    getattr(lib.nn.functional, fn)(x, 0.5, training, True)
                errors.append(str(info.value))
            with lib.no_grad():  # no check without grad mode
                assert getattr(lib.nn.functional, fn)(leaf, 0.5, training, True) is leaf
        assert errors[:2] == errors[2:]
        assert errors[0] == "a leaf Variable that requires grad is being used in an in-place operation."
        assert errors[1] == "a view of a leaf Variable that requires grad is being used in an in-place operation."


def test_integer_inputs_behave_as_pytorch():
    for fn in FUNCTIONALS:
        got = raised(graft, fn, graft.ones(*SHAPES[fn], dtype=graft.int64), 0.5, True)
        want = raised(torch, fn, torch.ones(*SHAPES[fn], dtype=torch.int64), 0.5, True)
        assert (got[0] and got[0][0]) == (want[0] and want[0][0]), fn
