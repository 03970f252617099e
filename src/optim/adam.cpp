// Adam, and the update it shares with AdamW: state creation, fused loop, tensor-op fallback.
#include "graft/optim/adam.h"

#include <cmath>

#include "adam_update.h"
#include "graft/core/python_format.h"
#include "update_util.h"

namespace graft::optim {
namespace detail {

void validate_adam(double lr, double eps, const std::tuple<double, double>& betas, double weight_decay) {
  using graft::detail::python_float;
  const double b0 = std::get<0>(betas), b1 = std::get<1>(betas);
  GRAFT_CHECK(0.0 <= lr, ValueError, "Invalid learning rate: ", python_float(lr));
  GRAFT_CHECK(0.0 <= eps, ValueError, "Invalid epsilon value: ", python_float(eps));
  GRAFT_CHECK(0.0 <= b0 && b0 < 1.0, ValueError, "Invalid beta parameter at index 0: ", python_float(b0));
  GRAFT_CHECK(0.0 <= b1 && b1 < 1.0, ValueError, "Invalid beta parameter at index 1: ", python_float(b1));
  GRAFT_CHECK(0.0 <= weight_decay, ValueError, "Invalid weight_decay value: ", python_float(weight_decay));
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

void adam_update_group(std::unordered_map<const TensorImpl*, ParamState>& state, OptimizerParamGroup& group,
                       AdamArgs a) {
  for (Tensor& param : group.params()) {
    const Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    StateSlots slots(state, param);
    Tensor step = slots.get("step", [] { return new_step(); });
    Tensor exp_avg = slots.get("exp_avg", [&] { return zeros_state(param); });
    Tensor exp_avg_sq = slots.get("exp_avg_sq", [&] { return zeros_state(param); });
    Tensor max_exp_avg_sq;
    if (a.amsgrad) max_exp_avg_sq = slots.get("max_exp_avg_sq", [&] { return zeros_state(param); });
    a.step = increment_step(step);
    if (fusable(param, grad, {&exp_avg, &exp_avg_sq, &max_exp_avg_sq})) {
      if (param.dtype() == kFloat32)
        adam_fused<float>(param.data_ptr<float>(), grad.data_ptr<float>(), exp_avg.data_ptr<float>(),
                          exp_avg_sq.data_ptr<float>(), ptr_or_null<float>(max_exp_avg_sq), param.numel(), a);
      else
        adam_fused<double>(param.data_ptr<double>(), grad.data_ptr<double>(), exp_avg.data_ptr<double>(),
                           exp_avg_sq.data_ptr<double>(), ptr_or_null<double>(max_exp_avg_sq), param.numel(), a);
      bump_versions({&param, &exp_avg, &exp_avg_sq, &max_exp_avg_sq});
    } else {
      adam_fallback(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, a);
    }
    slots.commit();
  }
}

}  // namespace detail

void AdamOptions::visit(OptionVisitor& v) {
  v.number("lr", lr_);
  v.pair("betas", betas_);
  v.number("eps", eps_);
  v.number("weight_decay", weight_decay_);
  v.flag("amsgrad", amsgrad_);
  v.flag("maximize", maximize_);
}

void AdamOptions::validate() const { detail::validate_adam(lr_, eps_, betas_, weight_decay_); }

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {}
Adam::Adam(std::vector<Tensor> params, AdamOptions defaults) : Adam(single_group(std::move(params)), defaults) {}

Optimizer::StateSchema Adam::state_schema(const OptimizerOptions& options) const {
  return detail::adam_state_schema(static_cast<const AdamOptions&>(options).amsgrad());
}

void Adam::update_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const AdamOptions&>(group.options());
  detail::AdamArgs a{o.lr(),      std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), o.weight_decay(),
                     o.amsgrad(), o.maximize(),           /*decoupled=*/false,    0};
  detail::adam_update_group(state(), group, a);
}

}  // namespace graft::optim
