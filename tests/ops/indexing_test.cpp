// Advanced indexing and the Python-operator ops, beyond what the registry checks: values
// worked out by hand (checked against PyTorch 1.13), PyTorch's error texts, NumPy's layout rule,
// in-place semantics (version counter, CopySlices through a view, saved-tensor checks) and
// double backward through index.
#include <cmath>
#include <cstdint>
#include <limits>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;
using graft::testing::values;

namespace {

Tensor longs(std::vector<int64_t> v) { return tensor(v); }
Tensor bools(std::vector<int64_t> v) { return ne(tensor(v), 0); }
using Idx = std::vector<std::optional<Tensor>>;

}  // namespace

// ---------------- floor, floor_divide, remainder ----------------

TEST(FloorDivide, RoundsTowardMinusInfinityForIntsAndFloats) {
  Tensor a = longs({7, -7, 7, -7}), b = longs({2, 2, -2, -2});
  Tensor q = floor_divide(a, b);
  EXPECT_EQ(q.dtype(), kInt64);
  expect_tensor(q, {4}, {3, -4, -4, 3});
  Tensor qf = floor_divide(tensor({7.5, -7.5, 7.0, -7.0}), b);
  EXPECT_EQ(qf.dtype(), kFloat32);
  expect_tensor(qf, {4}, {3, -4, -4, 3});
  // a python float promotes an integer tensor to the default dtype
  Tensor qs = floor_divide(longs({1, 2}), 1.5);
  EXPECT_EQ(qs.dtype(), kFloat32);
  expect_tensor(qs, {2}, {0, 1});
  Tensor q32 = floor_divide(tensor({5.0, 6.0}).to(kInt32), 2);
  EXPECT_EQ(q32.dtype(), kInt32);
  expect_tensor(q32, {2}, {2, 3});
  // the most negative int64 over -1 wraps instead of trapping
  const int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(floor_divide(longs({lo}), -1).item<int64_t>(), lo);
  EXPECT_EQ(remainder(longs({lo}), -1).item<int64_t>(), 0);
}

TEST(FloorDivide, FloatEdgeCasesFollowPyTorch) {
  const double inf = std::numeric_limits<double>::infinity();
  auto v = values(floor_divide(tensor({1.0, -2.0, 0.0}, kFloat64), 0.0));
  EXPECT_EQ(v[0], inf);
  EXPECT_EQ(v[1], -inf);
  EXPECT_TRUE(std::isnan(v[2]));
  v = values(floor_divide(tensor({inf, 5.0, -5.0}, kFloat64), tensor({2.0, inf, inf}, kFloat64)));
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[2], -1.0);
  // a zero quotient keeps the sign of the true quotient
  v = values(floor_divide(tensor({-0.0, 0.5, -0.5}, kFloat64), 3.0));
  EXPECT_TRUE(std::signbit(v[0]));
  EXPECT_FALSE(std::signbit(v[1]));
  EXPECT_EQ(v[2], -1.0);
}

TEST(FloorDivide, IntegerZeroDivisionAndBoolRaise) {
  EXPECT_THROW_MSG(floor_divide(longs({1, 2}), longs({0, 1})), RuntimeError, "ZeroDivisionError");
  EXPECT_THROW_MSG(floor_divide(longs({1, 2}), 0), RuntimeError, "ZeroDivisionError");
  EXPECT_THROW_MSG(remainder(longs({1, 2}), 0), RuntimeError, "ZeroDivisionError");
  EXPECT_THROW_MSG(remainder(3, longs({1, 0})), RuntimeError, "ZeroDivisionError");
  EXPECT_THROW_MSG(floor_divide(bools({1, 0}), bools({1, 1})), RuntimeError,
                   "\"div_floor_cpu\" not implemented for 'Bool'");
  EXPECT_THROW_MSG(remainder(bools({1, 0}), bools({1, 1})), RuntimeError,
                   "\"remainder_cpu\" not implemented for 'Bool'");
}

TEST(FloorDivide, NeverRequiresGrad) {
  Tensor x = tensor({5.0, 6.0}, requires_grad());
  Tensor q = floor_divide(x, 2);
  EXPECT_FALSE(q.requires_grad());
  EXPECT_FALSE(floor_divide(x, x * 1).requires_grad());
  expect_tensor(q, {2}, {2, 3});
}

TEST(Remainder, TakesTheSignOfTheDivisor) {
  expect_tensor(remainder(longs({7, -7, 7, -7}), longs({2, 2, -2, -2})), {4}, {1, 1, -1, -1});
  expect_tensor(remainder(tensor({7.5, -7.5, 7.5, -7.5}), tensor({2.0, 2.0, -2.0, -2.0})), {4}, {1.5, 0.5, -0.5, -1.5});
  Tensor si = remainder(5, longs({3, -3}));
  EXPECT_EQ(si.dtype(), kInt64);
  expect_tensor(si, {2}, {2, -1});
  Tensor sf = remainder(5.5, longs({3, -3}));
  EXPECT_EQ(sf.dtype(), kFloat32);
  expect_tensor(sf, {2}, {2.5, -0.5});
  expect_tensor(remainder(longs({5, 6}), 2.5), {2}, {0, 1});
  const double inf = std::numeric_limits<double>::infinity();
  auto v = values(remainder(tensor({inf, 5.0, -5.0, 1.0}, kFloat64), tensor({2.0, inf, inf, 0.0}, kFloat64)));
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 5.0);
  EXPECT_EQ(v[2], inf);
  EXPECT_TRUE(std::isnan(v[3]));
}

TEST(Remainder, GradientsAreOneAndMinusTheQuotient) {
  Tensor a = tensor({7.5, -7.5}, TensorOptions(kFloat64).requires_grad());
  Tensor b = tensor({2.0, 2.0}, TensorOptions(kFloat64).requires_grad());
  Tensor r = remainder(a, b);
  EXPECT_EQ(r.grad_fn()->name(), "RemainderBackward1");
  r.sum().backward();
  expect_tensor(a.grad(), {2}, {1, 1});
  expect_tensor(b.grad(), {2}, {-3, 4});
  Tensor c = tensor({1.0, 2.0}, requires_grad());
  Tensor rs = remainder(c, 0.75);
  EXPECT_EQ(rs.grad_fn()->name(), "RemainderBackward0");
  (rs * tensor({2.0, 3.0})).sum().backward();
  expect_tensor(c.grad(), {2}, {2, 3});
  Tensor d = tensor({3.0, -2.0}, requires_grad());
  remainder(7, d).sum().backward();  // 7 // 3 = 2, 7 // -2 = -4
  expect_tensor(d.grad(), {2}, {-2, 4});
}

TEST(Floor, ValuesIntegerCopyBoolErrorZeroGradient) {
  Tensor f = floor(tensor({-1.5, 2.5, -0.0}, kFloat64));
  expect_tensor(f, {3}, {-2, 2, 0});
  EXPECT_TRUE(std::signbit(values(f)[2]));
  Tensor i = longs({1, -2});
  Tensor fi = floor(i);
  EXPECT_EQ(fi.dtype(), kInt64);
  expect_tensor(fi, {2}, {1, -2});
  EXPECT_NE(fi.data_ptr(), i.data_ptr());  // a copy, not an alias
  EXPECT_THROW_MSG(floor(bools({1, 0})), RuntimeError, "\"floor_vml_cpu\" not implemented for 'Bool'");
  Tensor x = tensor({1.3, -2.7}, requires_grad());
  Tensor y = x.floor();
  EXPECT_EQ(y.grad_fn()->name(), "FloorBackward0");
  y.sum().backward();
  expect_tensor(x.grad(), {2}, {0, 0});
}

// ---------------- index ----------------

TEST(Index, AdjacentIndicesReplaceTheirDimsInPlace) {
  Tensor x = arange(24.0).reshape({2, 3, 4});
  // x[:, [0, 1], [[1], [2]]]: broadcast shape [2, 2] sits where dims 1 and 2 were
  Tensor r = index(x, {std::nullopt, longs({0, 1}), longs({1, 2}).reshape({2, 1})});
  expect_tensor(r, {2, 2, 2}, {1, 5, 2, 6, 13, 17, 14, 18});
  // negative indices wrap
  expect_tensor(index(x, {longs({-1, 0}), longs({-3})}), {2, 4}, {12, 13, 14, 15, 0, 1, 2, 3});
  expect_tensor(index(x, {std::nullopt, std::nullopt, longs({3, -4})}), {2, 3, 2},
                {3, 0, 7, 4, 11, 8, 15, 12, 19, 16, 23, 20});
  // int32 indices work like int64; a 0-d index removes its dim
  expect_tensor(x.index({longs({1}).to(kInt32), longs({2})}), {1, 4}, {20, 21, 22, 23});
  expect_tensor(index(x, {longs({1}).reshape({})}), {3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
}

TEST(Index, SeparatedIndicesPutTheBroadcastShapeFirst) {
  Tensor x = arange(24.0).reshape({2, 3, 4});
  // x[[0, 1], :, [1, 2]] -> [2, 3]: row k is x[i_k, :, j_k]
  expect_tensor(index(x, {longs({0, 1}), std::nullopt, longs({1, 2})}), {2, 3}, {1, 5, 9, 14, 18, 22});
  // x[[[0], [1]], :, [1, 2, 3]] -> broadcast [2, 3] first, then the sliced dim
  expect_tensor(index(x, {longs({0, 1}).reshape({2, 1}), std::nullopt, longs({1, 2, 3})}), {2, 3, 3},
                {1, 5, 9, 2, 6, 10, 3, 7, 11, 13, 17, 21, 14, 18, 22, 15, 19, 23});
}

TEST(Index, BoolMasksSelectWhereTrue) {
  Tensor x = arange(24.0).reshape({2, 3, 4});
  Tensor m = bools({1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1}).reshape({3, 4});
  expect_tensor(index(x, {std::nullopt, m}), {2, 8}, {0, 2, 3, 6, 8, 9, 10, 11, 12, 14, 15, 18, 20, 21, 22, 23});
  // a mask next to an int index: the mask's nonzero() broadcasts with it
  expect_tensor(index(x, {std::nullopt, bools({1, 0, 1}), longs({0, 1})}), {2, 2}, {0, 9, 12, 21});
  // a mask separated from an int index by ':'
  expect_tensor(index(x, {bools({1, 1}), std::nullopt, longs({1, 2})}), {2, 3}, {1, 5, 9, 14, 18, 22});
  // a mask over every dim gives the selected elements in row-major order
  Tensor y = tensor({1.0, -2.0, 3.0, -4.0}).reshape({2, 2});
  expect_tensor(index(y, {gt(y, 0.0)}), {2}, {1, 3});
  // a 0-dim bool adds a dim of size 1 (True) or 0 (False), as NumPy's x[True]
  expect_tensor(index(y, {bools({1}).reshape({})}), {1, 2, 2}, {1, -2, 3, -4});
  EXPECT_EQ(index(y, {bools({0}).reshape({})}).sizes().vec(), (std::vector<int64_t>{0, 2, 2}));
  expect_tensor(index(scalar_tensor(5.0), {bools({1}).reshape({})}), {1}, {5});
}

TEST(Index, EmptyAndTrailingCases) {
  Tensor x = arange(6.0).reshape({2, 3});
  EXPECT_EQ(index(x, {longs({})}).sizes().vec(), (std::vector<int64_t>{0, 3}));
  Tensor all = index(x, {std::nullopt});  // nothing indexed: a copy
  expect_tensor(all, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_NE(all.data_ptr(), x.data_ptr());
  expect_tensor(index(x, {}), {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(index(zeros({2, 0}), {std::nullopt, longs({})}).sizes().vec(), (std::vector<int64_t>{2, 0}));
  // a non-contiguous source and index
  Tensor xt = x.t();                                    // [3, 2]
  Tensor ix = longs({2, 0, 1, 1}).reshape({2, 2}).t();  // [[2, 1], [0, 1]]
  expect_tensor(index(xt, {ix, longs({1})}), {2, 2}, {5, 4, 3, 4});
}

TEST(Index, ErrorTextsMatchPyTorch) {
  Tensor x = arange(24.0).reshape({2, 3, 4});
  EXPECT_THROW_MSG(index(arange(3.0), {longs({5})}), IndexError,
                   "index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_THROW_MSG(index(arange(3.0), {longs({-4})}), IndexError,
                   "index -4 is out of bounds for dimension 0 with size 3");
  // the dimension named is the position among the index tensors, as in PyTorch
  EXPECT_THROW_MSG(index(x, {std::nullopt, std::nullopt, longs({10})}), IndexError,
                   "index 10 is out of bounds for dimension 0 with size 4");
  EXPECT_THROW_MSG(index(x, {ones({2, 3}, kBool), longs({10})}), IndexError,
                   "index 10 is out of bounds for dimension 2 with size 4");
  EXPECT_THROW_MSG(index(zeros({0, 3}), {longs({0})}), IndexError, "index is out of bounds for dimension with size 0");
  EXPECT_THROW_MSG(
      index(arange(3.0), {bools({1, 0})}), IndexError,
      "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] at index 0");
  EXPECT_THROW_MSG(index(x, {std::nullopt, bools({1, 0})}), IndexError,
                   "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [2, 3, 4] at "
                   "index 1");
  EXPECT_THROW_MSG(index(x, {longs({0, 1}), longs({1, 2, 0})}), IndexError,
                   "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]");
  EXPECT_THROW_MSG(index(x, {std::nullopt, std::nullopt, std::nullopt, longs({0})}), IndexError,
                   "too many indices for tensor of dimension 3 (got 4)");
  EXPECT_THROW_MSG(index(scalar_tensor(5.0), {longs({0}).reshape({})}), IndexError,
                   "too many indices for tensor of dimension 0 (got 1)");
  EXPECT_THROW_MSG(index(x, {std::nullopt, ones({3, 4, 5}, kBool)}), IndexError,
                   "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_THROW_MSG(index(x, {tensor({0.0})}), IndexError,
                   "tensors used as indices must be long, int, byte or bool tensors");
}

TEST(Index, BackwardAccumulatesDuplicates) {
  Tensor x = arange(3.0).requires_grad_();
  Tensor y = index(x, {longs({0, 0, 2})});
  EXPECT_EQ(y.grad_fn()->name(), "IndexBackward0");
  y.backward(tensor({1.0, 2.0, 3.0}));
  expect_tensor(x.grad(), {3}, {3, 0, 3});
  // through a mask
  Tensor z = arange(4.0).reshape({2, 2}).requires_grad_();
  index(z, {bools({0, 1, 1, 0}).reshape({2, 2})}).backward(tensor({5.0, 7.0}));
  expect_tensor(z.grad(), {2, 2}, {0, 5, 7, 0});
}

TEST(Index, DoubleBackward) {
  // f = sum(x[i]^2) with i = [0, 0, 2]: df/dx = [4 x0, 0, 2 x2]; d(w . df/dx)/dx = [4 w0, 0, 2 w2]
  Tensor x = tensor({1.0, 2.0, 3.0}, TensorOptions(kFloat64).requires_grad());
  Tensor f = index(x, {longs({0, 0, 2})}).pow(2).sum();
  auto g = autograd::grad({f}, {x}, {}, std::nullopt, /*create_graph=*/true);
  expect_tensor(g[0], {3}, {4, 0, 6});
  ASSERT_TRUE(g[0].requires_grad());
  auto h = autograd::grad({(g[0] * tensor({1.0, 10.0, 100.0}, kFloat64)).sum()}, {x});
  expect_tensor(h[0], {3}, {4, 0, 200});
}

// ---------------- index_put ----------------

TEST(IndexPut, WritesBroadcastValuesAndAccumulates) {
  Tensor y = zeros({3, 4});
  expect_tensor(index_put(y, {longs({0, 2})}, tensor({1.0, 2.0, 3.0, 4.0})), {3, 4},
                {1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4});
  expect_tensor(index_put(y, {longs({0, 2})}, tensor({1.0, 2.0}).reshape({2, 1})), {3, 4},
                {1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2});
  expect_tensor(index_put(y, {std::nullopt, longs({0, 2})}, tensor({1.0, 2.0}).reshape({1, 2}), true), {3, 4},
                {1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 2, 0});
  expect_tensor(y, {3, 4}, std::vector<double>(12, 0.0));  // out-of-place leaves self alone
  Tensor a = arange(12.0).reshape({3, 4});
  expect_tensor(index_put(a, {longs({0, 0, 2}), longs({1, 1, 3})}, tensor({10.0, 20.0, 30.0}), true), {3, 4},
                {0, 31, 2, 3, 4, 5, 6, 7, 8, 9, 10, 41});
  expect_tensor(a.index_put({longs({0, 2}), longs({1, 3})}, tensor({10.0, 20.0})), {3, 4},
                {0, 10, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20});
  // separated indices: values are laid out broadcast-shape first
  Tensor r = index_put(zeros({2, 3, 4}), {longs({0, 1}), std::nullopt, longs({3, 0})}, arange(6.0).reshape({2, 3}));
  expect_tensor(r, {2, 3, 4}, {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0});
  // a mask with values for each selected element
  Tensor m = bools({1, 0, 0, 1}).reshape({1, 4}).expand({3, 4});
  expect_tensor(index_put(zeros({3, 4}), {m}, tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0})), {3, 4},
                {1, 0, 0, 2, 3, 0, 0, 4, 5, 0, 0, 6});
}

TEST(IndexPut, ErrorTextsMatchPyTorch) {
  Tensor y = zeros({3, 4});
  EXPECT_THROW_MSG(index_put(y, {longs({0, 2})}, tensor({1.0, 2.0, 3.0})), RuntimeError,
                   "shape mismatch: value tensor of shape [3] cannot be broadcast to indexing result of shape [2, 4]");
  EXPECT_THROW_MSG(index_put(y, {longs({0, 2})}, ones({1, 2, 4})), RuntimeError,
                   "shape mismatch: value tensor of shape [1, 2, 4] cannot be broadcast to indexing result of shape "
                   "[2, 4]");
  EXPECT_THROW_MSG(index_put(y, {std::nullopt, longs({0, 2})}, ones({2, 3})), RuntimeError,
                   "shape mismatch: value tensor of shape [2, 3] cannot be broadcast to indexing result of shape "
                   "[3, 2]");
  EXPECT_THROW_MSG(index_put(y, {longs({0})}, longs({7})), RuntimeError,
                   "Index put requires the source and destination dtypes match, got Float for the destination and "
                   "Long for the source.");
  EXPECT_THROW_MSG(index_put(y, {longs({5})}, scalar_tensor(1.0)), IndexError,
                   "index 5 is out of bounds for dimension 0 with size 3");
  // a failed in-place call leaves self and its version as they were
  Tensor z = arange(3.0);
  EXPECT_THROW_HAS(index_put_(z, {longs({0, 9})}, tensor({1.0, 2.0})), IndexError, "index 9 is out of bounds");
  expect_tensor(z, {3}, {0, 1, 2});
  EXPECT_EQ(z._version(), 0u);
}

TEST(IndexPut, InPlaceBumpsVersionAndFollowsTheLeafRule) {
  Tensor z = zeros({3});
  const uint32_t v0 = z._version();
  Tensor& ret = index_put_(z, {longs({0, 0, 1})}, tensor({1.0, 2.0, 3.0}), true);
  EXPECT_TRUE(ret.is_same(z));
  EXPECT_EQ(z._version(), v0 + 1);
  expect_tensor(z, {3}, {3, 3, 0});
  z.index_put_({longs({2})}, scalar_tensor(9.0));
  EXPECT_EQ(z._version(), v0 + 2);
  expect_tensor(z, {3}, {3, 3, 9});
  Tensor leaf = zeros({3}, requires_grad());
  EXPECT_THROW_MSG(index_put_(leaf, {longs({0})}, ones({1})), RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
  {
    NoGradGuard ng;  // allowed without recording
    index_put_(leaf, {longs({0})}, ones({1}));
  }
  expect_tensor(leaf, {3}, {1, 0, 0});
  // values that share self's memory are refused, as PyTorch's overlap check does, before any write
  Tensor a = arange(4.0);
  EXPECT_THROW_MSG(index_put_(a, {longs({0, 1})}, a.slice(0, 1, 3)), RuntimeError,
                   "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.");
  expect_tensor(a, {4}, {0, 1, 2, 3});
}

TEST(IndexPut, InPlaceOnAStridedSelfWritesThroughItsStrides) {
  Tensor base = zeros({3, 2});
  Tensor z = base.t();  // [2, 3] with strides [1, 2]
  index_put_(z, {std::nullopt, longs({2, 0})}, tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}));
  expect_tensor(z, {2, 3}, {2, 0, 1, 4, 0, 3});
  expect_tensor(base, {3, 2}, {2, 4, 0, 0, 1, 3});
  EXPECT_EQ(base._version(), 1u);  // the view shares the base's version counter
  index_put_(z, {longs({1}), longs({1})}, scalar_tensor(5.0), /*accumulate=*/true);
  expect_tensor(base, {3, 2}, {2, 4, 0, 5, 1, 3});
}

TEST(IndexPut, InPlaceGradientsAndCopySlicesThroughAView) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, requires_grad());
  Tensor v = tensor({10.0, 20.0}, requires_grad());
  Tensor b = x * 1;
  Tensor w = b.slice(0, 1, 4);
  index_put_(w, {longs({0, 2})}, v * 2);
  expect_tensor(b, {4}, {1, 20, 3, 40});
  EXPECT_EQ(b.grad_fn()->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(b._version(), 1u);
  (b * tensor({1.0, 2.0, 3.0, 4.0})).sum().backward();
  expect_tensor(x.grad(), {4}, {1, 0, 3, 0});  // overwritten positions get no gradient
  expect_tensor(v.grad(), {2}, {4, 8});

  Tensor x2 = tensor({1.0, 2.0, 3.0, 4.0}, requires_grad());
  Tensor v2 = tensor({10.0, 20.0}, requires_grad());
  Tensor b2 = x2 * 1;
  index_put_(b2, {longs({0, 0})}, v2, /*accumulate=*/true);
  EXPECT_EQ(b2.grad_fn()->name(), "IndexPutBackward0");
  expect_tensor(b2, {4}, {31, 2, 3, 4});
  (b2 * tensor({1.0, 2.0, 3.0, 4.0})).sum().backward();
  expect_tensor(x2.grad(), {4}, {1, 2, 3, 4});  // accumulate keeps self's gradient everywhere
  expect_tensor(v2.grad(), {2}, {1, 1});
}

TEST(IndexPut, ModifyingASavedTensorIsCaughtByBackward) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, requires_grad());
  Tensor y = x.sigmoid();  // saves its result
  index_put_(y, {longs({1})}, scalar_tensor(0.0));
  EXPECT_THROW_HAS(
      y.sum().backward(), RuntimeError,
      "[torch.FloatTensor [4]], which is output 0 of SigmoidBackward0, is at version 1; expected version 0 "
      "instead.");
}

// ---------------- masked_fill_, nonzero, masked_select, repeat, unbind ----------------

TEST(MaskedFillInplace, FillsBumpsVersionAndRecords) {
  Tensor a = zeros({2, 3});
  masked_fill_(a, bools({1, 0, 1}), 1.5);
  EXPECT_EQ(a._version(), 1u);
  expect_tensor(a, {2, 3}, {1.5, 0, 1.5, 1.5, 0, 1.5});
  EXPECT_THROW_MSG(a.masked_fill_(bools({1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}).reshape({2, 2, 3}), 1.0), RuntimeError,
                   "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]");
  EXPECT_EQ(a._version(), 1u);
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  y.masked_fill_(bools({1, 0, 1}), 5.0);
  EXPECT_EQ(y.grad_fn()->name(), "MaskedFillBackward0");
  expect_tensor(y, {3}, {5, 2, 5});
  y.sum().backward();
  expect_tensor(x.grad(), {3}, {0, 2, 0});
  EXPECT_THROW_MSG(masked_fill_(x, bools({1, 0, 0}), 1.0), RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
}

TEST(Nonzero, RowMajorIndicesOfEveryDim) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor n = nonzero(tensor({0.0, 1.0, nan, 0.0}, kFloat64).reshape({2, 2}));
  EXPECT_EQ(n.dtype(), kInt64);
  expect_tensor(n, {2, 2}, {0, 1, 1, 0});  // NaN is nonzero
  expect_tensor(nonzero(bools({1, 0, 1})), {2, 1}, {0, 2});
  expect_tensor(nonzero(tensor({-0.0, 0.0, 1e-300}, kFloat64)), {1, 1}, {2});
  EXPECT_EQ(nonzero(scalar_tensor(5.0)).sizes().vec(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(nonzero(scalar_tensor(0.0)).sizes().vec(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(zeros({2, 0}).nonzero().sizes().vec(), (std::vector<int64_t>{0, 2}));
}

TEST(MaskedSelect, BroadcastsAndScattersTheGradientBack) {
  Tensor a = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor m = bools({1, 0, 1, 1, 1, 0}).reshape({2, 3});
  Tensor s = masked_select(a, m);
  EXPECT_EQ(s.grad_fn()->name(), "MaskedSelectBackward0");
  expect_tensor(s, {4}, {1, 3, 1, 2});
  s.backward(tensor({1.0, 10.0, 100.0, 1000.0}));
  expect_tensor(a.grad(), {3}, {101, 1000, 10});
  expect_tensor(arange(6.0).reshape({2, 3}).masked_select(bools({1, 0, 1})), {4}, {0, 2, 3, 5});
  expect_tensor(masked_select(scalar_tensor(3.0), bools({1}).reshape({})), {1}, {3});
  EXPECT_THROW_MSG(masked_select(arange(3.0), longs({1, 0, 1})), RuntimeError,
                   "masked_select: expected BoolTensor for mask");
  EXPECT_THROW_HAS(masked_select(arange(3.0), bools({1, 0})), RuntimeError,
                   "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
}

TEST(Repeat, TilesAndSumsTheGradientBack) {
  expect_tensor(arange(3.0).repeat({2, 2}), {2, 6}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  expect_tensor(arange(6.0).reshape({2, 3}).repeat({2, 1, 2}), {2, 2, 6},
                {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  expect_tensor(repeat(scalar_tensor(5.0), {2, 3}), {2, 3}, {5, 5, 5, 5, 5, 5});
  expect_tensor(repeat(scalar_tensor(5.0), {}), {}, {5});
  EXPECT_EQ(arange(6.0).reshape({2, 3}).repeat({0, 2}).sizes().vec(), (std::vector<int64_t>{0, 6}));
  EXPECT_THROW_MSG(arange(6.0).reshape({2, 3}).repeat({2}), RuntimeError,
                   "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  EXPECT_THROW_MSG(arange(6.0).reshape({2, 3}).repeat({2, -1}), RuntimeError,
                   "Trying to create tensor with negative dimension -3: [4, -3]");
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}).requires_grad_();
  Tensor r = a.repeat({1, 3, 2});
  EXPECT_EQ(r.grad_fn()->name(), "RepeatBackward0");
  r.backward(arange(24.0).reshape({1, 6, 4}));
  expect_tensor(a.grad(), {2, 2}, {54, 60, 78, 84});
}

TEST(Unbind, ViewsSharingOneNodeThatRejectInPlace) {
  Tensor x = arange(6.0).requires_grad_();
  Tensor xx = x.reshape({2, 3});
  auto u = unbind(xx, 1);
  ASSERT_EQ(u.size(), 3u);
  expect_tensor(u[0], {2}, {0, 3});
  expect_tensor(u[2], {2}, {2, 5});
  EXPECT_TRUE(u[1].is_view());
  EXPECT_EQ(static_cast<char*>(u[1].data_ptr()), static_cast<char*>(xx.data_ptr()) + sizeof(float));  // shares storage
  EXPECT_EQ(u[0].grad_fn()->name(), "UnbindBackward0");
  EXPECT_TRUE(u[0].grad_fn().get() == u[2].grad_fn().get());
  EXPECT_THROW_MSG(u[0].mul_(2), RuntimeError,
                   "Output 0 of UnbindBackward0 is a view and is being modified inplace. This view is the output of a "
                   "function that returns multiple views. Such functions do not allow the output views to be modified "
                   "inplace. You should replace the inplace operation by an out-of-place one.");
  (u[0] * 1 + u[2] * 2).sum().backward();  // u[1] unused: its gradient is zeros
  expect_tensor(x.grad(), {6}, {1, 0, 2, 1, 0, 2});
  EXPECT_TRUE(zeros({0, 3}).unbind(0).empty());
  EXPECT_THROW_MSG(unbind(scalar_tensor(5.0)), IndexError, "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_THROW_HAS(unbind(zeros({2, 3}), 2), IndexError,
                   "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}
