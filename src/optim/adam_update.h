#pragma once
// The update Adam and AdamW share (they differ only in where weight decay goes).
#include <tuple>
#include <unordered_map>

#include "fused_kernels.h"
#include "graft/optim/optimizer.h"

namespace graft::optim::detail {

/// PyTorch's Adam/AdamW argument checks, with its messages.
void validate_adam(double lr, double eps, const std::tuple<double, double>& betas, double weight_decay);
/// step, exp_avg, exp_avg_sq (+ max_exp_avg_sq with amsgrad).
Optimizer::StateSchema adam_state_schema(bool amsgrad);
/// Updates every parameter of `group` that has a gradient; `args.step` is filled per parameter.
void adam_update_group(std::unordered_map<const TensorImpl*, ParamState>& state, OptimizerParamGroup& group,
                       AdamArgs args);

}  // namespace graft::optim::detail
