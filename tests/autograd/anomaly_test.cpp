// Anomaly mode: NaN checks, the enabling warning, forward trace on errors (reference section 8;
// behaviour 28).
#include <cmath>
#include <limits>

#include "support/test_util.h"

using namespace graft;
using graft::autograd::AutogradContext;
using graft::autograd::DetectAnomalyGuard;
using graft::autograd::Function;
using graft::testing::WarningCapture;

namespace {
const char* kEnabled =
    "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
    "debugging.";

struct NanFn : Function<NanFn> {
  static TensorList forward(AutogradContext*, Tensor a, Tensor b) { return {a * 1, b * 1}; }
  static TensorList backward(AutogradContext*, TensorList g) {
    Tensor n = full({1}, std::numeric_limits<double>::quiet_NaN());
    return {g[0], g[1] * n};
  }
};
struct InfFn : Function<InfFn> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 1; }
  static TensorList backward(AutogradContext*, TensorList g) {
    return {g[0] * full({1}, std::numeric_limits<double>::infinity())};
  }
};
}  // namespace

TEST(Anomaly, GuardTogglesModeAndWarnsOnEnable) {
  WarningCapture w;
  EXPECT_FALSE(autograd::AnomalyMode::is_enabled());
  {
    DetectAnomalyGuard g;
    EXPECT_TRUE(autograd::AnomalyMode::is_enabled());
    EXPECT_TRUE(autograd::AnomalyMode::should_check_nan());
  }
  EXPECT_FALSE(autograd::AnomalyMode::is_enabled());
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(w.messages()[0], kEnabled);
}

TEST(Anomaly, NanInBackwardOutputRaises) {
  WarningCapture w;
  // sqrt at 0 gives y = 0; the incoming gradient 0 gives 0 / (2 * 0) = nan
  Tensor x = zeros({3}, requires_grad());
  {
    DetectAnomalyGuard g;
    Tensor y = x.sqrt();
    EXPECT_THROW_MSG((y * 0).sum().backward(), RuntimeError,
                     "Function 'SqrtBackward0' returned nan values in its 0th output.");
    EXPECT_FALSE(x.grad().defined());
  }
  // without anomaly mode the nan flows silently
  Tensor y = x.sqrt();
  (y * 0).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(std::isnan(x.grad().to_vector<double>()[0]));
}

TEST(Anomaly, CheckNanFalseLetsNanThrough) {
  WarningCapture w;
  DetectAnomalyGuard g(/*check_nan=*/false);
  Tensor x = zeros({2}, requires_grad());
  (x.sqrt() * 0).sum().backward();
  EXPECT_TRUE(std::isnan(x.grad().to_vector<double>()[1]));
}

TEST(Anomaly, OrdinalIsAlwaysTh) {
  WarningCapture w;
  DetectAnomalyGuard g;
  Tensor a = ones({1}, requires_grad());
  Tensor b = ones({1}, requires_grad());
  TensorList outs = NanFn::apply(a, b);
  EXPECT_THROW_MSG((outs[0] + outs[1]).sum().backward(), RuntimeError,
                   "Function 'NanFnBackward' returned nan values in its 1th output.");
}

TEST(Anomaly, InfIsNotChecked) {
  WarningCapture w;
  DetectAnomalyGuard g;
  Tensor a = ones({1}, requires_grad());
  InfFn::apply(a).sum().backward();
  EXPECT_TRUE(std::isinf(a.grad().to_vector<double>()[0]));
}

TEST(Anomaly, ErrorInBackwardWarnsWithForwardTrace) {
  WarningCapture w;
  DetectAnomalyGuard g;
  Tensor x = zeros({3}, requires_grad());
  Tensor y = x.sigmoid();
  Tensor s = y.sum();
  y.mul_(2);
  EXPECT_THROW_HAS(s.backward(), RuntimeError,
                   "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
                   "variable in question was changed in there or anywhere later. Good luck!");
  ASSERT_EQ(w.messages().size(), 2u);
  EXPECT_EQ(w.messages()[0], kEnabled);
  const std::string prefix = "Error detected in SigmoidBackward0. Traceback of forward call that caused the error:";
  EXPECT_EQ(w.messages()[1].substr(0, prefix.size()), prefix);
  EXPECT_GT(w.messages()[1].size(), prefix.size() + 1);  // a trace was recorded
}
