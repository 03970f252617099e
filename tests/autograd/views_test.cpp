// Views and in-place on views: CopySlices rebase, regenerated view grad_fn, multi-output and
// no-grad views (reference section 5.5; behaviours 21-22).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {
std::string fn_name(const Edge& e) { return e.is_valid() ? e.function->name() : "None"; }
const char* kMultiOutput =
    " is a view and is being modified inplace. This view is the output of a function that returns multiple views. "
    "Such functions do not allow the output views to be modified inplace. You should replace the inplace operation "
    "by an out-of-place one.";
}  // namespace

TEST(Views, InplaceOnViewOfNonLeafRebasesBaseOntoCopySlices) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = a * 1;
  b.slice(0, 1).mul_(3);
  ASSERT_TRUE(b.grad_fn());
  EXPECT_EQ(b.grad_fn()->name(), "torch::autograd::CopySlices");
  const auto& nf = b.grad_fn()->next_functions();
  ASSERT_EQ(nf.size(), 2u);
  EXPECT_EQ(fn_name(nf[0]), "MulBackward0");
  EXPECT_EQ(fn_name(nf[1]), "None");
  expect_tensor(b, {3}, {1, 3, 3});
  b.sum().backward();
  expect_tensor(a.grad(), {3}, {1, 3, 3});
}

TEST(Views, InplaceOnViewWithGradRequiringOther) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, requires_grad());
  Tensor w = tensor({10.0, 20.0}, requires_grad());
  Tensor b = a * 2;
  b.slice(0, 1, 3).mul_(w);  // b = [2, 40, 120, 8]
  expect_tensor(b, {4}, {2, 40, 120, 8});
  EXPECT_EQ(b.grad_fn()->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(fn_name(b.grad_fn()->next_functions()[1]), "torch::autograd::AccumulateGrad");
  (b * tensor({1.0, 2.0, 3.0, 4.0})).sum().backward();
  expect_tensor(a.grad(), {4}, {2, 40, 120, 8});
  expect_tensor(w.grad(), {2}, {8, 18});
}

TEST(Views, CopyIntoViewOfNonLeaf) {
  Tensor a = ones({2, 2}, requires_grad());
  Tensor src = tensor({5.0, 6.0}, requires_grad());
  Tensor b = a * 3;
  b.select(0, 1).copy_(src);
  expect_tensor(b, {2, 2}, {3, 3, 5, 6});
  (b * b).sum().backward();
  expect_tensor(a.grad(), {2, 2}, {18, 18, 0, 0});
  expect_tensor(src.grad(), {2}, {10, 12});
}

TEST(Views, ExistingViewGetsRegeneratedGradFn) {
  Tensor a = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor b = a * 1;
  Tensor v = b.slice(0, 0, 2);
  EXPECT_EQ(v.grad_fn()->name(), "SliceBackward0");
  b.mul_(2);
  ASSERT_TRUE(v.grad_fn());
  EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");  // 1.13 behaviour
  EXPECT_EQ(fn_name(v.grad_fn()->next_functions()[0]), "MulBackward0");
  expect_tensor(v, {2}, {2, 4});
  (v * v).sum().backward();  // v = 2a[:2]  ->  d/da = 8a on the window
  expect_tensor(a.grad(), {3}, {8, 16, 0});
}

TEST(Views, ViewsShareVersionCounter) {
  Tensor a = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor b = a * 1;
  Tensor v = b.view({3, 1});
  Tensor s = (b.sigmoid()).sum();  // sigmoid saves its output, not b
  Tensor c = (v * v).sum();        // saves v
  b.add_(1);
  EXPECT_EQ(v._version(), 1u);
  s.backward();
  EXPECT_THROW_HAS(c.backward(), RuntimeError, "is at version 1; expected version 0 instead.");
}

TEST(Views, SplitOutputsRejectInplace) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}, requires_grad());
  Tensor b = a * 1;
  auto parts = b.split(2);
  EXPECT_THROW_MSG(parts[0].mul_(2), RuntimeError, std::string("Output 0 of SplitBackward0") + kMultiOutput);
  EXPECT_THROW_MSG(parts[1].add_(1), RuntimeError, std::string("Output 1 of SplitBackward0") + kMultiOutput);
  auto chunks = b.chunk(2);
  EXPECT_THROW_HAS(chunks[1].zero_(), RuntimeError, "is a view and is being modified inplace. This view is the output");
  EXPECT_EQ(b._version(), 0u);
  // out-of-place still works
  (parts[0] * 2 + parts[1]).sum().backward();
  expect_tensor(a.grad(), {4}, {2, 2, 1, 1});
}

TEST(Views, SplitOfNonRequiringTensorAllowsInplace) {
  Tensor b = tensor({1.0, 2.0, 3.0, 4.0});
  auto parts = b.split(2);
  parts[1].mul_(2);
  expect_tensor(b, {4}, {1, 2, 6, 8});
}

TEST(Views, ViewCreatedInNoGradModifiedInGradMode) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = a * 2;
  Tensor v;
  {
    NoGradGuard ng;
    v = b.slice(0, 1);
  }
  EXPECT_THROW_MSG(v.mul_(2), RuntimeError,
                   "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                   "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                   "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
                   "inplace to be tracked) or both outside (if you want the inplace to be tracked).");
  {
    NoGradGuard ng;
    v.mul_(2);  // both inside: fine
  }
  expect_tensor(b, {3}, {2, 4, 4});
}

TEST(Views, ViewOfDetachedTensorCanBeModified) {
  Tensor a = ones({3}, requires_grad());
  Tensor d = a.detach();
  d.slice(0, 1).mul_(5);
  expect_tensor(a, {3}, {1, 5, 5});
  EXPECT_EQ(a._version(), 1u);
}

TEST(Views, InplaceOnViewOfNonRequiringBaseWithRequiringOther) {
  Tensor base = zeros({4});
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  base.slice(0, 1, 3).add_(w);
  EXPECT_TRUE(base.requires_grad());
  ASSERT_TRUE(base.grad_fn());
  EXPECT_EQ(base.grad_fn()->name(), "torch::autograd::CopySlices");
  (base * tensor({1.0, 2.0, 3.0, 4.0})).sum().backward();
  expect_tensor(w.grad(), {2}, {2, 3});
}

TEST(Views, CopySlicesReleasesAndRejectsSecondBackward) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = a * 1;
  b.slice(0, 1).mul_(tensor({2.0, 3.0}));
  Tensor s = b.sum();
  s.backward(Tensor(), true);
  s.backward();
  expect_tensor(a.grad(), {3}, {2, 4, 6});
  EXPECT_THROW_HAS(s.backward(), RuntimeError, "Trying to backward through the graph a second time");
}

// Found in review: a view's grad_fn is regenerated even when first looked at under no_grad
// (printing runs under no_grad), so the gradient stays right.
TEST(Views, RegeneratedGradFnSurvivesLookingUnderNoGrad) {
  Tensor a = ones({4}, requires_grad());
  Tensor b = a * 1;
  Tensor v = b.narrow(0, 0, 2);
  b.mul_(3);
  std::string s = v.str();
  EXPECT_NE(s.find("grad_fn=<AsStridedBackward0>"), std::string::npos) << s;
  v.sum().backward();
  expect_tensor(a.grad(), {4}, {3, 3, 0, 0});
}

// The regenerated AsStridedBackward0 sums the gradients of elements an overlapping view sees
// several times.
TEST(Views, RegeneratedOverlappingViewAccumulates) {
  Tensor a = ones({1, 3}, requires_grad());
  Tensor b = a * 1;
  Tensor v = b.expand({4, 3});
  b.mul_(2);
  v.sum().backward();
  expect_tensor(a.grad(), {1, 3}, {8, 8, 8});
}

// CopySlices drops the in-place node on release: a second backward raises, as in PyTorch.
TEST(Views, CopySlicesSecondBackwardRaises) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = a.clone();
  b.narrow(0, 1, 2).add_(1);
  Tensor s = b.sum();
  s.backward();
  EXPECT_THROW_HAS(s.backward(), RuntimeError, "Trying to backward through the graph a second time");
}

// An in-place op on a view of a base that is not row-major (column-major memory) records
// CopySlices over the base's own strides, as PyTorch's.
TEST(Views, InplaceOnAViewOfAColumnMajorBase) {
  std::vector<float> buf{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Tensor d = from_blob(buf.data(), {3, 4}, {1, 3}, nullptr);  // d[i][j] = buf[i + 3 j]
  Tensor w = tensor({1.0, 2.0, 3.0, 4.0}, kFloat32).requires_grad_(true);
  d.select(0, 1).mul_(w);  // row 1: buf[1], buf[4], buf[7], buf[10]
  EXPECT_EQ(d._version(), 1u);
  EXPECT_EQ(d.grad_fn()->name(), "torch::autograd::CopySlices");
  EXPECT_EQ((std::vector<float>{buf[1], buf[4], buf[7], buf[10]}), (std::vector<float>{1, 8, 21, 40}));
  (d * arange(12.0).view({3, 4})).sum().backward();
  // d's row 1 is w * old row 1: the gradient of w is old row 1 times the weights of row 1
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{1 * 4, 4 * 5, 7 * 6, 10 * 7}));
}
