// LambdaLR: learning rates from a user function of the epoch.
#include "graft/optim/lambda_lr.h"

namespace graft::optim {

LambdaLR::LambdaLR(Optimizer& optimizer, LRLambda lr_lambda)
    : LambdaLR(optimizer, std::vector<LRLambda>(optimizer.param_groups().size(), std::move(lr_lambda))) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LRLambda> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  GRAFT_CHECK(lr_lambdas_.size() == optimizer.param_groups().size(), ValueError, "Expected ",
              optimizer.param_groups().size(), " lr_lambdas, but got ", lr_lambdas_.size());
  for (const auto& f : lr_lambdas_) GRAFT_CHECK(f != nullptr, TypeError, "LambdaLR: an lr_lambda is empty");
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> lrs;
  for (size_t i = 0; i < lr_lambdas_.size() && i < base_lrs_.size(); ++i)
    lrs.push_back(base_lrs_[i] * lr_lambdas_[i](last_epoch_));
  return lrs;
}

}  // namespace graft::optim
