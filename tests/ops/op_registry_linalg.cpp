// Registry entries: matrix products.
#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// Naive batched product: a [B, n, m] x b [B, m, p] (batch index of each side given by bsel).
RT mm_ref(const RT& a, const RT& b) {
  const int64_t n = a.sizes[0], m = a.sizes[1], p = b.sizes[1];
  RT r{{n, p}, std::vector<double>(static_cast<size_t>(n * p), 0.0), kFloat64};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < p; ++j)
      for (int64_t k = 0; k < m; ++k) r.v[i * p + j] += a.v[i * m + k] * b.v[k * p + j];
  return r;
}
// Matrix `i` of a tensor of shape [..., r, c] (contiguous).
RT mat(const RT& t, int64_t i) {
  const int64_t rr = t.size(-2), cc = t.size(-1);
  RT m{{rr, cc}, {}, kFloat64};
  m.v.assign(t.v.begin() + i * rr * cc, t.v.begin() + (i + 1) * rr * cc);
  return m;
}

OpCase two(std::string variant, std::function<Tensor(const Tensor&, const Tensor&)> f, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
  c.ref = [](const V& x) { return V{matmul_ref(x[0], x[1])}; };
  c.atol = 1e-12;
  return c;
}

}  // namespace

// matmul reference following numpy rules: 1-D operands get a dim added and removed.
RT matmul_ref(const RT& a0, const RT& b0) {
  RT a = a0.dim() == 1 ? reshape_ref(a0, {1, a0.sizes[0]}) : a0;
  RT b = b0.dim() == 1 ? reshape_ref(b0, {b0.sizes[0], 1}) : b0;
  Shape64 ba(a.sizes.begin(), a.sizes.end() - 2), bb(b.sizes.begin(), b.sizes.end() - 2);
  Shape64 batch = broadcast(ba, bb);
  const int64_t n = a.size(-2), p = b.size(-1);
  Shape64 out = batch;
  out.push_back(n);
  out.push_back(p);
  RT r{out, {}, kFloat64};
  RT abat{ba, {}, kFloat64}, bbat{bb, {}, kFloat64};  // batch index maps
  for (int64_t i = 0; i < numel_of(ba); ++i) abat.v.push_back(static_cast<double>(i));
  for (int64_t i = 0; i < numel_of(bb); ++i) bbat.v.push_back(static_cast<double>(i));
  for (int64_t k = 0; k < numel_of(batch); ++k) {
    Shape64 idx = unravel(k, batch);
    RT m = mm_ref(mat(a, static_cast<int64_t>(bcast_at(abat, idx, batch))),
                  mat(b, static_cast<int64_t>(bcast_at(bbat, idx, batch))));
    r.v.insert(r.v.end(), m.v.begin(), m.v.end());
  }
  Shape64 final_sizes = batch;
  if (a0.dim() > 1) final_sizes.push_back(n);
  if (b0.dim() > 1) final_sizes.push_back(p);
  return reshape_ref(r, final_sizes);
}

void register_linalg(Registry& r) {
  r.push_back({"mm",
               {f32(two("", [](auto& a, auto& b) { return mm(a, b); },
                        {{"2x3_3x4", {rnd({2, 3}), rnd({3, 4})}},
                         {"1x1_1x1", {rnd({1, 1}), rnd({1, 1})}},
                         {"empty_0x3_3x2", {rnd({0, 3}), rnd({3, 2})}},
                         {"empty_inner_2x0_0x2", {rnd({2, 0}), rnd({0, 2})}}}))}});
  r.push_back({"bmm",
               {two("", [](auto& a, auto& b) { return bmm(a, b); },
                    {{"2x2x3_2x3x2", {rnd({2, 2, 3}), rnd({2, 3, 2})}},
                     {"1x3x1_1x1x2", {rnd({1, 3, 1}), rnd({1, 1, 2})}},
                     {"empty_0x2x3_0x3x2", {rnd({0, 2, 3}), rnd({0, 3, 2})}}})}});
  r.push_back(
      {"dot",
       {two("", [](auto& a, auto& b) { return dot(a, b); },
            {{"3_3", {rnd({3}), rnd({3})}}, {"1_1", {rnd({1}), rnd({1})}}, {"empty_0_0", {rnd({0}), rnd({0})}}})}});
  r.push_back({"matmul",
               {f32(two("", [](auto& a, auto& b) { return matmul(a, b); },
                        {{"dot_3_3", {rnd({3}), rnd({3})}},
                         {"mv_2x3_3", {rnd({2, 3}), rnd({3})}},
                         {"vm_3_3x2", {rnd({3}), rnd({3, 2})}},
                         {"mm_2x3_3x2", {rnd({2, 3}), rnd({3, 2})}},
                         {"3d_2d_2x2x3_3x2", {rnd({2, 2, 3}), rnd({3, 2})}},
                         {"3d_1d_2x2x3_3", {rnd({2, 2, 3}), rnd({3})}},
                         {"1d_3d_3_2x3x2", {rnd({3}), rnd({2, 3, 2})}},
                         {"bcast_2x1x2x3_3x3x1", {rnd({2, 1, 2, 3}), rnd({3, 3, 1})}},
                         {"2d_3d_2x3_2x3x2", {rnd({2, 3}), rnd({2, 3, 2})}}}))}});
  {
    OpCase c;
    c.variant = "bias";
    c.samples = {{"x2x3_w4x3_b4", {rnd({2, 3}), rnd({4, 3}), rnd({4})}},
                 {"x2x2x3_w2x3_b2", {rnd({2, 2, 3}), rnd({2, 3}), rnd({2})}},
                 {"x3_w2x3_b2", {rnd({3}), rnd({2, 3}), rnd({2})}},
                 {"x2x3_w1x3_b0d", {rnd({2, 3}), rnd({1, 3}), rnd({})}}};
    c.fn = [](const TensorList& x) { return TensorList{linear(x[0], x[1], x[2])}; };
    c.ref = [](const V& x) {
      RT y = matmul_ref(x[0], permute_ref(x[1], {1, 0}));
      return V{zip(y, x[2], [](double a, double b) { return a + b; })};
    };
    c.atol = 1e-12;
    OpCase nb = c;
    nb.variant = "no_bias";
    for (auto& s : nb.samples) s.inputs.pop_back();
    nb.fn = [](const TensorList& x) { return TensorList{linear(x[0], x[1])}; };
    nb.ref = [](const V& x) { return V{matmul_ref(x[0], permute_ref(x[1], {1, 0}))}; };
    r.push_back({"linear", {c, nb}});
  }
}

}  // namespace graft::testing
