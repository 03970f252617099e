// The Adam family (Adam and AdamW, graft/optim/adam.h): argument checks, state creation, the
// fused loop and the tensor-op fallback. The two differ only in where weight decay goes.
#include "graft/optim/adam.h"

#include <cmath>

#include "fused_kernels.h"
#include "graft/core/python_format.h"
#include "update_util.h"

namespace graft::optim {
namespace detail {

void validate_adam(double lr, double eps, const std::tuple<double, double>& betas, double weight_decay) {
  using graft::detail::python_float;
  const double b0 = std::get<0>(betas), b1 = std::get<1>(betas);
  check_nonnegative({{"learning rate", lr}, {"epsilon value", eps}});
  GRAFT_CHECK(0.0 <= b0 && b0 < 1.0, ValueError, "Invalid beta parameter at index 0: ", python_float(b0));
  GRAFT_CHECK(0.0 <= b1 && b1 < 1.0, ValueError, "Invalid beta parameter at index 1: ", python_float(b1));
  check_nonnegative({{"weight_decay value", weight_decay}});
}

Optimizer::StateSchema adam_state_schema(bool amsgrad) {
  Optimizer::StateSchema s;
  s.allowed = {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  s.required = {"step", "exp_avg", "exp_avg_sq"};
  if (amsgrad) s.required.push_back("max_exp_avg_sq");
  return s;
}

namespace {

void adam_fallback(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq, Tensor& max_exp_avg_sq,
                   const AdamArgs& a) {
  Tensor g = signed_grad(grad, a.maximize);
  if (a.decoupled)
    param.mul_(1 - a.lr * a.weight_decay);
  else if (a.weight_decay != 0)
    g = g.add(param, a.weight_decay);
  lerp_(exp_avg, g, 1 - a.beta1);
  exp_avg_sq.mul_(a.beta2);
  exp_avg_sq.add_(g.mul(1 - a.beta2).mul(g));  // addcmul_(grad, grad, value=1 - beta2)
  const double bias_correction1 = 1 - std::pow(a.beta1, a.step);
  const double bias_correction2 = 1 - std::pow(a.beta2, a.step);
  const double step_size = a.lr / bias_correction1;
  const double bc2_sqrt = std::sqrt(bias_correction2);
  Tensor denom;
  if (a.amsgrad) {
    max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq));
    denom = max_exp_avg_sq.sqrt();
  } else {
    denom = exp_avg_sq.sqrt();
  }
  denom = denom.div(bc2_sqrt).add(a.eps);
  param.add_(exp_avg.mul(-step_size).div(denom));  // addcdiv_(exp_avg, denom, value=-step_size)
}

}  // namespace

void adam_step(std::unordered_map<const TensorImpl*, ParamState>& state, OptimizerParamGroup& group, double lr,
               const std::tuple<double, double>& betas, double eps, double weight_decay, bool amsgrad, bool maximize,
               bool decoupled) {
  AdamArgs a{lr, std::get<0>(betas), std::get<1>(betas), eps, weight_decay, amsgrad, maximize, decoupled, 0};
  for_each_param_with_grad(state, group, [&](Tensor& param, const Tensor& grad, StateSlots& slots) {
    Tensor step = slots.get("step", [&] { return new_step(param.device()); });
    Tensor exp_avg = slots.get("exp_avg", [&] { return zeros_state(param); });
    Tensor exp_avg_sq = slots.get("exp_avg_sq", [&] { return zeros_state(param); });
    Tensor max_exp_avg_sq;
    if (a.amsgrad) max_exp_avg_sq = slots.get("max_exp_avg_sq", [&] { return zeros_state(param); });
    a.step = increment_step(step);
    fused_or_fallback(
        param, grad, [&](auto... p) { adam_fused(p..., a); },
        [&] { adam_fallback(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, a); }, exp_avg, exp_avg_sq,
        max_exp_avg_sq);
  });
}

}  // namespace detail

}  // namespace graft::optim
