// Autocast on the CPU: the lower-precision list runs in the autocast dtype, the float32 list in
// float32, everything else on what it is given; casts are differentiable; the state nests and is
// per thread.
#include <thread>

#include "graft/ops/autocast.h"
#include "graft/ops/nn_ops.h"
#include "support/test_util.h"

using namespace graft;

TEST(Autocast, ListsAndGradients) {
  Tensor w = ones({3, 4}, TensorOptions().requires_grad(true));
  const Tensor x = ones({2, 4}), t = zeros({2, 3});
  Tensor loss;
  {
    autocast::AutocastGuard guard;  // bfloat16
    EXPECT_TRUE(autocast::is_enabled());
    const Tensor y = linear(x, w, Tensor());
    EXPECT_EQ(y.dtype(), kBFloat16);
    EXPECT_EQ(x.matmul(x.t()).dtype(), kBFloat16);
    EXPECT_EQ(mm(x, x.t()).dtype(), kBFloat16);
    EXPECT_EQ(y.relu().dtype(), kBFloat16);                               // on no list: runs on what it is given
    EXPECT_EQ(mm(x.to(kFloat64), x.to(kFloat64).t()).dtype(), kFloat64);  // float64 is not cast
    loss = mse_loss(y, t);
    EXPECT_EQ(loss.dtype(), kFloat32);
  }
  EXPECT_FALSE(autocast::is_enabled());
  EXPECT_EQ(linear(x, w, Tensor()).dtype(), kFloat32);
  loss.backward();
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  for (float g : w.grad().to_vector<float>()) EXPECT_NEAR(g, 16.0 / 6, 1e-2);  // d mean((4 - 0)^2) / dw, via bf16
}

TEST(Autocast, NestsSuspendsAndStaysOnItsThread) {
  const Tensor x = ones({2, 2});
  autocast::AutocastGuard outer(kFloat16);
  EXPECT_EQ(mm(x, x).dtype(), kFloat16);
  {
    autocast::AutocastGuard inner(kBFloat16, /*enabled=*/false);
    EXPECT_EQ(mm(x, x).dtype(), kFloat32);
  }
  EXPECT_EQ(autocast::get_dtype(), kFloat16);
  {
    const autocast::Suspend suspend;  // inside an op that cast already
    EXPECT_FALSE(autocast::active());
    EXPECT_EQ(mm(x, x).dtype(), kFloat32);
  }
  DType other_thread = kFloat64;
  std::thread([&] { other_thread = mm(x, x).dtype(); }).join();
  EXPECT_EQ(other_thread, kFloat32);
  EXPECT_THROW_HAS(autocast::set_dtype(DeviceType::CPU, kFloat32), ValueError, "must be float16 or bfloat16");
}
