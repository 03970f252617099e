"""graft.distributions' further distributions against torch.distributions (1.13): Exponential,
Laplace, Cauchy, Gamma, Chi2, Beta, Dirichlet, StudentT, Poisson, Geometric, Binomial,
OneHotCategorical, TransformedDistribution, LogNormal, the transforms and biject_to/transform_to,
ExponentialFamily and the KL divergences between them. Densities, entropies, moments, CDFs and KLs
are compared in float64 (to 1e-10; lgamma and digamma are graft's own), validation errors and reprs
as texts (``graft.`` read as ``torch.``); samplers by shapes, dtypes and the frequencies or moments
of large seeded samples; rsample gradients against torch's ``_standard_gamma_grad``, finite
differences of the Gamma CDF and Monte Carlo identities."""
import functools
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import distributions_utils  # noqa: E402
import graft  # noqa: E402
from distributions_utils import LIBS, assert_same_errors, both, numpy, t  # noqa: E402
from graft.distributions import _special, constraints, kl  # noqa: E402

# this file's default tolerance is 1e-10 (lgamma and digamma are graft's own)
close = functools.partial(distributions_utils.close, rtol=1e-10)


# -- special functions ----------------------------------------------------------------------------------

def test_lgamma_digamma_match_torch():
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(1e-8, 1, 300), rng.uniform(0, 30, 300), 10 ** rng.uniform(-300, 300, 300),
                         -rng.uniform(0, 30, 300) + 0.01, [1.0, 2.0, 0.5, 1.4616321449683622, 1e-300, 1e300]])
    for name in ("lgamma", "digamma"):
        got = getattr(_special, name)(graft.tensor(xs)).numpy()
        want = getattr(torch, name)(torch.tensor(xs)).numpy()
        scale = np.maximum(np.abs(want), 1)
        # torch's reflection (tan(pi x) of a rounded pi x) loses digits near the negative poles: ours does not
        tol = np.where(xs > 0, 1e-13, 1e-9)
        assert (np.abs(got - want) <= tol * scale).all()
    edges = [0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan, -2.5]
    for name in ("lgamma", "digamma"):
        got = getattr(_special, name)(graft.tensor(edges, dtype=graft.float64)).numpy()
        want = getattr(torch, name)(torch.tensor(edges, dtype=torch.float64)).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-13)
    x32 = graft.tensor([0.3, 4.0, 12.5])
    assert _special.lgamma(x32).dtype == graft.float32 and _special.digamma(x32).dtype == graft.float32
    close(_special.lgamma(x32), torch.lgamma(torch.tensor([0.3, 4.0, 12.5])), rtol=1e-6)
    close(_special.xlogy(t(graft, [0.0, 0.0, 2.0]), t(graft, [0.0, math.nan, 3.0])),
          torch.xlogy(t(torch, [0.0, 0.0, 2.0]), t(torch, [0.0, math.nan, 3.0])))


def test_erfinv_and_normal_icdf():
    rng = np.random.default_rng(2)
    ys = np.concatenate([rng.uniform(-0.9999, 0.9999, 2000), 10 ** rng.uniform(-300, -1, 200)])
    close(_special.erfinv(graft.tensor(ys)), torch.erfinv(torch.tensor(ys)), rtol=1e-13)
    # nearer +-1 torch's loses digits (2e-7 relative in erfc at 1 - y = 1e-10); graft's keeps them:
    # erfc(erfinv(y)) == 1 - y
    tails = 1 - 10 ** rng.uniform(-15.5, -4, 200)
    xs = _special.erfinv(graft.tensor(np.concatenate([tails, -tails]))).numpy()
    np.testing.assert_allclose([math.erfc(abs(x)) for x in xs], np.concatenate([1 - tails] * 2), rtol=1e-12)
    edges = [0.0, 1.0, -1.0, 1.5, -2.0]
    got = _special.erfinv(graft.tensor(edges, dtype=graft.float64)).numpy()
    np.testing.assert_array_equal(got, torch.erfinv(torch.tensor(edges, dtype=torch.float64)).numpy())
    x = graft.tensor(np.concatenate([ys, tails]), requires_grad=True)
    r = _special.erfinv(x)
    r.sum().backward()
    close(x.grad, math.sqrt(math.pi) / 2 * np.exp(r.detach().numpy() ** 2), rtol=1e-9)
    got, want = both(lambda lib: lib.distributions.Normal(t(lib, [0.0, 1.0]), t(lib, [1.0, 3.0])).icdf(
        t(lib, [[0.025, 0.5], [0.999, 1e-3]])))
    close(got, want, rtol=1e-12)


def test_lgamma_digamma_gradients():
    xs = np.array([1e-3, 0.3, 1.0, 2.0, 7.5, 9.99, 10.0, 42.0, -0.5, -3.7])
    x = graft.tensor(xs, requires_grad=True)
    _special.lgamma(x).sum().backward()
    close(x.grad, torch.digamma(torch.tensor(xs)), rtol=1e-12)
    x.grad = None
    _special.digamma(x).sum().backward()
    # torch's polygamma(1, .) is accurate to ~5e-10 in 1.13; the exact value at 1 is pi^2 / 6
    close(x.grad, torch.polygamma(1, torch.tensor(xs)), rtol=2e-9)
    assert abs(x.grad[2].item() - math.pi ** 2 / 6) < 1e-13
    (g,) = graft.autograd.grad(_special.lgamma(x).sum(), [x], create_graph=True)
    (g2,) = graft.autograd.grad(g.sum(), [x])
    close(g2, x.grad, rtol=1e-12)


def test_standard_gamma_gradient():
    rng = np.random.default_rng(1)
    alpha = 10 ** rng.uniform(-2, 3, 400)
    x = np.maximum(torch._standard_gamma(torch.tensor(alpha)).numpy(), 1e-300)
    got = _special.standard_gamma_log_grad(graft.tensor(alpha), graft.tensor(np.log(x))).numpy() * x
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-3)  # torch's is an approximation (~5e-4)
    # exactly: -(dF/dalpha) / f, F the regularised incomplete gamma function (central differences)
    h = 1e-6 * alpha

    def cdf(a):
        return torch.special.gammainc(torch.tensor(a), torch.tensor(x)).numpy()

    log_pdf = (alpha - 1) * np.log(x) - x - torch.lgamma(torch.tensor(alpha)).numpy()
    fd = -(cdf(alpha + h) - cdf(alpha - h)) / (2 * h) / np.exp(log_pdf)
    ok = np.exp(log_pdf) > 1e-100
    np.testing.assert_allclose(got[ok], fd[ok], rtol=1e-6)


# -- values ------------------------------------------------------------------------------------------------

def _values(d, x, cdf=False, icdf=None, entropy=True):
    out = [d.log_prob(x), d.mean, d.variance, d.stddev, d.mode]
    if entropy:
        out.append(d.entropy())
    if cdf:
        out.append(d.cdf(x))
    if icdf is not None:
        out.append(d.icdf(icdf))
    return out


VALUE_CASES = {
    "exponential": lambda lib: _values(lib.distributions.Exponential(t(lib, [0.5, 1.0, 3.0])),
                                       t(lib, [[0.0, 2.0, 0.1], [5.0, 0.3, 1.0]]), True, t(lib, [0.1, 0.5, 0.99])),
    "laplace": lambda lib: _values(lib.distributions.Laplace(t(lib, [0.0, 1.0, -2.0]), t(lib, [1.0, 0.5, 3.0])),
                                   t(lib, [[0.3, 1.0, -7.0], [2.0, -1.5, 0.0]]), True, t(lib, [0.1, 0.5, 0.9])),
    "cauchy": lambda lib: _values(lib.distributions.Cauchy(t(lib, [0.0, 1.0]), t(lib, [1.0, 0.25])),
                                  t(lib, [[0.3, 10.0], [-2.0, 1.0]]), True, t(lib, [0.2, 0.75])),
    "gamma": lambda lib: _values(lib.distributions.Gamma(t(lib, [0.5, 1.0, 3.0, 40.0]), t(lib, [1.0, 2.0, 0.5, 4.0])),
                                 t(lib, [[0.1, 1.0, 5.0, 10.0], [3.0, 0.0, 0.5, 9.5]])),
    "chi2": lambda lib: _values(lib.distributions.Chi2(t(lib, [1.0, 2.5, 10.0])), t(lib, [0.5, 2.0, 12.0])),
    "beta": lambda lib: _values(lib.distributions.Beta(t(lib, [0.5, 2.0, 5.0]), t(lib, [0.5, 3.0, 1.5])),
                                t(lib, [[0.1, 0.5, 0.9], [0.999, 0.01, 0.5]])),
    "beta_numbers": lambda lib: _values(lib.distributions.Beta(2.0, 3.0), lib.tensor(0.25)),
    "dirichlet": lambda lib: _values(lib.distributions.Dirichlet(t(lib, [[0.5, 1.0, 2.0], [3.0, 4.0, 0.2]])),
                                     t(lib, [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
    "dirichlet_mode": lambda lib: [lib.distributions.Dirichlet(t(lib, [[0.5, 0.9, 0.2], [2.0, 3.0, 0.5]])).mode],
    "studentt": lambda lib: _values(lib.distributions.StudentT(t(lib, [0.5, 1.5, 3.0, 30.0]),
                                                               t(lib, [0.0, 1.0, -1.0, 2.0]),
                                                               t(lib, [1.0, 2.0, 0.5, 3.0])),
                                    t(lib, [[0.3, 1.0, -7.0, 2.0], [2.0, -1.5, 0.0, 1.0]])),
    "poisson": lambda lib: _values(lib.distributions.Poisson(t(lib, [0.0, 0.5, 4.0, 100.0])),
                                   t(lib, [[0.0, 1.0, 4.0, 90.0], [0.0, 0.0, 11.0, 100.0]]), entropy=False),
    "geometric_probs": lambda lib: _values(lib.distributions.Geometric(t(lib, [0.2, 0.5, 1.0])),
                                           t(lib, [[0.0, 3.0, 0.0], [7.0, 1.0, 0.0]])),
    "geometric_logits": lambda lib: _values(lib.distributions.Geometric(logits=t(lib, [-2.0, 0.0, 3.0])),
                                            t(lib, [[0.0, 3.0, 0.0], [7.0, 1.0, 2.0]])),
    "binomial_probs": lambda lib: _values(lib.distributions.Binomial(t(lib, [10.0, 10.0, 10.0]),
                                                                     t(lib, [0.0, 0.3, 1.0])),
                                          t(lib, [[0.0, 3.0, 10.0], [1.0, 10.0, 10.0]])),
    "binomial_logits": lambda lib: _values(lib.distributions.Binomial(t(lib, [[5.0], [30.0]]),
                                                                      logits=t(lib, [-40.0, 0.5, 40.0])),
                                           t(lib, [[0.0, 3.0, 5.0], [1.0, 20.0, 30.0]]), entropy=False),
    "binomial_entropy": lambda lib: [lib.distributions.Binomial(7, t(lib, [0.1, 0.5, 0.8])).entropy(),
                                     lib.distributions.Binomial(7, t(lib, [0.1, 0.5, 0.8])).enumerate_support(),
                                     lib.distributions.Binomial(4, t(lib, [0.1])).enumerate_support(False)],
    "one_hot": lambda lib: _values(lib.distributions.OneHotCategorical(t(lib, [[0.2, 0.3, 0.5], [0.0, 0.9, 0.1]])),
                                   t(lib, [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])),
    "one_hot_logits": lambda lib: _values(lib.distributions.OneHotCategorical(logits=t(lib, [1.0, -1.0, 3.0, 0.0])),
                                          t(lib, [[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]))
    + [lib.distributions.OneHotCategorical(logits=t(lib, [[1.0, 3.0], [0.5, 0.2]])).enumerate_support(),
       lib.distributions.OneHotCategorical(logits=t(lib, [[1.0, 3.0], [0.5, 0.2]])).enumerate_support(False)],
    "lognormal": lambda lib: _values(lib.distributions.LogNormal(t(lib, [0.0, 1.0, -1.0]), t(lib, [1.0, 0.5, 2.0])),
                                     t(lib, [[0.3, 1.0, 7.0], [2.0, 1.5, 0.01]]), True, t(lib, [0.1, 0.5, 0.9])),
}


@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_values_match_torch(case):
    got, want = both(VALUE_CASES[case])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        close(g, w, rtol=1e-10 if w.dtype == torch.float64 else 1e-5)  # (graft's lgamma is float64 inside)


def test_transformed_distribution_values():
    def build(lib):
        D, T = lib.distributions, lib.distributions.transforms
        base = D.Uniform(t(lib, [0.0, 0.0]), t(lib, [1.0, 1.0]))
        logistic = D.TransformedDistribution(base, [T.SigmoidTransform().inv, T.AffineTransform(t(lib, [1.0, -1.0]),
                                                                                                  t(lib, [2.0, 0.5]))])
        flipped = D.TransformedDistribution(D.Normal(t(lib, [0.5, 1.0]), t(lib, [1.0, 2.0])),
                                            [T.AffineTransform(0.0, -2.0), T.TanhTransform()])
        vec = D.TransformedDistribution(D.Normal(t(lib, [[0.0, 1.0, 2.0]]), t(lib, [[1.0, 1.0, 0.5]])),
                                        T.AffineTransform(t(lib, [1.0, 2.0, 3.0]), t(lib, [2.0, 1.0, 0.5]),
                                                          event_dim=1))
        stick = D.TransformedDistribution(D.Normal(t(lib, [0.0, 1.0]), t(lib, [1.0, 0.5])), T.StickBreakingTransform())
        x = t(lib, [[0.3, 1.0], [-2.0, 0.5]])
        y = t(lib, [[0.3, -0.5], [0.9, 0.1]])
        return [logistic.log_prob(x), logistic.cdf(x), logistic.icdf(t(lib, [0.25, 0.5])), flipped.log_prob(y),
                flipped.cdf(y), flipped.icdf(t(lib, [0.25, 0.75])), vec.log_prob(t(lib, [0.5, 0.5, 0.5])),
                stick.log_prob(t(lib, [0.2, 0.5, 0.3])), tuple(vec.batch_shape), tuple(vec.event_shape),
                tuple(stick.event_shape), repr(vec.support), repr(flipped.support), repr(stick.support),
                logistic.has_rsample, tuple(logistic.expand((3, 2)).batch_shape)]

    got, want = both(build)
    for g, w in zip(got, want):
        if isinstance(w, (tuple, str, bool)):
            assert g == w
        else:
            close(g, w)


def test_exponential_family_generic_entropy():
    from graft.distributions import ExponentialFamily
    dists = [graft.distributions.Normal(t(graft, [0.0, 1.0]), t(graft, [1.0, 3.0])),
             graft.distributions.Bernoulli(t(graft, [0.2, 0.7])),
             graft.distributions.Exponential(t(graft, [0.5, 2.0])),
             graft.distributions.Gamma(t(graft, [0.5, 4.0]), t(graft, [2.0, 1.0]))]
    for d in dists:
        assert isinstance(d, ExponentialFamily)
        close(ExponentialFamily.entropy(d), d.entropy())
    for lib in LIBS:
        with pytest.raises(NotImplementedError):
            lib.distributions.Poisson(t(lib, [1.0])).entropy()
        with pytest.raises(NotImplementedError):  # Beta has no _mean_carrier_measure (it has its own entropy)
            lib.distributions.ExponentialFamily.entropy(lib.distributions.Beta(t(lib, [1.0]), t(lib, [2.0])))


# -- KL divergence ------------------------------------------------------------------------------------------

def _pair(name, p_args, q_args):
    return lambda lib: (getattr(lib.distributions, name)(*[t(lib, a) for a in p_args]),
                        getattr(lib.distributions, name)(*[t(lib, a) for a in q_args]))


def _cross(p_name, p_args, q_name, q_args):
    return lambda lib: (getattr(lib.distributions, p_name)(*[t(lib, a) for a in p_args]),
                        getattr(lib.distributions, q_name)(*[t(lib, a) for a in q_args]))


KL_PAIRS = {
    "gamma": _pair("Gamma", ([0.5, 2.0, 10.0], [1.0, 3.0, 0.5]), ([1.0, 2.0, 3.0], [2.0, 3.0, 1.0])),
    "beta": _pair("Beta", ([0.5, 2.0], [1.0, 3.0]), ([1.0, 4.0], [2.0, 0.3])),
    "exponential": _pair("Exponential", ([0.5, 2.0],), ([1.5, 2.0],)),
    "dirichlet": _pair("Dirichlet", ([[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]],), ([[1.0, 1.0, 1.0], [0.2, 5.0, 2.0]],)),
    "poisson": _pair("Poisson", ([0.5, 4.0],), ([1.0, 40.0],)),
    "laplace": _pair("Laplace", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [3.0, 0.5])),
    "cauchy": _pair("Cauchy", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [3.0, 0.5])),
    "geometric": _pair("Geometric", ([0.2, 0.7],), ([0.5, 0.1],)),
    "binomial": lambda lib: (lib.distributions.Binomial(t(lib, [10.0, 12.0]), t(lib, [0.2, 0.7])),
                             lib.distributions.Binomial(t(lib, [10.0, 10.0]), t(lib, [0.5, 0.1]))),
    "one_hot": _pair("OneHotCategorical", ([[0.2, 0.8], [0.5, 0.5]],), ([[0.5, 0.5], [0.9, 0.1]],)),
    "lognormal": _pair("LogNormal", ([0.0, 1.0], [1.0, 2.0]), ([0.5, -1.0], [3.0, 0.5])),
    "bernoulli_poisson": _cross("Bernoulli", ([0.2, 0.7],), "Poisson", ([0.5, 2.0],)),
    "beta_exponential": _cross("Beta", ([0.5, 2.0], [1.0, 3.0]), "Exponential", ([0.5, 2.0],)),
    "beta_gamma": _cross("Beta", ([0.5, 2.0], [1.0, 3.0]), "Gamma", ([0.5, 2.0], [1.0, 3.0])),
    "beta_normal": _cross("Beta", ([0.5, 2.0], [1.0, 3.0]), "Normal", ([0.5, 2.0], [1.0, 3.0])),
    "beta_uniform": _cross("Beta", ([0.5, 2.0], [1.0, 3.0]), "Uniform", ([-1.0, 0.5], [2.0, 3.0])),
    "exponential_gamma": _cross("Exponential", ([0.5, 2.0],), "Gamma", ([0.5, 2.0], [1.0, 3.0])),
    "exponential_normal": _cross("Exponential", ([0.5, 2.0],), "Normal", ([0.5, 2.0], [1.0, 3.0])),
    "exponential_uniform": _cross("Exponential", ([0.5, 2.0],), "Uniform", ([-1.0, 0.5], [2.0, 3.0])),
    "gamma_exponential": _cross("Gamma", ([0.5, 2.0], [1.0, 3.0]), "Exponential", ([0.5, 2.0],)),
    "gamma_normal": _cross("Gamma", ([0.5, 2.0], [1.0, 3.0]), "Normal", ([0.5, 2.0], [1.0, 3.0])),
    "gamma_beta": _cross("Gamma", ([0.5, 2.0], [1.0, 3.0]), "Beta", ([0.5, 2.0], [1.0, 3.0])),
    "laplace_normal": _cross("Laplace", ([0.0, 1.0], [1.0, 2.0]), "Normal", ([0.5, 2.0], [1.0, 3.0])),
    "laplace_gamma": _cross("Laplace", ([0.0, 1.0], [1.0, 2.0]), "Gamma", ([0.5, 2.0], [1.0, 3.0])),
    "normal_laplace": _cross("Normal", ([0.5, 2.0], [1.0, 3.0]), "Laplace", ([0.0, 1.0], [1.0, 2.0])),
    "normal_gamma": _cross("Normal", ([0.5, 2.0], [1.0, 3.0]), "Gamma", ([0.5, 2.0], [1.0, 3.0])),
    "poisson_binomial": lambda lib: (lib.distributions.Poisson(t(lib, [1.0])),
                                     lib.distributions.Binomial(3, t(lib, [0.5]))),
    "uniform_beta": _cross("Uniform", ([0.1, 0.0], [0.5, 1.5]), "Beta", ([0.5, 2.0], [1.0, 3.0])),
    "uniform_exponential": _cross("Uniform", ([0.1, -1.0], [0.5, 1.5]), "Exponential", ([0.5, 2.0],)),
    "uniform_gamma": _cross("Uniform", ([0.1, -1.0], [0.5, 1.5]), "Gamma", ([0.5, 2.0], [1.0, 3.0])),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    got, want = both(lambda lib: lib.distributions.kl_divergence(*KL_PAIRS[pair](lib)))
    close(got, want)


@pytest.mark.parametrize("pair", ["gamma", "beta", "exponential", "dirichlet", "poisson", "bernoulli_same"])
def test_kl_bregman_generic_matches_closed_forms(pair):
    cases = dict(KL_PAIRS, bernoulli_same=_pair("Bernoulli", ([0.2, 0.7],), ([0.5, 0.1],)))
    p, q = cases[pair](graft)
    close(kl._kl_expfamily_expfamily(p, q), torch.distributions.kl_divergence(*cases[pair](torch)))


def test_kl_errors():
    for lib in LIBS:
        D = lib.distributions
        with pytest.raises(NotImplementedError) as info:
            D.kl_divergence(D.Gamma(1.0, 1.0), D.Poisson(1.0))
        assert str(info.value) == ("The cross KL-divergence between different exponential families cannot"
                                   + " " * 29 + "be computed using Bregman divergences")
        with pytest.raises(NotImplementedError, match="^KL between Binomials where q.total_count > p.total_count is "
                                                      "not implemented$"):
            D.kl_divergence(D.Binomial(3, t(lib, [0.5])), D.Binomial(4, t(lib, [0.5])))
        with pytest.raises(NotImplementedError):
            base = D.Normal(t(lib, [0.0]), t(lib, [1.0]))
            D.kl_divergence(D.TransformedDistribution(base, D.transforms.ExpTransform()),
                            D.TransformedDistribution(base, D.transforms.SigmoidTransform()))


# -- validation and reprs ---------------------------------------------------------------------------------

INVALID_ARGS = [
    lambda lib: lib.distributions.Exponential(t(lib, [1.0, -1.0])),
    lambda lib: lib.distributions.Laplace(t(lib, [0.0]), t(lib, [0.0])),
    lambda lib: lib.distributions.Cauchy(t(lib, [math.nan]), t(lib, [1.0])),
    lambda lib: lib.distributions.Gamma(t(lib, [1.0, -2.0]), t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.Gamma(1.0, 0.0),
    lambda lib: lib.distributions.Chi2(t(lib, [0.0, 1.0])),
    lambda lib: lib.distributions.Beta(t(lib, [1.0]), t(lib, [-1.0])),
    lambda lib: lib.distributions.Dirichlet(t(lib, [[1.0, 0.0], [1.0, 1.0]])),
    lambda lib: lib.distributions.Dirichlet(t(lib, 1.0)),
    lambda lib: lib.distributions.Poisson(t(lib, [-0.5])),
    lambda lib: lib.distributions.Geometric(t(lib, [0.5, 0.0])),
    lambda lib: lib.distributions.Geometric(t(lib, [1.5])),
    lambda lib: lib.distributions.Geometric(),
    lambda lib: lib.distributions.Binomial(t(lib, [2.5]), t(lib, [0.5])),
    lambda lib: lib.distributions.Binomial(3, t(lib, [1.5])),
    lambda lib: lib.distributions.Binomial(3),
    lambda lib: lib.distributions.OneHotCategorical(t(lib, [0.5, -0.5, 1.0])),
    lambda lib: lib.distributions.StudentT(t(lib, [-1.0]), 0.0, 1.0),
    lambda lib: lib.distributions.StudentT(t(lib, [1.0]), t(lib, [0.0]), t(lib, [-1.0])),
    lambda lib: lib.distributions.LogNormal(t(lib, [0.0]), t(lib, [-1.0])),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), "exp"),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), ["exp"]),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0),
                                                          lib.distributions.transforms.StickBreakingTransform()),
]


@pytest.mark.parametrize("case", range(len(INVALID_ARGS)))
def test_argument_validation_errors_match_torch(case):
    assert_same_errors(INVALID_ARGS[case])


INVALID_VALUES = [
    (lambda lib: lib.distributions.Exponential(t(lib, [1.0])), lambda lib: t(lib, [-0.5])),
    (lambda lib: lib.distributions.Gamma(t(lib, [1.0]), t(lib, [1.0])), lambda lib: t(lib, [-0.5])),
    (lambda lib: lib.distributions.Beta(t(lib, [1.0]), t(lib, [1.0])), lambda lib: t(lib, [1.5])),
    (lambda lib: lib.distributions.Dirichlet(t(lib, [1.0, 1.0])), lambda lib: t(lib, [0.5, 0.6])),
    (lambda lib: lib.distributions.Dirichlet(t(lib, [1.0, 1.0])), lambda lib: t(lib, [0.5, 0.2, 0.3])),
    (lambda lib: lib.distributions.Poisson(t(lib, [1.0])), lambda lib: t(lib, [1.5])),
    (lambda lib: lib.distributions.Geometric(t(lib, [0.5])), lambda lib: t(lib, [-1.0])),
    (lambda lib: lib.distributions.Binomial(3, t(lib, [0.5])), lambda lib: t(lib, [4.0])),
    (lambda lib: lib.distributions.OneHotCategorical(t(lib, [0.5, 0.5])), lambda lib: t(lib, [1.0, 1.0])),
    (lambda lib: lib.distributions.LogNormal(t(lib, [0.0]), t(lib, [1.0])), lambda lib: t(lib, [-1.0])),
    (lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(t(lib, [0.0]), t(lib, [1.0])),
                                                           lib.distributions.transforms.SigmoidTransform()),
     lambda lib: t(lib, [1.5])),
]


@pytest.mark.parametrize("case", range(len(INVALID_VALUES)))
def test_sample_validation_errors_match_torch(case):
    make, value = INVALID_VALUES[case]
    assert_same_errors(lambda lib: make(lib).log_prob(value(lib)))


def test_reprs_and_supports():
    def build(lib):
        D = lib.distributions
        dists = [D.Exponential(2.0), D.Laplace(t(lib, [0.0, 1.0]), 1.0), D.Cauchy(0.0, 1.0),
                 D.Gamma(t(lib, [1.0]), 2.0), D.Chi2(t(lib, [1.0])), D.Beta(1.0, 2.0), D.Dirichlet(t(lib, [1.0, 2.0])),
                 D.Poisson(t(lib, [1.0, 2.0])), D.Geometric(logits=t(lib, [0.0])), D.Binomial(3, t(lib, [0.5])),
                 D.OneHotCategorical(t(lib, [0.5, 0.5])),
                 D.StudentT(3.0), D.LogNormal(0.0, 1.0)]
        return [(repr(d), repr(d.support), d.has_rsample, d.has_enumerate_support, tuple(d.batch_shape),
                 tuple(d.event_shape)) for d in dists] + [repr(constraints.one_hot), repr(constraints.less_than(2.0))]

    got, want = both(build)
    assert [str(g).replace("graft.", "torch.") for g in got] == [str(w) for w in want]
    checks = [(constraints.one_hot, [[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]),
              (constraints.less_than(1.0), [0.5, 1.0, 2.0])]
    for c, v in checks:
        tc = getattr(torch.distributions.constraints, "one_hot" if c is constraints.one_hot else "less_than")
        tc = tc if c is constraints.one_hot else tc(1.0)
        np.testing.assert_array_equal(c.check(t(graft, v)).numpy(), tc.check(t(torch, v)).numpy())


def test_expand():
    def build(lib):
        D = lib.distributions
        dists = [D.Exponential(t(lib, [1.0, 2.0])), D.Laplace(t(lib, [0.0, 1.0]), 1.0),
                 D.Cauchy(t(lib, [0.0, 1.0]), 1.0),
                 D.Gamma(t(lib, [1.0, 2.0]), 2.0), D.Chi2(t(lib, [1.0, 3.0])), D.Beta(t(lib, [1.0, 2.0]), 2.0),
                 D.Poisson(t(lib, [1.0, 2.0])), D.Geometric(t(lib, [0.5, 0.2])), D.Binomial(3, t(lib, [0.5, 0.2])),
                 D.StudentT(t(lib, [3.0, 4.0])), D.LogNormal(t(lib, [0.0, 1.0]), 1.0)]
        values = [t(lib, [0.25, 0.5] if isinstance(d, D.Beta) else [1.0, 2.0]) for d in dists]
        out = [(tuple(d.expand((3, 2)).batch_shape), d.expand((3, 2)).log_prob(x)) for d, x in zip(dists, values)]
        dirichlet = D.Dirichlet(t(lib, [1.0, 2.0, 3.0])).expand((2,))
        one_hot = D.OneHotCategorical(t(lib, [0.2, 0.8])).expand((3,))
        out.append((tuple(dirichlet.batch_shape), dirichlet.log_prob(t(lib, [0.2, 0.3, 0.5]))))
        out.append((tuple(one_hot.batch_shape), one_hot.log_prob(t(lib, [0.0, 1.0]))))
        return out

    for (gs, gv), (ws, wv) in zip(*both(build)):
        assert gs == ws
        close(gv, wv)
    chi = graft.distributions.Chi2(t(graft, [1.0, 3.0])).expand((2, 2))
    assert type(chi).__name__ == "Chi2" and tuple(chi.df.shape) == (2, 2)


# -- transforms ----------------------------------------------------------------------------------------------

TRANSFORMS = {
    "exp": lambda T, lib: T.ExpTransform(),
    "sigmoid": lambda T, lib: T.SigmoidTransform(),
    "tanh": lambda T, lib: T.TanhTransform(),
    "softplus": lambda T, lib: T.SoftplusTransform(),
    "affine": lambda T, lib: T.AffineTransform(t(lib, [1.0, -2.0, 0.5]), t(lib, [2.0, -0.5, 3.0])),
    "affine_numbers": lambda T, lib: T.AffineTransform(1.0, -3.0),
    "power": lambda T, lib: T.PowerTransform(t(lib, [2.0, 0.5, -1.0])),
    "compose": lambda T, lib: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()]),
    "inverse_sigmoid": lambda T, lib: T.SigmoidTransform().inv,
    "independent": lambda T, lib: T.IndependentTransform(T.ExpTransform(), 1),
    "stick_breaking": lambda T, lib: T.StickBreakingTransform(),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms_match_torch(name):
    def build(lib):
        tr = TRANSFORMS[name](lib.distributions.transforms, lib)
        x = t(lib, [[0.3, 1.2, 0.7], [0.1, 0.5, 2.0]])
        if name == "inverse_sigmoid":
            x = t(lib, [[0.3, 0.2, 0.7], [0.1, 0.5, 0.9]])
        y = tr(x)
        sign = tr.sign if tr.bijective and name not in ("stick_breaking", "independent") else 0
        return [y, tr.inv(y), tr.log_abs_det_jacobian(x, y), tr.bijective, repr(tr.domain), repr(tr.codomain),
                tuple(tr.forward_shape((2, 3))), tuple(tr.inverse_shape(tuple(y.shape))),
                sign if not hasattr(sign, "shape") else tuple(numpy(sign)), repr(tr).replace("\n", "|")]

    got, want = both(build)
    for g, w in zip(got, want):
        if hasattr(w, "detach"):
            close(g, w)
        else:
            assert (g.replace("graft.", "torch.") if isinstance(g, str) else g) == w


def test_transform_caching_equality_and_errors():
    T = graft.distributions.transforms
    exp = T.ExpTransform(cache_size=1)
    x = t(graft, [0.5])
    y = exp(x)
    assert exp(x) is y and exp.inv(y) is x and exp.inv.inv is exp
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ComposeTransform([T.ExpTransform()]).inv == T.ComposeTransform([T.ExpTransform().inv])
    assert T.AffineTransform(0.0, 1.0).with_cache(1)._cache_size == 1
    for lib in LIBS:
        LT = lib.distributions.transforms
        with pytest.raises(ValueError, match="^cache_size must be 0 or 1$"):
            LT.ExpTransform(cache_size=2)
        with pytest.raises(ValueError, match="^Please use either .domain.event_dim or .codomain.event_dim$"):
            LT.ReshapeTransform((2,), (2, 1)).event_dim  # domain event_dim 1, codomain 2
        with pytest.raises(ValueError, match="^in_shape, out_shape have different numbers of elements$"):
            LT.ReshapeTransform((2,), (3,))
        with pytest.raises(ValueError, match="^Too few dimensions on input$"):
            LT.StickBreakingTransform().forward_shape(())
    g = T.ReshapeTransform((2, 3), (6,))
    w = torch.distributions.transforms.ReshapeTransform((2, 3), (6,))
    assert tuple(g(graft.zeros(4, 2, 3)).shape) == tuple(w(torch.zeros(4, 2, 3)).shape) == (4, 6)
    assert tuple(g.log_abs_det_jacobian(graft.zeros(4, 2, 3), graft.zeros(4, 6)).shape) == (4,)


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registry(registry):
    def build(lib):
        D = lib.distributions
        C = D.constraints
        reg = getattr(D, registry)
        x = t(lib, [[0.3, -1.2, 0.7], [0.1, 0.5, -2.0]])
        out = []
        for c in (C.real, C.positive, C.nonnegative, C.greater_than(2.0), C.greater_than_eq(-1.0), C.less_than(3.0),
                  C.unit_interval, C.interval(-2.0, 5.0), C.half_open_interval(0.0, 2.0), C.independent(C.positive, 1),
                  C.real_vector, C.simplex):
            tr = reg(c)
            y = tr(x)
            out += [y, tr.log_abs_det_jacobian(x, y) if tr.bijective else y, repr(tr.codomain)]
        with pytest.raises(NotImplementedError) as info:
            reg(C.boolean)
        return out + [str(info.value)]

    got, want = both(build)
    for g, w in zip(got, want):
        if isinstance(w, str):
            assert g.replace("graft.", "torch.") == w
        else:
            close(g, w)
    with pytest.raises(TypeError):
        graft.distributions.biject_to.register(int, lambda c: None)


# -- sampling ----------------------------------------------------------------------------------------------

def sampled_distributions(lib):
    D = lib.distributions
    return {
        "exponential": D.Exponential(lib.ones(2, 3)),
        "laplace": D.Laplace(lib.zeros(2, 3), lib.ones(2, 3)),
        "cauchy": D.Cauchy(lib.zeros(2, 3), lib.ones(2, 3)),
        "gamma": D.Gamma(lib.ones(2, 3) * 0.5, lib.ones(2, 3)),
        "chi2": D.Chi2(lib.ones(2, 3) * 3),
        "beta": D.Beta(lib.ones(2, 3), lib.ones(2, 3) * 2),
        "dirichlet": D.Dirichlet(lib.ones(2, 3)),
        "studentt": D.StudentT(lib.ones(2, 3) * 4),
        "poisson": D.Poisson(lib.ones(2, 3) * 4),
        "geometric": D.Geometric(lib.ones(2, 3) * 0.3),
        "binomial": D.Binomial(10, lib.ones(2, 3) * 0.3),
        "one_hot": D.OneHotCategorical(logits=lib.zeros(2, 3)),
        "lognormal": D.LogNormal(lib.zeros(2, 3), lib.ones(2, 3)),
        "transformed": D.TransformedDistribution(D.Normal(lib.zeros(2, 3), lib.ones(2, 3)),
                                                 [D.transforms.TanhTransform()]),
    }


@pytest.mark.parametrize("name", sorted(sampled_distributions(graft)))
def test_sample_shapes_and_dtypes(name):
    graft.manual_seed(3)
    g, w = sampled_distributions(graft)[name], sampled_distributions(torch)[name]
    for shape in ((), (5,), (4, 1)):
        gs, ws = g.sample(shape), w.sample(torch.Size(shape))
        assert tuple(gs.shape) == tuple(ws.shape)
        assert str(gs.dtype).split(".")[-1] == str(ws.dtype).split(".")[-1]
        assert not gs.requires_grad
        assert bool(g.support.check(gs).all())
    assert g.has_rsample == w.has_rsample
    if g.has_rsample:
        assert tuple(g.rsample((2,)).shape) == tuple(w.rsample((2,)).shape)
    else:
        with pytest.raises(NotImplementedError):
            g.rsample()


def _frequencies(samples, support):
    return np.array([(samples == k).mean() for k in support])


def test_discrete_sample_frequencies():
    graft.manual_seed(4)
    n = 100000
    args = [("Poisson", ([0.7, 6.0, 25.0, 300.0],)),
            ("Binomial", ([5.0, 40.0, 400.0, 60.0], [0.3, 0.5, 0.1, 0.95])), ("Geometric", ([0.1, 0.6],))]
    cases = [(getattr(graft.distributions, name)(*[t(graft, a) for a in params]),
              getattr(torch.distributions, name)(*[t(torch, a) for a in params], validate_args=False))
             for name, params in args]
    for g, w in cases:
        s = g.sample((n,)).numpy()
        assert (s == np.round(s)).all() and (s >= 0).all()
        for col in range(s.shape[1]):
            mean, sd = w.mean[col].item(), w.stddev[col].item()
            support = np.arange(max(0, math.floor(mean - 4 * sd)), math.ceil(mean + 4 * sd) + 1)
            pmf = w.log_prob(torch.tensor(support, dtype=torch.float64).unsqueeze(-1).expand(-1, s.shape[1]))
            pmf = pmf[:, col].exp().numpy()
            freq = _frequencies(s[:, col], support)
            # each frequency within 5 binomial standard errors (and 1e-3)
            assert (np.abs(freq - pmf) <= 5 * np.sqrt(pmf * (1 - pmf) / n) + 1e-3).all()
            assert abs(s[:, col].mean() - mean) < 5 * sd / math.sqrt(n)
    assert (graft.distributions.Poisson(t(graft, [0.0])).sample((10,)) == 0).all()
    b = graft.distributions.Binomial(t(graft, [0.0, 7.0, 7.0]), t(graft, [0.5, 0.0, 1.0])).sample((10,)).numpy()
    assert (b == [0.0, 0.0, 7.0]).all()
    oh = graft.distributions.OneHotCategorical(t(graft, [0.2, 0.0, 0.8])).sample((n,)).numpy()
    assert (oh.sum(-1) == 1).all()
    np.testing.assert_allclose(oh.mean(0), [0.2, 0.0, 0.8], atol=0.005)


def test_gamma_samples_follow_the_cdf():
    graft.manual_seed(5)
    n = 50000
    alpha = [0.05, 0.5, 1.0, 3.0, 150.0]
    x = graft.distributions.Gamma(t(graft, alpha), t(graft, [1.0, 2.0, 1.0, 0.5, 3.0])).sample((n,)).numpy()
    assert x.dtype == np.float64 and (x > 0).all()
    u = torch.special.gammainc(torch.tensor(alpha), torch.tensor(x) * torch.tensor([1.0, 2.0, 1.0, 0.5, 3.0])).numpy()
    for col in range(len(alpha)):  # Kolmogorov-Smirnov against the uniform
        ks = np.max(np.abs(np.sort(u[:, col]) - (np.arange(n) + 0.5) / n))
        assert ks < 1.63 / math.sqrt(n)  # 1% level
    x32 = graft.distributions.Gamma(graft.tensor([0.5, 5.0]), graft.tensor([1.0, 1.0])).sample((n,))
    assert x32.dtype == graft.float32
    np.testing.assert_allclose(x32.numpy().mean(0), [0.5, 5.0], rtol=0.03)


def test_continuous_sample_moments():
    graft.manual_seed(6)
    n = 200000
    D = graft.distributions
    cases = [D.Exponential(t(graft, [0.5, 4.0])), D.Laplace(t(graft, [1.0, -2.0]), t(graft, [0.5, 3.0])),
             D.Chi2(t(graft, [1.0, 7.0])), D.Beta(t(graft, [0.3, 2.0]), t(graft, [0.5, 5.0])),
             D.StudentT(t(graft, [5.0, 9.0]), t(graft, [1.0, 0.0]), t(graft, [2.0, 0.5])),
             D.LogNormal(t(graft, [0.0, 1.0]), t(graft, [0.25, 0.5])), D.Dirichlet(t(graft, [0.2, 1.0, 3.0]))]
    for d in cases:
        x = d.sample((n,)).numpy()
        mean, var = d.mean.numpy(), d.variance.numpy()
        np.testing.assert_allclose(x.mean(0), mean, atol=6 * np.sqrt(var / n).max())
        np.testing.assert_allclose(x.var(0), var, rtol=0.06)
    c = D.Cauchy(t(graft, [1.0]), t(graft, [2.0])).sample((n,)).numpy()[:, 0]
    np.testing.assert_allclose(np.quantile(c, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.05)
    b = D.Beta(t(graft, [0.01]), t(graft, [0.01])).sample((20000,)).numpy()
    assert (b >= 0).all() and (b <= 1).all() and abs(b.mean() - 0.5) < 0.03 and ((b < 0.01) | (b > 0.99)).mean() > 0.9


# -- rsample gradients -----------------------------------------------------------------------------------

def test_gamma_rsample_gradient_matches_torch():
    graft.manual_seed(7)
    alpha = graft.tensor([0.1, 0.7, 1.0, 4.0, 60.0], dtype=graft.float64, requires_grad=True)
    rate = graft.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=graft.float64, requires_grad=True)
    x = graft.distributions.Gamma(alpha, rate).rsample((200,))
    assert x.requires_grad
    x.sum().backward()
    z = (x * rate).detach().numpy()  # the standard gamma draws
    want = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()).expand(200, 5), torch.tensor(z))
    want = (want.numpy() / rate.detach().numpy()).sum(0)
    np.testing.assert_allclose(alpha.grad.numpy(), want, rtol=2e-3)
    np.testing.assert_allclose(rate.grad.numpy(), -(x.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-12)
    # float32 parameters: gradients of the same dtype
    a32 = graft.tensor([0.5, 3.0], requires_grad=True)
    graft.distributions.Chi2(a32).rsample((10,)).sum().backward()
    assert a32.grad.dtype == graft.float32 and bool((a32.grad > 0).all())


def test_reparameterized_gradients_are_unbiased():
    """E[d f(x) / d theta] = d E[f(x)] / d theta, for Gamma, Beta, Dirichlet and StudentT draws."""
    graft.manual_seed(8)
    n = 100000
    alpha = graft.tensor([0.3, 2.0], dtype=graft.float64, requires_grad=True)
    x = graft.distributions.Gamma(alpha, 1.0).rsample((n,))
    (x * x).sum().backward()  # E[x^2] = a (a + 1)
    np.testing.assert_allclose(alpha.grad.numpy() / n, 2 * alpha.detach().numpy() + 1, rtol=0.03)
    a, b = (graft.tensor([2.0], dtype=graft.float64, requires_grad=True),
            graft.tensor([3.0], dtype=graft.float64, requires_grad=True))
    graft.distributions.Beta(a, b).rsample((n,)).sum().backward()  # E[x] = a / (a + b)
    np.testing.assert_allclose([a.grad.item() / n, b.grad.item() / n], [3 / 25, -2 / 25], rtol=0.03)
    conc = graft.tensor([0.5, 1.0, 2.5], dtype=graft.float64, requires_grad=True)
    y = graft.distributions.Dirichlet(conc).rsample((n,))
    (y[:, 0] * 1.0 + y[:, 2] * 3.0).sum().backward()
    c = conc.detach().numpy()
    s = c.sum()
    want = (np.array([1.0, 0.0, 3.0]) * s - (c * [1.0, 0.0, 3.0]).sum()) / s ** 2
    np.testing.assert_allclose(conc.grad.numpy() / n, want, rtol=0.05, atol=0.002)
    df = graft.tensor([6.0], dtype=graft.float64, requires_grad=True)
    loc = graft.tensor([1.0], dtype=graft.float64, requires_grad=True)
    scale = graft.tensor([2.0], dtype=graft.float64, requires_grad=True)
    z = graft.distributions.StudentT(df, loc, scale).rsample((n,))
    ((z - 1.0) ** 2).sum().backward()  # E[(z - loc)^2] = scale^2 df / (df - 2)
    np.testing.assert_allclose([df.grad.item() / n, scale.grad.item() / n, loc.grad.item() / n],
                               [-2 * 4.0 / 16.0, 2 * 2.0 * 6.0 / 4.0, 0.0], rtol=0.08, atol=0.05)


def test_location_scale_rsample_gradients():
    graft.manual_seed(9)
    loc = graft.tensor([0.5, -1.0], dtype=graft.float64, requires_grad=True)
    scale = graft.tensor([2.0, 0.5], dtype=graft.float64, requires_grad=True)
    for name in ("Laplace", "Cauchy"):
        loc.grad = scale.grad = None
        x = getattr(graft.distributions, name)(loc, scale).rsample((100,))
        x.sum().backward()
        close(loc.grad, graft.tensor([100.0, 100.0], dtype=graft.float64))
        close(scale.grad, ((x - loc) / scale).detach().sum(0), rtol=1e-9)
    rate = graft.tensor([0.5, 3.0], dtype=graft.float64, requires_grad=True)
    e = graft.distributions.Exponential(rate).rsample((100,))
    e.sum().backward()
    close(rate.grad, -(e / rate).detach().sum(0), rtol=1e-12)
    loc.grad = scale.grad = None
    y = graft.distributions.LogNormal(loc, scale).rsample((100,))
    y.sum().backward()
    close(loc.grad, y.detach().sum(0), rtol=1e-12)
