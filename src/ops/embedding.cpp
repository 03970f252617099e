// Embedding lookup: rows of the weight gathered by index_select (whose backward index_adds
// the gradient back). The padding row takes its value from a detached copy of the weight, so
// it is returned as is but receives no gradient, as PyTorch's padding_idx.
#include "graft/ops/nn_ops.h"
#include "node_util.h"

namespace graft {

namespace {
// The weight's gradient under scale_grad_by_freq (PyTorch's embedding_backward): each lookup's
// gradient is divided by how often its index occurs in the batch; the padding row gets none.
// Written in graft's ops, so it is differentiable again.
struct EmbeddingBackward0 final : Node {
  GRAFT_NODE_NAME("EmbeddingBackward0")
  SavedVariable indices;  // flat, int64
  int64_t num_weights = 0, embedding_dim = 0;
  std::optional<int64_t> padding_idx;
  GRAFT_NODE_SAVED(indices)
  TensorList apply(TensorList&& g) override {
    const Tensor idx = indices.unpack(this);
    const int64_t n = idx.numel();
    const TensorOptions o = TensorOptions(g[0].dtype()).device(g[0].device());
    Tensor grad = g[0].reshape({n, embedding_dim});
    Tensor counts = index_add(zeros({num_weights}, o), 0, idx, ones({n}, o));
    Tensor scale = pow(index_select(counts, 0, idx), -1.0);
    if (padding_idx) scale = scale * ne(idx, *padding_idx).to(g[0].dtype());
    return {index_add(zeros({num_weights, embedding_dim}, o), 0, idx, grad * scale.unsqueeze(1))};
  }
};
}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx,
                 bool scale_grad_by_freq) {
  alloc::MemoryOpScope mem_scope("embedding");
  detail::check_tensor(weight, "embedding", "weight");
  detail::check_tensor(indices, "embedding", "indices");
  GRAFT_CHECK(weight.dim() == 2, RuntimeError, "embedding: 'weight' must be 2-D, but got weight of size ",
              weight.sizes());
  GRAFT_CHECK(indices.dtype() == kInt64 || indices.dtype() == kInt32, TypeError,
              "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but "
              "got ",
              indices.dtype(), " instead (while checking arguments for embedding)");
  const int64_t V = weight.size(0);
  std::optional<int64_t> pad = padding_idx;
  if (pad) {
    GRAFT_CHECK(*pad >= -V && *pad < V, ValueError, "Padding_idx must be within num_embeddings (got padding_idx=", *pad,
                " and num_embeddings=", V, ")");
    if (*pad < 0) *pad += V;
  }
  Tensor flat = indices.reshape({-1});
  if (flat.dtype() != kInt64) flat = flat.to(kInt64);
  if (flat.numel() > 0 && detail::has_data(flat)) {  // meta: no values to check
    NoGradGuard ng;
    const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
    GRAFT_CHECK(lo >= 0 && hi < V, IndexError, "embedding: index out of range in self (indices must be in [0, ", V,
                "), got ", lo < 0 ? lo : hi, ")");
  }
  Shape out = indices.sizes().shape();
  out.push_back(weight.size(1));
  if (scale_grad_by_freq && autograd::any_requires_grad({&weight})) {
    Tensor rows;
    {
      NoGradGuard ng;
      rows = index_select(weight, 0, flat);
    }
    auto n = detail::make_node<EmbeddingBackward0>({&weight});
    n->indices = SavedVariable(flat, false);
    n->num_weights = V;
    n->embedding_dim = weight.size(1);
    n->padding_idx = pad;
    autograd::set_history(rows, n);
    return rows.sizes().equals(out) ? rows : rows.reshape(out);
  }
  Tensor rows = index_select(weight, 0, flat);
  if (pad && rows.requires_grad()) {
    Tensor keep = ne(flat, *pad).unsqueeze(1);
    rows = where(keep, rows, rows.detach());
  }
  return rows.reshape(out);
}

}  // namespace graft
