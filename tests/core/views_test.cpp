// Views share storage with their base; geometry (sizes, strides, offset) as in PyTorch.
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {
using V = std::vector<int64_t>;
bool shares(const Tensor& a, const Tensor& b) { return a.impl()->storage().get() == b.impl()->storage().get(); }
void expect_geom(const Tensor& t, V sizes, V strides, int64_t offset) {
  EXPECT_EQ(t.sizes().vec(), sizes);
  EXPECT_EQ(t.strides().vec(), strides);
  EXPECT_EQ(t.storage_offset(), offset);
}
}  // namespace

TEST(Views, View) {
  Tensor a = arange(12.0);
  Tensor v = a.view({3, 4});
  EXPECT_TRUE(shares(a, v));
  expect_geom(v, {3, 4}, {4, 1}, 0);
  expect_geom(a.view({2, -1, 3}), {2, 2, 3}, {6, 3, 1}, 0);
  expect_geom(a.view({12, 1}), {12, 1}, {1, 1}, 0);
  v.select(1, 2).fill_(-1);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0, 1, -1, 3, 4, 5, -1, 7, 8, 9, -1, 11}));
  // view of a transposed tensor that keeps the transposed dims intact
  Tensor t = arange(24.0).view({2, 3, 4}).transpose(1, 2);            // sizes 2,4,3 strides 12,1,4
  expect_geom(t.view({2, 1, 4, 3}), {2, 1, 4, 3}, {12, 4, 1, 4}, 0);  // computeStride's choice
  // view of a slice keeps the offset
  Tensor s = arange(10.0).slice(0, 2, 8);
  expect_geom(s.view({2, 3}), {2, 3}, {3, 1}, 2);
  expect_geom(zeros({}).view({1, 1}), {1, 1}, {1, 1}, 0);
  expect_geom(zeros({1}).view({}), {}, {}, 0);
}

// view(dtype): the same bytes seen as another dtype, an alias outside autograd
TEST(Views, ViewDtype) {
  Tensor a = tensor({1.0, -2.0}).requires_grad_();
  Tensor i = graft::view(a, kInt32);
  EXPECT_TRUE(shares(a, i));
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000)}));
  EXPECT_FALSE(i.requires_grad());
  Tensor h = graft::view(arange(8.0, kFloat64).view({2, 4}), kInt32);  // narrower: the last dim doubles
  expect_geom(h, {2, 8}, {8, 1}, 0);
  Tensor d = graft::view(arange(8.0).view({2, 4}).slice(1, 2, 4), kFloat64);  // wider: halves
  expect_geom(d, {2, 1}, {2, 1}, 1);
  EXPECT_THROW_MSG(graft::view(zeros({2, 3}), kFloat64), RuntimeError,
                   "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), but got 3");
  EXPECT_THROW_MSG(graft::view(zeros({3, 2}, kFloat64).t(), kInt32), RuntimeError,
                   "self.stride(-1) must be 1 to view Double as Int (different element sizes), but got 2");
  EXPECT_THROW_MSG(graft::view(zeros({}), kFloat64), RuntimeError,
                   "self.dim() cannot be 0 to view Float as Double (different element sizes)");
  // a write through the alias is self's, and counts in self's version
  Tensor z = zeros({2});
  Tensor zi = graft::view(z, kInt32);
  zi.add_(1);
  EXPECT_EQ(z._version(), 1u);
  EXPECT_GT(z.to_vector<float>()[0], 0.0f);
}

TEST(Views, ViewIncompatibleLayout) {
  Tensor t = arange(6.0).view({2, 3}).t();
  EXPECT_THROW_HAS(t.view({6}), RuntimeError,
                   "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                   "across two contiguous subspaces). Use .reshape(...) instead.");
  EXPECT_THROW_HAS(arange(6.0).view({4, -1}), RuntimeError, "shape '[4, -1]' is invalid for input of size 6");
  EXPECT_THROW_HAS(arange(6.0).view({4}), RuntimeError, "shape '[4]' is invalid for input of size 6");
  EXPECT_THROW_HAS(arange(6.0).view({-1, -1}), RuntimeError, "only one dimension can be inferred");
}

TEST(Views, Reshape) {
  Tensor a = arange(6.0);
  Tensor r = a.reshape({2, 3});
  EXPECT_TRUE(shares(a, r));  // view when possible
  expect_geom(r, {2, 3}, {3, 1}, 0);
  Tensor t = r.t();
  Tensor c = t.reshape({6});  // copy otherwise
  EXPECT_FALSE(shares(c, t));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  expect_geom(c, {6}, {1}, 0);
  Tensor s = t.reshape({3, 2});  // the same shape: view
  EXPECT_TRUE(shares(s, a));
  expect_geom(s, {3, 2}, {1, 3}, 0);
  expect_geom(arange(6.0).reshape({-1, 2}), {3, 2}, {2, 1}, 0);
  expect_geom(zeros({0, 3}).reshape({3, 0}), {3, 0}, {1, 1}, 0);
  expect_geom(zeros({0, 2}).t().view({2, 0}), {2, 0}, {1, 2}, 0);  // same shape: strides kept
  EXPECT_THROW_HAS(zeros({0, 3}).reshape({3, 0, -1}), RuntimeError,
                   "cannot reshape tensor of 0 elements into shape [3, 0, -1] because the unspecified dimension size "
                   "-1 can be any value and is ambiguous");
}

TEST(Views, TransposeAndT) {
  Tensor a = arange(24.0).view({2, 3, 4});
  Tensor t = a.transpose(0, 2);
  EXPECT_TRUE(shares(a, t));
  expect_geom(t, {4, 3, 2}, {1, 4, 12}, 0);
  EXPECT_FALSE(t.is_contiguous());
  expect_geom(a.transpose(-1, -2), {2, 4, 3}, {12, 1, 4}, 0);
  Tensor m = arange(6.0).view({2, 3});
  Tensor mt = m.t();
  expect_geom(mt, {3, 2}, {1, 3}, 0);
  mt.select(0, 1).fill_(9);  // column 1 of m
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 9, 2, 3, 9, 5}));
  expect_geom(arange(3.0).t(), {3}, {1}, 0);
  expect_geom(scalar_tensor(1.0).t(), {}, {}, 0);
  expect_geom(scalar_tensor(1.0).transpose(0, -1), {}, {}, 0);
  EXPECT_THROW_HAS(a.t(), RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D");
}

TEST(Views, Permute) {
  Tensor a = arange(24.0).view({2, 3, 4});
  Tensor p = a.permute({2, 0, 1});
  EXPECT_TRUE(shares(a, p));
  expect_geom(p, {4, 2, 3}, {1, 12, 4}, 0);
  expect_geom(a.permute({-1, -3, -2}), {4, 2, 3}, {1, 12, 4}, 0);
  EXPECT_EQ(p.select(0, 1).select(0, 1).to_vector<float>(), (std::vector<float>{13, 17, 21}));
  EXPECT_THROW_HAS(a.permute({0, 1}), RuntimeError, "input.dim() = 3 is not equal to len(dims) = 2");
  EXPECT_THROW_HAS(a.permute({0, 1, 1}), RuntimeError, "duplicate dims are not allowed");
}

TEST(Views, Expand) {
  Tensor a = tensor({1.0, 2.0, 3.0}).view({3, 1});
  Tensor e = a.expand({2, 3, 4});
  EXPECT_TRUE(shares(a, e));
  expect_geom(e, {2, 3, 4}, {0, 1, 0}, 0);
  expect_geom(a.expand({-1, 5}), {3, 5}, {1, 0}, 0);
  expect_geom(a.expand_as(zeros({3, 2})), {3, 2}, {1, 0}, 0);
  expect_tensor(a.expand({3, 2}), {3, 2}, {1, 1, 2, 2, 3, 3});
  expect_geom(scalar_tensor(5.0).expand({2, 2}), {2, 2}, {0, 0}, 0);
  expect_geom(a.expand({3, 0}), {3, 0}, {1, 0}, 0);
  // write through the base is visible in the expanded view
  a.fill_(7);
  EXPECT_EQ(e.to_vector<float>(), std::vector<float>(24, 7.0f));
  EXPECT_THROW_HAS(a.expand({4, 2}), RuntimeError,
                   "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 0."
                   "  Target sizes: [4, 2].  Tensor sizes: [3, 1]");
  EXPECT_THROW_HAS(a.expand({3}), RuntimeError,
                   "the number of sizes provided (1) must be greater or equal to the number of dimensions in the "
                   "tensor (2)");
}

TEST(Views, SqueezeUnsqueeze) {
  Tensor a = zeros({1, 3, 1, 2});
  Tensor s = a.squeeze();
  EXPECT_TRUE(shares(a, s));
  expect_geom(s, {3, 2}, {2, 1}, 0);
  expect_geom(a.squeeze(2), {1, 3, 2}, {6, 2, 1}, 0);
  expect_geom(a.squeeze(1), {1, 3, 1, 2}, {6, 2, 2, 1}, 0);  // not size 1: unchanged
  expect_geom(a.squeeze(-4), {3, 1, 2}, {2, 2, 1}, 0);
  expect_geom(zeros({1}).squeeze(), {}, {}, 0);
  expect_geom(scalar_tensor(1.0).squeeze(0), {}, {}, 0);
  Tensor b = zeros({3, 2});
  expect_geom(b.unsqueeze(0), {1, 3, 2}, {6, 2, 1}, 0);
  expect_geom(b.unsqueeze(1), {3, 1, 2}, {2, 2, 1}, 0);
  expect_geom(b.unsqueeze(2), {3, 2, 1}, {2, 1, 1}, 0);
  expect_geom(b.unsqueeze(-1), {3, 2, 1}, {2, 1, 1}, 0);
  expect_geom(b.t().unsqueeze(1), {2, 1, 3}, {1, 6, 2}, 0);  // sizes[d] * strides[d]
  expect_geom(scalar_tensor(1.0).unsqueeze(0), {1}, {1}, 0);
  EXPECT_THROW_HAS(b.unsqueeze(3), IndexError,
                   "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_THROW_HAS(b.squeeze(2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
}

TEST(Views, Flatten) {
  Tensor a = arange(24.0).view({2, 3, 4});
  Tensor f = a.flatten();
  EXPECT_TRUE(shares(a, f));
  expect_geom(f, {24}, {1}, 0);
  expect_geom(a.flatten(1), {2, 12}, {12, 1}, 0);
  expect_geom(a.flatten(0, 1), {6, 4}, {4, 1}, 0);
  expect_geom(a.flatten(1, 1), {2, 3, 4}, {12, 4, 1}, 0);
  expect_geom(scalar_tensor(2.0).flatten(), {1}, {1}, 0);
  Tensor nc = a.transpose(0, 2).flatten();  // copy
  EXPECT_FALSE(shares(nc, a));
  EXPECT_EQ(nc.to_vector<float>()[1], 12.0f);
  EXPECT_THROW_HAS(a.flatten(2, 1), RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim");
}

TEST(Views, NarrowSelectSlice) {
  Tensor a = arange(20.0).view({4, 5});
  Tensor n = a.narrow(1, 1, 3);
  EXPECT_TRUE(shares(a, n));
  expect_geom(n, {4, 3}, {5, 1}, 1);
  expect_geom(a.narrow(0, -2, 2), {2, 5}, {5, 1}, 10);
  Tensor s = a.select(0, 2);
  expect_geom(s, {5}, {1}, 10);
  expect_geom(a.select(1, -1), {4}, {5}, 4);
  expect_geom(a[3], {5}, {1}, 15);
  expect_geom(a.select(1, 2).select(0, 3), {}, {}, 17);
  EXPECT_EQ(a.select(1, 2).select(0, 3).item<float>(), 17.0f);
  // slice with step
  Tensor st = a.slice(1, 0, 5, 2);
  expect_geom(st, {4, 3}, {5, 2}, 0);
  expect_tensor(st.select(0, 1), {3}, {5, 7, 9});
  expect_geom(a.slice(1, 1, std::nullopt, 3), {4, 2}, {5, 3}, 1);
  expect_geom(a.slice(0, -3, -1), {2, 5}, {5, 1}, 5);
  expect_geom(a.slice(0, 10, 20), {0, 5}, {5, 1}, 20);  // clamped, empty
  expect_geom(a.slice(0, 3, 1), {0, 5}, {5, 1}, 15);
  expect_geom(a.slice(1, -100, 100), {4, 5}, {5, 1}, 0);
  // view of a view composes offsets and strides
  Tensor vv = a.slice(0, 1, 4, 2).slice(1, 1, 5, 2);
  expect_geom(vv, {2, 2}, {10, 2}, 6);
  expect_tensor(vv, {2, 2}, {6, 8, 16, 18});
  // writes through the views reach the base
  vv.fill_(-1);
  n.select(0, 0).fill_(100);
  s.select(0, 0).fill_(50);
  EXPECT_EQ(a.to_vector<float>(),
            (std::vector<float>{0, 100, 100, 100, 4, 5, -1, 7, -1, 9, 50, 11, 12, 13, 14, 15, -1, 17, -1, 19}));
  EXPECT_THROW_HAS(a.slice(1, 0, 5, 0), ValueError, "step must be greater than zero");
  EXPECT_THROW_HAS(a.slice(1, 0, 5, -1), ValueError, "step must be greater than zero");
}

TEST(Views, AsStrided) {
  Tensor a = arange(9.0);
  Tensor w = a.as_strided({2, 2}, {3, 1}, 1);
  EXPECT_TRUE(shares(a, w));
  expect_geom(w, {2, 2}, {3, 1}, 1);
  expect_tensor(w, {2, 2}, {1, 2, 4, 5});
  Tensor d = a.as_strided({3}, {4});  // offset defaults to the tensor's own
  expect_tensor(d, {3}, {0, 4, 8});
  Tensor sub = a.slice(0, 2);
  expect_geom(sub.as_strided({2}, {2}), {2}, {2}, 2);
  w.fill_(0);
  expect_tensor(a, {9}, {0, 0, 0, 3, 0, 0, 6, 7, 8});
  EXPECT_THROW_HAS(a.as_strided({4}, {3}), RuntimeError,
                   "setStorage: sizes [4], strides [3], storage offset 0, and itemsize 4 requiring a storage size of "
                   "40 are out of bounds for storage of size 36");
  EXPECT_THROW_HAS(a.as_strided({2}, {1, 1}), RuntimeError, "mismatch in length of strides and shape");
  EXPECT_THROW_HAS(a.as_strided({2}, {1}, -1), RuntimeError, "Negative storage offset -1");
}

TEST(Views, Contiguous) {
  Tensor a = arange(6.0).view({2, 3});
  EXPECT_TRUE(a.contiguous().is_same(a));
  Tensor t = a.t();
  EXPECT_FALSE(t.is_contiguous());
  Tensor c = t.contiguous();
  EXPECT_FALSE(shares(c, a));
  EXPECT_TRUE(c.is_contiguous());
  expect_geom(c, {3, 2}, {2, 1}, 0);
  expect_tensor(c, {3, 2}, {0, 3, 1, 4, 2, 5});
  // size-1 dims and empty tensors count as contiguous whatever their strides
  EXPECT_TRUE(a.slice(0, 0, 1).is_contiguous());
  EXPECT_TRUE(zeros({3, 1}).t().is_contiguous());
  EXPECT_TRUE(zeros({0, 2}).t().is_contiguous());
  EXPECT_FALSE(a.slice(1, 0, 3, 2).is_contiguous());
  EXPECT_FALSE(zeros({3}).expand({2, 3}).is_contiguous());
  // contiguous_strides: size-1 / 0 dims as PyTorch
  EXPECT_EQ(empty({2, 0, 3}).strides().vec(), (V{3, 3, 1}));
  EXPECT_EQ(empty({2, 1, 3}).strides().vec(), (V{3, 3, 1}));
}

TEST(Views, SplitChunk) {
  Tensor a = arange(10.0);
  auto parts = a.split(4);
  ASSERT_EQ(parts.size(), 3u);
  expect_geom(parts[2], {2}, {1}, 8);
  EXPECT_TRUE(shares(parts[1], a));
  auto ws = a.split({3, 7});
  expect_geom(ws[1], {7}, {1}, 3);
  auto ch = arange(12.0).view({2, 6}).chunk(3, 1);
  ASSERT_EQ(ch.size(), 3u);
  expect_geom(ch[1], {2, 2}, {6, 1}, 2);
  EXPECT_EQ(arange(5.0).chunk(3).size(), 3u);  // sizes 2, 2, 1
  EXPECT_THROW_HAS(a.split({3, 3}), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 10");
  EXPECT_THROW_HAS(a.chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0");
}
