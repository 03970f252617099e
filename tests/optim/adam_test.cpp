// Adam and AdamW against the documented update rule for every option, and worked by hand.
#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using optim::Adam;
using optim::AdamOptions;
using optim::AdamW;
using optim::AdamWOptions;

namespace {

MakeOptimizer make_adam(AdamOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<Adam>(std::move(p), o); };
}
MakeOptimizer make_adamw(AdamWOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<AdamW>(std::move(p), o); };
}
struct AdamCfg {
  double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
};
MakeReference adam_ref(AdamCfg c) {
  return [c] {
    auto r = std::make_unique<AdamRef>();
    r->lr = c.lr, r->beta1 = c.b1, r->beta2 = c.b2, r->eps = c.eps, r->wd = c.wd, r->amsgrad = c.amsgrad,
    r->maximize = c.maximize, r->decoupled = c.decoupled;
    return r;
  };
}

}  // namespace

TEST(Adam, Defaults) { check_case(make_adam(AdamOptions(0.1)), adam_ref({})); }
TEST(Adam, WeightDecayIsL2InTheGradient) {
  check_case(make_adam(AdamOptions(0.1).weight_decay(0.3)), adam_ref({.wd = 0.3}));
}
TEST(Adam, Amsgrad) { check_case(make_adam(AdamOptions(0.1).amsgrad(true)), adam_ref({.amsgrad = true})); }
TEST(Adam, Maximize) { check_case(make_adam(AdamOptions(0.1).maximize(true)), adam_ref({.maximize = true})); }
TEST(Adam, BetasAndEps) {
  check_case(make_adam(AdamOptions(0.05).betas({0.8, 0.99}).eps(1e-3)),
             adam_ref({.lr = 0.05, .b1 = 0.8, .b2 = 0.99, .eps = 1e-3}));
}
TEST(Adam, SmallBeta1TakesLerpsOtherBranch) {
  // lerp weight 1 - beta1 = 0.7 >= 0.5: PyTorch computes end - (end - self) * (1 - w).
  check_case(make_adam(AdamOptions(0.1).betas({0.3, 0.9})), adam_ref({.b1 = 0.3, .b2 = 0.9}));
}
TEST(Adam, AllOptions) {
  check_case(make_adam(AdamOptions(0.02).betas({0.85, 0.95}).weight_decay(0.1).amsgrad(true).maximize(true)),
             adam_ref({.lr = 0.02, .b1 = 0.85, .b2 = 0.95, .wd = 0.1, .amsgrad = true, .maximize = true}));
}
TEST(AdamW, DefaultWeightDecayIsDecoupled) {
  check_case(make_adamw(AdamWOptions(0.1)), adam_ref({.wd = 1e-2, .decoupled = true}));
}
TEST(AdamW, WeightDecay) {
  check_case(make_adamw(AdamWOptions(0.1).weight_decay(0.5)), adam_ref({.wd = 0.5, .decoupled = true}));
}
TEST(AdamW, AllOptions) {
  check_case(
      make_adamw(AdamWOptions(0.03).betas({0.4, 0.9}).weight_decay(0.2).amsgrad(true).maximize(true)),
      adam_ref({.lr = 0.03, .b1 = 0.4, .b2 = 0.9, .wd = 0.2, .amsgrad = true, .maximize = true, .decoupled = true}));
}

// lr 0.1, betas (0.9, 0.999), eps 1e-8, p = 1, gradients 0.5 then -1:
//   step 1: m = 0.1 * 0.5 = 0.05               v = 0.001 * 0.25 = 0.00025
//           m_hat = 0.05 / (1 - 0.9) = 0.5      v_hat = 0.00025 / (1 - 0.999) = 0.25, sqrt = 0.5
//           p = 1 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.900000002
//   step 2: m = 0.9 * 0.05 + 0.1 * -1 = -0.055  v = 0.999 * 0.00025 + 0.001 * 1 = 0.00124975
//           m_hat = -0.055 / (1 - 0.81) = -0.28947368421
//           v_hat = 0.00124975 / (1 - 0.998001) = 0.62518759380, sqrt = 0.79068805088
//           p = 0.900000002 + 0.1 * 0.28947368421 / 0.79068806088 = 0.93661035424
TEST(Adam, TwoStepsByHand) {
  Tensor w = tensor({1.0}, requires_grad());
  Adam opt({w}, AdamOptions(0.1));
  w.set_grad(tensor({0.5}));
  opt.step();
  EXPECT_NEAR(w.item<float>(), 0.900000002, 1e-7);
  EXPECT_NEAR(opt.find_state(w)->find("exp_avg")->item<float>(), 0.05, 1e-8);
  EXPECT_NEAR(opt.find_state(w)->find("exp_avg_sq")->item<float>(), 0.00025, 1e-10);
  w.set_grad(tensor({-1.0}));
  opt.step();
  EXPECT_NEAR(w.item<float>(), 0.93661035424, 1e-7);
  EXPECT_NEAR(opt.find_state(w)->find("exp_avg")->item<float>(), -0.055, 1e-8);
  EXPECT_NEAR(opt.find_state(w)->find("exp_avg_sq")->item<float>(), 0.00124975, 1e-10);
  EXPECT_EQ(opt.find_state(w)->find("step")->item<float>(), 2.0f);
}

TEST(Adam, StateNamesInPyTorchsOrder) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Adam opt({w}, AdamOptions().amsgrad(true));
  w.set_grad(tensor({1.0, 1.0}));
  opt.step();
  EXPECT_EQ(opt.find_state(w)->keys(), (std::vector<std::string>{"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}));
}
