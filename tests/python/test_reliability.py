"""Reliability (the hostile-user defects): inputs that crashed, hung or gave a silently wrong
value now behave as PyTorch's (Debian's python3-torch 1.13 gave every expected value and error
text below). Each test failed before its fix."""
import math

import pytest

import graft
import graft.nn.functional as F


# ---- sizes from user numbers never wrap (graft/core/checked_math.h) ----
def test_a_huge_pooling_window_raises_instead_of_hanging():
    x = graft.randn(1, 1, 4, 4)
    for k in (2**63 - 1, 2**62, 2**31):
        with pytest.raises(RuntimeError, match="^integer out of range$"):
            F.max_pool2d(x, k)
        with pytest.raises(RuntimeError, match="^integer out of range$"):
            F.avg_pool2d(x, k)
    with pytest.raises(RuntimeError, match="integer out of range"):
        F.max_pool2d(x, 2, stride=2**40)


def test_a_huge_adaptive_pooling_size_raises_instead_of_crashing():
    x = graft.randn(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="numel: integer multiplication overflow"):
        F.adaptive_avg_pool2d(x, (2**62, 4))
    # large but representable: the averaging matrix comes from the allocator, so too large is an OOM
    with pytest.raises(graft.OutOfMemoryError):
        F.adaptive_avg_pool2d(x, (2**40, 4))
    assert F.adaptive_avg_pool2d(x, (2, 2)).shape == (1, 1, 2, 2)


def test_huge_convolution_and_padding_arguments_raise():
    x, w = graft.randn(1, 1, 5, 5), graft.randn(1, 1, 3, 3)
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, dilation=2**62)
    with pytest.raises(RuntimeError):
        F.conv2d(x, w, padding=2**62)
    with pytest.raises(RuntimeError, match="integer addition overflow"):
        F.pad(x, (2**63 - 1, 2**63 - 1))
    with pytest.raises(RuntimeError, match="integer multiplication overflow"):
        graft.ones(4).repeat(2**62)


# ---- batch norm on zero channels or an empty batch ----
def test_batch_norm_on_zero_channels_in_training_returns_empty():
    out = F.batch_norm(graft.randn(3, 0), None, None, training=True)
    assert out.shape == (3, 0)
    out = graft.nn.BatchNorm1d(0)(graft.randn(3, 0))
    assert out.shape == (3, 0)


def test_batch_norm_on_an_empty_batch_leaves_the_running_statistics_alone():
    bn = graft.nn.BatchNorm1d(3)
    out = bn(graft.randn(0, 3))
    assert out.shape == (0, 3)
    assert bn.running_mean.tolist() == [0.0, 0.0, 0.0] and bn.running_var.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        bn(graft.randn(1, 3))


# ---- Python numbers stored into a tensor: PyTorch's overflow error ----
@pytest.mark.parametrize("call", [
    lambda t: t.clamp_max(2**40),
    lambda t: t.clamp(min=-2**40),
    lambda t: t.fill_(2**40),
    lambda t: t.masked_fill(graft.tensor([True, False]), 2**40),
    lambda t: graft.where(graft.tensor([True, False]), t, 2**40),
    lambda t: t.__setitem__(0, 2**40),
    lambda t: graft.full((2,), 2**40, dtype=graft.int32),
])
def test_an_integer_that_overflows_int32_raises(call):
    t = graft.tensor([1, 2], dtype=graft.int32)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int without overflow$"):
        call(t)
    assert t.tolist() == [1, 2]  # nothing written


def test_overflow_into_int64_and_float_and_what_fits():
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int64_t without overflow$"):
        graft.zeros(2, dtype=graft.int64).fill_(1e30)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int64_t without overflow$"):
        graft.zeros(2, dtype=graft.int64).fill_(float("nan"))
    with pytest.raises(RuntimeError, match="^value cannot be converted to type float without overflow$"):
        graft.zeros(2).fill_(1e300)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type float without overflow$"):
        graft.zeros(2).clamp(min=1e300)
    assert graft.zeros(2).fill_(float("inf")).tolist() == [math.inf, math.inf]
    assert graft.zeros(2, dtype=graft.int32).fill_(1.5).tolist() == [1, 1]  # truncated, as PyTorch
    assert graft.zeros(2, dtype=graft.int32).masked_fill(graft.tensor([True, False]), 1.5).tolist() == [1, 0]
    assert graft.zeros(2, dtype=graft.bool).fill_(5).tolist() == [True, True]
    assert graft.zeros(2, dtype=graft.int64).fill_(-2**63).tolist() == [-2**63, -2**63]
    # arithmetic wraps, as PyTorch's does
    assert (graft.zeros(2, dtype=graft.int32) + 2**40).tolist() == [0, 0]


# ---- silent wrong values ----
def test_allclose_of_a_finite_and_an_infinite_value_is_false():
    assert not graft.allclose(graft.tensor(1.0), graft.tensor(math.inf))
    assert graft.allclose(graft.tensor(math.inf), graft.tensor(math.inf))
    assert not graft.allclose(graft.tensor(math.inf), graft.tensor(-math.inf))
    assert not graft.allclose(graft.tensor(math.nan), graft.tensor(math.nan))
    assert graft.allclose(graft.tensor(math.nan), graft.tensor(math.nan), equal_nan=True)
    assert graft.allclose(graft.tensor(1.0), graft.tensor(1.0 + 1e-9))


def test_integer_to_a_negative_integer_power_raises():
    with pytest.raises(RuntimeError, match="^Integers to negative integer powers are not allowed.$"):
        graft.tensor([2, 3]) ** -1
    assert (graft.tensor([2.0, 4.0]) ** -1).tolist() == [0.5, 0.25]
    assert (graft.tensor([2, 3]) ** 2).tolist() == [4, 9]


def test_outer_takes_vectors_only():
    with pytest.raises(RuntimeError, match="^outer: Expected 1-D argument self, but got 2-D$"):
        graft.outer(graft.randn(2, 2), graft.randn(3))
    with pytest.raises(RuntimeError, match="^outer: Expected 1-D argument vec2, but got 2-D$"):
        graft.randn(3).outer(graft.randn(2, 2))
    assert graft.outer(graft.tensor([1.0, 2.0]), graft.tensor([3.0, 4.0, 5.0])).tolist() == [[3, 4, 5], [6, 8, 10]]


def test_split_of_an_empty_dimension_is_one_empty_piece():
    pieces = graft.empty(0).split(2)
    assert len(pieces) == 1 and pieces[0].shape == (0,)
    assert [p.shape for p in graft.empty(3, 0).split(1, dim=1)] == [(3, 0)]
    assert len(graft.empty(0).chunk(3)) == 3  # chunk keeps its count (PyTorch)


def test_a_nan_clamp_bound_gives_nan():
    # torch 1.13: clamp_min(nan), clamp_max(nan) and clamp with both bounds give NaN; clamp with
    # one NaN bound returned the input unchanged, which PyTorch since fixed (pytorch#172200):
    # graft gives NaN in every form
    assert all(math.isnan(v) for v in graft.tensor([1.0, 2.0]).clamp_min(math.nan).tolist())
    assert all(math.isnan(v) for v in graft.tensor([1.0, 2.0]).clamp(min=0.0, max=math.nan).tolist())
    assert all(math.isnan(v) for v in graft.tensor([1.0, 2.0]).clamp(max=math.nan).tolist())
    assert graft.tensor([1.0, 5.0]).clamp(min=2.0).tolist() == [2.0, 5.0]
    assert graft.tensor([1, 5]).clamp(max=3).tolist() == [1, 3]
    # an int64 bound at the type's edge (2**63 - 1 is 2**63 as a double) saturates, as PyTorch's
    assert graft.tensor([1, 2]).clamp_min(2**63 - 1).tolist() == [2**63 - 1] * 2
    assert graft.tensor([1, 2]).clamp_max(-2**63).tolist() == [-2**63] * 2


def test_sum_with_a_dtype_converts_before_summing():
    assert graft.tensor([1.5, 2.5]).sum(dtype=graft.int64).item() == 3
    x = graft.tensor([1.5, 2.5], requires_grad=True)
    s = x.sum(dtype=graft.float64)
    assert s.dtype == graft.float64
    s.backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_normalize_with_p_zero_and_infinity():
    x = graft.tensor([[3.0, 0.0, -4.0], [0.0, 0.0, 0.0]])
    assert F.normalize(x, p=0).tolist() == [[1.5, 0.0, -2.0], [0.0, 0.0, 0.0]]
    assert F.normalize(x, p=math.inf).tolist() == [[0.75, 0.0, -1.0], [0.0, 0.0, 0.0]]
    y = F.normalize(x, p=2)
    assert [round(v, 6) for v in y[0].tolist()] == [0.6, 0.0, -0.8]


# ---- saved-tensor pack hooks run as PyTorch runs them ----
def test_a_computing_pack_hook_runs_without_grad_and_forms_no_cycle():
    seen = []

    def pack(t):
        seen.append((t.requires_grad, graft.is_grad_enabled()))  # flags only: holding t would keep it
        return t.clone()

    x = graft.randn(4, requires_grad=True)
    before = graft._C._cpu_memory_allocated()
    with graft.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = x.exp()  # exp saves its output
    # PyTorch 1.13 passes the tensor itself (2.x: inputs detached), always without grad mode
    assert seen == [(True, False)]
    del y  # the forward is dropped without backward: every byte comes back, no cycle through C++
    assert graft._C._cpu_memory_allocated() == before


def test_a_pack_hook_result_still_backpropagates():
    x = graft.tensor([1.0, 2.0], requires_grad=True)
    with graft.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (x * x).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


# ---- clear errors ----
def test_a_value_of_the_wrong_type_inside_a_binding_is_a_type_error_naming_both_types():
    with pytest.raises(TypeError) as e:  # PyTorch's parser's text: what was given, what is taken
        graft.ones(2).mean(dtype="float")
    assert "got (dtype=str, )" in str(e.value) and "graft.dtype dtype" in str(e.value)


def test_randperm_beyond_the_cap_is_an_allocator_oom_before_any_work():
    MiB = 1 << 20
    graft._C._set_per_process_memory_limit(graft.cpu.memory_reserved() + 64 * MiB, "cpu")
    try:
        with pytest.raises(graft.OutOfMemoryError):
            graft.randperm(2**27)  # 1 GiB of int64: before, a host vector was built outside the allocator first
    finally:
        graft._C._set_per_process_memory_limit(None, "cpu")
    p = graft.randperm(1000)
    assert sorted(p.tolist()) == list(range(1000)) and p.dtype == graft.int64


def test_repr_of_a_tensor_with_many_dimensions_is_linear():
    # was quadratic in the number of dims (this one ran for hours), one stack frame per dim
    r = repr(graft.zeros([1] * 100000))
    assert r == "tensor(" + "[" * 100000 + "0." + "]" * 100000 + ")"
    assert repr(graft.zeros(2, 1, 1, 3)) == ("tensor([[[[0., 0., 0.]]],\n\n\n"
                                              "        [[[0., 0., 0.]]]])")


# ---- gradients at the edges (values from torch 1.13) ----
def _grad(fn, values):
    x = graft.tensor(values, requires_grad=True)
    fn(x).backward()
    return x.grad.tolist()


def _same(a, b):
    return all((math.isnan(u) and math.isnan(v)) or u == pytest.approx(v) for u, v in zip(a, b))


@pytest.mark.parametrize("values, amax, full_max", [
    ([1.0, math.inf, math.inf], [0.0, 0.5, 0.5], [0.0, 0.5, 0.5]),
    ([1.0, -math.inf], [1.0, 0.0], [1.0, 0.0]),
    ([-math.inf, -math.inf], [0.5, 0.5], [0.5, 0.5]),
    ([1.0, math.nan, 2.0], [math.nan] * 3, [0.0, 1.0, 0.0]),
])
def test_amax_and_max_gradients_at_infinities_and_nan(values, amax, full_max):
    assert _same(_grad(lambda x: x.amax(), values), amax)
    assert _same(_grad(lambda x: x.max(), values), full_max)
    assert _same(_grad(lambda x: -(-x).amin(), values), amax)


def test_amax_over_several_dims_shares_the_gradient_between_ties():
    x = graft.tensor([[[1.0, 3.0], [3.0, 0.0]], [[2.0, 2.0], [2.0, 1.0]]], requires_grad=True)
    y = x.amax(dim=(1, 2))
    assert y.tolist() == [3.0, 2.0]
    y.sum().backward()
    assert x.grad.flatten().tolist() == pytest.approx([0, 0.5, 0.5, 0, 1 / 3, 1 / 3, 1 / 3, 0])
    with pytest.raises(RuntimeError, match="^dim 1 appears multiple times in the list of dims$"):
        x.amax(dim=(1, 1))


def test_std_of_a_constant_slice_and_dist_of_equal_tensors_have_zero_gradients():
    x = graft.tensor([[1.0, 2.0], [1.0, 3.0]], requires_grad=True)
    x.std(0).sum().backward()
    assert [[round(v, 4) for v in row] for row in x.grad.tolist()] == [[0.0, -0.7071], [0.0, 0.7071]]
    x = graft.tensor([1.0, 2.0], requires_grad=True)
    graft.dist(x, x.detach()).backward()
    assert x.grad.tolist() == [0.0, 0.0]
    x = graft.tensor([3.0, 4.0], requires_grad=True)
    d = graft.dist(x, graft.zeros(2))
    d.backward()
    assert d.detach().item() == 5.0 and x.grad.tolist() == pytest.approx([0.6, 0.8])
    assert graft.dist(graft.tensor([3.0, -4.0]), graft.zeros(2), p=1).item() == 7.0
    assert graft.dist(graft.tensor([3.0, -4.0]), graft.zeros(2), p=math.inf).item() == 4.0
    assert graft.dist(graft.tensor([3.0, 0.0]), graft.zeros(2), p=0).item() == 1.0


def test_float32_std_of_extreme_values_is_finite():
    assert graft.tensor([1e38, 0.0]).std().item() == pytest.approx(7.0711e37, rel=1e-4)


def test_smooth_l1_gradient_at_an_infinite_difference():
    assert _grad(lambda x: F.smooth_l1_loss(x, graft.zeros(2)), [1.0, math.inf]) == [0.5, 0.5]


@pytest.mark.parametrize("values, expected", [
    ([1.0, math.nan], math.nan), ([math.nan, -math.inf], math.nan), ([math.inf, math.nan], math.nan),
    ([-math.inf, -math.inf], -math.inf), ([math.inf, math.inf], math.inf), ([1.0, math.inf], math.inf),
])
def test_logsumexp_keeps_nan(values, expected):
    got = graft.logsumexp(graft.tensor(values), 0).item()
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_fold_and_unfold_with_a_huge_kernel_raise():
    with pytest.raises(RuntimeError, match="overflow"):
        F.fold(graft.randn(4, 4, 0), output_size=(1, 1), kernel_size=2**62, dilation=2, padding=1)
    with pytest.raises(RuntimeError):
        F.unfold(graft.randn(1, 2, 4, 4), kernel_size=2**62)


def test_batch_norm_with_an_expanded_running_var_changes_nothing_before_failing():
    rm, rv = graft.zeros(2), graft.ones(1).expand(2)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        F.batch_norm(graft.randn(4, 2), rm, rv, training=True)
    assert rm.tolist() == [0.0, 0.0]


def test_adaptive_average_pooling_keeps_an_infinity_in_its_own_window():
    x = graft.tensor([[[[1.0, math.inf, 3.0, 4.0]]]])
    assert F.adaptive_avg_pool2d(x, (1, 2)).flatten().tolist() == [math.inf, 3.5]
    x = graft.randn(2, 3, 5, 7, requires_grad=True)
    y = F.adaptive_avg_pool2d(x, (2, 3))
    assert graft.allclose(y[0, 0, 0, 0], x[0, 0, :3, :3].mean())
    y.sum().backward()
    assert graft.allclose(x.grad[0, 0, 0, 0], graft.tensor(1 / 9 + 0.0) * 1)
    # an infinite gradient stays in its window's elements (the matrices spread inf * 0 = NaN)
    x = graft.ones(1, 1, 4, 4, requires_grad=True)
    F.adaptive_avg_pool2d(x, (2, 2)).backward(graft.tensor([[[[math.inf, 1.0], [1.0, 1.0]]]]))
    assert x.grad.flatten().tolist() == [math.inf, math.inf, 0.25, 0.25, math.inf, math.inf, 0.25, 0.25] + [0.25] * 8


def test_softmax_of_a_0d_infinity_or_nan_is_nan():
    for v in (math.inf, -math.inf, math.nan):
        assert math.isnan(F.softmax(graft.tensor(v), 0).item())
        assert math.isnan(F.log_softmax(graft.tensor(v), 0).item())
    assert F.softmax(graft.tensor(3.0), 0).item() == 1.0 and F.log_softmax(graft.tensor(3.0), 0).item() == 0.0


def test_max_pool_index_of_a_window_with_several_nans_is_the_last_one():
    x = graft.tensor([[[[math.nan, 1.0], [math.nan, 2.0]]]])
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert math.isnan(values.item()) and indices.item() == 2  # torch 1.13's CPU kernel


def test_reductions_return_the_requested_dtype_and_bool_squares_as_int64():
    assert graft.tensor([1.5, 2.5]).sum(dtype=graft.int32).dtype == graft.int32
    assert graft.tensor([[1, 2], [3, 4]], dtype=graft.int32).sum(0, dtype=graft.int32).tolist() == [4, 6]
    assert graft.tensor([1, 0]).sum(dtype=graft.bool).item() is True
    assert graft.tensor([1, 2], dtype=graft.int32).sum().dtype == graft.int64  # no dtype: integers sum as int64
    p = graft.tensor([2, 3]).prod(dtype=graft.bool)
    assert p.dtype == graft.bool and p.item() is True
    assert graft.tensor([2, 3], dtype=graft.int64).prod(dtype=graft.int32).dtype == graft.int32
    s = graft.tensor(True).square()
    assert s.dtype == graft.int64 and s.item() == 1


def test_nonzero_as_tuple_of_a_0d_tensor_is_a_1_tuple():
    (i,) = graft.nonzero(graft.tensor(3.0), as_tuple=True)
    assert i.tolist() == [0]
    (j,) = graft.tensor(0.0).nonzero(as_tuple=True)
    assert j.tolist() == [] and j.dtype == graft.int64


# ---- accepted where PyTorch refuses, or refused where it accepts (the fuzz's accept/refuse class) ----
def test_in_place_ops_on_an_empty_tensor_with_zero_strides_are_allowed():
    import numpy as np
    x = graft.from_numpy(np.zeros((1, 0, 4, 2)))  # NumPy gives an empty array all-zero strides
    assert x.stride() == (0, 0, 0, 0)
    assert x.abs_() is x and x.clamp_(0, 1) is x and x.fill_(3.0) is x and x.relu_() is x
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        graft.zeros(1).expand(3).add_(1.0)
    # fill_ and zero_ write one value to every alias, which PyTorch allows
    assert graft.zeros(1).expand(3).fill_(2.0).tolist() == [2.0] * 3
    assert graft.ones(1).expand(3).zero_().tolist() == [0.0] * 3


def test_clone_and_contiguous_refuse_unknown_keywords():
    x = graft.ones(2)
    for name in ("clone", "contiguous", "is_contiguous"):
        with pytest.raises(TypeError, match=f"^{name}\\(\\) got an unexpected keyword argument 'bogus'$"):
            getattr(x, name)(bogus=1)
    assert x.clone(memory_format=None).tolist() == [1.0, 1.0]


def test_bool_tensors_refuse_subtraction_negation_plus_abs_and_argmax():
    b = graft.tensor([True, False])
    sub_text = "^Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask"
    for f in (lambda: b - graft.tensor([1.5, 1.0]), lambda: graft.tensor([1.5, 1.0]) - b, lambda: b - 0.5,
              lambda: 2 - b, lambda: graft.ones(2) - False, lambda: graft.ones(2).sub_(b)):
        with pytest.raises(RuntimeError, match=sub_text):
            f()
    with pytest.raises(RuntimeError, match="^Subtraction, the `-` operator, with two bool tensors is not supported"):
        b - b
    with pytest.raises(RuntimeError, match="^Negation, the `-` operator, on a bool tensor is not supported"):
        -b
    with pytest.raises(RuntimeError, match="^The `\\+` operator, on a bool tensor is not supported.$"):
        +b
    with pytest.raises(RuntimeError, match="^\"abs_cpu\" not implemented for 'Bool'$"):
        b.abs()
    for f, kernel in ((lambda: b.argmax(), "argmax_cpu"), (lambda: b.argmin(0), "argmin_cpu")):
        with pytest.raises(RuntimeError, match=f"^\"{kernel}\" not implemented for 'Bool'$"):
            f()
    assert (b + True).tolist() == [True, True] and b.max().item() is True  # what stays allowed


def test_add_and_sub_check_alpha_on_every_path():
    i = graft.tensor([1, 2])
    text = "^For integral input tensors, argument alpha must not be a floating point number.$"
    for f in (lambda: graft.add(i, 2, alpha=0.9), lambda: i.add_(i, alpha=-1.0), lambda: graft.sub(i, i, alpha=1.0),
              lambda: i.sub_(1, alpha=2.5)):
        with pytest.raises(RuntimeError, match=text):
            f()
    with pytest.raises(RuntimeError, match="^Boolean alpha only supported for Boolean results.$"):
        graft.add(graft.ones(2), graft.ones(2), alpha=False)
    assert graft.add(i, i, alpha=2).tolist() == [3, 6] and i.tolist() == [1, 2]


def test_random_fills_check_dtype_and_bounds():
    with pytest.raises(RuntimeError, match="^uniform_ expects to return a \\[from, to\\) range, but found from=1.5 > to=1$"):
        graft.empty(2).uniform_(1.5)
    with pytest.raises(RuntimeError, match="^to is out of bounds for float$"):
        graft.empty(2).uniform_(0, math.inf)
    with pytest.raises(RuntimeError, match="^from is out of bounds for float$"):
        graft.empty(2).uniform_(math.nan, 1)
    with pytest.raises(RuntimeError, match="^uniform_ expects to-from <= std::numeric_limits<Double>::max\\(\\)"):
        graft.empty(2, dtype=graft.float64).uniform_(-1e308, 1e308)
    with pytest.raises(RuntimeError, match="^\"check_uniform_bounds\" not implemented for 'Long'$"):
        graft.zeros(2, dtype=graft.int64).uniform_()
    with pytest.raises(RuntimeError, match="^\"normal_kernel_cpu\" not implemented for 'Bool'$"):
        graft.zeros(2, dtype=graft.bool).normal_()
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std -1$"):
        graft.empty(2).normal_(0, -1)
    with pytest.raises(RuntimeError, match="^normal expects std >= 0.0, but found std nan$"):
        graft.empty(2).normal_(0, math.nan)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for int$"):
        graft.randint(0, 2**40, (3,), dtype=graft.int32)  # used to wrap into int32
    with pytest.raises(RuntimeError, match="^from is out of bounds for bool$"):
        graft.randint(-5, 1, (3,), dtype=graft.bool)
    with pytest.raises(RuntimeError, match="^\"check_uniform_bounds\" not implemented for 'Long'$"):
        graft.rand(2, dtype=graft.int64)
    x = graft.empty(1000).uniform_(-2, 3)
    assert x.min().item() >= -2 and x.max().item() < 3
    assert set(graft.randint(0, 2, (100,), dtype=graft.bool).tolist()) <= {False, True}


def test_integer_inputs_are_refused_where_pytorch_has_no_kernel():
    with pytest.raises(RuntimeError, match="^\"leaky_relu_cpu\" not implemented for 'Long'$"):
        F.leaky_relu(graft.tensor([1, -2]))
    norm_text = "^norm\\(\\): input dtype should be either floating point or complex. Got Long instead.$"
    with pytest.raises(RuntimeError, match=norm_text):
        graft.dist(graft.tensor([1, 2]), graft.tensor([1, 3]))
    with pytest.raises(RuntimeError, match=norm_text.replace("Long", "Int")):
        F.normalize(graft.tensor([1, 2], dtype=graft.int32), dim=0)
    with pytest.raises(RuntimeError, match="^Integers to negative integer powers are not allowed.$"):
        graft.tensor([True]) ** -3
    with pytest.raises(RuntimeError, match="^Float did not match Double$"):
        graft.allclose(graft.tensor([1.0]), graft.tensor([1.0], dtype=graft.float64))
    assert graft.dist(graft.tensor([1.0, 2.0]), graft.tensor([1.0, 4.0])).item() == 2.0


def test_shape_arguments_take_pytorchs_keywords_and_refuse_bools_and_missing_sizes():
    x = graft.arange(6.0)
    assert x.reshape(shape=(2, 3)).shape == (2, 3) and graft.reshape(x, shape=(3, 2)).shape == (3, 2)
    assert graft.permute(x.reshape(2, 3), dims=(1, 0)).shape == (3, 2)
    assert x[:1].expand(size=(2, 1)).shape == (2, 1) and x[:2].repeat(repeats=(2,)).tolist() == [0, 1, 0, 1]
    with pytest.raises(TypeError, match="^permute\\(\\) got multiple values for argument 'dims'$"):
        x.permute(0, dims=(0,))
    with pytest.raises(TypeError, match="^permute\\(\\) missing 1 required positional arguments: \"dims\"$"):
        graft.tensor(1.0).permute()
    with pytest.raises(TypeError, match="must be tuple of ints, not bool"):
        graft.randn(True)
    with pytest.raises(TypeError, match="must be tuple of ints, not bool"):
        x.reshape(True)
    for factory in (graft.ones, graft.zeros, graft.empty, graft.rand, graft.randn):
        with pytest.raises(TypeError, match="missing 1 required positional arguments: \"size\""):
            factory()
    assert graft.ones(()).shape == ()
    with pytest.raises(RuntimeError, match="^tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
        x.mT
    with pytest.raises(IndexError, match="Dimension out of range"):
        graft.tensor(1.0).flatten(2**63 - 1)
    assert graft.tensor(1.0).flatten().shape == (1,)


def test_binary_cross_entropy_keeps_the_inputs_dtype_with_a_float64_weight():
    p, y = graft.tensor([0.25, 0.5]), graft.tensor([1.0, 0.0])
    w = graft.tensor([2.0, 1.0], dtype=graft.float64)
    loss = F.binary_cross_entropy(p, y, weight=w)
    assert loss.dtype == graft.float32
    assert loss.item() == pytest.approx((2 * -math.log(0.25) - math.log(0.5)) / 2, rel=1e-6)
    logits = F.binary_cross_entropy_with_logits(graft.tensor([0.0]), graft.tensor([1.0]), w[:1], pos_weight=w[1:])
    assert logits.dtype == graft.float32 and logits.item() == pytest.approx(2 * math.log(2), rel=1e-6)


def test_div_rounding_modes_trunc_and_floor_with_zero_gradients():
    a = graft.tensor([-7, 7, 7])
    assert graft.div(a, graft.tensor([2, -2, 2]), rounding_mode="trunc").tolist() == [-3, -3, 3]
    assert graft.div(a, 2, rounding_mode="floor").tolist() == [-4, 3, 3]
    assert graft.div(graft.tensor([-7.0, 7.0]), 2.5, rounding_mode="trunc").tolist() == [-2.0, 2.0]
    assert graft.div(graft.tensor([-7.0, 7.0]), 0.0, rounding_mode="trunc").tolist() == [-math.inf, math.inf]
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        graft.div(a, 0, rounding_mode="trunc")
    with pytest.raises(RuntimeError, match="^div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'x'$"):
        graft.div(a, 2, rounding_mode="x")
    with pytest.raises(RuntimeError, match="^\"div_trunc_cpu\" not implemented for 'Bool'$"):
        graft.div(graft.tensor([True]), True, rounding_mode="trunc")
    x = graft.tensor([1.5, -2.5], requires_grad=True)
    y = graft.tensor([2.0, 2.0], requires_grad=True)
    q = graft.div(x, y, rounding_mode="trunc")
    assert q.grad_fn.name() == "DivBackward2" and q.tolist() == [0.0, -1.0]
    q.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0] and y.grad.tolist() == [0.0, 0.0]


def test_arguments_pytorch_accepts():
    x = graft.randn(2, 3, requires_grad=True)
    loss = F.cross_entropy(x, graft.tensor([0, 2]), label_smoothing=math.nan)  # accepted, and smooths nothing
    assert loss.detach().item() == pytest.approx(F.cross_entropy(x.detach(), graft.tensor([0, 2])).item())
    assert graft.ones(2).to(None).tolist() == [1.0, 1.0]
    empty = graft.gather(graft.zeros(1, 3, 4), -2, graft.zeros(5, 3, 0, dtype=graft.int64))
    assert empty.shape == (5, 3, 0)
    y = F.softplus(graft.tensor([-1.0, 0.0, 2.0]), beta=0)
    assert y.tolist() == [math.inf] * 3


def test_group_norm_and_grouped_convolution_refuse_what_pytorch_refuses():
    with pytest.raises(ValueError, match="^Expected more than 1 value per channel when training, got input size \\[1, 2\\]$"):
        F.group_norm(graft.ones(1, 2), 2)
    assert F.group_norm(graft.ones(1, 2, 1), 1).shape == (1, 2, 1)
    with pytest.raises(RuntimeError, match="^Given groups=1, expected weight to be at least 1 at dimension 0, but got "
                                           "weight of size \\[0, 1, 3, 3\\] instead$"):
        F.conv_transpose2d(graft.ones(1, 0, 3, 3), graft.ones(0, 1, 3, 3))
    with pytest.raises(RuntimeError, match="^Given groups=8, expected weight to be at least 8 at dimension 0"):
        F.conv_transpose2d(graft.ones(1, 4, 3, 3), graft.ones(4, 1, 3, 3), groups=8)


def test_embedding_scale_grad_by_freq_divides_each_rows_gradient_by_its_count():
    w = graft.arange(8.0).view(4, 2).requires_grad_()
    idx = graft.tensor([1, 3, 1, 0, 1])
    out = F.embedding(idx, w, scale_grad_by_freq=True)
    out.backward(graft.arange(10.0).view(5, 2))
    assert w.grad.flatten().tolist() == [6.0, 7.0, 4.0, 5.0, 0.0, 0.0, 2.0, 3.0]  # torch 1.13's
    m = graft.nn.Embedding(4, 2, padding_idx=3, scale_grad_by_freq=True)
    m(idx).backward(graft.arange(10.0).view(5, 2))
    assert m.weight.grad[3].tolist() == [0.0, 0.0] and m.weight.grad[1].tolist() == pytest.approx([4.0, 5.0])


def test_more_refusals_and_acceptances_from_the_fuzz():
    with pytest.raises(RuntimeError, match="^rtol must be greater than or equal to zero, but got nan$"):
        graft.allclose(graft.ones(2), graft.ones(2), math.nan)
    with pytest.raises(RuntimeError, match="^ignore_index is not supported for floating point target$"):
        F.cross_entropy(graft.randn(2, 3), graft.full((2, 3), 1 / 3), ignore_index=1)
    leaf = graft.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place operation.$"):
        leaf.uniform_()
    with graft.no_grad():
        leaf.normal_()  # as torch: allowed without grad mode
    with pytest.raises(RuntimeError, match="^unflatten: sizes must be non-empty$"):
        graft.zeros(2, 0).unflatten(0, ())
    assert graft.zeros(2, 0, dtype=graft.bool).unflatten(0, (-1,)).shape == (2, 0)
    assert graft.zeros(6).unflatten(0, (2, -1)).shape == (2, 3)
    e = graft.zeros(2, 0, 1, 0).expand(2**62, -1, 0, 3, -1)  # no elements: no size overflow
    assert e.shape == (2**62, 2, 0, 3, 0) and e.numel() == 0


# ---- the exception families PyTorch raises (the fuzz's error_type class) ----
def test_errors_have_pytorchs_exception_types():
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        graft.ones(2).cuda()
    with pytest.raises(RuntimeError, match="^torch.cat\\(\\): expected a non-empty list of Tensors$"):
        graft.cat([])
    with pytest.raises(RuntimeError, match="^stack expects a non-empty TensorList$"):
        graft.stack([])
    with pytest.raises(RuntimeError, match="^where expected condition to be a boolean tensor, but got a tensor with dtype Float$"):
        graft.where(graft.ones(2), graft.ones(2), graft.ones(2))
    with pytest.raises(RuntimeError, match="^masked_fill_ only supports boolean masks"):
        graft.ones(2).masked_fill(graft.ones(2), 1.0)
    with pytest.raises(RuntimeError, match="^index 5 is out of bounds for dimension 1 with size 3$"):
        graft.ones(2, 3).gather(1, graft.tensor([[5]]))
    with pytest.raises(RuntimeError, match="^index 3 is out of bounds for dimension 0 with size 2$"):
        graft.ones(2).scatter_add(0, graft.tensor([3]), graft.ones(1))
    with pytest.raises(IndexError, match="^index out of range in self$"):
        graft.ones(2).index_select(0, graft.tensor([-1]))
    with pytest.raises(RuntimeError, match="^index_select\\(\\): self indexing axis dim should be positive$"):
        graft.zeros(2, 0).index_select(1, graft.tensor([0]))
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        F.dropout(graft.ones(2, dtype=graft.int64))
    with pytest.raises(RuntimeError, match="^\"max_pool2d\" not implemented for 'Long'$"):
        F.max_pool2d(graft.ones(1, 1, 2, 2, dtype=graft.int64), 1)
    for f in (graft.flatten, graft.squeeze, graft.t, graft.numel):
        with pytest.raises(TypeError, match="\\(\\): argument 'input' \\(position 1\\) must be Tensor, not float$"):
            f(1.5)
    with pytest.raises(TypeError):
        graft.chunk("ab", 2)


# ---- silent wrong values the fuzz listed (fixed) ----
def test_clamp_with_tensor_bounds_propagates_nan_and_routes_gradients_as_pytorch():
    nan = math.nan
    x = graft.tensor([1.0, nan, 3.0, 0.5, 2.0], requires_grad=True)
    lo = graft.tensor([0.0, 0.0, nan, 1.0, 2.0], requires_grad=True)
    hi = graft.tensor([2.0, 2.0, 4.0, 0.0, 2.0], requires_grad=True)
    y = graft.clamp(x, lo, hi)
    v = y.tolist()
    assert v[0] == 1.0 and math.isnan(v[1]) and math.isnan(v[2]) and v[3] == 0.0 and v[4] == 2.0  # a NaN bound gives NaN
    assert y.grad_fn.name() == "ClampBackward0"
    y.backward(graft.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 5.0]  # torch 1.13's gradients
    assert lo.grad.tolist() == [0.0] * 5 and hi.grad.tolist() == [0.0, 0.0, 0.0, 4.0, 0.0]
    assert graft.tensor([1.0, 5.0]).clamp(min=graft.tensor([nan, 2.0])).tolist()[1] == 5.0
    assert math.isnan(graft.tensor([1.0]).clip(max=graft.tensor([nan])).item())


def test_pow_with_a_large_odd_integer_exponent_keeps_the_sign():
    assert graft.tensor([-2.0]).pow(2**31 - 1).item() == -math.inf  # 2**31 - 1 rounds to even in float32
    assert graft.tensor([-1.0]).pow(2**40 + 1).item() == -1.0


def test_bool_add_honours_alpha_false_and_arange_of_bools_is_int64():
    a, b = graft.tensor([True, False]), graft.tensor([True, True])
    assert graft.add(a, b, alpha=False).tolist() == [True, False]
    assert graft.add(a, b).tolist() == [True, True]
    r = graft.arange(True)
    assert r.dtype == graft.int64 and r.tolist() == [0]
    assert graft.arange(False, 3).tolist() == [0, 1, 2]


def test_in_place_pow_with_an_exponent_requiring_grad_saves_the_original_base():
    x = graft.tensor([1.0, 2.0, 3.0])
    e = graft.tensor([2.0, 0.5, 1.0], requires_grad=True)
    x.pow_(e)  # used to save x itself, then overwrite it: backward raised the version error
    x.sum().backward()
    assert x.tolist() == pytest.approx([1.0, 2.0**0.5, 3.0])
    assert e.grad.tolist() == pytest.approx([0.0, 2.0**0.5 * math.log(2.0), 3.0 * math.log(3.0)])  # torch 1.13's
    y = graft.tensor([2.0])
    y **= graft.tensor([3.0], requires_grad=True)
    y.backward()
    assert y.detach().item() == 8.0


def test_nan_label_smoothing_smooths_nothing_and_integer_arange_truncates_float_bounds():
    x, t = graft.tensor([[1.0, 2.0, 0.5]]), graft.tensor([1])
    assert F.cross_entropy(x, t, label_smoothing=math.nan).item() == pytest.approx(F.cross_entropy(x, t).item())
    assert graft.arange(-0.55, -0.5, dtype=graft.int64).tolist() == []  # torch 1.13's values below
    assert graft.arange(0.5, 3.7, dtype=graft.int64).tolist() == [0, 1, 2]
    assert graft.arange(0, 5, 1.5, dtype=graft.int64).tolist() == [0, 1, 2, 3, 4]
    assert graft.arange(-3.5, 2, dtype=graft.int32).tolist() == [-3, -2, -1, 0, 1, 2]


def test_the_fuzzs_second_pass_of_accept_and_refuse():
    b = graft.tensor([[True], [False]])
    assert b.argmax(1).tolist() == [0, 0]  # a dim of size 1 runs no kernel in torch either
    with pytest.raises(RuntimeError, match="^\"argmax_cpu\" not implemented for 'Bool'$"):
        b.argmax(0)
    assert graft.tensor([True]).clamp(max=graft.tensor([False])).tolist() == [False]
    assert graft.randn(1, False).shape == (1, 0) and graft.empty(2, True).shape == (2, 1)
    with pytest.raises(RuntimeError, match="^unflatten: Provided sizes \\[3\\] don't multiply up to the size of dim 2 \\(2\\)"):
        graft.zeros(0, 1, 2).unflatten(-1, (3,))
    assert graft.zeros(0, 3).dist(graft.zeros(0, 3), p=math.inf).item() == 0.0
    with pytest.raises(RuntimeError, match="^dropout probability has to be between 0 and 1, but got nan$"):
        F.dropout(graft.ones(2), math.nan)
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 2.0$"):
        F.dropout(graft.ones(2), 2.0)
    leaf = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an in-place operation.$"):
        leaf[:1].uniform_()
    y = (leaf * 2).uniform_()  # a non-leaf may be refilled
    assert y.shape == (2,)
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int without overflow$"):
        graft.tensor([2], dtype=graft.int32) ** (2**40)
    assert F.cross_entropy(graft.randn(2, 3), graft.rand(2, 3), ignore_index=-5).shape == ()
    assert F.adaptive_avg_pool2d(graft.zeros(2, 0, 4, 3), 1).shape == (2, 0, 1, 1)


def test_a_bool_beside_advanced_indices_is_one_of_them():
    x = graft.arange(30.0).view(5, 3, 2)
    m = graft.tensor([True, False, True, False, False])
    assert x[m, True].shape == (2, 3, 2)  # torch 1.13's shapes: the bool broadcasts with the mask
    assert x[m, [0, 1], True].shape == (2, 2) and x[m, [0, 1], True].sum().item() == 30.0
    assert x[graft.tensor([False] * 5), [], True, 0].shape == (0,)
    with pytest.raises(IndexError, match="shape mismatch"):
        x[m, [], True, 0]
    assert x[True].shape == (1, 5, 3, 2) and x[None, True, 0].shape == (1, 1, 3, 2)  # alone: a new unit dim
    y = graft.zeros(5, 3, 2)
    y[m, [0, 1], True] = 1.0
    assert y.sum().item() == 4.0


def test_to_with_a_bool_first_is_the_bool_dtype():
    x = graft.ones(2)
    assert x.to(True).dtype == graft.bool and x.to(False).tolist() == [True, True]  # torch 1.13's parser
    assert x.to(graft.float64, True).dtype == graft.float64  # a bool after the dtype is non_blocking


def test_linspace_into_an_integer_dtype_checks_its_bounds():
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int without overflow$"):
        graft.linspace(0, 2**40, 3, dtype=graft.int32)  # used to wrap
    assert graft.linspace(0, 10, 3, dtype=graft.int32).tolist() == [0, 5, 10]
