// RMSprop and Adagrad against the documented update rules for every option.
#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using optim::Adagrad;
using optim::AdagradOptions;
using optim::RMSprop;
using optim::RMSpropOptions;

namespace {

MakeOptimizer make_rmsprop(RMSpropOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<RMSprop>(std::move(p), o); };
}
struct RmsCfg {
  double lr = 0.01, alpha = 0.99, eps = 1e-8, wd = 0, momentum = 0;
  bool centered = false, maximize = false;
};
MakeReference rms_ref(RmsCfg c) {
  return [c] {
    auto r = std::make_unique<RmspropRef>();
    r->lr = c.lr, r->alpha = c.alpha, r->eps = c.eps, r->wd = c.wd, r->momentum = c.momentum, r->centered = c.centered,
    r->maximize = c.maximize;
    return r;
  };
}
MakeOptimizer make_adagrad(AdagradOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<Adagrad>(std::move(p), o); };
}
struct AdagradCfg {
  double lr = 0.1, lr_decay = 0, wd = 0, init = 0, eps = 1e-10;
  bool maximize = false;
};
MakeReference adagrad_ref(AdagradCfg c) {
  return [c] {
    auto r = std::make_unique<AdagradRef>();
    r->lr = c.lr, r->lr_decay = c.lr_decay, r->wd = c.wd, r->init = c.init, r->eps = c.eps, r->maximize = c.maximize;
    return r;
  };
}

}  // namespace

TEST(RMSprop, Defaults) { check_case(make_rmsprop(RMSpropOptions()), rms_ref({})); }
TEST(RMSprop, Momentum) {
  check_case(make_rmsprop(RMSpropOptions(0.02).momentum(0.9)), rms_ref({.lr = 0.02, .momentum = 0.9}));
}
TEST(RMSprop, Centered) {
  check_case(make_rmsprop(RMSpropOptions(0.02).centered(true)), rms_ref({.lr = 0.02, .centered = true}));
}
TEST(RMSprop, CenteredWithSmallAlphaTakesLerpsOtherBranch) {
  check_case(make_rmsprop(RMSpropOptions(0.02).alpha(0.3).centered(true)),
             rms_ref({.lr = 0.02, .alpha = 0.3, .centered = true}));
}
TEST(RMSprop, WeightDecay) {
  check_case(make_rmsprop(RMSpropOptions(0.02).weight_decay(0.3)), rms_ref({.lr = 0.02, .wd = 0.3}));
}
TEST(RMSprop, Maximize) {
  check_case(make_rmsprop(RMSpropOptions(0.02).maximize(true)), rms_ref({.lr = 0.02, .maximize = true}));
}
TEST(RMSprop, AlphaAndEps) {
  check_case(make_rmsprop(RMSpropOptions(0.02).alpha(0.9).eps(1e-2)), rms_ref({.lr = 0.02, .alpha = 0.9, .eps = 1e-2}));
}
TEST(RMSprop, AllOptions) {
  check_case(
      make_rmsprop(RMSpropOptions(0.01).alpha(0.9).momentum(0.5).centered(true).weight_decay(0.1).maximize(true)),
      rms_ref({.lr = 0.01, .alpha = 0.9, .wd = 0.1, .momentum = 0.5, .centered = true, .maximize = true}));
}

TEST(Adagrad, Defaults) { check_case(make_adagrad(AdagradOptions()), adagrad_ref({.lr = 0.01})); }
TEST(Adagrad, LrDecay) { check_case(make_adagrad(AdagradOptions(0.1).lr_decay(0.5)), adagrad_ref({.lr_decay = 0.5})); }
TEST(Adagrad, WeightDecay) {
  check_case(make_adagrad(AdagradOptions(0.1).weight_decay(0.2)), adagrad_ref({.wd = 0.2}));
}
TEST(Adagrad, InitialAccumulatorValue) {
  check_case(make_adagrad(AdagradOptions(0.1).initial_accumulator_value(0.7)), adagrad_ref({.init = 0.7}));
}
TEST(Adagrad, MaximizeAndEps) {
  check_case(make_adagrad(AdagradOptions(0.1).maximize(true).eps(1e-2)), adagrad_ref({.eps = 1e-2, .maximize = true}));
}
TEST(Adagrad, AllOptions) {
  check_case(
      make_adagrad(AdagradOptions(0.2).lr_decay(0.1).weight_decay(0.1).initial_accumulator_value(0.3).maximize(true)),
      adagrad_ref({.lr = 0.2, .lr_decay = 0.1, .wd = 0.1, .init = 0.3, .maximize = true}));
}

TEST(Adagrad, StateIsCreatedAtConstructionAsInPyTorch) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Adagrad opt({w}, AdagradOptions().initial_accumulator_value(0.25));
  const optim::ParamState* st = opt.find_state(w);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->keys(), (std::vector<std::string>{"step", "sum"}));
  EXPECT_EQ(st->find("step")->item<float>(), 0.0f);
  graft::testing::expect_tensor(*st->find("sum"), {2}, {0.25, 0.25});
  // A group added later gets its state at once too, from its own options.
  Tensor b = tensor({3.0}, requires_grad());
  opt.add_param_group(optim::OptimizerParamGroup(
      {b}, std::make_unique<AdagradOptions>(AdagradOptions().initial_accumulator_value(1.5))));
  graft::testing::expect_tensor(*opt.find_state(b)->find("sum"), {1}, {1.5});
}

TEST(RMSprop, StateNamesInPyTorchsOrder) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  RMSprop opt({w}, RMSpropOptions().momentum(0.5).centered(true));
  w.set_grad(tensor({1.0, 1.0}));
  opt.step();
  EXPECT_EQ(opt.find_state(w)->keys(), (std::vector<std::string>{"step", "square_avg", "momentum_buffer", "grad_avg"}));
}
