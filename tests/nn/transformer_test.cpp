// MultiheadAttention and TransformerEncoderLayer: PyTorch's parameter names, shapes and init;
// attention output and weights against a scalar double-precision reference built from
// in_proj / out_proj (key_padding_mask, bool and float attn_mask, per-head 3-D masks);
// batch_first / unbatched consistency; dropout only in training; gradcheck; the encoder layer
// (post-norm and pre-norm) against the composition of its submodules; PyTorch's error texts.
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "support/test_util.h"

namespace graft {
namespace {

using testing::expect_tensor;
using testing::values;
using Vec = std::vector<double>;
const double kInf = std::numeric_limits<double>::infinity();

void fill_params(nn::Module& m, double scale = 0.5) {
  NoGradGuard ng;
  int64_t idx = 0;
  for (auto& it : m.named_parameters()) {
    Tensor p = it.value();
    Vec v(static_cast<size_t>(p.numel()));
    for (size_t k = 0; k < v.size(); ++k) v[k] = scale * std::sin(1.3 * static_cast<double>(k) + 0.7 * idx + 0.2);
    p.copy_(tensor(v, TensorOptions(p.dtype())).reshape(p.sizes()));
    ++idx;
  }
}

Tensor seq(std::vector<int64_t> sizes, double phase, DType dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Vec v(static_cast<size_t>(n));
  for (size_t k = 0; k < v.size(); ++k) v[k] = std::sin(0.41 * static_cast<double>(k) + phase);
  return tensor(v, TensorOptions(dtype)).reshape(sizes);
}

// ---- reference multi-head attention, scalar loops in double ----

// Additive mask value for (batch n, head h, query l, key s); -inf forbids.
using MaskFn = std::function<double(int64_t, int64_t, int64_t, int64_t)>;
struct MhaRef {
  Vec out;      // [L, N, E]
  Vec weights;  // [N, H, L, S]
};

MhaRef ref_mha(const nn::Module& m, int64_t E, int64_t H, const Tensor& q, const Tensor& k, const Tensor& v,
               const MaskFn& mask = nullptr) {
  std::map<std::string, Vec> P;
  for (const auto& it : m.named_parameters()) P[it.key()] = values(it.value());
  const Vec& W = P.at("in_proj_weight");
  const Vec& Wo = P.at("out_proj.weight");
  const bool bias = P.count("in_proj_bias") > 0;
  const Vec qv = values(q), kv = values(k), vv = values(v);
  const int64_t L = q.size(0), N = q.size(1), S = k.size(0), hd = E / H;
  // rows [r0, r0 + E) of W times x (+ bias)
  auto proj = [&](int64_t r0, const Vec& x, int64_t off) {
    Vec y(E);
    for (int64_t r = 0; r < E; ++r) {
      double s = bias ? P.at("in_proj_bias")[r0 + r] : 0.0;
      for (int64_t c = 0; c < E; ++c) s += W[(r0 + r) * E + c] * x[off + c];
      y[r] = s;
    }
    return y;
  };
  MhaRef r;
  r.out.assign(L * N * E, 0.0);
  r.weights.assign(N * H * L * S, 0.0);
  for (int64_t n = 0; n < N; ++n) {
    std::vector<Vec> Q, K, V;
    for (int64_t l = 0; l < L; ++l) Q.push_back(proj(0, qv, (l * N + n) * E));
    for (int64_t s = 0; s < S; ++s) K.push_back(proj(E, kv, (s * N + n) * E));
    for (int64_t s = 0; s < S; ++s) V.push_back(proj(2 * E, vv, (s * N + n) * E));
    for (int64_t l = 0; l < L; ++l) {
      Vec o(E, 0.0);
      for (int64_t h = 0; h < H; ++h) {
        Vec sc(S);
        double mx = -kInf;
        for (int64_t s = 0; s < S; ++s) {
          double dot = 0;
          for (int64_t j = 0; j < hd; ++j) dot += Q[l][h * hd + j] * K[s][h * hd + j];
          sc[s] = dot / std::sqrt(static_cast<double>(hd)) + (mask ? mask(n, h, l, s) : 0.0);
          mx = std::max(mx, sc[s]);
        }
        double z = 0;
        for (double& x : sc) z += (x = std::exp(x - mx));
        for (int64_t s = 0; s < S; ++s) {
          const double w = sc[s] / z;
          r.weights[((n * H + h) * L + l) * S + s] = w;
          for (int64_t j = 0; j < hd; ++j) o[h * hd + j] += w * V[s][h * hd + j];
        }
      }
      for (int64_t e = 0; e < E; ++e) {
        double s = P.count("out_proj.bias") ? P.at("out_proj.bias")[e] : 0.0;
        for (int64_t c = 0; c < E; ++c) s += Wo[e * E + c] * o[c];
        r.out[(l * N + n) * E + e] = s;
      }
    }
  }
  return r;
}

Vec head_average(const Vec& w, int64_t N, int64_t H, int64_t L, int64_t S) {
  Vec out(N * L * S, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L * S; ++i) out[n * L * S + i] += w[(n * H + h) * L * S + i] / static_cast<double>(H);
  return out;
}

using NS = std::vector<std::pair<std::string, std::vector<int64_t>>>;
NS names_and_shapes(const nn::Module& m) {
  NS out;
  for (const auto& it : m.named_parameters()) out.push_back({it.key(), it.value().sizes().vec()});
  return out;
}

// ---- MultiheadAttention: parameters ----

TEST(MultiheadAttentionParameters, NamesShapesAndInit) {
  manual_seed(0);
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(
      names_and_shapes(*mha),
      (NS{{"in_proj_weight", {24, 8}}, {"in_proj_bias", {24}}, {"out_proj.weight", {8, 8}}, {"out_proj.bias", {8}}}));
  EXPECT_EQ(mha->head_dim, 4);
  auto p = mha->named_parameters();
  // xavier_uniform_ on [3E, E]: bound sqrt(6 / (E + 3E))
  const double xb = std::sqrt(6.0 / 32.0);
  auto w = values(p["in_proj_weight"]);
  EXPECT_LE(*std::max_element(w.begin(), w.end()), xb);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -xb);
  EXPECT_GT(*std::max_element(w.begin(), w.end()), 0.7 * xb);  // 192 draws fill the range
  EXPECT_LT(*std::min_element(w.begin(), w.end()), -0.7 * xb);
  // biases zero; out_proj.weight keeps Linear's U(-1/sqrt(E), 1/sqrt(E))
  for (double b : values(p["in_proj_bias"])) EXPECT_EQ(b, 0.0);
  for (double b : values(p["out_proj.bias"])) EXPECT_EQ(b, 0.0);
  auto ow = values(p["out_proj.weight"]);
  EXPECT_LE(*std::max_element(ow.begin(), ow.end()), 1.0 / std::sqrt(8.0));
  EXPECT_GT(*std::max_element(ow.begin(), ow.end()), 0.0);
  EXPECT_TRUE(mha->in_proj_weight.is_same(p["in_proj_weight"]));
  EXPECT_TRUE(mha->out_proj->weight.is_same(p["out_proj.weight"]));

  nn::MultiheadAttention nob(nn::MultiheadAttentionOptions(4, 4).bias(false));
  EXPECT_EQ(names_and_shapes(*nob), (NS{{"in_proj_weight", {12, 4}}, {"out_proj.weight", {4, 4}}}));
  EXPECT_EQ(nob->head_dim, 1);
}

TEST(MultiheadAttentionParameters, ConstructorErrors) {
  EXPECT_THROW_MSG(nn::MultiheadAttention(6, 4), ValueError, "embed_dim must be divisible by num_heads");
  EXPECT_THROW_MSG(nn::MultiheadAttention(0, 2), ValueError,
                   "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=2 instead");
  EXPECT_THROW_MSG(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).dropout(1.5)), ValueError,
                   "dropout probability has to be between 0 and 1, but got 1.5");
}

// ---- MultiheadAttention: values ----

struct MhaFixture {
  static constexpr int64_t E = 4, H = 2, L = 3, S = 4, N = 2;
  nn::MultiheadAttention mha{E, H};
  Tensor q = seq({L, N, E}, 0.1), k = seq({S, N, E}, 1.2), v = seq({S, N, E}, 2.3);
  MhaFixture() { fill_params(*mha); }
};

void expect_mha(MhaFixture& f, const Tensor& kpm, const Tensor& mask, const MaskFn& ref_mask) {
  const int64_t E = f.E, H = f.H, L = f.L, S = f.S, N = f.N;
  MhaRef ref = ref_mha(*f.mha, E, H, f.q, f.k, f.v, ref_mask);
  auto [out, w] = f.mha(f.q, f.k, f.v, kpm, true, mask);
  expect_tensor(out, {L, N, E}, ref.out, 1e-5);
  expect_tensor(w, {N, L, S}, head_average(ref.weights, N, H, L, S), 1e-5);
  auto [out_h, w_h] = f.mha(f.q, f.k, f.v, kpm, true, mask, /*average_attn_weights=*/false);
  expect_tensor(w_h, {N, H, L, S}, ref.weights, 1e-5);
  auto [out_nw, none] = f.mha(f.q, f.k, f.v, kpm, /*need_weights=*/false, mask);
  EXPECT_FALSE(none.defined());
  expect_tensor(out_nw, {L, N, E}, ref.out, 1e-5);  // the scaled_dot_product_attention path
}

TEST(MultiheadAttentionForward, NoMask) {
  MhaFixture f;
  expect_mha(f, Tensor(), Tensor(), nullptr);
}

TEST(MultiheadAttentionForward, BoolKeyPaddingMask) {
  MhaFixture f;
  // batch 0 ignores key 3, batch 1 ignores keys 0 and 2
  Tensor kpm = tensor(std::vector<double>{0, 0, 0, 1, 1, 0, 1, 0}).reshape({2, 4}).ne(0.0);
  auto ref = [](int64_t n, int64_t, int64_t, int64_t s) {
    return (n == 0 && s == 3) || (n == 1 && (s == 0 || s == 2)) ? -kInf : 0.0;
  };
  expect_mha(f, kpm, Tensor(), ref);
  // the masked keys get exactly zero weight
  auto [out, w] = f.mha(f.q, f.k, f.v, kpm);
  EXPECT_EQ(values(w.select(0, 1).select(1, 0))[0], 0.0);
}

TEST(MultiheadAttentionForward, BoolAttnMaskTrueMeansNotAllowed) {
  MhaFixture f;
  // query l may not attend key s when (l + s) % 3 == 0
  Vec m;
  for (int64_t l = 0; l < 3; ++l)
    for (int64_t s = 0; s < 4; ++s) m.push_back((l + s) % 3 == 0 ? 1 : 0);
  Tensor mask = tensor(m).reshape({3, 4}).ne(0.0);
  expect_mha(f, Tensor(), mask, [](int64_t, int64_t, int64_t l, int64_t s) { return (l + s) % 3 == 0 ? -kInf : 0.0; });
}

TEST(MultiheadAttentionForward, FloatMasksAreAdded) {
  MhaFixture f;
  Tensor mask = seq({3, 4}, 0.5).mul(2.0);  // [L, S]
  Tensor kpm = seq({2, 4}, 1.5);            // [N, S], float too
  const Vec mv = values(mask), kv = values(kpm);
  expect_mha(f, kpm, mask, [&](int64_t n, int64_t, int64_t l, int64_t s) { return mv[l * 4 + s] + kv[n * 4 + s]; });
}

TEST(MultiheadAttentionForward, PerHeadThreeDimensionalMask) {
  MhaFixture f;
  Tensor mask = seq({4, 3, 4}, 0.9).mul(3.0);  // [N * H, L, S]
  Tensor kpm = tensor(std::vector<double>{1, 0, 0, 0, 0, 0, 0, 1}).reshape({2, 4}).ne(0.0);
  const Vec mv = values(mask);
  // mixed bool / float masks still work (with PyTorch's deprecation warning)
  testing::WarningCapture w;
  expect_mha(f, kpm, mask, [&](int64_t n, int64_t h, int64_t l, int64_t s) {
    const bool padded = (n == 0 && s == 0) || (n == 1 && s == 3);
    return padded ? -kInf : mv[((n * 2 + h) * 3 + l) * 4 + s];
  });
  ASSERT_FALSE(w.messages().empty());
  EXPECT_EQ(w.messages()[0],
            "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both instead.");
}

TEST(MultiheadAttentionForward, NoBias) {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).bias(false));
  fill_params(*mha);
  Tensor q = seq({2, 3, 4}, 0.3);
  MhaRef ref = ref_mha(*mha, 4, 2, q, q, q);
  expect_tensor(std::get<0>(mha(q, q, q)), {2, 3, 4}, ref.out, 1e-5);
}

TEST(MultiheadAttentionForward, CausalHint) {
  MhaFixture f;
  Tensor x = seq({4, 2, 4}, 0.6);
  Tensor causal = nn::generate_square_subsequent_mask(4);
  MhaRef ref =
      ref_mha(*f.mha, 4, 2, x, x, x, [](int64_t, int64_t, int64_t l, int64_t s) { return s > l ? -kInf : 0.0; });
  // need_weights=false + is_causal: the hint goes to scaled_dot_product_attention
  expect_tensor(std::get<0>(f.mha(x, x, x, Tensor(), false, causal, true, true)), {4, 2, 4}, ref.out, 1e-5);
  // with weights, the mask itself is used
  auto [out, w] = f.mha(x, x, x, Tensor(), true, causal, true, true);
  expect_tensor(out, {4, 2, 4}, ref.out, 1e-5);
  expect_tensor(w, {2, 4, 4}, head_average(ref.weights, 2, 2, 4, 4), 1e-5);
  EXPECT_THROW_MSG(f.mha(x, x, x, Tensor(), false, Tensor(), true, true), RuntimeError,
                   "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                   "`generate_square_subsequent_mask` to create this mask.");
}

TEST(MultiheadAttentionForward, BatchFirstAndUnbatched) {
  MhaFixture f;
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(4, 2).batch_first(true));
  bf->load_state_dict(f.mha->state_dict());
  Tensor kpm = tensor(std::vector<double>{0, 1, 0, 0, 0, 0, 0, 1}).reshape({2, 4}).ne(0.0);
  auto [o1, w1] = f.mha(f.q, f.k, f.v, kpm);
  auto [o2, w2] = bf(f.q.transpose(0, 1), f.k.transpose(0, 1), f.v.transpose(0, 1), kpm);
  EXPECT_EQ(o2.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(allclose(o2.transpose(0, 1), o1, 0, 1e-6));
  EXPECT_TRUE(allclose(w2, w1, 0, 1e-6));
  // unbatched [L, E] == batch of one (batch_first is ignored)
  for (auto* m : {&f.mha, &bf}) {
    auto [ou, wu] = (*m)(f.q.select(1, 1), f.k.select(1, 1), f.v.select(1, 1), kpm[1], true, Tensor(), false);
    EXPECT_EQ(ou.sizes().vec(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(wu.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
    EXPECT_TRUE(allclose(ou, o1.select(1, 1), 0, 1e-6));
  }
  // an unbatched 3-D mask is [num_heads, L, S]
  Tensor m3 = seq({2, 3, 4}, 0.2);
  auto [ou3, wu3] = f.mha(f.q.select(1, 0), f.k.select(1, 0), f.v.select(1, 0), Tensor(), true, m3);
  auto [ob3, wb3] = f.mha(f.q.narrow(1, 0, 1), f.k.narrow(1, 0, 1), f.v.narrow(1, 0, 1), Tensor(), true, m3);
  EXPECT_TRUE(allclose(ou3, ob3.squeeze(1), 0, 1e-6));
  EXPECT_TRUE(allclose(wu3, wb3.squeeze(0), 0, 1e-6));
}

TEST(MultiheadAttentionForward, DropoutOnlyInTraining) {
  MhaFixture f;
  nn::MultiheadAttention drop(nn::MultiheadAttentionOptions(4, 2).dropout(1.0));
  drop->load_state_dict(f.mha->state_dict());
  MhaRef ref = ref_mha(*f.mha, 4, 2, f.q, f.k, f.v);
  drop->eval();
  expect_tensor(std::get<0>(drop(f.q, f.k, f.v)), {3, 2, 4}, ref.out, 1e-5);
  // training with p = 1: every attention weight is dropped, the output is out_proj.bias
  drop->train();
  const Vec ob = values(drop->named_parameters()["out_proj.bias"]);
  Vec expect;
  for (int i = 0; i < 6; ++i) expect.insert(expect.end(), ob.begin(), ob.end());
  for (bool need_weights : {true, false}) {
    auto [out, w] = drop(f.q, f.k, f.v, Tensor(), need_weights);
    expect_tensor(out, {3, 2, 4}, expect, 1e-6);
    if (need_weights) expect_tensor(w, {2, 3, 4}, Vec(24, 0.0), 0.0);
  }
}

TEST(MultiheadAttentionGradients, Gradcheck) {
  nn::MultiheadAttention mha(4, 2);
  fill_params(*mha);
  mha->to(kFloat64);
  Tensor q = seq({2, 2, 4}, 0.1, kFloat64).requires_grad_();
  Tensor k = seq({3, 2, 4}, 1.1, kFloat64).requires_grad_();
  Tensor v = seq({3, 2, 4}, 2.1, kFloat64).requires_grad_();
  Tensor kpm = tensor(std::vector<double>{0, 0, 1, 1, 0, 0}).reshape({2, 3}).ne(0.0);
  Tensor bool_mask = tensor(std::vector<double>{0, 1, 0, 0, 0, 0}).reshape({2, 3}).ne(0.0);
  Tensor float_mask = seq({2, 3}, 0.4, kFloat64);
  TensorList in = {q, k, v};
  for (const auto& p : mha->parameters()) in.push_back(p);
  EXPECT_TRUE(autograd::gradcheck(
      [&](const TensorList& t) -> TensorList {
        auto [out, w] = mha(t[0], t[1], t[2], kpm, true, bool_mask, false);
        return {out, w};
      },
      in));
  EXPECT_TRUE(autograd::gradcheck(
      [&](const TensorList& t) -> TensorList {
        return {std::get<0>(mha(t[0], t[1], t[2], Tensor(), false, float_mask))};
      },
      in));
}

TEST(MultiheadAttentionErrors, Messages) {
  MhaFixture f;
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, Tensor(), true, zeros({3, 3})), RuntimeError,
                   "The shape of the 2D attn_mask is torch.Size([3, 3]), but should be (3, 4).");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, Tensor(), true, zeros({2, 3, 4})), RuntimeError,
                   "The shape of the 3D attn_mask is torch.Size([2, 3, 4]), but should be (4, 3, 4).");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, Tensor(), true, zeros({1, 4, 3, 4})), ValueError,
                   "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found 4-D tensor "
                   "instead");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, zeros({2, 3})), ValueError,
                   "Expected key_padded_mask.shape[1] to be 4, but got 3");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, zeros({3, 4})), ValueError,
                   "Expected key_padded_mask.shape[0] to be 2, but got 3");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, zeros({4})), ValueError,
                   "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found 1-D tensor "
                   "instead");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, Tensor(), true, zeros({3, 4}, kInt64)), TypeError,
                   "only bool and floating types of attn_mask are supported");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, f.v, zeros({2, 4}, kInt64)), TypeError,
                   "only bool and floating types of key_padding_mask are supported");
  EXPECT_THROW_MSG(f.mha(zeros({1, 3, 2, 4}), f.k, f.v), ValueError,
                   "query should be unbatched 2D or batched 3D tensor but received 4-D query tensor");
  EXPECT_THROW_MSG(f.mha(f.q, f.k.select(1, 0), f.v), ValueError,
                   "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 3-D tensors "
                   "respectively");
  EXPECT_THROW_MSG(f.mha(f.q.select(1, 0), f.k, f.v), ValueError,
                   "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found 3-D and 3-D tensors "
                   "respectively");
  EXPECT_THROW_MSG(f.mha(f.q.select(1, 0), f.k.select(1, 0), f.v.select(1, 0), Tensor(), true, zeros({3, 3, 4})),
                   ValueError, "Expected `attn_mask` shape to be (2, 3, 4) but got torch.Size([3, 3, 4])");
  EXPECT_THROW_MSG(f.mha(zeros({3, 2, 6}), f.k, f.v), ValueError, "was expecting embedding dimension of 4, but got 6");
  EXPECT_THROW_MSG(f.mha(f.q, f.k, zeros({5, 2, 4})), ValueError,
                   "key shape torch.Size([4, 2, 4]) does not match value shape torch.Size([5, 2, 4])");
}

// ---- TransformerEncoderLayer ----

TEST(TransformerEncoderLayerStructure, SubmodulesAndParametersAsPyTorch) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  std::vector<std::string> children;
  for (const auto& it : layer->named_children()) children.push_back(it.key());
  EXPECT_EQ(children, (std::vector<std::string>{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                                                "dropout1", "dropout2"}));
  EXPECT_EQ(names_and_shapes(*layer), (NS{{"self_attn.in_proj_weight", {24, 8}},
                                          {"self_attn.in_proj_bias", {24}},
                                          {"self_attn.out_proj.weight", {8, 8}},
                                          {"self_attn.out_proj.bias", {8}},
                                          {"linear1.weight", {16, 8}},
                                          {"linear1.bias", {16}},
                                          {"linear2.weight", {8, 16}},
                                          {"linear2.bias", {8}},
                                          {"norm1.weight", {8}},
                                          {"norm1.bias", {8}},
                                          {"norm2.weight", {8}},
                                          {"norm2.bias", {8}}}));
  EXPECT_EQ(layer->dropout->p, 0.1);
  EXPECT_EQ(layer->dropout1->p, 0.1);
  EXPECT_EQ(layer->dropout2->p, 0.1);
  EXPECT_EQ(layer->norm1->options.eps(), 1e-5);
  EXPECT_EQ(layer->self_attn->options.num_heads(), 2);
  nn::TransformerEncoderLayer dflt(4, 1);
  EXPECT_EQ(dflt->linear1->weight.sizes().vec(), (std::vector<int64_t>{2048, 4}));  // dim_feedforward 2048
}

// The layer computed from its parts: self_attn's output, linear / activation / layer_norm
// with the layer's parameters, no dropout (eval).
Tensor compose(nn::TransformerEncoderLayer& layer, const Tensor& x, const Tensor& mask, const Tensor& kpm) {
  const auto& o = layer->options;
  auto P = layer->named_parameters();
  auto sa = [&](const Tensor& y) { return std::get<0>(layer->self_attn->forward(y, y, y, kpm, false, mask)); };
  auto ff = [&](const Tensor& y) {
    Tensor h = linear(y, P["linear1.weight"], P["linear1.bias"]);
    h = o.activation() == "gelu" ? gelu(h) : relu(h);
    return linear(h, P["linear2.weight"], P["linear2.bias"]);
  };
  auto n1 = [&](const Tensor& y) {
    return layer_norm(y, {o.d_model()}, P["norm1.weight"], P["norm1.bias"], o.layer_norm_eps());
  };
  auto n2 = [&](const Tensor& y) {
    return layer_norm(y, {o.d_model()}, P["norm2.weight"], P["norm2.bias"], o.layer_norm_eps());
  };
  if (o.norm_first()) {
    Tensor y = x + sa(n1(x));
    return y + ff(n2(y));
  }
  Tensor y = n1(x + sa(x));
  return n2(y + ff(y));
}

TEST(TransformerEncoderLayerForward, EvalEqualsCompositionPostAndPreNorm) {
  Tensor x = seq({5, 2, 4}, 0.3);
  Tensor mask = nn::generate_square_subsequent_mask(5);
  Tensor kpm = tensor(std::vector<double>{0, 0, 0, 0, 1, 0, 0, 1, 1, 0}).reshape({2, 5}).ne(0.0);
  testing::WarningCapture warnings;  // float src_mask with bool padding mask: PyTorch's deprecation warning
  for (bool norm_first : {false, true}) {
    for (const std::string act : {"relu", "gelu"}) {
      SCOPED_TRACE(std::string(norm_first ? "pre-norm " : "post-norm ") + act);
      nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2)
                                            .dim_feedforward(6)
                                            .dropout(0.5)
                                            .activation(act)
                                            .norm_first(norm_first)
                                            .layer_norm_eps(1e-3));
      fill_params(*layer);
      layer->eval();
      Tensor plain = layer(x);
      EXPECT_TRUE(allclose(plain, compose(layer, x, Tensor(), Tensor()), 0, 1e-6));
      Tensor masked = layer(x, mask, kpm);
      EXPECT_TRUE(allclose(masked, compose(layer, x, mask, kpm), 0, 1e-6));
      EXPECT_FALSE(allclose(masked, plain, 0, 1e-3));  // the masks matter
      EXPECT_TRUE(allclose(layer(x, mask, Tensor(), /*is_causal=*/true), compose(layer, x, mask, Tensor()), 0, 1e-6));
      // the result differs from the other norm placement (norm_first is honoured)
      nn::TransformerEncoderLayer other(nn::TransformerEncoderLayerOptions(4, 2)
                                            .dim_feedforward(6)
                                            .activation(act)
                                            .norm_first(!norm_first)
                                            .layer_norm_eps(1e-3));
      other->load_state_dict(layer->state_dict());
      other->eval();
      EXPECT_FALSE(allclose(other(x), plain, 0, 1e-3));
    }
  }
}

TEST(TransformerEncoderLayerForward, DropoutOnlyInTraining) {
  Tensor x = seq({3, 2, 4}, 0.8);
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(1.0).norm_first(norm_first));
    fill_params(*layer);
    auto P = layer->named_parameters();
    auto n = [&](const char* w, const char* b, const Tensor& y) { return layer_norm(y, {4}, P[w], P[b]); };
    // training with p = 1: both residual branches vanish
    Tensor expect = norm_first ? x : n("norm2.weight", "norm2.bias", n("norm1.weight", "norm1.bias", x));
    EXPECT_TRUE(allclose(layer(x), expect, 0, 1e-6));
    layer->eval();
    EXPECT_TRUE(allclose(layer(x), compose(layer, x, Tensor(), Tensor()), 0, 1e-6));
  }
}

TEST(TransformerEncoderLayerForward, BatchFirstAndUnbatched) {
  nn::TransformerEncoderLayer a(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8));
  nn::TransformerEncoderLayer b(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).batch_first(true));
  fill_params(*a);
  b->load_state_dict(a->state_dict());
  a->eval();
  b->eval();
  Tensor x = seq({3, 2, 4}, 0.5);
  Tensor kpm = tensor(std::vector<double>{0, 1, 0, 0, 0, 1}).reshape({2, 3}).ne(0.0);
  Tensor ya = a(x, Tensor(), kpm), yb = b(x.transpose(0, 1), Tensor(), kpm);
  EXPECT_EQ(yb.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(allclose(yb.transpose(0, 1), ya, 0, 1e-6));
  Tensor yu = a(x.select(1, 1), Tensor(), kpm[1]);
  EXPECT_EQ(yu.sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(allclose(yu, ya.select(1, 1), 0, 1e-6));
}

TEST(TransformerEncoderLayerForward, BackwardReachesEveryParameter) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  fill_params(*layer);
  Tensor x = seq({3, 2, 4}, 0.5).requires_grad_();
  (layer(x) * seq({3, 2, 4}, 1.0)).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  for (const auto& it : layer->named_parameters()) {
    ASSERT_TRUE(it.value().grad().defined()) << it.key();
    EXPECT_GT(values(it.value().grad().abs().sum())[0], 0.0) << it.key();
  }
}

TEST(TransformerEncoderLayerErrors, Messages) {
  EXPECT_THROW_MSG(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2).activation("tanh")),
                   RuntimeError, "activation should be relu/gelu, not tanh");
  EXPECT_THROW_MSG(nn::TransformerEncoderLayer(6, 4), ValueError, "embed_dim must be divisible by num_heads");
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8));
  EXPECT_THROW_HAS(layer(zeros({3, 2, 4}), Tensor(), Tensor(), true), RuntimeError,
                   "Need attn_mask if specifying the is_causal hint");
  EXPECT_THROW_MSG(layer(zeros({3, 2, 4}), zeros({3, 2})), RuntimeError,
                   "The shape of the 2D attn_mask is torch.Size([3, 2]), but should be (3, 3).");
}

TEST(GenerateSquareSubsequentMask, Values) {
  Tensor m = nn::generate_square_subsequent_mask(3);
  EXPECT_EQ(m.sizes().vec(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(m.dtype(), kFloat32);
  const Vec v = values(m);
  const Vec expect = {0, -kInf, -kInf, 0, 0, -kInf, 0, 0, 0};
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], expect[i]) << i;
  EXPECT_EQ(nn::generate_square_subsequent_mask(2, kFloat64).dtype(), kFloat64);
}

}  // namespace
}  // namespace graft
