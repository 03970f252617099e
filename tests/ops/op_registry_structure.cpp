// Registry entries: diagonals (diagonal, trace, diag, diag_embed, block_diag), vector geometry
// (cross, linalg_cross, cdist), grids and gathers (meshgrid, cartesian_prod, take_along_dim,
// nan_to_num), counting and searching (searchsorted, bucketize, isin, bincount, histc, unique,
// unique_consecutive). References are element loops.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// The offset-th diagonal of a 2-D a.
RT diagonal_2d(const RT& a, int64_t offset) {
  RT out{{0}, {}, a.dtype};
  for (int64_t i = 0; i < a.sizes[0]; ++i) {
    const int64_t j = i + offset;
    if (j >= 0 && j < a.sizes[1]) out.v.push_back(at(a, {i, j}));
  }
  out.sizes[0] = static_cast<int64_t>(out.v.size());
  return out;
}

// A square matrix with the 1-D a on its offset-th diagonal.
RT embedded(const RT& a, int64_t offset) {
  const int64_t n = a.sizes[0] + std::abs(offset);
  RT out{{n, n}, std::vector<double>(static_cast<size_t>(n * n), 0.0), a.dtype};
  for (int64_t i = 0; i < a.sizes[0]; ++i) {
    const int64_t row = offset >= 0 ? i : i - offset, col = offset >= 0 ? i + offset : i;
    out.v[static_cast<size_t>(row * n + col)] = a.v[static_cast<size_t>(i)];
  }
  return out;
}

void register_diagonals(Registry& r) {
  r.push_back(
      {"diagonal",
       {f32(with(
            "", {{"3x4", {rnd({3, 4})}}, {"2x0", {rnd({2, 0})}}},
            [](const TensorList& x) { return TensorList{x[0].diagonal()}; },
            [](const V& x) { return V{diagonal_2d(x[0], 0)}; })),
        with(
            "offset1", {{"3x4", {rnd({3, 4})}}}, [](const TensorList& x) { return TensorList{x[0].diagonal(1)}; },
            [](const V& x) { return V{diagonal_2d(x[0], 1)}; }),
        with(
            "offset_neg2_dims10", {{"4x3", {rnd({4, 3})}}},
            [](const TensorList& x) { return TensorList{x[0].diagonal(-2, 1, 0)}; },
            [](const V& x) {
              return V{diagonal_2d(permute_ref(x[0], {1, 0}), -2)};
            }),
        with(
            "batched_dims02", {{"2x3x2", {rnd({2, 3, 2})}}},
            [](const TensorList& x) { return TensorList{x[0].diagonal(0, 0, 2)}; },
            [](const V& x) {
              RT out{{3, 2}, {}, kFloat64};
              for (int64_t j = 0; j < 3; ++j)
                for (int64_t i = 0; i < 2; ++i) out.v.push_back(at(x[0], {i, j, i}));
              return V{out};
            })}});
  r.push_back({"trace",
               {with(
                   "", {{"3x4", {rnd({3, 4})}}, {"int_2x2", {ints({2, 2}, {1, 2, 3, 4})}}},
                   [](const TensorList& x) { return TensorList{trace(x[0])}; },
                   [](const V& x) {
                     double s = 0;
                     for (double v : diagonal_2d(x[0], 0).v) s += v;
                     return V{RT{{}, {s}, x[0].floating() ? kFloat64 : kInt64}};
                   })}});
  r.push_back(
      {"diag",
       {with(
            "vector_offset_neg1", {{"3", {rnd({3})}}}, [](const TensorList& x) { return TensorList{diag(x[0], -1)}; },
            [](const V& x) { return V{embedded(x[0], -1)}; }),
        with(
            "matrix_offset1", {{"3x4", {rnd({3, 4})}}}, [](const TensorList& x) { return TensorList{diag(x[0], 1)}; },
            [](const V& x) { return V{diagonal_2d(x[0], 1)}; })}});
  r.push_back(
      {"diag_embed",
       {with(
           "offset1", {{"2x3", {rnd({2, 3})}}}, [](const TensorList& x) { return TensorList{diag_embed(x[0], 1)}; },
           [](const V& x) {
             RT out{{2, 4, 4}, {}, kFloat64};
             for (int64_t b = 0; b < 2; ++b) {
               RT row{{3}, {x[0].v.begin() + b * 3, x[0].v.begin() + b * 3 + 3}, kFloat64};
               RT m = embedded(row, 1);
               out.v.insert(out.v.end(), m.v.begin(), m.v.end());
             }
             return V{out};
           })}});
  r.push_back({"block_diag",
               {with(
                   "", {{"2x2_3_0d", {rnd({2, 2}), rnd({3}), rnd({})}}},
                   [](const TensorList& x) { return TensorList{block_diag(x)}; },
                   [](const V& x) {
                     RT out{{4, 6}, std::vector<double>(24, 0.0), kFloat64};
                     auto put = [&](int64_t i, int64_t j, double v) { out.v[static_cast<size_t>(i * 6 + j)] = v; };
                     for (int64_t i = 0; i < 2; ++i)
                       for (int64_t j = 0; j < 2; ++j) put(i, j, at(x[0], {i, j}));
                     for (int64_t j = 0; j < 3; ++j) put(2, 2 + j, x[1].v[static_cast<size_t>(j)]);
                     put(3, 5, x[2].v[0]);
                     return V{out};
                   })}});
}

// The cross product of the 3-vectors along dim (a and b of one shape).
RT cross_ref(const RT& a, const RT& b, int64_t dim) {
  const RT bb = zip(a, b, [](double, double y) { return y; });  // b broadcast to the common shape
  const RT aa = zip(a, b, [](double x, double) { return x; });
  RT out = aa;
  const int64_t d = dim < 0 ? dim + aa.dim() : dim;
  for (int64_t k = 0; k < numel_of(aa.sizes); ++k) {
    Shape64 idx = unravel(k, aa.sizes);
    const int64_t c = idx[static_cast<size_t>(d)];
    auto get = [&](const RT& t, int64_t i) {
      Shape64 j = idx;
      j[static_cast<size_t>(d)] = i;
      return at(t, j);
    };
    const int64_t p = (c + 1) % 3, q = (c + 2) % 3;
    out.v[static_cast<size_t>(k)] = get(aa, p) * get(bb, q) - get(aa, q) * get(bb, p);
  }
  return out;
}

void register_vector_geometry(Registry& r) {
  r.push_back({"linalg_cross",
               {f32(with(
                   "dim_last", {{"2x3_2x3", {rnd({2, 3}), rnd({2, 3})}}, {"2x3_1x3", {rnd({2, 3}), rnd({1, 3})}}},
                   [](const TensorList& x) { return TensorList{linalg_cross(x[0], x[1])}; },
                   [](const V& x) { return V{cross_ref(x[0], x[1], -1)}; }))}});
  r.push_back({"cross",
               {with(
                    "default_dim", {{"3x2_3x2", {rnd({3, 2}), rnd({3, 2})}}},
                    [](const TensorList& x) { return TensorList{cross(x[0], x[1])}; },
                    [](const V& x) { return V{cross_ref(x[0], x[1], 0)}; }),
                with(
                    "dim1", {{"2x3_2x3", {rnd({2, 3}), rnd({2, 3})}}},
                    [](const TensorList& x) { return TensorList{cross(x[0], x[1], 1)}; },
                    [](const V& x) { return V{cross_ref(x[0], x[1], 1)}; })}});
  auto cdist_ref = [](double p) {
    return [p](const V& x) {
      const RT& a = x[0];
      const RT& b = x[1];
      const int64_t P = a.sizes[0], R = b.sizes[0], M = a.sizes[1];
      RT out{{P, R}, {}, kFloat64};
      for (int64_t i = 0; i < P; ++i)
        for (int64_t j = 0; j < R; ++j) {
          std::vector<double> diff;
          for (int64_t k = 0; k < M; ++k) diff.push_back(std::abs(at(a, {i, k}) - at(b, {j, k})));
          double s = 0;
          if (std::isinf(p))
            s = *std::max_element(diff.begin(), diff.end());
          else {
            for (double dv : diff) s += std::pow(dv, p);
            s = std::pow(s, 1 / p);
          }
          out.v.push_back(s);
        }
      return V{out};
    };
  };
  std::vector<Sample> s = {{"3x2_4x2", {rnd({3, 2}), rnd({4, 2})}}};
  auto cd = [&](std::string variant, double p, std::optional<int64_t> mode) {
    return with(
        std::move(variant), s, [p, mode](const TensorList& x) { return TensorList{cdist(x[0], x[1], p, mode)}; },
        cdist_ref(p));
  };
  r.push_back({"cdist",
               {f32(cd("p2", 2, std::nullopt)), cd("p2_by_mm", 2, 1), cd("p1", 1, std::nullopt),
                cd("p3", 3, std::nullopt), cd("inf", INFINITY, std::nullopt)}});
}

void register_grids(Registry& r) {
  r.push_back({"meshgrid",
               {with(
                    "ij", {{"2_3", {rnd({2}), rnd({3})}}}, [](const TensorList& x) { return meshgrid(x, "ij"); },
                    [](const V& x) {
                      RT g0{{2, 3}, {}, kFloat64}, g1{{2, 3}, {}, kFloat64};
                      for (int64_t i = 0; i < 2; ++i)
                        for (int64_t j = 0; j < 3; ++j)
                          g0.v.push_back(x[0].v[static_cast<size_t>(i)]),
                              g1.v.push_back(x[1].v[static_cast<size_t>(j)]);
                      return V{g0, g1};
                    }),
                with(
                    "xy", {{"2_3", {rnd({2}), rnd({3})}}}, [](const TensorList& x) { return meshgrid(x, "xy"); },
                    [](const V& x) {
                      RT g0{{3, 2}, {}, kFloat64}, g1{{3, 2}, {}, kFloat64};
                      for (int64_t i = 0; i < 3; ++i)
                        for (int64_t j = 0; j < 2; ++j)
                          g0.v.push_back(x[0].v[static_cast<size_t>(j)]),
                              g1.v.push_back(x[1].v[static_cast<size_t>(i)]);
                      return V{g0, g1};
                    })}});
  r.push_back(
      {"cartesian_prod",
       {with(
           "", {{"2_3", {rnd({2}), rnd({3})}}}, [](const TensorList& x) { return TensorList{cartesian_prod(x)}; },
           [](const V& x) {
             RT out{{6, 2}, {}, kFloat64};
             for (int64_t i = 0; i < 2; ++i)
               for (int64_t j = 0; j < 3; ++j)
                 out.v.push_back(x[0].v[static_cast<size_t>(i)]), out.v.push_back(x[1].v[static_cast<size_t>(j)]);
             return V{out};
           })}});
  r.push_back({"take_along_dim",
               {with(
                    "dim1_bcast", {{"2x3_1x2", {rnd({2, 3}), ints({1, 2}, {2, 0})}}},
                    [](const TensorList& x) { return TensorList{take_along_dim(x[0], x[1], 1)}; },
                    [](const V& x) {
                      RT out{{2, 2}, {}, kFloat64};
                      for (int64_t i = 0; i < 2; ++i)
                        for (int64_t j = 0; j < 2; ++j)
                          out.v.push_back(at(x[0], {i, static_cast<int64_t>(x[1].v[static_cast<size_t>(j)])}));
                      return V{out};
                    }),
                with(
                    "flat", {{"2x3_3", {rnd({2, 3}), ints({3}, {5, 0, 3})}}},
                    [](const TensorList& x) { return TensorList{take_along_dim(x[0], x[1])}; },
                    [](const V& x) {
                      RT out{{3}, {}, kFloat64};
                      for (double i : x[1].v) out.v.push_back(x[0].v[static_cast<size_t>(i)]);
                      return V{out};
                    })}});
  const double big = std::numeric_limits<double>::max();
  r.push_back(
      {"nan_to_num",
       {with(
            "defaults", {{"2x3", {rnd({2, 3})}}, {"special_4", {vals({4}, {NAN, INFINITY, -INFINITY, 1.5})}, false}},
            [](const TensorList& x) { return TensorList{nan_to_num(x[0])}; },
            [big](const V& x) {
              return V{map(x[0], [big](double v) {
                return std::isnan(v) ? 0 : v == INFINITY ? big : v == -INFINITY ? -big : v;
              })};
            }),
        with(
            "given", {{"special_4", {vals({4}, {NAN, INFINITY, -INFINITY, 1.5})}, false}},
            [](const TensorList& x) { return TensorList{nan_to_num(x[0], 1.0, 2.0, -3.0)}; },
            [](const V& x) {
              return V{map(x[0], [](double v) {
                return std::isnan(v) ? 1 : v == INFINITY ? 2 : v == -INFINITY ? -3 : v;
              })};
            },
            /*differentiable=*/false)}});
}

// The insertion point of v in the ascending lane (right: after its equals); NaN goes last.
double insertion(const std::vector<double>& lane, double v, bool right) {
  int64_t k = 0;
  for (double x : lane) k += right ? (x <= v) : (x < v);
  return std::isnan(v) ? static_cast<double>(lane.size()) : static_cast<double>(k);
}

void register_searching(Registry& r) {
  auto search_ref = [](bool right) {
    return [right](const V& x) {
      RT out = map(
          x[1], [&](double v) { return insertion(x[0].v, v, right); }, kInt64);
      return V{out};
    };
  };
  std::vector<Sample> s = {{"sorted5_2x3", {vals({5}, {-1, 0, 0, 2, 3.5}), vals({2, 3}, {0, -2, 4, 2, NAN, 1})}, false},
                           {"int_sorted3_4", {ints({3}, {1, 3, 5}), ints({4}, {3, 6, 0, 1})}, false}};
  OpCase rows = with(
      "rows_2x3_2x2", {{"rows", {vals({2, 3}, {1, 2, 3, 0, 5, 9}), vals({2, 2}, {2, 9, 5, -1})}, false}},
      [](const TensorList& x) { return TensorList{searchsorted(x[0], x[1])}; },
      [](const V& x) {
        RT out{{2, 2}, {}, kInt64};
        for (int64_t i = 0; i < 2; ++i) {
          std::vector<double> lane(x[0].v.begin() + i * 3, x[0].v.begin() + i * 3 + 3);
          for (int64_t j = 0; j < 2; ++j)
            out.v.push_back(insertion(lane, x[1].v[static_cast<size_t>(i * 2 + j)], false));
        }
        return V{out};
      },
      false);
  r.push_back({"searchsorted",
               {with(
                    "left", s, [](const TensorList& x) { return TensorList{searchsorted(x[0], x[1])}; },
                    search_ref(false), false),
                with(
                    "right", s, [](const TensorList& x) { return TensorList{searchsorted(x[0], x[1], false, true)}; },
                    search_ref(true), false),
                rows}});
  r.push_back({"bucketize",
               {with(
                   "right", s, [](const TensorList& x) { return TensorList{bucketize(x[1], x[0], false, true)}; },
                   search_ref(true), false)}});
  r.push_back({"isin",
               {with(
                   "", {{"2x3_4", {vals({2, 3}, {1, 2, NAN, 4, 2, 0}), vals({4}, {2, 4, NAN, 7})}, false}},
                   [](const TensorList& x) { return TensorList{isin(x[0], x[1])}; },
                   [](const V& x) {
                     return V{map(
                         x[0],
                         [&](double v) {
                           return static_cast<double>(std::find(x[1].v.begin(), x[1].v.end(), v) != x[1].v.end());
                         },
                         kBool)};
                   },
                   false)}});
  r.push_back({"bincount",
               {with(
                   "weights", {{"5_5", {ints({5}, {1, 3, 1, 0, 3}), vals({5}, {0.5, 1, 2, -1, 4})}, false}},
                   [](const TensorList& x) { return TensorList{bincount(x[0], x[1], 6)}; },
                   [](const V& x) {
                     RT out{{6}, std::vector<double>(6, 0.0), kFloat64};
                     for (size_t i = 0; i < 5; ++i) out.v[static_cast<size_t>(x[0].v[i])] += x[1].v[i];
                     return V{out};
                   },
                   false)}});
  r.push_back({"histc",
               {with(
                    "range", {{"6", {vals({6}, {0, 0.5, 1, 1.99, 2, 3})}, false}},
                    [](const TensorList& x) { return TensorList{histc(x[0], 4, 0, 2)}; },
                    [](const V&) {
                      return V{RT{{4}, {1, 1, 1, 2}, kFloat64}};
                    },
                    false),
                with(
                    "data_range", {{"4", {vals({4}, {1, 2, 2, 5})}, false}},
                    [](const TensorList& x) { return TensorList{histc(x[0], 2)}; },
                    [](const V&) {
                      return V{RT{{2}, {3, 1}, kFloat64}};
                    },
                    false)}});
  auto unique_ref = [](bool consecutive) {
    return [consecutive](const V& x) {
      std::vector<double> values;
      RT inverse{x[0].sizes, {}, kInt64}, counts{{0}, {}, kInt64};
      std::vector<double> order = x[0].v;
      if (!consecutive) std::sort(order.begin(), order.end());
      for (double v : order)
        if (values.empty() || values.back() != v) values.push_back(v), counts.v.push_back(0);
      for (size_t i = 0, run = 0; i < x[0].v.size(); ++i) {
        const double v = x[0].v[i];
        if (consecutive && i > 0 && x[0].v[i - 1] != v) ++run;
        const size_t k =
            consecutive ? run : static_cast<size_t>(std::find(values.begin(), values.end(), v) - values.begin());
        inverse.v.push_back(static_cast<double>(k));
        counts.v[k] += 1;
      }
      counts.sizes[0] = static_cast<int64_t>(counts.v.size());
      return V{RT{{static_cast<int64_t>(values.size())}, values, x[0].dtype}, inverse, counts};
    };
  };
  std::vector<Sample> u = {{"int_2x3", {ints({2, 3}, {3, 1, 3, 2, 2, 1})}, false},
                           {"float_5", {vals({5}, {0.5, 0.5, -1, 2, 0.5})}, false}};
  r.push_back(
      {"unique",
       {with(
           "", u, [](const TensorList& x) { return unique(x[0], true, true, true); }, unique_ref(false), false)}});
  r.push_back(
      {"unique_consecutive",
       {with(
           "", u, [](const TensorList& x) { return unique_consecutive(x[0], true, true); }, unique_ref(true), false)}});
}

}  // namespace

void register_structure_search(Registry& r) {
  register_diagonals(r);
  register_vector_geometry(r);
  register_grids(r);
  register_searching(r);
}

}  // namespace graft::testing
