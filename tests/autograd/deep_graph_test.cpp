// Very deep graphs: building, backward and destruction of a 1,000,000-node chain must not
// recurse (the engine and Node deletion are iterative).
#include "support/test_util.h"

using namespace graft;

namespace {
constexpr int kDepth = 1000000;
}

TEST(DeepGraph, MillionNodeMulChainBackwardAndDestroy) {
  Tensor x = ones({1}, requires_grad());
  Tensor c = full({}, 1.0000001);
  Tensor y = x;
  for (int i = 0; i < kDepth; ++i) y = y * c;  // each MulBackward0 saves c
  // backward multiplies the same float sequence as forward did, so the results agree exactly
  const float expected = y.item<float>();
  EXPECT_GT(expected, 1.05f);
  EXPECT_EQ(c.use_count(), 1u + kDepth);
  y.sum().backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), expected);
  EXPECT_EQ(c.use_count(), 1u);  // every node released its saved tensor; the nodes live on
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  y = Tensor();  // frees the whole chain
}

TEST(DeepGraph, MillionNodeChainDestroyedWithoutBackward) {
  Tensor x = ones({1}, requires_grad());
  Tensor y = x;
  for (int i = 0; i < kDepth; ++i) y = y + 1.0;
  EXPECT_EQ(y.item<float>(), 1.0f + kDepth);
  y = Tensor();
  // and after the chain is gone, the leaf's accumulator is recreated as needed
  (x * 2).sum().backward();
  EXPECT_EQ(x.grad().item<float>(), 2.0f);
}

TEST(DeepGraph, DeepChainWithRetainGraphTwice) {
  Tensor x = ones({1}, requires_grad());
  Tensor y = x;
  for (int i = 0; i < kDepth / 4; ++i) y = y + 1.0;
  y.backward(Tensor(), true);
  y.backward();
  EXPECT_EQ(x.grad().item<float>(), 2.0f);
}
