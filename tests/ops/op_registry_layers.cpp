// Registry entries: pooling, padding, dropout, embedding and attention. References are plain
// loops over the definitions (PyTorch's window and divisor rules spelled out again here).
#include <cmath>
#include <limits>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

RT zeros_rt(Shape64 sizes, DType dt = kFloat64) {
  return RT{sizes, std::vector<double>(static_cast<size_t>(numel_of(sizes)), 0.0), dt};
}
// Batched 4-D sizes of a 3-D or 4-D sample.
Shape64 as4(const Shape64& s) { return s.size() == 3 ? Shape64{1, s[0], s[1], s[2]} : s; }
RT unbatch_like(RT r, const RT& in) {
  if (in.dim() == 3) r.sizes.erase(r.sizes.begin());
  return r;
}

int64_t pool_len(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  // out = floor or ceil((in + 2p - d(k-1) - 1) / s) + 1; a last window starting in the right
  // padding is dropped.
  double q = static_cast<double>(in + 2 * p - d * (k - 1) - 1) / static_cast<double>(s);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(q) : std::floor(q)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

struct Pool {
  int64_t kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
  bool ceil_mode = false;
};

// Max over each window (padding excluded); second output: flat h*W + w of the maximum.
V max_pool_ref(const RT& x, Pool g) {
  Shape64 s = as4(x.sizes);
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  const int64_t OH = pool_len(H, g.kh, g.ph, g.sh, g.dh, g.ceil_mode),
                OW = pool_len(W, g.kw, g.pw, g.sw, g.dw, g.ceil_mode);
  RT out = zeros_rt({N, C, OH, OW}), idx = zeros_rt({N, C, OH, OW}, kInt64);
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xx = 0; xx < OW; ++xx) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t bi = -1;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t iy = y * g.sh - g.ph + i * g.dh, ix = xx * g.sw - g.pw + j * g.dw;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            double v = x.v[static_cast<size_t>(p * H * W + iy * W + ix)];
            if (bi < 0 || v > best) best = v, bi = iy * W + ix;
          }
        out.v[static_cast<size_t>((p * OH + y) * OW + xx)] = best;
        idx.v[static_cast<size_t>((p * OH + y) * OW + xx)] = static_cast<double>(bi);
      }
  return {unbatch_like(out, x), unbatch_like(idx, x)};
}

// Mean of each window; divisor: the window clipped to the padded input (count_include_pad) or
// to the input itself, or the override.
RT avg_pool_ref(const RT& x, Pool g, bool count_include_pad, int64_t divisor_override) {
  Shape64 s = as4(x.sizes);
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  const int64_t OH = pool_len(H, g.kh, g.ph, g.sh, 1, g.ceil_mode), OW = pool_len(W, g.kw, g.pw, g.sw, 1, g.ceil_mode);
  RT out = zeros_rt({N, C, OH, OW});
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xx = 0; xx < OW; ++xx) {
        int64_t y0 = y * g.sh - g.ph, x0 = xx * g.sw - g.pw;
        int64_t y1 = std::min(y0 + g.kh, H + g.ph), x1 = std::min(x0 + g.kw, W + g.pw);
        double sum = 0;
        int64_t inside = 0;
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix)
            if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
              sum += x.v[static_cast<size_t>(p * H * W + iy * W + ix)];
              ++inside;
            }
        double div = divisor_override    ? static_cast<double>(divisor_override)
                     : count_include_pad ? static_cast<double>((y1 - y0) * (x1 - x0))
                                         : static_cast<double>(inside);
        out.v[static_cast<size_t>((p * OH + y) * OW + xx)] = sum / div;
      }
  return unbatch_like(out, x);
}

RT adaptive_ref(const RT& x, int64_t oh, int64_t ow) {
  Shape64 s = as4(x.sizes);
  const int64_t NC = s[0] * s[1], H = s[2], W = s[3];
  RT out = zeros_rt({s[0], s[1], oh, ow});
  for (int64_t p = 0; p < NC; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t h0 = static_cast<int64_t>(std::floor(static_cast<double>(i * H) / oh));
        int64_t h1 = static_cast<int64_t>(std::ceil(static_cast<double>((i + 1) * H) / oh));
        int64_t w0 = static_cast<int64_t>(std::floor(static_cast<double>(j * W) / ow));
        int64_t w1 = static_cast<int64_t>(std::ceil(static_cast<double>((j + 1) * W) / ow));
        double sum = 0;
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t xx = w0; xx < w1; ++xx) sum += x.v[static_cast<size_t>(p * H * W + y * W + xx)];
        out.v[static_cast<size_t>((p * oh + i) * ow + j)] = sum / static_cast<double>((h1 - h0) * (w1 - w0));
      }
  return unbatch_like(out, x);
}

// Constant pad of the last dims; negative amounts crop.
RT pad_ref(const RT& x, Shape64 pads, double value) {
  Shape64 out_sizes = x.sizes, lo(x.sizes.size(), 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    size_t d = x.sizes.size() - 1 - i;
    out_sizes[d] += pads[2 * i] + pads[2 * i + 1];
    lo[d] = pads[2 * i];
  }
  RT out{out_sizes, std::vector<double>(static_cast<size_t>(numel_of(out_sizes)), value), kFloat64};
  for (int64_t k = 0; k < out.numel(); ++k) {
    Shape64 idx = unravel(k, out_sizes);
    bool inside = true;
    int64_t src = 0;
    Shape64 st = contiguous_strides_of(x.sizes);
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d] - lo[d];
      if (i < 0 || i >= x.sizes[d]) inside = false;
      src += i * st[d];
    }
    if (inside) out.v[static_cast<size_t>(k)] = x.v[static_cast<size_t>(src)];
  }
  return out;
}

// softmax(q k^T * scale + mask) v for [B, L, E] x [B, S, E] x [B, S, Ev]; mask(i, j) -> bool.
RT attention_ref(const RT& q, const RT& k, const RT& v, const std::function<bool(int64_t, int64_t)>& keep,
                 const RT* add_mask) {
  const int64_t B = q.sizes[0], L = q.sizes[1], E = q.sizes[2], S = k.sizes[1], Ev = v.sizes[2];
  RT out = zeros_rt({B, L, Ev});
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += q.v[static_cast<size_t>((b * L + i) * E + e)] * k.v[static_cast<size_t>((b * S + j) * E + e)];
        dot *= scale;
        if (add_mask) dot += add_mask->v[static_cast<size_t>(i * S + j)];
        s[static_cast<size_t>(j)] = keep(i, j) ? dot : -std::numeric_limits<double>::infinity();
        mx = std::max(mx, s[static_cast<size_t>(j)]);
      }
      double z = 0;
      for (auto& x : s) z += (x = std::exp(x - mx));
      for (int64_t j = 0; j < S; ++j)
        for (int64_t e = 0; e < Ev; ++e)
          out.v[static_cast<size_t>((b * L + i) * Ev + e)] +=
              s[static_cast<size_t>(j)] / z * v.v[static_cast<size_t>((b * S + j) * Ev + e)];
    }
  return out;
}

OpCase one(std::string variant, std::function<TensorList(const TensorList&)> fn, RefFn ref,
           std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.fn = std::move(fn);
  c.ref = std::move(ref);
  c.samples = std::move(samples);
  c.atol = 1e-12;
  return c;
}

}  // namespace

void register_layers(Registry& r) {
  // ---- max pooling ----
  auto maxpool_case = [](std::string variant, Pool g, std::vector<Sample> s) {
    auto fn = [g](const TensorList& x) {
      auto [v, i] = max_pool2d_with_indices(x[0], {g.kh, g.kw}, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.ceil_mode);
      return TensorList{v, i};
    };
    return one(
        std::move(variant), fn, [g](const V& x) { return max_pool_ref(x[0], g); }, std::move(s));
  };
  r.push_back({"max_pool2d_with_indices",
               {f32(maxpool_case("k2", {2, 2, 2, 2, 0, 0}, {{"2x3x4x4", {rnd({2, 3, 4, 4})}}})),
                maxpool_case("k3_s2_p1", {3, 3, 2, 2, 1, 1}, {{"1x2x5x6", {rnd({1, 2, 5, 6})}}}),
                maxpool_case("k2x3_s1x2_dil2_ceil", {2, 3, 1, 2, 1, 1, 2, 1, true}, {{"1x1x6x7", {rnd({1, 1, 6, 7})}}}),
                maxpool_case("ceil_s2", {2, 2, 2, 2, 0, 0, 1, 1, true}, {{"unbatched_2x5x5", {rnd({2, 5, 5})}}})}});
  {
    OpCase c = one(
        "default_stride", [](const TensorList& x) { return TensorList{max_pool2d(x[0], {2})}; },
        [](const V& x) {
          return V{max_pool_ref(x[0], {2, 2, 2, 2, 0, 0})[0]};
        },
        {{"2x2x4x6", {rnd({2, 2, 4, 6})}}});
    r.push_back({"max_pool2d", {f32(c)}});
  }
  // ---- average pooling ----
  auto avg_case = [](std::string variant, Pool g, bool include_pad, int64_t div, std::vector<Sample> s) {
    auto fn = [=](const TensorList& x) {
      return TensorList{avg_pool2d(x[0], {g.kh, g.kw}, {g.sh, g.sw}, {g.ph, g.pw}, g.ceil_mode, include_pad,
                                   div ? std::optional<int64_t>(div) : std::nullopt)};
    };
    return one(
        std::move(variant), fn, [=](const V& x) { return V{avg_pool_ref(x[0], g, include_pad, div)}; }, std::move(s));
  };
  r.push_back(
      {"avg_pool2d",
       {f32(avg_case("k2", {2, 2, 2, 2, 0, 0}, true, 0, {{"2x3x4x4", {rnd({2, 3, 4, 4})}}})),
        avg_case("k3_s2_p1_include_pad", {3, 3, 2, 2, 1, 1}, true, 0, {{"1x2x5x6", {rnd({1, 2, 5, 6})}}}),
        avg_case("k3_s2_p1_exclude_pad", {3, 3, 2, 2, 1, 1}, false, 0, {{"1x2x5x6", {rnd({1, 2, 5, 6})}}}),
        avg_case("ceil_mode", {3, 2, 2, 2, 1, 0, 1, 1, true}, true, 0, {{"unbatched_2x6x5", {rnd({2, 6, 5})}}}),
        avg_case("ceil_exclude_pad", {3, 3, 2, 2, 1, 1, 1, 1, true}, false, 0, {{"1x1x6x6", {rnd({1, 1, 6, 6})}}}),
        avg_case("divisor_override", {2, 2, 1, 1, 1, 1}, true, 3, {{"1x1x3x3", {rnd({1, 1, 3, 3})}}})}});
  {
    auto ad = [](std::string variant, int64_t oh, int64_t ow, std::vector<Sample> s) {
      return one(
          std::move(variant),
          [=](const TensorList& x) {
            return TensorList{adaptive_avg_pool2d(x[0], {oh, ow})};
          },
          [=](const V& x) { return V{adaptive_ref(x[0], oh, ow)}; }, std::move(s));
    };
    r.push_back({"adaptive_avg_pool2d",
                 {f32(ad("to_1x1", 1, 1, {{"2x3x4x5", {rnd({2, 3, 4, 5})}}})),
                  ad("uneven_5x7_to_3x4", 3, 4, {{"1x2x5x7", {rnd({1, 2, 5, 7})}}}),
                  ad("upsample_2x3_to_3x5", 3, 5, {{"unbatched_1x2x3", {rnd({1, 2, 3})}}}),
                  ad("same_size", 3, 3, {{"1x1x3x3", {rnd({1, 1, 3, 3})}}})}});
  }
  // ---- pad ----
  {
    auto pc = [](std::string variant, Shape64 pads, double value, std::vector<Sample> s) {
      return one(
          std::move(variant), [=](const TensorList& x) { return TensorList{pad(x[0], pads, value)}; },
          [=](const V& x) { return V{pad_ref(x[0], pads, value)}; }, std::move(s));
    };
    r.push_back({"pad",
                 {f32(pc("last_dim", {1, 2}, 0.0, {{"2x3", {rnd({2, 3})}}})),
                  pc("two_dims_value", {1, 0, 2, 1}, 1.5, {{"2x3x2", {rnd({2, 3, 2})}}}),
                  pc("crop_and_pad", {-1, 2, 1, -1}, 0.0, {{"3x4", {rnd({3, 4})}}}),
                  pc("crop_only", {-1, -1}, 0.0, {{"2x4", {rnd({2, 4})}}})}});
  }
  // ---- dropout: the reference draws the same uniforms from the re-seeded default generator ----
  {
    auto dc = [](std::string variant, double p, bool train, std::vector<Sample> s) {
      OpCase c = one(
          std::move(variant),
          [=](const TensorList& x) {
            manual_seed(1234);
            return TensorList{dropout(x[0], p, train)};
          },
          [=](const V& x) {
            RT out = x[0];
            if (!train) return V{out};
            manual_seed(1234);
            auto u = rand({x[0].numel()}, kFloat64).to_vector<double>();
            for (size_t i = 0; i < out.v.size(); ++i) out.v[i] = u[i] >= p ? out.v[i] * (1.0 / (1.0 - p)) : 0.0;
            return V{out};
          },
          std::move(s));
      return c;
    };
    r.push_back({"dropout",
                 {dc("p0.4", 0.4, true, {{"4x5", {rnd({4, 5})}}}), dc("eval", 0.4, false, {{"3x2", {rnd({3, 2})}}}),
                  dc("p0", 0.0, true, {{"3", {rnd({3})}}}), dc("p1", 1.0, true, {{"2x2", {rnd({2, 2})}}})}});
  }
  // ---- multinomial: weights that leave one outcome (the draws are checked in
  // tests/python/test_parity_sorting.py) ----
  {
    auto mc = [](std::string variant, int64_t n, bool replacement, std::vector<Sample> s) {
      OpCase c = one(
          std::move(variant),
          [n, replacement](const TensorList& x) { return TensorList{multinomial(x[0], n, replacement)}; },
          [n](const V& x) {
            // each row's one category of nonzero weight, n times
            const int64_t rows = x[0].dim() == 1 ? 1 : x[0].sizes[0], C = x[0].sizes.back();
            RT out{x[0].dim() == 1 ? Shape64{n} : Shape64{rows, n}, {}, kInt64};
            for (int64_t r = 0; r < rows; ++r)
              for (int64_t k = 0; k < n; ++k)
                for (int64_t c = 0; c < C; ++c)
                  if (x[0].v[static_cast<size_t>(r * C + c)] != 0) out.v.push_back(static_cast<double>(c));
            return V{out};
          },
          std::move(s));
      c.differentiable = false;
      return c;
    };
    r.push_back({"multinomial",
                 {mc("replacement", 4, true,
                     {{"2x3", {vals({2, 3}, {0, 0, 2.5, 0, 0.5, 0})}},
                      {"4", {vals({4}, {0, 0, 0, 1})}},
                      {"0x3", {vals({0, 3}, {})}}}),
                  mc("one_without_replacement", 1, false,
                     {{"2x3", {vals({2, 3}, {0, 0, 2.5, 0, 0.5, 0})}}, {"4", {vals({4}, {0, 7, 0, 0})}}})}});
  }
  // ---- embedding ----
  {
    auto ref = [](const V& x) {
      const RT& w = x[0];
      const RT& ix = x[1];
      const int64_t D = w.sizes[1];
      Shape64 out_sizes = ix.sizes;
      out_sizes.push_back(D);
      RT out = zeros_rt(out_sizes);
      for (int64_t i = 0; i < ix.numel(); ++i)
        for (int64_t d = 0; d < D; ++d)
          out.v[static_cast<size_t>(i * D + d)] =
              w.v[static_cast<size_t>(static_cast<int64_t>(ix.v[static_cast<size_t>(i)]) * D + d)];
      return V{out};
    };
    OpCase c = one("", [](const TensorList& x) { return TensorList{embedding(x[0], x[1])}; }, ref,
                   {{"5x3_idx2x3_repeats", {rnd({5, 3}), ints({2, 3}, {0, 4, 4, 1, 0, 2})}},
                    {"4x2_idx_scalar", {rnd({4, 2}), ints({}, {3})}}});
    // padding_idx: same values; no gradient into the padding row (checked in nn_ops_test.cpp,
    // since the numerical Jacobian does see that row).
    OpCase p = one("padding_idx", [](const TensorList& x) { return TensorList{embedding(x[0], x[1], 1)}; }, ref,
                   {{"4x2_idx5", {rnd({4, 2}), ints({5}, {1, 0, 1, 3, 2})}, false},
                    {"4x2_idx_without_padding_row", {rnd({4, 2}), ints({3}, {0, 2, 3})}}});
    r.push_back({"embedding", {f32(c), p}});
  }
  // ---- attention ----
  {
    auto all = [](int64_t, int64_t) { return true; };
    OpCase plain = one(
        "plain", [](const TensorList& x) { return TensorList{scaled_dot_product_attention(x[0], x[1], x[2])}; },
        [all](const V& x) { return V{attention_ref(x[0], x[1], x[2], all, nullptr)}; },
        {{"q2x3x4_k2x5x4_v2x5x2", {rnd({2, 3, 4}), rnd({2, 5, 4}), rnd({2, 5, 2})}}});
    OpCase causal = one(
        "causal",
        [](const TensorList& x) {
          return TensorList{scaled_dot_product_attention(x[0], x[1], x[2], Tensor(), 0.0, true)};
        },
        [](const V& x) {
          return V{attention_ref(
              x[0], x[1], x[2], [](int64_t i, int64_t j) { return j <= i; }, nullptr)};
        },
        {{"q1x4x3_k1x4x3_v1x4x3", {rnd({1, 4, 3}), rnd({1, 4, 3}), rnd({1, 4, 3})}}});
    OpCase bool_mask = one(
        "bool_mask",
        [](const TensorList& x) { return TensorList{scaled_dot_product_attention(x[0], x[1], x[2], x[3])}; },
        [](const V& x) {
          const RT& m = x[3];
          const int64_t S = m.sizes[1];
          return V{attention_ref(
              x[0], x[1], x[2], [&m, S](int64_t i, int64_t j) { return m.v[static_cast<size_t>(i * S + j)] != 0; },
              nullptr)};
        },
        {{"q1x2x3_k1x3x3_v1x3x2_mask2x3",
          {rnd({1, 2, 3}), rnd({1, 3, 3}), rnd({1, 3, 2}), bools({2, 3}, {1, 0, 1, 1, 1, 0})}}});
    OpCase add_mask = one(
        "additive_mask",
        [](const TensorList& x) { return TensorList{scaled_dot_product_attention(x[0], x[1], x[2], x[3])}; },
        [all](const V& x) { return V{attention_ref(x[0], x[1], x[2], all, &x[3])}; },
        {{"q2x2x3_k2x3x3_v2x3x2_mask2x3", {rnd({2, 2, 3}), rnd({2, 3, 3}), rnd({2, 3, 2}), rnd({2, 3})}}});
    r.push_back({"scaled_dot_product_attention", {f32(plain), causal, bool_mask, add_mask}});
  }
}

}  // namespace graft::testing
