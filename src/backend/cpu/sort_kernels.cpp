// Sorting along a dim: sort and topk (the first k of each sorted lane). Every lane is read
// contiguously (a scratch copy when the dim is not innermost) and ordered through a scratch
// permutation, so the kernel's memory goes through the allocator like any other.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

// Whether lane value x comes before y: ascending puts NaN after every number, descending
// before, as PyTorch's sort; equal values (NaN with NaN) keep their order (the caller breaks
// ties by position).
template <class T>
bool comes_first(T x, T y, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return descending ? (xn && !yn) : (!xn && yn);
  }
  return descending ? x > y : x < y;
}

template <class T>
void sort_lanes(const Tensor& values, const Tensor& indices, const Tensor& lanes, int64_t R, int64_t dim,
                bool descending, int64_t* order) {
  const int64_t k = values.size(dim);
  int64_t inner = 1;  // the output's elements after dim, per step along it
  for (int64_t d = dim + 1; d < values.dim(); ++d) inner *= values.size(d);
  const T* x = static_cast<const T*>(lanes.data_ptr());
  T* v = static_cast<T*>(values.data_ptr());
  int64_t* ix = static_cast<int64_t*>(indices.data_ptr());
  const int64_t M = R == 0 ? 0 : lanes.numel() / R;
  for (int64_t m = 0; m < M; ++m) {
    const T* lane = x + m * R;
    std::iota(order, order + R, int64_t{0});
    auto before = [&](int64_t i, int64_t j) {
      if (comes_first(lane[i], lane[j], descending)) return true;
      if (comes_first(lane[j], lane[i], descending)) return false;
      return i < j;  // a stable order: ties by position
    };
    if (k == R)
      std::sort(order, order + R, before);
    else
      std::partial_sort(order, order + k, order + R, before);
    // lane m is (outer, inner) of the output's row-major order with dim taken out
    const int64_t base = (m / inner) * k * inner + m % inner;
    for (int64_t j = 0; j < k; ++j) {
      v[base + j * inner] = lane[order[j]];
      ix[base + j * inner] = order[j];
    }
  }
}

}  // namespace

void sort(const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim, bool descending) {
  GRAFT_INTERNAL_ASSERT(values.is_contiguous() && indices.is_contiguous(), "sort: outputs must be contiguous");
  int64_t R = 0;
  Tensor lanes = backend::reduce_permuted(a, uint64_t{1} << dim, R);
  if (!lanes.is_contiguous()) {
    Tensor c = scratch(lanes.sizes(), a.dtype());
    copy(c, lanes);
    lanes = c;
  }
  Tensor order = scratch({R}, kInt64);
  GRAFT_DISPATCH_ALL(a.dtype(), "sort", [&] {
    sort_lanes<scalar_t>(values, indices, lanes, R, dim, descending, static_cast<int64_t*>(order.data_ptr()));
  });
}

}  // namespace graft::cpu
