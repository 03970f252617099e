// float16 and bfloat16 tensors: every kernel computes them in float32 and rounds the result once,
// so each op equals its float32 run rounded to the 16-bit dtype; the meta device takes the same
// memory; results, views and gradients keep the dtype.
#include "graft/memory.h"
#include "support/test_util.h"

using namespace graft;

namespace {
std::vector<float> floats(const Tensor& t) { return t.to(kFloat32).contiguous().to_vector<float>(); }

// op on the 16-bit x equals op on float32(x), rounded to the dtype
void expect_float32_rounded(DType dt, const std::function<Tensor(const Tensor&)>& op, const Tensor& x32) {
  const Tensor x = x32.to(dt);
  const Tensor got = op(x);
  EXPECT_EQ(got.dtype(), dt);
  EXPECT_EQ(floats(got), floats(op(x.to(kFloat32)).to(dt)));
}
}  // namespace

class ReducedFloatOps : public ::testing::TestWithParam<DType> {};

TEST_P(ReducedFloatOps, EachOpIsItsFloat32RunRoundedOnce) {
  const DType dt = GetParam();
  const Tensor x = tensor({0.1, -1.5, 3.25, 1000.0, -0.0, 2.0, -7.75, 0.3333}).reshape({2, 4});
  const Tensor y = tensor({2.0, 0.5, -1.0, 3.0, 0.25, -4.0, 8.0, 1.5}).reshape({2, 4}).to(dt);
  expect_float32_rounded(
      dt, [&](const Tensor& a) { return a + y; }, x);
  expect_float32_rounded(
      dt, [&](const Tensor& a) { return a * y; }, x);
  expect_float32_rounded(
      dt, [&](const Tensor& a) { return a / y; }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.exp(); }, x * 1e-3);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.tanh(); }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.log_softmax(1); }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.sum({1}); }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.softmax(1); }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.matmul(a.t()); }, x);
  expect_float32_rounded(
      dt, [](const Tensor& a) { return a.cumsum(1); }, x);
  expect_float32_rounded(
      dt,
      [](const Tensor& a) {
        return a.index_select(1, tensor({3, 0}));
      },
      x);
}

TEST_P(ReducedFloatOps, ViewsInPlaceAndGradientsKeepTheDtype) {
  const DType dt = GetParam();
  Tensor w = ones({3, 2}, TensorOptions(dt).requires_grad(true));
  const Tensor x = arange(0, 6, 1, TensorOptions(dt)).reshape({2, 3});
  Tensor loss = x.matmul(w).tanh().sum();
  EXPECT_EQ(loss.dtype(), dt);
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), dt);
  Tensor v = x.clone();
  v.t().mul_(2);  // in place through a transposed view, rounded back into 16 bits
  EXPECT_EQ(floats(v), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(v.dtype(), dt);
}

TEST_P(ReducedFloatOps, MetaTakesTheSameMemoryAsACpuRun) {
  const DType dt = GetParam();
  auto step = [&](Device device) {
    const Tensor a = ones({64, 32}, TensorOptions(dt).device(device));
    const Tensor b = ones({32, 16}, TensorOptions(dt).device(device));
    return a.matmul(b).softmax(1).sum();
  };
  const int64_t cpu0 = memory_allocated(kCPU);
  reset_peak_memory_stats(kCPU);
  (void)step(kCPU);
  const int64_t cpu_peak = max_memory_allocated(kCPU) - cpu0;
  const int64_t meta0 = memory_allocated(kMeta);
  reset_peak_memory_stats(kMeta);
  (void)step(kMeta);
  const int64_t meta_peak = max_memory_allocated(kMeta) - meta0;
  EXPECT_GT(cpu_peak, 0);
  EXPECT_EQ(meta_peak, cpu_peak);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ReducedFloatOps, ::testing::Values(kFloat16, kBFloat16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });
