"""Parity tier for sort, argsort, topk, cumsum, tril/triu, flip, roll and multinomial against
Debian's PyTorch: values, indices, dtypes, gradients and grad_fn names, the errors' types and
texts, and multinomial's draws by their frequencies."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

NAN = float("nan")
MATRIX = [[3.0, NAN, 1.0, 3.0], [0.0, -1.0, 2.0, 2.0]]


def run(lib, fn):
    """fn(lib)'s result as plain lists and dtype names, or its exception's type and text."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001  (compared with PyTorch's)
        return type(e).__name__, str(e)
    parts = r if isinstance(r, tuple) else (r,)
    return [(_nan_as_text(p.tolist()), str(p.dtype).split(".")[-1]) if hasattr(p, "tolist") else p for p in parts]


def _nan_as_text(v):
    """NaN compares unequal to itself: written as "nan" so lists with NaN compare."""
    if isinstance(v, list):
        return [_nan_as_text(x) for x in v]
    return "nan" if isinstance(v, float) and v != v else v


CASES = {
    "sort": lambda t: tuple(t.sort(t.tensor(MATRIX))),
    "sort_descending": lambda t: tuple(t.sort(t.tensor(MATRIX), descending=True)),
    "sort_dim0": lambda t: tuple(t.sort(t.tensor(MATRIX), 0)),
    "sort_stable_keywords": lambda t: tuple(t.sort(t.tensor(MATRIX), stable=True, dim=0, descending=True)),
    "sort_0d": lambda t: tuple(t.sort(t.tensor(5.0))),
    "sort_bool": lambda t: tuple(t.sort(t.tensor([True, False, True]))),
    "sort_int_method": lambda t: tuple(t.tensor([[5, -1, 5], [0, 7, 2]]).sort(dim=1, descending=True)),
    "argsort": lambda t: t.argsort(t.tensor(MATRIX), dim=1, descending=True),
    "argsort_method": lambda t: t.tensor(MATRIX).argsort(),
    "topk": lambda t: tuple(t.topk(t.tensor([[3.0, NAN, 1.0, 2.5], [0.0, -1.0, 2.0, 1.5]]), 2)),
    "topk_smallest_dim0": lambda t: tuple(t.tensor(MATRIX).topk(1, dim=0, largest=False)),
    "topk_k_too_large": lambda t: t.topk(t.tensor(MATRIX), 5),
    "topk_negative_k": lambda t: t.topk(t.tensor(MATRIX), -1),
    "topk_0d": lambda t: tuple(t.topk(t.tensor(5.0), 1)),
    "topk_int": lambda t: tuple(t.topk(t.tensor([3, 1, 2]), 2)),
    "cumsum": lambda t: t.cumsum(t.tensor(MATRIX), 1),
    "cumsum_method_dim0": lambda t: t.tensor(MATRIX).cumsum(dim=0),
    "cumsum_int32": lambda t: t.cumsum(t.tensor([1, 2], dtype=t.int32), 0),
    "cumsum_bool": lambda t: t.cumsum(t.tensor([True, True]), 0),
    "cumsum_dtype": lambda t: t.cumsum(t.tensor([1.0, 2.0]), 0, dtype=t.float64),
    "cumsum_0d": lambda t: t.cumsum(t.tensor(3.0), 0),
    "cumsum_bad_dim": lambda t: t.cumsum(t.tensor(MATRIX), 2),
    "tril": lambda t: t.tril(t.arange(12.0).view(3, 4)),
    "tril_diagonal": lambda t: t.arange(12.0).view(3, 4).tril(1),
    "triu_negative": lambda t: t.triu(t.arange(12.0).view(3, 4), -1),
    "triu_batched_int": lambda t: t.triu(t.arange(24).view(2, 3, 4), 2),
    "tril_transposed": lambda t: t.arange(12.0).view(3, 4).t().tril(),
    "flip": lambda t: t.flip(t.arange(12.0).view(3, 4), (0,)),
    "flip_both": lambda t: t.flip(t.arange(12.0).view(3, 4), [0, 1]),
    "flip_method_varargs": lambda t: t.arange(12.0).view(3, 4).flip(0, 1),
    "flip_repeated_dim": lambda t: t.arange(12.0).view(3, 4).flip(0, 0),
    "flip_bad_dim": lambda t: t.arange(6).view(2, 3).flip(3),
    "flip_transposed": lambda t: t.arange(12.0).view(3, 4).t().flip(0),
    "roll_flat": lambda t: t.roll(t.arange(12.0).view(3, 4), 1),
    "roll_dim0": lambda t: t.roll(t.arange(12.0).view(3, 4), 1, 0),
    "roll_two_dims": lambda t: t.roll(t.arange(12.0).view(3, 4), (1, -2), (0, 1)),
    "roll_repeated_dim": lambda t: t.roll(t.arange(12.0).view(3, 4), (1, 2), (1, 1)),
    "roll_misaligned": lambda t: t.roll(t.arange(12.0).view(3, 4), (1, 2), (0,)),
    "roll_keywords": lambda t: t.arange(12.0).view(3, 4).roll(shifts=-1, dims=1),
    "roll_empty": lambda t: t.roll(t.ones(0, 3), 1),
    "multinomial_3d": lambda t: t.multinomial(t.ones(2, 2, 2), 1),
    "multinomial_too_many": lambda t: t.multinomial(t.ones(3), 4),
    "multinomial_zero_sum": lambda t: t.multinomial(t.zeros(3), 1),
    "multinomial_negative": lambda t: t.multinomial(t.tensor([1.0, -1.0, 1.0]), 1),
    "multinomial_nan": lambda t: t.multinomial(t.tensor([1.0, NAN, 1.0]), 1),
    "multinomial_integer": lambda t: t.multinomial(t.tensor([1, 2, 3]), 1),
    "multinomial_no_samples": lambda t: t.multinomial(t.ones(3), 0),
    "multinomial_no_categories": lambda t: t.multinomial(t.ones(0), 1),
    "multinomial_no_rows": lambda t: t.multinomial(t.ones(0, 3), 2),
    "multinomial_one_outcome": lambda t: t.multinomial(t.tensor([[0.0, 1.0], [3.0, 0.0]]), 3, True),
    "multinomial_method": lambda t: t.tensor([0.0, 0.0, 2.0]).multinomial(1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_dtypes_and_errors_match_pytorch(name):
    assert run(graft, CASES[name]) == run(torch, CASES[name])


def test_tril_of_a_vector_raises_pytorch_2x_error():
    # 1.13 raised an IndexError from its dim wrap; 2.x names the rule
    with pytest.raises(RuntimeError, match="^tril: input tensor must have at least 2 dimensions$"):
        graft.tril(graft.ones(3))
    with pytest.raises(RuntimeError, match="^triu: input tensor must have at least 2 dimensions$"):
        graft.ones(3).triu_()


def test_topk_ties_come_lowest_index_first():
    # PyTorch leaves the order of equal values unspecified; graft's is stable
    values, indices = graft.topk(graft.tensor([1.0, 3.0, 2.0, 3.0]), 2)
    assert values.tolist() == [3.0, 3.0] and indices.tolist() == [1, 3]


GRAD_CASES = {
    "sort": lambda t, x: t.sort(x, dim=0, descending=True).values,
    "topk": lambda t, x: t.topk(x, 2).values,
    "cumsum": lambda t, x: t.cumsum(x, 1),
    "tril": lambda t, x: t.tril(x, -1),
    "triu": lambda t, x: x.triu(1),
    "flip": lambda t, x: t.flip(x, (0, 1)),
    "roll": lambda t, x: t.roll(x, (1, -1), (0, 1)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_and_grad_fn_match_pytorch(name):
    data = np.random.default_rng(3).standard_normal((3, 4))
    weights = np.random.default_rng(4).standard_normal((3, 4))
    out = []
    for lib in (torch, graft):
        x = lib.tensor(data, requires_grad=True)
        y = GRAD_CASES[name](lib, x)
        w = lib.tensor(weights)[tuple(slice(0, n) for n in y.shape)]
        (y * w).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12)
    assert out[1][2] == out[0][2]


def test_in_place_triangles_match_pytorch():
    for lower in (True, False):
        results = []
        for lib in (torch, graft):
            x = lib.arange(12.0).view(3, 4).requires_grad_()
            y = x * 2
            r = y.tril_(1) if lower else y.triu_(1)
            assert r is y
            y.sum().backward()
            results.append((y.tolist(), x.grad.tolist(), y.grad_fn.name()))
        assert results[1] == results[0]


def test_sort_and_topk_return_named_tuples():
    r = graft.sort(graft.tensor([2.0, 1.0]))
    assert r.values.tolist() == [1.0, 2.0] and r.indices.tolist() == [1, 0]
    r = graft.tensor([2.0, 1.0]).topk(1)
    assert r.values.tolist() == [2.0] and r.indices.tolist() == [0]


def test_multinomial_draws_follow_the_weights():
    graft.manual_seed(0)
    p = graft.tensor([0.1, 0.2, 0.7])
    draws = graft.multinomial(p * 5, 200000, replacement=True)  # unnormalised weights
    assert draws.dtype == graft.int64 and draws.shape == (200000,)
    np.testing.assert_allclose(np.bincount(draws.numpy(), minlength=3) / 2e5, [0.1, 0.2, 0.7], atol=0.01)
    # without replacement: the first draw follows the weights, the second the rest renormalised
    rows = graft.multinomial(p.expand(40000, 3).contiguous(), 2)
    first = np.bincount(rows[:, 0].numpy(), minlength=3) / 4e4
    second = np.bincount(rows[:, 1].numpy(), minlength=3) / 4e4
    np.testing.assert_allclose(first, [0.1, 0.2, 0.7], atol=0.015)
    expected_second = [sum(p_i * p_j / (1 - p_i) for i, p_i in enumerate([0.1, 0.2, 0.7]) if i != j)
                       for j, p_j in enumerate([0.1, 0.2, 0.7])]
    np.testing.assert_allclose(second, expected_second, atol=0.015)
    assert (rows[:, 0] != rows[:, 1]).all()


def test_multinomial_is_reproducible_under_manual_seed():
    graft.manual_seed(7)
    a = graft.multinomial(graft.ones(5, 10), 4)
    graft.manual_seed(7)
    assert graft.multinomial(graft.ones(5, 10), 4).tolist() == a.tolist()
