// Scans along a dim: each lane walked once, its running sum, product, maximum or minimum (with
// the position of each) or log-sum-exp written as it goes. Sums and products accumulate in
// double for floating types and int64 for integers, as PyTorch's CPU kernels do.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

// log(exp(acc) + exp(x)) without overflow; NaN propagates; two infinities of one sign stay.
double log_add_exp(double acc, double x) {
  if (std::isnan(x)) return x;
  const double lo = std::min(acc, x), hi = std::max(acc, x);
  if (lo != hi || std::isfinite(lo)) return hi + std::log1p(std::exp(lo - hi));
  return acc;
}

// Whether x replaces the running extreme m: a NaN always does (each NaN is the new extreme),
// nothing replaces a NaN; ties move to the later one.
template <class T>
bool takes_over(kernel::ScanOp op, T x, T m) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return true;
    if (std::isnan(m)) return false;
  }
  return op == kernel::ScanOp::Max ? x >= m : x <= m;
}

// One lane of R elements: x read contiguously, out (and idx) written every `inner` elements.
template <class T>
void scan_lane(kernel::ScanOp op, const T* x, T* out, int64_t* idx, int64_t R, int64_t inner) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  switch (op) {
    case kernel::ScanOp::Sum:
    case kernel::ScanOp::Prod: {
      const bool sum = op == kernel::ScanOp::Sum;
      Acc acc = sum ? 0 : 1;
      for (int64_t j = 0; j < R; ++j) {
        acc = sum ? acc + static_cast<Acc>(x[j]) : acc * static_cast<Acc>(x[j]);
        out[j * inner] = static_cast<T>(acc);
      }
      return;
    }
    case kernel::ScanOp::Max:
    case kernel::ScanOp::Min: {
      T m = x[0];
      int64_t at = 0;
      for (int64_t j = 0; j < R; ++j) {
        if (takes_over(op, x[j], m)) m = x[j], at = j;
        out[j * inner] = m;
        idx[j * inner] = at;
      }
      return;
    }
    case kernel::ScanOp::LogSumExp: {
      double acc = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < R; ++j) {
        acc = log_add_exp(acc, static_cast<double>(x[j]));
        out[j * inner] = static_cast<T>(acc);
      }
      return;
    }
  }
}

}  // namespace

void scan(kernel::ScanOp op, const Tensor& out, const Tensor& indices, const Tensor& a, int64_t dim) {
  GRAFT_INTERNAL_ASSERT(out.is_contiguous() && out.dtype() == a.dtype(), "scan: out must be contiguous, of a's dtype");
  int64_t R = 0;
  Tensor lanes = backend::reduce_permuted(a, uint64_t{1} << dim, R);
  if (!lanes.is_contiguous()) {
    Tensor c = scratch(lanes.sizes(), a.dtype());
    copy(c, lanes);
    lanes = c;
  }
  int64_t inner = 1;  // out's elements after dim, per step along it
  for (int64_t d = dim + 1; d < out.dim(); ++d) inner *= out.size(d);
  const int64_t M = R == 0 ? 0 : lanes.numel() / R;
  int64_t* idx = indices.defined() ? static_cast<int64_t*>(indices.data_ptr()) : nullptr;
  GRAFT_DISPATCH_ALL(a.dtype(), "scan", [&] {
    const auto* x = static_cast<const scalar_t*>(lanes.data_ptr());
    auto* o = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t m = 0; m < M; ++m) {
      const int64_t first = (m / inner) * R * inner + m % inner;
      scan_lane<scalar_t>(op, x + m * R, o + first, idx ? idx + first : nullptr, R, inner);
    }
  });
}

}  // namespace graft::cpu
