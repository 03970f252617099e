// Registry entries: normalization (layer_norm, batch_norm, group_norm) and losses. References
// are loops over PyTorch's documented formulas.
#include <cmath>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// op_registry.h's with(), in this file's argument order and with its tighter default tolerance
OpCase one(std::string variant, std::function<TensorList(const TensorList&)> fn, RefFn ref, std::vector<Sample> samples,
           double atol = 1e-12) {
  OpCase c = with(std::move(variant), std::move(samples), std::move(fn), std::move(ref));
  c.atol = atol;
  return c;
}

// Normalizes groups of `len` consecutive values (biased variance); then per-position affine.
RT normalize_groups(const RT& x, int64_t len, double eps) {
  RT y = x;
  for (int64_t g = 0; g * len < x.numel(); ++g) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < len; ++i) m += x.v[static_cast<size_t>(g * len + i)];
    m /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) v += std::pow(x.v[static_cast<size_t>(g * len + i)] - m, 2);
    v /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i)
      y.v[static_cast<size_t>(g * len + i)] = (x.v[static_cast<size_t>(g * len + i)] - m) / std::sqrt(v + eps);
  }
  return y;
}

// Per-channel statistics over (N, spatial) for x [N, C, S...].
RT batch_norm_ref(const RT& x, const RT* mean_in, const RT* var_in, const RT* w, const RT* b, double eps) {
  const int64_t N = x.sizes[0], C = x.sizes[1], S = x.numel() / (N * C);
  RT y = x;
  for (int64_t c = 0; c < C; ++c) {
    double m = 0, v = 0;
    if (mean_in) {
      m = mean_in->v[static_cast<size_t>(c)];
      v = var_in->v[static_cast<size_t>(c)];
    } else {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) m += x.v[static_cast<size_t>((n * C + c) * S + s)];
      m /= static_cast<double>(N * S);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) v += std::pow(x.v[static_cast<size_t>((n * C + c) * S + s)] - m, 2);
      v /= static_cast<double>(N * S);
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        auto i = static_cast<size_t>((n * C + c) * S + s);
        double r = (x.v[i] - m) / std::sqrt(v + eps);
        if (w) r *= w->v[static_cast<size_t>(c)];
        if (b) r += b->v[static_cast<size_t>(c)];
        y.v[i] = r;
      }
  }
  return y;
}

RT scalar_rt(double v) { return RT{{}, {v}, kFloat64}; }
RT reduce_rt(const RT& per, const std::string& red, double mean_denominator) {
  if (red == "none") return per;
  double s = 0;
  for (double x : per.v) s += x;
  return scalar_rt(red == "sum" ? s : s / mean_denominator);
}
Reduction red_of(const std::string& s) { return reduction_from_string(s); }

// Input [N, C, d...] and a class index per (n, d...): value at (element k, class c).
struct ClassView {
  const RT& x;
  int64_t C, inner;
  double at(int64_t k, int64_t c) const {
    int64_t n = k / inner, d = k % inner;
    return x.v[static_cast<size_t>((n * C + c) * inner + d)];
  }
  int64_t elements() const { return x.numel() / C; }
};
ClassView classes(const RT& x) {
  if (x.dim() == 1) return {x, x.sizes[0], 1};
  return {x, x.sizes[1], x.numel() / (x.sizes[0] * x.sizes[1])};
}
std::vector<double> log_softmax_at(const ClassView& cv, int64_t k) {
  double mx = -1e300;
  for (int64_t c = 0; c < cv.C; ++c) mx = std::max(mx, cv.at(k, c));
  double z = 0;
  for (int64_t c = 0; c < cv.C; ++c) z += std::exp(cv.at(k, c) - mx);
  std::vector<double> r(static_cast<size_t>(cv.C));
  for (int64_t c = 0; c < cv.C; ++c) r[static_cast<size_t>(c)] = cv.at(k, c) - mx - std::log(z);
  return r;
}

// nll / cross entropy with class indices, PyTorch's formulas including label smoothing.
RT ce_index_ref(const RT& x, const RT& t, const RT* w, const std::string& red, int64_t ignore, double eps,
                bool apply_log_softmax) {
  ClassView cv = classes(x);
  const int64_t K = cv.elements(), C = cv.C;
  RT per = t;
  per.dtype = kFloat64;
  RT smooth = per;
  double wsum = 0, valid = 0;
  for (int64_t k = 0; k < K; ++k) {
    std::vector<double> lp(static_cast<size_t>(C));
    if (apply_log_softmax) {
      lp = log_softmax_at(cv, k);
    } else {
      for (int64_t c = 0; c < C; ++c) lp[static_cast<size_t>(c)] = cv.at(k, c);
    }
    const int64_t tk = static_cast<int64_t>(t.v[static_cast<size_t>(k)]);
    if (tk == ignore) {
      per.v[static_cast<size_t>(k)] = 0;
      smooth.v[static_cast<size_t>(k)] = 0;
      continue;
    }
    const double wt = w ? w->v[static_cast<size_t>(tk)] : 1.0;
    per.v[static_cast<size_t>(k)] = -wt * lp[static_cast<size_t>(tk)];
    double s = 0;
    for (int64_t c = 0; c < C; ++c) s -= (w ? w->v[static_cast<size_t>(c)] : 1.0) * lp[static_cast<size_t>(c)];
    smooth.v[static_cast<size_t>(k)] = s;
    wsum += wt;
    valid += 1;
  }
  RT nll = reduce_rt(per, red, wsum);
  if (eps == 0) return nll;
  RT sm = reduce_rt(smooth, red, w ? wsum : valid);
  for (size_t i = 0; i < nll.v.size(); ++i) nll.v[i] = (1 - eps) * nll.v[i] + sm.v[i] * eps / static_cast<double>(C);
  return nll;
}

// cross entropy with class probabilities.
RT ce_prob_ref(const RT& x, const RT& t, const RT* w, const std::string& red, double eps) {
  ClassView cv = classes(x), tv = classes(t);
  const int64_t K = cv.elements(), C = cv.C;
  Shape64 per_sizes = x.sizes;
  per_sizes.erase(per_sizes.begin() + (x.dim() == 1 ? 0 : 1));
  RT per{per_sizes, std::vector<double>(static_cast<size_t>(K), 0.0), kFloat64};
  for (int64_t k = 0; k < K; ++k) {
    auto lp = log_softmax_at(cv, k);
    double s = 0;
    for (int64_t c = 0; c < C; ++c) {
      double tc = tv.at(k, c) * (1 - eps) + eps / static_cast<double>(C);
      s -= (w ? w->v[static_cast<size_t>(c)] : 1.0) * tc * lp[static_cast<size_t>(c)];
    }
    per.v[static_cast<size_t>(k)] = s;
  }
  return reduce_rt(per, red, static_cast<double>(K));
}

RT elementwise_loss(const RT& a, const RT& b, const std::string& red, const std::function<double(double, double)>& f) {
  RT per = zip(a, b, f);
  return reduce_rt(per, red, static_cast<double>(per.numel()));
}

}  // namespace

void register_norm_loss(Registry& r) {
  // ---- layer_norm ----
  r.push_back(
      {"layer_norm",
       {f32(one(
            "last_dim_affine", [](const TensorList& x) { return TensorList{layer_norm(x[0], {4}, x[1], x[2])}; },
            [](const V& x) {
              RT y = normalize_groups(x[0], 4, 1e-5);
              for (int64_t i = 0; i < y.numel(); ++i)
                y.v[static_cast<size_t>(i)] = y.v[static_cast<size_t>(i)] * x[1].v[static_cast<size_t>(i % 4)] +
                                              x[2].v[static_cast<size_t>(i % 4)];
              return V{y};
            },
            {{"2x3x4", {rnd({2, 3, 4}), rnd({4}), rnd({4})}}}, 1e-10)),
        one(
            "two_dims_no_affine_eps",
            [](const TensorList& x) {
              return TensorList{layer_norm(x[0], {2, 3}, Tensor(), Tensor(), 0.1)};
            },
            [](const V& x) { return V{normalize_groups(x[0], 6, 0.1)}; }, {{"3x2x3", {rnd({3, 2, 3})}}}, 1e-10)}});
  // ---- batch_norm ----
  r.push_back(
      {"batch_norm",
       {f32(one(
            "train_affine",
            [](const TensorList& x) {
              Tensor rm = zeros({x[0].size(1)}, dtype(x[0].dtype())), rv = ones({x[0].size(1)}, dtype(x[0].dtype()));
              return TensorList{batch_norm(x[0], rm, rv, x[1], x[2], true, 0.1, 1e-5)};
            },
            [](const V& x) { return V{batch_norm_ref(x[0], nullptr, nullptr, &x[1], &x[2], 1e-5)}; },
            {{"4x3", {rnd({4, 3}), rnd({3}), rnd({3})}}, {"2x2x3x2", {rnd({2, 2, 3, 2}), rnd({2}), rnd({2})}}}, 1e-10)),
        one(
            "train_no_running_stats",
            [](const TensorList& x) {
              return TensorList{batch_norm(x[0], Tensor(), Tensor(), Tensor(), Tensor(), true)};
            },
            [](const V& x) { return V{batch_norm_ref(x[0], nullptr, nullptr, nullptr, nullptr, 1e-5)}; },
            {{"3x2x2", {rnd({3, 2, 2})}}}, 1e-10),
        one(
            "eval", [](const TensorList& x) { return TensorList{batch_norm(x[0], x[1], x[2], x[3], x[4], false)}; },
            [](const V& x) { return V{batch_norm_ref(x[0], &x[1], &x[2], &x[3], &x[4], 1e-5)}; },
            {{"3x2x2", {rnd({3, 2, 2}), rnd({2}), rnd({2}, Domain::Positive), rnd({2}), rnd({2})}}}, 1e-10)}});
  // ---- group_norm ----
  r.push_back({"group_norm",
               {f32(one(
                    "groups2_affine", [](const TensorList& x) { return TensorList{group_norm(x[0], 2, x[1], x[2])}; },
                    [](const V& x) {
                      const int64_t N = x[0].sizes[0], C = x[0].sizes[1], S = x[0].numel() / (N * C);
                      RT y = normalize_groups(x[0], (C / 2) * S, 1e-5);
                      for (int64_t i = 0; i < y.numel(); ++i) {
                        int64_t c = (i / S) % C;
                        y.v[static_cast<size_t>(i)] = y.v[static_cast<size_t>(i)] * x[1].v[static_cast<size_t>(c)] +
                                                      x[2].v[static_cast<size_t>(c)];
                      }
                      return V{y};
                    },
                    {{"2x4x3", {rnd({2, 4, 3}), rnd({4}), rnd({4})}}}, 1e-10)),
                one(
                    "one_group_4d", [](const TensorList& x) { return TensorList{group_norm(x[0], 1)}; },
                    [](const V& x) { return V{normalize_groups(x[0], x[0].numel() / x[0].sizes[0], 1e-5)}; },
                    {{"2x2x2x2", {rnd({2, 2, 2, 2})}}}, 1e-10)}});
  // ---- elementwise losses ----
  auto ew = [&](const char* name, std::function<Tensor(const Tensor&, const Tensor&, Reduction)> f,
                std::function<double(double, double)> per) {
    std::vector<OpCase> cases;
    for (std::string red : {"mean", "sum", "none"}) {
      OpCase c = one(
          red, [f, red](const TensorList& x) { return TensorList{f(x[0], x[1], red_of(red))}; },
          [per, red](const V& x) { return V{elementwise_loss(x[0], x[1], red, per)}; },
          {{"3x4", {rnd({3, 4}), rnd({3, 4})}}, {"broadcast_target_4", {rnd({2, 4}), rnd({4})}}});
      cases.push_back(red == "mean" ? f32(c) : c);
    }
    r.push_back({name, cases});
  };
  ew(
      "mse_loss", [](auto& a, auto& b, Reduction red) { return mse_loss(a, b, red); },
      [](double a, double b) { return (a - b) * (a - b); });
  ew(
      "l1_loss", [](auto& a, auto& b, Reduction red) { return l1_loss(a, b, red); },
      [](double a, double b) { return std::fabs(a - b); });
  {
    auto sl1 = [](double beta) {
      return [beta](double a, double b) {
        double d = std::fabs(a - b);
        return d < beta ? 0.5 * d * d / beta : d - 0.5 * beta;
      };
    };
    r.push_back({"smooth_l1_loss",
                 {f32(one(
                      "beta1_mean", [](const TensorList& x) { return TensorList{smooth_l1_loss(x[0], x[1])}; },
                      [sl1](const V& x) { return V{elementwise_loss(x[0], x[1], "mean", sl1(1.0))}; },
                      {{"3x4", {rnd({3, 4}), rnd({3, 4})}}})),
                  one(
                      "beta0.5_none",
                      [](const TensorList& x) { return TensorList{smooth_l1_loss(x[0], x[1], Reduction::None, 0.5)}; },
                      [sl1](const V& x) { return V{elementwise_loss(x[0], x[1], "none", sl1(0.5))}; },
                      {{"5", {vals({5}, {0.1, -0.3, 1.2, -2.0, 0.7}), vals({5}, {0.0, 0.0, 0.0, 0.0, 0.0})}}})}});
  }
  // ---- nll_loss / cross_entropy with class indices ----
  auto idx_case = [](bool ce, std::string variant, std::string red, bool weighted, int64_t ignore, double eps,
                     std::vector<Sample> samples) {
    return one(
        std::move(variant),
        [=](const TensorList& x) {
          Tensor w = weighted ? x[2] : Tensor();
          if (ce) return TensorList{cross_entropy(x[0], x[1], w, red_of(red), ignore, eps)};
          return TensorList{nll_loss(x[0], x[1], w, red_of(red), ignore)};
        },
        [=](const V& x) { return V{ce_index_ref(x[0], x[1], weighted ? &x[2] : nullptr, red, ignore, eps, ce)}; },
        std::move(samples), 1e-10);
  };
  r.push_back(
      {"nll_loss",
       {f32(idx_case(false, "mean", "mean", false, -100, 0, {{"3x4", {rnd({3, 4}), ints({3}, {1, 0, 3})}}})),
        idx_case(false, "weighted_mean_ignore", "mean", true, 2, 0,
                 {{"4x3", {rnd({4, 3}), ints({4}, {2, 0, 1, 0}), rnd({3}, Domain::Positive)}}}),
        idx_case(false, "sum_spatial", "sum", false, -100, 0,
                 {{"2x3x2", {rnd({2, 3, 2}), ints({2, 2}, {0, 2, 1, 1})}}}),
        idx_case(false, "none_unbatched", "none", false, -100, 0, {{"4_target0d", {rnd({4}), ints({}, {2})}}})}});
  r.push_back(
      {"cross_entropy",
       {f32(idx_case(true, "mean", "mean", false, -100, 0, {{"3x5", {rnd({3, 5}), ints({3}, {4, 0, 2})}}})),
        idx_case(true, "weighted_ignore_sum", "sum", true, 1, 0,
                 {{"4x3", {rnd({4, 3}), ints({4}, {1, 0, 2, 0}), rnd({3}, Domain::Positive)}}}),
        idx_case(true, "spatial_none", "none", false, -100, 0,
                 {{"2x3x2x2", {rnd({2, 3, 2, 2}), ints({2, 2, 2}, {0, 1, 2, 2, 1, 0, 0, 1})}}}),
        idx_case(true, "label_smoothing_mean", "mean", false, -100, 0.2,
                 {{"3x4", {rnd({3, 4}), ints({3}, {3, 1, 0})}}}),
        idx_case(true, "label_smoothing_weighted_ignore_mean", "mean", true, 0, 0.1,
                 {{"4x3", {rnd({4, 3}), ints({4}, {1, 0, 2, 2}), rnd({3}, Domain::Positive)}}}),
        idx_case(true, "label_smoothing_none_ignore", "none", false, 2, 0.3,
                 {{"3x3", {rnd({3, 3}), ints({3}, {2, 0, 1})}}}),
        one(
            "probabilities_mean_smoothing",
            [](const TensorList& x) {
              return TensorList{cross_entropy(x[0], x[1], Tensor(), Reduction::Mean, -100, 0.1)};
            },
            [](const V& x) { return V{ce_prob_ref(x[0], x[1], nullptr, "mean", 0.1)}; },
            {{"3x4", {rnd({3, 4}), rnd({3, 4}, Domain::Positive)}}}, 1e-10),
        one(
            "probabilities_weighted_none",
            [](const TensorList& x) { return TensorList{cross_entropy(x[0], x[1], x[2], Reduction::None)}; },
            [](const V& x) { return V{ce_prob_ref(x[0], x[1], &x[2], "none", 0)}; },
            {{"2x3x2", {rnd({2, 3, 2}), rnd({2, 3, 2}, Domain::Positive), rnd({3}, Domain::Positive)}}}, 1e-10)}});
  // ---- binary cross entropy ----
  auto bce = [](double p, double y) {
    return -(y * std::max(std::log(p), -100.0) + (1 - y) * std::max(std::log(1 - p), -100.0));
  };
  RT probs = rnd({2, 3}, Domain::Unit);
  for (auto& v : probs.v) v = 0.5 + 0.5 * v;  // in (0.05, 0.95)
  r.push_back(
      {"binary_cross_entropy",
       {f32(one(
            "mean", [](const TensorList& x) { return TensorList{binary_cross_entropy(x[0], x[1])}; },
            [bce](const V& x) { return V{elementwise_loss(x[0], x[1], "mean", bce)}; },
            {{"2x3", {probs, vals({2, 3}, {0, 1, 1, 0, 0.3, 1})}}}, 1e-10)),
        one(
            "weighted_sum",
            [](const TensorList& x) { return TensorList{binary_cross_entropy(x[0], x[1], x[2], Reduction::Sum)}; },
            [bce](const V& x) {
              RT per = zip(x[0], x[1], bce);
              for (size_t i = 0; i < per.v.size(); ++i) per.v[i] *= x[2].v[i];
              return V{reduce_rt(per, "sum", 0)};
            },
            {{"2x3", {probs, vals({2, 3}, {1, 0, 0, 1, 1, 0.5}), rnd({2, 3}, Domain::Positive)}}}, 1e-10)}});
  auto bcel = [](double x, double y, double pw) {
    double sp = std::log1p(std::exp(-std::fabs(x))) + std::max(-x, 0.0);
    return (1 - y) * x + (1 + (pw - 1) * y) * sp;
  };
  r.push_back(
      {"binary_cross_entropy_with_logits",
       {f32(one(
            "mean", [](const TensorList& x) { return TensorList{binary_cross_entropy_with_logits(x[0], x[1])}; },
            [bcel](const V& x) {
              return V{elementwise_loss(x[0], x[1], "mean", [bcel](double a, double b) { return bcel(a, b, 1.0); })};
            },
            {{"2x3", {rnd({2, 3}), vals({2, 3}, {0, 1, 1, 0, 0.25, 1})}},
             {"large_logits", {vals({3}, {30.0, -30.0, 0.0}), vals({3}, {0, 1, 1})}}},
            1e-10)),
        one(
            "pos_weight_weight_none",
            [](const TensorList& x) {
              return TensorList{binary_cross_entropy_with_logits(x[0], x[1], x[2], x[3], Reduction::None)};
            },
            [bcel](const V& x) {
              RT per = x[0];
              for (int64_t i = 0; i < per.numel(); ++i) {
                int64_t c = i % 3;
                per.v[static_cast<size_t>(i)] = bcel(x[0].v[static_cast<size_t>(i)], x[1].v[static_cast<size_t>(i)],
                                                     x[3].v[static_cast<size_t>(c)]) *
                                                x[2].v[static_cast<size_t>(c)];
              }
              return V{per};
            },
            {{"2x3",
              {rnd({2, 3}), vals({2, 3}, {1, 0, 1, 0.5, 1, 0}), rnd({3}, Domain::Positive),
               rnd({3}, Domain::Positive)}}},
            1e-10)}});
}

}  // namespace graft::testing
