// AdamW: Adam's update with decoupled weight decay.
#include "graft/optim/adamw.h"

#include "adam_update.h"

namespace graft::optim {

void AdamWOptions::visit(OptionVisitor& v) {
  v.number("lr", lr_);
  v.pair("betas", betas_);
  v.number("eps", eps_);
  v.number("weight_decay", weight_decay_);
  v.flag("amsgrad", amsgrad_);
  v.flag("maximize", maximize_);
}

void AdamWOptions::validate() const { detail::validate_adam(lr_, eps_, betas_, weight_decay_); }

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {}
AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults) : AdamW(single_group(std::move(params)), defaults) {}

Optimizer::StateSchema AdamW::state_schema(const OptimizerOptions& options) const {
  return detail::adam_state_schema(static_cast<const AdamWOptions&>(options).amsgrad());
}

void AdamW::update_group(OptimizerParamGroup& group) {
  const auto& o = static_cast<const AdamWOptions&>(group.options());
  detail::AdamArgs a{o.lr(),      std::get<0>(o.betas()), std::get<1>(o.betas()), o.eps(), o.weight_decay(),
                     o.amsgrad(), o.maximize(),           /*decoupled=*/true,     0};
  detail::adam_update_group(state(), group, a);
}

}  // namespace graft::optim
