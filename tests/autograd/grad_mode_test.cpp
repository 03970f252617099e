// Grad modes: NoGradGuard, EnableGradGuard, GradMode::set_enabled, AutoGradMode, InferenceMode
// (reference section 1.7).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(GradMode, NoGradGuardStopsRecording) {
  Tensor x = ones({2}, requires_grad());
  EXPECT_TRUE(GradMode::is_enabled());
  {
    NoGradGuard ng;
    EXPECT_FALSE(GradMode::is_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
    EXPECT_FALSE(y.grad_fn());
    Tensor v = x.slice(0, 1);
    EXPECT_FALSE(v.requires_grad());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(GradMode, EnableGradInsideNoGrad) {
  Tensor x = ones({2}, requires_grad());
  NoGradGuard ng;
  {
    EnableGradGuard eg;
    EXPECT_TRUE(GradMode::is_enabled());
    Tensor y = x * 2;
    EXPECT_TRUE(y.requires_grad());
    y.sum().backward();
  }
  EXPECT_FALSE(GradMode::is_enabled());
  expect_tensor(x.grad(), {2}, {2, 2});
}

TEST(GradMode, SetEnabledPersistsAndAutoGradModeRestores) {
  Tensor x = ones({2}, requires_grad());
  GradMode::set_enabled(false);
  EXPECT_FALSE((x * 2).requires_grad());
  EXPECT_FALSE((x * 3).requires_grad());
  GradMode::set_enabled(true);
  EXPECT_TRUE((x * 2).requires_grad());
  {
    AutoGradMode m(false);
    EXPECT_FALSE(GradMode::is_enabled());
    {
      AutoGradMode m2(true);
      EXPECT_TRUE(GradMode::is_enabled());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(GradMode, NoGradResultsCanBeUsedInLaterGraphs) {
  Tensor w = ones({2}, requires_grad());
  Tensor c;
  {
    NoGradGuard ng;
    c = w * 5;
  }
  (w * c).sum().backward();
  expect_tensor(w.grad(), {2}, {5, 5});
}

TEST(GradMode, GuardRestoresModeOnException) {
  try {
    NoGradGuard ng;
    throw RuntimeError("boom");
  } catch (const RuntimeError&) {
  }
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(GradMode, BackwardRestoresGradModeAfterCreateGraph) {
  Tensor x = ones({2}, requires_grad());
  {
    NoGradGuard ng;
    EnableGradGuard eg;
    Tensor y = (x * x).sum();
    autograd::grad({y}, {x}, {}, std::nullopt, true);
    EXPECT_TRUE(GradMode::is_enabled());
  }
  Tensor y = (x * x).sum();
  autograd::grad({y}, {x});
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(InferenceModeTest, NestingAndFlags) {
  EXPECT_FALSE(InferenceMode::is_enabled());
  {
    InferenceMode im;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(GradMode::is_enabled());
    {
      InferenceMode off(false);
      EXPECT_FALSE(InferenceMode::is_enabled());
    }
    EXPECT_TRUE(InferenceMode::is_enabled());
    Tensor x = ones({2}, requires_grad());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_inference());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(InferenceModeTest, InferenceTensorUsedInRecordedOp) {
  Tensor t;
  {
    InferenceMode im;
    t = full({2}, 3.0);
  }
  Tensor x = ones({2}, requires_grad());
  EXPECT_THROW_MSG(t * x, RuntimeError,
                   "Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
                   "normal tensor and use it in autograd.");
  // not recorded: fine
  {
    NoGradGuard ng;
    expect_tensor(t * x, {2}, {3, 3});
  }
  expect_tensor(t * 2, {2}, {6, 6});
}
