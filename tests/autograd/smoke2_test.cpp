#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(Smoke2, AddMulBackward) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = (x * x + 1).sum();
  y.backward();
  expect_tensor(x.grad(), {3}, {2, 4, 6});
}
