#pragma once
// Shared by the optimizer tests: deterministic gradients, a driver that runs an optimizer and an
// independent reference side by side, and the references themselves: PyTorch's documented
// update rules (torch.optim docs, reference section 10) as plain double loops, written from
// the formulas, not from the implementation.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graft/optim/optim.h"
#include "support/test_util.h"

namespace graft::optim_test {

using Vec = std::vector<double>;
using StateMap = std::map<std::string, Vec>;

/// Gradient values for parameter `k` at step `t` (1-based): different every step, both signs.
inline Vec grad_values(int t, int k, size_t n) {
  Vec g(n);
  for (size_t i = 0; i < n; ++i)
    g[i] = std::sin(1.3 * static_cast<double>(i) + 0.7 * t + 2.1 * k) * (1.0 + 0.5 * t) + 0.05 * k;
  return g;
}

/// Initial parameter values for parameter `k`.
inline Vec param_values(int k, size_t n) {
  Vec p(n);
  for (size_t i = 0; i < n; ++i) p[i] = std::cos(0.9 * static_cast<double>(i) + 1.7 * k) * 1.5;
  return p;
}

/// |got - want| <= tol * max(1, |want|) elementwise.
inline void expect_close(const Vec& got, const Vec& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::fabs(got[i] - want[i]), tol * std::max(1.0, std::fabs(want[i])))
        << what << " at " << i << ": got " << got[i] << ", want " << want[i];
}

/// Bitwise equality of two tensors' values (same dtype, same logical order).
inline bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !a.sizes().equals(b.sizes())) return false;
  if (a.dtype() == kFloat32) {
    auto x = a.to_vector<float>(), y = b.to_vector<float>();
    return std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
  }
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

/// One parameter's reference optimizer: step(p, g) applies one update in double.
struct Reference {
  virtual ~Reference() = default;
  virtual void step(Vec& p, const Vec& g) = 0;
  StateMap state;  ///< the same names as PyTorch's state (plus "step")
  int t = 0;
};

// ---- SGD (docs; 2.x negates the gradient first under maximize) ----
struct SgdRef : Reference {
  double lr, momentum = 0, dampening = 0, wd = 0;
  bool nesterov = false, maximize = false;
  void step(Vec& p, const Vec& grad) override {
    ++t;
    Vec& buf = state["momentum_buffer"];
    if (momentum != 0 && buf.empty()) buf.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = maximize ? -grad[i] : grad[i];
      g += wd * p[i];
      if (momentum != 0) {
        buf[i] = t == 1 ? g : momentum * buf[i] + (1 - dampening) * g;
        g = nesterov ? g + momentum * buf[i] : buf[i];
      }
      p[i] -= lr * g;
    }
    if (momentum == 0) state.erase("momentum_buffer");
  }
};

// ---- Adam / AdamW ----
struct AdamRef : Reference {
  double lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
  void step(Vec& p, const Vec& grad) override {
    ++t;
    Vec &m = state["exp_avg"], &v = state["exp_avg_sq"];
    if (m.empty()) m.assign(p.size(), 0.0), v.assign(p.size(), 0.0);
    Vec& vmax = state["max_exp_avg_sq"];
    if (vmax.empty()) vmax.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = maximize ? -grad[i] : grad[i];
      if (decoupled)
        p[i] *= 1 - lr * wd;
      else
        g += wd * p[i];
      m[i] = beta1 * m[i] + (1 - beta1) * g;
      v[i] = beta2 * v[i] + (1 - beta2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(beta1, t));
      double v_hat;
      if (amsgrad) {
        vmax[i] = std::max(vmax[i], v[i]);
        v_hat = vmax[i] / (1 - std::pow(beta2, t));
      } else {
        v_hat = v[i] / (1 - std::pow(beta2, t));
      }
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
    if (!amsgrad) state.erase("max_exp_avg_sq");
  }
};

// ---- RMSprop ----
struct RmspropRef : Reference {
  double lr, alpha = 0.99, eps = 1e-8, wd = 0, momentum = 0;
  bool centered = false, maximize = false;
  void step(Vec& p, const Vec& grad) override {
    ++t;
    Vec& sq = state["square_avg"];
    if (sq.empty()) sq.assign(p.size(), 0.0);
    Vec& ga = state["grad_avg"];
    if (ga.empty()) ga.assign(p.size(), 0.0);
    Vec& buf = state["momentum_buffer"];
    if (buf.empty()) buf.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = maximize ? -grad[i] : grad[i];
      g += wd * p[i];
      sq[i] = alpha * sq[i] + (1 - alpha) * g * g;
      double v = sq[i];
      if (centered) {
        ga[i] = alpha * ga[i] + (1 - alpha) * g;
        v -= ga[i] * ga[i];
      }
      if (momentum > 0) {
        buf[i] = momentum * buf[i] + g / (std::sqrt(v) + eps);
        p[i] -= lr * buf[i];
      } else {
        p[i] -= lr * g / (std::sqrt(v) + eps);
      }
    }
    if (!centered) state.erase("grad_avg");
    if (!(momentum > 0)) state.erase("momentum_buffer");
  }
};

// ---- Adagrad ----
struct AdagradRef : Reference {
  double lr, lr_decay = 0, wd = 0, init = 0, eps = 1e-10;
  bool maximize = false;
  void step(Vec& p, const Vec& grad) override {
    ++t;
    Vec& sum = state["sum"];
    if (sum.empty()) sum.assign(p.size(), init);
    const double clr = lr / (1 + (t - 1) * lr_decay);
    for (size_t i = 0; i < p.size(); ++i) {
      double g = maximize ? -grad[i] : grad[i];
      g += wd * p[i];
      sum[i] += g * g;
      p[i] -= clr * g / (std::sqrt(sum[i]) + eps);
    }
  }
};

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
using MakeReference = std::function<std::unique_ptr<Reference>()>;

/// Runs `steps` steps of the optimizer on two parameters (shapes {5} and {2, 3}) with
/// gradients that change every step, and the reference on the same values (the tensors'
/// rounded values are what the reference starts from); compares the parameters after every
/// step and, at the end, every state entry and the step count.
inline void run_against_reference(const MakeOptimizer& make_opt, const MakeReference& make_ref, DType dtype, double tol,
                                  int steps = 4) {
  using testing::values;
  std::vector<Tensor> params = {tensor(param_values(0, 5), dtype).requires_grad_(),
                                tensor(param_values(1, 6), dtype).view({2, 3}).detach().requires_grad_()};
  std::vector<Vec> ref_params;
  std::vector<std::unique_ptr<Reference>> refs;
  for (auto& p : params) {
    ref_params.push_back(values(p));
    refs.push_back(make_ref());
  }
  auto opt = make_opt(params);
  for (int t = 1; t <= steps; ++t) {
    for (size_t k = 0; k < params.size(); ++k) {
      Tensor g = tensor(grad_values(t, static_cast<int>(k), static_cast<size_t>(params[k].numel())), dtype)
                     .view(params[k].sizes());
      params[k].set_grad(g);
      refs[k]->step(ref_params[k], values(g));  // the grad as the optimizer sees it (rounded)
    }
    opt->step();
    for (size_t k = 0; k < params.size(); ++k)
      expect_close(values(params[k]), ref_params[k], tol,
                   "param " + std::to_string(k) + " after step " + std::to_string(t));
  }
  for (size_t k = 0; k < params.size(); ++k) {
    const optim::ParamState* st = opt->find_state(params[k]);
    if (!st) {  // only SGD without momentum keeps no state
      EXPECT_TRUE(refs[k]->state.empty()) << "no state for param " << k;
      continue;
    }
    for (const auto& [name, want] : refs[k]->state) {
      const Tensor* got = st->find(name);
      ASSERT_NE(got, nullptr) << "missing state " << name;
      EXPECT_EQ(got->dtype(), dtype) << name;
      expect_close(values(*got), want, tol, "state " + name);
    }
    size_t expected_entries = refs[k]->state.size();
    if (const Tensor* step = st->find("step")) {
      EXPECT_EQ(step->dtype(), kFloat32);
      EXPECT_EQ(step->dim(), 0);
      EXPECT_EQ(step->item<double>(), steps);
      ++expected_entries;
    }
    EXPECT_EQ(st->size(), expected_entries) << "state entries of param " << k;
  }
}

/// Runs a case in float64 (tight) and float32 (float32 rounding: a few ulps of the values
/// involved; 2e-6 rather than 1e-6 leaves room for RMSprop's momentum buffer, a sum of terms
/// near +/-10 that cancel to ~0.06).
inline void check_case(const MakeOptimizer& make_opt, const MakeReference& make_ref) {
  {
    SCOPED_TRACE("float64");
    run_against_reference(make_opt, make_ref, kFloat64, 1e-12);
  }
  {
    SCOPED_TRACE("float32");
    run_against_reference(make_opt, make_ref, kFloat32, 2e-6);
  }
}

}  // namespace graft::optim_test
