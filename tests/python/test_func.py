"""Parity tests of graft.func (torch.func) against functorch 1.13 (Debian's python3-torch): grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian and vmap on small float64 functions, run on the
same values in both libraries and compared numerically, with pytree inputs and outputs, argnums,
has_aux, in_dims/out_dims and compositions (grad of grad, jacrev of jacrev, vmap of grad: the
per-sample gradients of a graft.nn model through functional_call). Error messages are compared
with functorch's where 1.13 has the message of torch.func, and with torch.func 2.x's text
(written here) where graft follows 2.x: out_dims=None, chunk_size, functional_call's checks and
stack_module_state, which functorch 1.13 lacks."""
import numpy as np
import pytest

import graft
import graft.func as gfunc
from nn_parity_utils import copy_state

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
functorch = pytest.importorskip("functorch")


# ---------------------------------------------------------------------------------------------
# helpers


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pair(a):
    """The NumPy array ``a`` as a torch and a graft tensor (float64, not requiring grad)."""
    return torch.tensor(a), graft.tensor(a)


def tree(x):
    """``(leaves, structure)`` of a nested tuple/list/dict, tensors of either library as ``*``."""
    if isinstance(x, (tuple, list)):
        parts = [tree(v) for v in x]
        return [leaf for p in parts for leaf in p[0]], (type(x).__name__, [p[1] for p in parts])
    if isinstance(x, dict):
        parts = [tree(v) for v in x.values()]
        return [leaf for p in parts for leaf in p[0]], ("dict", list(x), [p[1] for p in parts])
    return [x], "*"


def assert_tree_close(got, expected, rtol=1e-10, atol=1e-12):
    """graft's ``got`` has ``expected``'s (torch) structure, shapes and values."""
    got_leaves, got_structure = tree(got)
    exp_leaves, exp_structure = tree(expected)
    assert got_structure == exp_structure
    for g, e in zip(got_leaves, exp_leaves):
        assert isinstance(g, graft.Tensor) and isinstance(e, torch.Tensor)
        assert tuple(g.shape) == tuple(e.shape)
        np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=rtol, atol=atol)


def assert_plain(result):
    """Every tensor of ``result`` is a plain tensor: no grad requirement, no graph kept alive."""
    for t in tree(result)[0]:
        assert not t.requires_grad and t.grad_fn is None


# ---------------------------------------------------------------------------------------------
# grad, grad_and_value


def _f2(x, y):
    return (x.sin() * y).sum() + (x * x * y.cos()).sum()


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_argnums_matches_functorch(argnums):
    (tx, gx), (ty, gy) = pair(rand(3, 2)), pair(rand(3, 2, seed=1))
    got = gfunc.grad(_f2, argnums=argnums)(gx, gy)
    assert_tree_close(got, functorch.grad(_f2, argnums=argnums)(tx, ty))
    assert_plain(got)
    assert gx.grad is None and not gx.requires_grad and not gy.requires_grad


def _tree_loss(params, batch):
    h = (batch["x"] @ params["w"][0] + params["b"]).tanh()
    return ((h @ params["w"][1]) ** 2).sum() + (batch["x"] * batch["scale"]).sum()


def _tree_args(lib_index):
    arrays = {"w0": rand(3, 4), "w1": rand(4, 2, seed=1), "b": rand(4, seed=2), "x": rand(5, 3, seed=3),
              "scale": rand(3, seed=4)}
    t = {k: pair(v)[lib_index] for k, v in arrays.items()}
    return {"w": [t["w0"], t["w1"]], "b": t["b"]}, {"x": t["x"], "scale": t["scale"]}


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_grad_of_pytree_arguments(argnums):
    got = gfunc.grad(_tree_loss, argnums=argnums)(*_tree_args(1))
    assert_tree_close(got, functorch.grad(_tree_loss, argnums=argnums)(*_tree_args(0)))
    assert_plain(got)


def _with_aux(x, w):
    y = x @ w
    return (y ** 2).mean(), {"y": y, "parts": (y.sum(), [x * 2])}


def test_grad_and_value_with_aux():
    (tx, gx), (tw, gw) = pair(rand(4, 3)), pair(rand(3, 2, seed=1))
    got = gfunc.grad_and_value(_with_aux, argnums=(0, 1), has_aux=True)(gx, gw)
    expected = functorch.grad_and_value(_with_aux, argnums=(0, 1), has_aux=True)(tx, tw)
    assert_tree_close(got, expected)
    assert_plain(got)
    got_grad, got_aux = gfunc.grad(_with_aux, argnums=1, has_aux=True)(gx, gw)
    exp_grad, exp_aux = functorch.grad(_with_aux, argnums=1, has_aux=True)(tx, tw)
    assert_tree_close((got_grad, got_aux), (exp_grad, exp_aux))
    value, _ = gfunc.grad_and_value(lambda x: (x.exp().sum(), x), has_aux=True)(gx)[1]
    np.testing.assert_allclose(value.numpy(), np.exp(gx.numpy()).sum())


def test_higher_order_grad():
    def f(x):
        return x.sin() * x ** 3

    tx, gx = pair(np.array(0.7))
    for depth in (1, 2, 3):
        g, t = f, f
        for _ in range(depth):
            g, t = gfunc.grad(g), functorch.grad(t)
        got = g(gx)
        assert_tree_close(got, t(tx))
        assert_plain(got)


def test_grad_composes_with_outer_autograd():
    """Arguments and captured tensors that require grad: the gradient stays differentiable with
    respect to them (as functorch's), and grad itself writes no .grad."""
    results = []
    for lib in (torch, graft):
        F = functorch if lib is torch else gfunc
        x = lib.tensor(rand(4), requires_grad=True)
        w = lib.tensor(rand(4, seed=1), requires_grad=True)
        g = F.grad(lambda x: (x.sin() * w).sum())(x)
        assert g.requires_grad and x.grad is None and w.grad is None
        (g * g).sum().backward()
        results.append((g, x.grad, w.grad))
    assert_tree_close(results[1], results[0])


def test_grad_ignores_outer_no_grad_and_obeys_inner():
    def f(x):
        with graft.no_grad():
            c = x ** 2
        return (x - c).sum()

    gx = graft.tensor(rand(3), requires_grad=True)
    with graft.no_grad():
        g = gfunc.grad(lambda x: (x.sin() * x).sum())(gx)
    assert_tree_close(g, functorch.grad(lambda x: (x.sin() * x).sum())(torch.tensor(rand(3))))
    assert_plain(g)  # nothing outside records under no_grad
    np.testing.assert_allclose(gfunc.grad(f)(graft.tensor(rand(3))).numpy(), np.ones(3))


# ---------------------------------------------------------------------------------------------
# vjp, jvp


def _multi_out(x, y):
    return {"a": x.sin() * y, "b": (x.exp().sum(), y * 3)}


def test_vjp_pytree_outputs_and_repeated_calls():
    (tx, gx), (ty, gy) = pair(rand(3)), pair(rand(3, seed=1))
    t_out, t_fn = functorch.vjp(_multi_out, tx, ty)
    g_out, g_fn = gfunc.vjp(_multi_out, gx, gy)
    assert_tree_close(g_out, t_out)
    assert_plain(g_out)
    for seed in (2, 3):
        (ta, ga), (tb, gb), (tc, gc) = pair(rand(3, seed=seed)), pair(np.array(seed * 0.5)), pair(rand(3, seed=9))
        got = g_fn({"a": ga, "b": (gb, gc)})
        assert_tree_close(got, t_fn({"a": ta, "b": (tb, tc)}))
        assert_plain(got)


def test_vjp_has_aux():
    def f(x):
        return x.cos() * 2, {"sq": x ** 2}

    tx, gx = pair(rand(4))
    t_out, t_fn, t_aux = functorch.vjp(f, tx, has_aux=True)
    g_out, g_fn, g_aux = gfunc.vjp(f, gx, has_aux=True)
    tv, gv = pair(rand(4, seed=5))
    assert_tree_close((g_out, g_fn(gv), g_aux), (t_out, t_fn(tv), t_aux))


def _jvp_fn(p, y):
    return p["w"].sin() * y.sum(), (p["w"] * y).exp()


def test_jvp_pytree_primals():
    (tw, gw), (ty, gy) = pair(rand(3)), pair(rand(3, seed=1))
    (tvw, gvw), (tvy, gvy) = pair(rand(3, seed=2)), pair(rand(3, seed=3))
    got = gfunc.jvp(_jvp_fn, ({"w": gw}, gy), ({"w": gvw}, gvy))
    assert_tree_close(got, functorch.jvp(_jvp_fn, ({"w": tw}, ty), ({"w": tvw}, tvy)))
    assert_plain(got)


def test_jvp_has_aux_and_constant_output():
    def f(x):
        return (x.tanh(), x.new_ones(2)), x * 3

    tx, gx = pair(rand(3))
    tv, gv = pair(rand(3, seed=1))
    got = gfunc.jvp(f, (gx,), (gv,), has_aux=True)
    assert_tree_close(got, functorch.jvp(f, (tx,), (tv,), has_aux=True))
    assert not got[1][1].numpy().any()  # the constant output's tangent is zero
    with pytest.raises(RuntimeError, match="The output of f is independent of the inputs"):
        gfunc.jvp(lambda x: x.new_ones(2), (gx,), (gv,), strict=True)


# ---------------------------------------------------------------------------------------------
# jacrev, jacfwd, hessian


def _jac_fn(x, y):
    return x.sin() * y.sum(), (x @ y).exp()


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacobians_match_functorch(name, argnums):
    (tx, gx), (ty, gy) = pair(rand(3)), pair(rand(3, 2, seed=1))
    got = getattr(gfunc, name)(_jac_fn, argnums=argnums)(gx, gy)
    assert_tree_close(got, getattr(functorch, name)(_jac_fn, argnums=argnums)(tx, ty))
    assert_plain(got)


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians_has_aux_and_pytree_input(name):
    def f(p):
        return {"out": p["a"].sin() * p["b"][0]}, p["a"].sum()

    args = [{"a": x, "b": [y]} for x, y in zip(pair(rand(2, 2)), pair(rand(2, 2, seed=1)))]
    got = getattr(gfunc, name)(f, has_aux=True)(args[1])
    assert_tree_close(got, getattr(functorch, name)(f, has_aux=True)(args[0]))
    assert_plain(got)


def _hess_fn(x, y):
    return (x.sin() * y).sum() + (x ** 2 * y ** 3).sum()


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_hessian_and_jacrev_of_jacrev(argnums):
    (tx, gx), (ty, gy) = pair(rand(2, 3)), pair(rand(2, 3, seed=1))
    expected = functorch.hessian(_hess_fn, argnums=argnums)(tx, ty)
    got = gfunc.hessian(_hess_fn, argnums=argnums)(gx, gy)
    assert_tree_close(got, expected)
    assert_plain(got)
    rr = gfunc.jacrev(gfunc.jacrev(_hess_fn, argnums=argnums), argnums=argnums)(gx, gy)
    assert_tree_close(rr, expected)


# ---------------------------------------------------------------------------------------------
# vmap


def _vfn(x, y, scale=1.0):
    return x * y.sum() * scale, x.sum() + y.mean()


@pytest.mark.parametrize("in_dims,out_dims,shapes", [
    (0, 0, [(4, 3), (4, 2)]),
    ((1, None), 0, [(3, 4), (2,)]),
    ((-1, 0), (1, 0), [(3, 4), (4, 2)]),
    ((0, 1), -1, [(4, 3), (2, 4)]),
    ((None, 0), (0, -1), [(3,), (4, 2, 5)]),
])
def test_vmap_in_dims_out_dims(in_dims, out_dims, shapes):
    (tx, gx), (ty, gy) = pair(rand(*shapes[0])), pair(rand(*shapes[1], seed=1))
    got = gfunc.vmap(_vfn, in_dims=in_dims, out_dims=out_dims)(gx, gy)
    assert_tree_close(got, functorch.vmap(_vfn, in_dims=in_dims, out_dims=out_dims)(tx, ty))
    ts, gs = pair(np.array(2.5))
    got = gfunc.vmap(_vfn, in_dims=in_dims, out_dims=out_dims)(gx, gy, scale=gs)  # kwargs are not mapped
    assert_tree_close(got, functorch.vmap(_vfn, in_dims=in_dims, out_dims=out_dims)(tx, ty, scale=ts))


def test_vmap_pytree_in_dims_and_outputs():
    def f(d, c):
        return {"s": d["a"] * c, "t": [d["b"].sum(0), d["a"].sum()]}

    args = [({"a": a, "b": b}, c) for a, b, c in zip(pair(rand(5, 3)), pair(rand(2, 5, seed=1)), pair(rand(3, seed=2)))]
    in_dims = ({"a": 0, "b": 1}, None)
    got = gfunc.vmap(f, in_dims=in_dims, out_dims={"s": 1, "t": 0})(*args[1])
    assert_tree_close(got, functorch.vmap(f, in_dims=in_dims, out_dims={"s": 1, "t": 0})(*args[0]))


def test_vmap_nested():
    (ta, ga), (tb, gb) = pair(rand(5, 3)), pair(rand(4, 3, seed=1))

    def dot(x, y):
        return (x * y).sum()

    got = gfunc.vmap(gfunc.vmap(dot, in_dims=(None, 0)), in_dims=(0, None))(ga, gb)
    assert tuple(got.shape) == (5, 4)
    assert_tree_close(got, functorch.vmap(functorch.vmap(dot, in_dims=(None, 0)), in_dims=(0, None))(ta, tb))
    (tc, gc) = pair(rand(2, 3, 4))
    got = gfunc.vmap(gfunc.vmap(lambda v: v.sin() * v.sum(), in_dims=1, out_dims=1))(gc)
    assert_tree_close(got, functorch.vmap(functorch.vmap(lambda v: v.sin() * v.sum(), in_dims=1, out_dims=1))(tc))


def test_grad_of_vmap_and_vmap_of_jacrev():
    tx, gx = pair(rand(4, 3))

    def per_row(v):
        return (v.sin() * v).sum()

    got = gfunc.grad(lambda x: gfunc.vmap(per_row)(x).sum())(gx)
    assert_tree_close(got, functorch.grad(lambda x: functorch.vmap(per_row)(x).sum())(tx))
    got = gfunc.vmap(gfunc.jacrev(lambda v: v.sin() * v.sum()))(gx)
    assert_tree_close(got, functorch.vmap(functorch.jacrev(lambda v: v.sin() * v.sum()))(tx))
    got = gfunc.vmap(gfunc.hessian(per_row))(gx)
    assert_tree_close(got, functorch.vmap(functorch.hessian(per_row))(tx))
    assert_plain(got)


def test_vmap_out_dims_none():
    """torch.func 2.x (functorch 1.13 rejects out_dims=None): an unbatched output is returned once,
    a batched one raises."""
    x, c = graft.tensor(rand(4, 3)), graft.tensor(rand(3, seed=1))
    prod, once = gfunc.vmap(lambda x, c: (x * c, c * 2), in_dims=(0, None), out_dims=(0, None))(x, c)
    np.testing.assert_allclose(prod.numpy(), x.numpy() * c.numpy())
    np.testing.assert_allclose(once.numpy(), c.numpy() * 2)
    out, label = gfunc.vmap(lambda x: (x.sum(), "tag"), out_dims=(0, None))(x)
    assert label == "tag" and tuple(out.shape) == (4,)
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        gfunc.vmap(lambda x: x * 2, out_dims=None)(x)


def test_vmap_randomness():
    x = graft.zeros(5, 3)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error mode"):
        gfunc.vmap(lambda v: v + graft.randn(3))(x)
    state = graft.get_rng_state()
    with pytest.raises(RuntimeError, match="randomness error mode"):
        gfunc.vmap(lambda v: v + graft.randn(3), randomness="error")(x)
    assert graft.equal(state, graft.get_rng_state())  # the error leaves the generator as it was
    same = gfunc.vmap(lambda v: v + graft.randn(3), randomness="same")(x)
    assert all(graft.equal(same[0], row) for row in same)
    different = gfunc.vmap(lambda v: v + graft.randn(3), randomness="different")(x)
    assert not graft.equal(different[0], different[1])


# ---------------------------------------------------------------------------------------------
# functional_call, per-sample gradients, stack_module_state


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()


def _per_sample(F, call, model, params, x, t):
    def loss(params, xi, ti):
        out = call(model, params, (xi.unsqueeze(0),))
        return ((out - ti.unsqueeze(0)) ** 2).mean()

    return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, t)


def test_per_sample_gradients_of_a_linear_model():
    from torch.nn.utils import stateless

    tmodel, gmodel = _mlp(torch), _mlp(graft)
    copy_state(tmodel, gmodel)
    (tx, gx), (tt, gt) = pair(rand(6, 3)), pair(rand(6, 2, seed=1))
    originals = dict(gmodel.named_parameters())
    tparams = {k: v.detach() for k, v in tmodel.named_parameters()}
    gparams = {k: v.detach() for k, v in originals.items()}
    expected = _per_sample(functorch, stateless.functional_call, tmodel, tparams, tx, tt)
    got = _per_sample(gfunc, gfunc.functional_call, gmodel, gparams, gx, gt)
    assert_tree_close(got, expected)
    assert_plain(got)
    assert dict(gmodel.named_parameters()) == originals  # the module's own parameters are back
    assert all(p.grad is None for p in gmodel.parameters())
    for i in range(3):  # the same as ordinary backward on one sample
        gmodel.zero_grad()
        ((gmodel(gx[i:i + 1]) - gt[i:i + 1]) ** 2).mean().backward()
        for k, p in gmodel.named_parameters():
            np.testing.assert_allclose(got[k][i].numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)
    gmodel.zero_grad()


def test_functional_call_buffers_kwargs_and_restore():
    from torch.nn.utils import stateless

    tmodel, gmodel = torch.nn.BatchNorm1d(3).double().eval(), graft.nn.BatchNorm1d(3).double().eval()
    arrays = {"weight": rand(3), "bias": rand(3, seed=1), "running_mean": rand(3, seed=2),
              "running_var": np.abs(rand(3, seed=3)) + 0.5}
    tx, gx = pair(rand(4, 3, seed=4))
    t_new = {k: torch.tensor(v) for k, v in arrays.items()}
    g_params = {k: graft.tensor(v) for k, v in arrays.items() if not k.startswith("running")}
    g_buffers = {k: graft.tensor(v) for k, v in arrays.items() if k.startswith("running")}
    before = gmodel(gx)
    got = gfunc.functional_call(gmodel, (g_params, g_buffers), gx, strict=False)
    assert_tree_close(got, stateless.functional_call(tmodel, t_new, (tx,)))
    np.testing.assert_array_equal(gmodel(gx).detach().numpy(), before.detach().numpy())  # own state is back

    class Scaled(graft.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = graft.nn.Linear(2, 2).double()

        def forward(self, x, scale=1.0, fail=False):
            if fail:
                raise KeyError("boom")
            return self.lin(x) * scale

    m, w = Scaled(), graft.tensor(rand(2, 2))
    weight = m.lin.weight
    out = gfunc.functional_call(m, {"lin.weight": w}, (graft.ones(1, 2, dtype=graft.float64),), {"scale": 3.0})
    np.testing.assert_allclose(out.detach().numpy()[0], (w.numpy().sum(1) + m.lin.bias.detach().numpy()) * 3)
    with pytest.raises(KeyError):
        gfunc.functional_call(m, {"lin.weight": w}, graft.ones(1, 2), {"fail": True})
    assert m.lin.weight is weight  # restored after the error too


def _tied():
    m = graft.nn.Module()
    m.l1, m.l2 = graft.nn.Linear(2, 2, bias=False).double(), graft.nn.Linear(2, 2, bias=False).double()
    m.l2.weight = m.l1.weight
    m.forward = lambda x: m.l2(m.l1(x))
    return m


def test_functional_call_tie_weights_and_strict():
    m, w, x = _tied(), graft.tensor(rand(2, 2)), graft.tensor(rand(2, seed=1))
    wn, xn, own = w.numpy(), x.numpy(), m.l1.weight.detach().numpy()
    np.testing.assert_allclose(gfunc.functional_call(m, {"l1.weight": w}, x).numpy(), wn @ (wn @ xn))
    untied = gfunc.functional_call(m, {"l1.weight": w}, x, tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(), own @ (wn @ xn))
    with pytest.raises(ValueError) as info:
        gfunc.functional_call(m, {"l1.weight": w, "l2.weight": w * 2}, x)
    assert str(info.value) == ("functional_call got multiple values for keys ['l1.weight', 'l2.weight'], which are "
                               "tied. Consider using tie_weights=False")
    lin = graft.nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as info:
        gfunc.functional_call(lin, {"weight": graft.ones(2, 2), "extra": graft.ones(1)}, (graft.ones(2),), strict=True)
    assert str(info.value) == ("Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'extra'.\n\t"
                               "Missing key(s): 'bias'.")


def test_stack_module_state_ensemble():
    models = [graft.nn.Linear(3, 2).double() for _ in range(3)]
    params, buffers = gfunc.stack_module_state(models)
    assert list(params) == ["weight", "bias"] and buffers == {}
    for k, stacked in params.items():
        assert stacked.is_leaf and stacked.requires_grad and tuple(stacked.shape)[0] == 3
        np.testing.assert_array_equal(stacked.detach().numpy(), np.stack([dict(m.named_parameters())[k].detach()
                                                                          .numpy() for m in models]))
    x = graft.tensor(rand(5, 3))
    out = gfunc.vmap(lambda p, b, x: gfunc.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, x)
    expected = np.stack([m(x).detach().numpy() for m in models])
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)
    out.sum().backward()  # the stacked parameters are leaves an optimizer can use
    np.testing.assert_allclose(params["bias"].grad.numpy(), np.full((3, 2), 5.0))


# ---------------------------------------------------------------------------------------------
# error messages


def _x(lib):
    return lib.ones(3, dtype=lib.float64)


ERRORS_AS_FUNCTORCH = {
    "grad_non_scalar": lambda F, T: F.grad(lambda x: x * 2)(_x(T)),
    "grad_non_tensor_output": lambda F, T: F.grad(lambda x: 3.0)(_x(T)),
    "grad_aux_not_pair": lambda F, T: F.grad(lambda x: (x.sum(),), has_aux=True)(_x(T)),
    "grad_aux_not_tensor": lambda F, T: F.grad(lambda x: (x.sum(), 3), has_aux=True)(_x(T)),
    "argnum_out_of_range": lambda F, T: F.grad(lambda x: x.sum(), argnums=2)(_x(T)),
    "argnums_list": lambda F, T: F.grad(lambda x: x.sum(), argnums=[0])(_x(T)),
    "argnums_repeated": lambda F, T: F.grad(lambda x, y: x.sum(), argnums=(0, -2))(_x(T), _x(T)),
    "argnums_empty": lambda F, T: F.grad(lambda x: x.sum(), argnums=())(_x(T)),
    "grad_non_tensor_input": lambda F, T: F.grad(lambda x: x.sum())(3.0),
    "grad_integer_input": lambda F, T: F.grad(lambda x: x.sum())(T.arange(3)),
    "vjp_cotangent_structure": lambda F, T: F.vjp(lambda x: x * 2, _x(T))[1]((_x(T),)),
    "vjp_aux_not_pair": lambda F, T: F.vjp(lambda x: x, _x(T), has_aux=True),
    "vjp_integer_output": lambda F, T: F.vjp(lambda x: (x > 0).long(), _x(T)),
    "vjp_no_output": lambda F, T: F.vjp(lambda x: (), _x(T)),
    "vjp_non_tensor_output": lambda F, T: F.vjp(lambda x: (x, 1.0), _x(T)),
    "jvp_primals_not_tuple": lambda F, T: F.jvp(lambda x: x, _x(T), (_x(T),)),
    "jvp_structure": lambda F, T: F.jvp(lambda x, y: x * y, (_x(T), _x(T)), (_x(T),)),
    "jvp_tangent_size": lambda F, T: F.jvp(lambda x: x, (_x(T),), (T.ones(2, dtype=T.float64),)),
    "jvp_non_tensor_primal": lambda F, T: F.jvp(lambda x: x, (1.0,), (1.0,)),
    "jvp_aux_not_pair": lambda F, T: F.jvp(lambda x: x, (_x(T),), (_x(T),), has_aux=True),
    "vmap_size_mismatch": lambda F, T: F.vmap(lambda a, b: a + b)(_x(T), T.ones(4)),
    "vmap_in_dim_out_of_range": lambda F, T: F.vmap(lambda x: x, in_dims=2)(_x(T)),
    "vmap_in_dims_list": lambda F, T: F.vmap(lambda x: x, in_dims=[0])(_x(T)),
    "vmap_in_dims_none": lambda F, T: F.vmap(lambda x: x, in_dims=None)(_x(T)),
    "vmap_in_dims_structure": lambda F, T: F.vmap(lambda x, y: x, in_dims=(0,))(_x(T), _x(T)),
    "vmap_in_dims_nested_structure": lambda F, T: F.vmap(lambda d: d["a"], in_dims=({"b": 0},))({"a": _x(T)}),
    "vmap_in_dim_bad_type": lambda F, T: F.vmap(lambda x: x, in_dims=("a",))(_x(T)),
    "vmap_non_tensor_mapped": lambda F, T: F.vmap(lambda x: x, in_dims=(0,))(3.0),
    "vmap_nothing_mapped": lambda F, T: F.vmap(lambda x: x, in_dims=(None,))(_x(T)),
    "vmap_no_inputs": lambda F, T: F.vmap(lambda: 1)(),
    "vmap_out_dims_structure": lambda F, T: F.vmap(lambda x: (x, x), out_dims=(0, 0, 0))(_x(T)),
    "vmap_out_dims_tensor_output": lambda F, T: F.vmap(lambda x: x, out_dims=(0, 1))(_x(T)),
    "vmap_randomness_arg": lambda F, T: F.vmap(lambda x: x, randomness="sometimes"),
}


def _error_of(call):
    try:
        call()
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e), str(e).replace("torch.", "graft.")
    raise AssertionError("no error raised")


@pytest.mark.parametrize("case", sorted(ERRORS_AS_FUNCTORCH))
def test_error_messages_as_functorch(case):
    build = ERRORS_AS_FUNCTORCH[case]
    expected = _error_of(lambda: build(functorch, torch))
    assert _error_of(lambda: build(gfunc, graft)) == expected


ERRORS_AS_TORCH_FUNC = {  # torch.func 2.x's texts, where functorch 1.13 differs or lacks the API
    "vmap_non_tensor_output": (lambda: gfunc.vmap(lambda x: (x, 3.0))(_x(graft)), ValueError,
                               "vmap(<lambda>, ...): `<lambda>` must only return Tensors, got type <class 'float'>. "
                               "Did you mean to set out_dims= to None for output?"),
    "vmap_out_dims_type": (lambda: gfunc.vmap(lambda x: x, out_dims="a")(_x(graft)), ValueError,
                           "vmap(<lambda>, ..., out_dims=a): `out_dims` must be an int, None or a python collection "
                           "of ints representing where in the outputs the vmapped dimension should appear."),
    "vmap_chunk_size": (lambda: gfunc.vmap(lambda x: x, chunk_size=0), ValueError,
                        "vmap: chunk_size should be None or greater than 0. (got 0)"),
    "jacrev_chunk_size": (lambda: gfunc.jacrev(lambda x: x, chunk_size=0), ValueError,
                          "jacrev: `chunk_size` should be greater than 0."),
    "jacfwd_random": (lambda: gfunc.jacfwd(lambda x: x * graft.rand(()))(_x(graft)), RuntimeError,
                      "vmap: called random operation while in randomness error mode. Please either use the 'same' "
                      "or 'different' randomness flags on vmap or perform the randomness operation out of vmap"),
    "stack_empty": (lambda: gfunc.stack_module_state([]), RuntimeError,
                    "stack_module_state: Expected at least one model, got 0."),
    "stack_classes": (lambda: gfunc.stack_module_state([graft.nn.Linear(2, 2), graft.nn.Tanh()]), RuntimeError,
                      "stack_module_state: Expected all models to be of the same class."),
    "stack_modes": (lambda: gfunc.stack_module_state([graft.nn.Linear(2, 2), graft.nn.Linear(2, 2).eval()]),
                    RuntimeError, "stack_module_state: Expected all models to have the same training/eval mode."),
    "stack_requires_grad": (lambda: gfunc.stack_module_state([graft.nn.Linear(2, 2),
                                                              graft.nn.Linear(2, 2).requires_grad_(False)]),
                            RuntimeError, "Expected weight from each model to have the same .requires_grad"),
    "call_repeated_key": (lambda: gfunc.functional_call(graft.nn.Linear(2, 2),
                                                        ({"bias": graft.ones(2)}, {"bias": graft.ones(2)}),
                                                        graft.ones(2)),
                          ValueError, "['bias'] appeared in multiple dictionaries; behavior of functional call is "
                                      "ambiguous"),
    "call_not_dicts": (lambda: gfunc.functional_call(graft.nn.Linear(2, 2), 3, graft.ones(2)), ValueError,
                       "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                       "<class 'int'>"),
}


@pytest.mark.parametrize("case", sorted(ERRORS_AS_TORCH_FUNC))
def test_error_messages_as_torch_func(case):
    call, error_type, message = ERRORS_AS_TORCH_FUNC[case]
    assert _error_of(call) == (error_type, message)


def test_more_compositions():
    """jacfwd of jacfwd, grad through jvp, vmap over a vjp function, vmap of a nested grad."""
    tx, gx = pair(rand(3))
    tv, gv = pair(rand(3, seed=1))

    def f(x):
        return x.sin() * x.sum() ** 2

    assert_tree_close(gfunc.jacfwd(gfunc.jacfwd(f))(gx), functorch.jacfwd(functorch.jacfwd(f))(tx))

    def through_jvp(F, v):
        return lambda x: (F.jvp(f, (x,), (v,))[1] ** 2).sum()

    assert_tree_close(gfunc.grad(through_jvp(gfunc, gv))(gx), functorch.grad(through_jvp(functorch, tv))(tx))
    t_fn, g_fn = functorch.vjp(f, tx)[1], gfunc.vjp(f, gx)[1]
    tb, gb = pair(np.eye(3))
    got = gfunc.vmap(g_fn)(gb)
    assert_tree_close(got, functorch.vmap(t_fn)(tb))
    assert_plain(got)
    tm, gm = pair(rand(4, 3, seed=2))

    def second(v):
        return (v.sin() * v).sum()

    got = gfunc.vmap(gfunc.grad(gfunc.grad(lambda s: second(s * gx))))(gm[:, 0])
    expected = functorch.vmap(functorch.grad(functorch.grad(lambda s: second(s * tx))))(tm[:, 0])
    assert_tree_close(got, expected)
