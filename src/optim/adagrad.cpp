// Adagrad: options, eager state, the fused loop for contiguous float tensors, the fallback.
#include "graft/optim/adagrad.h"

#include "fused_kernels.h"
#include "update_util.h"

namespace graft::optim {

void AdagradOptions::visit(OptionVisitor& v) {
  v.number("lr", lr());
  v.number("lr_decay", lr_decay_);
  v.number("eps", eps_);
  v.number("weight_decay", weight_decay());
  v.number("initial_accumulator_value", initial_accumulator_value_);
  v.flag("maximize", maximize());
}

void AdagradOptions::validate() const {
  detail::check_nonnegative({{"learning rate", lr()},
                             {"lr_decay value", lr_decay_},
                             {"weight_decay value", weight_decay()},
                             {"initial_accumulator_value value", initial_accumulator_value_},
                             {"epsilon value", eps_}});
}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : OptimizerWithOptions(std::move(param_groups), defaults) {
  // PyTorch creates Adagrad's state in the constructor, for every parameter.
  for (auto& g : this->param_groups()) on_param_group_added(g);
}
Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(single_group(std::move(params)), defaults) {}

void Adagrad::on_param_group_added(OptimizerParamGroup& group) {
  const double init = static_cast<const AdagradOptions&>(group.options()).initial_accumulator_value();
  for (const Tensor& param : group.params()) {
    detail::StateSlots slots(state(), param);
    slots.get("step", [&] { return detail::new_step(param.device()); });
    slots.get("sum", [&] { return detail::full_state(param, init); });
    slots.commit();
  }
}

Optimizer::StateSchema Adagrad::state_schema(const OptimizerOptions&) const {
  StateSchema s;
  s.allowed = {"step", "sum"};
  s.required = {"step", "sum"};
  return s;
}

namespace {

void adagrad_fallback(Tensor& param, const Tensor& grad, Tensor& sum, const detail::AdagradArgs& a) {
  Tensor g = detail::signed_grad(grad, a.maximize);
  if (a.weight_decay != 0) g = g.add(param, a.weight_decay);
  sum.add_(g.mul(g));                   // addcmul_(grad, grad, value=1)
  Tensor std_ = sum.sqrt().add(a.eps);  // sqrt().add_(eps)
  param.add_(g.mul(-a.clr).div(std_));  // addcdiv_(grad, std, value=-clr)
}

}  // namespace

void Adagrad::update_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const AdagradOptions&>(group.options());
  detail::for_each_param_with_grad(state(), group, [&](Tensor& param, const Tensor& grad, detail::StateSlots& slots) {
    Tensor step = slots.get("step", [&] { return detail::new_step(param.device()); });
    Tensor sum = slots.get("sum", [&] { return detail::full_state(param, o.initial_accumulator_value()); });
    const double t = detail::increment_step(step);
    const detail::AdagradArgs a{o.lr() / (1 + (t - 1) * o.lr_decay()), o.weight_decay(), o.eps(), o.maximize()};
    detail::fused_or_fallback(
        param, grad, [&](auto... p) { detail::adagrad_fused(p..., a); }, [&] { adagrad_fallback(param, grad, sum, a); },
        sum);
  });
}

}  // namespace graft::optim
