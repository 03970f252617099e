"""graft.distributions against torch.distributions (1.13): densities, entropies, KL divergences,
moments and CDFs to 1e-6 (float64, most to 1e-12), sample shapes and dtypes, empirical
frequencies of large samples, reparameterized gradients, validation errors (texts compared with
torch's, ``graft.`` read as ``torch.`` in reprs), constraints."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
from distributions_utils import LIBS, assert_same_errors, both, close, message, t  # noqa: E402
from graft.distributions import constraints  # noqa: E402


# -- values ---------------------------------------------------------------------------------------

def test_normal_values():
    def build(lib):
        d = lib.distributions.Normal(t(lib, [0.0, 1.5, -2.0]), t(lib, [1.0, 0.5, 3.0]))
        x = t(lib, [[0.3, 1.0, -7.0], [2.0, 1.5, 0.0]])
        return [d.log_prob(x), d.entropy(), d.cdf(x), d.mean, d.mode, d.variance, d.stddev, d.perplexity()]

    for g, w in zip(*both(build)):
        close(g, w)
    g, w = both(lambda lib: lib.distributions.Normal(0.5, 2.0).log_prob(lib.tensor(1.0)))
    close(g, w, rtol=1e-6)
    assert g.dtype == graft.float32 and graft.distributions.Normal(0.5, 2.0).batch_shape == graft.Size()


def test_normal_broadcasts_numbers_and_tensors():
    def build(lib):
        d = lib.distributions.Normal(t(lib, [[0.0], [1.0]]), 2.0)
        return d.batch_shape, d.scale, d.log_prob(t(lib, [0.5, 1.5, 2.5]))

    (gs, gscale, glp), (ws, wscale, wlp) = both(build)
    assert tuple(gs) == tuple(ws) == (2, 1)
    assert gscale.dtype == graft.float64
    close(gscale, wscale)
    close(glp, wlp)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli_values(param):
    values = [0.0, 0.2, 0.5, 0.9, 1.0] if param == "probs" else [-30.0, -1.0, 0.0, 2.0, 30.0]

    def build(lib):
        d = lib.distributions.Bernoulli(**{param: t(lib, values)})
        x = t(lib, [[1.0, 0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0, 0.0]])
        return [d.log_prob(x), d.entropy(), d.probs, d.logits, d.mean, d.variance, d.mode,
                d.enumerate_support(), d.enumerate_support(expand=False)]

    for g, w in zip(*both(build)):
        close(g, w)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_values(param):
    values = [[0.2, 0.0, 0.5, 0.3], [1.0, 2.0, 3.0, 4.0]] if param == "probs" else [[0.5, -1.0, 2.0, 0.0],
                                                                                      [-50.0, 3.0, 3.0, 1.0]]

    def build(lib):
        d = lib.distributions.Categorical(**{param: t(lib, values)})
        x = lib.tensor([[0, 3], [2, 1], [1, 1]])
        return [d.log_prob(x), d.entropy(), d.probs, d.logits, d.mode, d.enumerate_support(),
                d.enumerate_support(expand=False), d.mean, d.variance]

    got, want = both(build)
    for g, w in zip(got, want):
        close(g, w)
    assert got[0].dtype == graft.float64 and got[4].dtype == graft.int64


def test_uniform_values():
    def build(lib):
        d = lib.distributions.Uniform(t(lib, [0.0, -1.0]), t(lib, [2.0, 3.0]))
        x = t(lib, [[0.0, 2.9], [1.9, -0.5]])
        outside = lib.distributions.Uniform(t(lib, [0.0, -1.0]), t(lib, [2.0, 3.0]), validate_args=False)
        return [d.log_prob(x), d.entropy(), d.cdf(x), d.icdf(t(lib, [0.25, 0.5])), d.mean, d.variance, d.stddev,
                outside.log_prob(t(lib, [2.0, -1.5])), outside.cdf(t(lib, [5.0, -5.0]))]

    for g, w in zip(*both(build)):
        close(g, w)
    mode = graft.distributions.Uniform(0.0, 1.0).mode
    assert math.isnan(mode.item())


def test_independent_values():
    def build(lib):
        base = lib.distributions.Normal(t(lib, [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]), t(lib, [[1.0, 2.0, 3.0]] * 2))
        d = lib.distributions.Independent(base, 1)
        x = t(lib, [0.5, 0.5, 0.5])
        d2 = lib.distributions.Independent(base, 2)
        return [d.log_prob(x), d.entropy(), d.mean, d.variance, d.mode, d.stddev, d2.log_prob(x), d2.entropy(),
                lib.distributions.Independent(base, 0).log_prob(x)]

    for g, w in zip(*both(build)):
        close(g, w)
    for lib in LIBS:
        base = lib.distributions.Normal(lib.zeros(2, 3), lib.ones(2, 3))
        d = lib.distributions.Independent(base, 1)
        assert (tuple(d.batch_shape), tuple(d.event_shape)) == ((2,), (3,))
        assert d.has_rsample and not d.has_enumerate_support
        assert repr(d.support) == "IndependentConstraint(Real(), 1)"
        assert repr(d).replace("graft.", "torch.") == ("Independent(Normal(loc: torch.Size([2, 3]), "
                                                       "scale: torch.Size([2, 3])), 1)")
        with pytest.raises(ValueError) as info:
            lib.distributions.Independent(base, 3)
        assert str(info.value) == ("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                                   "actual 3 vs 2")
        bern = lib.distributions.Independent(lib.distributions.Bernoulli(lib.ones(2, 3) * 0.5), 1)
        with pytest.raises(NotImplementedError, match="^Enumeration over cartesian product is not implemented$"):
            bern.enumerate_support()
        flat = lib.distributions.Independent(bern.base_dist, 0)
        assert flat.has_enumerate_support and tuple(flat.enumerate_support().shape) == (2, 2, 3)
        # the event shape on the right is checked first (Independent's own sample check)
        with pytest.raises(ValueError) as info:
            d._validate_sample(lib.zeros(3, 2))
        assert message(info) == ("The right-most size of value must match event_shape: torch.Size([3, 2]) vs "
                                 "torch.Size([3]).")


# -- KL divergence ------------------------------------------------------------------------------------

KL_PAIRS = {
    "normal": lambda lib: (lib.distributions.Normal(t(lib, [0.0, 1.0, -1.0]), t(lib, [1.0, 0.5, 2.0])),
                           lib.distributions.Normal(t(lib, [0.5, 1.0, 3.0]), t(lib, [2.0, 0.5, 0.1]))),
    "categorical": lambda lib: (lib.distributions.Categorical(probs=t(lib, [[0.2, 0.0, 0.8], [0.3, 0.3, 0.4]])),
                                lib.distributions.Categorical(logits=t(lib, [[0.0, 1.0, 2.0], [5.0, -1.0, 0.0]]))),
    "categorical_zero_q": lambda lib: (lib.distributions.Categorical(probs=t(lib, [[0.5, 0.5], [1.0, 0.0]])),
                                       lib.distributions.Categorical(probs=t(lib, [[1.0, 0.0], [0.5, 0.5]]))),
    "bernoulli": lambda lib: (lib.distributions.Bernoulli(t(lib, [0.1, 0.0, 1.0, 0.5])),
                              lib.distributions.Bernoulli(t(lib, [0.3, 0.4, 0.0, 1.0]))),
    "uniform": lambda lib: (lib.distributions.Uniform(t(lib, [0.0, 0.0]), t(lib, [1.0, 2.0])),
                            lib.distributions.Uniform(t(lib, [-1.0, 0.5]), t(lib, [2.0, 3.0]))),
    "independent": lambda lib: (lib.distributions.Independent(lib.distributions.Normal(t(lib, [[0.0, 1.0]]),
                                                                                        t(lib, [[1.0, 2.0]])), 1),
                                lib.distributions.Independent(lib.distributions.Normal(t(lib, [[1.0, 1.0]]),
                                                                                        t(lib, [[3.0, 2.0]])), 1)),
    "uniform_normal": lambda lib: (lib.distributions.Uniform(t(lib, [0.0, -1.0]), t(lib, [1.0, 3.0])),
                                   lib.distributions.Normal(t(lib, [0.5, 2.0]), t(lib, [1.0, 0.3]))),
    "normal_uniform": lambda lib: (lib.distributions.Normal(t(lib, [0.5, 2.0]), t(lib, [1.0, 0.3])),
                                   lib.distributions.Uniform(t(lib, [0.0, -1.0]), t(lib, [1.0, 3.0]))),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence(pair):
    got, want = both(lambda lib: lib.distributions.kl_divergence(*KL_PAIRS[pair](lib)))
    close(got, want)


def test_kl_errors_and_registration():
    p = graft.distributions.Normal(0.0, 1.0)
    q = graft.distributions.Categorical(probs=graft.tensor([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="^No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type "
                                                  "Categorical$"):
        graft.distributions.kl_divergence(p, q)
    with pytest.raises(NotImplementedError):  # different reinterpreted_batch_ndims, as PyTorch
        base = graft.distributions.Normal(graft.zeros(2, 2), graft.ones(2, 2))
        graft.distributions.kl_divergence(graft.distributions.Independent(base, 1),
                                          graft.distributions.Independent(base, 2))

    class MyNormal(graft.distributions.Normal):
        pass

    # a subclass uses its base's implementation until it registers its own
    close(graft.distributions.kl_divergence(MyNormal(0.0, 1.0), p), graft.tensor(0.0))

    @graft.distributions.register_kl(MyNormal, graft.distributions.Normal)
    def _kl_mine(p, q):
        return graft.tensor(42.0)

    assert graft.distributions.kl_divergence(MyNormal(0.0, 1.0), p).item() == 42.0
    assert graft.distributions.kl_divergence(p, MyNormal(0.0, 1.0)).item() == 0.0

    class OtherNormal(graft.distributions.Normal):
        pass

    @graft.distributions.register_kl(graft.distributions.Normal, OtherNormal)
    def _kl_other(p, q):
        return graft.tensor(7.0)

    with pytest.warns(RuntimeWarning, match=r"^Ambiguous kl_divergence\(MyNormal, OtherNormal\). Please "
                                            r"register_kl\(MyNormal, OtherNormal\)$"):
        assert graft.distributions.kl_divergence(MyNormal(0.0, 1.0), OtherNormal(0.0, 1.0)).item() == 42.0
    from graft.distributions import kl
    for key in ((MyNormal, graft.distributions.Normal), (graft.distributions.Normal, OtherNormal)):
        del kl._KL_REGISTRY[key]
    kl._KL_MEMOIZE.clear()


# -- sampling ------------------------------------------------------------------------------------------

def sampled_distributions(lib):
    return {
        "normal": lib.distributions.Normal(lib.zeros(2, 3), lib.ones(2, 3)),
        "bernoulli": lib.distributions.Bernoulli(lib.ones(2, 3) * 0.3),
        "categorical": lib.distributions.Categorical(logits=lib.zeros(2, 3, 4)),
        "uniform": lib.distributions.Uniform(lib.zeros(2, 3), lib.ones(2, 3)),
        "independent": lib.distributions.Independent(lib.distributions.Normal(lib.zeros(2, 3), lib.ones(2, 3)), 1),
    }


@pytest.mark.parametrize("name", ["normal", "bernoulli", "categorical", "uniform", "independent"])
def test_sample_shapes_and_dtypes(name):
    g, w = sampled_distributions(graft)[name], sampled_distributions(torch)[name]
    for shape in ((), (5,), (4, 1), graft.Size([3])):
        gs, ws = g.sample(shape), w.sample(torch.Size(tuple(shape)))
        assert tuple(gs.shape) == tuple(ws.shape)
        assert str(gs.dtype).split(".")[-1] == str(ws.dtype).split(".")[-1]
        assert not gs.requires_grad
    assert g.has_rsample == w.has_rsample
    if g.has_rsample:
        assert tuple(g.rsample((2,)).shape) == tuple(w.rsample((2,)).shape)
    else:
        with pytest.raises(NotImplementedError):
            g.rsample()
    with pytest.warns(UserWarning, match="^sample_n will be deprecated. Use .sample\\(\\(n,\\)\\) instead$"):
        assert tuple(g.sample_n(3).shape) == tuple(w.sample((3,)).shape)


def test_categorical_frequencies():
    graft.manual_seed(0)
    probs = graft.tensor([[0.1, 0.0, 0.3, 0.6], [0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0]],
                         dtype=graft.float64)
    d = graft.distributions.Categorical(probs=probs * 3.0)  # unnormalised probs are normalised
    s = d.sample((200000,)).numpy()
    assert s.shape == (200000, 3) and s.dtype == np.int64
    for row in range(3):
        freq = np.bincount(s[:, row], minlength=4) / s.shape[0]
        np.testing.assert_allclose(freq, probs[row].numpy(), atol=0.005)
    assert not (s[:, 0] == 1).any() and (s[:, 2] == 2).all()  # zero-probability categories never drawn
    logits_sample = graft.distributions.Categorical(logits=graft.tensor([0.0, math.log(3.0)])).sample((100000,))
    assert abs(logits_sample.double().mean().item() - 0.75) < 0.006


def test_other_empirical_moments():
    graft.manual_seed(1)
    n = 200000
    b = graft.distributions.Bernoulli(graft.tensor([0.2, 0.9])).sample((n,)).numpy()
    np.testing.assert_allclose(b.mean(0), [0.2, 0.9], atol=0.005)
    assert set(np.unique(b)) == {0.0, 1.0}
    x = graft.distributions.Normal(graft.tensor([1.0, -2.0]), graft.tensor([0.5, 3.0])).sample((n,)).numpy()
    np.testing.assert_allclose(x.mean(0), [1.0, -2.0], atol=0.03)
    np.testing.assert_allclose(x.std(0), [0.5, 3.0], rtol=0.01)
    u = graft.distributions.Uniform(graft.tensor([-1.0]), graft.tensor([3.0])).sample((n,)).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.02


def test_rsample_is_differentiable():
    graft.manual_seed(2)
    loc = graft.tensor([0.5, -1.0], requires_grad=True)
    scale = graft.tensor([2.0, 0.5], requires_grad=True)
    x = graft.distributions.Normal(loc, scale).rsample((1000,))
    assert x.requires_grad
    x.sum().backward()
    eps = ((x - loc) / scale).detach()
    close(loc.grad, graft.tensor([1000.0, 1000.0]))
    close(scale.grad, eps.sum(0), rtol=1e-5, atol=1e-4)
    low = graft.tensor([0.0], requires_grad=True)
    high = graft.tensor([2.0], requires_grad=True)
    y = graft.distributions.Uniform(low, high).rsample((500,))
    y.sum().backward()
    u = (y / 2.0).detach()
    close(high.grad, u.sum(0), rtol=1e-5)
    close(low.grad, (1 - u).sum(0), rtol=1e-5)
    # the log density is differentiable too (a score-function estimator's ingredient)
    loc.grad = None
    graft.distributions.Normal(loc, 1.0).log_prob(graft.tensor([1.0, 1.0])).sum().backward()
    close(loc.grad, graft.tensor([0.5, 2.0]))


def test_expand():
    def build(lib):
        n = lib.distributions.Normal(t(lib, [0.0, 1.0]), t(lib, [1.0, 2.0])).expand((3, 2))
        c = lib.distributions.Categorical(probs=t(lib, [0.2, 0.8])).expand((2,))
        c2 = lib.distributions.Categorical(logits=t(lib, [0.2, 0.8, 0.1])).expand((2,))
        b = lib.distributions.Bernoulli(logits=t(lib, [0.3])).expand((4,))
        b2 = lib.distributions.Bernoulli(probs=t(lib, [0.3])).expand((2,))
        u = lib.distributions.Uniform(t(lib, 0.0), t(lib, 1.0)).expand((2, 2))
        i = lib.distributions.Independent(lib.distributions.Normal(lib.zeros(3), lib.ones(3)), 1).expand((5,))
        return [(tuple(d.batch_shape), tuple(d.event_shape)) for d in (n, c, c2, b, b2, u, i)], [
            n.log_prob(t(lib, [0.5, 0.5])), c.log_prob(lib.tensor([1, 0])), b.log_prob(t(lib, [1.0, 0.0, 1.0, 0.0])),
            u.entropy(), c2.entropy(), b2.entropy(), c2.param_shape, b2.param_shape, c.param_shape]

    (g_shapes, g_values), (w_shapes, w_values) = both(build)
    assert g_shapes == w_shapes
    for g, w in zip(g_values, w_values):
        close(np.asarray(g) if isinstance(g, tuple) else g, np.asarray(w) if isinstance(w, tuple) else w)

    class Custom(graft.distributions.Normal):
        def __init__(self):
            super().__init__(0.0, 1.0)

    with pytest.raises(NotImplementedError, match="^Subclass Custom of Normal that defines a custom __init__ method "
                                                  "must also define a custom .expand\\(\\) method.$"):
        Custom().expand((2,))


# -- validation -----------------------------------------------------------------------------------

INVALID_ARGS = [
    lambda lib: lib.distributions.Normal(t(lib, [0.0, 1.0]), t(lib, [1.0, -1.0])),
    lambda lib: lib.distributions.Normal(t(lib, [float("nan")]), t(lib, [1.0])),
    lambda lib: lib.distributions.Normal(0.0, 0.0),
    lambda lib: lib.distributions.Bernoulli(t(lib, [0.5, 1.5])),
    lambda lib: lib.distributions.Bernoulli(logits=t(lib, [float("nan")])),
    lambda lib: lib.distributions.Categorical(probs=t(lib, [0.5, -0.5, 1.0])),
    lambda lib: lib.distributions.Categorical(logits=t(lib, [[0.0, float("nan")], [0.0, 0.0]])),
    lambda lib: lib.distributions.Uniform(t(lib, [0.0, 2.0]), t(lib, [1.0, 1.0])),
    lambda lib: lib.distributions.Bernoulli(),
    lambda lib: lib.distributions.Categorical(probs=t(lib, [0.5]), logits=t(lib, [0.0])),
    lambda lib: lib.distributions.Categorical(probs=t(lib, 0.5)),
    lambda lib: lib.distributions.Categorical(logits=t(lib, 0.5)),
    lambda lib: lib.distributions.Normal("a", 1.0),
]


@pytest.mark.parametrize("case", range(len(INVALID_ARGS)))
def test_argument_validation_errors_match_torch(case):
    assert_same_errors(INVALID_ARGS[case])


INVALID_VALUES = [
    (lambda lib: lib.distributions.Bernoulli(t(lib, [0.5, 0.5])), lambda lib: t(lib, [1.0, 0.5])),
    (lambda lib: lib.distributions.Categorical(probs=t(lib, [0.5, 0.5])), lambda lib: lib.tensor([2])),
    (lambda lib: lib.distributions.Categorical(probs=t(lib, [0.5, 0.5])), lambda lib: t(lib, [0.5])),
    (lambda lib: lib.distributions.Uniform(t(lib, [0.0]), t(lib, [1.0])), lambda lib: t(lib, [1.5])),
    (lambda lib: lib.distributions.Normal(t(lib, [0.0, 0.0]), t(lib, [1.0, 1.0])), lambda lib: t(lib, [0.0, 0.0, 0.0])),
    (lambda lib: lib.distributions.Normal(0.0, 1.0), lambda lib: 0.5),
    (lambda lib: lib.distributions.Independent(lib.distributions.Normal(lib.zeros(2, 3), lib.ones(2, 3)), 1),
     lambda lib: lib.zeros(3, 2)),
    (lambda lib: lib.distributions.Independent(lib.distributions.Bernoulli(lib.ones(2, 3) * 0.5), 2),
     lambda lib: lib.ones(2, 3) * 2),
]


@pytest.mark.parametrize("case", range(len(INVALID_VALUES)))
def test_sample_validation_errors_match_torch(case):
    make, value = INVALID_VALUES[case]
    assert_same_errors(lambda lib: make(lib).log_prob(value(lib)))


def test_validation_can_be_turned_off():
    d = graft.distributions.Normal(graft.tensor([0.0]), graft.tensor([-1.0]), validate_args=False)
    assert math.isnan(d.log_prob(graft.tensor([0.0])).item())
    b = graft.distributions.Bernoulli(graft.tensor([0.5]), validate_args=False)
    close(b.log_prob(graft.tensor([0.5])), torch.distributions.Bernoulli(torch.tensor([0.5]), validate_args=False)
          .log_prob(torch.tensor([0.5])), rtol=1e-6)
    Distribution = graft.distributions.Distribution
    assert Distribution._validate_args is True
    Distribution.set_default_validate_args(False)
    try:
        graft.distributions.Normal(0.0, -1.0)
        with pytest.raises(ValueError):  # an explicit validate_args still wins
            graft.distributions.Normal(0.0, -1.0, validate_args=True)
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args("yes")
    with pytest.raises(ValueError):
        graft.distributions.Normal(0.0, -1.0)


def test_base_class_and_lazy_properties():
    for lib in LIBS:
        Categorical = lib.distributions.Categorical
        assert isinstance(Categorical.probs, property)
        d = Categorical(probs=t(lib, [0.25, 0.75]))
        assert "logits" not in d.__dict__
        assert repr(d).replace("graft.", "torch.") == "Categorical(probs: torch.Size([2]))"
        d.logits
        assert "logits" in d.__dict__
        assert repr(d).replace("graft.", "torch.") == "Categorical(probs: torch.Size([2]), logits: torch.Size([2]))"
        assert repr(lib.distributions.Bernoulli(0.3)) == "Bernoulli(probs: 0.30000001192092896)"

        class Bare(lib.distributions.Distribution):
            pass

        with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
            bare = Bare()
        for what in ("mean", "mode", "variance"):
            # (PyTorch 2.x's message; torch 1.13 raises with none)
            with pytest.raises(NotImplementedError, match=f"does not implement {what}$" if lib is graft else None):
                getattr(bare, what)
        for method in ("sample", "log_prob", "entropy", "cdf", "icdf", "enumerate_support"):
            with pytest.raises(NotImplementedError):
                getattr(bare, method)(*([] if method in ("sample", "entropy", "enumerate_support") else [lib.ones(1)]))
        assert tuple(bare.batch_shape) == () and tuple(bare._extended_shape((2, 3))) == (2, 3)


def test_support_warning_when_undefined():
    class NoSupport(graft.distributions.Distribution):
        arg_constraints = {}

        def log_prob(self, value):
            self._validate_sample(value)
            return value

    with pytest.warns(UserWarning, match="does not define `support` to enable sample validation"):
        NoSupport().log_prob(graft.ones(1))


# -- constraints -------------------------------------------------------------------------------------

CONSTRAINTS = ["boolean", "real", "real_vector", "positive", "nonnegative", "unit_interval", "simplex",
               "nonnegative_integer", "positive_integer"]
PARAMETRIC = [("greater_than", (1.5,)), ("greater_than_eq", (1.5,)), ("interval", (-1.0, 2.0)),
              ("half_open_interval", (-1.0, 2.0)), ("integer_interval", (0, 3))]
CHECKED = [[0.0, 1.0, 2.0, -1.0], [0.5, 0.5, 0.0, 0.0], [float("nan"), 3.0, -1.0, 2.0], [1.5, 2.0, -1.0, 0.25]]


@pytest.mark.parametrize("name", CONSTRAINTS + [n for n, _ in PARAMETRIC])
def test_constraints_match_torch(name):
    args = dict(PARAMETRIC).get(name)
    results = []
    for lib in LIBS:
        c = getattr(lib.distributions.constraints, name)
        c = c(*args) if args is not None else c
        values = t(lib, CHECKED)
        results.append((repr(c), c.is_discrete, c.event_dim, c.check(values).numpy()))
    (g_repr, g_disc, g_dim, g_check), (w_repr, w_disc, w_dim, w_check) = results
    assert (g_repr, g_disc, g_dim) == (w_repr, w_disc, w_dim)
    np.testing.assert_array_equal(g_check, w_check)


def test_dependent_constraints():
    assert constraints.is_dependent(constraints.dependent)
    assert not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="^Cannot determine validity of dependent constraint$"):
        constraints.dependent.check(graft.ones(1))
    with pytest.raises(NotImplementedError, match="^.is_discrete cannot be determined statically$"):
        constraints.dependent.is_discrete
    with pytest.raises(NotImplementedError, match="^.event_dim cannot be determined statically$"):
        constraints.dependent.event_dim
    assert constraints.is_dependent(constraints.dependent())
    with pytest.raises(NotImplementedError):
        constraints.Constraint().check(graft.ones(1))
    c = constraints.dependent(is_discrete=True, event_dim=1)
    assert c.is_discrete and c.event_dim == 1
    support = graft.distributions.Uniform.support
    assert constraints.is_dependent(support) and isinstance(support, property)
    assert support.is_discrete is False and support.event_dim == 0
    assert repr(graft.distributions.Categorical(probs=graft.ones(3)).support) == ("IntegerInterval(lower_bound=0, "
                                                                                 "upper_bound=2)")
    with pytest.raises(ValueError, match="^Expected value.dim\\(\\) >= 2 but got 1$"):
        constraints.independent(constraints.real, 2).check(graft.ones(3))


def test_broadcast_errors_match_torch():
    errors = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.distributions.Normal(lib.zeros(2, 3), lib.ones(4, 1, 2))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_warnings_are_not_raised_by_ordinary_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = graft.distributions.Categorical(logits=graft.zeros(3))
        d.log_prob(d.sample((4,)))
        graft.distributions.kl_divergence(d, d)


def test_graft_distributions_loads_on_first_use():
    import subprocess
    import sys
    code = ("import sys, graft; assert 'graft.distributions' not in sys.modules; "
            "d = graft.distributions.Normal(0.0, 1.0); from graft import distributions; "
            "assert distributions is graft.distributions; print(type(d).__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=None, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "graft.distributions.normal"
