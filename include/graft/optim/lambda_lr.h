#pragma once
/// LambdaLR: lr = initial lr * lr_lambda(epoch).
#include <functional>

#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// lr of group i := base_lr_i * lambda_i(last_epoch). One function for every group, or one
/// per group (ValueError "Expected N lr_lambdas, but got M" otherwise). The functions are not
/// part of the state dict (PyTorch saves only callable objects, not functions).
class LambdaLR : public LRScheduler {
 public:
  using LRLambda = std::function<double(int64_t epoch)>;
  LambdaLR(Optimizer& optimizer, LRLambda lr_lambda);
  LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<LRLambda> lr_lambdas_;
};

}  // namespace graft::optim
