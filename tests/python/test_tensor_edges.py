"""Fixes from the Python bindings review: unbound in-place methods, bitwise operators, the
in-place operators (//= %= **=), amax/amin gradients, tensor-valued masked_fill /
clamp / fill_, indexing with sequences and numpy arrays, factory keywords, copying and
pickling. Expected values are PyTorch 1.13's."""
import copy
import pickle

import numpy as np
import pytest

import graft


# ---- 1. unbound in-place methods on a non-tensor ----

@pytest.mark.parametrize("name,args", [
    ("zero_", ()), ("fill_", (1,)), ("add_", (1,)), ("sub_", (1,)), ("mul_", (2,)), ("div_", (2,)),
    ("relu_", ()), ("exp_", ()), ("pow_", (2,)), ("clamp_", (0,)), ("uniform_", ()), ("normal_", ()),
    ("__iadd__", (1,)), ("__imul__", (1,)), ("__iand__", (1,)), ("__ifloordiv__", (1,)),
])
def test_unbound_inplace_on_non_tensor_raises_type_error(name, args):
    with pytest.raises(TypeError, match=f"descriptor '{name}' for 'graft.Tensor' objects doesn't apply to a 'int' object"):
        getattr(graft.Tensor, name)(5, *args)


def test_unbound_copy_and_masked_fill_on_str():
    with pytest.raises(TypeError, match="descriptor 'copy_' for 'graft.Tensor' objects doesn't apply to a 'str' object"):
        graft.Tensor.copy_("a", graft.zeros(1))
    with pytest.raises(TypeError, match="descriptor 'masked_fill_' .* a 'str' object"):
        graft.Tensor.masked_fill_("a", graft.tensor([True]), 0)


# ---- 2. & | ^ ~ ----

def test_bitwise_on_integer_tensors():
    a, b = graft.tensor([-6, 5, 12]), graft.tensor([3, -4, 10])
    assert (a & b).tolist() == [2, 4, 8]
    assert (a | b).tolist() == [-5, -3, 14]
    assert (a ^ b).tolist() == [-7, -7, 6]
    assert (a & b).dtype == graft.int64
    assert (graft.tensor([6, 5, 12]) & 4).tolist() == [4, 4, 4]
    assert (1 | graft.tensor([2, 4])).tolist() == [3, 5]
    assert (3 ^ graft.tensor([1, 2])).tolist() == [2, 1]
    assert (~graft.tensor([0, 5, -3])).tolist() == [-1, -6, 2]
    r = graft.tensor([1, 2], dtype=graft.int32) ^ 3
    assert r.dtype == graft.int32 and r.tolist() == [2, 1]
    assert graft.tensor([3, 6]).bitwise_and(5).tolist() == [1, 4]
    assert graft.bitwise_or(graft.tensor([1]), 2).tolist() == [3]


def test_bitwise_on_bool_tensors_is_logical():
    m, n = graft.tensor([True, False, True]), graft.tensor([True, True, False])
    assert (m & n).tolist() == [True, False, False]
    assert (m | n).tolist() == [True, True, True]
    assert (m ^ n).tolist() == [False, True, True]
    assert (True & graft.tensor([True, False])).tolist() == [True, False]
    r = graft.tensor([True]) & 1  # an int scalar promotes bool to int64
    assert r.dtype == graft.int64 and r.tolist() == [1]
    assert graft.logical_xor(graft.tensor([1, 0, 2]), n).tolist() == [False, True, True]


def test_bitwise_on_float_tensors_raises():
    with pytest.raises(RuntimeError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        graft.tensor([1.0]) & graft.tensor([1.0])
    with pytest.raises(RuntimeError, match="\"bitwise_or_cpu\" not implemented for 'Float'"):
        graft.tensor([1.0]) | 1
    with pytest.raises(RuntimeError, match="\"bitwise_xor_cpu\" not implemented for 'Float'"):
        graft.tensor([1]) ^ 1.5
    with pytest.raises(RuntimeError, match="\"bitwise_not_cpu\" not implemented for 'Double'"):
        graft.bitwise_not(graft.tensor([1.0], dtype=graft.float64))
    with pytest.raises(TypeError, match="^~ \\(operator.invert\\) is only implemented on integer and Boolean-type tensors$"):
        ~graft.tensor([1.0], dtype=graft.float64)  # the operator checks first, as torch's


def test_bitwise_inplace_keeps_object_and_aliases():
    m = graft.tensor([True, False, True])
    alias = m
    m &= graft.tensor([True, True, False])
    assert m is alias and alias.tolist() == [True, False, False]
    m |= graft.tensor([False, True, False])
    assert alias.tolist() == [True, True, False]
    m ^= graft.tensor([True, True, True])
    assert alias.tolist() == [False, False, True]
    x = graft.tensor([6, 5, 12])
    v = x[:2]
    v &= 3
    assert x.tolist() == [2, 1, 12]
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        m |= 3
    with pytest.raises(RuntimeError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        f = graft.tensor([1.0, 2.0])
        f &= 1


# ---- 3. //= %= **= in place ----

def test_floordiv_pow_mod_inplace_update_views():
    x = graft.tensor([4, 6, 8])
    view = x[:2]
    view //= 2
    view **= 2
    assert x.tolist() == [4, 9, 8]
    y = graft.tensor([7, -7, 9])
    alias = y
    y %= 4
    assert y is alias and alias.tolist() == [3, 1, 1]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        y //= 2.5
    assert alias.tolist() == [3, 1, 1]


def test_ipow_on_leaf_requiring_grad_raises():
    w = graft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        w **= 2
    assert w.is_leaf


def test_inplace_math_refuses_uncastable_result():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        graft.tensor([1, 2]).exp_()


def test_ipow_keeps_gradient():
    a = graft.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 1
    b **= 2
    b.sum().backward()
    assert a.grad.tolist() == [2.0, 4.0, 6.0]


# ---- 4. amax / amin ----

def test_amax_gradient_splits_ties():
    x = graft.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    r = x.amax(1)
    assert r.tolist() == [3.0, 2.0]
    r.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]


def test_amin_gradient_and_values():
    x = graft.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    graft.amin(x, 1).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    assert graft.tensor([[1, 5], [7, 2]]).amin(-1, keepdim=True).tolist() == [[1], [2]]
    assert graft.tensor([[1, 5], [7, 2]]).amax(0).tolist() == [7, 5]


def test_amax_all_dims():
    x = graft.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    r = x.amax((0, 1), keepdim=True)
    assert list(r.shape) == [1, 1] and r.tolist() == [[3.0]]
    assert list(graft.ones(2, 3).amax((), keepdim=True).shape) == [1, 1]
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        graft.ones(2, 3).amax((0, -2))
    s = x.amax()
    assert list(s.shape) == [] and s.detach().item() == 3.0
    s.backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]


def test_amax_values_exact_with_inf_and_nan():
    x = graft.tensor([[float("inf"), 1.0], [float("nan"), 2.0], [0.1, 0.1]], requires_grad=True)
    r = x.amax(1).detach()
    assert r[0].item() == float("inf") and r[1].item() != r[1].item() and r[2].item() == pytest.approx(0.1)
    assert graft.tensor([0.1, 0.1, 0.1], requires_grad=True).amax().detach().item() == graft.tensor(0.1).item()


# ---- 5. tensor values for masked_fill / clamp / fill_ / where ----

def test_masked_fill_with_tensor_value_backpropagates():
    v = graft.tensor(2.0, requires_grad=True)
    a = graft.tensor([1.0, -3.0, 5.0], requires_grad=True)
    y = a.masked_fill(graft.tensor([True, False, True]), v)
    assert y.tolist() == [2.0, -3.0, 2.0]
    (y * graft.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert v.grad.item() == 4.0
    assert a.grad.tolist() == [0.0, 2.0, 0.0]
    with pytest.raises(RuntimeError, match=r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)\."):
        graft.zeros(3).masked_fill(graft.tensor([True, False, True]), graft.tensor([1.0]))


def test_masked_fill_inplace_with_tensor_value():
    v = graft.tensor(2.0, requires_grad=True)
    z = graft.zeros(3)
    z.masked_fill_(graft.tensor([False, True, True]), v)
    assert z.tolist() == [0.0, 2.0, 2.0] and z.requires_grad
    z.sum().backward()
    assert v.grad.item() == 2.0


def test_clamp_with_tensor_bounds_backpropagates():
    lo = graft.tensor(0.5, requires_grad=True)
    hi = graft.tensor(2.0, requires_grad=True)
    a = graft.tensor([0.0, 1.0, 3.0, -1.0], requires_grad=True)
    y = a.clamp(min=lo, max=hi)
    assert y.tolist() == [0.5, 1.0, 2.0, 0.5]
    y.sum().backward()
    assert lo.grad.item() == 2.0 and hi.grad.item() == 1.0
    assert a.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_clamp_number_bounds_promote_like_pytorch():
    r = graft.tensor([1, -2, 3]).clamp(min=0.5)
    assert r.dtype == graft.float32 and r.tolist() == [1.0, 0.5, 3.0]
    r = graft.tensor([1, -2, 3]).clamp(max=2)
    assert r.dtype == graft.int64 and r.tolist() == [1, -2, 2]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        graft.tensor([1, 2]).clamp_(min=0.5)
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
        graft.tensor([1.0]).clamp()


def test_fill_with_tensor_value_backpropagates():
    v = graft.tensor(3.0, requires_grad=True)
    z = graft.zeros(2)
    z.fill_(v)
    assert z.tolist() == [3.0, 3.0]
    (z * graft.tensor([1.0, 2.0])).sum().backward()
    assert v.grad.item() == 3.0
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."):
        graft.zeros(3).fill_(graft.tensor([1.0, 2.0]))


def test_where_with_tensor_value_backpropagates():
    v = graft.tensor(2.0, requires_grad=True)
    y = graft.where(graft.tensor([True, False]), v, 0.0)
    assert y.tolist() == [2.0, 0.0]
    y.sum().backward()
    assert v.grad.item() == 1.0


def test_inplace_log_saves_a_clone_of_its_input():  # LogBackward0 reads self's old value
    a = graft.tensor([1.0, 2.0, 4.0], requires_grad=True)
    b = a * 1
    b.log_()
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 0.5, 0.25]


# ---- 6. indexing: masks with other advanced indices, numpy arrays, sequences as tuples ----

def _mask2d():
    return graft.tensor([[True, False, True], [False, True, False]])


def test_2d_mask_followed_by_advanced_index():
    y = graft.arange(24).reshape(2, 3, 4)
    m = _mask2d()
    assert y[m, [0]].tolist() == [0, 8, 16]
    assert y[m, [0, 1, 2]].tolist() == [0, 9, 18]
    assert y[0, m[0], [1]].tolist() == [1, 9]
    r = y[1, None, m[0], 1]
    assert list(r.shape) == [1, 2] and r.tolist() == [[13, 21]]
    r = y[..., m[1], 2]
    assert list(r.shape) == [2, 1] and r.tolist() == [[6], [18]]
    assert list(y[None, m].shape) == [1, 3, 4]
    w = graft.arange(24).reshape(4, 3, 2)
    mm = graft.tensor([[True, False], [False, True], [True, True]])
    assert w[1:3, mm].tolist() == [[6, 9, 10, 11], [12, 15, 16, 17]]


def test_2d_mask_with_advanced_index_setitem():
    y = graft.arange(24).reshape(2, 3, 4)
    y[_mask2d(), graft.tensor([1, 2, 3])] = 0
    assert y.tolist() == [[[0, 0, 2, 3], [4, 5, 6, 7], [8, 9, 0, 11]],
                          [[12, 13, 14, 15], [16, 17, 18, 0], [20, 21, 22, 23]]]


def test_numpy_arrays_as_indices():
    x = graft.arange(9.0).reshape(3, 3)
    r = x[np.array([1])]
    assert list(r.shape) == [1, 3] and r.tolist() == [[3.0, 4.0, 5.0]]
    assert x[np.array([1, 0])].tolist() == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert x[np.array([True, False, True])].tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]
    r = x[np.array(1)]
    assert list(r.shape) == [3] and r.tolist() == [3.0, 4.0, 5.0]
    assert x[np.array([0, 1]), np.array([1, 2])].tolist() == [1.0, 5.0]
    assert x[np.array([[0, 1], [1, 0]])].tolist() == [1.0, 3.0]  # a 2-d array reads as a tuple
    x[np.array([0, 2])] = 0
    assert x.tolist() == [[0.0, 0.0, 0.0], [3.0, 4.0, 5.0], [0.0, 0.0, 0.0]]


def test_sequence_with_tensors_lists_slices_is_a_tuple():
    x = graft.arange(9.0).reshape(3, 3)
    r = x[[graft.tensor([0, 1]), graft.tensor([2, 0])]]
    assert list(r.shape) == [2] and r.tolist() == [2.0, 3.0]
    assert x[[[0, 1], [2, 0]]].tolist() == [2.0, 3.0]
    assert x[[0, slice(None)]].tolist() == [0.0, 1.0, 2.0]
    assert list(x[[None, 0]].shape) == [1, 3]
    assert x[[..., 0]].tolist() == [0.0, 3.0, 6.0]
    # plain lists of ints / bools stay one advanced index
    assert x[[0, 1]].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x[[[0, 1]]].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert x[[True, False, True]].tolist() == [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]]


# ---- 7. factories and splitting ----

def test_scalar_tensor_uses_default_dtype():
    assert graft.scalar_tensor(3).dtype == graft.float32
    assert graft.scalar_tensor(True).dtype == graft.float32
    assert graft.scalar_tensor(3).item() == 3.0
    assert graft.scalar_tensor(3, dtype=graft.int64).dtype == graft.int64


def test_factory_size_keyword():
    assert list(graft.zeros(size=(2, 3)).shape) == [2, 3]
    assert graft.ones(size=[2]).tolist() == [1.0, 1.0]
    for f in (graft.empty, graft.rand, graft.randn):
        assert list(f(size=(1, 2)).shape) == [1, 2]
    with pytest.raises(TypeError, match="zeros\\(\\) got multiple values for argument 'size'"):
        graft.zeros((2,), size=(3,))
    with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
        graft.zeros(size=3)


def test_randint_keyword_forms():
    r = graft.randint(0, 10, size=(3,))
    assert list(r.shape) == [3] and r.dtype == graft.int64
    assert all(0 <= v < 10 for v in r.tolist())
    r = graft.randint(low=3, high=5, size=(50,))
    assert set(r.tolist()) <= {3, 4}
    assert list(graft.randint(high=5, size=(2,)).shape) == [2]
    assert all(v == 7 for v in graft.randint(7, 8, (4,)).tolist())
    with pytest.raises(TypeError, match="randint\\(\\): argument 'size' must be tuple of ints, not int"):
        graft.randint(0, 10)


def test_split_chunk_unbind_return_tuples():
    x = graft.arange(5)
    for r in (graft.split(x, 2), x.split(2), x.split([2, 3]), graft.chunk(x, 2), x.chunk(2), graft.unbind(x),
              x.unbind()):
        assert type(r) is tuple
    assert [t.tolist() for t in graft.split(x, 2)] == [[0, 1], [2, 3], [4]]
    assert [t.tolist() for t in x.chunk(2)] == [[0, 1, 2], [3, 4]]


# ---- 8. copy and pickle ----

def test_copy_copy_shares_storage_as_new_leaf():
    t = graft.tensor([1.0, 2.0], requires_grad=True)
    c = copy.copy(t)
    assert c is not t and c.requires_grad and c.is_leaf and c.grad_fn is None
    with graft.no_grad():
        c[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    c2 = copy.copy(t * 2)
    assert c2.requires_grad and c2.is_leaf and c2.tolist() == [10.0, 4.0]


def test_pickle_tensor_roundtrip():
    t = graft.tensor([1.5, -2.0], requires_grad=True)
    p = pickle.loads(pickle.dumps(t))
    assert p.tolist() == [1.5, -2.0] and p.requires_grad and p.is_leaf and p.dtype == graft.float32
    x = graft.arange(6).reshape(2, 3).t()  # a non-contiguous view
    p = pickle.loads(pickle.dumps(x))
    assert p.dtype == graft.int64 and p.tolist() == [[0, 3], [1, 4], [2, 5]] and not p.requires_grad
    for v in (graft.zeros(0, 3), graft.tensor(True), graft.tensor([1.25], dtype=graft.float64),
              graft.tensor([[7]], dtype=graft.int32)):
        p = pickle.loads(pickle.dumps(v))
        assert p.dtype == v.dtype and list(p.shape) == list(v.shape) and p.tolist() == v.tolist()


def test_pickle_parameter_and_device():
    import graft.nn as nn
    q = pickle.loads(pickle.dumps(nn.Parameter(graft.ones(2))))
    assert type(q) is nn.Parameter and q.requires_grad and q.tolist() == [1.0, 1.0]
    for s in ("cpu", "cuda:1"):
        d = pickle.loads(pickle.dumps(graft.device(s)))
        assert d == graft.device(s) and str(d) == s
    assert copy.deepcopy(graft.device("cpu")) == graft.device("cpu")
