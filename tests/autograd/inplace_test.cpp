// In-place ops and version counters; detach / .data / clone (reference sections 4, 5.1-5.4;
// behaviours 17-21).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {
const char* kHint =
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True).";
const char* kAnomalyHint =
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. The variable in "
    "question was changed in there or anywhere later. Good luck!";
std::string version_error(const std::string& what) {
  return "one of the variables needed for gradient computation has been modified by an inplace operation: " + what;
}
}  // namespace

TEST(Inplace, VersionCounterBumpsOncePerInplaceOp) {
  Tensor t = zeros({3});
  EXPECT_EQ(t._version(), 0u);
  t.add_(1);
  EXPECT_EQ(t._version(), 1u);
  t.mul_(2);
  t.copy_(ones({3}));
  t.fill_(3);
  t.zero_();
  EXPECT_EQ(t._version(), 5u);
  Tensor v = t.slice(0, 1);
  v.add_(1);
  EXPECT_EQ(t._version(), 6u);  // views share the counter with their base
  EXPECT_EQ(v._version(), 6u);
  Tensor fresh = t + 1;
  EXPECT_EQ(fresh._version(), 0u);
}

TEST(Inplace, LeafRequiringGradRejectsInplaceInGradMode) {
  Tensor a = ones({3}, requires_grad());
  EXPECT_THROW_MSG(a.add_(1), RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_THROW_MSG(a.mul_(ones({3})), RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_THROW_MSG(a.zero_(), RuntimeError,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_THROW_MSG(a.slice(0, 1).mul_(2), RuntimeError,
                   "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_THROW_MSG(a.select(0, 0).fill_(5), RuntimeError,
                   "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_EQ(a._version(), 0u);
  expect_tensor(a, {3}, {1, 1, 1});
}

TEST(Inplace, LeafInplaceAllowedUnderNoGradWithVersionBump) {
  Tensor a = ones({3}, requires_grad());
  {
    NoGradGuard ng;
    a.add_(1);
    a.select(0, 0).fill_(5);
  }
  EXPECT_EQ(a._version(), 2u);
  EXPECT_TRUE(a.is_leaf());
  EXPECT_TRUE(a.requires_grad());
  expect_tensor(a, {3}, {5, 2, 2});
  (a * a).sum().backward();
  expect_tensor(a.grad(), {3}, {10, 4, 4});
}

TEST(Inplace, ModifiedSavedOutputReportsNodeThatSavedIt) {
  Tensor x = zeros({3}, requires_grad());
  Tensor y = x.sigmoid();  // saves its result
  Tensor s = y.sum();
  y.mul_(2);
  EXPECT_THROW_MSG(s.backward(), RuntimeError,
                   version_error("[torch.FloatTensor [3]], which is output 0 of SigmoidBackward0, is at version 1; "
                                 "expected version 0 instead. ") +
                       kHint);
}

TEST(Inplace, ModifiedSavedLeafDropsTheOutputClause) {
  Tensor x = ones({2, 2}, requires_grad());
  Tensor s = (x * x).sum();
  {
    NoGradGuard ng;
    x.add_(1);
  }
  EXPECT_THROW_MSG(s.backward(), RuntimeError,
                   version_error("[torch.FloatTensor [2, 2]] is at version 1; expected version 0 instead. ") + kHint);
}

TEST(Inplace, VersionErrorNamesTheCurrentGradFn) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = a * 1;
  Tensor c = b * b;
  b.add_(1);
  EXPECT_EQ(b.grad_fn()->name(), "AddBackward0");
  EXPECT_THROW_MSG(c.sum().backward(), RuntimeError,
                   version_error("[torch.FloatTensor [3]], which is output 0 of AddBackward0, is at version 1; "
                                 "expected version 0 instead. ") +
                       kHint);
}

TEST(Inplace, VersionErrorDoubleTensorAndAnomalyHint) {
  graft::testing::WarningCapture w;
  autograd::DetectAnomalyGuard guard;
  Tensor a = ones({3}, TensorOptions(kFloat64).requires_grad());
  Tensor b = a.exp();
  Tensor s = b.sum();
  b.add_(1, 2);
  EXPECT_THROW_MSG(s.backward(), RuntimeError,
                   version_error("[torch.DoubleTensor [3]], which is output 0 of ExpBackward0, is at version 1; "
                                 "expected version 0 instead. ") +
                       kAnomalyHint);
}

TEST(Inplace, OnlySavedTensorsAreChecked) {
  Tensor a = tensor({1.0, 2.0}, requires_grad());
  Tensor b = a * 1;
  Tensor c = b + b;  // saves nothing
  b.add_(1);
  c.sum().backward();
  expect_tensor(a.grad(), {2}, {2, 2});
  // relu saves its output: modifying it fails
  Tensor r = (a * 1).relu();
  Tensor rs = r.sum();
  r.add_(1);
  EXPECT_THROW_HAS(rs.backward(), RuntimeError, "which is output 0 of ReluBackward0, is at version 1");
}

TEST(Inplace, ViewModificationBumpsBaseVersionAndIsCaught) {
  Tensor a = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor b = a * 1;
  Tensor c = b * b;
  b.slice(0, 0, 1).mul_(2);
  EXPECT_EQ(b._version(), 1u);
  EXPECT_THROW_HAS(c.sum().backward(), RuntimeError, "is at version 1; expected version 0 instead.");
}

TEST(Inplace, InplaceMakesNonRequiringTensorRequireGrad) {
  Tensor a = tensor({2.0, 3.0, 4.0}, requires_grad());
  Tensor p = ones({3});
  p.mul_(a);
  EXPECT_TRUE(p.requires_grad());
  EXPECT_FALSE(p.is_leaf());
  ASSERT_TRUE(p.grad_fn());
  EXPECT_EQ(p.grad_fn()->name(), "MulBackward0");
  (p * p).sum().backward();
  expect_tensor(a.grad(), {3}, {4, 6, 8});
}

TEST(Inplace, InplaceChainGradients) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 2;
  y.mul_(x);  // y = 2x^2
  y.add_(x);  // y = 2x^2 + x
  y.div_(2);  // y = x^2 + x/2
  EXPECT_EQ(y._version(), 3u);
  y.sum().backward();
  expect_tensor(x.grad(), {2}, {2.5, 4.5});
}

// self.mul_(self): the node must not save `self` (that would be a reference cycle through the
// new grad_fn, leaking the graph; the zero-live-bytes check at the end of the test catches it).
TEST(Inplace, SelfOperandRaisesPyTorchsVersionErrorWithoutLeaking) {
  // MulBackward0 saves y as `other` and the op then overwrites it: backward refuses, as
  // PyTorch's does; the saved alias does not own the node (no cycle: the suite's leak check)
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 1;
  y.mul_(y);
  expect_tensor(y, {2}, {1.0, 4.0});
  EXPECT_THROW_HAS(y.sum().backward(), RuntimeError,
                   "one of the variables needed for gradient computation has been modified by an inplace operation");
  // y.add_(y) saves nothing (AddBackward0's formulas name neither input): differentiable
  Tensor z = x * 1;
  z.add_(z);
  z.sum().backward();
  expect_tensor(x.grad(), {2}, {2.0, 2.0});
}

TEST(Detach, SharesStorageAndVersionCounter) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 2;
  Tensor d = y.detach();
  EXPECT_TRUE(d.is_leaf());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_FALSE(d.grad_fn());
  EXPECT_EQ(d.data_ptr(), y.data_ptr());
  d.add_(1);
  EXPECT_EQ(y._version(), 1u);
  expect_tensor(y, {2}, {3, 5});
  // modifying the detached alias of a saved tensor is caught
  Tensor e = x.exp();
  Tensor s = e.sum();
  e.detach().zero_();
  EXPECT_THROW_HAS(s.backward(), RuntimeError,
                   "which is output 0 of ExpBackward0, is at version 1; expected version 0");
}

TEST(Detach, DetachInPlace) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 2;
  Tensor& r = y.detach_();
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(y.is_leaf());
  EXPECT_FALSE(y.requires_grad());
  Tensor z = x * 2;
  Tensor v = z.slice(0, 1);
  EXPECT_THROW_MSG(v.detach_(), RuntimeError,
                   "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                   "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                   "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                   "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
}

TEST(Detach, VariableDataSharesStorageButNotVersion) {
  Tensor w = ones({3}, requires_grad());
  Tensor y = (w * w).sum();
  Tensor d = w.variable_data();
  EXPECT_EQ(d.data_ptr(), w.data_ptr());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  d.add_(1);  // invisible to autograd
  EXPECT_EQ(w._version(), 0u);
  EXPECT_EQ(d._version(), 1u);
  y.backward();  // no error, silently uses the modified values
  expect_tensor(w.grad(), {3}, {4, 4, 4});
}

TEST(Clone, IsDifferentiableWithNewStorage) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor c = x.clone();
  EXPECT_FALSE(c.is_leaf());
  ASSERT_TRUE(c.grad_fn());
  EXPECT_EQ(c.grad_fn()->name(), "CloneBackward0");
  EXPECT_NE(c.data_ptr(), x.data_ptr());
  {
    NoGradGuard ng;
    c.add_(1);
  }
  EXPECT_EQ(x._version(), 0u);  // new version counter
  expect_tensor(x, {2}, {1, 2});
  (c * 3).sum().backward();
  expect_tensor(x.grad(), {2}, {3, 3});
}

TEST(Inference, InferenceTensorRules) {
  Tensor t;
  {
    InferenceMode im;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(GradMode::is_enabled());
    t = ones({3});
    EXPECT_TRUE(t.is_inference());
    EXPECT_FALSE(t.requires_grad());
    t.add_(1);  // allowed inside
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(GradMode::is_enabled());
  Tensor x = ones({3}, requires_grad());
  EXPECT_THROW_MSG(x * t, RuntimeError,
                   "Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
                   "normal tensor and use it in autograd.");
  Tensor ok = x + t;  // add saves nothing
  EXPECT_TRUE(ok.requires_grad());
  EXPECT_THROW_MSG(t.add_(1), RuntimeError,
                   "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                   "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                   "more details.");
  EXPECT_THROW_MSG(t.requires_grad_(), RuntimeError,
                   "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  Tensor c = t.clone();
  EXPECT_FALSE(c.is_inference());
  c.add_(1);
  expect_tensor(c, {3}, {3, 3, 3});
  (x * c).sum().backward();
  expect_tensor(x.grad(), {3}, {3, 3, 3});
}

// Found in review: writing into a tensor whose elements share memory (stride 0) is refused.
TEST(Inplace, InternalOverlapIsRejected) {
  Tensor z = zeros({1});
  Tensor e = z.expand({3});
  const char* msg =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  EXPECT_THROW_MSG(e.add_(ones({3})), RuntimeError, msg);
  EXPECT_THROW_MSG(e.copy_(ones({3})), RuntimeError, msg);
  EXPECT_EQ(z.item<float>(), 0.f);
  EXPECT_EQ(z._version(), 0u);
  // fill_ and zero_ give every alias the same value, which PyTorch allows (torch 1.13 checked)
  e.fill_(2);
  EXPECT_EQ(z.item<float>(), 2.f);
  EXPECT_EQ(zeros({0}).expand({0}).add_(1).numel(), 0);  // nothing to write: nothing overlaps
}

TEST(Inplace, ZeroAndFillShowPytorchsNodes) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.zero_();
  EXPECT_EQ(y.grad_fn()->name(), "ZeroBackward0");
  y = x * 2;
  y.fill_(3);
  EXPECT_EQ(y.grad_fn()->name(), "FillBackward2");  // fill_.Scalar's node in PyTorch
  (y * x).sum().backward();
  expect_tensor(x.grad(), {2}, {3, 3});
}
