// The fused loop (contiguous float params) and the tensor-op fallback (any layout) must give
// bit-identical parameters and state: the fallback is the reference for the fused loop's
// operation order and rounding.
#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;

namespace {

// A leaf of logical shape {2, 3} whose memory is transposed (not contiguous), same values as
// `values`: the optimizer takes the tensor-op path for it.
Tensor transposed_leaf(const Vec& values, DType dtype) {
  Tensor rows = tensor(values, dtype).view({2, 3});
  Tensor storage = rows.t().contiguous();  // {3, 2}, holds the transpose
  Tensor leaf = storage.t();               // {2, 3} again, strides {1, 2}
  leaf.requires_grad_();
  return leaf;
}

void expect_same_path_results(const MakeOptimizer& make, DType dtype, int steps = 5) {
  const Vec init = param_values(3, 6);
  Tensor contiguous = tensor(init, dtype).view({2, 3}).detach().requires_grad_();
  Tensor strided = transposed_leaf(init, dtype);
  ASSERT_TRUE(contiguous.is_contiguous());
  ASSERT_FALSE(strided.is_contiguous());
  ASSERT_TRUE(strided.is_leaf());
  auto fused = make({contiguous});
  auto fallback = make({strided});
  for (int t = 1; t <= steps; ++t) {
    Tensor g = tensor(grad_values(t, 0, 6), dtype).view({2, 3});
    contiguous.set_grad(g.clone());
    strided.set_grad(g.clone());
    fused->step();
    fallback->step();
    ASSERT_TRUE(bitwise_equal(contiguous, strided)) << "after step " << t << "\n" << contiguous << "\n" << strided;
  }
  ASSERT_FALSE(strided.is_contiguous());  // updated in place, still the same tensor
  const optim::ParamState* a = fused->find_state(contiguous);
  const optim::ParamState* b = fallback->find_state(strided);
  ASSERT_EQ(a == nullptr, b == nullptr);
  if (!a) return;  // plain SGD keeps no state
  ASSERT_EQ(a->keys(), b->keys());
  for (const auto& item : *a) EXPECT_TRUE(bitwise_equal(item.value(), (*b)[item.key()])) << item.key();
}

template <class Opt, class Options>
MakeOptimizer maker(Options o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<Opt>(std::move(p), o); };
}

void check_both_dtypes(const MakeOptimizer& make) {
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dt == kFloat32 ? "float32" : "float64");
    expect_same_path_results(make, dt);
  }
}

}  // namespace

TEST(FusedVsFallback, SGD) {
  using optim::SGDOptions;
  check_both_dtypes(maker<optim::SGD>(SGDOptions(0.1)));
  check_both_dtypes(maker<optim::SGD>(SGDOptions(0.1).momentum(0.9).dampening(0.3).weight_decay(0.1)));
  check_both_dtypes(maker<optim::SGD>(SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.1).maximize(true)));
}

TEST(FusedVsFallback, Adam) {
  using optim::AdamOptions;
  check_both_dtypes(maker<optim::Adam>(AdamOptions(0.1)));
  check_both_dtypes(maker<optim::Adam>(AdamOptions(0.1).weight_decay(0.2).amsgrad(true).maximize(true)));
  check_both_dtypes(maker<optim::Adam>(AdamOptions(0.1).betas({0.3, 0.8}).eps(1e-3)));  // lerp's other branch
}

TEST(FusedVsFallback, AdamW) {
  using optim::AdamWOptions;
  check_both_dtypes(maker<optim::AdamW>(AdamWOptions(0.1)));
  check_both_dtypes(maker<optim::AdamW>(AdamWOptions(0.1).weight_decay(0.3).amsgrad(true).maximize(true)));
}

TEST(FusedVsFallback, RMSprop) {
  using optim::RMSpropOptions;
  check_both_dtypes(maker<optim::RMSprop>(RMSpropOptions(0.01)));
  check_both_dtypes(maker<optim::RMSprop>(RMSpropOptions(0.01).momentum(0.9).weight_decay(0.1).maximize(true)));
  check_both_dtypes(maker<optim::RMSprop>(RMSpropOptions(0.01).centered(true).alpha(0.9)));
  check_both_dtypes(maker<optim::RMSprop>(RMSpropOptions(0.01).centered(true).alpha(0.2).momentum(0.5)));
}

TEST(FusedVsFallback, Adagrad) {
  using optim::AdagradOptions;
  check_both_dtypes(maker<optim::Adagrad>(AdagradOptions(0.1)));
  check_both_dtypes(maker<optim::Adagrad>(
      AdagradOptions(0.1).lr_decay(0.2).weight_decay(0.1).initial_accumulator_value(0.5).maximize(true)));
}

TEST(FusedVsFallback, NonContiguousGradientTakesTheFallbackWithTheSameNumbers) {
  Tensor a = tensor(param_values(0, 6)).view({2, 3}).detach().requires_grad_();
  Tensor b = a.detach().clone().requires_grad_();
  optim::Adam fa({a}, optim::AdamOptions(0.1).amsgrad(true));
  optim::Adam fb({b}, optim::AdamOptions(0.1).amsgrad(true));
  for (int t = 1; t <= 3; ++t) {
    Tensor g = tensor(grad_values(t, 0, 6)).view({2, 3});
    a.set_grad(g.clone());
    b.set_grad(g.t().contiguous().t());  // same values, transposed memory
    ASSERT_FALSE(b.grad().is_contiguous());
    fa.step();
    fb.step();
    EXPECT_TRUE(bitwise_equal(a, b)) << "step " << t;
  }
}

TEST(FusedVsFallback, NaNPropagatesThroughAmsgradsMaximumOnBothPaths) {
  // The fused loop's vector lanes and its scalar tail must treat NaN as torch.maximum does,
  // whichever operand holds it. Positions 1 (a vector lane) and 5 (the float32 scalar tail).
  for (DType dt : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dt == kFloat32 ? "float32" : "float64");
    for (bool nan_in_state : {false, true}) {
      Vec init = param_values(0, 6);
      Tensor a = tensor(init, dt).view({2, 3}).detach().requires_grad_();
      Tensor b = transposed_leaf(init, dt);
      optim::Adam fa({a}, optim::AdamOptions(0.1).amsgrad(true));
      optim::Adam fb({b}, optim::AdamOptions(0.1).amsgrad(true));
      Vec g = grad_values(1, 0, 6);
      if (nan_in_state) {  // a finite first step, then NaN written into max_exp_avg_sq
        a.set_grad(tensor(g, dt).view({2, 3}));
        b.set_grad(tensor(g, dt).view({2, 3}));
        fa.step();
        fb.step();
        for (optim::Adam* opt : {&fa, &fb})
          for (auto& [impl, st] : opt->state()) {
            Tensor m = st["max_exp_avg_sq"];
            m.view({6})[1].fill_(std::nan(""));
            m.view({6})[5].fill_(std::nan(""));
          }
        g = grad_values(2, 0, 6);
      } else {
        g[1] = std::nan("");
        g[5] = std::nan("");
      }
      a.set_grad(tensor(g, dt).view({2, 3}));
      b.set_grad(tensor(g, dt).view({2, 3}));
      fa.step();
      fb.step();
      const Vec ma = graft::testing::values(*fa.find_state(a)->find("max_exp_avg_sq"));
      const Vec mb = graft::testing::values(*fb.find_state(b)->find("max_exp_avg_sq"));
      const Vec pa = graft::testing::values(a), pb = graft::testing::values(b);
      for (size_t i = 0; i < 6; ++i) {
        const bool nan = i == 1 || i == 5;
        EXPECT_EQ(std::isnan(ma[i]), nan) << i;
        EXPECT_EQ(std::isnan(mb[i]), nan) << i;
        EXPECT_EQ(std::isnan(pa[i]), nan) << i;
        EXPECT_EQ(std::isnan(pb[i]), nan) << i;
        if (!nan) {
          EXPECT_EQ(pa[i], pb[i]) << i;
        }
      }
    }
  }
}
