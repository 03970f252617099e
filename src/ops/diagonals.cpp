// Matrices built from and reduced to diagonals, written in other graft ops (declared in
// src/ops/ops.yaml, the composite family): trace, diag_embed, diag and block_diag. Each result
// is a new tensor whose diagonal (or block) view is written in place, so autograd records the
// copy into the view and its gradient is the same view of the incoming gradient.
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

Tensor trace(const Tensor& self) {
  detail::check_tensor(self, "trace");
  GRAFT_CHECK(self.dim() == 2, RuntimeError, "trace: expected a matrix, but got tensor with dim ", self.dim());
  if (self.dtype() == kBool) detail::kernel_not_implemented("trace", kBool);
  return self.diagonal().sum();
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  detail::check_tensor(self, "diag_embed");
  const int64_t n = self.dim() + 1;
  const int64_t d1 = detail::wrap_dim(dim1, n, "diag_embed"), d2 = detail::wrap_dim(dim2, n, "diag_embed");
  GRAFT_CHECK(d1 != d2, RuntimeError, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t side = (self.dim() == 0 ? 1 : self.size(-1)) + (offset < 0 ? -offset : offset);
  Shape sizes;
  const Shape in = self.sizes().shape();
  for (int64_t d = 0, next = 0; d < n; ++d) {
    if (d == d1 || d == d2)
      sizes.push_back(side);
    else
      sizes.push_back(in[static_cast<size_t>(next++)]);
  }
  Tensor out = zeros(sizes, TensorOptions(self.dtype()).device(self.device()));
  out.diagonal(offset, d1, d2).copy_(self);
  return out;
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  detail::check_tensor(self, "diag");
  GRAFT_CHECK(self.dim() == 1 || self.dim() == 2, RuntimeError, "diag(): Supports 1D or 2D tensors. Got ", self.dim(),
              "D");
  if (self.dim() == 2) return self.diagonal(diagonal).clone();
  const int64_t side = self.size(0) + (diagonal < 0 ? -diagonal : diagonal);
  Tensor out = zeros({side, side}, TensorOptions(self.dtype()).device(self.device()));
  out.diagonal(diagonal).copy_(self);
  return out;
}

Tensor block_diag(const TensorList& tensors) {
  if (tensors.empty()) return zeros({1, 0});  // PyTorch's result for no tensors
  DType dtype = tensors.empty() ? default_dtype() : tensors[0].dtype();
  int64_t rows = 0, cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_tensor(tensors[i], "block_diag", "tensors");
    GRAFT_CHECK(tensors[i].dim() <= 2, RuntimeError,
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i, " has ", tensors[i].dim(),
                " dimensions");
    dtype = promote_types(dtype, tensors[i].dtype());
    rows += tensors[i].dim() == 2 ? tensors[i].size(0) : 1;
    cols += tensors[i].dim() == 0 ? 1 : tensors[i].size(-1);
  }
  const Device device = tensors.empty() ? Device(kCPU) : tensors[0].device();
  Tensor out = zeros({rows, cols}, TensorOptions(dtype).device(device));
  int64_t r = 0, c = 0;
  for (const Tensor& t : tensors) {
    const Tensor block = t.dim() == 2 ? t : t.reshape({1, -1});
    out.narrow(0, r, block.size(0)).narrow(1, c, block.size(1)).copy_(block);
    r += block.size(0);
    c += block.size(1);
  }
  return out;
}

}  // namespace graft
