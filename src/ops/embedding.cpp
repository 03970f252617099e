// Embedding lookup: rows of the weight gathered by index_select (whose backward index_adds
// the gradient back). The padding row takes its value from a detached copy of the weight, so
// it is returned as is but receives no gradient, as PyTorch's padding_idx.
#include "graft/ops/nn_ops.h"
#include "node_util.h"

namespace graft {

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx) {
  alloc::MemoryOpScope mem_scope("embedding");
  detail::check_tensor(weight, "embedding", "weight");
  detail::check_tensor(indices, "embedding", "indices");
  GRAFT_CHECK(weight.dim() == 2, RuntimeError, "embedding: 'weight' must be 2-D, but got weight of size ",
              weight.sizes());
  GRAFT_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32, TypeError,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got ", indices.dtype(), " instead (while checking arguments for embedding)");
  const int64_t V = weight.size(0);
  std::optional<int64_t> pad = padding_idx;
  if (pad) {
    GRAFT_CHECK(*pad >= -V && *pad < V, ValueError, "Padding_idx must be within num_embeddings (got padding_idx=",
                *pad, " and num_embeddings=", V, ")");
    if (*pad < 0) *pad += V;
  }
  Tensor flat = indices.reshape({-1});
  if (flat.dtype() != kInt64) flat = flat.to(kInt64);
  if (flat.numel() > 0) {
    NoGradGuard ng;
    const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
    GRAFT_CHECK(lo >= 0 && hi < V, IndexError, "embedding: index out of range in self (indices must be in [0, ", V,
                "), got ", lo < 0 ? lo : hi, ")");
  }
  Tensor rows = index_select(weight, 0, flat);
  if (pad && rows.requires_grad()) {
    Tensor keep = ne(flat, *pad).unsqueeze(1);
    rows = where(keep, rows, rows.detach());
  }
  Shape out = indices.sizes().shape();
  out.push_back(weight.size(1));
  return rows.reshape(out);
}

}  // namespace graft
