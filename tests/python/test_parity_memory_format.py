"""Parity tier: memory formats (clone's preserve_format strides, contiguous(memory_format=),
is_contiguous(memory_format=), to(memory_format=)) and var/std's overloads, against PyTorch."""
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

FORMATS = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


def layouts(lib):
    """The same tensors in both libraries: dense (transposed, permuted, channels-last), with gaps
    (a step, a column slice), overlapping (expanded), with size-1 and size-0 dims."""
    base = lib.arange(360 * 2, dtype=lib.float64)
    return {
        "contiguous": base[:12].reshape(3, 4),
        "transposed": base[:12].reshape(3, 4).t(),
        "nhwc_permuted": base[:120].reshape(2, 3, 4, 5).permute(0, 2, 3, 1),
        "channels_last": base[:120].reshape(2, 4, 5, 3).permute(0, 3, 1, 2),
        "stepped": base[:16].reshape(4, 4)[::2],
        "stepped_transposed": base[:16].reshape(4, 4)[::2].t(),
        "column_slice": base[:120].reshape(2, 3, 4, 5)[:, :, :, ::2],
        "permuted_slice": base[:120].reshape(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
        "expanded": base[:3].reshape(3, 1).expand(3, 4),
        "expanded_mixed": base[:720].as_strided((6, 5, 4, 3, 2), (6, 0, 120, 0, 1)),
        "size_one": base[:4].reshape(1, 4).t(),
        "empty": base[:0].reshape(0, 3),
        "five_d": base[:720].reshape(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1),
    }


@pytest.mark.parametrize("name", sorted(layouts(torch)))
def test_clone_preserves_layout_as_pytorch(name):
    t, g = layouts(torch)[name], layouts(graft)[name]
    assert g.stride() == t.stride() and g.shape == t.shape
    tc, gc = t.clone(), g.clone()
    assert gc.stride() == tc.stride(), name
    assert gc.is_contiguous() == tc.is_contiguous()
    np.testing.assert_array_equal(gc.numpy(), tc.numpy())
    for fmt in FORMATS:  # every explicit format: the same strides, or the same error
        try:
            expected = t.clone(memory_format=getattr(torch, fmt)).stride()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                g.clone(memory_format=getattr(graft, fmt))
            continue
        got = g.clone(memory_format=getattr(graft, fmt))
        assert got.stride() == expected, (name, fmt)
        np.testing.assert_array_equal(got.numpy(), t.numpy())


@pytest.mark.parametrize("name", sorted(layouts(torch)))
def test_contiguous_and_is_contiguous_per_format(name):
    t, g = layouts(torch)[name], layouts(graft)[name]
    for fmt in FORMATS:
        tf, gf = getattr(torch, fmt), getattr(graft, fmt)
        assert g.is_contiguous(memory_format=gf) == t.is_contiguous(memory_format=tf), (name, fmt)
        try:
            expected = t.contiguous(memory_format=tf)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                g.contiguous(memory_format=gf)
            continue
        got = g.contiguous(memory_format=gf)
        assert got.stride() == expected.stride(), (name, fmt)
        assert (got.data_ptr() == g.data_ptr()) == (expected.data_ptr() == t.data_ptr()), (name, fmt)
        np.testing.assert_array_equal(got.numpy(), t.numpy())


def test_clone_default_keeps_grad_and_node():
    for lib in (torch, graft):
        x = lib.randn(3, 4, dtype=lib.float64, requires_grad=True)
        y = x.t().clone()
        assert y.grad_fn.name() == "CloneBackward0"
        y.backward(lib.ones(4, 3, dtype=lib.float64))
        assert x.grad.stride() == (4, 1)
    x = graft.randn(4, 4, requires_grad=True)
    y = x[:, ::2].clone(memory_format=graft.contiguous_format)
    assert y.stride() == (2, 1) and y.grad_fn.name() == "CloneBackward0"


def test_format_objects_print_and_pickle_as_pytorch():
    for fmt in FORMATS:
        g = getattr(graft, fmt)
        assert repr(g) == "graft." + fmt and repr(getattr(torch, fmt)) == "torch." + fmt
        assert isinstance(g, graft.memory_format)
        assert pickle.loads(pickle.dumps(g)) is g


@pytest.mark.parametrize("call, message", [
    (lambda L, x: x.clone(1), "clone() takes 0 positional arguments but 1 was given"),
    (lambda L, x: L.clone(x, 1), "clone() takes 1 positional argument but 2 were given"),
    (lambda L, x: x.contiguous(1), "contiguous() takes 0 positional arguments but 1 was given"),
    (lambda L, x: x.is_contiguous(1), "is_contiguous() takes 0 positional arguments but 1 was given"),
    (lambda L, x: L.clone(x, foo=1), "clone() got an unexpected keyword argument 'foo'"),
    (lambda L, x: x.contiguous(foo=1), "contiguous() got an unexpected keyword argument 'foo'"),
    (lambda L, x: x.clone(memory_format=1), "clone(): argument 'memory_format' must be {lib}.memory_format, not int"),
    (lambda L, x: x.contiguous(memory_format=None),
     "contiguous(): argument 'memory_format' must be {lib}.memory_format, not NoneType"),
])
def test_argument_errors_as_pytorch(call, message):
    for lib in (torch, graft):
        with pytest.raises(TypeError) as e:
            call(lib, lib.ones(2, 3))
        assert str(e.value) == message.format(lib=lib.__name__)


def test_to_memory_format():
    for lib in (torch, graft):
        x = lib.arange(120.0).reshape(2, 3, 4, 5)
        y = x.to(memory_format=lib.channels_last)
        assert y.stride() == (60, 1, 15, 3) and y.is_contiguous(memory_format=lib.channels_last)
        assert x.to(memory_format=lib.preserve_format) is x or x.to(memory_format=lib.preserve_format).data_ptr() == x.data_ptr()
        z = y.to(lib.float64, memory_format=lib.contiguous_format)
        assert z.stride() == (60, 20, 5, 1) and z.dtype == lib.float64
        np.testing.assert_array_equal(z.numpy(), x.double().numpy())


def test_tensor_of_a_tensor_keeps_its_layout():
    for lib in (torch, graft):
        t = lib.arange(12.0).reshape(3, 4).t()
        with pytest.warns(UserWarning):
            assert lib.tensor(t).stride() == (1, 4)


# ---- var and std: PyTorch's three overloads through one generated binding ----

VAR_CALLS = [
    ("plain", lambda x: x.var()),
    ("dim", lambda x: x.var(1)),
    ("dim_unbiased_false", lambda x: x.var(0, False)),
    ("dim_unbiased_keepdim", lambda x: x.var(1, True, True)),
    ("unbiased_only", lambda x: x.var(False)),
    ("unbiased_keyword", lambda x: x.var(unbiased=False)),
    ("dim_keyword_unbiased", lambda x: x.var(dim=0, unbiased=False, keepdim=True)),
    ("correction0", lambda x: x.var(1, correction=0)),
    ("correction2_keepdim", lambda x: x.var((0, 1), correction=2, keepdim=True)),
    ("std_dim", lambda x: x.std(1)),
    ("std_unbiased_only", lambda x: x.std(False)),
    ("std_correction0", lambda x: x.std(0, correction=0, keepdim=True)),
    ("function_form", lambda x: x.var(0, True) + x.std(1, keepdim=True).sum()),
]


@pytest.mark.parametrize("name, call", VAR_CALLS, ids=[n for n, _ in VAR_CALLS])
def test_var_std_overloads_match_pytorch(name, call):
    data = np.random.default_rng(0).standard_normal((4, 5))
    results = []
    for lib in (torch, graft):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        r = call(x)
        r.sum().backward()
        results.append((r.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_var_fractional_correction_as_pytorch_2():
    # PyTorch 2.x's correction is Scalar?: a fraction divides by N - correction (1.13 takes ints only)
    data = np.random.default_rng(1).standard_normal((3, 6))
    x = graft.tensor(data, requires_grad=True)
    v = x.var(1, correction=0.5)
    np.testing.assert_allclose(v.detach().numpy(), data.var(axis=1, ddof=0.5), rtol=1e-12)
    v.sum().backward()
    expected = 2 * (data - data.mean(axis=1, keepdims=True)) / (6 - 0.5)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(graft.std(x.detach(), correction=1.5).item(), data.std(ddof=1.5), rtol=1e-12)


def test_var_errors_as_pytorch():
    for lib in (torch, graft):
        with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
            lib.ones(3, dtype=lib.int64).var()
        with pytest.raises(TypeError, match=r"var\(\) received an invalid combination of arguments"):
            lib.ones(3).var(0, True, True, correction=1)


def test_inplace_on_a_view_of_a_base_with_preserved_strides():
    # clone keeps the transposed layout; an in-place op on a row of it records CopySlices over
    # the base's own strides, and the gradients are PyTorch's
    data = np.random.default_rng(2).standard_normal((3, 4))
    results = []
    for lib in (torch, graft):
        x = lib.tensor(data, requires_grad=True)
        w = lib.tensor([1.5, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = x.t().clone()
        assert b.stride() == (1, 4)
        b[1].mul_(w)
        assert b.grad_fn.name() == "torch::autograd::CopySlices"  # PyTorch's name, with its namespace
        (b * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
        results.append((b.detach().numpy(), x.grad.numpy(), w.grad.numpy()))
    for a, g in zip(*results):
        np.testing.assert_allclose(g, a, rtol=1e-12)


def test_module_to_channels_last_lays_out_4d_parameters():
    for lib in (torch, graft):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 2))
        reference = [p.detach().clone() for p in model.parameters()]
        conv_weight = model[0].weight
        assert model.to(memory_format=lib.channels_last) is model
        assert model[0].weight is conv_weight  # the same Parameter, its data laid out anew
        assert conv_weight.stride() == (27, 1, 9, 3)
        assert conv_weight.is_contiguous(memory_format=lib.channels_last)
        assert model[2].weight.stride() == (64, 1)  # 2-d: left as it is
        for p, r in zip(model.parameters(), reference):
            np.testing.assert_array_equal(p.detach().numpy(), r.numpy())
        x = lib.ones(2, 3, 6, 6)
        model(x).sum().backward()
        assert conv_weight.grad.shape == (4, 3, 3, 3)
    with pytest.raises(TypeError, match="memory_format"):
        graft.nn.Linear(2, 2).to(memory_format="channels_last")
