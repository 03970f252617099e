// Tensor hooks, retain_grad and the non-leaf .grad warning (reference sections 1.4, 1.5, 7.1;
// behaviours 13, 26).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;
using graft::testing::WarningCapture;

namespace {
const char* kNonLeafGrad =
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.";
}

TEST(Hooks, LeafHookRunsBeforeAccumulationAndReplacesGradient) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  bool grad_was_defined = true;
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    grad_was_defined = x.grad().defined();
    seen = g.to_vector<double>();
    return g * 10;
  });
  (x * x).sum().backward();
  EXPECT_FALSE(grad_was_defined);
  EXPECT_EQ(seen, (std::vector<double>{2, 4}));
  expect_tensor(x.grad(), {2}, {20, 40});
}

TEST(Hooks, UndefinedReturnKeepsGradientAndHooksChain) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  int calls = 0;
  x.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  x.register_hook([&](const Tensor& g) { return g + 1; });
  x.register_hook([&](const Tensor& g) { return g * 2; });  // sees the previous hook's value
  (x * 3).sum().backward();
  EXPECT_EQ(calls, 1);
  expect_tensor(x.grad(), {2}, {8, 8});
}

TEST(Hooks, RemoveWorks) {
  Tensor x = ones({2}, requires_grad());
  int calls = 0;
  HookHandle h = x.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 100;
  });
  h.remove();
  h.remove();  // idempotent
  (x * 2).sum().backward();
  EXPECT_EQ(calls, 0);
  expect_tensor(x.grad(), {2}, {2, 2});
  Tensor y = x * 3;
  HookHandle hy = y.register_hook([&](const Tensor& g) {
    ++calls;
    return g * 100;
  });
  hy.remove();
  y.sum().backward();
  EXPECT_EQ(calls, 0);
  expect_tensor(x.grad(), {2}, {5, 5});
}

TEST(Hooks, NonLeafHookModifiesGradientFlowingBack) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 2;
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = g.to_vector<double>();
    return g * 10;
  });
  (y * y).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{4, 8}));
  expect_tensor(x.grad(), {2}, {80, 160});
}

TEST(Hooks, HookOnTensorNotRequiringGrad) {
  Tensor c = ones({2});
  EXPECT_THROW_MSG(c.register_hook([](const Tensor& g) { return g; }), RuntimeError,
                   "cannot register a hook on a tensor that doesn't require gradient");
}

TEST(Hooks, HookChangingShapeIsAnError) {
  Tensor x = ones({3}, requires_grad());
  x.register_hook([](const Tensor&) { return ones({4}); });
  EXPECT_THROW_MSG((x * 2).sum().backward(), RuntimeError, "hook '0' has changed the size of value");
  EXPECT_FALSE(x.grad().defined());
  Tensor w = ones({3}, requires_grad());
  Tensor y = w * 2;
  y.register_hook([](const Tensor& g) { return g; });
  y.register_hook([](const Tensor&) { return ones({1}); });
  EXPECT_THROW_MSG(y.sum().backward(), RuntimeError, "hook '1' has changed the size of value");
}

TEST(Hooks, HookBoundToOldGradFnAfterInplace) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x * 2;
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) {
    seen = g.to_vector<double>();
    return Tensor();
  });
  y.mul_(3);
  y.sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{3, 3}));  // gradient w.r.t. the pre-mul_ version
  expect_tensor(x.grad(), {2}, {6, 6});
}

TEST(RetainGrad, NonLeafGradIsUndefinedWithWarning) {
  WarningCapture w;
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.sum().backward();
  EXPECT_FALSE(y.grad().defined());
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(w.messages()[0], kNonLeafGrad);
  (void)x.grad();  // leaf: no warning
  Tensor c = ones({2});
  (void)c.grad();  // leaf not requiring grad: no warning
  EXPECT_EQ(w.messages().size(), 1u);
}

TEST(RetainGrad, RetainedGradIsPopulatedAndAccumulates) {
  WarningCapture w;
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  EXPECT_FALSE(y.retains_grad());
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  Tensor s = y.sum();
  s.backward(Tensor(), true);
  expect_tensor(y.grad(), {3}, {1, 1, 1});
  s.backward();
  expect_tensor(y.grad(), {3}, {2, 2, 2});
  expect_tensor(x.grad(), {3}, {4, 4, 4});
  EXPECT_TRUE(w.messages().empty());
}

TEST(RetainGrad, LeafIsNoOpAndNonRequiringIsError) {
  Tensor x = ones({2}, requires_grad());
  x.retain_grad();
  EXPECT_FALSE(x.retains_grad());
  Tensor c = ones({2});
  EXPECT_THROW_MSG(c.retain_grad(), RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
}

TEST(RetainGrad, RetainedGradIsWrittenAfterHooks) {
  // 2.x: the retained .grad sees hook-modified values whatever the registration order
  Tensor x = ones({2}, requires_grad());
  Tensor a = x * 2;
  a.retain_grad();
  a.register_hook([](const Tensor& g) { return g * 100; });
  Tensor b = x * 3;
  b.register_hook([](const Tensor& g) { return g * 10; });
  b.retain_grad();
  (a + b).sum().backward();
  expect_tensor(a.grad(), {2}, {100, 100});
  expect_tensor(b.grad(), {2}, {10, 10});
  expect_tensor(x.grad(), {2}, {230, 230});
}

TEST(RetainGrad, RetainedGradIsNotAnAliasOfTheFlowingGradient) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 1;
  y.retain_grad();
  Tensor z = y * 1;
  z.retain_grad();
  z.sum().backward(Tensor(), true);
  z.sum().backward();
  expect_tensor(z.grad(), {2}, {2, 2});
  expect_tensor(y.grad(), {2}, {2, 2});
  expect_tensor(x.grad(), {2}, {2, 2});
}

TEST(RetainGrad, FollowsTheTensorThroughInplace) {
  // 2.x moves the retains_grad hook to the new grad_fn: .grad is w.r.t. the latest version
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.retain_grad();
  y.mul_(3);
  y.sum().backward();
  expect_tensor(y.grad(), {2}, {1, 1});
  expect_tensor(x.grad(), {2}, {6, 6});
}

TEST(RetainGrad, TensorDyingAfterInplaceLeavesNoDanglingTarget) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.retain_grad();
  Tensor z = y * 1;  // keeps y's original grad_fn alive
  y.mul_(3);
  y = Tensor();        // the retained tensor dies; its old node lives on
  z.sum().backward();  // must not write into the dead tensor (ASan)
  expect_tensor(x.grad(), {2}, {2, 2});
}

TEST(RetainGrad, DetachInPlaceStopsRetaining) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.retain_grad();
  Tensor z = y * 1;
  y.detach_();
  EXPECT_FALSE(y.retains_grad());
  z.sum().backward();
  EXPECT_FALSE(y.grad().defined());
  expect_tensor(x.grad(), {2}, {2, 2});
}

// The hook lists can be enumerated and pruned (the Python package's gc support finds and
// removes Python hooks this way): a leaf's slot, and a node's slot holding every output's hooks.
namespace {
struct MarkedHook {  // a named functor type, found with std::function::target
  int tag;
  Tensor operator()(const Tensor&) const { return Tensor(); }
};
}  // namespace

TEST(Hooks, SlotsCanBeEnumeratedAndPruned) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  EXPECT_EQ(leaf_hook_slot(*x.impl()), nullptr);
  x.register_hook(MarkedHook{1});
  x.register_hook([](const Tensor& g) { return g * 2; });
  HookSlot* leaf = leaf_hook_slot(*x.impl());
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->snapshot()->size(), 2u);
  auto marked = [](const TensorPreHook& h) { return h.fn.target<MarkedHook>() != nullptr; };
  EXPECT_EQ(leaf->remove_if(marked), 1u);
  EXPECT_EQ(leaf->remove_if(marked), 0u);
  ASSERT_EQ(leaf->snapshot()->size(), 1u);
  (x * x).sum().backward();  // the remaining hook still runs
  expect_tensor(x.grad(), {2}, {4, 8});

  auto parts = (x * 1).split(1);  // two outputs of one node
  EXPECT_EQ(parts[0].grad_fn()->tensor_pre_hooks(), nullptr);
  parts[0].register_hook(MarkedHook{2});
  parts[1].register_hook(MarkedHook{3});
  HookSlot* node = parts[0].grad_fn()->tensor_pre_hooks();
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->snapshot()->size(), 2u);
  EXPECT_EQ(node->remove_if([](const TensorPreHook& h) { return h.output_nr == 1; }), 1u);
  ASSERT_EQ(node->snapshot()->size(), 1u);
  EXPECT_EQ(node->snapshot()->front().fn.target<MarkedHook>()->tag, 2);
  EXPECT_EQ(node->remove_if([](const TensorPreHook&) { return true; }), 1u);
  EXPECT_EQ(node->snapshot(), nullptr);  // empty: no lock taken on the next visit
}
