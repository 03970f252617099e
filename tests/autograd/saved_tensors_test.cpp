// What backward frees: per-SavedVariable release, second-backward errors, nodes kept by
// inputs= (reference sections 2.4-2.5; behaviours 8-11).
#include <cmath>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(SavedTensors, SumCanBeBackpropagatedTwice) {
  Tensor a = ones({3}, requires_grad());
  Tensor s = a.sum();
  s.backward();
  s.backward();
  expect_tensor(a.grad(), {3}, {2, 2, 2});
}

TEST(SavedTensors, AddOfSelfCanBeBackpropagatedTwice) {
  Tensor a = ones({3}, requires_grad());
  Tensor s = (a + a).sum();
  s.backward();
  s.backward();
  expect_tensor(a.grad(), {3}, {4, 4, 4});
}

TEST(SavedTensors, MulByScalarSavesAndCannotBeBackpropagatedTwice) {
  Tensor a = ones({3}, requires_grad());
  Tensor s = (a * 2).sum();
  s.backward();
  EXPECT_THROW_MSG(s.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
  expect_tensor(a.grad(), {3}, {2, 2, 2});  // nothing accumulated by the failed call
}

TEST(SavedTensors, ExpSavesResultAndCannotBeBackpropagatedTwice) {
  Tensor a = zeros({3}, requires_grad());
  Tensor s = a.exp().sum();
  s.backward();
  EXPECT_THROW_MSG(s.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
  EXPECT_THROW_MSG(autograd::grad({s}, {a}), RuntimeError, graft::testing::kSecondTimeMessage);
}

TEST(SavedTensors, RetainGraphKeepsThenLaterBackwardFrees) {
  Tensor a = ones({3}, requires_grad());
  Tensor s = (a * a).sum();
  s.backward(Tensor(), true);
  s.backward();  // retain_graph defaults to false: frees now
  EXPECT_THROW_MSG(s.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
  expect_tensor(a.grad(), {3}, {4, 4, 4});
}

TEST(SavedTensors, ReleasedAfterBackwardButNodesSurvive) {
  Tensor x = ones({3}, requires_grad());
  Tensor h = x * 2;  // intermediate
  Tensor y = (h * h).sum();
  EXPECT_EQ(h.use_count(), 3u);  // our handle + saved self + saved other
  y.backward(Tensor(), true);
  EXPECT_EQ(h.use_count(), 3u);  // retained
  y.backward();
  EXPECT_EQ(h.use_count(), 1u);  // the graph dropped its references
  ASSERT_TRUE(y.grad_fn());
  ASSERT_EQ(y.grad_fn()->next_functions().size(), 1u);
  EXPECT_EQ(y.grad_fn()->next_functions()[0].function->name(), "MulBackward0");
  expect_tensor(x.grad(), {3}, {16, 16, 16});
}

TEST(SavedTensors, IntermediateMemoryIsFreedDuringBackward) {
  Tensor x = ones({1000}, requires_grad());
  Tensor y = (x.exp() * 3).sum();  // exp's result is referenced only by the graph
  const int64_t before = memory_allocated();
  y.backward();
  // the exp result (4000 bytes) is gone; x.grad (4000 bytes) was added
  EXPECT_LE(memory_allocated(), before);
}

TEST(SavedTensors, ReleaseIsPerSavedVariable) {
  // (a + a) saves nothing; a second pass through it after the mul node was freed still fails
  // only because of the mul node.
  Tensor a = ones({2}, requires_grad());
  Tensor b = a + a;
  Tensor s1 = b.sum();
  Tensor s2 = (b * 3).sum();
  s1.backward();
  s1.backward();
  expect_tensor(a.grad(), {2}, {4, 4});
  s2.backward();
  EXPECT_THROW_MSG(s2.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
  expect_tensor(a.grad(), {2}, {10, 10});
}

TEST(SavedTensors, NodesNotExecuteddueToInputsKeepTheirSavedTensors) {
  Tensor a = tensor({0.0, 1.0}, requires_grad());
  Tensor b = tensor({2.0, 0.0}, requires_grad());
  Tensor loss = a.exp().sum() + b.exp().sum();
  loss.backward(Tensor(), std::nullopt, false, TensorList{a});
  expect_tensor(a.grad(), {2}, {1.0, std::exp(1.0)}, 1e-5);
  EXPECT_FALSE(b.grad().defined());
  loss.backward(Tensor(), std::nullopt, false, TensorList{b});
  expect_tensor(b.grad(), {2}, {std::exp(2.0), 1.0}, 1e-5);
  expect_tensor(a.grad(), {2}, {1.0, std::exp(1.0)}, 1e-5);
  EXPECT_THROW_MSG(loss.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
}

TEST(SavedTensors, GradWithInputsKeepsUnexecutedNodes) {
  Tensor a = tensor({0.0, 1.0}, requires_grad());
  Tensor b = tensor({2.0, 0.0}, requires_grad());
  Tensor loss = a.exp().sum() + b.exp().sum();
  auto ga = autograd::grad({loss}, {a});
  expect_tensor(ga[0], {2}, {1.0, std::exp(1.0)}, 1e-5);
  auto gb = autograd::grad({loss}, {b});
  expect_tensor(gb[0], {2}, {std::exp(2.0), 1.0}, 1e-5);
  EXPECT_THROW_MSG(autograd::grad({loss}, {a}), RuntimeError, graft::testing::kSecondTimeMessage);
}

TEST(SavedTensors, FailedBackwardLeavesNoLeaks) {
  Tensor a = ones({3}, requires_grad());
  Tensor s = (a * 2).sum();
  s.backward();
  for (int i = 0; i < 3; ++i) EXPECT_THROW_MSG(s.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
}

TEST(SavedTensors, SavedTensorsHooksPackOnceUnpackPerAccess) {
  // `a*a` packs twice (self, other), `exp` once; backward unpacks each once (reference 7.3).
  int packs = 0, unpacks = 0;
  Tensor a = tensor({1.0, 2.0}, requires_grad());
  Tensor y;
  {
    autograd::SavedTensorsHooksGuard hooks(
        [&](const Tensor& t) -> std::any {
          ++packs;
          return t.detach().clone();  // e.g. an offloaded copy
        },
        [&](const std::any& obj) {
          ++unpacks;
          return std::any_cast<Tensor>(obj);
        });
    y = (a * a).exp().sum();
  }
  EXPECT_EQ(packs, 3);
  EXPECT_EQ(unpacks, 0);
  y.backward();
  EXPECT_EQ(unpacks, 3);
  // d/da exp(a^2) = 2a exp(a^2)
  expect_tensor(a.grad(), {2}, {2 * std::exp(1.0), 4 * std::exp(4.0)}, 1e-4);
}

TEST(SavedTensors, PackHookMayNotModifyItsInput) {
  Tensor a = tensor({1.0, 2.0}, requires_grad());
  Tensor b = a * 1;
  autograd::SavedTensorsHooksGuard hooks(
      [](const Tensor& t) -> std::any {
        NoGradGuard ng;
        Tensor(t).add_(1);
        return t;
      },
      [](const std::any& obj) { return std::any_cast<Tensor>(obj); });
  EXPECT_THROW_MSG((void)(b * b), RuntimeError,
                   "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                   "can not be modified by in-place operations as this can lead to unexpected side-effects. Please "
                   "open an issue if you need to perform in-place operations on the input to a pack hook.");
}

// Found in review: with saved-tensor hooks a saved leaf keeps its route to the leaf's
// accumulator, so double backward through unpacked tensors is right.
TEST(SavedTensors, HooksKeepLeafHistoryForDoubleBackward) {
  Tensor x = tensor({1.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  autograd::SavedTensorsHooksGuard hooks([](const Tensor& t) -> std::any { return t.detach().clone(); },
                                         [](const std::any& o) { return std::any_cast<Tensor>(o); });
  Tensor g = autograd::grad({(x * x * x).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  ASSERT_TRUE(g.requires_grad());
  expect_tensor(g, {2}, {3, 12});
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  expect_tensor(gg, {2}, {6, 12});
}
