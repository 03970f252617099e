// graft::optim::functional: one update over lists of tensors (what graft.optim's Python
// optimizers call) gives the C++ optimizer classes' results bit for bit, checks every
// parameter before touching any, and keeps the step counts.
#include <gtest/gtest.h>

#include "graft/graft.h"

using namespace graft;

namespace {
// Two parameters with gradients, the same values each call.
std::vector<Tensor> params_with_grads() {
  manual_seed(3);
  std::vector<Tensor> ps = {randn({3, 4}, TensorOptions(kFloat64).requires_grad(true)),
                            randn({5}, TensorOptions(kFloat64).requires_grad(true))};
  for (auto& p : ps) (p * p).sum().backward();
  return ps;
}
std::vector<Tensor> grads_of(const std::vector<Tensor>& ps) {
  std::vector<Tensor> g;
  for (auto& p : ps) g.push_back(p.grad());
  return g;
}
}  // namespace

TEST(OptimFunctional, SgdWithMomentumEqualsTheSgdClass) {
  auto a = params_with_grads(), b = params_with_grads();
  optim::SGD opt(a, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.01));
  std::vector<std::optional<Tensor>> bufs(b.size());
  for (int step = 0; step < 2; ++step) {
    opt.step();
    auto out = optim::functional::sgd(b, grads_of(b), bufs, 0.1, 0.9, 0.0, 0.01, false, false);
    for (size_t i = 0; i < out.size(); ++i) bufs[i] = out[i];
  }
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(equal(a[i], b[i])) << "parameter " << i;
  EXPECT_EQ(memory_category(*bufs[0]), MemoryCategory::OptimizerState);
}

TEST(OptimFunctional, AdamCountsStepsAndEqualsTheAdamClass) {
  auto a = params_with_grads(), b = params_with_grads();
  optim::Adam opt(a, optim::AdamOptions(0.01));
  std::vector<Tensor> m, v, steps;
  for (auto& p : b) {
    m.push_back(optim::functional::zeros_state(p));
    v.push_back(optim::functional::zeros_state(p));
    steps.push_back(optim::functional::new_step());
  }
  for (int step = 0; step < 3; ++step) {
    opt.step();
    optim::functional::adam(b, grads_of(b), m, v, {std::nullopt, std::nullopt}, steps, false, 0.9, 0.999, 0.01, 0.0,
                            1e-8, false, false);
  }
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(equal(a[i], b[i])) << "parameter " << i;
  EXPECT_EQ(steps[0].item<double>(), 3.0);
}

TEST(OptimFunctional, ARejectedCallChangesNothing) {
  auto b = params_with_grads();
  const Tensor before = b[0].detach().clone();
  std::vector<Tensor> grads = grads_of(b);
  grads[1] = zeros({6}, TensorOptions(kFloat64));  // the second parameter's gradient has the wrong shape
  EXPECT_THROW(optim::functional::sgd(b, grads, {std::nullopt, std::nullopt}, 0.1, 0.0, 0.0, 0.0, false, false),
               RuntimeError);
  EXPECT_TRUE(equal(b[0], before));
  EXPECT_THROW(optim::functional::sgd(b, grads_of(b), {std::nullopt}, 0.1, 0.0, 0.0, 0.0, false, false), ValueError);
}
