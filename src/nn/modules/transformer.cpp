// MultiheadAttention (PyTorch's multi_head_attention_forward for kdim = vdim = embed_dim)
// and TransformerEncoderLayer (post-norm and pre-norm).
#include "graft/nn/modules/transformer.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "graft/autograd/autograd.h"
#include "graft/nn/init.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

namespace {

std::string torch_size(IntArrayRef s) {  // torch.Size([2, 3])
  std::ostringstream os;
  os << "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "])";
  return os.str();
}

std::string tuple_str(IntArrayRef s) {  // (2, 3)
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

Tensor find_param(const OrderedDict<std::string, Tensor>& params, const std::string& name) {
  const Tensor* t = params.find(name);
  return t ? *t : Tensor();
}

// PyTorch's _canonical_mask: bool masks become 0 / -inf of `dtype`; float masks pass through.
void check_mask_dtype(const Tensor& mask, const char* name) {
  if (!mask.defined()) return;
  GRAFT_CHECK(mask.dtype() == kBool || mask.is_floating_point(), TypeError, "only bool and floating types of ", name,
              " are supported");
}
Tensor canonical_mask(const Tensor& mask, DType dtype) {
  if (!mask.defined() || mask.dtype() != kBool) return mask;
  return zeros_like(mask, TensorOptions(dtype)).masked_fill(mask, -std::numeric_limits<double>::infinity());
}

// PyTorch's _mha_shape_check; returns whether the inputs are batched.
bool mha_shape_check(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& kpm,
                     const Tensor& attn_mask, int64_t num_heads) {
  const bool batched = query.dim() == 3;
  if (!batched)
    GRAFT_CHECK(query.dim() == 2, ValueError, "query should be unbatched 2D or batched 3D tensor but received ",
                query.dim(), "-D query tensor");
  const int64_t dim = query.dim();
  const char* const for_query = batched ? "For batched (3-D) `query`" : "For unbatched (2-D) `query`";
  GRAFT_CHECK(key.dim() == dim && value.dim() == dim, ValueError, for_query, ", expected `key` and `value` to be ", dim,
              "-D but found ", key.dim(), "-D and ", value.dim(), "-D tensors respectively");
  if (kpm.defined())
    GRAFT_CHECK(kpm.dim() == dim - 1, ValueError, for_query, ", expected `key_padding_mask` to be `None` or ", dim - 1,
                "-D but found ", kpm.dim(), "-D tensor instead");
  if (attn_mask.defined()) {
    GRAFT_CHECK(attn_mask.dim() == 2 || attn_mask.dim() == 3, ValueError, for_query,
                ", expected `attn_mask` to be `None`, 2-D or 3-D but found ", attn_mask.dim(), "-D tensor instead");
    if (!batched && attn_mask.dim() == 3) {
      const std::vector<int64_t> expected = {num_heads, query.size(0), key.size(0)};
      GRAFT_CHECK(attn_mask.sizes().equals(IntArrayRef(expected)), ValueError, "Expected `attn_mask` shape to be ",
                  tuple_str(expected), " but got ", torch_size(attn_mask.sizes()));
    }
  }
  return batched;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// MultiheadAttention

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), options(o) {
  const int64_t E = o.embed_dim(), H = o.num_heads();
  GRAFT_CHECK(E > 0 && H > 0, ValueError, "embed_dim and num_heads must be greater than 0, got embed_dim=", E,
              " and num_heads=", H, " instead");
  head_dim = E / H;
  GRAFT_CHECK(head_dim * H == E, ValueError, "embed_dim must be divisible by num_heads");
  GRAFT_CHECK(o.dropout() >= 0.0 && o.dropout() <= 1.0, ValueError,
              "dropout probability has to be between 0 and 1, but got ", o.dropout());
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())).ptr());
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  const auto params = named_parameters(/*recurse=*/true);
  init::xavier_uniform_(params["in_proj_weight"]);
  if (options.bias()) {
    init::zeros_(params["in_proj_bias"]);
    init::zeros_(params["out_proj.bias"]);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query_in, const Tensor& key_in,
                                                           const Tensor& value_in, const Tensor& key_padding_mask,
                                                           bool need_weights, const Tensor& attn_mask_in,
                                                           bool average_attn_weights, bool is_causal) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  // ---- checks (PyTorch's order: mask dtypes, shapes, causal hint, embedding dims) ----
  check_mask_dtype(key_padding_mask, "key_padding_mask");
  check_mask_dtype(attn_mask_in, "attn_mask");
  const bool batched = mha_shape_check(query_in, key_in, value_in, key_padding_mask, attn_mask_in, H);
  GRAFT_CHECK(!is_causal || attn_mask_in.defined(), RuntimeError,
              "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
              "`generate_square_subsequent_mask` to create this mask.");
  GRAFT_CHECK(query_in.size(-1) == E, ValueError, "was expecting embedding dimension of ", E, ", but got ",
              query_in.size(-1));
  GRAFT_CHECK(key_in.sizes().equals(value_in.sizes()), ValueError, "key shape ", torch_size(key_in.sizes()),
              " does not match value shape ", torch_size(value_in.sizes()));
  GRAFT_CHECK(key_in.size(-1) == E, ValueError, "MultiheadAttention: expected key and value with embedding dimension ",
              E, ", but got ", torch_size(key_in.sizes()));
  if (key_padding_mask.defined() && attn_mask_in.defined() && key_padding_mask.dtype() != attn_mask_in.dtype())
    autograd::warn(
        "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both instead.");

  // ---- to [L, N, E] ----
  Tensor query = query_in, key = key_in, value = value_in, kpm = key_padding_mask;
  if (options.batch_first() && batched) {
    query = query.transpose(1, 0);
    key = key.transpose(1, 0);
    value = value.transpose(1, 0);
  }
  if (!batched) {
    query = query.unsqueeze(1);
    key = key.unsqueeze(1);
    value = value.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  }
  const int64_t L = query.size(0), N = query.size(1), S = key.size(0);
  GRAFT_CHECK(key.size(1) == N, ValueError, "MultiheadAttention: query batch size ", N,
              " does not match key and value batch size ", key.size(1));
  const DType dtype = query.dtype();
  kpm = canonical_mask(kpm, dtype);
  Tensor attn_mask;
  if (is_causal && !kpm.defined() && !need_weights) {
    attn_mask = Tensor();  // the hint goes to scaled_dot_product_attention as is_causal
  } else {
    attn_mask = canonical_mask(attn_mask_in, dtype);
    if (kpm.defined()) is_causal = false;  // the merged mask is no longer causal
  }
  if (attn_mask.defined()) {
    if (attn_mask.dim() == 2) {
      const std::vector<int64_t> want = {L, S};
      GRAFT_CHECK(attn_mask.sizes().equals(IntArrayRef(want)), RuntimeError, "The shape of the 2D attn_mask is ",
                  torch_size(attn_mask.sizes()), ", but should be ", tuple_str(want), ".");
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      const std::vector<int64_t> want = {N * H, L, S};
      GRAFT_CHECK(attn_mask.sizes().equals(IntArrayRef(want)), RuntimeError, "The shape of the 3D attn_mask is ",
                  torch_size(attn_mask.sizes()), ", but should be ", tuple_str(want), ".");
    }
  }
  if (kpm.defined()) {
    GRAFT_CHECK(kpm.size(0) == N, ValueError, "Expected key_padded_mask.shape[0] to be ", N, ", but got ", kpm.size(0));
    GRAFT_CHECK(kpm.size(1) == S, ValueError, "Expected key_padded_mask.shape[1] to be ", S, ", but got ", kpm.size(1));
  }

  // ---- projections ----
  const auto params = named_parameters(/*recurse=*/true);
  const std::vector<Tensor> w = params["in_proj_weight"].chunk(3, 0);
  const Tensor in_bias = find_param(params, "in_proj_bias");
  std::vector<Tensor> b(3);
  if (in_bias.defined()) b = in_bias.chunk(3, 0);
  // [L, N, E] -> [N * H, L, head_dim]
  Tensor q = linear(query, w[0], b[0]).reshape({L, N * H, head_dim}).transpose(0, 1);
  Tensor k = linear(key, w[1], b[1]).reshape({S, N * H, head_dim}).transpose(0, 1);
  Tensor v = linear(value, w[2], b[2]).reshape({S, N * H, head_dim}).transpose(0, 1);

  if (kpm.defined()) {
    Tensor m = kpm.reshape({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    attn_mask = attn_mask.defined() ? attn_mask + m : m;
  }
  const double p = is_training() ? options.dropout() : 0.0;
  const Tensor out_w = params["out_proj.weight"], out_b = find_param(params, "out_proj.bias");

  Tensor output, weights;
  if (need_weights) {
    Tensor scores = bmm(q * std::sqrt(1.0 / static_cast<double>(head_dim)), k.transpose(-2, -1));  // [N*H, L, S]
    if (attn_mask.defined()) scores = scores + attn_mask;
    weights = softmax(scores, -1);
    if (p > 0.0) weights = graft::dropout(weights, p, true);
    output = bmm(weights, v).transpose(0, 1).reshape({L * N, E});  // [L, N*H, hd] -> [L*N, E]
    weights = weights.reshape({N, H, L, S});
    if (average_attn_weights) weights = weights.mean({1});
  } else {
    if (attn_mask.defined())
      attn_mask = attn_mask.size(0) == 1 ? attn_mask.unsqueeze(0) : attn_mask.reshape({N, H, attn_mask.size(1), S});
    Tensor o = scaled_dot_product_attention(q.reshape({N, H, L, head_dim}), k.reshape({N, H, S, head_dim}),
                                            v.reshape({N, H, S, head_dim}), attn_mask, p, is_causal);
    output = o.permute({2, 0, 1, 3}).reshape({L * N, E});  // [N, H, L, hd] -> [L, N, H, hd]
  }
  output = linear(output, out_w, out_b).reshape({L, N, E});
  if (!batched) {
    output = output.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  } else if (options.batch_first()) {
    output = output.transpose(1, 0);
  }
  return {output, weights};
}

// ---------------------------------------------------------------------------------------
// TransformerEncoderLayer

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  GRAFT_CHECK(o.activation() == "relu" || o.activation() == "gelu", RuntimeError,
              "activation should be relu/gelu, not ", o.activation());
  self_attn = register_module(
      "self_attn",
      MultiheadAttention(
          MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(o.batch_first()))
          .ptr());
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()).ptr());
  dropout = register_module("dropout", Dropout(o.dropout()).ptr());
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()).ptr());
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())).ptr());
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())).ptr());
  dropout1 = register_module("dropout1", Dropout(o.dropout()).ptr());
  dropout2 = register_module("dropout2", Dropout(o.dropout()).ptr());
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  auto sa = [&](const Tensor& x) {
    Tensor y = std::get<0>(self_attn->forward(x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask,
                                              /*average_attn_weights=*/true, is_causal));
    return dropout1->forward(y);
  };
  auto ff = [&](const Tensor& x) {
    Tensor h = linear1->forward(x);
    h = options.activation() == "gelu" ? gelu(h) : relu(h);
    return dropout2->forward(linear2->forward(dropout->forward(h)));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    x = x + ff(norm2->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ff(x));
  }
  return x;
}

Tensor generate_square_subsequent_mask(int64_t sz, DType dtype) {
  GRAFT_CHECK(sz >= 0, ValueError, "generate_square_subsequent_mask: sz must be non-negative, got ", sz);
  GRAFT_CHECK(is_floating_point(dtype), TypeError, "generate_square_subsequent_mask: expected a floating dtype, got ",
              dtype);
  const TensorOptions on(default_device());
  Tensor i = arange(0, sz, 1, on).unsqueeze(1), j = arange(0, sz, 1, on).unsqueeze(0);
  return zeros({sz, sz}, TensorOptions(dtype)).masked_fill(gt(j, i), -std::numeric_limits<double>::infinity());
}

}  // namespace graft::nn
