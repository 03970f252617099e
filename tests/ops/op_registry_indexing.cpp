// Registry entries: advanced indexing (index, index_put), nonzero, masked_select. The
// references resolve the index list with plain loops (masks through a naive nonzero, NumPy's
// layout rule) and read or write one element per position of the indexed shape.
#include <optional>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
/// Where each entry of the index list comes from: an input number, or kAll for nullopt (':').
constexpr int kAll = -1;
using Pattern = std::vector<int>;

std::vector<std::optional<Tensor>> build_indices(const TensorList& x, const Pattern& pat) {
  std::vector<std::optional<Tensor>> out;
  for (int k : pat) out.push_back(k == kAll ? std::nullopt : std::optional<Tensor>(x[static_cast<size_t>(k)]));
  return out;
}

// Row-major multi-indices of the nonzero elements of `m`.
std::vector<Shape64> nonzero_ref(const RT& m) {
  std::vector<Shape64> out;
  for (int64_t k = 0; k < m.numel(); ++k)
    if (m.v[static_cast<size_t>(k)] != 0) out.push_back(unravel(k, m.sizes));
  return out;
}

// The index list resolved against a shape: one optional int index per dim, and the layout.
struct RefPlan {
  std::vector<std::optional<RT>> per_dim;
  Shape64 bshape, out_sizes;
  std::vector<int64_t> out_dim_of;  // per out dim: the self dim it walks (-1 = a broadcast index dim)
  std::vector<int64_t> bdim_of;     // per out dim: which broadcast dim (if out_dim_of is -1)
};
RefPlan ref_plan(const Shape64& sizes, const std::vector<std::optional<RT>>& list) {
  RefPlan p;
  for (auto& e : list) {
    if (!e || e->dtype != kBool) {
      p.per_dim.push_back(e);
      continue;
    }
    auto nz = nonzero_ref(*e);
    for (int64_t j = 0; j < e->dim(); ++j) {
      std::vector<double> col;
      for (auto& ix : nz) col.push_back(static_cast<double>(ix[static_cast<size_t>(j)]));
      p.per_dim.push_back(ints({static_cast<int64_t>(col.size())}, col));
    }
  }
  while (p.per_dim.size() < sizes.size()) p.per_dim.push_back(std::nullopt);
  std::vector<int64_t> adv;
  for (size_t d = 0; d < p.per_dim.size(); ++d)
    if (p.per_dim[d]) {
      p.bshape = adv.empty() ? p.per_dim[d]->sizes : broadcast(p.bshape, p.per_dim[d]->sizes);
      adv.push_back(static_cast<int64_t>(d));
    }
  const bool adjacent = adv.empty() || adv.back() - adv.front() + 1 == static_cast<int64_t>(adv.size());
  auto put_b = [&] {
    for (size_t i = 0; i < p.bshape.size(); ++i) {
      p.out_sizes.push_back(p.bshape[i]);
      p.out_dim_of.push_back(-1);
      p.bdim_of.push_back(static_cast<int64_t>(i));
    }
  };
  if (!adjacent) put_b();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (adjacent && !adv.empty() && static_cast<int64_t>(d) == adv.front()) put_b();
    if (p.per_dim[d]) continue;
    p.out_sizes.push_back(sizes[d]);
    p.out_dim_of.push_back(static_cast<int64_t>(d));
    p.bdim_of.push_back(-1);
  }
  return p;
}
// The flat position in self (contiguous) read or written for out position k.
int64_t ref_source(const RefPlan& p, const Shape64& sizes, int64_t k) {
  Shape64 oi = unravel(k, p.out_sizes), bi;
  for (size_t i = 0; i < oi.size(); ++i)
    if (p.out_dim_of[i] < 0) bi.push_back(oi[i]);
  Shape64 si(sizes.size(), 0);
  for (size_t i = 0; i < oi.size(); ++i)
    if (p.out_dim_of[i] >= 0) si[static_cast<size_t>(p.out_dim_of[i])] = oi[i];
  for (size_t d = 0; d < sizes.size(); ++d)
    if (p.per_dim[d]) {
      int64_t v = static_cast<int64_t>(bcast_at(*p.per_dim[d], bi, p.bshape));
      si[d] = v < 0 ? v + sizes[d] : v;
    }
  Shape64 st = contiguous_strides_of(sizes);
  int64_t off = 0;
  for (size_t d = 0; d < sizes.size(); ++d) off += si[d] * st[d];
  return off;
}
std::vector<std::optional<RT>> ref_list(const V& x, const Pattern& pat) {
  std::vector<std::optional<RT>> out;
  for (int k : pat) out.push_back(k == kAll ? std::nullopt : std::optional<RT>(x[static_cast<size_t>(k)]));
  return out;
}

RT index_ref(const RT& self, const std::vector<std::optional<RT>>& list) {
  RefPlan p = ref_plan(self.sizes, list);
  RT out{p.out_sizes, {}, self.dtype};
  for (int64_t k = 0; k < numel_of(p.out_sizes); ++k) out.v.push_back(self.v[ref_source(p, self.sizes, k)]);
  return out;
}
RT index_put_ref(const RT& self, const std::vector<std::optional<RT>>& list, const RT& values, bool accumulate) {
  RefPlan p = ref_plan(self.sizes, list);
  RT out = self;
  for (int64_t k = 0; k < numel_of(p.out_sizes); ++k) {
    const double v = bcast_at(values, unravel(k, p.out_sizes), p.out_sizes);
    double& dst = out.v[ref_source(p, self.sizes, k)];
    dst = accumulate ? dst + v : v;
  }
  return out;
}

// index(x[0], pattern over x[1..]).
OpCase index_case(std::string variant, Pattern pat, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [pat](const TensorList& x) { return TensorList{index(x[0], build_indices(x, pat))}; };
  c.ref = [pat](const V& x) { return V{index_ref(x[0], ref_list(x, pat))}; };
  return c;
}
// index_put(x[0], pattern, x.back(), accumulate).
OpCase index_put_case(std::string variant, Pattern pat, bool accumulate, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [pat, accumulate](const TensorList& x) {
    return TensorList{index_put(x[0], build_indices(x, pat), x.back(), accumulate)};
  };
  c.ref = [pat, accumulate](const V& x) { return V{index_put_ref(x[0], ref_list(x, pat), x.back(), accumulate)}; };
  return c;
}

}  // namespace

void register_indexing(Registry& r) {
  r.push_back(
      {"index",
       {f32(index_case("int_dim0", {1},
                       {{"4x3_idx3_dup", {rnd({4, 3}), ints({3}, {2, 0, 2})}},
                        {"4x3_idx2x2_neg", {rnd({4, 3}), ints({2, 2}, {-1, 0, 3, -4})}},
                        {"3x2_idx0d", {rnd({3, 2}), ints({}, {1})}},
                        {"3x2_idx_empty", {rnd({3, 2}), ints({0}, {})}},
                        {"empty_0x2_idx_empty", {rnd({0, 2}), ints({0}, {})}}})),
        index_case("adjacent_bcast", {kAll, 1, 2},
                   {{"2x3x4_idx2_idx2x1", {rnd({2, 3, 4}), ints({2}, {0, -1}), ints({2, 1}, {1, 2})}},
                    {"2x3x4_idx0d_idx3", {rnd({2, 3, 4}), ints({}, {2}), ints({3}, {3, 0, 3})}}}),
        index_case("separated", {1, kAll, 2},
                   {{"2x3x4_idx2_idx2", {rnd({2, 3, 4}), ints({2}, {0, 1}), ints({2}, {1, 2})}},
                    {"2x3x4_bcast_idx2x1_idx3", {rnd({2, 3, 4}), ints({2, 1}, {1, 0}), ints({3}, {3, 2, -1})}}}),
        index_case("mask_all_dims", {1},
                   {{"2x3_mask2x3", {rnd({2, 3}), bools({2, 3}, {1, 0, 1, 1, 1, 0})}},
                    {"2x3_mask_none", {rnd({2, 3}), bools({2, 3}, {0, 0, 0, 0, 0, 0})}}}),
        index_case("mask_dim1_then_int", {kAll, 1, 2},
                   {{"2x3x4_mask3_idx2", {rnd({2, 3, 4}), bools({3}, {1, 0, 1}), ints({2}, {0, 1})}}}),
        index_case("mask_dim0_sep_int", {1, kAll, 2},
                   {{"2x3x4_mask2_idx2", {rnd({2, 3, 4}), bools({2}, {1, 1}), ints({2}, {1, 2})}}})}});
  r.push_back(
      {"index_put",
       {f32(index_put_case("int_dim0", {1}, false,
                           {{"4x3_idx2_v2x3", {rnd({4, 3}), ints({2}, {2, 0}), rnd({2, 3})}},
                            {"4x3_idx2_bcast_v3", {rnd({4, 3}), ints({2}, {-1, 1}), rnd({3})}},
                            {"4x3_idx2_bcast_v0d", {rnd({4, 3}), ints({2}, {3, 1}), rnd({})}},
                            {"4x3_idx_empty", {rnd({4, 3}), ints({0}, {}), rnd({3})}}})),
        index_put_case("accumulate_dup", {1}, true,
                       {{"4x3_idx3_dup", {rnd({4, 3}), ints({3}, {2, 0, 2}), rnd({3, 3})}},
                        {"4_idx4_dup_bcast_v0d", {rnd({4}), ints({4}, {1, 1, 3, 1}), rnd({})}}}),
        index_put_case("adjacent", {kAll, 1, 2}, false,
                       {{"2x3x4_idx2_idx2", {rnd({2, 3, 4}), ints({2}, {0, 2}), ints({2}, {1, -1}), rnd({2, 2})}},
                        {"2x3x4_bcast_v1x2", {rnd({2, 3, 4}), ints({2}, {1, 2}), ints({2}, {3, 0}), rnd({1, 2})}}}),
        index_put_case("separated_accumulate", {1, kAll, 2}, true,
                       {{"2x3x4_idx2_idx2", {rnd({2, 3, 4}), ints({2}, {0, 0}), ints({2}, {1, 1}), rnd({2, 3})}}}),
        index_put_case("mask", {1}, false,
                       {{"2x3_mask2x3", {rnd({2, 3}), bools({2, 3}, {1, 0, 0, 1, 1, 0}), rnd({3})}},
                        {"2x3_mask2_bcast_v3", {rnd({2, 3}), bools({2}, {0, 1}), rnd({3})}}})}});
  {
    OpCase c;
    c.variant = "";
    c.samples = {{"2x3_float", {vals({2, 3}, {0, 1.5, 0, -2, 0, 3})}},
                 {"bool_4", {bools({4}, {1, 0, 0, 1})}},
                 {"int_2x2", {ints({2, 2}, {0, 7, 0, 0})}},
                 {"0d_nonzero", {vals({}, {2})}},
                 {"0d_zero", {vals({}, {0})}},
                 {"empty_2x0", {vals({2, 0}, {})}}};
    c.fn = [](const TensorList& x) { return TensorList{nonzero(x[0])}; };
    c.ref = [](const V& x) {
      auto nz = nonzero_ref(x[0]);
      RT out{{static_cast<int64_t>(nz.size()), x[0].dim()}, {}, kInt64};
      for (auto& ix : nz)
        for (auto i : ix) out.v.push_back(static_cast<double>(i));
      return V{out};
    };
    c.differentiable = false;
    r.push_back({"nonzero", {c}});
    // nonzero_numpy: the same indices, one int64 tensor per dim (a 0-d input as 1-D)
    OpCase n = c;
    n.fn = [](const TensorList& x) { return nonzero_numpy(x[0]); };
    n.ref = [](const V& x) {
      auto nz = nonzero_ref(x[0]);
      V out;
      for (int64_t d = 0; d < std::max<int64_t>(x[0].dim(), 1); ++d) {
        RT col{{static_cast<int64_t>(nz.size())}, {}, kInt64};
        for (auto& ix : nz) col.v.push_back(x[0].dim() == 0 ? 0.0 : static_cast<double>(ix[static_cast<size_t>(d)]));
        out.push_back(col);
      }
      return out;
    };
    r.push_back({"nonzero_numpy", {n}});
  }
  {
    OpCase c;
    c.variant = "";
    c.samples = {{"2x3_mask2x3", {rnd({2, 3}), bools({2, 3}, {1, 0, 1, 1, 1, 0})}},
                 {"bcast_3_mask2x3", {rnd({3}), bools({2, 3}, {1, 0, 1, 0, 1, 1})}},
                 {"bcast_2x3_mask3", {rnd({2, 3}), bools({3}, {0, 1, 1})}},
                 {"0d_mask0d", {rnd({}), bools({}, {1})}},
                 {"empty_0x3_mask3", {rnd({0, 3}), bools({3}, {1, 1, 0})}}};
    c.fn = [](const TensorList& x) { return TensorList{masked_select(x[0], x[1])}; };
    c.ref = [](const V& x) {
      Shape64 b = broadcast(x[0].sizes, x[1].sizes);
      RT out{{0}, {}, kFloat64};
      for (int64_t k = 0; k < numel_of(b); ++k) {
        Shape64 idx = unravel(k, b);
        if (bcast_at(x[1], idx, b) != 0) out.v.push_back(bcast_at(x[0], idx, b));
      }
      out.sizes = {static_cast<int64_t>(out.v.size())};
      return V{out};
    };
    r.push_back({"masked_select", {f32(c)}});
  }
}

}  // namespace graft::testing
