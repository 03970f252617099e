"""Parity tier: the same small programs run in PyTorch (Debian's python3-torch) and in graft,
written once against a module parameter `lib`, and their values and gradients compared."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402


def run_both(program, *arrays, **kw):
    """Runs program(lib, *tensors) with lib = torch and lib = graft on the same float64 data;
    returns the two results as numpy (nested tuples/lists allowed)."""
    def to_np(r):
        if isinstance(r, (tuple, list)):
            return [to_np(x) for x in r]
        if r is None:
            return None
        if hasattr(r, "detach"):
            return r.detach().numpy()
        return np.asarray(r)
    out = []
    for lib in (torch, graft):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=kw.get("grad", False)) if np.asarray(a).dtype.kind == "f"
              else lib.tensor(a) for a in arrays]
        out.append(to_np(program(lib, *ts)))
    return out


def assert_same(a, b, rtol=1e-10, atol=1e-12):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y, rtol, atol)
        return
    if a is None:
        assert b is None
        return
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4,))
C = rng.standard_normal((4, 5))
POS = rng.uniform(0.5, 2.0, (3, 4))


@pytest.mark.parametrize("name,program", [
    ("arith", lambda L, a, b: (a * b + 1.0) / (b * b + 2) - a ** 2),
    ("unary", lambda L, a, b: [a.exp(), a.tanh(), a.sigmoid(), a.abs(), a.relu(), L.sin(a), L.cos(a), a.sign()]),
    ("reduce", lambda L, a, b: [a.sum(), a.sum(1), a.mean(0, keepdim=True), a.var(1), a.std(), a.max(1)[0],
                                a.min(0).indices, a.logsumexp(1), a.softmax(-1), a.log_softmax(0), a.prod(1)]),
    ("shape", lambda L, a, b: [a.t(), a.reshape(2, 6), a.permute(1, 0).contiguous(), a.unsqueeze(1).expand(3, 2, 4),
                               L.cat([a, a], 1), L.stack([a, a]), a.flatten(), a.transpose(0, 1)]),
    ("compare", lambda L, a, b: [(a > b).to(L.int64), L.where(a > 0, a, b), L.maximum(a, b), L.clamp(a, -0.5, 0.5)]),
    ("floor_mod", lambda L, a, b: [a // 0.3, a % 0.7, L.floor(a * 3), 2 ** a, a.reciprocal(), 5.0 / a]),
])
def test_forward_values(name, program):
    t, g = run_both(program, A, B)
    assert_same(t, g)


def test_integer_semantics():
    prog = lambda L, x: [x // 3, x % 3, -x // 2, x / 2, x * 2, (x > 2).sum(), x.sum(), x.max(), x.argmax()]  # noqa: E731
    t, g = run_both(prog, np.array([-7, -1, 0, 4, 9]))
    assert_same(t, g)


def test_matmul_shapes():
    prog = lambda L, a, c: [a @ c, L.matmul(a[0], c), L.mm(a, c), L.bmm(a.unsqueeze(0), c.unsqueeze(0)), a @ c[:, 0]]  # noqa: E731
    t, g = run_both(prog, A, C)
    assert_same(t, g, rtol=1e-12)


@pytest.mark.parametrize("index", [
    1, -1, slice(None, None, 2), (slice(1, 3), 2), (Ellipsis, 1), (None, 0), (slice(None), None, slice(1, None, 2)),
    ([0, 2],), ([0, 2], [1, 3]), (slice(None), [3, 0, 0]), ([[0, 1], [2, 2]],), ([0, 2], slice(1, 3)),
    ([1, 0], slice(None), None),
])
def test_indexing(index):
    def prog(L, a):
        idx = tuple(L.tensor(i) if isinstance(i, list) else i for i in index) if isinstance(index, tuple) else index
        return a[idx]
    t, g = run_both(prog, A)
    assert_same(t, g)


@pytest.mark.parametrize("index", [range(2), range(0, 3, 2), (range(2), 1), (slice(None), range(3, 0, -1)),
                                   __import__("collections").deque([2, 0])])
def test_indexing_with_other_sequences(index):
    """A range or a deque indexes as the list of its items, reading and writing, as PyTorch's."""
    def prog(L, a):
        b = a.clone()
        b[index] = -5.0
        return [a[index], b]
    t, g = run_both(prog, A)
    assert_same(t, g)


@pytest.mark.parametrize("make", [lambda: range(4), lambda: __import__("collections").deque([1.5, 2]),
                                  lambda: [range(2), (3, 4)], lambda: __import__("array").array("d", [1, 2])])
def test_tensor_from_other_sequences(make):
    t, g = torch.tensor(make()), graft.tensor(make())
    assert str(t.dtype).split(".")[1] == str(g.dtype).split(".")[1]
    assert g.tolist() == t.tolist()


def test_strings_are_not_sequences_of_data():
    for lib in (torch, graft):
        with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
            lib.tensor("ab")


def test_boolean_mask_indexing_and_assignment():
    def prog(L, a):
        m = a > 0
        picked = a[m]
        b = a.clone()
        b[m] = 0.0
        b[:, 1] = L.tensor([7.0, 8.0, 9.0], dtype=L.float64)
        b[L.tensor([0, 2]), 0] = -1.0
        return [picked, b]
    t, g = run_both(prog, A)
    assert_same(t, g)


def test_gradients_of_a_composite_function():
    def prog(L, a, b):
        y = ((a * b).tanh() + a.exp() / (1 + b * b)).sum(1)
        z = (y ** 2).mean() + a.max(1)[0].sum() + a[:, 1:3].abs().sum()
        z.backward()
        return [z, a.grad, b.grad]
    t, g = run_both(prog, A, B, grad=True)
    assert_same(t, g, rtol=1e-9)


def test_gradients_through_indexing_and_views():
    def prog(L, a):
        idx = L.tensor([2, 0, 2])
        y = a[idx, 1:].sum() * 2 + a[a > 0].pow(2).sum() + a.t()[1].sum() + a.reshape(-1)[::3].sum()
        y.backward()
        return [y, a.grad]
    t, g = run_both(prog, A, grad=True)
    assert_same(t, g)


def test_second_derivative_and_hvp():
    def prog(L, a, b):
        y = (a.sin() * b).sum() + (a ** 3).sum()
        (ga,) = L.autograd.grad(y, a, create_graph=True)
        v = L.ones_like(a)
        (hv,) = L.autograd.grad(ga, a, grad_outputs=v)
        return [ga, hv]
    t, g = run_both(prog, A, B, grad=True)
    assert_same(t, g, rtol=1e-9)


def test_numpy_interop_same_as_torch():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    tt, gt = torch.from_numpy(arr), graft.from_numpy(arr)
    arr[0, 0] = 42
    assert tt[0, 0].item() == gt[0, 0].item() == 42
    assert np.asarray(gt).tolist() == np.asarray(tt).tolist()
    # DLPack both ways between the two libraries
    back = torch.from_dlpack(graft.arange(4.0))
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0]
    g2 = graft.from_dlpack(torch.arange(3))
    assert g2.tolist() == [0, 1, 2] and g2.dtype is graft.int64


def _inplace_error_cases(lib):
    """In-place writes that PyTorch refuses for two reasons at once, or for one: which error it
    gives first (the op's own checks before its in-place rules, except the leaf and view rules
    that VariableType checks before the kernel) and that the allowed ones write."""
    with lib.inference_mode():
        inf_bool, inf_float = lib.zeros(3, dtype=lib.bool), lib.zeros(3)
    leaf = lib.zeros(3, requires_grad=True)
    with lib.no_grad():
        nograd_view = lib.zeros(3, requires_grad=True)[:2]
    i = lib.tensor([0, 1])
    ones_bool = lib.ones(3, dtype=lib.bool)
    return [
        lambda: inf_bool.sub_(ones_bool),  # the bool-subtraction error, not the inference one
        lambda: inf_float.add_(1),
        lambda: inf_float.index_put_((i,), lib.tensor(5.0)),
        lambda: lib.zeros(3, dtype=lib.bool).expand(2, 3).sub_(ones_bool),
        lambda: lib.zeros(3).expand(2, 3).add_(1),
        lambda: lib.zeros(3).expand(2, 3).mul_(lib.ones(3)),
        lambda: lib.zeros(3).expand(2, 3).copy_(lib.ones(4)),
        lambda: leaf.copy_(lib.ones(4)),  # the leaf error before the source's shape
        lambda: leaf.add_(1),
        lambda: nograd_view.add_(1),
        lambda: nograd_view.mul_(lib.ones(2)),
        lambda: lib.zeros(3).expand(2, 3).fill_(1.5).sum(),  # allowed: every alias gets 1.5
    ]


def test_inplace_errors_come_in_pytorchs_order():
    for case, (t_case, g_case) in enumerate(zip(_inplace_error_cases(torch), _inplace_error_cases(graft))):
        outcomes = []
        for run in (t_case, g_case):
            try:
                outcomes.append(("ok", float(run().sum())))
            except RuntimeError as e:
                outcomes.append(("error", str(e).split(".")[0]))
        assert outcomes[0] == outcomes[1], (case, outcomes)


def test_inplace_writes_match_pytorch():
    def program(lib, x, y):
        v = x.clone()
        v[1:3].add_(y[:2], alpha=2)  # a view, nothing recorded
        v.mul_(y)
        v.sub_(1.5)
        w = lib.zeros(2, 2, dtype=lib.float64)
        idx = lib.tensor([0, 1])
        w.index_put_((idx, idx), y[:2], accumulate=True)
        w.index_put_((idx, idx), y[:2], accumulate=True)
        return [v, w]
    t, g = run_both(program, np.arange(4.0), np.linspace(1.0, 2.0, 4))
    assert_same(t, g)


def test_inplace_writes_allocate_nothing_when_nothing_is_recorded():
    # add_, mul_ and index_put_ write self in place (no temporary of self's size), a view of a
    # base that does not require grad under grad mode too
    base = graft.zeros(1 << 16)
    view = base[8:]
    idx, one = graft.tensor([1, 5]), graft.tensor(1.0)
    for target in (base, view):
        graft.cpu.memory.reset_peak_memory_stats()
        before = graft.cpu.memory.memory_allocated()
        target.add_(1.0)
        target.mul_(2.0)
        target.index_put_((idx,), one)
        assert graft.cpu.memory.max_memory_allocated() - before < 1024, target.shape
    assert [float(base[i]) for i in (0, 1, 8, 9, 13, 14)] == [2.0, 1.0, 6.0, 1.0, 1.0, 6.0]
