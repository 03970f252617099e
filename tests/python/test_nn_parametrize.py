"""Tests of graft.nn.utils.parametrize (register_parametrization, remove_parametrizations,
cached, ...), graft.nn.utils.parametrizations (weight_norm, spectral_norm) and the hook-based
graft.nn.utils.weight_norm / spectral_norm. The parity tier runs the same steps in PyTorch 1.13
(torch's weights copied into graft through NumPy) and compares values, gradients, state_dict keys
and error texts; PyTorch 1.13 has no parametrizations.weight_norm, so its reference is PyTorch
2.x's parametrization rebuilt in the test from torch._weight_norm and torch.norm_except_dim."""
import copy
import io
import pickle
import types
import warnings

import numpy as np
import pytest

import graft
import graft.nn as gnn
from graft.nn.utils import parametrizations as gparams
from graft.nn.utils import parametrize as gparam

from nn_parity_utils import copy_state, rand, run_both


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")


def zoo(lib):
    """Parametrizations built on ``lib.nn.Module`` (lib: torch or graft)."""
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).T

        def right_inverse(self, a):
            return a.triu()

    class Scale(lib.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, x):
            return x * self.c

        def right_inverse(self, x):
            return x / self.c

    class Double(lib.nn.Module):  # no right_inverse: the identity at registration, no assignment
        def forward(self, x):
            return x * 2

    class Split(lib.nn.Module):  # two originals: x = a + b
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x * 0.25, x * 0.75

    class RankOne(lib.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, z):
            return [z[:, 0] * 1, z[0, :] * 1]

    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0

        def forward(self, x):
            self.calls += 1
            return x.exp()

    return types.SimpleNamespace(Symmetric=Symmetric, Scale=Scale, Double=Double, Split=Split, RankOne=RankOne,
                                 Counter=Counter)


def linear_pair(torch, n_in=5, n_out=5):
    """A float64 Linear in torch and its copy in graft."""
    t, g = torch.nn.Linear(n_in, n_out).double(), gnn.Linear(n_in, n_out).double()
    copy_state(t, g)
    return t, g


def npy(x):
    return x.detach().numpy()


def close(g, t, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(npy(g), npy(t), rtol=rtol, atol=atol)


def error_of(fn):
    """(type name, text) of what ``fn()`` raises; graft's type names read as torch's."""
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).replace("graft.", "torch.")


# ---- register_parametrization ----

def test_symmetric_forward_grad_state_dict_parity(torch):
    t, g = linear_pair(torch)
    w_before = g.weight
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Symmetric())
    assert gparam.register_parametrization(g, "weight", zoo(graft).Symmetric()) is g
    assert type(g).__name__ == "ParametrizedLinear" and isinstance(g, gnn.Linear)
    assert gparam.type_before_parametrizations(g) is gnn.Linear
    assert gparam.is_parametrized(g) and gparam.is_parametrized(g, "weight") and not gparam.is_parametrized(g, "bias")
    assert "weight" not in g._parameters
    # right_inverse ran on the weight, which stays the same object (an optimizer holding it needs no update)
    assert g.parametrizations.weight.original is w_before
    close(g.parametrizations.weight.original, t.parametrizations.weight.original)
    assert np.allclose(npy(g.weight), npy(g.weight).T) and g.weight.grad_fn is not None
    assert list(g.state_dict()) == list(t.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    run_both(torch, t, g, [rand(3, 5)])
    assert repr(g) == repr(t)


def test_state_dict_round_trip_between_frameworks(torch):
    t, g = linear_pair(torch)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Symmetric())
    gparam.register_parametrization(g, "weight", zoo(graft).Symmetric())
    state = {k: graft.from_numpy(v.numpy() + 1.0) for k, v in t.state_dict().items()}
    result = g.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    t.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in state.items()})
    close(g.weight, t.weight)
    close(g.bias, t.bias)
    with pytest.raises(RuntimeError, match="Missing key"):
        g.load_state_dict({"bias": state["bias"], "weight": state["parametrizations.weight.original"]})


def test_assignment_uses_right_inverse(torch):
    t, g = linear_pair(torch)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Symmetric())
    gparam.register_parametrization(g, "weight", zoo(graft).Symmetric())
    original = g.parametrizations.weight.original
    a = rand(5, 5, seed=3)
    a = a + a.T
    t.weight = torch.tensor(a)
    g.weight = graft.tensor(a)
    assert g.parametrizations.weight.original is original and original.requires_grad
    close(original, t.parametrizations.weight.original)
    np.testing.assert_allclose(npy(g.weight), a, rtol=1e-12)


def test_chained_parametrizations(torch):
    t, g = linear_pair(torch)
    tz, gz = zoo(torch), zoo(graft)
    for module, P, z in ((t, torch.nn.utils.parametrize, tz), (g, gparam, gz)):
        P.register_parametrization(module, "weight", z.Symmetric())
        P.register_parametrization(module, "weight", z.Scale(3.0))
        P.register_parametrization(module, "weight", z.Double(), unsafe=True)
    assert len(g.parametrizations.weight) == 3 and g.parametrizations.weight.unsafe
    assert t.parametrizations.weight.unsafe
    close(g.parametrizations.weight.original, t.parametrizations.weight.original)
    run_both(torch, t, g, [rand(2, 5)])
    # assignment needs a right_inverse in every parametrization
    assert error_of(lambda: setattr(g, "weight", graft.ones(5, 5, dtype=graft.float64))) == \
        error_of(lambda: setattr(t, "weight", torch.ones(5, 5, dtype=torch.float64)))


def test_several_originals(torch):
    t, g = linear_pair(torch, 4, 3)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Split())
    gparam.register_parametrization(g, "weight", zoo(graft).Split())
    plist = g.parametrizations.weight
    assert not plist.is_tensor and plist.ntensors == 2 and not hasattr(plist, "original")
    assert isinstance(plist.original0, gnn.Parameter) and plist.original1.requires_grad
    assert list(g.state_dict()) == list(t.state_dict())
    close(plist.original1, t.parametrizations.weight.original1)
    run_both(torch, t, g, [rand(2, 4)])
    # assigning goes through right_inverse into both originals
    a = rand(3, 4, seed=5)
    g.weight = graft.tensor(a)
    t.weight = torch.tensor(a)
    close(plist.original0, t.parametrizations.weight.original0)
    np.testing.assert_allclose(npy(plist.original0), a * 0.25)


def test_rank_one_list_originals_change_shape(torch):
    t, g = linear_pair(torch, 4, 3)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).RankOne())
    gparam.register_parametrization(g, "weight", zoo(graft).RankOne())
    assert tuple(g.parametrizations.weight.original0.shape) == (3,)
    assert tuple(g.parametrizations.weight.original1.shape) == (4,)
    close(g.weight, t.weight)
    run_both(torch, t, g, [rand(2, 4)])


class _WithBuffer:
    """A module with a buffer ``scale`` (built for torch or graft)."""

    @staticmethod
    def make(lib):
        class Holder(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", lib.ones(3, 3, dtype=lib.float64) * 2)

            def forward(self, x):
                return x @ self.scale
        return Holder()


def test_buffer_parametrization(torch):
    t, g = _WithBuffer.make(torch), _WithBuffer.make(graft)
    torch.nn.utils.parametrize.register_parametrization(t, "scale", zoo(torch).Symmetric())
    gparam.register_parametrization(g, "scale", zoo(graft).Symmetric())
    assert "original" in g.parametrizations.scale._buffers and not list(g.parameters())
    assert list(g.state_dict()) == list(t.state_dict()) == ["parametrizations.scale.original"]
    close(g.scale, t.scale)
    gparam.remove_parametrizations(g, "scale")
    torch.nn.utils.parametrize.remove_parametrizations(t, "scale")
    assert "scale" in g._buffers and list(g.state_dict()) == ["scale"]
    close(g.scale, t.scale)


def test_training_mode_follows_the_module():
    m = gnn.Linear(3, 3).eval()
    p = zoo(graft).Symmetric()
    gparam.register_parametrization(m, "weight", p)
    assert not p.training
    m.train()
    assert p.training


# ---- remove_parametrizations ----

@pytest.mark.parametrize("leave", [True, False])
def test_remove_single_original(torch, leave):
    t, g = linear_pair(torch)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Symmetric())
    gparam.register_parametrization(g, "weight", zoo(graft).Symmetric())
    original = g.parametrizations.weight.original
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight", leave_parametrized=leave)
    assert gparam.remove_parametrizations(g, "weight", leave_parametrized=leave) is g
    assert type(g) is gnn.Linear and not hasattr(g, "parametrizations") and not gparam.is_parametrized(g)
    assert g.weight is original and isinstance(g.weight, gnn.Parameter) and g.weight.requires_grad
    assert g.weight.grad_fn is None
    assert list(g.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    close(g.weight, t.weight)
    # the triangle alone or the symmetric matrix: which one is left matters
    assert np.allclose(npy(g.weight), npy(g.weight).T) == leave
    run_both(torch, t, g, [rand(2, 5)])


def test_remove_several_originals(torch):
    t, g = linear_pair(torch, 4, 3)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Split())
    gparam.register_parametrization(g, "weight", zoo(graft).Split())
    assert error_of(lambda: gparam.remove_parametrizations(g, "weight", leave_parametrized=False)) == \
        error_of(lambda: torch.nn.utils.parametrize.remove_parametrizations(t, "weight", leave_parametrized=False))
    assert gparam.is_parametrized(g, "weight")  # the failed call changed nothing
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    gparam.remove_parametrizations(g, "weight")
    assert isinstance(g.weight, gnn.Parameter) and g.weight.requires_grad and g.weight.is_leaf
    close(g.weight, t.weight)
    assert type(g) is gnn.Linear


def test_remove_one_of_two():
    m = gnn.Linear(3, 3)
    gparam.register_parametrization(m, "weight", zoo(graft).Symmetric())
    gparam.register_parametrization(m, "bias", zoo(graft).Scale(2.0))
    parametrized_class = type(m)
    gparam.remove_parametrizations(m, "weight")
    assert type(m) is parametrized_class and not hasattr(parametrized_class, "weight")
    assert list(m.state_dict()) == ["weight", "parametrizations.bias.original"]
    gparam.remove_parametrizations(m, "bias", leave_parametrized=False)
    assert type(m) is gnn.Linear and list(m.state_dict()) == ["weight", "bias"]


def test_class_is_per_module():
    a, b = gnn.Linear(3, 3), gnn.Linear(3, 3)
    gparam.register_parametrization(a, "weight", zoo(graft).Symmetric())
    assert type(b) is gnn.Linear and isinstance(b.weight, gnn.Parameter)
    gparam.register_parametrization(b, "bias", zoo(graft).Scale(2.0))
    assert type(a) is not type(b) and not hasattr(type(b), "weight")


# ---- cached() ----

def test_cached_parity(torch):
    counts = []
    for lib, P in ((torch, torch.nn.utils.parametrize), (graft, gparam)):
        m = lib.nn.Linear(3, 3)
        counter = zoo(lib).Counter()
        P.register_parametrization(m, "weight", counter)
        base = counter.calls  # the registration's own check
        with P.cached():
            first = m.weight
            assert m.weight is first
            with P.cached():
                assert m.weight is first
            assert m.weight is first  # the inner block left the cache alone
        inside = counter.calls - base
        assert m.weight is not first
        counts.append((base, inside, counter.calls - base))
    assert counts[0] == counts[1] == (1, 1, 2)
    assert gparam._cache == {}


def test_cached_clears_after_an_error():
    m = gnn.Linear(3, 3)
    gparam.register_parametrization(m, "weight", zoo(graft).Counter())
    with pytest.raises(KeyError):
        with gparam.cached():
            m.weight
            raise KeyError("boom")
    assert gparam._cache == {} and gparam._cache_enabled == 0


# ---- copies, pickling, transfer ----

def test_deepcopy_and_pickle(torch):
    m = gnn.Linear(3, 3)
    gparam.register_parametrization(m, "weight", zoo(graft).Symmetric())
    c = copy.deepcopy(m)
    assert type(c) is type(m)
    assert c.parametrizations.weight.original is not m.parametrizations.weight.original
    close(c.weight, m.weight)
    with graft.no_grad():
        c.parametrizations.weight.original.add_(1.0)
    assert not np.allclose(npy(c.weight), npy(m.weight))
    t = torch.nn.Linear(3, 3)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", zoo(torch).Symmetric())
    assert error_of(lambda: pickle.dumps(m)) == error_of(lambda: pickle.dumps(t))
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        graft.save(m, io.BytesIO())


def test_transfer_parametrizations_and_params(torch):
    t_from, g_from = linear_pair(torch)
    t_to, g_to = linear_pair(torch)
    torch.nn.utils.parametrize.register_parametrization(t_from, "weight", zoo(torch).Symmetric())
    gparam.register_parametrization(g_from, "weight", zoo(graft).Symmetric())
    torch.nn.utils.parametrize.transfer_parametrizations_and_params(t_from, t_to)
    assert gparam.transfer_parametrizations_and_params(g_from, g_to) is g_to
    assert g_to.parametrizations.weight.original is g_from.parametrizations.weight.original
    close(g_to.weight, t_to.weight)
    assert list(g_to.state_dict()) == list(t_to.state_dict())
    fresh = gparam.transfer_parametrizations_and_params(g_from, gnn.Identity(), "weight")
    close(fresh.weight, g_from.weight)


# ---- error texts ----

def _registration_errors(lib, P):
    """Each failing registration, as a function of nothing."""
    z = zoo(lib)

    class Returns(lib.nn.Module):
        def __init__(self, out, inverse=None):
            super().__init__()
            self.out, self.inverse = out, inverse

        def forward(self, *x):
            return self.out(x[0])

        def right_inverse(self, x):
            return x if self.inverse is None else self.inverse(x)

    f64 = lib.float64

    def reg(p, unsafe=False, twice=False):
        m = lib.nn.Linear(3, 3)
        if twice:
            P.register_parametrization(m, "weight", z.Scale(2.0))
        return lambda: P.register_parametrization(m, "weight", p, unsafe=unsafe)
    return [
        lambda: P.register_parametrization(lib.nn.Linear(3, 3), "nope", z.Symmetric()),
        reg(Returns(lambda x: x[:2])),
        reg(Returns(lambda x: x.to(f64))),
        reg(Returns(lambda x: 1.0)),
        reg(Returns(lambda x: x, lambda x: 3)),
        reg(Returns(lambda x: x, lambda x: (x, 3))),
        reg(Returns(lambda x: x, lambda x: x.to(f64)), unsafe=True),
        reg(Returns(lambda x: x[:2]), twice=True),
        reg(Returns(lambda x: x.to(f64)), twice=True),
        reg(Returns(lambda x: "a"), twice=True),
        reg(Returns(lambda x: x, lambda x: x[:2]), twice=True),
        reg(Returns(lambda x: x, lambda x: x.to(f64)), twice=True),
        reg(Returns(lambda x: x, lambda x: [x]), twice=True),
        lambda: P.ParametrizationList([], lib.ones(2)),
        lambda: P.remove_parametrizations(lib.nn.Linear(3, 3), "weight"),
    ]


def test_registration_error_texts(torch):
    t_cases = _registration_errors(torch, torch.nn.utils.parametrize)
    g_cases = _registration_errors(graft, gparam)
    for i, (t_case, g_case) in enumerate(zip(t_cases, g_cases)):
        assert error_of(g_case) == error_of(t_case), i


def test_failed_registration_changes_nothing():
    m = gnn.Linear(3, 3)
    weight = m.weight

    class Shrink(gnn.Module):
        def forward(self, x):
            return x[:2]
    with pytest.raises(ValueError, match="may not change the shape"):
        gparam.register_parametrization(m, "weight", Shrink())
    assert type(m) is gnn.Linear and m.weight is weight and not hasattr(m, "parametrizations")
    gparam.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert tuple(m.weight.shape) == (2, 3)


def _assignment_errors(lib, P):
    """Assignments to a parametrized weight that fail, each as a function of nothing."""
    class BadInverse(lib.nn.Module):  # right_inverse behaves at registration only
        def __init__(self, inverse):
            super().__init__()
            self.inverse, self.first = inverse, True

        def forward(self, x):
            return x

        def right_inverse(self, x):
            if self.first:
                self.first = False
                return x
            return self.inverse(x)

    def assign(p):
        m = lib.nn.Linear(3, 3)
        P.register_parametrization(m, "weight", p)
        return lambda: setattr(m, "weight", lib.zeros(3, 3))
    return [
        assign(BadInverse(lambda x: 1)),
        assign(BadInverse(lambda x: x.to(lib.float64))),
        assign(zoo(lib).Double()),
    ]


def test_assignment_error_texts(torch):
    for i, (t_case, g_case) in enumerate(zip(_assignment_errors(torch, torch.nn.utils.parametrize),
                                             _assignment_errors(graft, gparam))):
        assert error_of(g_case) == error_of(t_case), i


def test_several_originals_assignment_error_texts(torch):
    texts = []
    for lib, P in ((torch, torch.nn.utils.parametrize), (graft, gparam)):
        cases = []
        for bad in (lambda x: x, lambda x: (x,), lambda x: (x, 1), lambda x: (x, x.to(lib.float64))):
            m = lib.nn.Linear(3, 3)
            split = zoo(lib).Split()
            P.register_parametrization(m, "weight", split)
            split.right_inverse = bad
            cases.append(error_of(lambda: setattr(m, "weight", lib.zeros(3, 3))))
        texts.append(cases)
    assert texts[0] == texts[1]


# ---- parametrizations.weight_norm ----

def torch_weight_norm(torch, module, dim):
    """PyTorch 2.x's parametrizations.weight_norm, rebuilt on PyTorch 1.13 (which lacks it)."""
    class WeightNorm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dim = -1 if dim is None else dim

        def forward(self, weight_g, weight_v):
            return torch._weight_norm(weight_v, weight_g, self.dim)

        def right_inverse(self, weight):
            return torch.norm_except_dim(weight, 2, self.dim), weight
    torch.nn.utils.parametrize.register_parametrization(module, "weight", WeightNorm(), unsafe=True)
    return module


def conv_pair(torch, transposed=False):
    """A float64 Conv2d (or ConvTranspose2d) 3 -> 4 channels, kernel 3, in torch and in graft."""
    kind = "ConvTranspose2d" if transposed else "Conv2d"
    t, g = getattr(torch.nn, kind)(3, 4, 3).double(), getattr(gnn, kind)(3, 4, 3).double()
    copy_state(t, g)
    return t, g


@pytest.mark.parametrize("layer,dim", [("linear", 0), ("linear", 1), ("linear", None), ("conv", 0), ("conv", 1),
                                       ("conv", -2), ("conv", None)])
def test_weight_norm_parity(torch, layer, dim):
    t, g = linear_pair(torch, 5, 4) if layer == "linear" else conv_pair(torch)
    weight = npy(g.weight).copy()
    torch_weight_norm(torch, t, dim)
    assert gparams.weight_norm(g, dim=dim) is g
    plist = g.parametrizations.weight
    assert list(g.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert tuple(plist.original0.shape) == tuple(t.parametrizations.weight.original0.shape)
    close(plist.original0, t.parametrizations.weight.original0)  # g: norms computed by each framework
    np.testing.assert_allclose(npy(g.weight), weight, rtol=1e-12)  # w = g v / ||v|| is w again
    x = rand(2, 5) if layer == "linear" else rand(2, 3, 6, 6)
    run_both(torch, t, g, [x], train=True)


def test_weight_norm_matches_legacy_torch_values(torch):
    t, g = linear_pair(torch, 5, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(t)
    gparams.weight_norm(g)
    close(g.parametrizations.weight.original0, t.weight_g)
    close(g.parametrizations.weight.original1, t.weight_v)


def test_weight_norm_remove_and_scale(torch):
    t, g = linear_pair(torch, 5, 4)
    torch_weight_norm(torch, t, 0)
    gparams.weight_norm(g)
    with graft.no_grad():
        g.parametrizations.weight.original0.mul_(2.0)
    with torch.no_grad():
        t.parametrizations.weight.original0.mul_(2.0)
    close(g.weight, t.weight)
    torch.nn.utils.parametrize.remove_parametrizations(t, "weight")
    gparam.remove_parametrizations(g, "weight")
    assert type(g) is gnn.Linear and isinstance(g.weight, gnn.Parameter) and g.weight.is_leaf
    close(g.weight, t.weight)


def test_weight_norm_legacy_keys_hook():
    hook = gparams._legacy_weight_norm_keys("weight")
    g_val, v_val = graft.ones(4, 1), graft.ones(4, 5)
    state = {"enc.weight_g": g_val, "enc.weight_v": v_val, "enc.bias": graft.zeros(4)}
    hook(state, "enc.", {}, True, [], [], [])
    assert sorted(state) == ["enc.bias", "enc.parametrizations.weight.original0",
                             "enc.parametrizations.weight.original1"]
    assert state["enc.parametrizations.weight.original1"] is v_val
    m = gnn.Sequential(gnn.Linear(5, 4))
    gparams.weight_norm(m[0])
    sd = m.state_dict()
    state = {"0.bias": sd["0.bias"], "0.weight_g": sd["0.parametrizations.weight.original0"] * 3,
             "0.weight_v": sd["0.parametrizations.weight.original1"]}
    g_scaled = npy(state["0.weight_g"]).copy()
    gparams._legacy_weight_norm_keys("weight")(state, "0.", {}, True, [], [], [])
    m.load_state_dict(state)
    np.testing.assert_allclose(npy(m[0].parametrizations.weight.original0), g_scaled)


# ---- parametrizations.spectral_norm ----

def set_unit(buf, seed):
    """Fills a torch buffer with a random unit vector (away from the power method's fixed point)."""
    v = np.random.default_rng(seed).standard_normal(tuple(buf.shape))
    buf.copy_(buf.new_tensor(v / np.linalg.norm(v)))


def _spectral_pair(torch, layer, **kwargs):
    t, g = (linear_pair(torch, 5, 4) if layer == "linear"
            else conv_pair(torch, transposed=layer == "convT"))
    torch.nn.utils.parametrizations.spectral_norm(t, **kwargs)
    gparams.spectral_norm(g, **kwargs)
    sn = t.parametrizations.weight[0]
    with torch.no_grad():
        set_unit(sn._u, 1)
        set_unit(sn._v, 2)
    return t, g


@pytest.mark.parametrize("layer,kwargs", [("linear", {}), ("linear", {"n_power_iterations": 3}),
                                          ("conv", {"dim": 1}), ("conv", {"dim": -3, "eps": 1e-3}),
                                          ("convT", {})])
def test_spectral_norm_parity(torch, layer, kwargs):
    t, g = _spectral_pair(torch, layer, **kwargs)
    assert list(g.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original", "parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    t_sn, g_sn = t.parametrizations.weight[0], g.parametrizations.weight[0]
    assert g_sn.dim == t_sn.dim and g_sn.eps == t_sn.eps and g_sn.n_power_iterations == t_sn.n_power_iterations
    x = rand(2, 5) if layer == "linear" else rand(2, 3, 6, 6)
    u_start = t_sn._u.numpy().copy()
    run_both(torch, t, g, [x], train=True)  # copies torch's state (u, v) first
    assert not np.allclose(t_sn._u.numpy(), u_start, atol=1e-4)  # u moved: the check below means something
    close(g_sn._u, t_sn._u)
    close(g_sn._v, t_sn._v)
    u_trained = g_sn._u.numpy().copy()
    g_sn_u = g_sn._u
    g.eval()
    t.eval()
    close(g.weight, t.weight)
    np.testing.assert_array_equal(g_sn._u.numpy(), u_trained)  # eval: no power iteration
    g.train()
    g.weight
    assert g_sn._u is g_sn_u and not np.array_equal(g_sn._u.numpy(), u_trained)  # updated in place


def test_spectral_norm_estimate_and_vector():
    rng = np.random.default_rng(0)
    q1, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    q2, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    w = q1[:, :4] @ np.diag([5.0, 1.0, 0.5, 0.1]) @ q2.T
    m = gnn.Linear(4, 6).double()
    with graft.no_grad():
        m.weight.copy_(graft.tensor(w))
    gparams.spectral_norm(m)  # 15 power steps at registration
    m.eval()
    np.testing.assert_allclose(np.linalg.norm(npy(m.weight), 2), 1.0, rtol=1e-10)
    sn = m.parametrizations.weight[0]
    np.testing.assert_allclose(np.linalg.norm(sn._u.numpy()), 1.0, rtol=1e-12)
    b = gnn.Linear(3, 3).double()
    gparams.spectral_norm(b, name="bias")
    np.testing.assert_allclose(np.linalg.norm(npy(b.bias)), 1.0, rtol=1e-12)
    assert not hasattr(b.parametrizations.bias[0], "_u")


def test_spectral_norm_error_texts(torch):
    def cases(lib, utils):
        return [lambda: utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), name="nope"),
                lambda: utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), dim=2),
                lambda: utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), dim=-3),
                lambda: utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3), n_power_iterations=0)]
    for t_case, g_case in zip(cases(torch, torch.nn.utils), cases(graft, graft.nn.utils)):
        assert error_of(g_case) == error_of(t_case)


# ---- hook-based weight_norm / spectral_norm ----

@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm_parity(torch, dim):
    t, g = linear_pair(torch, 5, 4)
    torch.nn.utils.weight_norm(t, dim=dim)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        assert graft.nn.utils.weight_norm(g, dim=dim) is g
    assert list(g.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert tuple(g.weight_g.shape) == tuple(t.weight_g.shape)
    close(g.weight_g, t.weight_g)
    close(g.weight, t.weight)  # set at registration already
    with graft.no_grad():
        g.weight_g.mul_(0.5)
    with torch.no_grad():
        t.weight_g.mul_(0.5)
    run_both(torch, t, g, [rand(3, 5)], train=True)
    torch.nn.utils.remove_weight_norm(t)
    graft.nn.utils.remove_weight_norm(g)
    assert list(g.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert isinstance(g.weight, gnn.Parameter) and not g._forward_pre_hooks
    close(g.weight, t.weight)


def test_legacy_weight_norm_errors(torch):
    def cases(lib):
        def twice():
            m = lib.nn.utils.weight_norm(lib.nn.Linear(3, 3))
            lib.nn.utils.weight_norm(m)
        return [twice, lambda: lib.nn.utils.remove_weight_norm(lib.nn.Linear(3, 3))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for t_case, g_case in zip(cases(torch), cases(graft)):
            assert error_of(g_case) == error_of(t_case)


@pytest.mark.parametrize("layer,kwargs", [("linear", {}), ("conv", {"n_power_iterations": 2}), ("convT", {})])
def test_legacy_spectral_norm_parity(torch, layer, kwargs):
    t, g = (linear_pair(torch, 5, 4) if layer == "linear" else conv_pair(torch, transposed=layer == "convT"))
    torch.nn.utils.spectral_norm(t, **kwargs)
    assert graft.nn.utils.spectral_norm(g, **kwargs) is g
    keys = ["bias", "weight_orig", "weight_u", "weight_v"]
    assert list(g.state_dict()) == list(t.state_dict()) == keys
    with torch.no_grad():
        set_unit(t.weight_u, 3)
        set_unit(t.weight_v, 4)
    x = rand(2, 5) if layer == "linear" else rand(2, 3, 6, 6)
    u_start = t.weight_u.numpy().copy()
    run_both(torch, t, g, [x], train=True)  # copies torch's state (u, v) first
    assert not np.allclose(t.weight_u.numpy(), u_start, atol=1e-4)  # u moved: the check below means something
    close(g.weight_u, t.weight_u)
    close(g.weight_v, t.weight_v)
    u_trained = t.weight_u.numpy().copy()
    run_both(torch, t, g, [x], train=False)  # copies torch's trained u into graft, which must keep it
    np.testing.assert_array_equal(g.weight_u.numpy(), u_trained)
    torch.nn.utils.remove_spectral_norm(t)
    graft.nn.utils.remove_spectral_norm(g)
    assert list(g.state_dict()) == list(t.state_dict()) == ["bias", "weight"] and not g._state_dict_hooks
    close(g.weight, t.weight)


def test_legacy_spectral_norm_metadata_and_errors(torch):
    t = torch.nn.Sequential(torch.nn.Linear(3, 3))
    g = gnn.Sequential(gnn.Linear(3, 3))
    torch.nn.utils.spectral_norm(t[0])
    graft.nn.utils.spectral_norm(g[0])
    assert g.state_dict()._metadata["0"] == t.state_dict()._metadata["0"] == {
        "version": 1, "spectral_norm": {"weight.version": 1}}
    assert g.state_dict()._metadata["0"]["spectral_norm"] == {"weight.version": 1}  # again: no duplicate-key error
    assert isinstance(g[0].weight, graft.Tensor) and "weight" not in g[0]._parameters

    def cases(lib):
        def twice():
            lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(lib.nn.Linear(3, 3)))
        return [twice, lambda: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(3, 3)),
                lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(3, 3, bias=False), name="bias"),
                lambda: lib.nn.utils.spectral_norm(lib.nn.Linear(3, 3), n_power_iterations=0)]
    for t_case, g_case in zip(cases(torch), cases(graft)):
        assert error_of(g_case) == error_of(t_case)


def test_exports():
    utils = graft.nn.utils
    assert utils.parametrize is gparam and utils.parametrizations is gparams
    assert utils.weight_norm.__module__ == "graft.nn.utils.weight_norm"
    assert utils.spectral_norm.__module__ == "graft.nn.utils.spectral_norm"
    for name in ("remove_weight_norm", "remove_spectral_norm"):
        assert callable(getattr(utils, name)) and name in utils.__all__
    assert callable(gparams.orthogonal) and "orthogonal" in gparams.__all__  # (tested in test_orthogonal.py)


def test_sgd_steps_on_parametrized_model_parity(torch):
    t, g = linear_pair(torch, 5, 4)
    torch_weight_norm(torch, t, 0)
    gparams.weight_norm(g)
    copy_state(t, g)
    t_opt = torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    g_opt = graft.optim.SGD(g.parameters(), lr=0.1, momentum=0.9)
    x, y = rand(6, 5, seed=1), rand(6, 4, seed=2)
    for _ in range(3):
        for opt, model, lib in ((t_opt, t, torch), (g_opt, g, graft)):
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
    for name, value in t.state_dict().items():
        close(g.state_dict()[name], value, rtol=1e-10, atol=1e-12)
