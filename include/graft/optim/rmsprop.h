#pragma once
/// RMSprop with weight decay, momentum, the centered variant and maximize: PyTorch 2.x's
/// torch.optim.RMSprop.
#include "graft/optim/optimizer.h"

namespace graft::optim {

/// RMSprop's options (PyTorch's defaults).
/// lr, weight_decay (default 0) and maximize come from OptimizerCommonOptions.
struct RMSpropOptions : public OptimizerCommonOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : OptimizerCommonOptions(lr, 0.0) {}  // NOLINT: implicit like libtorch
  GRAFT_OPTIM_ARG(double, alpha) = 0.99;
  GRAFT_OPTIM_ARG(double, eps) = 1e-8;
  GRAFT_OPTIM_ARG(double, momentum) = 0;
  GRAFT_OPTIM_ARG(bool, centered) = false;

 public:
  /// lr, momentum, alpha, eps, centered, weight_decay, maximize (PyTorch's order).
  void visit(OptionVisitor& v) override;
  /// "Invalid learning rate: ...", "Invalid epsilon value: ...", "Invalid momentum value: ...",
  /// "Invalid weight_decay value: ...", "Invalid alpha value: ...".
  void validate() const override;
};

/// Per step: g = ±grad (+ weight_decay * p); sq = alpha * sq + (1 - alpha) * g * g;
/// centered: ga = lerp(ga, g, 1 - alpha), avg = sqrt(sq - ga * ga) + eps, else sqrt(sq) + eps;
/// momentum > 0: buf = momentum * buf + g / avg, p -= lr * buf; else p -= lr * g / avg.
/// State: "step", "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered).
class RMSprop : public OptimizerWithOptions<RMSpropOptions> {
 public:
  using OptimizerWithOptions::OptimizerWithOptions;
  std::string name() const override { return "RMSprop"; }

 protected:
  StateSchema state_schema(const OptimizerOptions& options) const override;
  void update_group(OptimizerParamGroup& group) override;
};

}  // namespace graft::optim
