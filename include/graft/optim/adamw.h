#pragma once
/// AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, PyTorch 2.x's torch.optim.AdamW.
#include <tuple>

#include "graft/optim/adam.h"

namespace graft::optim {

/// AdamW's options: Adam's, with weight_decay defaulting to 1e-2.
struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit like libtorch
  /// (beta1, beta2).
  using betas_t = std::tuple<double, double>;
  GRAFT_OPTIM_ARG(double, lr);
  GRAFT_OPTIM_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  GRAFT_OPTIM_ARG(double, eps) = 1e-8;
  GRAFT_OPTIM_ARG(double, weight_decay) = 1e-2;
  GRAFT_OPTIM_ARG(bool, amsgrad) = false;
  GRAFT_OPTIM_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  /// lr, betas, eps, weight_decay, amsgrad, maximize.
  void visit(OptionVisitor& v) override;
  /// The same checks and messages as AdamOptions.
  void validate() const override;
};

/// Adam's update with p = p * (1 - lr * weight_decay) first instead of L2 in the gradient.
/// State as Adam's.
class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
  std::string name() const override { return "AdamW"; }

 protected:
  StateSchema state_schema(const OptimizerOptions& options) const override;
  void update_group(OptimizerParamGroup& group) override;
};

}  // namespace graft::optim
