// The random fills' CPU kernel: every element of a tensor, in its logical order, gets one
// draw from the generator, computed in double and converted to the element's dtype.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "kernels.h"
#include "loops.h"

namespace graft::cpu {

namespace {

// Writes draw() into each element of self in row-major order (a strided self gets the values a
// contiguous one would).
template <class T, class Draw>
void fill_in_order(const Tensor& self, Draw&& draw) {
  LoopPlan<1> plan(self.sizes(), {self.impl()});
  std::array<char*, 1> base{static_cast<char*>(self.data_ptr())};
  if (plan.flat) {
    T* p = reinterpret_cast<T*>(base[0]);
    for (int64_t i = 0; i < self.numel(); ++i) p[i] = draw();
    return;
  }
  for_each_row<1>(plan, base, {sizeof(T)}, [&](const std::array<char*, 1>& p, int64_t n, const int64_t* st) {
    T* row = reinterpret_cast<T*>(p[0]);
    for (int64_t i = 0; i < n; ++i) row[i * st[0]] = draw();
  });
}

// A value of double `v` as a T (bool: nonzero).
template <class T>
T as(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return static_cast<T>(v);
}

template <class T>
void fill_dtype(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p, std::mt19937_64& gen) {
  using kernel::RandomFill;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  switch (kind) {
    case RandomFill::Uniform:
      return fill_in_order<T>(self, [&] {
        const T v = as<T>(unit(gen) * (p.b - p.a) + p.a);
        return v >= as<T>(p.b) && p.a < p.b ? as<T>(p.a) : v;  // a rounding that reached `to`
      });
    case RandomFill::Normal:
      return fill_in_order<T>(self, [&] { return as<T>(normal(gen) * p.b + p.a); });
    case RandomFill::Bernoulli:
      return fill_in_order<T>(self, [&] { return as<T>(unit(gen) < p.a ? 1.0 : 0.0); });
    case RandomFill::Integers: {
      std::uniform_int_distribution<int64_t> d(p.from, p.last);
      return fill_in_order<T>(self, [&] { return static_cast<T>(d(gen)); });
    }
    case RandomFill::Exponential: {
      std::exponential_distribution<double> d(p.a);
      return fill_in_order<T>(self, [&] { return as<T>(d(gen)); });
    }
    case RandomFill::Geometric: {
      std::geometric_distribution<int64_t> d(p.a);  // failures before the first success
      return fill_in_order<T>(self, [&] { return static_cast<T>(d(gen) + 1); });
    }
    case RandomFill::LogNormal:
      return fill_in_order<T>(self, [&] { return as<T>(std::exp(normal(gen) * p.b + p.a)); });
    case RandomFill::Cauchy:
      return fill_in_order<T>(self, [&] { return as<T>(p.a + p.b * std::tan(std::numbers::pi * (unit(gen) - 0.5))); });
    case RandomFill::TruncNormal:
      return fill_in_order<T>(self, [&] {
        double v = normal(gen) * p.b + p.a;
        for (int redraw = 0; redraw < 1000 && !(v >= p.lo && v <= p.hi); ++redraw) v = normal(gen) * p.b + p.a;
        return as<T>(std::min(std::max(v, p.lo), p.hi));
      });
  }
}

// One row's draws: with replacement, each a uniform draw located in the row's cumulative
// weights (binary search); without, the n largest of weight / Exp(1) draws (PyTorch's
// exponential trick: a weighted sample without replacement, in order of selection).
template <class T>
void multinomial_row(const T* w, int64_t C, int64_t* out, int64_t n, bool replacement, double* work, int64_t* order,
                     std::mt19937_64& gen) {
  if (replacement) {
    double total = 0;
    for (int64_t c = 0; c < C; ++c) work[c] = total += static_cast<double>(w[c]);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int64_t s = 0; s < n; ++s) {
      const double u = unit(gen) * total;
      // the first category whose cumulative weight passes u, skipping zero-weight ones
      int64_t c = std::upper_bound(work, work + C, u) - work;
      if (c >= C) c = C - 1;
      while (c > 0 && w[c] == T(0)) --c;
      out[s] = c;
    }
    return;
  }
  std::exponential_distribution<double> exp1(1.0);
  for (int64_t c = 0; c < C; ++c) work[c] = static_cast<double>(w[c]) / exp1(gen);
  for (int64_t c = 0; c < C; ++c) order[c] = c;
  std::partial_sort(order, order + n, order + C,
                    [&](int64_t i, int64_t j) { return work[i] > work[j] || (work[i] == work[j] && i < j); });
  for (int64_t s = 0; s < n; ++s) out[s] = order[s];
}

}  // namespace

void multinomial(const Tensor& out, const Tensor& probs, bool replacement, std::mt19937_64& gen) {
  GRAFT_INTERNAL_ASSERT(out.is_contiguous() && probs.is_contiguous() && probs.dim() == 2, "multinomial: bad layout");
  const int64_t rows = probs.size(0), C = probs.size(1), n = out.size(1);
  Tensor work = scratch({C}, kFloat64), order = scratch({replacement ? 0 : C}, kInt64);
  GRAFT_DISPATCH_FLOATING(probs.dtype(), "multinomial", [&] {
    const auto* w = static_cast<const scalar_t*>(probs.data_ptr());
    auto* o = static_cast<int64_t*>(out.data_ptr());
    for (int64_t r = 0; r < rows; ++r)
      multinomial_row(w + r * C, C, o + r * n, n, replacement, static_cast<double*>(work.data_ptr()),
                      static_cast<int64_t*>(order.data_ptr()), gen);
  });
}

void random_fill(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p, std::mt19937_64& gen) {
  GRAFT_DISPATCH_ALL(self.dtype(), "random_fill", [&] { fill_dtype<scalar_t>(kind, self, p, gen); });
}

}  // namespace graft::cpu
