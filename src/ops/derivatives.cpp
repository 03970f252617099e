// Helpers of the derivative formulas in src/ops/ops.yaml (src/ops/derivatives.h).
#include "ops/derivatives.h"

#include "ops/op_util.h"

namespace graft::derivatives {

namespace {
Tensor zeros_for(IntArrayRef sizes, const Tensor& like) {
  return zeros(sizes, TensorOptions(like.dtype()).device(like.device()));
}
}  // namespace

Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  Tensor s = sigmoid(self);
  return grad * s * (1 + self * (1 - s));
}

Tensor mish_backward(const Tensor& grad, const Tensor& self) {
  Tensor t = tanh(softplus(self));
  return grad * (t + self * sigmoid(self) * (1 - t * t));
}

Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  if (self_sizes.empty())  // a 0-d self: its one element, as a [1] tensor, gets the gradient
    return index_add(zeros_for(Shape{1}, grad), dim, index.reshape({-1}), grad.reshape({1})).reshape({});
  return index_add(zeros_for(self_sizes, grad), dim, index.reshape({-1}), grad);
}

Tensor index_add_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes) {
  Tensor g = grad.dim() == 0 ? grad.reshape({1}) : grad;
  return index_select(g, dim, index.reshape({-1})).reshape(source_sizes);
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                          bool keepdim) {
  const uint64_t mask = detail::dim_mask(dims, self.dim(), "logsumexp");
  Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), mask, keepdim);
  Tensor y = detail::unsqueeze_reduced(result, self.sizes(), mask, keepdim);
  return g * exp(self - y);
}

Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  return scatter_add(zeros_for(self_sizes, grad), dim, index, grad);
}

}  // namespace graft::derivatives
