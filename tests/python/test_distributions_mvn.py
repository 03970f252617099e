"""graft.distributions' MultivariateNormal and LowRankMultivariateNormal against torch.distributions
(1.13): densities, entropies, moments and the covariance / precision / Cholesky matrices of the
three parametrizations, batch broadcasting, expand, the KL divergences among them, gradients of
log_prob and of rsample (the same standard normal draws fed to both libraries), the matrix
constraints, validation errors (texts compared, ``graft.`` read as ``torch.``); float64 to 1e-10,
float32 to ~1e-5; samplers by shapes, dtypes and the moments of large seeded samples."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
from distributions_utils import LIBS, assert_same_errors, both, close, message, numpy, t  # noqa: E402
from graft.distributions import _batch_linalg, constraints  # noqa: E402

DTYPES = ["float64", "float32"]
# (rtol, atol) per dtype
TOL = {"float64": (1e-10, 1e-10), "float32": (2e-5, 2e-5)}
KINDS = ["covariance_matrix", "precision_matrix", "scale_tril"]


def spd(rng, *shape, n=3):
    """Symmetric positive definite n x n matrices of the given batch shape (well conditioned)."""
    a = rng.normal(size=shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def param_for(kind, cov):
    """The matrix of parametrization ``kind`` for covariance ``cov`` (NumPy)."""
    if kind == "covariance_matrix":
        return cov
    if kind == "precision_matrix":
        return np.linalg.inv(cov)
    return np.linalg.cholesky(cov)


def mvn(lib, loc, kind, matrix, dtype="float64", **kwargs):
    """MultivariateNormal of ``lib`` from NumPy loc and matrix of parametrization ``kind``."""
    return lib.distributions.MultivariateNormal(t(lib, loc, dtype), **{kind: t(lib, matrix, dtype)}, **kwargs)


def lowrank(lib, loc, factor, diag, dtype="float64", **kwargs):
    """LowRankMultivariateNormal of ``lib`` from NumPy parameters."""
    return lib.distributions.LowRankMultivariateNormal(t(lib, loc, dtype), t(lib, factor, dtype), t(lib, diag, dtype),
                                                       **kwargs)


def compare_all(got, want, dtype="float64"):
    """Asserts that the tensors ``got`` (graft) and ``want`` (torch) pairwise have one dtype and shape and
    agree to the dtype's tolerance."""
    rtol, atol = TOL[dtype]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).replace("graft.", "torch.") == str(w.dtype)
        close(g, w, rtol=rtol, atol=atol)


# -- MultivariateNormal: values ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_mvn_values_of_each_parametrization(kind, dtype):
    rng = np.random.default_rng(0)
    cov = spd(rng, 2)
    loc = rng.normal(size=(2, 3))
    x = rng.normal(size=(4, 2, 3)) * 2

    def build(lib):
        d = mvn(lib, loc, kind, param_for(kind, cov), dtype)
        return [d.log_prob(t(lib, x, dtype)), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.scale_tril,
                d.covariance_matrix, d.precision_matrix, d.perplexity()]

    g, w = both(build)
    compare_all(g, w, dtype)
    # and against the closed form (NumPy, float64)
    diff = x - loc
    quad = np.einsum("...i,...ij,...j->...", diff, np.linalg.inv(cov), diff)
    want = -0.5 * (3 * math.log(2 * math.pi) + np.linalg.slogdet(cov)[1] + quad)
    close(g[0], want.astype(dtype), rtol=TOL[dtype][0] * 10, atol=TOL[dtype][1] * 10)
    close(g[7], cov.astype(dtype), rtol=TOL[dtype][0] * 10, atol=TOL[dtype][1] * 10)


def test_mvn_shapes_lazy_matrices_and_repr():
    rng = np.random.default_rng(1)
    cov = spd(rng)
    for lib in LIBS:
        d = mvn(lib, np.zeros(3), "covariance_matrix", cov)
        assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (3,)
        assert "scale_tril" not in d.__dict__ and "precision_matrix" not in d.__dict__
        assert repr(d).replace("graft.", "torch.") == ("MultivariateNormal(loc: torch.Size([3]), "
                                                       "covariance_matrix: torch.Size([3, 3]))")
        d.scale_tril
        assert "scale_tril" in d.__dict__
        assert d.has_rsample and not d.has_enumerate_support
        assert type(d).support is lib.distributions.constraints.real_vector
        assert isinstance(type(d).scale_tril, property)
    assert ({k: repr(v) for k, v in graft.distributions.MultivariateNormal.arg_constraints.items()}
            == {k: repr(v) for k, v in torch.distributions.MultivariateNormal.arg_constraints.items()})


@pytest.mark.parametrize("kind", KINDS)
def test_mvn_batch_broadcasting(kind):
    rng = np.random.default_rng(2)
    cov = spd(rng, 4, 1)            # matrices: batch (4, 1)
    loc = rng.normal(size=(3, 2))   # loc: batch (3,) -> batch (4, 3)
    x = rng.normal(size=(5, 1, 3, 2))

    def build(lib):
        d = mvn(lib, loc, kind, param_for(kind, cov[..., :2, :2]))
        assert tuple(d.batch_shape) == (4, 3) and tuple(d.event_shape) == (2,)
        assert tuple(d._unbroadcasted_scale_tril.shape) == (4, 1, 2, 2)
        return [d.log_prob(t(lib, x)), d.log_prob(t(lib, x[0, 0, 0])), d.entropy(), d.variance, d.loc,
                getattr(d, kind), d.covariance_matrix, d.precision_matrix, d.scale_tril]

    g, w = both(build)
    assert tuple(g[0].shape) == (5, 4, 3)
    compare_all(g, w)


# (L's batch shape, x's): L's broadcasts to x's
@pytest.mark.parametrize("shapes", [((), ()), ((), (3,)), ((3,), (3,)), ((3,), (6, 1, 3)), ((2, 1), (2, 5)),
                                    ((2, 1), (6, 2, 5)), ((1, 3), (4, 2, 3)), ((4, 1, 3), (2, 4, 5, 3))])
def test_batch_mahalanobis_matches_torch(shapes):
    L_batch, x_batch = shapes
    rng = np.random.default_rng(3)
    L = np.linalg.cholesky(spd(rng, *L_batch, n=4))
    x = rng.normal(size=x_batch + (4,))
    g = _batch_linalg._batch_mahalanobis(t(graft, L), t(graft, x))
    w = torch.distributions.multivariate_normal._batch_mahalanobis(t(torch, L), t(torch, x))
    close(g, w, rtol=1e-12)
    close(g, np.einsum("...i,...ij,...j->...", x, np.linalg.inv(L @ np.swapaxes(L, -1, -2)), x), rtol=1e-10)
    xx = rng.normal(size=(5, 4, 3))
    close(_batch_linalg._batch_trace_XXT(t(graft, xx)), (xx ** 2).sum((-2, -1)), rtol=1e-12)
    close(_batch_linalg._batch_mv(t(graft, L), t(graft, x)), np.einsum("...ij,...j->...i", L, x), rtol=1e-12)


def test_precision_to_scale_tril_matches_torch():
    rng = np.random.default_rng(4)
    P = spd(rng, 2, 3, n=5)
    g = graft.distributions.multivariate_normal._precision_to_scale_tril(t(graft, P))
    w = torch.distributions.multivariate_normal._precision_to_scale_tril(t(torch, P))
    close(g, w, rtol=1e-10, atol=1e-12)
    L = numpy(g)
    close(L @ np.swapaxes(L, -1, -2), np.linalg.inv(P), rtol=1e-10, atol=1e-12)
    assert (np.triu(L, 1) == 0).all()


@pytest.mark.parametrize("kind", KINDS)
def test_mvn_expand(kind):
    rng = np.random.default_rng(5)
    cov = spd(rng, 3)
    loc = rng.normal(size=(3, 3))

    def build(lib):
        d = mvn(lib, loc, kind, param_for(kind, cov))
        d.variance  # not lazy: nothing stored
        e = d.expand((2, 3))
        assert type(e) is lib.distributions.MultivariateNormal
        assert tuple(e.batch_shape) == (2, 3) and tuple(e.event_shape) == (3,)
        assert e._unbroadcasted_scale_tril is d._unbroadcasted_scale_tril
        assert set(k for k in KINDS if k in e.__dict__) == {kind}
        assert e._validate_args == d._validate_args
        f = mvn(lib, loc, kind, param_for(kind, cov), validate_args=False).expand(lib.Size([4, 3]))
        assert f._validate_args is False
        return [e.log_prob(t(lib, rng.normal(size=(2, 3, 3)))), e.entropy(), e.loc, getattr(e, kind),
                e.scale_tril, e.covariance_matrix, e.precision_matrix, e.mean, e.variance,
                f.loc, f.entropy()]

    rng = np.random.default_rng(6)
    g = build(graft)
    rng = np.random.default_rng(6)
    w = build(torch)
    compare_all(g, w)

    class Custom(graft.distributions.MultivariateNormal):
        def __init__(self):
            super().__init__(graft.zeros(2), scale_tril=graft.eye(2))

    with pytest.raises(NotImplementedError, match="Subclass Custom of MultivariateNormal that defines a custom"):
        Custom().expand((2,))


# -- MultivariateNormal: gradients -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_mvn_log_prob_gradients(kind, dtype):
    rng = np.random.default_rng(7)
    cov = spd(rng, 2)
    loc = rng.normal(size=(2, 3))
    x = rng.normal(size=(4, 2, 3))
    matrix = param_for(kind, cov)

    def build(lib):
        mu = t(lib, loc, dtype).requires_grad_()
        m = t(lib, matrix, dtype).requires_grad_()
        value = t(lib, x, dtype).requires_grad_()
        d = lib.distributions.MultivariateNormal(mu, **{kind: m})
        (d.log_prob(value).sum() + d.entropy().sum()).backward()
        return [mu.grad, m.grad, value.grad]

    g, w = both(build)
    if kind != "scale_tril":  # only the lower triangle of a symmetric matrix is read: compare symmetrised
        g[1], w[1] = [(a + a.transpose(-2, -1)) / 2 for a in (g[1], w[1])]
    compare_all(g, w, dtype)


@pytest.mark.parametrize("kind", KINDS)
def test_mvn_matrix_property_gradients(kind):
    rng = np.random.default_rng(70)
    cov = spd(rng, 2)
    weights = [rng.normal(size=(2, 3, 3)) for _ in range(3)] + [rng.normal(size=(2, 3))]

    def build(lib):
        m = t(lib, param_for(kind, cov)).requires_grad_()
        d = lib.distributions.MultivariateNormal(t(lib, np.zeros(3)), **{kind: m})
        outs = [d.scale_tril, d.covariance_matrix, d.precision_matrix, d.variance]
        sum((o * t(lib, w)).sum() for o, w in zip(outs, weights)).backward()
        return m.grad

    g, w = both(build)
    if kind == "scale_tril":
        # graft's cholesky_inverse backward leaves the factor's (unread) upper triangle a zero gradient; PyTorch's
        # gives it one: the lower triangles agree
        g, w = g.tril(), w.tril()
    else:
        g, w = [(a + a.transpose(-2, -1)) / 2 for a in (g, w)]
    compare_all([g], [w])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_mvn_rsample_is_loc_plus_scale_tril_eps_and_differentiable(kind, dtype):
    rng = np.random.default_rng(8)
    cov = spd(rng, 2)
    loc = rng.normal(size=(2, 3))
    matrix = param_for(kind, cov)
    mu = t(graft, loc, dtype).requires_grad_()
    m = t(graft, matrix, dtype).requires_grad_()
    d = graft.distributions.MultivariateNormal(mu, **{kind: m})
    graft.manual_seed(11)
    eps = graft.randn((5, 2, 3), dtype=getattr(graft, dtype))
    graft.manual_seed(11)
    x = d.rsample((5,))
    assert tuple(x.shape) == (5, 2, 3) and x.dtype == getattr(graft, dtype) and x.requires_grad
    weights = rng.normal(size=(5, 2, 3))
    (x * t(graft, weights, dtype)).sum().backward()

    # torch, with the same eps: loc + L eps, L from the same parametrization
    tmu = t(torch, loc, dtype).requires_grad_()
    tm = t(torch, matrix, dtype).requires_grad_()
    td = torch.distributions.MultivariateNormal(tmu, **{kind: tm})
    tx = tmu + (td._unbroadcasted_scale_tril @ torch.tensor(eps.numpy()).unsqueeze(-1)).squeeze(-1)
    (tx * t(torch, weights, dtype)).sum().backward()
    rtol, atol = TOL[dtype]
    close(x, tx, rtol=rtol, atol=atol)
    close(mu.grad, tmu.grad, rtol=rtol, atol=atol)
    gm, wm = m.grad, tm.grad
    if kind != "scale_tril":
        gm, wm = [(a + a.transpose(-2, -1)) / 2 for a in (gm, wm)]
    close(gm, wm, rtol=rtol * 10, atol=atol * 10)
    # sample: the same draws, no graph
    graft.manual_seed(11)
    s = d.sample((5,))
    assert not s.requires_grad
    close(s, x, rtol=0, atol=0)


def test_mvn_sample_moments():
    rng = np.random.default_rng(9)
    cov = spd(rng)
    loc = np.array([1.0, -2.0, 0.5])
    graft.manual_seed(12)
    for kind in KINDS:
        d = mvn(graft, loc, kind, param_for(kind, cov))
        s = d.sample((40000,)).numpy()
        assert s.shape == (40000, 3)
        np.testing.assert_allclose(s.mean(0), loc, atol=0.06)
        np.testing.assert_allclose(np.cov(s.T), cov, atol=0.15 * cov.max())
    d32 = mvn(graft, loc, "scale_tril", np.linalg.cholesky(cov), "float32").expand((2,))
    assert d32.sample((3,)).dtype == graft.float32 and tuple(d32.rsample((3,)).shape) == (3, 2, 3)


# -- LowRankMultivariateNormal ---------------------------------------------------------------------

def lowrank_params(rng, batch=(), n=4, m=2):
    """(loc, cov_factor, cov_diag) of a LowRankMultivariateNormal (NumPy), of the given batch shape."""
    return rng.normal(size=batch + (n,)), rng.normal(size=batch + (n, m)), rng.uniform(0.5, 2.0, size=batch + (n,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lowrank_values(dtype):
    rng = np.random.default_rng(10)
    loc, factor, diag = lowrank_params(rng, (2,))
    x = rng.normal(size=(3, 2, 4)) * 2

    def build(lib):
        d = lowrank(lib, loc, factor, diag, dtype)
        return [d.log_prob(t(lib, x, dtype)), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.scale_tril,
                d.covariance_matrix, d.precision_matrix, d._capacitance_tril]

    g, w = both(build)
    compare_all(g, w, dtype)
    cov = factor @ np.swapaxes(factor, -1, -2) + np.einsum("...i,ij->...ij", diag, np.eye(4))
    rtol, atol = (r * 10 for r in TOL[dtype])
    close(g[7], cov.astype(dtype), rtol=rtol, atol=atol)
    close(g[8], np.linalg.inv(cov).astype(dtype), rtol=rtol, atol=atol)
    close(g[6], np.linalg.cholesky(cov).astype(dtype), rtol=rtol, atol=atol)
    # the same density as the full-covariance MultivariateNormal
    full = mvn(graft, loc, "covariance_matrix", cov, dtype)
    close(g[0], full.log_prob(t(graft, x, dtype)), rtol=rtol, atol=atol)
    close(g[1], full.entropy(), rtol=rtol, atol=atol)


def test_lowrank_batch_broadcasting_expand_and_repr():
    rng = np.random.default_rng(11)
    loc = rng.normal(size=(3, 1, 4))
    factor = rng.normal(size=(2, 4, 3))
    diag = rng.uniform(0.5, 2.0, size=(4,))
    x = rng.normal(size=(5, 3, 2, 4))

    def build(lib):
        d = lowrank(lib, loc, factor, diag)
        assert tuple(d.batch_shape) == (3, 2) and tuple(d.event_shape) == (4,)
        assert tuple(d.cov_factor.shape) == (3, 2, 4, 3) and tuple(d._unbroadcasted_cov_factor.shape) == (2, 4, 3)
        assert tuple(d._capacitance_tril.shape) == (2, 3, 3)
        e = d.expand((6, 3, 2))
        assert type(e) is lib.distributions.LowRankMultivariateNormal and tuple(e.batch_shape) == (6, 3, 2)
        assert e._capacitance_tril is d._capacitance_tril
        assert repr(d).replace("graft.", "torch.") == ("LowRankMultivariateNormal(loc: torch.Size([3, 2, 4]), "
                                                       "cov_factor: torch.Size([3, 2, 4, 3]), "
                                                       "cov_diag: torch.Size([3, 2, 4]))")
        return [d.log_prob(t(lib, x)), d.entropy(), d.loc, d.cov_diag, d.cov_factor, d.variance, d.covariance_matrix,
                d.precision_matrix, d.scale_tril, e.log_prob(t(lib, x[0])), e.entropy(), e.cov_factor, e.variance]

    g, w = both(build)
    compare_all(g, w)
    assert ({k: repr(v) for k, v in graft.distributions.LowRankMultivariateNormal.arg_constraints.items()}
            == {k: repr(v) for k, v in torch.distributions.LowRankMultivariateNormal.arg_constraints.items()})


@pytest.mark.parametrize("dtype", DTYPES)
def test_lowrank_log_prob_gradients(dtype):
    rng = np.random.default_rng(12)
    loc, factor, diag = lowrank_params(rng, (2,))
    x = rng.normal(size=(3, 2, 4))

    def build(lib):
        params = [t(lib, p, dtype).requires_grad_() for p in (loc, factor, diag)]
        d = lib.distributions.LowRankMultivariateNormal(*params)
        (d.log_prob(t(lib, x, dtype)).sum() + 0.5 * d.entropy().sum()
         + d.precision_matrix.sum() + d.scale_tril.sum()).backward()
        return [p.grad for p in params]

    g, w = both(build)
    compare_all(g, w, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lowrank_rsample_formula_and_gradients(dtype):
    rng = np.random.default_rng(13)
    loc, factor, diag = lowrank_params(rng, (2,))
    params = [t(graft, p, dtype).requires_grad_() for p in (loc, factor, diag)]
    d = graft.distributions.LowRankMultivariateNormal(*params)
    graft.manual_seed(21)
    eps_W = graft.randn((5, 2, 2), dtype=getattr(graft, dtype))
    eps_D = graft.randn((5, 2, 4), dtype=getattr(graft, dtype))
    graft.manual_seed(21)
    x = d.rsample((5,))
    weights = rng.normal(size=(5, 2, 4))
    (x * t(graft, weights, dtype)).sum().backward()

    tparams = [t(torch, p, dtype).requires_grad_() for p in (loc, factor, diag)]
    tx = (tparams[0] + (tparams[1] @ torch.tensor(eps_W.numpy()).unsqueeze(-1)).squeeze(-1)
          + tparams[2].sqrt() * torch.tensor(eps_D.numpy()))
    (tx * t(torch, weights, dtype)).sum().backward()
    rtol, atol = TOL[dtype]
    close(x, tx, rtol=rtol, atol=atol)
    for p, tp in zip(params, tparams):
        close(p.grad, tp.grad, rtol=rtol, atol=atol)


def test_lowrank_sample_moments():
    rng = np.random.default_rng(14)
    loc, factor, diag = lowrank_params(rng, n=3)
    graft.manual_seed(13)
    s = lowrank(graft, loc, factor, diag).sample((40000,)).numpy()
    cov = factor @ factor.T + np.diag(diag)
    np.testing.assert_allclose(s.mean(0), loc, atol=0.06)
    np.testing.assert_allclose(np.cov(s.T), cov, atol=0.15 * cov.max())


# -- KL divergences ----------------------------------------------------------------------------------

def kl_pair(lib, pair, rng, dtype):
    """The (p, q) of the named pair: batch (2, 3) from p's batch (3,) and q's (2, 1), n = 3."""
    dists = []
    for which, batch in zip(pair, [(3,), (2, 1)]):
        if which == "mvn":
            dists.append(mvn(lib, rng.normal(size=batch + (3,)), "scale_tril",
                             np.linalg.cholesky(spd(rng, *batch)), dtype))
        else:
            dists.append(lowrank(lib, *lowrank_params(rng, batch, n=3, m=2), dtype))
    return dists


PAIRS = [("mvn", "mvn"), ("lowrank", "lowrank"), ("mvn", "lowrank"), ("lowrank", "mvn")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pair", PAIRS)
def test_kl_divergences(pair, dtype):
    g = graft.distributions.kl_divergence(*kl_pair(graft, pair, np.random.default_rng(15), dtype))
    w = torch.distributions.kl_divergence(*kl_pair(torch, pair, np.random.default_rng(15), dtype))
    assert tuple(g.shape) == (2, 3)
    compare_all([g], [w], dtype)
    # against the closed form over the full covariances (float64)
    p, q = kl_pair(graft, pair, np.random.default_rng(15), "float64")
    pc, qc = p.covariance_matrix.numpy(), q.covariance_matrix.numpy()
    diff = (q.loc - p.loc).numpy()
    qinv = np.linalg.inv(qc)
    want = 0.5 * (np.trace(qinv @ pc, axis1=-2, axis2=-1) + np.einsum("...i,...ij,...j->...", diff, qinv, diff) - 3
                  + np.linalg.slogdet(qc)[1] - np.linalg.slogdet(pc)[1])
    close(g, want.astype(dtype), rtol=TOL[dtype][0] * 100, atol=TOL[dtype][1] * 100)
    # KL(p || p) = 0
    close(graft.distributions.kl_divergence(p, p), np.zeros(p.batch_shape), atol=1e-12)


@pytest.mark.parametrize("pair", PAIRS)
def test_kl_gradients(pair):
    def build(lib):
        p, q = kl_pair(lib, pair, np.random.default_rng(16), "float64")
        leaves, dists = [], []
        for d in (p, q):
            loc = d.loc.detach().requires_grad_()
            if isinstance(d, lib.distributions.MultivariateNormal):
                tril = d._unbroadcasted_scale_tril.detach().requires_grad_()
                leaves += [loc, tril]
                dists.append(lib.distributions.MultivariateNormal(loc, scale_tril=tril))
            else:
                factor = d._unbroadcasted_cov_factor.detach().requires_grad_()
                diag = d._unbroadcasted_cov_diag.detach().requires_grad_()
                leaves += [loc, factor, diag]
                dists.append(lib.distributions.LowRankMultivariateNormal(loc, factor, diag))
        lib.distributions.kl_divergence(*dists).sum().backward()
        return [leaf.grad for leaf in leaves]

    g, w = both(build)
    compare_all(g, w)


@pytest.mark.parametrize("pair", PAIRS)
def test_kl_event_shape_errors_match_torch(pair):
    def call(lib):
        p, _ = kl_pair(lib, pair, np.random.default_rng(17), "float64")
        q = (mvn(lib, np.zeros(2), "covariance_matrix", np.eye(2)) if pair[1] == "mvn"
             else lowrank(lib, np.zeros(2), np.ones((2, 1)), np.ones(2)))
        lib.distributions.kl_divergence(p, q)

    assert_same_errors(call)


# -- validation --------------------------------------------------------------------------------------

NOT_PD = [[1.0, 2.0], [2.0, 1.0]]
NOT_SYMMETRIC = [[2.0, 0.5], [0.0, 2.0]]
INVALID_MVN = [
    lambda lib: lib.distributions.MultivariateNormal(t(lib, 0.0), lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), t(lib, np.eye(2)),
                                                     scale_tril=t(lib, np.eye(2))),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), precision_matrix=t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), scale_tril=t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), t(lib, NOT_PD)),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), t(lib, NOT_SYMMETRIC)),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), precision_matrix=t(lib, NOT_PD)),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), t(lib, [np.eye(2), NOT_PD, np.eye(2)])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), scale_tril=t(lib, [[1.0, 0.5], [0.0, 1.0]])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, 0.0]), scale_tril=t(lib, [[1.0, 0.0], [0.5, -1.0]])),
    lambda lib: lib.distributions.MultivariateNormal(t(lib, [0.0, float("nan")]), scale_tril=t(lib, np.eye(2))),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, 0.0), t(lib, [[1.0]]), t(lib, [1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, [0.0, 0.0]), t(lib, [1.0, 1.0]), t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, [0.0, 0.0]), t(lib, np.ones((3, 1))),
                                                            t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, [0.0, 0.0]), t(lib, np.ones((2, 1))),
                                                            t(lib, [1.0, 1.0, 1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, np.zeros((3, 2))), t(lib, np.ones((4, 2, 1))),
                                                            t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, [0.0, 0.0]), t(lib, np.ones((2, 1))),
                                                            t(lib, [1.0, -1.0])),
    lambda lib: lib.distributions.LowRankMultivariateNormal(t(lib, [0.0, 0.0]), t(lib, [[1.0], [float("nan")]]),
                                                            t(lib, [1.0, 1.0])),
]


@pytest.mark.parametrize("case", range(len(INVALID_MVN)))
def test_argument_validation_errors_match_torch(case):
    assert_same_errors(INVALID_MVN[case])


def test_incompatible_batch_shapes_message():
    # torch 1.13's broadcast_shapes says "Shape mismatch: ..."; graft has PyTorch 2.x's text
    with pytest.raises(RuntimeError) as info:
        graft.distributions.MultivariateNormal(graft.zeros(2, 3), scale_tril=graft.eye(3).expand(4, 3, 3))
    assert message(info) == ("Attempting to broadcast a dimension of length 2 at -1! Mismatching argument at index 1 "
                             "had torch.Size([2]); but expected shape should be broadcastable to [4]")
    for lib in LIBS:
        with pytest.raises(RuntimeError):
            lib.distributions.MultivariateNormal(lib.zeros(2, 3), scale_tril=lib.eye(3).expand(4, 3, 3))


INVALID_VALUES = [
    (lambda lib: mvn(lib, np.zeros(2), "scale_tril", np.eye(2)), lambda lib: t(lib, [0.0, 0.0, 0.0])),
    (lambda lib: mvn(lib, np.zeros(2), "scale_tril", np.eye(2)), lambda lib: [0.0, 0.0]),
    (lambda lib: mvn(lib, np.zeros(2), "scale_tril", np.eye(2)), lambda lib: t(lib, [0.0, float("nan")])),
    (lambda lib: mvn(lib, np.zeros((3, 2)), "scale_tril", np.eye(2)), lambda lib: t(lib, np.zeros((2, 2)))),
    (lambda lib: lowrank(lib, np.zeros(2), np.ones((2, 1)), np.ones(2)), lambda lib: t(lib, [[0.0], [1.0]])),
    (lambda lib: lowrank(lib, np.zeros(2), np.ones((2, 1)), np.ones(2)), lambda lib: t(lib, [float("nan"), 1.0])),
]


@pytest.mark.parametrize("case", range(len(INVALID_VALUES)))
def test_sample_validation_errors_match_torch(case):
    make, value = INVALID_VALUES[case]
    assert_same_errors(lambda lib: make(lib).log_prob(value(lib)))


def test_validation_off_and_cholesky_errors():
    # not validated: the Cholesky factorization itself refuses
    for lib in LIBS:
        with pytest.raises(lib.linalg.LinAlgError) as info:
            mvn(lib, np.zeros(2), "covariance_matrix", NOT_PD, validate_args=False)
        assert message(info) == ("linalg.cholesky: The factorization could not be completed because the input is not "
                                 "positive-definite (the leading minor of order 2 is not positive-definite).")
    # a lower-Cholesky check failure not validated: log of a negative diagonal
    g, w = both(lambda lib: mvn(lib, np.zeros(2), "scale_tril", [[1.0, 0.0], [0.0, -1.0]],
                                validate_args=False).entropy())
    assert math.isnan(g.item()) and math.isnan(w.item())
    g, w = both(lambda lib: mvn(lib, np.zeros(2), "scale_tril", np.eye(2), validate_args=False).log_prob(
        t(lib, [float("nan"), 0.0])))
    assert math.isnan(g.item()) and math.isnan(w.item())


def test_warnings_are_not_raised_by_ordinary_use():
    rng = np.random.default_rng(18)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = mvn(graft, np.zeros(3), "covariance_matrix", spd(rng))
        d.log_prob(d.sample((4,)))
        graft.distributions.kl_divergence(d, d)
        e = lowrank(graft, *lowrank_params(rng, n=3))
        e.log_prob(e.sample((4,)))
        graft.distributions.kl_divergence(e, d)


# -- matrix constraints ------------------------------------------------------------------------------

MATRIX_CONSTRAINTS = ["lower_triangular", "lower_cholesky", "corr_cholesky", "square", "symmetric",
                      "positive_semidefinite", "positive_definite"]


def _matrices():
    corr = np.linalg.cholesky(np.array([[1.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.0]]))
    return np.stack([np.eye(3), spd(np.random.default_rng(19)), np.diag([1.0, 0.0, 2.0]), np.tril(np.ones((3, 3))),
                     -np.eye(3), corr,
                     np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.triu(np.ones((3, 3))),
                     np.full((3, 3), np.nan), np.diag([1.0, 1e-7, 1.0]) + np.diag([1e-7, 0.0], -1)])


@pytest.mark.parametrize("name", MATRIX_CONSTRAINTS)
def test_matrix_constraints_match_torch(name):
    results = []
    for lib in LIBS:
        c = getattr(lib.distributions.constraints, name)
        values = t(lib, _matrices())
        results.append((repr(c), c.is_discrete, c.event_dim, c.check(values).numpy(),
                        c.check(values.reshape(2, 5, 3, 3)).numpy(), c.check(values[1]).numpy(),
                        c.check(t(lib, _matrices()[:2], "float32")).numpy()))
    g, w = results
    assert g[:3] == w[:3]
    for a, b in zip(g[3:], w[3:]):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    # the batch mixes matrices inside and outside each constraint (all are square)
    assert g[3].all() if name == "square" else (g[3].any() and not g[3].all())


def test_square_and_symmetric_of_non_square():
    for lib in LIBS:
        x = lib.ones(2, 2, 3)
        assert not lib.distributions.constraints.square.check(x).any()
        assert not lib.distributions.constraints.symmetric.check(x).any()
        assert tuple(lib.distributions.constraints.positive_definite.check(x).shape) == (2,)
    assert constraints.positive_definite.check(graft.ones(2, 3)).shape == graft.Size([])


@pytest.mark.parametrize("name", ["positive_semidefinite", "positive_definite"])
def test_definiteness_of_symmetric_batches_match_torch(name):
    # (on a batch with a non-symmetric matrix both return the symmetry check alone, as PyTorch's)
    symmetric = np.stack([np.eye(3), spd(np.random.default_rng(20)), np.diag([1.0, 0.0, 2.0]), -np.eye(3),
                          np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.diag([1.0, 1e-12, 3.0])])
    g, w = (getattr(lib.distributions.constraints, name).check(t(lib, symmetric)).numpy() for lib in LIBS)
    np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(g, [True, True, name == "positive_semidefinite", False, False, True])
    assert constraints.positive_definite.check(t(graft, symmetric[:2])).all()


# -- Wishart -------------------------------------------------------------------------------------------

def wishart(lib, df, kind, matrix, dtype="float64", **kwargs):
    """Wishart of ``lib`` from a number or NumPy df and a NumPy matrix of parametrization ``kind``."""
    df = df if isinstance(df, float) else t(lib, df, dtype)
    return lib.distributions.Wishart(df, **{kind: t(lib, matrix, dtype)}, **kwargs)


def pd_values(rng, *shape, n=3):
    """Positive definite n x n matrices of the given batch shape: values for a Wishart's log_prob."""
    a = rng.normal(size=shape + (n, 2 * n))
    return a @ np.swapaxes(a, -1, -2) / n


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_wishart_values(kind, dtype):
    rng = np.random.default_rng(30)
    cov = spd(rng, 2) / 3
    df = np.array([3.5, 6.0])
    x = pd_values(rng, 4, 2)

    def build(lib):
        d = wishart(lib, df, kind, param_for(kind, cov), dtype)
        assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3, 3)
        return [d.log_prob(t(lib, x, dtype)), d.entropy(), d.mean, d.mode, d.variance, d.scale_tril,
                d.covariance_matrix, d.precision_matrix, d.df]

    g, w = both(build)
    assert np.isnan(numpy(g[3])[0]).all() and not np.isnan(numpy(g[3])[1]).any()  # df <= n + 1: no mode
    rtol, atol = TOL[dtype]
    compare_all(g, w, dtype) if dtype == "float64" else [close(a, b, rtol=rtol * 10, atol=atol * 10)
                                                        for a, b in zip(g, w)]


def test_wishart_number_df_broadcasting_expand_and_repr():
    rng = np.random.default_rng(31)
    cov = spd(rng, 3, 1) / 3
    x = pd_values(rng, 5, 3, 2)

    def build(lib):
        d = wishart(lib, 4.0, "covariance_matrix", cov)
        assert tuple(d.batch_shape) == (3, 1) and d.df.dtype == lib.float64
        assert repr(d).replace("graft.", "torch.") == "Wishart(covariance_matrix: torch.Size([3, 1, 3, 3]), df: 4.0)"
        e = wishart(lib, np.array([4.0, 5.0]), "scale_tril", np.linalg.cholesky(cov))
        assert tuple(e.batch_shape) == (3, 2)
        f = e.expand((4, 3, 2))
        assert type(f) is lib.distributions.Wishart and tuple(f.batch_shape) == (4, 3, 2)
        assert tuple(f._dist_chi2.batch_shape) == (4, 3, 2, 3)
        assert tuple(d._dist_chi2.batch_shape) == (3, 1, 3)
        if lib is graft:  # (torch's rsample warns "Singular sample detected." on every call)
            assert tuple(d.rsample((2,)).shape) == (2, 3, 1, 3, 3)
        return [d.log_prob(t(lib, x)), d.entropy(), e.log_prob(t(lib, x)), e.entropy(), e.mean, e.variance, e.mode,
                f.log_prob(t(lib, x[0])), f.entropy(), f.df, f.scale_tril, f.precision_matrix, f._dist_chi2.df]

    g, w = both(build)
    compare_all(g, w)
    # a number df with batched matrices: PyTorch's mean, mode and variance fail (df.view(batch_shape + (1, 1)) of
    # a 0-dim df); graft's are df's broadcast
    d = wishart(graft, 4.0, "covariance_matrix", cov)
    close(d.mean, 4 * cov)
    assert np.isnan(numpy(d.mode)).all()  # df = n + 1: no mode
    close(d.variance, 4 * (cov ** 2 + np.einsum("...i,...j->...ij", *[np.diagonal(cov, axis1=-2, axis2=-1)] * 2)))
    with pytest.raises(RuntimeError):
        wishart(torch, 4.0, "covariance_matrix", cov).mean


def test_wishart_repr_matches_torch():
    for df in (3.0, np.array(3.0)):
        g, w = (repr(wishart(lib, df, "covariance_matrix", np.eye(3))).replace("graft.", "torch.") for lib in LIBS)
        assert g == w == "Wishart(covariance_matrix: torch.Size([3, 3]), df: 3.0)"
    assert repr(graft.distributions.Wishart(3.0, graft.eye(3)).arg_constraints["df"]) == "GreaterThan(lower_bound=2)"


@pytest.mark.parametrize("kind", KINDS)
def test_wishart_log_prob_and_entropy_gradients(kind):
    rng = np.random.default_rng(32)
    cov = spd(rng) / 3
    x = pd_values(rng, 4)

    def build(lib):
        df = t(lib, [4.5]).requires_grad_()
        m = t(lib, param_for(kind, cov)).requires_grad_()
        value = t(lib, x).requires_grad_()
        d = lib.distributions.Wishart(df, **{kind: m})
        (d.log_prob(value).sum() + d.entropy().sum()).backward()
        return [df.grad, m.grad, value.grad]

    g, w = both(build)
    if kind != "scale_tril":
        g[1], w[1] = [(a + a.transpose(-2, -1)) / 2 for a in (g[1], w[1])]
    else:
        # graft's cholesky_solve backward leaves the factor's (unread) upper triangle a zero gradient; PyTorch's
        # gives it one: the lower triangles agree
        assert (numpy(g[1]) == np.tril(numpy(g[1]))).all()
        g[1], w[1] = g[1].tril(), w[1].tril()
    compare_all(g, w)


def test_wishart_kl_matches_torch():
    # (PyTorch's generic ExponentialFamily KL; without batch dimensions, where it is right)
    rng = np.random.default_rng(33)
    cp, cq = spd(rng) / 3, spd(rng) / 3

    def build(lib):
        p = wishart(lib, np.array(4.5), "covariance_matrix", cp)
        q = wishart(lib, np.array(6.0), "precision_matrix", np.linalg.inv(cq))
        return [lib.distributions.kl_divergence(p, q), lib.distributions.kl_divergence(p, p), *q._natural_params,
                q._log_normalizer(*q._natural_params)]

    g, w = both(build)
    compare_all(g, w)
    close(g[1], 0.0, atol=1e-10)
    # the closed form: KL = nq/2 (log|Vq| - log|Vp|) + np/2 (tr(Vq^-1 Vp) - n) + log G_n(nq/2) - log G_n(np/2)
    #                       + (np - nq)/2 psi_n(np/2)
    n, p_df, q_df = 3, 4.5, 6.0
    mvdigamma = sum(torch.digamma(torch.tensor(p_df / 2 - j / 2, dtype=torch.float64)).item() for j in range(n))
    want = (q_df / 2 * (np.linalg.slogdet(cq)[1] - np.linalg.slogdet(cp)[1])
            + p_df / 2 * (np.trace(np.linalg.inv(cq) @ cp) - n) + _mvlgamma_reference([q_df / 2], n)[0]
            - _mvlgamma_reference([p_df / 2], n)[0] + (p_df - q_df) / 2 * mvdigamma)
    close(g[0], want, rtol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_wishart_rsample_shapes_moments_and_gradients(dtype):
    rng = np.random.default_rng(34)
    cov = spd(rng) / 3
    L = t(graft, np.linalg.cholesky(cov), dtype).requires_grad_()
    df = t(graft, 5.5, dtype).requires_grad_()
    d = graft.distributions.Wishart(df, scale_tril=L)
    graft.manual_seed(35)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = d.rsample((20000,))
    assert tuple(x.shape) == (20000, 3, 3) and x.dtype == getattr(graft, dtype) and x.requires_grad
    xs = x.detach().numpy().astype("float64")
    assert constraints.positive_definite.check(x.detach()).all()
    np.testing.assert_allclose(xs.mean(0), 5.5 * cov, atol=0.05 * np.abs(5.5 * cov).max())
    want_var = 5.5 * (cov ** 2 + np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(xs.var(0), want_var, rtol=0.1, atol=0.05 * want_var.max())
    weights = rng.normal(size=(3, 3))
    (x * t(graft, weights, dtype)).sum().backward()
    # X = L B L^T with B independent of L: d/dL sum(W * X) = (W + W^T) L sum(B), B = L^-1 X L^-T
    Ln = np.linalg.cholesky(cov)
    Linv = np.linalg.inv(Ln)
    B = (Linv @ xs @ Linv.T).sum(0)
    rtol = 1e-8 if dtype == "float64" else 2e-3
    close(L.grad, (weights + weights.T) @ Ln @ B, rtol=rtol, atol=rtol * np.abs(B).max())
    # d/d df E[sum(W * X)] = sum(W * cov): the average pathwise gradient (Monte Carlo)
    assert abs(df.grad.item() / 20000 - (weights * cov).sum()) < 0.05 * np.abs(weights * cov).sum() + 0.02
    # sample: no graph
    assert not d.sample((2,)).requires_grad


def test_wishart_singular_draws_are_redrawn():
    d = graft.distributions.Wishart(graft.tensor([4.0, 5.0]), graft.eye(2))
    singular = graft.zeros(2, 2)  # all zeros: not positive definite
    draws = []

    def bartlett(sample_shape=()):
        draws.append(tuple(sample_shape))
        out = graft.eye(2).expand(tuple(sample_shape) + (2, 2, 2)).clone()
        if len(draws) == 1:
            out[1, 0] = singular  # the second sample's first matrix
        if len(draws) == 2:
            out[0, 1] = singular  # the redraw is singular again
        return out * len(draws)

    d._bartlett_sampling = bartlett
    with pytest.warns(UserWarning, match="^Singular sample detected.$"):
        x = d.rsample((3,))
    assert draws == [(3,), (1,), (1,)]
    np.testing.assert_array_equal(x.numpy(), np.stack([np.eye(2)[None].repeat(2, 0), 3 * np.eye(2)[None].repeat(2, 0),
                                                        np.eye(2)[None].repeat(2, 0)]))
    draws.clear()
    d._bartlett_sampling = lambda sample_shape=(): draws.append(1) or graft.zeros(tuple(sample_shape) + (2, 2, 2))
    with pytest.warns(UserWarning, match="^Singular sample detected.$"):
        d.rsample((2,), max_try_correction=4)
    assert len(draws) == 5  # the draw and 4 corrections, all singular
    draws.clear()
    d._bartlett_sampling = lambda sample_shape=(): draws.append(1) or graft.eye(2).expand(
        tuple(sample_shape) + (2, 2, 2)).clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d.rsample((2,))
    assert len(draws) == 1


INVALID_WISHART = [
    (AssertionError, lambda lib: lib.distributions.Wishart(3.0)),
    (AssertionError, lambda lib: lib.distributions.Wishart(3.0, lib.eye(3), scale_tril=lib.eye(3))),
    (ValueError, lambda lib: lib.distributions.Wishart(3.0, lib.ones(3))),
    (ValueError, lambda lib: lib.distributions.Wishart(1.5, lib.eye(3))),
    (ValueError, lambda lib: lib.distributions.Wishart(t(lib, [1.5, 4.0]), lib.eye(3))),
    (ValueError, lambda lib: lib.distributions.Wishart(3.0, t(lib, NOT_PD))),
    (ValueError, lambda lib: lib.distributions.Wishart(3.0, scale_tril=t(lib, [[1.0, 0.0], [1.0, -1.0]]))),
    (ValueError, lambda lib: lib.distributions.Wishart(3.0, t(lib, np.eye(3))).log_prob(-t(lib, np.eye(3)))),
    (ValueError, lambda lib: lib.distributions.Wishart(3.0, t(lib, np.eye(3))).log_prob(t(lib, np.eye(2)))),
]


@pytest.mark.parametrize("case", range(len(INVALID_WISHART)))
def test_wishart_errors_match_torch(case):
    exc, call = INVALID_WISHART[case]
    assert_same_errors(call, exc)


def test_wishart_low_df_warning_and_special_functions():
    for lib in LIBS:
        with pytest.warns(UserWarning, match="^Low df values detected. Singular samples are highly likely to occur "
                                             "for ndim - 1 < df < ndim.$"):
            lib.distributions.Wishart(2.5, lib.eye(3))
    from graft.distributions import _special, wishart as gw
    x = np.array([1.6, 2.5, 7.25, 30.0, 0.75])
    for p in (1, 2, 3, 5):
        got = _special.mvlgamma(t(graft, x), p)
        close(got, _mvlgamma_reference(x, p), rtol=1e-12)
        inside = x > (p - 1) / 2  # (torch 1.13 refuses the rest; 2.x, as graft, does not check)
        close(got.numpy()[inside], torch.mvlgamma(t(torch, x[inside]), p), rtol=1e-12)
        assert _special.mvlgamma(t(graft, x, "float32"), p).dtype == graft.float32
    with pytest.raises(RuntimeError, match="^p has to be greater than or equal to 1$"):
        _special.mvlgamma(t(graft, x), 0)
    close(gw._mvdigamma(t(graft, [2.5, 4.0]), 3),
          torch.distributions.wishart._mvdigamma(t(torch, [2.5, 4.0]), 3), rtol=1e-12)
    with pytest.raises(AssertionError, match="^Wrong domain for multivariate digamma function.$"):
        gw._mvdigamma(t(graft, [0.9]), 3)


def _mvlgamma_reference(x, p):
    """log Gamma_p(x) (NumPy, through math.lgamma; x - j/2 may be negative: log|Gamma| as torch's)."""
    return np.array([p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(v - j / 2) for j in range(p))
                     for v in x])


# -- LKJCholesky -------------------------------------------------------------------------------------------

def lkj_values(dim, n, seed):
    """``n`` lower Cholesky factors of random correlation matrices (NumPy, float64)."""
    rng = np.random.default_rng(seed)
    cov = spd(rng, n, n=dim)
    d = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    return np.linalg.cholesky(cov / d[..., :, None] / d[..., None, :])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [2, 3, 5])
def test_lkj_log_prob_matches_torch(dim, dtype):
    x = lkj_values(dim, 4, 40 + dim)[:, None]  # (4, 1, dim, dim) against the batch (3,)

    def build(lib):
        d = lib.distributions.LKJCholesky(dim, t(lib, [0.5, 1.0, 2.5], dtype))
        assert tuple(d.batch_shape) == (3,) and tuple(d.event_shape) == (dim, dim)
        return [d.log_prob(t(lib, x, dtype)), d.concentration]

    g, w = both(build)
    rtol, atol = TOL[dtype]
    compare_all(g, w, dtype) if dtype == "float64" else [close(a, b, rtol=rtol * 10, atol=atol * 10)
                                                        for a, b in zip(g, w)]
    assert tuple(g[0].shape) == (4, 3)


def test_lkj_gradient_number_concentration_and_normalisation():
    x = lkj_values(4, 3, 45)

    def build(lib):
        conc = t(lib, [0.7, 3.0]).requires_grad_()
        value = t(lib, x[:, None]).requires_grad_()
        lib.distributions.LKJCholesky(4, conc).log_prob(value).sum().backward()
        d = lib.distributions.LKJCholesky(3)
        assert d.concentration.dtype == lib.float32 and tuple(d.batch_shape) == ()
        return [conc.grad, value.grad]

    compare_all(*both(build))
    # dim 2: the density of L[1, 0] = r on (-1, 1), which integrates to 1
    r = np.linspace(-1, 1, 400001)[1:-1]
    L = np.zeros((len(r), 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1, r, np.sqrt(1 - r ** 2)
    for eta in (1.0, 2.0, 3.5):
        density = graft.distributions.LKJCholesky(2, t(graft, eta)).log_prob(t(graft, L)).exp().numpy()
        assert abs(np.trapz(density, r) - 1) < 2e-5  # (the ends, 5e-6 wide, are left out)


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_lkj_sample_support_and_marginals(dim):
    graft.manual_seed(46)
    eta = 1.5
    d = graft.distributions.LKJCholesky(dim, t(graft, [eta, eta]))
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 2, dim, dim) and x.dtype == graft.float64 and not d.has_rsample
    assert constraints.corr_cholesky.check(x).all()
    corr = (x @ x.transpose(-2, -1)).numpy()
    # each off-diagonal correlation r has (r + 1) / 2 ~ Beta(a, a), a = eta - 1 + dim / 2
    a = eta - 1 + dim / 2
    off = corr[..., np.tril_indices(dim, -1)[0], np.tril_indices(dim, -1)[1]]
    np.testing.assert_allclose(off.mean((0, 1)), 0, atol=0.02)
    np.testing.assert_allclose(off.var((0, 1)), 1 / (2 * a + 1), rtol=0.04)
    e = d.expand((3, 2))
    assert type(e) is graft.distributions.LKJCholesky and e.dim == dim and tuple(e._beta.batch_shape) == (3, 2, dim)
    assert tuple(e.sample((5,)).shape) == (5, 3, 2, dim, dim)
    close(e.log_prob(x[:4, None]), d.log_prob(x[:4, None]).expand(4, 3, 2), rtol=0, atol=0)


def test_lkj_invalid_concentration():
    # the inner Beta (a Dirichlet) refuses, as PyTorch's; its first concentrations are the corrected ones
    for conc, shape, rows in [(-1.0, (3, 2), "[ 0.5000, -0.5000],\n        [ 0.5000, -0.5000],\n        "
                                              "[ 1.0000, -1.0000]"),
                              ([1.0, 0.0], (2, 3, 2), None)]:
        errors = []
        for lib in LIBS:
            with pytest.raises(ValueError) as info:
                lib.distributions.LKJCholesky(3, t(lib, conc) if isinstance(conc, list) else conc)
            errors.append(message(info))
        head = (f"Expected parameter concentration (Tensor of shape {shape}) of distribution Dirichlet(concentration: "
                f"torch.Size({list(shape)})) to satisfy the constraint IndependentConstraint(GreaterThan("
                "lower_bound=0.0), 1), but found invalid values:\ntensor(")
        assert errors[0].startswith(head) and errors[1].startswith(head)
        if rows is not None:
            assert errors[0] == head + "[" + rows + "])"


INVALID_LKJ = [
    lambda lib: lib.distributions.LKJCholesky(1),
    lambda lib: lib.distributions.LKJCholesky(3, 1.0).log_prob(2 * lib.eye(3)),
    lambda lib: lib.distributions.LKJCholesky(2, 1.0).log_prob(t(lib, [[1.0, 0.0], [0.6, 0.8]], "float32").mT),
]


@pytest.mark.parametrize("case", range(len(INVALID_LKJ)))
def test_lkj_errors_match_torch(case):
    assert_same_errors(INVALID_LKJ[case])


def test_lkj_repr_and_constraints():
    for lib in LIBS:
        d = lib.distributions.LKJCholesky(3, 0.5)
        assert repr(d) == "LKJCholesky(concentration: 0.5)"
        assert repr(type(d).support) == "CorrCholesky()"
        constraint_reprs = {k: repr(v) for k, v in type(d).arg_constraints.items()}
        assert constraint_reprs == {"concentration": "GreaterThan(lower_bound=0.0)"}
