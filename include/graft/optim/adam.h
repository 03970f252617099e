#pragma once
/// Adam (Kingma & Ba) with L2 weight decay, AMSGrad and maximize: PyTorch 2.x's torch.optim.Adam.
#include <tuple>

#include "graft/optim/optimizer.h"

namespace graft::optim {

/// Adam's options (PyTorch's defaults).
struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit like libtorch
  /// (beta1, beta2).
  using betas_t = std::tuple<double, double>;
  GRAFT_OPTIM_ARG(double, lr);
  GRAFT_OPTIM_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  GRAFT_OPTIM_ARG(double, eps) = 1e-8;
  GRAFT_OPTIM_ARG(double, weight_decay) = 0;
  GRAFT_OPTIM_ARG(bool, amsgrad) = false;
  GRAFT_OPTIM_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  /// lr, betas, eps, weight_decay, amsgrad, maximize.
  void visit(OptionVisitor& v) override;
  /// "Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid beta parameter at
  /// index 0: ...", "... index 1: ...", "Invalid weight_decay value: ...".
  void validate() const override;
};

/// Per step t: g = ±grad (+ weight_decay * p); m = lerp(m, g, 1 - beta1);
/// v = beta2 * v + (1 - beta2) * g * g; (AMSGrad: vmax = max(vmax, v), used for v);
/// p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
/// State: "step" (0-d float32), "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (AMSGrad).
class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});
  std::string name() const override { return "Adam"; }

 protected:
  StateSchema state_schema(const OptimizerOptions& options) const override;
  void update_group(OptimizerParamGroup& group) override;
};

}  // namespace graft::optim
