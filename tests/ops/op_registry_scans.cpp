// Registry entries: scans along a dim (cumprod, cummax, cummin, logcumsumexp), order statistics
// (kthvalue, median, nanmedian) and the statistics pairs (var_mean, std_mean). References are
// plain loops over each lane.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
using Group = std::vector<double>;

// (values, indices) of a lane's running maximum (or minimum): each NaN becomes the extreme and
// nothing replaces it; a tie moves the index to the later element.
std::pair<Group, Group> running_extreme(const Group& g, bool is_max) {
  Group values, indices;
  double m = 0;
  size_t at = 0;
  for (size_t j = 0; j < g.size(); ++j) {
    const bool take = j == 0 || std::isnan(g[j]) || (!std::isnan(m) && (is_max ? g[j] >= m : g[j] <= m));
    if (take) m = g[j], at = j;
    values.push_back(m);
    indices.push_back(static_cast<double>(at));
  }
  return {values, indices};
}

// The lane's elements sorted ascending (NaN last, ties by position) as (value, position) pairs.
std::vector<std::pair<double, size_t>> ranked(const Group& g) {
  std::vector<std::pair<double, size_t>> r;
  for (size_t i = 0; i < g.size(); ++i) r.emplace_back(g[i], i);
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) {
    if (std::isnan(a.first) != std::isnan(b.first)) return std::isnan(b.first);
    return a.first < b.first;
  });
  return r;
}

// Replaces each lane along dim by one element (value or its position) picked from it by f.
RT pick(const RT& a, int64_t dim, bool keepdim, bool index, const std::function<size_t(const Group&)>& f) {
  const int64_t d = a.dim() == 0 ? 0 : (dim < 0 ? dim + a.dim() : dim);
  RT lanes = along(a, d, [&](const Group& g) {
    Group out(g.size(), 0);
    const size_t k = f(g);
    out[0] = index ? static_cast<double>(k) : g[k];
    return out;
  });
  if (a.dim() == 0) {
    lanes.dtype = index ? kInt64 : a.dtype;
    return lanes;
  }
  Shape64 sizes = a.sizes;
  sizes[static_cast<size_t>(d)] = 1;
  RT out = window(lanes, sizes, contiguous_strides_of(a.sizes), 0);
  if (!keepdim) out.sizes.erase(out.sizes.begin() + d);
  out.dtype = index ? kInt64 : a.dtype;
  return out;
}

// The positions PyTorch's order statistics pick: the k-th smallest; the lower median (a lane
// with NaN: its first NaN); the lower median of the elements that are not NaN.
std::function<size_t(const Group&)> kth(int64_t k) {
  return [k](const Group& g) { return ranked(g)[static_cast<size_t>(k - 1)].second; };
}
size_t median_at(const Group& g) {
  for (size_t i = 0; i < g.size(); ++i)
    if (std::isnan(g[i])) return i;
  return ranked(g)[(g.size() - 1) / 2].second;
}
size_t nanmedian_at(const Group& g) {
  const auto r = ranked(g);
  const size_t finite = static_cast<size_t>(std::count_if(g.begin(), g.end(), [](double x) { return !std::isnan(x); }));
  return r[finite == 0 ? 0 : (finite - 1) / 2].second;
}

std::vector<Sample> scan_samples() {
  return {{"2x4", {rnd({2, 4})}},
          {"3x1x2", {rnd({3, 1, 2})}},
          {"0d", {rnd({})}},
          {"empty_0x3", {rnd({0, 3})}},
          {"ties_nan_2x4", {vals({2, 4}, {3, NAN, 1, 3, 0, -1, 2, 2})}, false},
          {"nans_1x4", {vals({1, 4}, {2, NAN, NAN, 5})}, false},
          {"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}, false}};
}

OpCase pair_case(std::string variant, std::function<std::pair<Tensor, Tensor>(const Tensor&)> f,
                 std::function<V(const RT&)> ref, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [f](const TensorList& x) {
    auto [a, b] = f(x[0]);
    return TensorList{a, b};
  };
  c.ref = [ref](const V& x) { return ref(x[0]); };
  return c;
}

void register_scans(Registry& r) {
  for (const bool is_max : {true, false}) {
    auto ref = [is_max](int64_t dim) {
      return [is_max, dim](const RT& a) {
        RT values = along(a, dim, [is_max](const Group& g) { return running_extreme(g, is_max).first; });
        RT indices = along(a, dim, [is_max](const Group& g) { return running_extreme(g, is_max).second; });
        indices.dtype = kInt64;
        return V{values, indices};
      };
    };
    auto call = [is_max](int64_t dim) {
      return [is_max, dim](const Tensor& x) { return is_max ? cummax(x, dim) : cummin(x, dim); };
    };
    r.push_back({is_max ? "cummax" : "cummin",
                 {pair_case("dim1", call(1), ref(1),
                            {{"2x4", {rnd({2, 4})}},
                             {"ties_nan", scan_samples()[4].inputs, false},
                             {"nans", scan_samples()[5].inputs, false}}),
                  pair_case("dim0", call(0), ref(0), scan_samples())}});
  }
  auto product = [](const Group& g) {
    Group out;
    double acc = 1;
    for (double x : g) out.push_back(acc *= x);
    return out;
  };
  auto cumprod_case = [product](std::string variant, int64_t dim, std::vector<Sample> samples) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = std::move(samples);
    c.fn = [dim](const TensorList& x) { return TensorList{cumprod(x[0], dim)}; };
    c.ref = [dim, product](const V& x) {
      RT out = along(x[0], dim, product);
      if (!out.floating()) out.dtype = kInt64;
      return V{out};
    };
    return c;
  };
  r.push_back({"cumprod",
               {f32(cumprod_case("dim1", 1, {{"2x4", {rnd({2, 4})}}, {"3x1x2", {rnd({3, 1, 2})}}})),
                cumprod_case("dim0", 0,
                             {{"2x3", {rnd({2, 3})}},
                              {"0d", {rnd({})}},
                              {"empty_0x3", {rnd({0, 3})}},
                              {"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}}}),
                // the gradient through zeros: one zero, two zeros, a zero first and last
                cumprod_case("zeros_dim1", 1,
                             {{"one_zero_2x4", {vals({2, 4}, {0.5, 0, 1.5, -2, 1.25, -0.75, 0, 2})}},
                              {"two_zeros_1x5", {vals({1, 5}, {1.5, 0, -0.5, 0, 2})}},
                              {"zero_ends_1x4", {vals({1, 4}, {0, 1.5, -0.5, 0})}}})}});
  auto lse = [](const Group& g) {
    Group out;
    for (size_t j = 0; j < g.size(); ++j) {
      double m = -INFINITY, s = 0;
      for (size_t i = 0; i <= j; ++i) m = std::max(m, g[i]);
      for (size_t i = 0; i <= j; ++i) s += std::exp(g[i] - m);
      out.push_back(m + std::log(s));
    }
    return out;
  };
  OpCase lce;
  lce.variant = "dim1";
  lce.samples = {{"2x4", {rnd({2, 4})}},
                 {"3x1x2", {rnd({3, 1, 2})}},
                 {"0d", {rnd({})}},
                 {"empty_0x3", {rnd({0, 3})}},
                 {"large_1x3", {vals({1, 3}, {800, 801, -700})}, false}};
  lce.fn = [](const TensorList& x) { return TensorList{logcumsumexp(x[0], x[0].dim() == 0 ? 0 : -1)}; };
  lce.ref = [lse](const V& x) { return V{along(x[0], x[0].dim() == 0 ? 0 : -1, lse)}; };
  r.push_back({"logcumsumexp", {f32(lce)}});
}

void register_order_statistics(Registry& r) {
  std::vector<Sample> s = {{"2x4", {rnd({2, 4})}},
                           {"3x1x3", {rnd({3, 1, 3})}},
                           {"ties_nan_2x4", {vals({2, 4}, {3, NAN, 1, 3, 0, -1, 2, 2})}, false},
                           {"int_2x3", {ints({2, 3}, {5, -1, 5, 0, 7, 2})}, false}};
  auto both = [](int64_t dim, bool keepdim, std::function<size_t(const Group&)> at) {
    return [dim, keepdim, at](const RT& a) {
      return V{pick(a, dim, keepdim, false, at), pick(a, dim, keepdim, true, at)};
    };
  };
  r.push_back(
      {"kthvalue",
       {pair_case(
            "k2_last", [](const Tensor& x) { return kthvalue(x, 1, -1); }, both(-1, false, kth(1)), s),
        pair_case(
            "k1_dim0_keepdim", [](const Tensor& x) { return kthvalue(x, 1, 0, true); }, both(0, true, kth(1)), s),
        pair_case("0d", [](const Tensor& x) { return kthvalue(x, 1); }, both(0, false, kth(1)), {{"0d", {rnd({})}}})}});
  auto whole = [](std::function<size_t(const Group&)> at) {
    return [at](const V& x) {
      RT flat = reshape_ref(x[0], {x[0].numel()});
      RT out = pick(flat, 0, false, false, at);
      return V{out};
    };
  };
  auto median_cases = [&](bool nan, std::function<size_t(const Group&)> at) {
    OpCase all;
    all.variant = "all";
    all.samples = {{"2x3", {rnd({2, 3})}},
                   {"0d", {rnd({})}},
                   {"even_4", {rnd({4})}},
                   {"nan_2x2", {vals({2, 2}, {1, NAN, 3, NAN})}, false}};
    all.fn = [nan](const TensorList& x) { return TensorList{nan ? nanmedian(x[0]) : median(x[0])}; };
    all.ref = whole(at);
    auto call = [nan](int64_t dim, bool keepdim) {
      return
          [nan, dim, keepdim](const Tensor& x) { return nan ? nanmedian(x, dim, keepdim) : median(x, dim, keepdim); };
    };
    return std::vector<OpCase>{all, pair_case("dim1", call(1, false), both(1, false, at), s),
                               pair_case("dim0_keepdim", call(0, true), both(0, true, at), s)};
  };
  r.push_back({"median", median_cases(false, median_at)});
  r.push_back({"nanmedian", median_cases(true, nanmedian_at)});
}

// var_mean / std_mean over dims with a correction: the spread's and the mean's references.
void register_statistics_pairs(Registry& r) {
  auto spread = [](double correction, bool sqrt_it) {
    return [correction, sqrt_it](const Group& g) {
      const double n = static_cast<double>(g.size());
      const double mean = std::accumulate(g.begin(), g.end(), 0.0) / n;
      double ss = 0;
      for (double x : g) ss += (x - mean) * (x - mean);
      const double v = ss / std::max(n - correction, 0.0);
      return sqrt_it ? std::sqrt(v) : v;
    };
  };
  auto mean_of = [](const Group& g) {
    return std::accumulate(g.begin(), g.end(), 0.0) / static_cast<double>(g.size());
  };
  std::vector<Sample> s = {{"2x3", {rnd({2, 3})}}, {"3x2x2", {rnd({3, 2, 2})}}};
  for (const bool is_std : {false, true}) {
    auto pair_ref = [=](Shape64 dims, bool keepdim, double correction) {
      return [=](const RT& a) {
        return V{reduce(a, dims, keepdim, spread(correction, is_std)), reduce(a, dims, keepdim, mean_of)};
      };
    };
    auto call = [is_std](Shape64 dims, std::optional<Scalar> correction, bool keepdim) {
      return [=](const Tensor& x) {
        return is_std ? std_mean(x, dims, correction, keepdim) : var_mean(x, dims, correction, keepdim);
      };
    };
    OpCase unbiased = pair_case(
        "dim1_unbiased_false",
        [is_std](const Tensor& x) { return is_std ? std_mean(x, {1}, false) : var_mean(x, {1}, false); },
        pair_ref({1}, false, 0), s);
    r.push_back({is_std ? "std_mean" : "var_mean",
                 {pair_case("all", call({}, std::nullopt, false), pair_ref({}, false, 1), s),
                  pair_case("dim1_keepdim", call({1}, std::nullopt, true), pair_ref({1}, true, 1), s),
                  pair_case("dim0_correction2", call({0}, Scalar(2), false), pair_ref({0}, false, 2),
                            {{"3x2x2", {rnd({3, 2, 2})}}}),
                  unbiased}});
  }
}

}  // namespace

void register_scans_and_order(Registry& r) {
  register_scans(r);
  register_order_statistics(r);
  register_statistics_pairs(r);
}

}  // namespace graft::testing
