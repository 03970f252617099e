#pragma once
/// Stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay
/// (L2 added to the gradient) and maximize: PyTorch 2.x's torch.optim.SGD.
#include "graft/optim/optimizer.h"

namespace graft::optim {

/// SGD's options (PyTorch's defaults; lr defaults to 1e-3 as in PyTorch 2.x).
/// lr, weight_decay (default 0) and maximize come from OptimizerCommonOptions.
struct SGDOptions : public OptimizerCommonOptions<SGDOptions> {
  SGDOptions(double lr = 1e-3) : OptimizerCommonOptions(lr, 0.0) {}  // NOLINT: implicit like libtorch
  GRAFT_OPTIM_ARG(double, momentum) = 0;
  GRAFT_OPTIM_ARG(double, dampening) = 0;
  GRAFT_OPTIM_ARG(bool, nesterov) = false;

 public:
  /// lr, momentum, dampening, weight_decay, nesterov, maximize.
  void visit(OptionVisitor& v) override;
  /// "Invalid learning rate: ...", "Invalid momentum value: ...", "Invalid weight_decay value: ...",
  /// "Nesterov momentum requires a momentum and zero dampening".
  void validate() const override;
};

/// Per step, with g = ±grad (+ weight_decay * p): buf = g on the first step, then
/// momentum * buf + (1 - dampening) * g; g = g + momentum * buf (Nesterov) or buf; p -= lr * g.
/// State: "momentum_buffer" (only when momentum != 0).
class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  using OptimizerWithOptions::OptimizerWithOptions;
  std::string name() const override { return "SGD"; }

 protected:
  StateSchema state_schema(const OptimizerOptions& options) const override;
  void update_group(OptimizerParamGroup& group) override;
};

}  // namespace graft::optim
