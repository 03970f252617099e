// Reduction CPU kernels. Strategy: permute the reduced dims to the end, make the input
// contiguous (a copy only when needed), then reduce each inner block in one loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

// Returns `a` with reduced dims moved last and made contiguous (no autograd), and the
// inner block size R.
Tensor reduced_last(const Tensor& a, uint64_t mask, int64_t& R) {
  Tensor p = backend::reduce_permuted(a, mask, R);
  if (p.is_contiguous()) return p;
  Tensor c = scratch(p.sizes(), a.dtype());
  copy(c, p);
  return c;
}

template <class T, class Acc>
Acc sum_block(const T* x, int64_t n) {
  // pairwise blocks of 8 accumulators for accuracy and vectorization
  Acc s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) s[k] += static_cast<Acc>(x[i + k]);
  Acc r = 0;
  for (int k = 0; k < 8; ++k) r += s[k];
  for (; i < n; ++i) r += static_cast<Acc>(x[i]);
  return r;
}

}  // namespace

void reduce(ReduceOp op, const Tensor& out, const Tensor& a, uint64_t mask) {
  int64_t R;
  Tensor c = reduced_last(a, mask, R);
  const int64_t M = out.numel();
  GRAFT_INTERNAL_ASSERT(out.is_contiguous());
  GRAFT_DISPATCH_ALL(out.dtype(), "reduce", [&] {
    using O = scalar_t;
    GRAFT_DISPATCH_ALL(c.dtype(), "reduce", [&] {
      using T = scalar_t;
      const T* x = static_cast<const T*>(c.data_ptr());
      O* o = static_cast<O*>(out.data_ptr());
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      for (int64_t m = 0; m < M; ++m) {
        const T* b = x + m * R;
        switch (op) {
          case ReduceOp::Sum:
            o[m] = static_cast<O>(sum_block<T, Acc>(b, R));
            break;
          case ReduceOp::Prod: {
            Acc p = 1;
            for (int64_t i = 0; i < R; ++i) p *= static_cast<Acc>(b[i]);
            o[m] = static_cast<O>(p);
            break;
          }
          case ReduceOp::Max:
          case ReduceOp::Min: {
            T best = b[0];
            for (int64_t i = 1; i < R; ++i) {
              T v = b[i];
              if constexpr (std::is_floating_point_v<T>) {
                if (std::isnan(best)) break;
                if (std::isnan(v)) {
                  best = v;
                  break;
                }
              }
              if (op == ReduceOp::Max ? v > best : v < best) best = v;
            }
            o[m] = static_cast<O>(best);
            break;
          }
          case ReduceOp::LogSumExp: {
            if constexpr (std::is_floating_point_v<T>) {
              double mx = -std::numeric_limits<double>::infinity();
              bool nan = false;  // a NaN anywhere makes the result NaN (std::max would skip it)
              for (int64_t i = 0; i < R; ++i) {
                const double v = static_cast<double>(b[i]);
                if (v != v)
                  nan = true;
                else
                  mx = std::max(mx, v);
              }
              if (nan) {
                o[m] = std::numeric_limits<O>::quiet_NaN();
                break;
              }
              if (std::isinf(mx)) {
                o[m] = static_cast<O>(mx);
                break;
              }
              double s = 0;
              for (int64_t i = 0; i < R; ++i) s += std::exp(static_cast<double>(b[i]) - mx);
              o[m] = static_cast<O>(mx + std::log(s));
            }
            break;
          }
        }
      }
    });
  });
}

void arg_reduce(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim) {
  int64_t R;
  Tensor c = reduced_last(a, uint64_t{1} << dim, R);
  const int64_t M = indices.numel();
  GRAFT_DISPATCH_ALL(c.dtype(), "max", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(c.data_ptr());
    T* v = values.defined() ? static_cast<T*>(values.data_ptr()) : nullptr;
    int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
    for (int64_t m = 0; m < M; ++m) {
      const T* b = x + m * R;
      int64_t bi = 0;
      T best = b[0];
      for (int64_t i = 1; i < R; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(best)) break;
          if (std::isnan(b[i])) {
            best = b[i];
            bi = i;
            break;
          }
        }
        if (is_max ? b[i] > best : b[i] < best) {
          best = b[i];
          bi = i;
        }
      }
      if (v) v[m] = best;
      ix[m] = bi;
    }
  });
}

void var(const Tensor& out, const Tensor& a, uint64_t mask, double correction, bool sqrt_result) {
  int64_t R;
  Tensor c = reduced_last(a, mask, R);
  const int64_t M = out.numel();
  GRAFT_DISPATCH_FLOATING(out.dtype(), "var", [&] {
    using T = scalar_t;
    const T* x = static_cast<const T*>(c.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t m = 0; m < M; ++m) {
      const T* b = x + m * R;
      double mean = 0;
      for (int64_t i = 0; i < R; ++i) mean += b[i];
      mean /= static_cast<double>(R);
      double ss = 0;
      for (int64_t i = 0; i < R; ++i) ss += (b[i] - mean) * (b[i] - mean);
      const double denom = static_cast<double>(R) - correction;
      const double v = ss / std::max(denom, 0.0);  // N <= correction: inf or nan, as PyTorch
      // the root in double: std of [1e38, 0] in float32 is 7.07e37 though its variance overflows
      o[m] = static_cast<T>(sqrt_result ? std::sqrt(v) : v);
    }
  });
}

namespace {
// One group's ord-norm, in double.
template <class T>
double norm_of(const T* b, int64_t R, double ord) {
  double acc = 0;
  if (std::isinf(ord)) {
    acc = ord > 0 ? 0 : std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < R; ++i) {
      const double v = std::abs(static_cast<double>(b[i]));
      if (v != v) return v;  // NaN wins
      acc = ord > 0 ? std::max(acc, v) : std::min(acc, v);
    }
    return acc;
  }
  for (int64_t i = 0; i < R; ++i) {
    const double v = std::abs(static_cast<double>(b[i]));
    if (ord == 0)
      acc += v != 0 ? 1 : 0;  // NaN counts as nonzero
    else if (ord == 1)
      acc += v;
    else if (ord == 2)
      acc += v * v;
    else
      acc += std::pow(v, ord);
  }
  if (ord == 0 || ord == 1) return acc;
  return ord == 2 ? std::sqrt(acc) : std::pow(acc, 1 / ord);
}
}  // namespace

void vector_norm(const Tensor& out, const Tensor& a, uint64_t mask, double ord) {
  int64_t R;
  Tensor c = reduced_last(a, mask, R);
  const int64_t M = out.numel();
  GRAFT_INTERNAL_ASSERT(out.is_contiguous() && out.dtype() == a.dtype(),
                        "vector_norm: out must be contiguous, of a's dtype");
  GRAFT_DISPATCH_FLOATING(a.dtype(), "linalg_vector_norm", [&] {
    const auto* x = static_cast<const scalar_t*>(c.data_ptr());
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t m = 0; m < M; ++m) o[m] = static_cast<scalar_t>(norm_of(x + m * R, R, ord));
  });
}

}  // namespace graft::cpu
