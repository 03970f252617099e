// Binary search in sorted lanes (searchsorted, bucketize, isin): each value's insertion point,
// with PyTorch's predicates, so a NaN value (never <= or < anything) goes after every element.
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {

void search_sorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right) {
  GRAFT_INTERNAL_ASSERT(sorted.is_contiguous() && values.is_contiguous() && out.is_contiguous() &&
                            sorted.dtype() == values.dtype() && out.dtype() == kInt64,
                        "search_sorted: contiguous operands of one dtype, int64 out");
  const int64_t rows = values.size(0), m = values.size(1), n = sorted.size(1);
  const bool shared = sorted.size(0) == 1;
  auto* o = static_cast<int64_t*>(out.data_ptr());
  GRAFT_DISPATCH_ALL(values.dtype(), "searchsorted", [&] {
    const auto* s = static_cast<const scalar_t*>(sorted.data_ptr());
    const auto* v = static_cast<const scalar_t*>(values.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      const scalar_t* lane = s + (shared ? 0 : r * n);
      for (int64_t j = 0; j < m; ++j) {
        const scalar_t x = v[r * m + j];
        int64_t lo = 0, hi = n;
        while (lo < hi) {  // the first position where the element is >= x (right: > x)
          const int64_t mid = lo + (hi - lo) / 2;
          const bool before = right ? !(lane[mid] > x) : !(lane[mid] >= x);
          if (before)
            lo = mid + 1;
          else
            hi = mid;
        }
        o[r * m + j] = lo;
      }
    }
  });
}

}  // namespace graft::cpu
