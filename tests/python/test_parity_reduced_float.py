"""float16 and bfloat16 against PyTorch: creation, conversion, PyTorch's promotion, arithmetic
computed in float32 and rounded once, reductions, matmul, autograd, printing, NumPy and
checkpoints. Debian's PyTorch 1.13 lacks many float16 CPU kernels (exp, softmax, matmul) that
2.x has: those cases skip there and run under `make test-torch2` (PyTorch 2.x), whose behaviour
graft follows."""
import contextlib
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

DTYPES = ["float16", "bfloat16"]
# one unit in the last place of each, relative: results computed in float32 and rounded once may
# differ from PyTorch's by the rounding of a float32 that differs in its last bits
RTOL = {"float16": 1e-3, "bfloat16": 8e-3}
DATA = [[0.1, -1.5, 3.25, 1000.0], [-0.0, 2.0, -7.75, 0.3333]]


@contextlib.contextmanager
def torch_kernels():
    """Skips the test where this PyTorch has no float16 CPU kernel for an op (1.13; 2.x has it)."""
    try:
        yield
    except RuntimeError as e:
        if "not implemented for 'Half'" in str(e) and torch.__version__ < "2":
            pytest.skip(f"PyTorch {torch.__version__} has no CPU float16 kernel here: {e}")
        raise


def both(program, dtype, data=DATA, rtol=None, **kw):
    """Runs program(lib, dt, x) in torch and graft on the same data, x of dtype `dtype`;
    compares dtypes, shapes and values (as float64)."""
    results = []
    for lib in (torch, graft):
        dt = getattr(lib, dtype)
        x = lib.tensor(data, dtype=dt, **kw)
        with torch_kernels():
            results.append(program(lib, dt, x))
    t, g = results
    t, g = (t if isinstance(t, (list, tuple)) else [t]), (g if isinstance(g, (list, tuple)) else [g])
    for a, b in zip(t, g):
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().double().numpy(), a.detach().double().numpy(),
                                   rtol=RTOL[dtype] if rtol is None else rtol, atol=1e-6)
    return results


def test_dtype_objects():
    assert graft.half is graft.float16 and graft.float16.is_floating_point and graft.bfloat16.is_floating_point
    assert graft.float16.itemsize == 2 and graft.bfloat16.itemsize == 2
    assert repr(graft.float16) == "graft.float16" and repr(graft.bfloat16) == "graft.bfloat16"


@pytest.mark.parametrize("dtype", DTYPES)
def test_conversion_rounds_to_nearest_even_as_torch(dtype):
    values = [0.1, 1 / 3, 65504.0, 65520.0, 1e-8, 3.0e38, -2.5, float("inf"), float("nan"), 1 + 2 ** -11,
              1 + 3 * 2 ** -11, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 2 ** -24, 2 ** -25, 70000.0]
    for src in ("float32", "float64"):
        t = torch.tensor(values, dtype=getattr(torch, src)).to(getattr(torch, dtype))
        g = graft.tensor(values, dtype=getattr(graft, src)).to(getattr(graft, dtype))
        assert g.float().tolist() == pytest.approx(t.float().tolist(), nan_ok=True, rel=0, abs=0)
    ints = [0, 1, -3, 2049, 65519, 100000, 2 ** 40]
    t = torch.tensor(ints).to(getattr(torch, dtype))
    g = graft.tensor(ints).to(getattr(graft, dtype))
    assert g.float().tolist() == t.float().tolist()
    assert g.long().tolist() == t.long().tolist() or dtype == "float16"  # inf -> int64 is undefined in C
    assert graft.tensor([0.0, 2.0], dtype=getattr(graft, dtype)).bool().tolist() == [False, True]


@pytest.mark.parametrize("dtype", DTYPES)
def test_creation(dtype):
    both(lambda L, dt, x: [L.zeros(2, 3, dtype=dt), L.ones(3, dtype=dt), L.full((2,), 1.7, dtype=dt),
                           L.arange(0, 3, 0.5, dtype=dt), L.linspace(-1, 1, 5, dtype=dt),
                           L.zeros_like(x), L.ones_like(x, dtype=L.float32)], dtype)
    if dtype == "float16":  # torch 1.13 has no bfloat16 eye (2.x has)
        both(lambda L, dt, x: L.eye(3, dtype=dt), dtype)
    assert graft.eye(2, dtype=graft.bfloat16).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    for lib in (torch, graft):
        r = lib.rand(100, dtype=getattr(lib, dtype))
        assert str(r.dtype).endswith(dtype) and bool((r >= 0).all()) and bool((r <= 1).all())
        assert str(lib.randn(3, dtype=getattr(lib, dtype)).dtype).endswith(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fill_overflow_as_torch(dtype):
    too_big = 70000 if dtype == "float16" else 1e39
    for lib in (torch, graft):
        # PyTorch 2.x names c10's type (1.13: at::Half); graft follows 2.x
        namespace = "at" if lib is torch and torch.__version__ < "2" else "c10"
        name = f"{namespace}::Half" if dtype == "float16" else f"{namespace}::BFloat16"
        with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {name} without overflow$"):
            lib.zeros(2, dtype=getattr(lib, dtype)).fill_(too_big)
    if dtype == "bfloat16":
        both(lambda L, dt, x: L.zeros(1, dtype=dt).fill_(70000), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_computed_in_float_and_rounded_once(dtype):
    def prog(L, dt, x):
        y = x.flip(1) + 0.5
        return [x + y, x - y, x * y, x / (y + 10), x * 3, 2.5 - x, x ** 2, -x, x.abs(), (x * 1e-3).exp(),
                (x.abs() + 1).log(), x.tanh(), x.sigmoid(), x.relu(), (x.abs() + 0.5).sqrt(), x.clamp(-1, 1),
                L.maximum(x, y), L.where(x > 0, x, y), x.floor(), x.round()]
    both(prog, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_promotion_as_torch(dtype):
    def prog(L, dt, x):
        other = L.bfloat16 if dt == L.float16 else L.float16
        return [x + x.float(), x + x.to(other), x + L.tensor([1, 2, 3, 4]), x + 1.5, x + L.tensor(2.0),
                x.double() + x, L.tensor([1, 2], dtype=L.int64) * L.tensor(1.5, dtype=dt), x > 0.1, x == x]
    both(prog, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_and_matmul(dtype):
    def prog(L, dt, x):
        w = L.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5], [1.0, 1.0]], dtype=dt)
        return [x.sum(), x.sum(1), x.mean(0), x.max(), x.argmax(1), x.softmax(1), x.log_softmax(1), x @ w,
                x.sum(dtype=L.float32), x.cumsum(1), x.sort(1).values, x.var(1), x.norm()]
    both(prog, dtype, rtol=2 * RTOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_indexing_views_and_in_place(dtype):
    def prog(L, dt, x):
        y = x.clone()
        y[0, 1:3] = 9.5
        y[:, 0] += 1.25
        y.mul_(2)
        return [x[1], x[:, [0, 2]], x[x > 0], x.t().contiguous(), x.reshape(4, 2), y, L.cat([x, y]), L.stack([x, y])]
    both(prog, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_autograd_keeps_the_dtype(dtype):
    def prog(L, dt, x):
        L.manual_seed(0)
        x = x.detach().requires_grad_()
        w = L.tensor([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5], [1.0, 1.0]], dtype=dt, requires_grad=True)
        loss = ((x @ w).tanh() * 0.1).sum()
        loss.backward()
        return [loss, x.grad, w.grad]
    t, g = both(prog, dtype, rtol=4 * RTOL[dtype])
    assert str(g[1].dtype).endswith(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_module_half(dtype):
    results = []
    for lib in (torch, graft):
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.5, 0.25, -1.0]]))
            lin.bias.copy_(lib.tensor([0.01, -0.02]))
        lin = lin.to(getattr(lib, dtype))
        with torch_kernels():
            out = lin(lib.tensor([[1.0, 2.0, 3.0]], dtype=getattr(lib, dtype)))
            out.sum().backward()
        results.append((out, lin.weight.grad, lin.weight.dtype))
    (to, tg, tdt), (go, gg, gdt) = results
    assert str(gdt).endswith(dtype) and str(tdt).endswith(dtype)
    np.testing.assert_allclose(go.detach().double().numpy(), to.detach().double().numpy(), rtol=RTOL[dtype])
    np.testing.assert_allclose(gg.double().numpy(), tg.double().numpy(), rtol=RTOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_printing_item_tolist_type(dtype):
    for lib in (torch, graft):
        x = lib.tensor([1.5, -0.25, 1000.0], dtype=getattr(lib, dtype))
        text = repr(x).replace("graft", "torch")
        assert text == repr(torch.tensor([1.5, -0.25, 1000.0], dtype=getattr(torch, dtype)))
        assert x[0].item() == 1.5 and x.tolist() == [1.5, -0.25, 1000.0]
    g = graft.tensor([1.0], dtype=getattr(graft, dtype))
    assert g.type() == ("torch.HalfTensor" if dtype == "float16" else "torch.BFloat16Tensor")
    assert isinstance(g, graft.HalfTensor if dtype == "float16" else graft.BFloat16Tensor)


def test_numpy_float16_both_ways_and_bfloat16_refused():
    a = np.array([0.1, 2.5], dtype=np.float16)
    g = graft.from_numpy(a)
    assert g.dtype == graft.float16 and g.tolist() == a.tolist()
    assert graft.tensor(a).dtype == graft.float16
    assert g.numpy().dtype == np.float16 and g.numpy().tolist() == a.tolist()
    for lib in (torch, graft):
        with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
            lib.zeros(2, dtype=lib.bfloat16).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_checkpoints_both_ways(dtype, tmp_path):
    values = [0.1, -3.5, 65504.0 if dtype == "float16" else 3.0e38]
    buf = io.BytesIO()
    torch.save({"w": torch.tensor(values, dtype=getattr(torch, dtype))}, buf)
    buf.seek(0)
    loaded = graft.load(buf)["w"]
    assert loaded.dtype == getattr(graft, dtype)
    assert loaded.float().tolist() == torch.tensor(values, dtype=getattr(torch, dtype)).float().tolist()
    path = tmp_path / "g.pt"
    graft.save({"w": loaded}, str(path))
    back = torch.load(str(path))["w"]
    assert back.dtype == getattr(torch, dtype) and back.float().tolist() == loaded.float().tolist()


@pytest.mark.parametrize("dtype", DTYPES)
def test_meta_estimate_of_a_16_bit_step_equals_the_real_run(dtype):
    """The float32 copies the kernels compute in are taken on the meta device too."""
    def build():
        graft.manual_seed(0)
        model = graft.nn.Sequential(graft.nn.Linear(32, 64), graft.nn.ReLU(), graft.nn.Linear(64, 10))
        model = model.to(getattr(graft, dtype))
        return model, graft.optim.SGD(model.parameters(), lr=0.1), graft.randn(16, 32, dtype=getattr(graft, dtype))

    def step(model, opt, x):
        opt.zero_grad(set_to_none=True)
        model(x).softmax(1).sum().backward()
        opt.step()
    cpu = graft.device("cpu")
    base = graft._C._memory_allocated(cpu)
    model, opt, x = build()
    graft._C._reset_peak_memory_stats(cpu)
    for _ in range(2):
        step(model, opt, x)
    real_peak = graft._C._max_memory_allocated(cpu) - base
    meta_base = graft._C._memory_allocated("meta")
    with graft.device("meta"):
        mmodel, mopt, mx = build()
    est = graft.utils.memory.estimate(step, mmodel, mopt, mx, steps=2)
    assert real_peak > 0 and est.peak_allocated - meta_base == real_peak


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", None])
def test_finfo_as_torch(name):
    t = torch.finfo(getattr(torch, name)) if name else torch.finfo()
    g = graft.finfo(getattr(graft, name)) if name else graft.finfo()
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(g, field) == getattr(t, field), field
    assert repr(g) == repr(t) and g == graft.finfo(getattr(graft, g.dtype))


@pytest.mark.parametrize("name", ["int32", "int64"])
def test_iinfo_as_torch(name):
    t, g = torch.iinfo(getattr(torch, name)), graft.iinfo(getattr(graft, name))
    assert (g.bits, g.max, g.min, g.dtype, repr(g)) == (t.bits, t.max, t.min, t.dtype, repr(t))


def test_finfo_iinfo_refusals_as_torch():
    for lib in (torch, graft):
        with pytest.raises(TypeError, match="^torch.finfo\\(\\) requires a floating point input type. Use torch.iinfo"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match="^torch.iinfo\\(\\) requires an integer input type. Use torch.finfo"):
            lib.iinfo(lib.float32)
        with pytest.raises(TypeError, match="^torch.bool is not supported by torch.iinfo$"):
            lib.iinfo(lib.bool)
        with pytest.raises(TypeError, match="^finfo\\(\\): argument 'type' \\(position 1\\) must be torch.dtype, "
                                            "not str$"):
            lib.finfo("x")


@pytest.fixture
def restore_default_dtype():
    yield
    torch.set_default_dtype(torch.float32)
    graft.set_default_dtype(graft.float32)


@pytest.mark.parametrize("name", ["float64", "float16", "bfloat16", "float32"])
def test_set_default_dtype_as_torch(name, restore_default_dtype):
    seen = []
    for lib in (torch, graft):
        lib.set_default_dtype(getattr(lib, name))
        lib.manual_seed(0)
        made = [lib.get_default_dtype(), lib.tensor([1.5]).dtype, lib.zeros(1).dtype, lib.rand(2).dtype,
                (lib.tensor([1]) + 1.5).dtype, lib.arange(0, 1, 0.5).dtype, lib.nn.Linear(1, 1).weight.dtype,
                lib.tensor(2.5).dtype, (lib.ones(1, dtype=lib.float32) * 2.5).dtype, lib.finfo().dtype]
        seen.append([str(d).split(".")[-1] for d in made])
    assert seen[0] == seen[1]


def test_set_default_dtype_refusals_as_torch(restore_default_dtype):
    for lib in (torch, graft):
        with pytest.raises(TypeError, match="^only floating-point types are supported as the default type$"):
            lib.set_default_dtype(lib.int64)
        with pytest.raises(TypeError, match="^invalid dtype object: only floating-point types are supported as the "
                                            "default type$"):
            lib.set_default_dtype("x")
        assert lib.get_default_dtype() == lib.float32  # a refused call changes nothing
