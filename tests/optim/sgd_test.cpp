// SGD against the documented update rule for every option, and worked by hand.
#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using optim::SGD;
using optim::SGDOptions;

namespace {

MakeOptimizer make_sgd(SGDOptions o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<SGD>(std::move(p), o); };
}
MakeReference sgd_ref(double lr, double momentum, double dampening, double wd, bool nesterov, bool maximize) {
  return [=] {
    auto r = std::make_unique<SgdRef>();
    r->lr = lr, r->momentum = momentum, r->dampening = dampening, r->wd = wd, r->nesterov = nesterov,
    r->maximize = maximize;
    return r;
  };
}

}  // namespace

TEST(SGD, Plain) { check_case(make_sgd(SGDOptions(0.1)), sgd_ref(0.1, 0, 0, 0, false, false)); }
TEST(SGD, Momentum) { check_case(make_sgd(SGDOptions(0.1).momentum(0.9)), sgd_ref(0.1, 0.9, 0, 0, false, false)); }
TEST(SGD, MomentumWithDampening) {
  check_case(make_sgd(SGDOptions(0.1).momentum(0.9).dampening(0.3)), sgd_ref(0.1, 0.9, 0.3, 0, false, false));
}
TEST(SGD, Nesterov) {
  check_case(make_sgd(SGDOptions(0.05).momentum(0.8).nesterov(true)), sgd_ref(0.05, 0.8, 0, 0, true, false));
}
TEST(SGD, WeightDecay) {
  check_case(make_sgd(SGDOptions(0.1).weight_decay(0.2)), sgd_ref(0.1, 0, 0, 0.2, false, false));
}
TEST(SGD, Maximize) { check_case(make_sgd(SGDOptions(0.1).maximize(true)), sgd_ref(0.1, 0, 0, 0, false, true)); }
TEST(SGD, MaximizeWithWeightDecayDecaysTheParameter) {
  // PyTorch 2.x negates the gradient first, so weight decay still pulls towards zero.
  check_case(make_sgd(SGDOptions(0.1).weight_decay(0.5).maximize(true)), sgd_ref(0.1, 0, 0, 0.5, false, true));
}
TEST(SGD, AllOptions) {
  check_case(make_sgd(SGDOptions(0.07).momentum(0.9).nesterov(true).weight_decay(0.1).maximize(true)),
             sgd_ref(0.07, 0.9, 0, 0.1, true, true));
  check_case(make_sgd(SGDOptions(0.07).momentum(0.5).dampening(0.5).weight_decay(0.1).maximize(true)),
             sgd_ref(0.07, 0.5, 0.5, 0.1, false, true));
}

// lr 0.1, momentum 0.9, p = 1, gradients 1, 2, -1 (not depending on p):
//   step 1: buf = g = 1 (no dampening, a copy)        p = 1    - 0.1 * 1    = 0.9
//   step 2: buf = 0.9 * 1 + 2 = 2.9                     p = 0.9  - 0.1 * 2.9  = 0.61
//   step 3: buf = 0.9 * 2.9 - 1 = 1.61                  p = 0.61 - 0.1 * 1.61 = 0.449
TEST(SGD, MomentumByHand) {
  Tensor w = tensor({1.0}, requires_grad());
  SGD opt({w}, SGDOptions(0.1).momentum(0.9));
  const double grads[] = {1.0, 2.0, -1.0};
  const double params[] = {0.9, 0.61, 0.449};
  const double bufs[] = {1.0, 2.9, 1.61};
  for (int i = 0; i < 3; ++i) {
    w.set_grad(tensor({grads[i]}));
    opt.step();
    EXPECT_NEAR(w.item<float>(), params[i], 1e-6) << "step " << i + 1;
    EXPECT_NEAR(opt.find_state(w)->find("momentum_buffer")->item<float>(), bufs[i], 1e-6) << "step " << i + 1;
  }
}

TEST(SGD, NoMomentumKeepsNoState) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  SGD opt({w}, SGDOptions(0.5));
  w.set_grad(tensor({1.0, -1.0}));
  opt.step();
  graft::testing::expect_tensor(w, {2}, {0.5, 2.5});
  EXPECT_EQ(opt.find_state(w), nullptr);
  EXPECT_TRUE(opt.state().empty());
}
