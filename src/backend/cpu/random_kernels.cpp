// The random fills' CPU kernel: every element of a tensor, in its logical order, gets one
// draw from the generator, computed in double and converted to the element's dtype.
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

}  // namespace

void random_fill(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p, std::mt19937_64& gen) {
  GRAFT_DISPATCH_ALL(self.dtype(), "random_fill", [&] { fill_dtype<scalar_t>(kind, self, p, gen); });
}

}  // namespace graft::cpu
