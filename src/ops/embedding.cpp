// The forward of embedding (declared in src/ops/ops.yaml): the weight's rows gathered by
// index_select, without autograd. Its node, EmbeddingBackward0, is generated; the gradient is
// derivatives::embedding_backward (index_add of the output gradient into the picked rows).
#include "graft/backend/kernels.h"
#include "graft/core/grad_mode.h"
#include "graft/ops/generated_forwards.h"
#include "graft/ops/nn_ops.h"
#include "ops/op_util.h"

namespace graft {

Tensor detail::embedding_forward(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx,
                                 bool /*scale_grad_by_freq: the backward's*/) {
  detail::check_tensor(weight, "embedding", "weight");
  detail::check_tensor(indices, "embedding", "indices");
  GRAFT_CHECK(weight.dim() == 2, RuntimeError, "embedding: 'weight' must be 2-D, but got weight of size ",
              weight.sizes());
  GRAFT_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32, RuntimeError,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got graft.",
              legacy_type_name(indices.dtype()), " instead (while checking arguments for embedding)");
  const int64_t V = weight.size(0);
  if (padding_idx)
    GRAFT_CHECK(*padding_idx >= -V && *padding_idx < V, ValueError,
                "Padding_idx must be within num_embeddings (got padding_idx=", *padding_idx, " and num_embeddings=", V,
                ")");
  NoGradGuard ng;
  Tensor flat = indices.reshape({-1});
  if (flat.dtype() != kInt64) flat = flat.to(kInt64);
  if (flat.numel() > 0 && detail::has_data(flat)) {  // meta: no values to check
    const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
    GRAFT_CHECK(lo >= 0 && hi < V, IndexError, "embedding: index out of range in self (indices must be in [0, ", V,
                "), got ", lo < 0 ? lo : hi, ")");
  }
  Shape out = indices.sizes().shape();
  out.push_back(weight.size(1));
  Tensor rows = index_select(weight, 0, flat);
  // the op's own result, not a view of the gathered rows
  return rows.sizes().equals(out) ? rows : kernel::raw_view(rows, out, contiguous_strides(out), 0);
}

}  // namespace graft
