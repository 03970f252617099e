// Registry entries: products (outer, mv, addmm, addmv, addr, baddbmm, addbmm, addcmul, addcdiv,
// lerp) and contractions (tensordot, einsum, kron). References go through matmul_ref's naive
// loops or element loops of their own.
#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// products compare more tightly than the registry's default tolerance
OpCase tight(std::string variant, std::vector<Sample> samples, TensorFn fn, RefFn ref) {
  OpCase c = with(std::move(variant), std::move(samples), std::move(fn), std::move(ref));
  c.atol = 1e-12;
  return c;
}

// beta * self + alpha * product (self broadcast).
RT scaled_sum_ref(const RT& self, const RT& product, double beta, double alpha) {
  return zip(self, product, [beta, alpha](double s, double p) { return (beta == 0 ? 0 : beta * s) + alpha * p; });
}

RT sum_dim0(const RT& a) {
  return reduce(a, {0}, false, [](const std::vector<double>& g) {
    double s = 0;
    for (double x : g) s += x;
    return s;
  });
}

void register_matrix_products(Registry& r) {
  r.push_back({"outer",
               {f32(tight(
                   "", {{"3_2", {rnd({3}), rnd({2})}}, {"0_2", {rnd({0}), rnd({2})}}},
                   [](const TensorList& x) { return TensorList{outer(x[0], x[1])}; },
                   [](const V& x) {
                     return V{matmul_ref(reshape_ref(x[0], {x[0].numel(), 1}), reshape_ref(x[1], {1, x[1].numel()}))};
                   }))}});
  r.push_back({"mv",
               {f32(tight(
                   "", {{"2x3_3", {rnd({2, 3}), rnd({3})}}, {"0x3_3", {rnd({0, 3}), rnd({3})}}},
                   [](const TensorList& x) { return TensorList{mv(x[0], x[1])}; },
                   [](const V& x) { return V{matmul_ref(x[0], x[1])}; }))}});
  auto product_cases = [](auto call, auto product, std::vector<Sample> samples, std::vector<Sample> bcast) {
    return std::vector<OpCase>{
        f32(tight(
            "", samples, [call](const TensorList& x) { return TensorList{call(x, 1.0, 1.0)}; },
            [product](const V& x) { return V{scaled_sum_ref(x[0], product(x), 1, 1)}; })),
        tight(
            "beta0_5_alpha2", samples, [call](const TensorList& x) { return TensorList{call(x, 0.5, 2.0)}; },
            [product](const V& x) { return V{scaled_sum_ref(x[0], product(x), 0.5, 2)}; }),
        tight(
            "beta0_bcast_self", bcast, [call](const TensorList& x) { return TensorList{call(x, 0.0, -1.5)}; },
            [product](const V& x) { return V{scaled_sum_ref(x[0], product(x), 0, -1.5)}; })};
  };
  r.push_back(
      {"addmm", product_cases([](const TensorList& x, double b, double a) { return addmm(x[0], x[1], x[2], b, a); },
                              [](const V& x) { return matmul_ref(x[1], x[2]); },
                              {{"2x4_2x3_3x4", {rnd({2, 4}), rnd({2, 3}), rnd({3, 4})}}},
                              {{"4_2x3_3x4", {rnd({4}), rnd({2, 3}), rnd({3, 4})}}})});
  r.push_back(
      {"addmv", product_cases([](const TensorList& x, double b, double a) { return addmv(x[0], x[1], x[2], b, a); },
                              [](const V& x) { return matmul_ref(x[1], x[2]); },
                              {{"2_2x3_3", {rnd({2}), rnd({2, 3}), rnd({3})}}},
                              {{"1_2x3_3", {rnd({1}), rnd({2, 3}), rnd({3})}}})});
  r.push_back(
      {"addr",
       product_cases([](const TensorList& x, double b, double a) { return addr(x[0], x[1], x[2], b, a); },
                     [](const V& x) {
                       return matmul_ref(reshape_ref(x[1], {x[1].numel(), 1}), reshape_ref(x[2], {1, x[2].numel()}));
                     },
                     {{"3x2_3_2", {rnd({3, 2}), rnd({3}), rnd({2})}}}, {{"0d_3_2", {rnd({}), rnd({3}), rnd({2})}}})});
  r.push_back(
      {"baddbmm", product_cases([](const TensorList& x, double b, double a) { return baddbmm(x[0], x[1], x[2], b, a); },
                                [](const V& x) { return matmul_ref(x[1], x[2]); },
                                {{"2x2x3_2x2x4_2x4x3", {rnd({2, 2, 3}), rnd({2, 2, 4}), rnd({2, 4, 3})}}},
                                {{"3_2x2x4_2x4x3", {rnd({3}), rnd({2, 2, 4}), rnd({2, 4, 3})}}})});
  r.push_back(
      {"addbmm", product_cases([](const TensorList& x, double b, double a) { return addbmm(x[0], x[1], x[2], b, a); },
                               [](const V& x) { return sum_dim0(matmul_ref(x[1], x[2])); },
                               {{"2x3_2x2x4_2x4x3", {rnd({2, 3}), rnd({2, 2, 4}), rnd({2, 4, 3})}}},
                               {{"1x3_3x2x4_3x4x3", {rnd({1, 3}), rnd({3, 2, 4}), rnd({3, 4, 3})}}})});
}

void register_pointwise_triples(Registry& r) {
  std::vector<Sample> s = {{"2x3_2x3_2x3", {rnd({2, 3}), rnd({2, 3}), rnd({2, 3}, Domain::NonZero)}},
                           {"2x3_3_2x1", {rnd({2, 3}), rnd({3}), rnd({2, 1}, Domain::NonZero)}},
                           {"0d_2x3_0d", {rnd({}), rnd({2, 3}), rnd({}, Domain::NonZero)}}};
  r.push_back({"addcmul",
               {f32(tight(
                    "value_half", s, [](const TensorList& x) { return TensorList{addcmul(x[0], x[1], x[2], 0.5)}; },
                    [](const V& x) {
                      return V{zip3(x[0], x[1], x[2], [](double a, double b, double c) { return a + 0.5 * b * c; })};
                    })),
                tight(
                    "int_value_truncated", {{"int", {ints({2}, {1, 2}), ints({2}, {3, 4}), ints({2}, {5, -6})}}},
                    [](const TensorList& x) { return TensorList{addcmul(x[0], x[1], x[2], 2.5)}; },
                    [](const V& x) {
                      RT out = zip3(x[0], x[1], x[2], [](double a, double b, double c) { return a + 2 * b * c; });
                      out.dtype = kInt64;
                      return V{out};
                    })}});
  r.back().cases.back().differentiable = false;  // integers
  r.push_back({"addcdiv",
               {f32(tight(
                   "value_neg2", s, [](const TensorList& x) { return TensorList{addcdiv(x[0], x[1], x[2], -2)}; },
                   [](const V& x) {
                     return V{zip3(x[0], x[1], x[2], [](double a, double b, double c) { return a - 2 * b / c; })};
                   }))}});
  std::vector<Sample> two = {
      {"2x3_2x3", {rnd({2, 3}), rnd({2, 3})}}, {"2x3_3", {rnd({2, 3}), rnd({3})}}, {"0d_0d", {rnd({}), rnd({})}}};
  auto scalar_weight = [&](std::string variant, double w) {
    return tight(
        std::move(variant), two, [w](const TensorList& x) { return TensorList{lerp(x[0], x[1], w)}; },
        [w](const V& x) { return V{zip(x[0], x[1], [w](double a, double b) { return a + w * (b - a); })}; });
  };
  OpCase tensor_weight = tight(
      "tensor_weight",
      {{"2x3_2x3_3", {rnd({2, 3}), rnd({2, 3}), rnd({3}, Domain::Unit)}},
       {"2x3_3_2x1", {rnd({2, 3}), rnd({3}), rnd({2, 1}, Domain::Unit)}}},
      [](const TensorList& x) { return TensorList{lerp(x[0], x[1], x[2])}; },
      [](const V& x) {
        return V{zip3(x[0], x[1], x[2], [](double a, double b, double w) { return a + w * (b - a); })};
      });
  r.push_back({"lerp", {f32(scalar_weight("w0_25", 0.25)), scalar_weight("w0_75", 0.75), tensor_weight}});
}

// einsum's cases: each equation with its samples and a reference through matmul_ref or loops.
void register_einsum(Registry& r) {
  auto eq = [](std::string variant, std::string equation, std::vector<Sample> samples, RefFn ref) {
    return tight(
        std::move(variant), std::move(samples),
        [equation](const TensorList& x) { return TensorList{einsum(equation, x)}; }, std::move(ref));
  };
  auto mm_like = [](const V& x) { return V{matmul_ref(x[0], x[1])}; };
  auto diag = [](const V& x) {
    RT out{{x[0].sizes[0]}, {}, kFloat64};
    for (int64_t i = 0; i < x[0].sizes[0]; ++i) out.v.push_back(x[0].v[static_cast<size_t>(i * x[0].sizes[0] + i)]);
    return V{out};
  };
  auto total = [](const V& x) {
    double s = 0;
    for (double v : x[0].v) s += v;
    return V{RT{{}, {s}, kFloat64}};
  };
  r.push_back(
      {"einsum",
       {f32(eq("matmul", "ij,jk->ik", {{"2x3_3x4", {rnd({2, 3}), rnd({3, 4})}}}, mm_like)),
        eq("implicit_matmul", "ij,jk", {{"2x3_3x4", {rnd({2, 3}), rnd({3, 4})}}}, mm_like),
        eq("batched", "bij,bjk->bik", {{"2x2x3_2x3x2", {rnd({2, 2, 3}), rnd({2, 3, 2})}}}, mm_like),
        eq("ellipsis_broadcast", "...ij,...jk->...ik", {{"2x2x3_3x2", {rnd({2, 2, 3}), rnd({3, 2})}}}, mm_like),
        eq("matrix_vector", "bi,i->b", {{"2x3_3", {rnd({2, 3}), rnd({3})}}}, mm_like),
        eq("outer", "i,j->ij", {{"3_2", {rnd({3}), rnd({2})}}},
           [](const V& x) {
             return V{matmul_ref(reshape_ref(x[0], {x[0].numel(), 1}), reshape_ref(x[1], {1, x[1].numel()}))};
           }),
        eq("diagonal", "ii->i", {{"3x3", {rnd({3, 3})}}}, diag), eq("sum_all", "ij->", {{"2x3", {rnd({2, 3})}}}, total),
        eq("transpose", "ijk->kji", {{"2x3x2", {rnd({2, 3, 2})}}},
           [](const V& x) {
             return V{permute_ref(x[0], {2, 1, 0})};
           }),
        eq("hadamard", "ij,ij->ij", {{"2x3_2x3", {rnd({2, 3}), rnd({2, 3})}}},
           [](const V& x) { return V{zip(x[0], x[1], [](double a, double b) { return a * b; })}; }),
        eq("three_operands", "ij,jk,kl->il", {{"2x3_3x2_2x2", {rnd({2, 3}), rnd({3, 2}), rnd({2, 2})}}},
           [](const V& x) { return V{matmul_ref(matmul_ref(x[0], x[1]), x[2])}; })}});
}

void register_contractions(Registry& r) {
  r.push_back({"tensordot",
               {f32(tight(
                    "one_pair", {{"2x3_3x4", {rnd({2, 3}), rnd({3, 4})}}},
                    [](const TensorList& x) { return TensorList{tensordot(x[0], x[1], {1}, {0})}; },
                    [](const V& x) { return V{matmul_ref(x[0], x[1])}; })),
                tight(
                    "two_pairs_crossed", {{"2x3_3x2", {rnd({2, 3}), rnd({3, 2})}}},
                    [](const TensorList& x) {
                      return TensorList{tensordot(x[0], x[1], {0, 1}, {1, 0})};
                    },
                    [](const V& x) {
                      double s = 0;
                      for (int64_t i = 0; i < 2; ++i)
                        for (int64_t j = 0; j < 3; ++j)
                          s += x[0].v[static_cast<size_t>(i * 3 + j)] * x[1].v[static_cast<size_t>(j * 2 + i)];
                      return V{RT{{}, {s}, kFloat64}};
                    })}});
  auto kron_ref = [](const V& x) {
    const RT& a = x[0];
    const RT& b = x[1];
    const int64_t n = std::max(a.dim(), b.dim());
    Shape64 as(static_cast<size_t>(n - a.dim()), 1), bs(static_cast<size_t>(n - b.dim()), 1), out;
    as.insert(as.end(), a.sizes.begin(), a.sizes.end());
    bs.insert(bs.end(), b.sizes.begin(), b.sizes.end());
    for (int64_t d = 0; d < n; ++d) out.push_back(as[d] * bs[d]);
    RT r{out, {}, kFloat64};
    for (int64_t k = 0; k < numel_of(out); ++k) {
      Shape64 idx = unravel(k, out), ia, ib;
      for (int64_t d = 0; d < n; ++d) ia.push_back(idx[d] / bs[d]), ib.push_back(idx[d] % bs[d]);
      r.v.push_back(
          a.v[static_cast<size_t>(std::inner_product(ia.begin(), ia.end(), contiguous_strides_of(as).begin(), 0L))] *
          b.v[static_cast<size_t>(std::inner_product(ib.begin(), ib.end(), contiguous_strides_of(bs).begin(), 0L))]);
    }
    return V{r};
  };
  r.push_back(
      {"kron",
       {f32(tight(
           "",
           {{"2x2_2x3", {rnd({2, 2}), rnd({2, 3})}}, {"3_2x2", {rnd({3}), rnd({2, 2})}}, {"0d_2", {rnd({}), rnd({2})}}},
           [](const TensorList& x) { return TensorList{kron(x[0], x[1])}; }, kron_ref))}});
}

}  // namespace

void register_products(Registry& r) {
  register_matrix_products(r);
  register_pointwise_triples(r);
  register_einsum(r);
  register_contractions(r);
}

}  // namespace graft::testing
