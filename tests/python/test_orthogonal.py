"""Tests of graft.nn.init.orthogonal_, graft.linalg.matrix_exp (torch.matrix_exp, Tensor.matrix_exp),
graft.linalg.householder_product (torch.orgqr, Tensor.orgqr) and
graft.nn.utils.parametrizations.orthogonal. The parity tier compares values, gradients, state_dict
keys and error texts with PyTorch 1.13; where 1.13 and 2.x differ (error types, the degree-8
coefficient of matrix_exp, 2.x's degree 18 for batches) graft follows 2.x and the test says so."""
import math

import numpy as np
import pytest

import graft
from graft._composites.householder import _geqrf
from graft._composites.matrix_exponential import _plans
from graft.nn.utils import parametrizations as gparams
from graft.nn.utils import parametrize as gparam


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def error_of(fn):
    """(type name, text) of what ``fn()`` raises; graft's names read as torch's."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).replace("graft.", "torch.")


def gram_error(W, rows_orthonormal):
    """max |W W^T - I| (rows) or max |W^T W - I| (columns) of a 2-d NumPy matrix."""
    G = W @ W.T if rows_orthonormal else W.T @ W
    return np.abs(G - np.eye(len(G))).max()


def with_norm(a, norm):
    """``a`` (..., n, n) with each matrix scaled to the 1-norm ``norm``."""
    return a / np.abs(a).sum(-2).max(-1)[..., None, None] * norm


def expm_reference(a):
    """exp of one float64 NumPy matrix: Taylor series (40 terms) of a / 2^s, norm <= 1/2, squared s times."""
    s = max(0, math.ceil(math.log2(max(np.abs(a).sum(0).max(), 1e-300) / 0.5)))
    b = a / 2.0 ** s
    result, term = np.eye(len(a)), np.eye(len(a))
    for k in range(1, 40):
        term = term @ b / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


def expm_reference_batch(a):
    flat = a.reshape(-1, a.shape[-2], a.shape[-1])
    return np.stack([expm_reference(m) for m in flat]).reshape(a.shape)


# ---- nn.init.orthogonal_ ----

@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (4, 2, 3), (6, 2, 1), (1, 4), (4, 1)])
@pytest.mark.parametrize("gain", [1, 2.5])
def test_orthogonal_init_is_orthogonal(shape, gain):
    w = graft.empty(*shape)
    assert graft.nn.init.orthogonal_(w, gain=gain) is w
    flat = w.numpy().reshape(shape[0], -1) / gain
    rows, cols = flat.shape
    assert gram_error(flat, rows < cols) < 1e-5
    assert np.abs(w.numpy()).max() > 0


def test_orthogonal_init_algorithm_and_generator():
    # rows >= cols: Q of the normal draws with R's diagonal made positive; rows < cols: the same, transposed
    for shape in ((5, 3), (3, 5), (2, 3, 2)):
        w = graft.empty(*shape, dtype=graft.float64)
        graft.nn.init.orthogonal_(w, gain=1.5, generator=graft.Generator().manual_seed(4))
        rows = shape[0]
        cols = w.numel() // rows
        draws = graft.empty(rows, cols, dtype=graft.float64).normal_(0, 1, generator=graft.Generator().manual_seed(4))
        a = draws.numpy() if rows >= cols else draws.numpy().T
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        expected = (q if rows >= cols else q.T) * 1.5
        np.testing.assert_allclose(w.numpy().reshape(rows, cols), expected, rtol=1e-12, atol=1e-12)
    graft.manual_seed(3)
    a = graft.nn.init.orthogonal_(graft.empty(4, 4)).clone()
    graft.manual_seed(3)
    b = graft.nn.init.orthogonal_(graft.empty(4, 4))
    assert graft.equal(a, b)
    assert not graft.equal(a, graft.nn.init.orthogonal_(graft.empty(4, 4)))


def test_orthogonal_init_on_parameter_records_no_graph():
    layer = graft.nn.Linear(4, 6)
    weight = layer.weight
    graft.nn.init.orthogonal_(layer.weight)
    assert layer.weight is weight and weight.is_leaf and weight.requires_grad and weight.grad_fn is None
    assert gram_error(weight.detach().numpy(), False) < 1e-5


def test_orthogonal_init_edges_parity(torch):
    for shape in ((0, 3), (3, 0), (2, 0, 4)):
        for lib in (torch, graft):
            t = lib.ones(*shape)
            assert lib.nn.init.orthogonal_(t) is t and tuple(t.shape) == shape
    for lib_shape in ((3,), ()):
        assert error_of(lambda: graft.nn.init.orthogonal_(graft.ones(list(lib_shape)))) == \
            error_of(lambda: torch.nn.init.orthogonal_(torch.ones(list(lib_shape)))) == \
            ("ValueError", "Only tensors with 2 or more dimensions are supported")
    # PyTorch 2.x: NotImplementedError (1.13: RuntimeError) with the same text
    assert error_of(lambda: graft.nn.init.orthogonal_(graft.ones(3, 3, dtype=graft.float16)))[1] == \
        error_of(lambda: torch.nn.init.orthogonal_(torch.ones(3, 3, dtype=torch.float16)))[1]
    # a 3-d tensor whose view as a matrix does not exist
    assert error_of(lambda: graft.nn.init.orthogonal_(graft.empty(2, 3, 4).transpose(1, 2)))[0] == \
        error_of(lambda: torch.nn.init.orthogonal_(torch.empty(2, 3, 4).transpose(1, 2)))[0] == "RuntimeError"


# ---- linalg.matrix_exp ----

# (norm, expected (degree index, squarings) for a single matrix): degrees 1, 2, 4, 8, 12, 18, then squarings
_DOUBLE_PLANS = [(1e-17, (0, 0)), (1e-9, (1, 0)), (1e-5, (2, 0)), (0.01, (3, 0)), (0.04, (3, 0)), (0.2, (4, 0)),
                 (0.8, (5, 0)), (3.0, (5, 2)), (50.0, (5, 6)), (1000.0, (5, 10))]
_FLOAT_PLANS = [(1e-8, (0, 0)), (1e-4, (1, 0)), (0.01, (2, 0)), (0.5, (3, 0)), (1.2, (4, 0)), (2.5, (5, 0)),
                (10.0, (5, 2))]


@pytest.mark.parametrize("norm,plan", _DOUBLE_PLANS)
def test_matrix_exp_degree_choice_and_values_float64(torch, norm, plan):
    a = with_norm(rand(5, 5, seed=1), norm)
    assert _plans(graft.tensor(a)[None]) == [plan]
    got = graft.linalg.matrix_exp(graft.tensor(a)).numpy()
    ref = expm_reference(a)
    np.testing.assert_allclose(got, ref, rtol=1e-13 * max(1, norm), atol=1e-15)
    if plan[0] != 3:  # PyTorch 1.13's degree 8 had a wrong coefficient (fixed in 2.x, followed here)
        np.testing.assert_allclose(got, torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-13 * max(1, norm),
                                   atol=1e-15)


@pytest.mark.parametrize("norm,plan", _FLOAT_PLANS)
def test_matrix_exp_degree_choice_and_values_float32(torch, norm, plan):
    a = with_norm(rand(4, 4, seed=2), norm).astype(np.float32)
    assert _plans(graft.tensor(a)[None]) == [plan]
    got = graft.linalg.matrix_exp(graft.tensor(a))
    assert got.dtype == graft.float32
    ref = expm_reference(a.astype(np.float64))
    np.testing.assert_allclose(got.numpy(), ref, rtol=2e-6 * max(1, norm), atol=1e-6)
    if plan[0] != 3:
        np.testing.assert_allclose(got.numpy(), torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=2e-6 * norm,
                                   atol=1e-6)


def test_matrix_exp_degree_8_is_accurate():
    # PyTorch 1.13 is off by ~2e-10 (float64) and ~3e-5 (float32) here; 2.x and graft are not
    for dtype, x, tol in ((graft.float64, 0.049, 1e-15), (graft.float32, 0.5, 3e-7)):
        a = graft.tensor([[0.0, -x], [x, 0.0]], dtype=dtype)
        assert _plans(a[None]) == [(3, 0)]
        expected = np.array([[math.cos(x), -math.sin(x)], [math.sin(x), math.cos(x)]])
        np.testing.assert_allclose(graft.linalg.matrix_exp(a).double().numpy(), expected, rtol=0, atol=tol)


def test_matrix_exp_batch_takes_degree_18(torch):
    # PyTorch 2.x: a batch of several matrices takes degree 18 (each with its own squarings)
    norms = np.array([1e-9, 0.01, 0.2, 3.0, 50.0, 0.5]).reshape(2, 3)
    a = with_norm(rand(2, 3, 4, 4, seed=3), norms[..., None, None])
    assert _plans(graft.tensor(a).reshape(-1, 4, 4)) == [(5, 0), (5, 0), (5, 0), (5, 2), (5, 6), (5, 0)]
    got = graft.linalg.matrix_exp(graft.tensor(a)).numpy()
    assert got.shape == a.shape
    np.testing.assert_allclose(got, expm_reference_batch(a), rtol=1e-13, atol=1e-15)
    # each matrix as PyTorch computes it alone (1.13's degree 8 aside: the norm 0.01 matrix)
    for index in ((0, 0), (0, 2), (1, 0), (1, 1), (1, 2)):
        single = torch.linalg.matrix_exp(torch.tensor(a[index])).numpy()
        np.testing.assert_allclose(got[index], single, rtol=1e-13, atol=1e-15)
    one = graft.linalg.matrix_exp(graft.tensor(a[:1, :1])).numpy()  # a batch of one: a single matrix
    np.testing.assert_array_equal(one[0, 0], graft.linalg.matrix_exp(graft.tensor(a[0, 0])).numpy())


def test_matrix_exp_float32_batch_parity(torch):
    a = with_norm(rand(3, 2, 5, 5, seed=4), np.array([0.3, 2.0, 7.0])[:, None, None, None]).astype(np.float32)
    got = graft.matrix_exp(graft.tensor(a))
    assert got.dtype == graft.float32
    np.testing.assert_allclose(got.numpy(), torch.matrix_exp(torch.tensor(a)).numpy(), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("norms", [[1e-9], [0.01], [0.2], [0.9], [4.0], [30.0], [0.01, 0.2, 4.0]])
def test_matrix_exp_gradients_parity(torch, norms):
    a = with_norm(rand(len(norms), 4, 4, seed=5), np.array(norms)[:, None, None])
    w = rand(len(norms), 4, 4, seed=6)
    t = torch.tensor(a, requires_grad=True)
    g = graft.tensor(a, requires_grad=True)
    (torch.linalg.matrix_exp(t) * torch.tensor(w)).sum().backward()
    (graft.linalg.matrix_exp(g) * graft.tensor(w)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12 * max(1, max(norms)) ** 2, atol=1e-14)


def test_matrix_exp_float32_gradients_and_double_backward(torch):
    a = with_norm(rand(2, 3, 3, seed=7), np.array([0.4, 3.0])[:, None, None])
    w = rand(2, 3, 3, seed=8)
    t = torch.tensor(a.astype(np.float32), requires_grad=True)
    g = graft.tensor(a.astype(np.float32), requires_grad=True)
    (torch.matrix_exp(t) * torch.tensor(w, dtype=torch.float32)).sum().backward()
    (g.matrix_exp() * graft.tensor(w, dtype=graft.float32)).sum().backward()
    assert g.grad.dtype == graft.float32
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    # second derivatives: d/dA of <grad, v>
    t = torch.tensor(a[0], requires_grad=True)
    g = graft.tensor(a[0], requires_grad=True)
    v = rand(3, 3, seed=9)
    (tg,) = torch.autograd.grad((torch.linalg.matrix_exp(t) * torch.tensor(w[0])).sum(), t, create_graph=True)
    (gg,) = graft.autograd.grad((graft.linalg.matrix_exp(g) * graft.tensor(w[0])).sum(), g, create_graph=True)
    (tg * torch.tensor(v)).sum().backward()
    (gg * graft.tensor(v)).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_matrix_exp_edges_parity(torch):
    for shape in ((0, 3, 3), (2, 0, 0), (0, 0), (3, 1, 1), (1, 1)):
        a = rand(*shape, seed=1)
        g = graft.tensor(a, requires_grad=True)
        got = graft.linalg.matrix_exp(g)
        assert tuple(got.shape) == shape and got.requires_grad
        np.testing.assert_allclose(got.detach().numpy(), torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-15)
    # NaN (and inf) give NaN everywhere, alone or in a batch (PyTorch 2.x)
    for bad in (float("nan"), float("inf")):
        a = graft.tensor([[bad, 0.0], [0.0, 1.0]])
        assert graft.linalg.matrix_exp(a).isnan().all()
        assert graft.linalg.matrix_exp(graft.stack([a, a])).isnan().all()
    # a huge norm: scaled by 2^-s (subnormal, not zero) and squared s = 1024 times, as PyTorch 2.x
    huge = graft.linalg.matrix_exp(graft.tensor([[-1e308, 0.0], [0.0, 1.0]], dtype=graft.float64))
    assert huge.tolist() == [[0.0, 0.0], [0.0, 1.0]]


def test_matrix_exp_reduced_precision_is_accurate():
    # PyTorch 2.x's CPU kernel reads its degree-18 coefficients wrongly for these dtypes; graft's are right
    a = with_norm(rand(3, 3, seed=10), 1.5)
    ref = expm_reference(a)
    for dtype, tol in ((graft.float16, 2e-2), (graft.bfloat16, 1e-1)):
        got = graft.linalg.matrix_exp(graft.tensor(a, dtype=dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got.float().numpy(), ref, rtol=tol, atol=tol)


def test_matrix_exp_aliases_and_exports():
    a = graft.tensor(with_norm(rand(2, 3, 3, seed=11), 1.0))
    expected = graft.linalg.matrix_exp(a)
    assert graft.equal(graft.matrix_exp(a), expected) and graft.equal(a.matrix_exp(), expected)
    assert "matrix_exp" in graft.linalg.__all__ and "householder_product" in graft.linalg.__all__
    for fn in (graft.linalg.matrix_exp, graft.matrix_exp, graft.Tensor.matrix_exp, graft.linalg.householder_product,
               graft.orgqr, graft.Tensor.orgqr):
        assert fn.__doc__


def test_matrix_exp_errors_parity(torch):
    for lib_make in (lambda lib: lib.ones(3), lambda lib: lib.tensor(1.0), lambda lib: lib.ones(2, 3),
                     lambda lib: lib.ones(4, 3, 2)):
        for name in ("linalg", "torch"):
            def call(lib):
                fn = lib.linalg.matrix_exp if name == "linalg" else lib.matrix_exp
                return lambda: fn(lib_make(lib))
            assert error_of(call(graft)) == error_of(call(torch))
    assert error_of(lambda: graft.ones(2, 3).matrix_exp()) == error_of(lambda: torch.ones(2, 3).matrix_exp())
    for name in ("linalg", "torch"):
        fn_g = graft.linalg.matrix_exp if name == "linalg" else graft.matrix_exp
        fn_t = torch.linalg.matrix_exp if name == "linalg" else torch.matrix_exp
        assert error_of(lambda: fn_g([[1.0]])) == error_of(lambda: fn_t([[1.0]]))
    # PyTorch 2.x's type and text (1.13: RuntimeError "matrix_exp: ...")
    for dtype, name in ((graft.int64, "Long"), (graft.bool, "Bool"), (graft.int32, "Int")):
        text = f"linalg.matrix_exp: Expected a floating point or complex tensor as input. Got {name}"
        assert error_of(lambda: graft.linalg.matrix_exp(graft.ones(2, 2, dtype=dtype))) == ("NotImplementedError", text)


# ---- linalg.householder_product ----

def hh_inputs(shape, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.uniform(0.2, 1.9, tuple(shape[:-2]) + (k,))


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((5, 3), 2), ((4, 4), 4), ((4, 4), 1), ((2, 3, 5, 3), 3),
                                     ((6, 1), 1), ((3, 2), 0)])
def test_householder_product_values_and_grads_parity(torch, shape, k):
    a, tau = hh_inputs(shape, k)
    ta, ttau = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    ga, gtau = graft.tensor(a, requires_grad=True), graft.tensor(tau, requires_grad=True)
    t_out = torch.linalg.householder_product(ta, ttau)
    g_out = graft.linalg.householder_product(ga, gtau)
    assert tuple(g_out.shape) == tuple(t_out.shape) and g_out.requires_grad
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12, atol=1e-13)
    w = rand(*shape, seed=1)
    (t_out * torch.tensor(w)).sum().backward()
    (g_out * graft.tensor(w)).sum().backward()
    if k:
        np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(gtau.grad.numpy(), ttau.grad.numpy(), rtol=1e-11, atol=1e-12)
    else:  # nothing depends on them: PyTorch leaves the grads None
        assert ta.grad is None and (ga.grad is None or not ga.grad.numpy().any())


def test_householder_product_float32_and_aliases(torch):
    a, tau = hh_inputs((2, 6, 4), 3, seed=2)
    a, tau = a.astype(np.float32), tau.astype(np.float32)
    expected = torch.linalg.householder_product(torch.tensor(a), torch.tensor(tau)).numpy()
    for got in (graft.linalg.householder_product(graft.tensor(a), graft.tensor(tau)),
                graft.orgqr(graft.tensor(a), graft.tensor(tau)), graft.tensor(a).orgqr(graft.tensor(tau))):
        assert got.dtype == graft.float32
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 4, 3), (3, 1)])
def test_geqrf_matches_lapack_and_gives_q(torch, shape):
    a = rand(*shape, seed=3)
    R, tau = _geqrf(graft.tensor(a))
    t_R, t_tau = torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(R.numpy(), t_R.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tau.numpy(), t_tau.numpy(), rtol=1e-12, atol=1e-13)
    if shape[-2] >= shape[-1]:
        q = graft.linalg.householder_product(R, tau).numpy()
        np.testing.assert_allclose(q, torch.linalg.qr(torch.tensor(a)).Q.numpy(), rtol=1e-12, atol=1e-13)


def test_householder_product_errors_parity(torch):
    f32, f64, i64 = "float32", "float64", "int64"
    cases = [((3,), (3,), f32), ((2, 3), (2,), f32), ((3, 2), (3,), f32), ((3, 2), (2, 2), f32),
             ((2, 3, 2), (3, 2), f32), ((2, 3, 2), (2, 2, 2), f32), ((3, 2), (2,), f64, f32), ((3, 2), (), f32),
             ((3, 2), (2,), i64, f32)]
    for case in cases:
        a_shape, tau_shape, dtype = case[:3]
        tau_dtype = case[3] if len(case) > 3 else dtype

        def call(lib, fname):
            a = lib.ones(list(a_shape), dtype=getattr(lib, dtype))
            tau = lib.ones(list(tau_shape), dtype=getattr(lib, tau_dtype))
            fn = lib.linalg.householder_product if fname == "hp" else lib.orgqr
            return lambda: fn(a, tau)
        for fname in ("hp", "orgqr"):
            assert error_of(call(graft, fname)) == error_of(call(torch, fname)), case
    # PyTorch 2.x raises NotImplementedError where no kernel exists (1.13: RuntimeError, same text)
    for dtype, name in ((graft.int64, "Long"), (graft.float16, "Half"), (graft.bfloat16, "BFloat16")):
        assert error_of(lambda: graft.linalg.householder_product(graft.ones(3, 2, dtype=dtype),
                                                                 graft.ones(2, dtype=dtype))) == (
            "NotImplementedError", f"\"orgqr_cpu\" not implemented for '{name}'")
    a, tau = graft.ones(3, 2), graft.ones(2)
    assert error_of(lambda: graft.linalg.householder_product(a, [1.0])) == \
        error_of(lambda: torch.linalg.householder_product(torch.ones(3, 2), [1.0]))
    assert error_of(lambda: graft.linalg.householder_product([1.0], tau)) == \
        error_of(lambda: torch.linalg.householder_product([1.0], torch.ones(2)))
    assert error_of(lambda: graft.orgqr(a, [1.0])) == error_of(lambda: torch.orgqr(torch.ones(3, 2), [1.0]))
    assert error_of(lambda: a.orgqr([1.0])) == error_of(lambda: torch.ones(3, 2).orgqr([1.0]))
    assert error_of(lambda: graft.ones(2, 3).orgqr(tau)) == error_of(lambda: torch.ones(2, 3).orgqr(torch.ones(2)))


# ---- parametrizations.orthogonal ----

def orth_pair(torch, shape, seed=0, **kwargs):
    """A torch and a graft module holding a float64 parameter ``weight`` of ``shape`` (same values),
    each given the orthogonal parametrization with ``kwargs``."""
    value = rand(*shape, seed=seed)
    modules = []
    for lib in (torch, graft):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(value))
        modules.append(lib.nn.utils.parametrizations.orthogonal(m, **kwargs))
    return modules


def is_orthogonal(W, tol=1e-10):
    W = W.detach().numpy()
    n, k = W.shape[-2:]
    G = W @ np.swapaxes(W, -1, -2) if n < k else np.swapaxes(W, -1, -2) @ W
    return np.abs(G - np.eye(min(n, k))).max() < tol


_MAPS = ["matrix_exp", "cayley", "householder"]
_SHAPES = [(4, 4), (6, 3), (3, 6), (2, 4, 3)]


@pytest.mark.parametrize("orthogonal_map", _MAPS)
@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_parametrization_parity(torch, orthogonal_map, shape, trivialization):
    t, g = orth_pair(torch, shape, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    assert sorted(g.state_dict()) == sorted(t.state_dict())
    assert is_orthogonal(g.weight)
    random_base = trivialization and shape[-1] != shape[-2]  # completed with random columns
    for key, value in t.state_dict().items():  # the same initial originals and (square) bases
        if not (random_base and key.endswith("base")):
            np.testing.assert_allclose(g.state_dict()[key].numpy(), value.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=key)
    if random_base:  # the first columns are the weight's Q, the others random: take torch's
        g.load_state_dict({k: graft.tensor(v.numpy()) for k, v in t.state_dict().items()})
    np.testing.assert_allclose(g.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-9, atol=1e-11)
    # a few steps from the same original, moved off its initial value (off the diagonal, which the
    # Householder map reads as signs)
    noise = rand(*shape, seed=1) * 0.3 * (1 - np.eye(*shape[-2:]))
    with torch.no_grad():
        t.parametrizations.weight.original.add_(torch.tensor(noise))
    with graft.no_grad():
        g.parametrizations.weight.original.add_(graft.tensor(noise))
    t_opt = torch.optim.SGD(t.parameters(), lr=0.05, momentum=0.9)
    g_opt = graft.optim.SGD(g.parameters(), lr=0.05, momentum=0.9)
    target = rand(*shape, seed=2)
    for _ in range(3):
        for opt, m, lib in ((t_opt, t, torch), (g_opt, g, graft)):
            opt.zero_grad()
            ((m.weight - lib.tensor(target)) ** 2).sum().backward()
            opt.step()
    assert is_orthogonal(g.weight)
    np.testing.assert_allclose(g.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g.parametrizations.weight.original.detach().numpy(),
                               t.parametrizations.weight.original.detach().numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_default_map_and_layout(torch, shape):
    t, g = orth_pair(torch, shape)
    t_orth, g_orth = t.parametrizations.weight[0], g.parametrizations.weight[0]
    assert g_orth.orthogonal_map.name == t_orth.orthogonal_map.name
    assert g_orth.orthogonal_map.name == ("matrix_exp" if shape[0] == shape[1] else "householder")
    assert type(g_orth).__name__ == "_Orthogonal" and tuple(g_orth.shape) == shape
    assert tuple(g_orth.base.shape) == tuple(t_orth.base.shape)
    assert isinstance(g.parametrizations.weight.original, graft.nn.Parameter)
    # -I: every map gives the identity, so the weight is the base's first columns
    expected = -np.eye(*shape)
    np.testing.assert_array_equal(g.parametrizations.weight.original.detach().numpy(), expected)
    gparam.remove_parametrizations(g, "weight")
    assert isinstance(g.weight, graft.nn.Parameter) and is_orthogonal(g.weight)


@pytest.mark.parametrize("orthogonal_map", _MAPS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6)])
def test_orthogonal_right_inverse_assignment(torch, orthogonal_map, shape):
    t, g = orth_pair(torch, shape, orthogonal_map=orthogonal_map)
    n, k = max(shape), min(shape)
    q = np.linalg.qr(rand(n, k, seed=5))[0]
    q = q if shape[0] >= shape[1] else q.T
    g.weight = graft.tensor(q)
    np.testing.assert_allclose(g.weight.detach().numpy(), q, rtol=1e-10, atol=1e-12)
    if shape[0] == shape[1]:  # not orthogonal: orthonormalized by QR (R's diagonal positive), as PyTorch does
        m = rand(*shape, seed=6)
        t.weight = torch.tensor(m)
        g.weight = graft.tensor(m)
        np.testing.assert_allclose(g.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g.parametrizations.weight[0].base.numpy(), t.parametrizations.weight[0].base.numpy(),
                                   rtol=1e-10, atol=1e-12)
        assert is_orthogonal(g.weight)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2)])
def test_orthogonal_householder_right_inverse_without_trivialization(torch, shape):
    t, g = orth_pair(torch, shape, orthogonal_map="householder", use_trivialization=False)
    assert "parametrizations.weight.0.base" not in g.state_dict() and not hasattr(g.parametrizations.weight[0], "base")
    # the initial original: the reflectors of the weight (geqrf) with R's signs on the diagonal
    np.testing.assert_allclose(g.parametrizations.weight.original.detach().numpy(),
                               t.parametrizations.weight.original.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert is_orthogonal(g.weight)
    q = t.weight.detach().numpy() * -1.0  # another orthogonal value, assigned back exactly
    g.weight = graft.tensor(q)
    np.testing.assert_allclose(g.weight.detach().numpy(), q, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_without_trivialization_keeps_original(torch, orthogonal_map):
    t, g = orth_pair(torch, (4, 4), orthogonal_map=orthogonal_map, use_trivialization=False)
    np.testing.assert_array_equal(g.parametrizations.weight.original.detach().numpy(), rand(4, 4))
    np.testing.assert_allclose(g.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert is_orthogonal(g.weight)

    def assign(lib, m):
        def run():
            m.weight = lib.eye(4, dtype=lib.float64)
        return run
    assert error_of(assign(graft, g)) == error_of(assign(torch, t)) == (
        "NotImplementedError", "It is not possible to assign to the matrix exponential or the Cayley "
        "parametrizations when use_trivialization=False.")


def test_orthogonal_on_linear_layer_trains(torch):
    layer = graft.nn.Linear(5, 8)
    gparams.orthogonal(layer)
    assert layer.parametrizations.weight[0].orthogonal_map.name == "householder"
    opt = graft.optim.Adam(layer.parameters(), lr=0.05)
    x, y = graft.randn(16, 5), graft.randn(16, 8)
    for _ in range(5):
        opt.zero_grad()
        ((layer(x) - y) ** 2).mean().backward()
        opt.step()
    assert layer.parametrizations.weight.original.grad is not None
    assert gram_error(layer.weight.detach().numpy(), False) < 1e-5


def test_orthogonal_errors_parity(torch):
    def cases(lib):
        orth = lib.nn.utils.parametrizations.orthogonal
        return [lambda: orth(lib.nn.Linear(3, 3), "foo"),
                lambda: orth(lib.nn.BatchNorm1d(3)),
                lambda: orth(lib.nn.Linear(3, 3), orthogonal_map="qr"),
                lambda: orth(lib.nn.Linear(3, 3), orthogonal_map="_OrthMaps"),
                lambda: orth(lib.nn.Linear(3, 3), name="bias")]
    for t_case, g_case in zip(cases(torch), cases(graft)):
        assert error_of(g_case) == error_of(t_case)

    def wrong_shape(lib):
        m = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3))
        return lambda: setattr(m, "weight", lib.eye(2))
    assert error_of(wrong_shape(graft)) == error_of(wrong_shape(torch)) == (
        "ValueError", "Expected a matrix or batch of matrices of shape torch.Size([3, 3]). "
        "Got a tensor of shape torch.Size([2, 2]).")


def test_orthogonal_exports():
    assert "orthogonal" in gparams.__all__ and gparams.orthogonal.__doc__
    assert graft.nn.utils.parametrizations.orthogonal is gparams.orthogonal
    assert graft.nn.init.orthogonal_.__doc__
