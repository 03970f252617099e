#pragma once
/// Attention layers: MultiheadAttention and TransformerEncoderLayer with PyTorch's
/// parameters, initialisation, mask conventions and forward (post-norm or pre-norm).
///
/// Masks follow nn.MultiheadAttention: a bool mask marks positions that may NOT be attended
/// (true = masked, turned into -inf); a floating mask is added to the attention scores.
/// Shape checks that PyTorch makes with `assert` raise ValueError here (AssertionError has
/// no graft counterpart), with PyTorch's text; a mask of another dtype raises TypeError.
#include <string>
#include <tuple>

#include "graft/nn/module.h"
#include "graft/nn/modules/dropout.h"
#include "graft/nn/modules/linear.h"
#include "graft/nn/modules/normalization.h"
#include "graft/nn/options.h"

namespace graft::nn {

/// Options for MultiheadAttention (libtorch's MultiheadAttentionOptions, plus batch_first).
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  GRAFT_ARG(int64_t, embed_dim);
  GRAFT_ARG(int64_t, num_heads);
  /// Dropout on the attention weights, in training mode only.
  GRAFT_ARG(double, dropout) = 0.0;
  GRAFT_ARG(bool, bias) = true;
  /// Inputs and output [N, L, E] instead of [L, N, E] (batched inputs only).
  GRAFT_ARG(bool, batch_first) = false;
};

/// Multi-head scaled dot-product attention (nn.MultiheadAttention with kdim = vdim =
/// embed_dim). Parameters: in_proj_weight [3E, E] (xavier_uniform_), in_proj_bias [3E]
/// (zeros), out_proj = Linear(E, E) with its bias zeroed; head_dim = E / num_heads.
class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  /// query [L, N, E], key and value [S, N, E] ([N, L, E] with batch_first; unbatched [L, E]
  /// and [S, E]). key_padding_mask [N, S] (or [S]); attn_mask [L, S] or [N * num_heads, L, S].
  /// Returns (attn_output [L, N, E], attn_weights): the weights (after dropout) averaged over
  /// heads [N, L, S] or per head [N, num_heads, L, S]; undefined when !need_weights.
  /// is_causal is PyTorch's hint that attn_mask is the causal mask (attn_mask is required).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = Tensor(), bool need_weights = true,
                                     const Tensor& attn_mask = Tensor(), bool average_attn_weights = true,
                                     bool is_causal = false);
  void reset_parameters();
  MultiheadAttentionOptions options;
  int64_t head_dim;
  /// Handles to the registered tensors (as libtorch's members); Module::to() converts in
  /// place, so they stay current.
  Tensor in_proj_weight, in_proj_bias;
  Linear out_proj{nullptr};
};
GRAFT_MODULE(MultiheadAttention);

/// Options for TransformerEncoderLayer (libtorch's TransformerEncoderLayerOptions, plus
/// PyTorch's layer_norm_eps, batch_first and norm_first). activation: "relu" or "gelu".
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  GRAFT_ARG(int64_t, d_model);
  GRAFT_ARG(int64_t, nhead);
  GRAFT_ARG(int64_t, dim_feedforward) = 2048;
  GRAFT_ARG(double, dropout) = 0.1;
  GRAFT_ARG(std::string, activation) = "relu";
  GRAFT_ARG(double, layer_norm_eps) = 1e-5;
  GRAFT_ARG(bool, batch_first) = false;
  GRAFT_ARG(bool, norm_first) = false;
};

/// Self-attention then a feed-forward block, each with dropout and a residual connection:
///   post-norm: x = norm1(x + sa(x)); x = norm2(x + ff(x))
///   pre-norm:  x = x + sa(norm1(x)); x = x + ff(norm2(x))
/// with sa(x) = dropout1(self_attn(x, x, x)) and
/// ff(x) = dropout2(linear2(dropout(activation(linear1(x))))).
class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  /// src [S, N, E] ([N, S, E] with batch_first, or [S, E]); src_mask [S, S] or
  /// [N * nhead, S, S]; src_key_padding_mask [N, S]; is_causal as in MultiheadAttention.
  Tensor forward(const Tensor& src, const Tensor& src_mask = Tensor(), const Tensor& src_key_padding_mask = Tensor(),
                 bool is_causal = false);
  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
  Dropout dropout1{nullptr}, dropout2{nullptr};
};
GRAFT_MODULE(TransformerEncoderLayer);

/// The float causal mask [sz, sz]: 0 on and below the diagonal, -inf above
/// (nn.Transformer.generate_square_subsequent_mask).
Tensor generate_square_subsequent_mask(int64_t sz, DType dtype = kFloat32);

}  // namespace graft::nn
