// Graph construction: requires_grad propagation, is_leaf, grad_fn names, next_functions
// (reference sections 1.1-1.3, 1.6; behaviours 1-3).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {
std::string fn_name(const Edge& e) { return e.is_valid() ? e.function->name() : "None"; }
}  // namespace

TEST(Graph, OutputRequiresGradIffAnyInputDoes) {
  Tensor leaf = ones({2}, requires_grad());
  Tensor plain = ones({2});
  EXPECT_FALSE(plain.requires_grad());
  EXPECT_TRUE(leaf.requires_grad());
  EXPECT_FALSE((plain + plain).requires_grad());
  EXPECT_FALSE((plain * 2).requires_grad());
  Tensor y = plain + leaf;
  EXPECT_TRUE(y.requires_grad());
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  const auto& nf = y.grad_fn()->next_functions();
  ASSERT_EQ(nf.size(), 2u);
  EXPECT_EQ(fn_name(nf[0]), "None");
  EXPECT_EQ(nf[0].input_nr, 0u);
  EXPECT_EQ(fn_name(nf[1]), "torch::autograd::AccumulateGrad");
  EXPECT_EQ(nf[1].input_nr, 0u);
}

TEST(Graph, IntegerAndBoolOutputsNeverRequireGrad) {
  Tensor x = tensor({1.0, -2.0, 3.0}, requires_grad());
  Tensor am = x.argmax();
  EXPECT_EQ(am.dtype(), kInt64);
  EXPECT_FALSE(am.requires_grad());
  EXPECT_FALSE(am.grad_fn());
  Tensor gt = x > 0;
  EXPECT_EQ(gt.dtype(), kBool);
  EXPECT_FALSE(gt.requires_grad());
  EXPECT_TRUE(gt.is_leaf());
  Tensor m = tensor({1.0, 5.0, 2.0, 0.0}, requires_grad()).view({2, 2});
  auto [values, indices] = m.max(0);
  EXPECT_TRUE(values.requires_grad());
  EXPECT_FALSE(indices.requires_grad());
  EXPECT_TRUE(indices.is_leaf());
  // integer results of ordinary arithmetic on int tensors never require grad either
  Tensor i = arange(3);
  EXPECT_FALSE((i + i).requires_grad());
}

TEST(Graph, OnlyFloatingTensorsCanRequireGrad) {
  EXPECT_THROW_MSG(zeros({2}, TensorOptions(kInt64).requires_grad()), RuntimeError,
                   "Only Tensors of floating point and complex dtype can require gradients");
  Tensor i = arange(3);
  EXPECT_THROW_MSG(i.requires_grad_(), RuntimeError, "only Tensors of floating point dtype can require gradients");
  EXPECT_FALSE(i.requires_grad());
  Tensor d = zeros({2}, TensorOptions(kFloat64).requires_grad());
  EXPECT_TRUE(d.requires_grad());
}

TEST(Graph, FactoryWithRequiresGradUnderNoGradIsLeafRequiringGrad) {
  NoGradGuard ng;
  Tensor x = ones({3}, requires_grad());
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  Tensor y = x * 2;  // not recorded
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.is_leaf());
}

TEST(Graph, IsLeafIffNoGradFn) {
  Tensor a = ones({3});
  EXPECT_TRUE(a.is_leaf());  // requires_grad=False -> leaf
  Tensor x = ones({3}, requires_grad());
  EXPECT_TRUE(x.is_leaf());
  Tensor y = x * 2;
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.requires_grad());  // non-leaves always require grad
  Tensor d = y.detach();
  EXPECT_TRUE(d.is_leaf());
  EXPECT_FALSE(d.requires_grad());
  Tensor z;
  {
    NoGradGuard ng;
    z = y * 3;
  }
  EXPECT_TRUE(z.is_leaf());
  EXPECT_FALSE(z.grad_fn());
  // detach().requires_grad_() makes a fresh leaf sharing storage
  Tensor f = y.detach().requires_grad_();
  EXPECT_TRUE(f.is_leaf());
  EXPECT_TRUE(f.requires_grad());
  EXPECT_EQ(f.data_ptr(), y.data_ptr());
}

TEST(Graph, RequiresGradFlagOnNonLeaf) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  EXPECT_THROW_MSG(y.requires_grad_(false), RuntimeError,
                   "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                   "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  Tensor& r = y.requires_grad_(true);  // silent no-op
  EXPECT_TRUE(r.is_same(y));
  EXPECT_TRUE(y.requires_grad());
  Tensor a = ones({2});
  EXPECT_TRUE(a.requires_grad_().is_same(a));
  EXPECT_TRUE(a.requires_grad());
  a.requires_grad_(false);
  EXPECT_FALSE(a.requires_grad());
}

TEST(Graph, GradFnNamesAndNextFunctions) {
  Tensor a = tensor({1.0, 2.0}, requires_grad());
  Tensor b = tensor({3.0, 4.0});
  Tensor y = a * b;
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  const auto& nf = y.grad_fn()->next_functions();
  ASSERT_EQ(nf.size(), 2u);
  EXPECT_EQ(fn_name(nf[0]), "torch::autograd::AccumulateGrad");
  EXPECT_EQ(fn_name(nf[1]), "None");
  Tensor s = y.sum();
  EXPECT_EQ(s.grad_fn()->name(), "SumBackward0");
  ASSERT_EQ(s.grad_fn()->next_functions().size(), 1u);
  EXPECT_EQ(s.grad_fn()->next_functions()[0].function.get(), y.grad_fn().get());  // consumer -> producer
  EXPECT_EQ(s.grad_fn()->next_functions()[0].input_nr, 0u);
  EXPECT_EQ(a.exp().grad_fn()->name(), "ExpBackward0");
  EXPECT_EQ(a.sigmoid().grad_fn()->name(), "SigmoidBackward0");
  EXPECT_EQ(a.clone().grad_fn()->name(), "CloneBackward0");
  EXPECT_EQ((a + b).grad_fn()->name(), "AddBackward0");
  EXPECT_EQ(a.slice(0, 1).grad_fn()->name(), "SliceBackward0");
  auto parts = a.split(1);
  EXPECT_EQ(parts[1].grad_fn()->name(), "SplitBackward0");
  EXPECT_EQ(parts[1].output_nr(), 1u);
  EXPECT_EQ(parts[0].grad_fn().get(), parts[1].grad_fn().get());
}

TEST(Graph, NextFunctionsFollowArgumentOrderAndInputNr) {
  Tensor a = tensor({1.0, 2.0}, requires_grad());
  Tensor b = tensor({3.0, 4.0}, requires_grad());
  auto parts = (a * b).split(1);
  Tensor y = parts[1] + parts[0];
  const auto& nf = y.grad_fn()->next_functions();
  ASSERT_EQ(nf.size(), 2u);
  EXPECT_EQ(fn_name(nf[0]), "SplitBackward0");
  EXPECT_EQ(nf[0].input_nr, 1u);
  EXPECT_EQ(nf[1].input_nr, 0u);
  Tensor z = b * a;
  // edge 0 is b's accumulator, edge 1 is a's
  Tensor w = a * 1.0;
  EXPECT_EQ(z.grad_fn()->next_functions()[1].function.get(), w.grad_fn()->next_functions()[0].function.get());
  EXPECT_NE(z.grad_fn()->next_functions()[0].function.get(), z.grad_fn()->next_functions()[1].function.get());
}

TEST(Graph, AccumulateGradIsSharedWhileAliveAndRecreatedAfter) {
  Tensor x = ones({2}, requires_grad());
  Tensor y1 = x * 2;
  Tensor y2 = x * 3;
  Node* acc = y1.grad_fn()->next_functions()[0].function.get();
  EXPECT_EQ(acc, y2.grad_fn()->next_functions()[0].function.get());
  EXPECT_EQ(acc->name(), "torch::autograd::AccumulateGrad");
  y1 = Tensor();
  y2 = Tensor();
  // all graphs died: a new accumulator is made, and it still feeds x.grad
  Tensor y3 = (x * 4).sum();
  ASSERT_TRUE(y3.grad_fn()->next_functions()[0].function->next_functions()[0].is_valid());
  y3.backward();
  expect_tensor(x.grad(), {2}, {4, 4});
}

TEST(Graph, NodesAndNextFunctionsSurviveBackward) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x.exp();
  Tensor s = y.sum();
  intrusive_ptr<Node> sum_fn = s.grad_fn();
  s.backward();
  ASSERT_TRUE(s.grad_fn());
  EXPECT_EQ(s.grad_fn().get(), sum_fn.get());
  ASSERT_EQ(sum_fn->next_functions().size(), 1u);
  EXPECT_EQ(fn_name(sum_fn->next_functions()[0]), "ExpBackward0");
  EXPECT_EQ(fn_name(sum_fn->next_functions()[0].function->next_functions()[0]), "torch::autograd::AccumulateGrad");
}

TEST(Graph, TotalLossAccumulationKeepsGraphsChained) {
  Tensor w = ones({2}, requires_grad());
  Tensor total = zeros({});
  Node* prev = nullptr;
  for (int i = 0; i < 3; ++i) {
    Tensor loss = (w * static_cast<double>(i + 1)).sum();
    total = total + loss;
    ASSERT_EQ(total.grad_fn()->name(), "AddBackward0");
    if (prev) {
      EXPECT_EQ(total.grad_fn()->next_functions()[0].function.get(), prev);
    }
    EXPECT_EQ(fn_name(total.grad_fn()->next_functions()[1]), "SumBackward0");
    prev = total.grad_fn().get();
  }
  total.backward();
  expect_tensor(w.grad(), {2}, {6, 6});
}
