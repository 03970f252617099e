// Registry entries: writes at indices (scatter, index_copy, masked_scatter and their in-place
// forms) and the random draws whose degenerate cases are exact (bernoulli of probabilities 0 and
// 1, normal with a zero standard deviation). References are element loops.
#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// An in-place case: compared with its out-of-place op too.
OpCase inplace_of(OpCase c, TensorFn outplace) {
  c.outplace = std::move(outplace);
  return c;
}

// self with src (or value) written along dim where index says, element by element in order.
RT scatter_ref(const RT& self, int64_t dim, const RT& index, const RT* src, double value) {
  RT out = self;
  for (int64_t k = 0; k < index.numel(); ++k) {
    Shape64 idx = unravel(k, index.sizes);
    Shape64 target = idx;
    target[static_cast<size_t>(dim)] = static_cast<int64_t>(index.v[static_cast<size_t>(k)]);
    out.v[static_cast<size_t>(flat_at(self.sizes, target))] =
        src ? src->v[static_cast<size_t>(flat_at(src->sizes, idx))] : value;
  }
  return out;
}

// self with source's slices along dim (0 here) written at the rows index lists.
RT index_copy_ref(const RT& self, const RT& index, const RT& source) {
  RT out = self;
  const int64_t row = self.numel() / self.sizes[0];
  for (int64_t i = 0; i < index.numel(); ++i)
    for (int64_t j = 0; j < row; ++j)
      out.v[static_cast<size_t>(static_cast<int64_t>(index.v[static_cast<size_t>(i)]) * row + j)] =
          source.v[static_cast<size_t>(i * row + j)];
  return out;
}

RT masked_scatter_ref(const RT& self, const RT& mask, const RT& source) {
  RT out = self;
  size_t next = 0;
  for (size_t k = 0; k < out.v.size(); ++k)
    if (mask.v[k] != 0) out.v[k] = source.v[next++];
  return out;
}

void register_writes(Registry& r) {
  const std::vector<Sample> s = {
      {"3x2_idx2x2_src2x3", {rnd({3, 2}), ints({2, 2}, {2, 0, 1, 2}), rnd({2, 3})}},
      {"dup_2x2_idx2x2_src2x2", {rnd({2, 2}), ints({2, 2}, {1, 0, 1, 0}), rnd({2, 2})}, false},
      {"empty_idx", {rnd({2, 2}), ints({0, 2}, {}), rnd({1, 2})}}};
  r.push_back({"scatter",
               {f32(with(
                    "src_dim0", s, [](const TensorList& x) { return TensorList{x[0].scatter(0, x[1], x[2])}; },
                    [](const V& x) { return V{scatter_ref(x[0], 0, x[1], &x[2], 0)}; })),
                with(
                    "value_dim1", {{"2x3_idx2x1", {rnd({2, 3}), ints({2, 1}, {2, 0})}}},
                    [](const TensorList& x) { return TensorList{scatter(x[0], 1, x[1], 1.5)}; },
                    [](const V& x) { return V{scatter_ref(x[0], 1, x[1], nullptr, 1.5)}; })}});
  r.push_back({"scatter_",
               {inplace_of(with(
                               "src_dim0", s,
                               [](const TensorList& x) {
                                 Tensor self = x[0].clone();
                                 return TensorList{self.scatter_(0, x[1], x[2])};
                               },
                               [](const V& x) { return V{scatter_ref(x[0], 0, x[1], &x[2], 0)}; }),
                           [](const TensorList& x) { return TensorList{x[0].scatter(0, x[1], x[2])}; })}});
  const std::vector<Sample> c = {{"3x2_idx2_src2x2", {rnd({3, 2}), ints({2}, {2, 0}), rnd({2, 2})}}};
  r.push_back({"index_copy",
               {f32(with(
                   "dim0", c, [](const TensorList& x) { return TensorList{x[0].index_copy(0, x[1], x[2])}; },
                   [](const V& x) { return V{index_copy_ref(x[0], x[1], x[2])}; }))}});
  r.push_back({"index_copy_",
               {inplace_of(with(
                               "dim0", c,
                               [](const TensorList& x) {
                                 Tensor self = x[0].clone();
                                 return TensorList{self.index_copy_(0, x[1], x[2])};
                               },
                               [](const V& x) { return V{index_copy_ref(x[0], x[1], x[2])}; }),
                           [](const TensorList& x) { return TensorList{x[0].index_copy(0, x[1], x[2])}; })}});
  const std::vector<Sample> m = {{"2x3_mask2x3_src5", {rnd({2, 3}), bools({2, 3}, {1, 0, 1, 1, 0, 0}), rnd({5})}}};
  r.push_back({"masked_scatter",
               {with(
                   "", m, [](const TensorList& x) { return TensorList{x[0].masked_scatter(x[1], x[2])}; },
                   [](const V& x) { return V{masked_scatter_ref(x[0], x[1], x[2])}; })}});
  r.push_back({"masked_scatter_",
               {inplace_of(with(
                               "", m,
                               [](const TensorList& x) {
                                 Tensor self = x[0].clone();
                                 return TensorList{self.masked_scatter_(x[1], x[2])};
                               },
                               [](const V& x) { return V{masked_scatter_ref(x[0], x[1], x[2])}; }),
                           [](const TensorList& x) { return TensorList{x[0].masked_scatter(x[1], x[2])}; })}});
}

void register_draws(Registry& r) {
  r.push_back({"bernoulli",
               {with(
                    "certain", {{"0_1", {vals({2, 2}, {0, 1, 1, 0})}}},
                    [](const TensorList& x) { return TensorList{x[0].bernoulli()}; },
                    [](const V& x) { return V{x[0]}; }, false),
                with(
                    "p1", {{"2x3", {rnd({2, 3})}}}, [](const TensorList& x) { return TensorList{x[0].bernoulli(1.0)}; },
                    [](const V& x) { return V{map(x[0], [](double) { return 1.0; })}; }, false)}});
  r.push_back({"normal",
               {with(
                    "std0_tensor_mean", {{"2x3", {rnd({2, 3})}}},
                    [](const TensorList& x) { return TensorList{normal(x[0], 0.0)}; },
                    [](const V& x) { return V{x[0]}; }, false),
                with(
                    "std0_tensors", {{"2x3_3", {rnd({2, 3}), vals({3}, {0, 0, 0})}}},
                    [](const TensorList& x) { return TensorList{normal(x[0], x[1])}; },
                    [](const V& x) { return V{x[0]}; }, false)}});
}

}  // namespace

void register_scatter_and_draws(Registry& r) {
  register_writes(r);
  register_draws(r);
}

}  // namespace graft::testing
