// Registry entries: convolution and its building blocks (conv2d, conv1d, conv_transpose2d,
// im2col, col2im). References are direct nested loops over the definitions.
#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

struct Geo {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

double at4(const RT& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.v[static_cast<size_t>(((a * t.sizes[1] + b) * t.sizes[2] + c) * t.sizes[3] + d)];
}
double& at4(RT& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.v[static_cast<size_t>(((a * t.sizes[1] + b) * t.sizes[2] + c) * t.sizes[3] + d)];
}
int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}
RT zeros_rt(Shape64 sizes) {
  return RT{sizes, std::vector<double>(static_cast<size_t>(numel_of(sizes)), 0.0), kFloat64};
}

// out[n, o, y, x] = b[o] + sum_{c in group(o), i, j} x[n, c, y*s - p + i*d, x*s - p + j*d] * w[o, c', i, j]
RT conv_ref(const RT& x, const RT& w, const RT* b, Geo g, int64_t groups) {
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t O = w.sizes[0], Cg = w.sizes[1], kh = w.sizes[2], kw = w.sizes[3], Og = O / groups;
  const int64_t OH = out_len(H, kh, g.sh, g.ph, g.dh), OW = out_len(W, kw, g.sw, g.pw, g.dw);
  (void)C;
  RT out = zeros_rt({N, O, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t xx = 0; xx < OW; ++xx) {
          double acc = b ? b->v[static_cast<size_t>(o)] : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t iy = y * g.sh - g.ph + i * g.dh, ix = xx * g.sw - g.pw + j * g.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += at4(x, n, (o / Og) * Cg + c, iy, ix) * at4(w, o, c, i, j);
              }
          at4(out, n, o, y, xx) = acc;
        }
  return out;
}

// Transposed: every input element scatters x[n, c, y, x] * w[c, o', i, j] to
// out[n, group(c)*Cout_g + o', y*s - p + i*d, x*s - p + j*d].
RT conv_t_ref(const RT& x, const RT& w, const RT* b, Geo g, int64_t oph, int64_t opw, int64_t groups) {
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t Cout_g = w.sizes[1], kh = w.sizes[2], kw = w.sizes[3], Cin_g = C / groups;
  const int64_t OH = (H - 1) * g.sh - 2 * g.ph + g.dh * (kh - 1) + oph + 1;
  const int64_t OW = (W - 1) * g.sw - 2 * g.pw + g.dw * (kw - 1) + opw + 1;
  RT out = zeros_rt({N, Cout_g * groups, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t xx = 0; xx < W; ++xx)
          for (int64_t o = 0; o < Cout_g; ++o)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                int64_t oy = y * g.sh - g.ph + i * g.dh, ox = xx * g.sw - g.pw + j * g.dw;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                at4(out, n, (c / Cin_g) * Cout_g + o, oy, ox) += at4(x, n, c, y, xx) * at4(w, c, o, i, j);
              }
  if (b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < Cout_g * groups; ++o)
        for (int64_t y = 0; y < OH; ++y)
          for (int64_t xx = 0; xx < OW; ++xx) at4(out, n, o, y, xx) += b->v[static_cast<size_t>(o)];
  return out;
}

// cols[n, (c*kh + i)*kw + j, y*OW + x] = x[n, c, y*s - p + i*d, x*s - p + j*d] (0 outside)
RT im2col_ref(const RT& x, int64_t kh, int64_t kw, Geo g) {
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  const int64_t OH = out_len(H, kh, g.sh, g.ph, g.dh), OW = out_len(W, kw, g.sw, g.pw, g.dw);
  RT out = zeros_rt({N, C * kh * kw, OH * OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t y = 0; y < OH; ++y)
            for (int64_t xx = 0; xx < OW; ++xx) {
              int64_t iy = y * g.sh - g.ph + i * g.dh, ix = xx * g.sw - g.pw + j * g.dw;
              double v = (iy < 0 || iy >= H || ix < 0 || ix >= W) ? 0.0 : at4(x, n, c, iy, ix);
              out.v[static_cast<size_t>((n * C * kh * kw + (c * kh + i) * kw + j) * OH * OW + y * OW + xx)] = v;
            }
  return out;
}

RT col2im_ref(const RT& cols, int64_t H, int64_t W, int64_t kh, int64_t kw, Geo g) {
  const int64_t N = cols.sizes[0], C = cols.sizes[1] / (kh * kw);
  const int64_t OH = out_len(H, kh, g.sh, g.ph, g.dh), OW = out_len(W, kw, g.sw, g.pw, g.dw);
  RT out = zeros_rt({N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t y = 0; y < OH; ++y)
            for (int64_t xx = 0; xx < OW; ++xx) {
              int64_t iy = y * g.sh - g.ph + i * g.dh, ix = xx * g.sw - g.pw + j * g.dw;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              at4(out, n, c, iy, ix) +=
                  cols.v[static_cast<size_t>((n * C * kh * kw + (c * kh + i) * kw + j) * OH * OW + y * OW + xx)];
            }
  return out;
}

RT unsq0(const RT& t) {
  RT r = t;
  r.sizes.insert(r.sizes.begin(), 1);
  return r;
}
RT sq0(const RT& t) {
  RT r = t;
  r.sizes.erase(r.sizes.begin());
  return r;
}

OpCase conv2d_case(std::string variant, Geo g, int64_t groups, bool bias, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [g, groups, bias](const TensorList& x) {
    return TensorList{conv2d(x[0], x[1], bias ? x[2] : Tensor(), {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, groups)};
  };
  c.ref = [g, groups, bias](const V& x) {
    bool unbatched = x[0].dim() == 3;
    RT in = unbatched ? unsq0(x[0]) : x[0];
    RT out = conv_ref(in, x[1], bias ? &x[2] : nullptr, g, groups);
    return V{unbatched ? sq0(out) : out};
  };
  c.atol = 1e-12;
  return c;
}

// x [N, C, H, W] zero-padded by eh rows and ew columns at the end.
RT pad_end_ref(const RT& x, int64_t eh, int64_t ew) {
  const int64_t N = x.sizes[0], C = x.sizes[1], H = x.sizes[2], W = x.sizes[3];
  RT out = x;
  out.sizes = {N, C, H + eh, W + ew};
  out.v.assign(static_cast<size_t>(N * C * (H + eh) * (W + ew)), 0.0);
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        out.v[static_cast<size_t>((p * (H + eh) + h) * (W + ew) + w)] = x.v[static_cast<size_t>((p * H + h) * W + w)];
  return out;
}

// conv2d with padding="same": the output keeps H x W; an odd total padding goes at the end.
OpCase conv2d_same_case(std::string variant, int64_t dh, int64_t dw, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [=](const TensorList& x) { return TensorList{conv2d(x[0], x[1], x[2], {1}, "same", {dh, dw})}; };
  c.ref = [=](const V& x) {
    const int64_t th = dh * (x[1].sizes[2] - 1), tw = dw * (x[1].sizes[3] - 1);
    return V{conv_ref(pad_end_ref(x[0], th % 2, tw % 2), x[1], &x[2], {1, 1, th / 2, tw / 2, dh, dw}, 1)};
  };
  c.atol = 1e-12;
  return c;
}

OpCase conv_t_case(std::string variant, Geo g, int64_t oph, int64_t opw, int64_t groups, bool bias,
                   std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [=](const TensorList& x) {
    return TensorList{conv_transpose2d(x[0], x[1], bias ? x[2] : Tensor(), {g.sh, g.sw}, {g.ph, g.pw}, {oph, opw},
                                       groups, {g.dh, g.dw})};
  };
  c.ref = [=](const V& x) { return V{conv_t_ref(x[0], x[1], bias ? &x[2] : nullptr, g, oph, opw, groups)}; };
  c.atol = 1e-12;
  return c;
}

// A 1-d reference as the 2-d one over [N, C, 1, L]: `ref2d` of the lifted input and weight,
// the added dim dropped from its result.
RT lifted_ref(const V& x, const std::function<RT(const RT&, const RT&)>& ref2d) {
  RT in = x[0], w = x[1];
  in.sizes.insert(in.sizes.begin() + 2, 1);
  w.sizes.insert(w.sizes.begin() + 2, 1);
  RT out = ref2d(in, w);
  out.sizes.erase(out.sizes.begin() + 2);
  return out;
}

// graft::convolution itself (torch.convolution): both directions, 2-d and 1-d, with a bias.
OpCase convolution_case(std::string variant, Geo g, bool transposed, int64_t op, int64_t groups,
                        std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [=](const TensorList& x) {
    if (x[0].dim() == 3)  // 1-d: the w-direction values
      return TensorList{convolution(x[0], x[1], x[2], {g.sw}, {g.pw}, {g.dw}, transposed, {op}, groups)};
    return TensorList{
        convolution(x[0], x[1], x[2], {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, transposed, {op, op}, groups)};
  };
  c.ref = [=](const V& x) {
    auto ref2d = [&](const RT& in, const RT& w) {
      const bool one_d = x[0].dim() == 3;
      const Geo g2 = one_d ? Geo{1, g.sw, 0, g.pw, 1, g.dw} : g;
      return transposed ? conv_t_ref(in, w, &x[2], g2, one_d ? 0 : op, op, groups) : conv_ref(in, w, &x[2], g2, groups);
    };
    return V{x[0].dim() == 3 ? lifted_ref(x, ref2d) : ref2d(x[0], x[1])};
  };
  c.atol = 1e-12;
  return c;
}

}  // namespace

void register_conv(Registry& r) {
  r.push_back({"convolution",
               {f32(convolution_case("2d", {2, 1, 1, 0, 1, 2}, false, 0, 1,
                                     {{"2x2x5x6_w3x2x2x3", {rnd({2, 2, 5, 6}), rnd({3, 2, 2, 3}), rnd({3})}}})),
                convolution_case("2d_transposed_outpad1_groups2", {2, 2, 1, 1, 1, 1}, true, 1, 2,
                                 {{"1x4x3x3_w4x1x3x3", {rnd({1, 4, 3, 3}), rnd({4, 1, 3, 3}), rnd({2})}}}),
                convolution_case("1d_stride2_pad1_dil2", {1, 2, 0, 1, 1, 2}, false, 0, 1,
                                 {{"2x3x9_w4x3x3", {rnd({2, 3, 9}), rnd({4, 3, 3}), rnd({4})}}}),
                convolution_case("1d_transposed_stride2_outpad1", {1, 2, 0, 1, 1, 1}, true, 1, 1,
                                 {{"2x2x4_w2x3x3", {rnd({2, 2, 4}), rnd({2, 3, 3}), rnd({3})}}})}});
  r.push_back({"conv2d",
               {f32(conv2d_case("bias", {}, 1, true,
                                {{"2x3x5x5_w4x3x3x3", {rnd({2, 3, 5, 5}), rnd({4, 3, 3, 3}), rnd({4})}},
                                 {"1x1x3x4_w2x1x1x2", {rnd({1, 1, 3, 4}), rnd({2, 1, 1, 2}), rnd({2})}}})),
                conv2d_case("stride2_pad1", {2, 2, 1, 1, 1, 1}, 1, false,
                            {{"1x2x5x6_w3x2x3x3", {rnd({1, 2, 5, 6}), rnd({3, 2, 3, 3})}}}),
                conv2d_case("stride_pad_dilation_rect", {2, 1, 1, 2, 2, 1}, 1, true,
                            {{"2x2x7x6_w2x2x3x2", {rnd({2, 2, 7, 6}), rnd({2, 2, 3, 2}), rnd({2})}}}),
                conv2d_case("groups2", {1, 1, 1, 1, 1, 1}, 2, true,
                            {{"2x4x4x4_w6x2x3x3", {rnd({2, 4, 4, 4}), rnd({6, 2, 3, 3}), rnd({6})}}}),
                conv2d_case("depthwise", {}, 3, false, {{"1x3x4x4_w3x1x2x2", {rnd({1, 3, 4, 4}), rnd({3, 1, 2, 2})}}}),
                conv2d_case("unbatched", {1, 1, 1, 1, 1, 1}, 1, true,
                            {{"2x4x4_w3x2x3x3", {rnd({2, 4, 4}), rnd({3, 2, 3, 3}), rnd({3})}}}),
                conv2d_same_case("same_odd_kernel", 1, 1,
                                 {{"1x2x5x4_w3x2x3x3", {rnd({1, 2, 5, 4}), rnd({3, 2, 3, 3}), rnd({3})}}}),
                conv2d_same_case("same_even_kernel_dilated", 1, 3,
                                 {{"2x1x4x6_w2x1x2x2", {rnd({2, 1, 4, 6}), rnd({2, 1, 2, 2}), rnd({2})}}})}});
  {
    OpCase c;
    c.variant = "stride2_pad1_dil2";
    c.samples = {{"2x3x9_w4x3x3", {rnd({2, 3, 9}), rnd({4, 3, 3}), rnd({4})}},
                 {"unbatched_3x9_w2x3x3", {rnd({3, 9}), rnd({2, 3, 3}), rnd({2})}}};
    c.fn = [](const TensorList& x) { return TensorList{conv1d(x[0], x[1], x[2], {2}, {1}, {2})}; };
    c.ref = [](const V& x) {
      bool unbatched = x[0].dim() == 2;
      RT in = x[0], w = x[1];
      if (unbatched) in.sizes.insert(in.sizes.begin(), 1);
      in.sizes.insert(in.sizes.begin() + 2, 1);  // [N, C, 1, L]
      w.sizes.insert(w.sizes.begin() + 2, 1);
      RT out = conv_ref(in, w, &x[2], {1, 2, 0, 1, 1, 2}, 1);
      out.sizes.erase(out.sizes.begin() + 2);
      if (unbatched) out.sizes.erase(out.sizes.begin());
      return V{out};
    };
    c.atol = 1e-12;
    r.push_back({"conv1d", {f32(c)}});
  }
  r.push_back({"conv_transpose2d",
               {f32(conv_t_case("bias", {}, 0, 0, 1, true,
                                {{"2x3x3x3_w3x2x3x3", {rnd({2, 3, 3, 3}), rnd({3, 2, 3, 3}), rnd({2})}}})),
                conv_t_case("stride2_pad1_outpad1", {2, 2, 1, 1, 1, 1}, 1, 1, 1, false,
                            {{"1x2x3x4_w2x3x3x3", {rnd({1, 2, 3, 4}), rnd({2, 3, 3, 3})}}}),
                conv_t_case("dilation2_groups2", {1, 2, 0, 1, 2, 1}, 0, 1, 2, true,
                            {{"1x4x3x3_w4x1x2x2", {rnd({1, 4, 3, 3}), rnd({4, 1, 2, 2}), rnd({2})}}}),
                // output_padding 1 >= stride 1 is allowed because it is < dilation 2
                conv_t_case("outpad_ge_stride", {1, 1, 0, 0, 2, 2}, 1, 1, 1, false,
                            {{"1x1x3x3_w1x2x2x2", {rnd({1, 1, 3, 3}), rnd({1, 2, 2, 2})}}})}});
  {
    OpCase c;
    c.variant = "k2x3_dil_pad_stride";
    c.samples = {{"2x2x5x6", {rnd({2, 2, 5, 6})}}};
    c.fn = [](const TensorList& x) { return TensorList{im2col(x[0], {2, 3}, {2, 1}, {1, 1}, {1, 2})}; };
    c.ref = [](const V& x) { return V{im2col_ref(x[0], 2, 3, {1, 2, 1, 1, 2, 1})}; };
    r.push_back({"im2col", {f32(c)}});
  }
  {
    OpCase c;
    c.variant = "k2x2_stride1_overlapping";
    c.samples = {{"2x8x12_to_5x5", {rnd({2, 8, 12})}}};  // C=2, kh*kw=4, 3x4 windows of a 4x5 image
    c.fn = [](const TensorList& x) { return TensorList{col2im(x[0], {4, 5}, {2, 2})}; };
    c.ref = [](const V& x) { return V{col2im_ref(x[0], 4, 5, 2, 2, {})}; };
    OpCase c2;
    c2.variant = "stride2_pad1";
    c2.samples = {{"1x4x9_to_5x5", {rnd({1, 4, 9})}}};
    c2.fn = [](const TensorList& x) { return TensorList{col2im(x[0], {5, 5}, {2, 2}, {1}, {1}, {2})}; };
    c2.ref = [](const V& x) { return V{col2im_ref(x[0], 5, 5, 2, 2, {2, 2, 1, 1, 1, 1})}; };
    r.push_back({"col2im", {f32(c), c2}});
  }
}

}  // namespace graft::testing
