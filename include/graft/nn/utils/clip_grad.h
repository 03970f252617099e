#pragma once
/// Gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_). Parameters without a
/// gradient are skipped. Both work in place on the `.grad` tensors, without recording.
#include <vector>

#include "graft/core/tensor.h"

namespace graft::nn::utils {

/// Scales the gradients so that their total norm (the norm of the per-gradient norms) is at
/// most max_norm: every grad *= min(1, max_norm / (total_norm + 1e-6)). norm_type may be any
/// p (p-norm), 0 (count of non-zeros), or +/-infinity (max/min |g|). Returns the total norm
/// before clipping as a 0-d tensor (the gradients' promoted dtype; float32 zero when no
/// parameter has a gradient). With error_if_nonfinite, a NaN or infinite total norm raises
/// PyTorch's RuntimeError and leaves the gradients as they were.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
Tensor clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace graft::nn::utils
