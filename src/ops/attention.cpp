// scaled_dot_product_attention, the math form: softmax(q k^T * scale + mask) v, composed of
// differentiable ops (matmul, masked_fill, softmax, dropout), so it differentiates twice.
#include <cmath>
#include <limits>

#include "graft/ops/nn_ops.h"
#include "op_util.h"

namespace graft {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  alloc::MemoryOpScope mem_scope("scaled_dot_product_attention");
  detail::check_tensor(query, "scaled_dot_product_attention", "query");
  detail::check_tensor(key, "scaled_dot_product_attention", "key");
  detail::check_tensor(value, "scaled_dot_product_attention", "value");
  GRAFT_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, RuntimeError,
              "scaled_dot_product_attention: expected query, key and value to have at least 2 dims, but got ",
              query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  GRAFT_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), RuntimeError,
              "Expected query, key, and value to have the same dtype, but got query.dtype: ", query.dtype(),
              " key.dtype: ", key.dtype(), " and value.dtype: ", value.dtype(), " instead.");
  GRAFT_CHECK(is_floating_point(query.dtype()), TypeError,
              "scaled_dot_product_attention: expected floating point inputs, but got ", query.dtype());
  GRAFT_CHECK(query.size(-1) == key.size(-1), RuntimeError,
              "scaled_dot_product_attention: query and key must have the same embedding size, but got ", query.sizes(),
              " and ", key.sizes());
  GRAFT_CHECK(key.size(-2) == value.size(-2), RuntimeError,
              "scaled_dot_product_attention: key and value must have the same sequence length, but got ", key.sizes(),
              " and ", value.sizes());
  GRAFT_CHECK(!(is_causal && attn_mask.defined()), RuntimeError,
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  GRAFT_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, ValueError,
              "dropout probability has to be between 0 and 1, but got ", dropout_p);
  const int64_t L = query.size(-2), S = key.size(-2);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  Tensor scores = matmul(query, key.transpose(-2, -1)) * sc;  // [..., L, S]
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    const TensorOptions on(query.device());
    Tensor above = gt(arange(0, S, 1, on).unsqueeze(0), arange(0, L, 1, on).unsqueeze(1));  // j > i
    scores = masked_fill(scores, above, neg_inf);
  } else if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool)
      scores = masked_fill(scores, logical_not(attn_mask), neg_inf);
    else
      scores = scores + attn_mask;
  }
  Tensor attn = softmax(scores, -1);
  if (dropout_p > 0.0) attn = dropout(attn, dropout_p, true);
  return matmul(attn, value);
}

}  // namespace graft
