// clip_grad_norm_ and clip_grad_value_. Norms are accumulated in double over each gradient;
// the total norm, the clip coefficient and the scaling follow PyTorch's tensor arithmetic in
// the gradients' dtype.
#include "graft/nn/utils/clip_grad.h"

#include <cmath>
#include <limits>

#include "../../optim/python_format.h"
#include "graft/autograd/grad_mode.h"
#include "graft/ops/ops.h"

namespace graft::nn::utils {

namespace {

// The norm_type-norm of all of t's elements, computed in double.
double vector_norm(const Tensor& t, double p) {
  const std::vector<double> v = t.to_vector<double>();
  if (std::isinf(p)) {
    if (v.empty()) return p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
    double r = std::fabs(v[0]);
    for (double x : v) {
      const double a = std::fabs(x);
      if (std::isnan(a)) return a;
      r = p > 0 ? std::max(r, a) : std::min(r, a);
    }
    return r;
  }
  if (p == 0) {
    double count = 0;
    for (double x : v) count += x != 0 ? 1 : 0;
    return count;
  }
  double s = 0;
  if (p == 2) {
    for (double x : v) s += x * x;
    return std::sqrt(s);
  }
  if (p == 1) {
    for (double x : v) s += std::fabs(x);
    return s;
  }
  for (double x : v) s += std::pow(std::fabs(x), p);
  return std::pow(s, 1.0 / p);
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
    GRAFT_CHECK(g.is_floating_point(), TypeError, "clip_grad_norm_: gradients must be floating point, got ", g.dtype());
    if (g.dtype() == kFloat64) dtype = kFloat64;
  }
  // Per-gradient norms in their own dtype, then the norm of those (torch.stack promotes).
  std::vector<double> norms;
  for (const Tensor& g : grads) norms.push_back(round_to(vector_norm(g, norm_type), g.dtype()));
  const double total = round_to(vector_norm(tensor(norms, kFloat64), norm_type), dtype);
  GRAFT_CHECK(!(error_if_nonfinite && !std::isfinite(total)), RuntimeError, "The total norm of order ",
              optim::detail::python_float(norm_type),
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
              "scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`");
  Tensor total_norm = scalar_tensor(total, dtype);
  // clip_coef = max_norm / (total_norm + 1e-6); clamp(max=1.0); grads *= clip_coef (in dtype)
  const Tensor coef = (max_norm / (total_norm + 1e-6)).clamp(std::nullopt, 1.0);
  const double c = coef.item<double>();
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
