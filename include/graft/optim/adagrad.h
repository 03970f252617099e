#pragma once
/// Adagrad with learning-rate decay, weight decay, an initial accumulator value and maximize:
/// PyTorch 2.x's torch.optim.Adagrad.
#include "graft/optim/optimizer.h"

namespace graft::optim {

/// Adagrad's options (PyTorch's defaults).
/// lr, weight_decay (default 0) and maximize come from OptimizerCommonOptions.
struct AdagradOptions : public OptimizerCommonOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : OptimizerCommonOptions(lr, 0.0) {}  // NOLINT: implicit like libtorch
  GRAFT_OPTIM_ARG(double, lr_decay) = 0;
  GRAFT_OPTIM_ARG(double, initial_accumulator_value) = 0;
  GRAFT_OPTIM_ARG(double, eps) = 1e-10;

 public:
  /// lr, lr_decay, eps, weight_decay, initial_accumulator_value, maximize (PyTorch's order).
  void visit(OptionVisitor& v) override;
  /// "Invalid learning rate: ...", "Invalid lr_decay value: ...", "Invalid weight_decay value: ...",
  /// "Invalid initial_accumulator_value value: ...", "Invalid epsilon value: ...".
  void validate() const override;
};

/// Per step t: g = ±grad (+ weight_decay * p); clr = lr / (1 + (t - 1) * lr_decay);
/// sum += g * g; p -= clr * g / (sqrt(sum) + eps).
/// State: "step", "sum" (created for every parameter when its group is added, as PyTorch does).
class Adagrad : public OptimizerWithOptions<AdagradOptions> {
 public:
  explicit Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});
  std::string name() const override { return "Adagrad"; }

 protected:
  StateSchema state_schema(const OptimizerOptions& options) const override;
  void update_group(OptimizerParamGroup& group) override;
  void on_param_group_added(OptimizerParamGroup& group) override;
};

}  // namespace graft::optim
