// Registry entries: reductions, softmax family, sum_to; sorting (sort, argsort, topk) and
// cumsum along a dim.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
using Group = std::vector<double>;

double sum_of(const Group& g) { return std::accumulate(g.begin(), g.end(), 0.0); }
double mean_of(const Group& g) { return sum_of(g) / static_cast<double>(g.size()); }
double prod_of(const Group& g) {
  double p = 1;
  for (double x : g) p *= x;
  return p;
}
// NaN propagates (and is the arg of max/min: its first occurrence), as in PyTorch.
double argmax_of(const Group& g) {
  size_t k = 0;
  for (size_t i = 1; i < g.size(); ++i) {
    if (std::isnan(g[k])) break;
    if (std::isnan(g[i]) || g[i] > g[k]) k = i;
  }
  return static_cast<double>(k);
}
double argmin_of(const Group& g) {
  size_t k = 0;
  for (size_t i = 1; i < g.size(); ++i) {
    if (std::isnan(g[k])) break;
    if (std::isnan(g[i]) || g[i] < g[k]) k = i;
  }
  return static_cast<double>(k);
}
double max_of(const Group& g) { return g[static_cast<size_t>(argmax_of(g))]; }
double min_of(const Group& g) { return g[static_cast<size_t>(argmin_of(g))]; }
double var_of(const Group& g, int64_t correction) {
  double m = mean_of(g), s = 0;
  for (double x : g) s += (x - m) * (x - m);
  return s / static_cast<double>(static_cast<int64_t>(g.size()) - correction);
}
double lse_of(const Group& g) {
  double m = max_of(g), s = 0;
  for (double x : g) s += std::exp(x - m);
  return m + std::log(s);
}

// A reduction case over `dims` with reference f.
OpCase red(std::string variant, std::function<Tensor(const Tensor&)> fn, Shape64 dims, bool keepdim,
           std::function<double(const Group&)> f, std::vector<Sample> samples, DType out = kFloat64,
           bool differentiable = true) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [fn](const TensorList& x) { return TensorList{fn(x[0])}; };
  c.ref = [dims, keepdim, f, out](const V& x) { return V{reduce(x[0], dims, keepdim, f, out)}; };
  c.differentiable = differentiable && is_floating_point(out);
  return c;
}
std::vector<Sample> all_samples(bool with_empty = true) {
  std::vector<Sample> s = {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}, {"2x1x3", {rnd({2, 1, 3})}}};
  if (with_empty) s.push_back({"empty_0x3", {rnd({0, 3})}});
  return s;
}
std::vector<Sample> dim1_samples(bool with_empty = true) {
  std::vector<Sample> s = {{"2x3", {rnd({2, 3})}}, {"3x2x2", {rnd({3, 2, 2})}}};
  if (with_empty) s.push_back({"empty_0x3", {rnd({0, 3})}});
  return s;
}
std::vector<Sample> with_ties(std::vector<Sample> s) {
  s.push_back({"ties_2x3", {vals({2, 3}, {1, 3, 3, 2, 2, 0})}, false});
  s.push_back({"nan_2x3", {vals({2, 3}, {1, NAN, 3, 2, 5, NAN})}, false});
  return s;
}

V softmax_ref(const RT& a, int64_t dim, bool log) {
  return V{along(a, dim, [log](const Group& g) {
    double l = lse_of(g);
    Group out;
    for (double x : g) out.push_back(log ? x - l : std::exp(x - l));
    return out;
  })};
}

// ---- sorting and scans along a dim: lane references (plain loops) ----
// A lane's stable order: ascending with NaN last, descending with NaN first; ties by position.
std::vector<double> lane_order(const Group& lane, bool descending) {
  std::vector<double> order(lane.size());
  std::iota(order.begin(), order.end(), 0.0);
  auto rank = [](double x) { return std::isnan(x) ? INFINITY : x; };  // NaN above +inf
  std::stable_sort(order.begin(), order.end(), [&](double i, double j) {
    const double a = lane[static_cast<size_t>(i)], b = lane[static_cast<size_t>(j)];
    if (std::isnan(a) != std::isnan(b)) return descending ? std::isnan(a) : std::isnan(b);
    return descending ? rank(a) > rank(b) : rank(a) < rank(b);
  });
  return order;
}
Group lane_sorted(const Group& lane, bool descending) {
  Group out;
  for (double i : lane_order(lane, descending)) out.push_back(lane[static_cast<size_t>(i)]);
  return out;
}
// The first k along dim of a (a window of its row-major layout).
RT first_k(const RT& a, int64_t dim, int64_t k) {
  if (a.dim() == 0) return a;
  Shape64 sizes = a.sizes;
  sizes[static_cast<size_t>(dim)] = k;
  return window(a, sizes, contiguous_strides_of(a.sizes), 0);
}
// sort / topk over dim: (values, indices), the first k of each sorted lane (k < 0: all)
V sorted_ref(const RT& a, int64_t dim, bool descending, int64_t k = -1) {
  RT values = along(a, dim, [descending](const Group& g) { return lane_sorted(g, descending); });
  RT indices = along(a, dim, [descending](const Group& g) { return lane_order(g, descending); });
  indices.dtype = kInt64;
  if (k < 0) return V{values, indices};
  const int64_t d = a.dim() == 0 ? 0 : (dim < 0 ? dim + a.dim() : dim);
  return V{first_k(values, d, k), first_k(indices, d, k)};
}
// Samples for the sorting cases: distinct values (gradcheck) and, forward only, ties and NaN.
std::vector<Sample> sort_samples() {
  return {{"2x4", {rnd({2, 4})}},
          {"3x1x2", {rnd({3, 1, 2})}},
          {"empty_0x4", {rnd({0, 4})}},
          {"ties_nan_2x4", {vals({2, 4}, {3, NAN, 1, 3, 0, -1, 2, 2})}, false},
          {"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}, false},
          {"bool_2x3", {bools({2, 3}, {1, 0, 1, 0, 0, 1})}, false}};
}

void register_sorting(Registry& r) {
  auto sort_case = [](std::string variant, int64_t dim, bool descending) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = sort_samples();
    c.fn = [dim, descending](const TensorList& x) {
      auto [v, i] = sort(x[0], dim, descending);
      return TensorList{v, i};
    };
    c.ref = [dim, descending](const V& x) { return sorted_ref(x[0], dim, descending); };
    return c;
  };
  OpCase scalar = sort_case("0d", 0, false);
  scalar.samples = {{"0d", {rnd({})}}};
  r.push_back({"sort", {sort_case("", -1, false), sort_case("dim0_descending", 0, true), scalar}});
  OpCase argsorted;
  argsorted.variant = "descending_stable";
  argsorted.samples = sort_samples();
  argsorted.fn = [](const TensorList& x) { return TensorList{argsort(x[0], 1, true, true)}; };
  argsorted.ref = [](const V& x) { return V{sorted_ref(x[0], 1, true)[1]}; };
  argsorted.differentiable = false;
  r.push_back({"argsort", {argsorted}});
  auto topk_case = [](std::string variant, int64_t k, int64_t dim, bool largest) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = sort_samples();
    c.fn = [k, dim, largest](const TensorList& x) {
      auto [v, i] = topk(x[0], k, dim, largest);
      return TensorList{v, i};
    };
    c.ref = [k, dim, largest](const V& x) { return sorted_ref(x[0], dim, largest, k); };
    return c;
  };
  OpCase smallest = topk_case("k1_dim0_smallest", 1, 0, false);
  std::erase_if(smallest.samples, [](const Sample& x) { return x.inputs[0].numel() == 0; });  // no element to pick
  OpCase scalar_top = topk_case("0d", 1, 0, true);
  scalar_top.samples = {{"0d", {rnd({})}}};
  OpCase none = topk_case("k0", 0, -1, true);
  none.differentiable = false;  // an empty result
  r.push_back({"topk", {topk_case("k2", 2, -1, true), smallest, scalar_top, none}});
  auto running_sum = [](const Group& g) {
    Group out;
    double acc = 0;
    for (double x : g) out.push_back(acc += x);
    return out;
  };
  auto cumsum_case = [running_sum](std::string variant, int64_t dim, std::vector<Sample> samples) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = std::move(samples);
    c.fn = [dim](const TensorList& x) { return TensorList{cumsum(x[0], dim)}; };
    c.ref = [dim, running_sum](const V& x) {
      RT out = along(x[0], dim, running_sum);
      if (!out.floating()) out.dtype = kInt64;  // integers and bool sum in int64
      return V{out};
    };
    return c;
  };
  OpCase as_f64 = cumsum_case("dtype_float64", 0, {{"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}}});
  as_f64.fn = [](const TensorList& x) { return TensorList{cumsum(x[0], 0, kFloat64)}; };
  as_f64.ref = [running_sum](const V& x) {
    RT out = along(x[0], 0, running_sum);
    out.dtype = kFloat64;
    return V{out};
  };
  as_f64.differentiable = false;
  r.push_back({"cumsum",
               {f32(cumsum_case("dim1", 1, {{"2x4", {rnd({2, 4})}}, {"3x1x2", {rnd({3, 1, 2})}}})),
                cumsum_case("dim0", 0,
                            {{"2x3", {rnd({2, 3})}},
                             {"0d", {rnd({})}},
                             {"empty_0x3", {rnd({0, 3})}},
                             {"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}},
                             {"bool_2x3", {bools({2, 3}, {1, 0, 1, 0, 0, 1})}}}),
                as_f64}});
}

}  // namespace

// linalg_vector_norm's reference over a group: the definitions, written independently of the
// kernel's special cases
double norm_of(const Group& g, double ord) {
  if (std::isinf(ord)) {
    double best = ord > 0 ? 0 : INFINITY;
    for (double x : g) best = ord > 0 ? std::max(best, std::abs(x)) : std::min(best, std::abs(x));
    return best;
  }
  double s = 0;
  for (double x : g) s += ord == 0 ? (x != 0) : std::pow(std::abs(x), ord);
  return ord == 0 ? s : std::pow(s, 1 / ord);
}

void register_norms(Registry& r) {
  auto nc = [](std::string variant, double ord, Shape64 dims, bool keepdim, std::vector<Sample> samples,
               bool differentiable = true) {
    OpCase c = red(
        std::move(variant), [ord, dims, keepdim](auto& a) { return linalg_vector_norm(a, ord, dims, keepdim); }, dims,
        keepdim, [ord](const Group& g) { return norm_of(g, ord); }, std::move(samples), kFloat64, differentiable);
    return c;
  };
  // values kept away from 0 (|x| is not differentiable there) and, for inf, from ties
  std::vector<Sample> s = {{"2x3", {vals({2, 3}, {0.5, -1.25, 0.75, 1.5, -0.3, 0.9})}},
                           {"3x1x2", {vals({3, 1, 2}, {-0.4, 1.1, 0.6, -1.7, 1.3, 0.2})}}};
  std::vector<Sample> zeros = {{"zero_row_2x3", {vals({2, 3}, {0, 0, 0, 1.5, -0.3, 0.9})}, false}};
  r.push_back({"linalg_vector_norm",
               {f32(nc("ord2_all", 2, {}, false, s)), nc("ord2_dim1_keepdim", 2, {1}, true, s),
                nc("ord1_dim0", 1, {0}, false, s), nc("ord3_dims01", 3, {0, 1}, false, s),
                nc("ord0_5_dim1", 0.5, {1}, false, s), nc("ord_neg1_dim1", -1, {1}, false, s),
                nc("inf_dim1", INFINITY, {1}, false, s), nc("neg_inf_all", -INFINITY, {}, false, s),
                nc("ord0_dim1", 0, {1}, false, s, false), nc("ord2_zero_row", 2, {1}, false, zeros, false)}});
}

// all / any: libtorch's Tensor::all() / any(dim), composites over sum
void register_truth(Registry& r) {
  auto all_of = [](const Group& g) {
    for (double x : g)
      if (x == 0) return 0.0;
    return 1.0;
  };
  auto any_of = [](const Group& g) {
    for (double x : g)
      if (x != 0) return 1.0;
    return 0.0;
  };
  std::vector<Sample> s = {{"2x3", {vals({2, 3}, {1, 0, 2, 3, -1, 0.5})}},
                           {"bool_2x2", {bools({2, 2}, {1, 1, 0, 1})}},
                           {"int_2x2", {ints({2, 2}, {0, 0, 4, 0})}},
                           {"empty_0x2", {vals({0, 2}, {})}}};
  r.push_back({"all",
               {red(
                    "all", [](auto& a) { return all(a); }, {}, false, all_of, s, kBool, false),
                red(
                    "dim1_keepdim", [](auto& a) { return a.all(1, true); }, {1}, true, all_of, s, kBool, false)}});
  r.push_back({"any",
               {red(
                    "all", [](auto& a) { return any(a); }, {}, false, any_of, s, kBool, false),
                red(
                    "dim0", [](auto& a) { return a.any(0); }, {0}, false, any_of, s, kBool, false)}});
  std::vector<Sample> n = {{"2x3", {vals({2, 3}, {0.5, -1.25, 0.75, 1.5, -0.3, 0.9})}}};
  r.push_back({"norm",
               {red(
                    "p2", [](auto& a) { return a.norm(); }, {}, false, [](const Group& g) { return norm_of(g, 2); }, n),
                red(
                    "p1_dim1_keepdim", [](auto& a) { return a.norm(1, {1}, true); }, {1}, true,
                    [](const Group& g) { return norm_of(g, 1); }, n)}});
}

void register_reductions(Registry& r) {
  register_sorting(r);
  register_norms(r);
  register_truth(r);
  r.push_back({"sum",
               {f32(red(
                    "all", [](auto& a) { return sum(a); }, {}, false, sum_of, all_samples())),
                red(
                    "dim1", [](auto& a) { return sum(a, {1}); }, {1}, false, sum_of, dim1_samples()),
                red("dims02_keepdim",
                    [](auto& a) {
                      return sum(a, {0, 2}, true);
                    },
                    {0, 2}, true, sum_of, {{"2x3x2", {rnd({2, 3, 2})}}, {"3x2x0", {rnd({3, 2, 0})}}}),
                red(
                    "dim_neg1_keepdim", [](auto& a) { return sum(a, {-1}, true); }, {-1}, true, sum_of, dim1_samples()),
                red(
                    "int_to_int64", [](auto& a) { return sum(a); }, {}, false, sum_of,
                    {{"int_2x2", {ints({2, 2}, {1, -2, 3, 7})}}}, kInt64)}});
  r.push_back(
      {"mean",
       {red(
            "all", [](auto& a) { return mean(a); }, {}, false, mean_of, all_samples(false)),
        red(
            "dim0_keepdim", [](auto& a) { return mean(a, {0}, true); }, {0}, true, mean_of, dim1_samples(false)),
        red(
            "dim1_dtype", [](auto& a) { return mean(a, {1}, false, kFloat64); }, {1}, false, mean_of,
            dim1_samples(false)),
        // dtype= converts the input first: integers averaged as float64
        red(
            "int_as_float64", [](auto& a) { return mean(a, kFloat64); }, {}, false, mean_of,
            {{"int_2x2", {ints({2, 2}, {1, -2, 3, 7})}}}, kFloat64, /*differentiable=*/false),
        red(
            "empty_all_nan", [](auto& a) { return mean(a); }, {}, false, mean_of, {{"empty", {rnd({0, 2})}, false}},
            kFloat64, /*differentiable=*/false)}});
  r.push_back(
      {"prod",
       {red(
            "all", [](auto& a) { return prod(a); }, {}, false, prod_of, all_samples()),
        red(
            "dim1", [](auto& a) { return prod(a, 1); }, {1}, false, prod_of, dim1_samples()),
        red(
            "dim0_keepdim", [](auto& a) { return prod(a, 0, true); }, {0}, true, prod_of, dim1_samples()),
        red(
            "all_dtype", [](auto& a) { return prod(a, kFloat64); }, {}, false, prod_of, all_samples()),
        // the requested dtype is the result's (int64 input multiplied as int32)
        red(
            "int_as_int32", [](auto& a) { return prod(a, 1, false, kInt32); }, {1}, false, prod_of,
            {{"int_2x2", {ints({2, 2}, {1, -2, 3, 7})}}}, kInt32),
        red("all_with_zero", [](auto& a) { return prod(a); }, {}, false, prod_of,
            {{"one_zero", {vals({2, 2}, {0.5, 0, 2, -1.5})}}, {"two_zeros", {vals({3}, {0, 1.5, 0})}}}),
        red("dim1_with_zero", [](auto& a) { return prod(a, 1); }, {1}, false, prod_of,
            {{"2x3", {vals({2, 3}, {0.5, 0, 2, -1.5, 0.7, 1.2})}}, {"two_zeros", {vals({1, 3}, {0, 1.5, 0})}}})}});
  {
    OpCase all = red(
        "all", [](auto& a) { return max(a); }, {}, false, max_of, with_ties(all_samples(false)));
    auto dim_case = [](bool is_max, int64_t dim, bool keepdim) {
      OpCase c;
      c.variant =
          std::string("dim") + (dim < 0 ? "_neg" : "") + std::to_string(std::abs(dim)) + (keepdim ? "_keepdim" : "");
      c.samples = with_ties({{"2x3", {rnd({2, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}});
      if (dim == 0) c.samples.push_back({"0d", {rnd({})}});
      c.fn = [is_max, dim, keepdim](const TensorList& x) {
        auto [v, i] = is_max ? max(x[0], dim, keepdim) : min(x[0], dim, keepdim);
        return TensorList{v, i};
      };
      c.ref = [is_max, dim, keepdim](const V& x) {
        return V{reduce(x[0], {dim}, keepdim, is_max ? max_of : min_of),
                 reduce(x[0], {dim}, keepdim, is_max ? argmax_of : argmin_of, kInt64)};
      };
      return c;
    };
    OpCase mall = red(
        "all", [](auto& a) { return min(a); }, {}, false, min_of, with_ties(all_samples(false)));
    r.push_back({"max", {all, dim_case(true, 1, false), dim_case(true, 0, true), dim_case(true, -1, false)}});
    r.push_back({"min", {mall, dim_case(false, 1, false), dim_case(false, 0, true), dim_case(false, -1, true)}});
  }
  // amax / amin: several dims at once; ties share the gradient (central differences agree)
  for (bool is_max : {true, false}) {
    auto f = is_max ? max_of : min_of;
    auto op = [is_max](const Tensor& a, IntArrayRef dims, bool keepdim) {
      return is_max ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
    };
    r.push_back(
        {is_max ? "amax" : "amin",
         {red(
              "all", [op](auto& a) { return op(a, {}, false); }, {}, false, f, with_ties(all_samples(false))),
          red(
              "dim1", [op](auto& a) { return op(a, {1}, false); }, {1}, false, f, with_ties(dim1_samples(false))),
          red("dims02_keepdim",
              [op](auto& a) {
                return op(a, {0, -1}, true);
              },
              {0, 2}, true, f, {{"2x2x3", {rnd({2, 2, 3})}}, {"3x1x2", {rnd({3, 1, 2})}}})}});
  }
  r.push_back(
      {"argmax",
       {red(
            "all", [](auto& a) { return argmax(a); }, {}, false, argmax_of, with_ties(all_samples(false)), kInt64),
        red(
            "dim1", [](auto& a) { return argmax(a, 1); }, {1}, false, argmax_of, with_ties(dim1_samples(false)),
            kInt64),
        red(
            "dim0_keepdim", [](auto& a) { return argmax(a, 0, true); }, {0}, true, argmax_of,
            with_ties(dim1_samples(false)), kInt64)}});
  r.push_back(
      {"argmin",
       {red(
            "all", [](auto& a) { return argmin(a); }, {}, false, argmin_of, with_ties(all_samples(false)), kInt64),
        red(
            "dim1_keepdim", [](auto& a) { return argmin(a, 1, true); }, {1}, true, argmin_of,
            with_ties(dim1_samples(false)), kInt64)}});
  std::vector<Sample> var_samples = {{"2x3", {rnd({2, 3})}}, {"3x1x2", {rnd({3, 1, 2})}}};
  r.push_back(
      {"var",
       {red(
            "all", [](auto& a) { return var(a); }, {}, false, [](const Group& g) { return var_of(g, 1); }, var_samples),
        red(
            "dim1_correction0_keepdim", [](auto& a) { return var(a, {1}, 0, true); }, {1}, true,
            [](const Group& g) { return var_of(g, 0); }, {{"2x3", {rnd({2, 3})}}, {"3x2x2", {rnd({3, 2, 2})}}}),
        red(
            "dim0", [](auto& a) { return var(a, {0}); }, {0}, false, [](const Group& g) { return var_of(g, 1); },
            var_samples)}});
  r.push_back({"std",
               {red(
                    "all", [](auto& a) { return std(a); }, {}, false,
                    [](const Group& g) { return std::sqrt(var_of(g, 1)); }, var_samples),
                red(
                    "dim1_correction0_keepdim", [](auto& a) { return std(a, {1}, 0, true); }, {1}, true,
                    [](const Group& g) { return std::sqrt(var_of(g, 0)); },
                    {{"2x3", {rnd({2, 3})}}, {"3x2x2", {rnd({3, 2, 2})}}})}});
  r.push_back({"logsumexp",
               {red(
                    "dim1", [](auto& a) { return logsumexp(a, {1}); }, {1}, false, lse_of, dim1_samples(false)),
                red("dims01_keepdim",
                    [](auto& a) {
                      return logsumexp(a, {0, 1}, true);
                    },
                    {0, 1}, true, lse_of, {{"2x3", {rnd({2, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}}),
                red("large_values", [](auto& a) { return logsumexp(a, {0}); }, {0}, false, lse_of,
                    {{"3", {vals({3}, {1000, 1001, 999.5})}}})}});
  for (bool log : {false, true}) {
    OpCase c;
    c.variant = "dim1";
    c.samples = {{"2x3", {rnd({2, 3})}}, {"2x3x2", {rnd({2, 3, 2})}}, {"empty_0x3", {rnd({0, 3})}}};
    c.fn = [log](const TensorList& x) { return TensorList{log ? log_softmax(x[0], 1) : softmax(x[0], 1)}; };
    c.ref = [log](const V& x) { return softmax_ref(x[0], 1, log); };
    c.f32 = true;
    OpCase d0 = c;
    d0.variant = "dim0";
    d0.samples = {{"3x2", {rnd({3, 2})}}, {"0d", {rnd({})}}, {"large", {vals({3}, {1000, 1001, 999})}}};
    d0.fn = [log](const TensorList& x) { return TensorList{log ? log_softmax(x[0], 0) : softmax(x[0], 0)}; };
    d0.ref = [log](const V& x) { return softmax_ref(x[0], 0, log); };
    OpCase dn = c;
    dn.variant = "dim_neg1";
    dn.samples = {{"2x2x3", {rnd({2, 2, 3})}}};
    dn.fn = [log](const TensorList& x) { return TensorList{log ? log_softmax(x[0], -1) : softmax(x[0], -1)}; };
    dn.ref = [log](const V& x) { return softmax_ref(x[0], -1, log); };
    r.push_back({log ? "log_softmax" : "softmax", {c, d0, dn}});
  }
  {
    auto sum_to_case = [](std::string variant, Shape64 from, Shape64 to) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = {{"from", {rnd(from)}}};
      c.fn = [to](const TensorList& x) { return TensorList{sum_to(x[0], to)}; };
      c.ref = [to](const V& x) {
        // sum over leading dims and over dims where `to` is 1
        const int64_t lead = x[0].dim() - static_cast<int64_t>(to.size());
        Shape64 dims;
        for (int64_t d = 0; d < x[0].dim(); ++d)
          if (d < lead || (to[d - lead] == 1 && x[0].sizes[d] != 1)) dims.push_back(d);
        RT out = dims.empty() ? x[0] : reduce(x[0], dims, true, sum_of);
        return V{reshape_ref(out, to)};
      };
      return c;
    };
    {
      // dist: the p-norm of a - b over everything; values keep |a - b| away from 0 and from ties
      auto dist_ref = [](double p) {
        return [p](const V& x) {
          RT d = zip(x[0], x[1], [](double a, double b) { return std::fabs(a - b); });
          return V{reduce(d, {}, false, [p](const Group& g) {
            if (p == 0) return static_cast<double>(std::count_if(g.begin(), g.end(), [](double v) { return v != 0; }));
            if (std::isinf(p))
              return p > 0 ? *std::max_element(g.begin(), g.end()) : *std::min_element(g.begin(), g.end());
            double s = 0;
            for (double v : g) s += std::pow(v, p);
            return std::pow(s, 1.0 / p);
          })};
        };
      };
      auto dist_case = [&](const char* variant, double p) {
        OpCase c;
        c.variant = variant;
        c.fn = [p](const TensorList& x) { return TensorList{dist(x[0], x[1], p)}; };
        c.ref = dist_ref(p);
        c.samples = {
            {"2x3", {vals({2, 3}, {0.5, -1.2, 2.0, 0.3, 1.1, -0.7}), vals({2, 3}, {-0.4, 0.6, 1.2, 1.5, -0.2, 0.9})}},
            {"bcast_3_1x3", {vals({3}, {0.9, -0.8, 2.2}), vals({1, 3}, {-0.3, 0.5, 0.1})}}};
        return c;
      };
      r.push_back({"dist",
                   {dist_case("p2", 2.0), dist_case("p1", 1.0), dist_case("p3", 3.0), dist_case("p0", 0.0),
                    dist_case("p_inf", INFINITY), dist_case("p_neg_inf", -INFINITY)}});
    }
    r.push_back({"sum_to",
                 {sum_to_case("2x3_to_3", {2, 3}, {3}), sum_to_case("2x3_to_2x1", {2, 3}, {2, 1}),
                  sum_to_case("2x3_to_1x3", {2, 3}, {1, 3}), sum_to_case("2x3_to_0d", {2, 3}, {}),
                  sum_to_case("2x1x3_to_1x1", {2, 1, 3}, {1, 1}), sum_to_case("same", {2, 3}, {2, 3}),
                  sum_to_case("empty_0x3_to_3", {0, 3}, {3})}});
  }
}

}  // namespace graft::testing
