// RMSprop: options, the fused loop for contiguous float tensors, the tensor-op fallback.
#include "graft/optim/rmsprop.h"

#include "fused_kernels.h"
#include "update_util.h"

namespace graft::optim {

void RMSpropOptions::visit(OptionVisitor& v) {
  v.number("lr", lr());
  v.number("momentum", momentum_);
  v.number("alpha", alpha_);
  v.number("eps", eps_);
  v.flag("centered", centered_);
  v.number("weight_decay", weight_decay());
  v.flag("maximize", maximize());
}

void RMSpropOptions::validate() const {
  detail::check_nonnegative({{"learning rate", lr()},
                             {"epsilon value", eps_},
                             {"momentum value", momentum_},
                             {"weight_decay value", weight_decay()},
                             {"alpha value", alpha_}});
}

Optimizer::StateSchema RMSprop::state_schema(const OptimizerOptions& options) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  StateSchema s;
  s.allowed = {"step", "square_avg", "momentum_buffer", "grad_avg"};
  s.required = {"step", "square_avg"};
  if (o.momentum() > 0) s.required.push_back("momentum_buffer");
  if (o.centered()) s.required.push_back("grad_avg");
  return s;
}

namespace {

void rmsprop_fallback(Tensor& param, const Tensor& grad, Tensor& square_avg, Tensor& grad_avg, Tensor& buf,
                      const detail::RmspropArgs& a) {
  Tensor g = detail::signed_grad(grad, a.maximize);
  if (a.weight_decay != 0) g = g.add(param, a.weight_decay);
  square_avg.mul_(a.alpha);
  square_avg.add_(g.mul(1 - a.alpha).mul(g));  // addcmul_(grad, grad, value=1 - alpha)
  Tensor avg;
  if (a.centered) {
    detail::lerp_(grad_avg, g, 1 - a.alpha);
    avg = square_avg.sub(grad_avg.mul(grad_avg)).sqrt();  // addcmul(grad_avg, grad_avg, value=-1).sqrt_()
  } else {
    avg = square_avg.sqrt();
  }
  avg.add_(a.eps);
  if (a.momentum > 0) {
    buf.mul_(a.momentum);
    buf.add_(g.div(avg));  // addcdiv_(grad, avg)
    param.add_(buf, -a.lr);
  } else {
    param.add_(g.mul(-a.lr).div(avg));  // addcdiv_(grad, avg, value=-lr)
  }
}

}  // namespace

void RMSprop::update_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const RMSpropOptions&>(group.options());
  const detail::RmspropArgs a{o.lr(), o.alpha(), o.eps(), o.weight_decay(), o.momentum(), o.centered(), o.maximize()};
  detail::for_each_param_with_grad(state(), group, [&](Tensor& param, const Tensor& grad, detail::StateSlots& slots) {
    Tensor step = slots.get("step", [] { return detail::new_step(); });
    Tensor square_avg = slots.get("square_avg", [&] { return detail::zeros_state(param); });
    Tensor buf, grad_avg;
    if (a.momentum > 0) buf = slots.get("momentum_buffer", [&] { return detail::zeros_state(param); });
    if (a.centered) grad_avg = slots.get("grad_avg", [&] { return detail::zeros_state(param); });
    detail::increment_step(step);
    detail::fused_or_fallback(
        param, grad, [&](auto... p) { detail::rmsprop_fused(p..., a); },
        [&] { rmsprop_fallback(param, grad, square_avg, grad_avg, buf, a); }, square_avg, grad_avg, buf);
  });
}

}  // namespace graft::optim
