// clip_grad_norm_ and clip_grad_value_. Norms are accumulated in double over each gradient;
// the total norm, the clip coefficient and the scaling follow PyTorch's tensor arithmetic in
// the gradients' dtype.
#include "graft/nn/utils/clip_grad.h"

#include <cmath>
#include <limits>

#include "graft/core/grad_mode.h"
#include "graft/core/python_format.h"
#include "graft/ops/ops.h"

namespace graft::nn::utils {

namespace {

// The norm_type-norm of n values, accumulated in double.
template <class T>
double norm_of(const T* x, int64_t n, double p) {
  if (std::isinf(p)) {
    if (n == 0) return p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
    double r = std::fabs(static_cast<double>(x[0]));
    for (int64_t i = 0; i < n; ++i) {
      const double a = std::fabs(static_cast<double>(x[i]));
      if (std::isnan(a)) return a;
      r = p > 0 ? std::max(r, a) : std::min(r, a);
    }
    return r;
  }
  double s = 0;
  if (p == 0) {
    for (int64_t i = 0; i < n; ++i) s += x[i] != 0 ? 1 : 0;
    return s;
  }
  if (p == 2) {
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
    return std::sqrt(s);
  }
  if (p == 1) {
    for (int64_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(x[i]));
    return s;
  }
  for (int64_t i = 0; i < n; ++i) s += std::pow(std::fabs(static_cast<double>(x[i])), p);
  return std::pow(s, 1.0 / p);
}

// The norm of a float32/float64 tensor (any layout).
double vector_norm(const Tensor& t, double p) {
  const Tensor c = t.contiguous();
  if (c.device().is_meta()) return 0;  // no values: the contiguous copy above is the cost
  if (c.dtype() == kFloat32) return norm_of(c.data_ptr<float>(), c.numel(), p);
  return norm_of(c.data_ptr<double>(), c.numel(), p);
}

// PyTorch's clip coefficient, every operation rounded to T.
template <class T>
T clip_coef(double total, double max_norm) {
  const T shifted = static_cast<T>(static_cast<T>(total) + static_cast<T>(1e-6));            // total_norm + 1e-6
  const T coef = static_cast<T>(static_cast<T>(T(1) / shifted) * static_cast<T>(max_norm));  // reciprocal() * max_norm
  return coef > T(1) ? T(1) : coef;  // clamp(max=1.0) (NaN stays NaN)
}

// Rounds a double to `dtype` (float32 or float64).
double round_to(double x, DType dtype) { return dtype == kFloat32 ? static_cast<double>(static_cast<float>(x)) : x; }

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    GRAFT_CHECK(p.defined(), TypeError, "clip_grad_norm_: a parameter is an undefined tensor");
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return scalar_tensor(0.0, kFloat32);
  DType dtype = grads[0].dtype();
  for (const Tensor& g : grads) {
    GRAFT_CHECK(g.dtype() == kFloat32 || g.dtype() == kFloat64, TypeError,
                "clip_grad_norm_: gradients must be float32 or float64, got ", g.dtype());
    if (g.dtype() == kFloat64) dtype = kFloat64;
  }
  // Per-gradient norms in their own dtype, then the norm of those (torch.stack promotes).
  std::vector<double> norms;
  for (const Tensor& g : grads) norms.push_back(round_to(vector_norm(g, norm_type), g.dtype()));
  const double total = round_to(norm_of(norms.data(), static_cast<int64_t>(norms.size()), norm_type), dtype);
  GRAFT_CHECK(!(error_if_nonfinite && !std::isfinite(total)), RuntimeError, "The total norm of order ",
              graft::detail::python_float(norm_type),
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
              "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  Tensor total_norm = scalar_tensor(total, TensorOptions(dtype).device(grads[0].device()));
  // clip_coef = max_norm / (total_norm + 1e-6), which PyTorch evaluates as
  // (total_norm + 1e-6).reciprocal() * max_norm in the norm's dtype; clamp(max=1.0).
  const double c =
      dtype == kFloat32 ? static_cast<double>(clip_coef<float>(total, max_norm)) : clip_coef<double>(total, max_norm);
  for (Tensor& g : grads) g.mul_(c);
  return total_norm;
}

Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    GRAFT_CHECK(p.defined(), TypeError, "clip_grad_value_: a parameter is an undefined tensor");
  for (const Tensor& p : parameters) {
    if (!p.grad().defined()) continue;
    Tensor g = p.grad();
    g.clamp_(-clip_value, clip_value);
  }
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace graft::nn::utils
