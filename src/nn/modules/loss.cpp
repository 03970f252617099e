// Loss layers: each forward is the loss function of its name with the layer's options.
#include "graft/nn/modules/loss.h"

#include "graft/ops/nn_ops.h"
#include "graft/ops/ops.h"

namespace graft::nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options.reduction());
}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return l1_loss(input, target, options.reduction());
}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return smooth_l1_loss(input, target, options.reduction(), options.beta());
}

// a class weight is the layer's buffer, as PyTorch's (it follows .to() and is in the state dict)
BCELossImpl::BCELossImpl(const BCELossOptions& o) : LossImpl("BCELoss", o) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy(input, target, options.weight(), options.reduction());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& o) : LossImpl("BCEWithLogitsLoss", o) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
  if (options.pos_weight().defined()) register_buffer("pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(), options.reduction());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& o) : LossImpl("NLLLoss", o) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& o) : LossImpl("CrossEntropyLoss", o) {
  if (options.weight().defined()) register_buffer("weight", options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input, target, options.weight(), options.reduction(), options.ignore_index(),
                       options.label_smoothing());
}

}  // namespace graft::nn
