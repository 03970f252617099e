// LR schedulers: sequences against PyTorch's formulas, written out here (the chainable
// recursion where PyTorch uses it, compared to the last bit, and the closed form as a check),
// OneCycleLR's phases and momentum, errors, initial_lr, and scheduler state dicts.
#include <numbers>

#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using namespace graft::optim;

namespace {

constexpr double kPi = std::numbers::pi;

// The lr of group `g` at epochs 0..n (epoch 0 is the constructor's step).
std::vector<double> lr_sequence(LRScheduler& s, Optimizer& opt, int n, size_t g = 0) {
  std::vector<double> lrs;
  for (int e = 0; e <= n; ++e) {
    if (e > 0) s.step();
    EXPECT_EQ(s.last_epoch(), e);
    EXPECT_EQ(s.get_last_lr()[g], opt.param_groups()[g].options().get_lr());
    lrs.push_back(s.get_last_lr()[g]);
  }
  return lrs;
}

void expect_bitwise(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e) EXPECT_EQ(got[e], want[e]) << "epoch " << e;
}
void expect_rel(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e)
    EXPECT_NEAR(got[e], want[e], tol * std::fabs(want[e]) + 1e-300) << "epoch " << e;
}

int64_t python_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

}  // namespace

TEST(StepLR, DecaysEveryStepSize) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(1.0));
  StepLR s(opt, 3, 0.1);
  auto got = lr_sequence(s, opt, 20);
  std::vector<double> chain{1.0}, closed;
  for (int e = 1; e <= 20; ++e) chain.push_back(e % 3 == 0 ? chain.back() * 0.1 : chain.back());
  for (int e = 0; e <= 20; ++e) closed.push_back(std::pow(0.1, e / 3));
  expect_bitwise(got, chain);
  expect_rel(got, closed, 1e-12);
  EXPECT_EQ(got[2], 1.0);
  EXPECT_NEAR(got[3], 0.1, 1e-16);
  EXPECT_THROW_MSG(StepLR(opt, 0), ValueError, "StepLR: step_size must be a positive integer, got 0");
}

TEST(MultiStepLR, DecaysAtMilestonesCountingRepeats) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.8));
  MultiStepLR s(opt, {9, 2, 5, 5}, 0.5);  // unsorted, 5 twice: gamma^2 at epoch 5
  auto got = lr_sequence(s, opt, 20);
  std::vector<double> want;
  for (int e = 0; e <= 20; ++e) want.push_back(0.8 * std::pow(0.5, (e >= 2) + 2 * (e >= 5) + (e >= 9)));
  expect_bitwise(got, want);  // powers of two: exact
  EXPECT_EQ(got[4], 0.4);
  EXPECT_EQ(got[5], 0.1);
}

TEST(ExponentialLR, DecaysEveryEpoch) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.3));
  ExponentialLR s(opt, 0.9);
  auto got = lr_sequence(s, opt, 25);
  std::vector<double> chain{0.3}, closed;
  for (int e = 1; e <= 25; ++e) chain.push_back(chain.back() * 0.9);
  for (int e = 0; e <= 25; ++e) closed.push_back(0.3 * std::pow(0.9, e));
  expect_bitwise(got, chain);
  expect_rel(got, closed, 1e-12);
}

namespace {

// PyTorch's CosineAnnealingLR.get_lr (recursive form), from the group's previous lr.
double cosine_next(double lr, double base, double eta_min, int64_t T, int64_t e) {
  if (e == 0) return lr;
  if (python_mod(e - 1 - T, 2 * T) == 0) return lr + (base - eta_min) * (1 - std::cos(kPi / T)) / 2;
  return (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lr - eta_min) + eta_min;
}

}  // namespace

TEST(CosineAnnealingLR, RecursiveFormOverSeveralPeriods) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.1));
  CosineAnnealingLR s(opt, 5, 0.01);
  auto got = lr_sequence(s, opt, 30);  // down to eta_min at 5, back up at 10, down at 15, ...
  std::vector<double> chain{0.1}, closed;
  for (int e = 1; e <= 30; ++e) chain.push_back(cosine_next(chain.back(), 0.1, 0.01, 5, e));
  for (int e = 0; e <= 30; ++e) closed.push_back(0.01 + (0.1 - 0.01) * (1 + std::cos(kPi * e / 5)) / 2);
  expect_bitwise(got, chain);
  for (size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], closed[e], 1e-12) << "epoch " << e;
  EXPECT_NEAR(got[5], 0.01, 1e-15);
  EXPECT_NEAR(got[10], 0.1, 1e-15);
  EXPECT_NEAR(got[6], got[4], 1e-15);  // the way back up (epoch 6 takes the "restart" branch)
}

TEST(CosineAnnealingLR, FollowsTheGroupsCurrentLrAsPyTorchDoes) {
  // The recursive form scales from whatever lr the group has: halving it by hand at epoch 3
  // changes every later value (the closed form would not).
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.1));
  CosineAnnealingLR s(opt, 8, 0.0);
  std::vector<double> got{s.get_last_lr()[0]}, want{0.1};
  for (int e = 1; e <= 12; ++e) {
    if (e == 4) {
      got.back() /= 2;
      want.back() /= 2;
      opt.param_groups()[0].options().set_lr(got.back());
    }
    s.step();
    got.push_back(s.get_last_lr()[0]);
    want.push_back(cosine_next(want.back(), 0.1, 0.0, 8, e));
  }
  expect_bitwise(got, want);
  EXPECT_NEAR(got[6], 0.5 * 0.1 * (1 + std::cos(kPi * 6 / 8)) / 2, 1e-12);
  EXPECT_THROW_MSG(CosineAnnealingLR(opt, 0), ValueError, "CosineAnnealingLR: T_max must be a positive integer, got 0");
}

TEST(LambdaLR, BaseLrTimesTheLambdaPerGroup) {
  Tensor a = ones({1}, requires_grad()), b = ones({1}, requires_grad());
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<SGDOptions>(SGDOptions(0.5)));
  SGD opt(std::move(groups), SGDOptions(0.2));
  LambdaLR s(opt, std::vector<LambdaLR::LRLambda>{[](int64_t e) { return std::pow(0.95, static_cast<double>(e)); },
                                                  [](int64_t e) { return 1.0 / static_cast<double>(e + 1); }});
  for (int e = 0; e <= 20; ++e) {
    if (e > 0) s.step();
    EXPECT_EQ(s.get_last_lr()[0], 0.2 * std::pow(0.95, e));
    EXPECT_EQ(s.get_last_lr()[1], 0.5 * (1.0 / (e + 1)));
  }
  EXPECT_THROW_MSG(LambdaLR(opt, std::vector<LambdaLR::LRLambda>{[](int64_t) { return 1.0; }}), ValueError,
                   "Expected 2 lr_lambdas, but got 1");
  // One function for all groups.
  LambdaLR all(opt, [](int64_t e) { return static_cast<double>(e + 2); });
  EXPECT_EQ(all.get_last_lr(), (std::vector<double>{0.2 * 2, 0.5 * 2}));  // base_lrs: the groups' initial_lr
}

TEST(LambdaLR, AThrowingLambdaLeavesTheOptimizerAsItWas) {
  Tensor a = ones({1}, requires_grad());
  SGD opt({a}, SGDOptions(0.2));
  EXPECT_THROW(LambdaLR(opt, [](int64_t) -> double { throw std::runtime_error("no"); }), std::runtime_error);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.2);
  EXPECT_FALSE(opt.param_groups()[0].initial_lr().has_value());
}

TEST(LinearLR, DefaultWarmup) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.3));
  LinearLR s(opt);  // start 1/3, end 1, 5 iterations
  auto got = lr_sequence(s, opt, 10);
  std::vector<double> chain{0.3 * (1.0 / 3)}, closed;
  const double sf = 1.0 / 3, ef = 1.0;
  for (int e = 1; e <= 10; ++e)
    chain.push_back(e > 5 ? chain.back() : chain.back() * (1.0 + (ef - sf) / (5 * sf + (e - 1) * (ef - sf))));
  for (int e = 0; e <= 10; ++e) closed.push_back(0.3 * (sf + (ef - sf) * std::min(e, 5) / 5.0));
  expect_bitwise(got, chain);
  expect_rel(got, closed, 1e-12);
  EXPECT_NEAR(got[0], 0.1, 1e-16);
  EXPECT_NEAR(got[5], 0.3, 1e-15);
}

TEST(LinearLR, Decay) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(1.0));
  LinearLR s(opt, 1.0, 0.25, 3);
  auto got = lr_sequence(s, opt, 6);
  expect_rel(got, {1.0, 0.75, 0.5, 0.25, 0.25, 0.25, 0.25}, 1e-15);
}

TEST(LinearLR, ArgumentChecks) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(1.0));
  EXPECT_THROW_MSG(LinearLR(opt, 0.0), ValueError,
                   "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  EXPECT_THROW_MSG(LinearLR(opt, 1.5), ValueError,
                   "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  EXPECT_THROW_MSG(LinearLR(opt, 0.5, 1.5), ValueError, "Ending multiplicative factor expected to be between 0 and 1.");
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 1.0);
  EXPECT_FALSE(opt.param_groups()[0].initial_lr().has_value());
}

TEST(LRScheduler, LaterSchedulersStartFromTheInitialLr) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.3));
  LinearLR warmup(opt);  // lr -> 0.1, initial_lr := 0.3
  EXPECT_NEAR(opt.param_groups()[0].options().get_lr(), 0.1, 1e-16);
  ExponentialLR decay(opt, 0.5);
  EXPECT_EQ(decay.base_lrs(), (std::vector<double>{0.3}));  // group.setdefault("initial_lr", lr)
  EXPECT_NEAR(decay.get_last_lr()[0], 0.1, 1e-16);          // epoch 0 keeps the current lr
  warmup.step();
  decay.step();  // chainable: both apply
  EXPECT_NEAR(opt.param_groups()[0].options().get_lr(), 0.3 * (1.0 / 3 + 2.0 / 15) * 0.5, 1e-15);
}

namespace {

// OneCycleLR's schedule from PyTorch's documentation, written out.
struct OneCycleRef {
  double max_lr, initial, min_lr, base_m = 0.85, max_m = 0.95, pct = 0.3;
  int64_t total;
  bool linear = false, three = false;
  double anneal(double s, double e, double p) const {
    return linear ? (e - s) * p + s : e + (s - e) / 2.0 * (std::cos(kPi * p) + 1);
  }
  std::pair<double, double> at(int64_t step) const {  // (lr, momentum)
    struct Ph {
      double end, lr0, lr1, m0, m1;
    };
    std::vector<Ph> ph;
    if (three)
      ph = {{pct * total - 1, initial, max_lr, max_m, base_m},
            {2 * pct * total - 2, max_lr, initial, base_m, max_m},
            {static_cast<double>(total - 1), initial, min_lr, max_m, max_m}};
    else
      ph = {{pct * total - 1, initial, max_lr, max_m, base_m},
            {static_cast<double>(total - 1), max_lr, min_lr, base_m, max_m}};
    double start = 0;
    for (size_t i = 0; i < ph.size(); ++i) {
      if (step <= ph[i].end || i + 1 == ph.size()) {
        const double p = (step - start) / (ph[i].end - start);
        return {anneal(ph[i].lr0, ph[i].lr1, p), anneal(ph[i].m0, ph[i].m1, p)};
      }
      start = ph[i].end;
    }
    return {0, 0};
  }
};

}  // namespace

TEST(OneCycleLR, CosineTwoPhasesWithSGDMomentum) {
  Tensor w = ones({1}, requires_grad());
  SGD opt({w}, SGDOptions(0.123).momentum(0.5));
  OneCycleLR s(opt, OneCycleLROptions(1.0).total_steps(20));
  OneCycleRef ref{1.0, 1.0 / 25, 1.0 / 25 / 1e4, 0.85, 0.95, 0.3, 20};
  EXPECT_EQ(opt.param_groups()[0].initial_lr(), std::optional<double>(0.04));
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.04}));
  auto& o = static_cast<SGDOptions&>(opt.param_groups()[0].options());
  for (int64_t e = 0; e <= 20; ++e) {
    if (e > 0) s.step();
    auto [lr, m] = ref.at(e);
    EXPECT_EQ(o.lr(), lr) << "epoch " << e;
    EXPECT_EQ(o.momentum(), m) << "epoch " << e;
  }
  // Landmarks: start at max_lr / 25, peak at step 0.3 * 20 - 1 = 5, min_lr at 19.
  EXPECT_NEAR(ref.at(0).first, 0.04, 1e-15);
  EXPECT_NEAR(ref.at(5).first, 1.0, 1e-15);
  EXPECT_NEAR(ref.at(5).second, 0.85, 1e-15);
  EXPECT_NEAR(ref.at(19).first, 4e-6, 1e-18);
  EXPECT_NEAR(ref.at(19).second, 0.95, 1e-15);
  // Past total_steps: PyTorch's error, and nothing moves.
  const double lr = o.lr(), m = o.momentum();
  EXPECT_THROW_MSG(s.step(), ValueError, "Tried to step 21 times. The specified number of total steps is 20");
  EXPECT_EQ(s.last_epoch(), 20);
  EXPECT_EQ(o.lr(), lr);
  EXPECT_EQ(o.momentum(), m);
  EXPECT_THROW_MSG(s.step(), ValueError, "Tried to step 21 times. The specified number of total steps is 20");
}

TEST(OneCycleLR, LinearThreePhasesWithAdamBeta1AndEpochs) {
  Tensor w = ones({1}, requires_grad());
  Adam opt({w}, AdamOptions(0.1).betas({0.9, 0.97}));
  OneCycleLR s(opt, OneCycleLROptions(0.5)
                        .epochs(4)
                        .steps_per_epoch(5)
                        .anneal_strategy("linear")
                        .three_phase(true)
                        .base_momentum(0.8)
                        .max_momentum(0.9)
                        .div_factor(10)
                        .final_div_factor(100)
                        .pct_start(0.25));
  OneCycleRef ref{0.5, 0.05, 0.0005, 0.8, 0.9, 0.25, 20, true, true};
  auto& o = static_cast<AdamOptions&>(opt.param_groups()[0].options());
  for (int64_t e = 0; e <= 20; ++e) {
    if (e > 0) s.step();
    auto [lr, m] = ref.at(e);
    EXPECT_EQ(o.lr(), lr) << "epoch " << e;
    EXPECT_EQ(std::get<0>(o.betas()), m) << "epoch " << e;
    EXPECT_EQ(std::get<1>(o.betas()), 0.97);  // beta2 untouched
  }
  EXPECT_NEAR(ref.at(4).first, 0.5, 1e-15);   // peak at 0.25 * 20 - 1
  EXPECT_NEAR(ref.at(8).first, 0.05, 1e-15);  // back to initial at 2 * 0.25 * 20 - 2
  EXPECT_THROW_MSG(s.step(), ValueError, "Tried to step 21 times. The specified number of total steps is 20");
}

TEST(OneCycleLR, PerGroupMaxLrAndNoMomentumCycling) {
  Tensor a = ones({1}, requires_grad()), b = ones({1}, requires_grad());
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b});
  Adagrad opt(std::move(groups));
  OneCycleLR s(opt, OneCycleLROptions({1.0, 0.5}).total_steps(10).cycle_momentum(false));
  OneCycleRef r0{1.0, 0.04, 0.04 / 1e4, 0.85, 0.95, 0.3, 10}, r1{0.5, 0.02, 0.02 / 1e4, 0.85, 0.95, 0.3, 10};
  for (int64_t e = 0; e <= 10; ++e) {
    if (e > 0) s.step();
    EXPECT_EQ(s.get_last_lr()[0], r0.at(e).first);
    EXPECT_EQ(s.get_last_lr()[1], r1.at(e).first);
  }
}

TEST(OneCycleLR, ArgumentChecksLeaveTheOptimizerAsItWas) {
  Tensor a = ones({1}, requires_grad()), b = ones({1}, requires_grad());
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b});
  SGD opt(std::move(groups), SGDOptions(0.1).momentum(0.3));
  auto unchanged = [&] {
    for (auto& g : opt.param_groups()) {
      EXPECT_EQ(g.options().get_lr(), 0.1);
      EXPECT_EQ(g.options().get_option("momentum")[0], 0.3);
      EXPECT_FALSE(g.initial_lr().has_value());
    }
  };
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0)), ValueError,
                   "You must define either total_steps OR (epochs AND steps_per_epoch)");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).epochs(3)), ValueError,
                   "You must define either total_steps OR (epochs AND steps_per_epoch)");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).total_steps(0)), ValueError,
                   "Expected positive integer total_steps, but got 0");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).epochs(-1).steps_per_epoch(3)), ValueError,
                   "Expected positive integer epochs, but got -1");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).epochs(2).steps_per_epoch(0)), ValueError,
                   "Expected positive integer steps_per_epoch, but got 0");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).total_steps(10).pct_start(1.5)), ValueError,
                   "Expected float between 0 and 1 pct_start, but got 1.5");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions(1.0).total_steps(10).anneal_strategy("exp")), ValueError,
                   "anneal_strategy must be one of 'cos' or 'linear', instead got exp");
  EXPECT_THROW_MSG(OneCycleLR(opt, OneCycleLROptions({1.0, 2.0, 3.0}).total_steps(10)), ValueError,
                   "expected 2 values for max_lr, got 3");
  unchanged();
  Tensor c = ones({1}, requires_grad());
  Adagrad adagrad({c});
  EXPECT_THROW_MSG(OneCycleLR(adagrad, OneCycleLROptions(1.0).total_steps(10)), ValueError,
                   "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
  EXPECT_EQ(adagrad.param_groups()[0].options().get_lr(), 1e-2);
}

// ---- scheduler state dicts ----

TEST(SchedulerStateDict, RoundTripContinuesIdentically) {
  Tensor a = ones({1}, requires_grad()), b = ones({1}, requires_grad());
  SGD opt_a({a}, SGDOptions(0.5).momentum(0.9));
  OneCycleLR sa(opt_a, OneCycleLROptions(2.0).total_steps(30).three_phase(true));
  for (int i = 0; i < 7; ++i) sa.step();
  const StateDict sd = sa.state_dict();
  EXPECT_EQ(sd.keys(),
            (std::vector<std::string>{"last_epoch", "_step_count", "base_lrs", "_last_lr", "total_steps", "pct_start",
                                      "anneal_linear", "three_phase", "cycle_momentum", "use_beta1", "initial_lrs",
                                      "max_lrs", "min_lrs", "max_momentums", "base_momentums"}));
  EXPECT_EQ(sd["last_epoch"].item<int64_t>(), 7);
  EXPECT_EQ(sd["_step_count"].item<int64_t>(), 8);
  EXPECT_EQ(sd["last_epoch"].dtype(), kInt64);
  SGD opt_b({b}, SGDOptions(0.1).momentum(0.1));
  OneCycleLR sb(opt_b, OneCycleLROptions(9.0).total_steps(100).anneal_strategy("linear"));
  opt_b.load_state_dict(opt_a.state_dict());  // the lr and momentum live in the optimizer
  sb.load_state_dict(sd);
  EXPECT_EQ(sb.last_epoch(), 7);
  for (int i = 0; i < 23; ++i) {
    sa.step();
    sb.step();
    ASSERT_EQ(sa.get_last_lr(), sb.get_last_lr()) << "step " << i;
    ASSERT_EQ(opt_a.param_groups()[0].options().get_option("momentum"),
              opt_b.param_groups()[0].options().get_option("momentum"));
  }
  EXPECT_THROW_HAS(sb.step(), ValueError, "The specified number of total steps is 30");
}

TEST(SchedulerStateDict, FailedLoadsChangeNothing) {
  Tensor a = ones({1}, requires_grad());
  SGD opt({a}, SGDOptions(0.5));
  StepLR s(opt, 3, 0.5);
  for (int i = 0; i < 4; ++i) s.step();
  StateDict good = s.state_dict();
  auto bad_with = [&](auto edit) {
    StateDict sd;
    for (const auto& item : good) sd.insert(item.key(), item.value().clone());
    edit(sd);
    return sd;
  };
  StepLR target(opt, 7, 0.9);
  const StateDict before = target.state_dict();
  auto unchanged = [&] {
    const StateDict now = target.state_dict();
    ASSERT_EQ(now.keys(), before.keys());
    for (const auto& item : now) EXPECT_TRUE(bitwise_equal(item.value(), before[item.key()])) << item.key();
  };
  EXPECT_THROW_MSG(target.load_state_dict(bad_with([](StateDict& sd) { sd.erase("gamma"); })), KeyError,
                   "LRScheduler.load_state_dict: missing key 'gamma'");
  unchanged();
  EXPECT_THROW_MSG(
      target.load_state_dict(bad_with([](StateDict& sd) { sd.insert("T_max", scalar_tensor(3, kInt64)); })), KeyError,
      "LRScheduler.load_state_dict: unexpected key 'T_max'");
  unchanged();
  EXPECT_THROW_MSG(
      target.load_state_dict(bad_with([](StateDict& sd) { sd["step_size"] = scalar_tensor(3.0, kFloat64); })),
      TypeError, "LRScheduler.load_state_dict: 'step_size' has dtype graft.float64, expected graft.int64");
  unchanged();
  EXPECT_THROW_MSG(target.load_state_dict(bad_with([](StateDict& sd) {
    sd["base_lrs"] = tensor({0.5, 0.5}, kFloat64);
  })),
                   ValueError,
                   "LRScheduler.load_state_dict: 'base_lrs' has 2 values but the optimizer has 1 parameter groups");
  unchanged();
  target.load_state_dict(good);
  EXPECT_EQ(target.last_epoch(), 4);
  target.step();  // epoch 5: no decay; epoch 6: decay by the loaded gamma 0.5
  const double lr = opt.param_groups()[0].options().get_lr();
  target.step();
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), lr * 0.5);
}
