// autograd::grad and higher order: returned gradients, unused inputs, create_graph, HVP
// (reference section 3; behaviours 7, 14-16).
#include <cmath>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(Grad, ReturnsGradientsWithoutTouchingDotGrad) {
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor w = tensor({4.0, 5.0, 6.0}, requires_grad());
  TensorList g = autograd::grad({(x * w).sum()}, {x});
  ASSERT_EQ(g.size(), 1u);
  expect_tensor(g[0], {3}, {4, 5, 6});
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(g[0].requires_grad());
}

TEST(Grad, UnusedInputs) {
  Tensor x = ones({2}, requires_grad());
  Tensor unused = ones({3}, requires_grad());
  Tensor y = (x * 2).sum();
  EXPECT_THROW_MSG(autograd::grad({y}, {x, unused}, {}, true), RuntimeError,
                   "One of the differentiated Tensors appears to not have been used in the graph. Set "
                   "allow_unused=True if this is the desired behavior.");
  TensorList g = autograd::grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  ASSERT_EQ(g.size(), 2u);
  expect_tensor(g[0], {2}, {2, 2});
  EXPECT_FALSE(g[1].defined());
  TensorList m = autograd::grad({y}, {x, unused}, {}, std::nullopt, false, true, /*materialize_grads=*/true);
  expect_tensor(m[1], {3}, {0, 0, 0});
  EXPECT_FALSE(unused.grad().defined());
}

TEST(Grad, InputAndOutputErrors) {
  Tensor x = ones({2}, requires_grad());
  Tensor c = ones({2});
  EXPECT_THROW_MSG(autograd::grad({(x * c).sum()}, {c}), RuntimeError,
                   "One of the differentiated Tensors does not require grad");
  EXPECT_THROW_MSG(autograd::grad({c.sum()}, {x}), RuntimeError,
                   "element 0 of tensors does not require grad and does not have a grad_fn");
  EXPECT_THROW_MSG(autograd::grad({x * 2}, {x}), RuntimeError,
                   "grad can be implicitly created only for scalar outputs");
}

TEST(Grad, SeveralOutputsAreSummed) {
  Tensor x = ones({2}, requires_grad());
  TensorList g = autograd::grad({(x * 2).sum(), (x * 3).sum()}, {x});
  expect_tensor(g[0], {2}, {5, 5});
}

TEST(Grad, NonLeafInputsAndIdentity) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 3;
  Tensor y = (h * h).sum();
  TensorList g = autograd::grad({y}, {h});
  expect_tensor(g[0], {2}, {6, 12});
  TensorList id = autograd::grad({x}, {x}, {ones({2})});
  expect_tensor(id[0], {2}, {1, 1});
  EXPECT_FALSE(x.grad().defined());
}

TEST(Grad, GradOutputsWeightTheVjp) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  TensorList g = autograd::grad({x * x}, {x}, {tensor({1.0, 10.0})});
  expect_tensor(g[0], {2}, {2, 40});
}

TEST(Grad, RetainGraphDefaultsToCreateGraph) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x.exp().sum();
  TensorList g1 = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  TensorList g2 = autograd::grad({y}, {x});  // works: the graph was retained
  expect_tensor(g2[0], {2}, {std::exp(1.0), std::exp(2.0)}, 1e-5);
  EXPECT_THROW_HAS(autograd::grad({y}, {x}), RuntimeError, "Trying to backward through the graph a second time");
}

TEST(Grad, CreateGraphGivesDifferentiableGradients) {
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad());
  TensorList g = autograd::grad({x.pow(3).sum()}, {x}, {}, std::nullopt, true);
  expect_tensor(g[0], {3}, {3, 12, 27}, 1e-5);
  EXPECT_TRUE(g[0].requires_grad());
  ASSERT_TRUE(g[0].grad_fn());
  TensorList gg = autograd::grad({g[0].sum()}, {x});
  expect_tensor(gg[0], {3}, {6, 12, 18}, 1e-5);
  // without create_graph the gradient has no history
  TensorList h = autograd::grad({x.pow(3).sum()}, {x});
  EXPECT_FALSE(h[0].requires_grad());
  EXPECT_FALSE(h[0].grad_fn());
}

TEST(Grad, HessianVectorProduct) {
  // f = sum(w^3) + w0*w1 at w=[1,2], v=[1,0] -> hv = [6, 1]
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Tensor f = w.pow(3).sum() + w.select(0, 0) * w.select(0, 1);
  TensorList g = autograd::grad({f}, {w}, {}, std::nullopt, true);
  expect_tensor(g[0], {2}, {3 + 2, 12 + 1}, 1e-5);
  Tensor v = tensor({1.0, 0.0});
  TensorList hv = autograd::grad({g[0]}, {w}, {v});
  expect_tensor(hv[0], {2}, {6, 1}, 1e-5);
  // same via a scalar
  TensorList g2 = autograd::grad({w.pow(3).sum() + w.select(0, 0) * w.select(0, 1)}, {w}, {}, std::nullopt, true);
  TensorList hv2 = autograd::grad({(g2[0] * v).sum()}, {w});
  expect_tensor(hv2[0], {2}, {6, 1}, 1e-5);
}

TEST(Grad, LinearFunctionDerivativeDoesNotRequireGrad) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  TensorList g = autograd::grad({(x * 2).sum()}, {x}, {}, std::nullopt, true);
  expect_tensor(g[0], {2}, {2, 2});
  EXPECT_FALSE(g[0].requires_grad());
  EXPECT_THROW_MSG(autograd::grad({g[0].sum()}, {x}), RuntimeError,
                   "element 0 of tensors does not require grad and does not have a grad_fn");
  EXPECT_THROW_MSG(autograd::grad({g[0].sum()}, {x}, {}, std::nullopt, false, true), RuntimeError,
                   "element 0 of tensors does not require grad and does not have a grad_fn");
}

TEST(Grad, ReluSecondDerivativeIsZero) {
  Tensor x = tensor({-1.0, 2.0}, requires_grad());
  TensorList g = autograd::grad({(x.relu() * x).sum()}, {x}, {}, std::nullopt, true);
  expect_tensor(g[0], {2}, {0, 4});
  TensorList gg = autograd::grad({g[0].sum()}, {x}, {}, std::nullopt, false, true);
  ASSERT_TRUE(gg[0].defined());
  expect_tensor(gg[0], {2}, {0, 2});
}

TEST(Grad, GradModeInsideBackwardEqualsCreateGraph) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  std::vector<bool> seen;
  Tensor y = x * 2;
  y.register_hook([&](const Tensor& g) {
    seen.push_back(GradMode::is_enabled());
    return Tensor();
  });
  autograd::grad({y.sum()}, {x}, {}, true, false);
  autograd::grad({y.sum()}, {x}, {}, true, true);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0]);
  EXPECT_TRUE(seen[1]);
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(Grad, ThirdOrder) {
  Tensor x = tensor({2.0}, requires_grad());
  Tensor y = x.pow(4).sum();
  Tensor g1 = autograd::grad({y}, {x}, {}, std::nullopt, true)[0];         // 4x^3 = 32
  Tensor g2 = autograd::grad({g1.sum()}, {x}, {}, std::nullopt, true)[0];  // 12x^2 = 48
  Tensor g3 = autograd::grad({g2.sum()}, {x})[0];                          // 24x = 48
  expect_tensor(g1, {1}, {32}, 1e-4);
  expect_tensor(g2, {1}, {48}, 1e-4);
  expect_tensor(g3, {1}, {48}, 1e-4);
}
