// clip_grad_norm_ and clip_grad_value_: values, in-place effect, norms, skipping, errors.
#include "graft/nn/utils/clip_grad.h"
#include "optim_test_util.h"

using namespace graft;
using graft::nn::utils::clip_grad_norm_;
using graft::nn::utils::clip_grad_value_;
using graft::testing::expect_tensor;

namespace {

struct ThreeParams {
  Tensor a = ones({2}, requires_grad()), b = ones({1}, requires_grad()), none = ones({4}, requires_grad());
  ThreeParams() {
    a.set_grad(tensor({3.0, -4.0}));  // norm 5
    b.set_grad(tensor({12.0}));       // norm 12; total 2-norm sqrt(25 + 144) = 13
  }
  std::vector<Tensor> all() const { return {a, none, b}; }
};

}  // namespace

TEST(ClipGradNorm, ScalesInPlaceToMaxNorm) {
  ThreeParams p;
  Tensor ga = p.a.grad(), gb = p.b.grad();
  const uint32_t va = ga._version();
  Tensor total = clip_grad_norm_(p.all(), 6.5);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(total.item<float>(), 13.0f);
  // clip_coef = 6.5 / (13 + 1e-6): PyTorch's `max_norm / tensor` is tensor.reciprocal() * max_norm,
  // in float32
  const float coef = (1.0f / (13.0f + 1e-6f)) * 6.5f;
  EXPECT_TRUE(p.a.grad().is_same(ga));  // the same tensors, scaled in place
  EXPECT_TRUE(p.b.grad().is_same(gb));
  EXPECT_GT(ga._version(), va);
  EXPECT_EQ(ga.to_vector<float>(), (std::vector<float>{3.0f * coef, -4.0f * coef}));
  EXPECT_EQ(gb.to_vector<float>(), (std::vector<float>{12.0f * coef}));
  EXPECT_FALSE(p.none.grad().defined());  // skipped
  // The clipped norm is max_norm (up to the 1e-6).
  EXPECT_NEAR(std::sqrt(std::pow(ga.to_vector<double>()[0], 2) + std::pow(ga.to_vector<double>()[1], 2) +
                        std::pow(gb.item<double>(), 2)),
              6.5, 1e-5);
}

TEST(ClipGradNorm, BelowMaxNormLeavesGradientsAlone) {
  ThreeParams p;
  Tensor total = clip_grad_norm_(p.all(), 100.0);
  EXPECT_FLOAT_EQ(total.item<float>(), 13.0f);
  expect_tensor(p.a.grad(), {2}, {3.0, -4.0}, 0);  // coefficient clamped to 1
  expect_tensor(p.b.grad(), {1}, {12.0}, 0);
}

TEST(ClipGradNorm, OtherNormTypes) {
  {
    ThreeParams p;
    EXPECT_FLOAT_EQ(clip_grad_norm_(p.all(), 100.0, 1.0).item<float>(), 19.0f);  // 3 + 4 + 12
  }
  {
    ThreeParams p;
    const double inf = std::numeric_limits<double>::infinity();
    Tensor total = clip_grad_norm_(p.all(), 6.0, inf);  // max |g|
    EXPECT_FLOAT_EQ(total.item<float>(), 12.0f);
    const float coef = (1.0f / (12.0f + 1e-6f)) * 6.0f;
    EXPECT_EQ(p.b.grad().item<float>(), 12.0f * coef);
    EXPECT_EQ(p.a.grad().to_vector<float>()[1], -4.0f * coef);
  }
  {
    ThreeParams p;  // p = 3: (27 + 64 + 1728)^(1/3)
    EXPECT_NEAR(clip_grad_norm_(p.all(), 100.0, 3.0).item<double>(), std::cbrt(27.0 + 64.0 + 1728.0), 1e-5);
  }
  {
    ThreeParams p;
    EXPECT_FLOAT_EQ(clip_grad_norm_(p.all(), 100.0, -std::numeric_limits<double>::infinity()).item<float>(), 3.0f);
  }
}

TEST(ClipGradNorm, SingleTensorAndFloat64) {
  Tensor w = ones({2}, dtype(kFloat64).requires_grad());
  w.set_grad(tensor({6.0, 8.0}, kFloat64));
  Tensor total = clip_grad_norm_(w, 1.0);
  EXPECT_EQ(total.dtype(), kFloat64);
  EXPECT_EQ(total.item<double>(), 10.0);
  const double coef = (1.0 / (10.0 + 1e-6)) * 1.0;
  EXPECT_EQ(w.grad().to_vector<double>(), (std::vector<double>{6.0 * coef, 8.0 * coef}));
}

TEST(ClipGradNorm, NoGradientsGivesAZeroNorm) {
  Tensor w = ones({2}, requires_grad());
  Tensor total = clip_grad_norm_(std::vector<Tensor>{w}, 1.0);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.dtype(), kFloat32);
  EXPECT_EQ(total.item<float>(), 0.0f);
}

TEST(ClipGradNorm, NonFiniteNorm) {
  ThreeParams p;
  p.b.set_grad(tensor({std::nan("")}));
  EXPECT_THROW_MSG(clip_grad_norm_(p.all(), 1.0, 2.0, /*error_if_nonfinite=*/true), RuntimeError,
                   "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
                   "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                   "`error_if_nonfinite=False`");
  expect_tensor(p.a.grad(), {2}, {3.0, -4.0}, 0);  // untouched
  p.b.set_grad(tensor({std::numeric_limits<double>::infinity()}));
  EXPECT_THROW_HAS(clip_grad_norm_(p.all(), 1.0, 1.0, true), RuntimeError, "The total norm of order 1.0 ");
  // Without the check the norm is returned (inf) and the gradients are scaled by 1 / inf = 0.
  Tensor total = clip_grad_norm_(p.all(), 1.0);
  EXPECT_TRUE(std::isinf(total.item<double>()));
  expect_tensor(p.a.grad(), {2}, {0.0, 0.0}, 0);
}

TEST(ClipGradValue, ClampsInPlaceAndSkipsMissingGradients) {
  Tensor a = ones({4}, requires_grad()), none = ones({1}, requires_grad());
  a.set_grad(tensor({-3.0, -0.5, 0.25, 7.0}));
  Tensor g = a.grad();
  clip_grad_value_({a, none}, 1.0);
  EXPECT_TRUE(a.grad().is_same(g));
  expect_tensor(g, {4}, {-1.0, -0.5, 0.25, 1.0}, 0);
  EXPECT_FALSE(none.grad().defined());
  clip_grad_value_(a, 0.3);
  expect_tensor(g, {4}, {-0.3, -0.3, 0.25, 0.3}, 1e-7);
}

TEST(ClipGradNorm, NonContiguousGradientAndZeroNorm) {
  Tensor w = ones({2, 3}, requires_grad());
  w.set_grad(tensor({1.0, 0.0, 2.0, 0.0, 0.0, 2.0}).view({3, 2}).t());  // transposed memory
  ASSERT_FALSE(w.grad().is_contiguous());
  // norm_type 0: PyTorch takes the 0-"norm" of the per-gradient norms, so a single nonzero
  // gradient counts 1 (not its 3 non-zeros).
  EXPECT_FLOAT_EQ(clip_grad_norm_(w, 100.0, 0.0).item<float>(), 1.0f);
  Tensor total = clip_grad_norm_(w, 1.5);  // sqrt(1 + 4 + 4) = 3
  EXPECT_FLOAT_EQ(total.item<float>(), 3.0f);
  const float coef = (1.0f / (3.0f + 1e-6f)) * 1.5f;
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{1.0f * coef, 2.0f * coef, 0.0f, 0.0f, 0.0f, 2.0f * coef}));
}
