#pragma once
// Helpers of the derivative formulas in src/ops/ops.yaml that are more than one expression
// (PyTorch keeps the like of them in FunctionsManual.cpp). Written in graft ops, so they are
// recorded under create_graph and double backward works through them.
#include "graft/ops/ops.h"

namespace graft::derivatives {

/// silu's gradient: grad * s * (1 + self * (1 - s)), s = sigmoid(self) computed once.
Tensor silu_backward(const Tensor& grad, const Tensor& self);
/// mish's gradient: grad * (t + self * sigmoid(self) * (1 - t * t)), t = tanh(softplus(self))
/// computed once.
Tensor mish_backward(const Tensor& grad, const Tensor& self);
/// index_select's gradient: grad added into zeros of self's sizes at the selected slices.
Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index);
/// index_add's gradient for source: grad's slices at index, in source's sizes.
Tensor index_add_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes);
/// logsumexp's gradient: grad * exp(self - result), both brought back to self's rank.
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims, bool keepdim);
/// gather's gradient: grad scattered (added) into zeros of self's sizes through index.
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index);

}  // namespace graft::derivatives
