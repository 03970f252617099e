// SGD: options, the fused loop for contiguous float tensors, the tensor-op fallback.
#include "graft/optim/sgd.h"

#include "fused_kernels.h"
#include "graft/core/python_format.h"
#include "update_util.h"

namespace graft::optim {

void SGDOptions::visit(OptionVisitor& v) {
  v.number("lr", lr());
  v.number("momentum", momentum_);
  v.number("dampening", dampening_);
  v.number("weight_decay", weight_decay());
  v.flag("nesterov", nesterov_);
  v.flag("maximize", maximize());
}

void SGDOptions::validate() const {
  using graft::detail::python_float;
  GRAFT_CHECK(!(lr() < 0.0), ValueError, "Invalid learning rate: ", python_float(lr()));
  GRAFT_CHECK(!(momentum_ < 0.0), ValueError, "Invalid momentum value: ", python_float(momentum_));
  GRAFT_CHECK(!(weight_decay() < 0.0), ValueError, "Invalid weight_decay value: ", python_float(weight_decay()));
  GRAFT_CHECK(!(nesterov_ && (momentum_ <= 0 || dampening_ != 0)), ValueError,
              "Nesterov momentum requires a momentum and zero dampening");
}

Optimizer::StateSchema SGD::state_schema(const OptimizerOptions& options) const {
  const auto& o = static_cast<const SGDOptions&>(options);
  StateSchema s;
  s.allowed = {"momentum_buffer"};
  if (o.momentum() != 0) s.required = {"momentum_buffer"};
  return s;
}

namespace {

void sgd_fallback(Tensor& param, const Tensor& grad, Tensor& buf, const detail::SgdArgs& a) {
  Tensor g = detail::signed_grad(grad, a.maximize);
  if (a.weight_decay != 0) g = g.add(param, a.weight_decay);
  if (a.momentum != 0) {
    if (a.first_step) {
      buf.copy_(g);  // clone(grad)
    } else {
      buf.mul_(a.momentum);
      buf.add_(g, 1 - a.dampening);
    }
    g = a.nesterov ? g.add(buf, a.momentum) : buf;
  }
  param.add_(g, -a.lr);
}

}  // namespace

void SGD::update_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const SGDOptions&>(group.options());
  detail::for_each_param_with_grad(state(), group, [&](Tensor& param, const Tensor& grad, detail::StateSlots& slots) {
    detail::SgdArgs a{o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), o.maximize(), false};
    Tensor buf;
    if (a.momentum != 0) {
      buf = slots.get("momentum_buffer", [&] { return detail::empty_state(param); });
      a.first_step = slots.is_new("momentum_buffer");
    }
    detail::fused_or_fallback(
        param, grad, [&](auto... p) { detail::sgd_fused(p..., a); }, [&] { sgd_fallback(param, grad, buf, a); }, buf);
  });
}

}  // namespace graft::optim
