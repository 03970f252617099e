// Scans along a dim: the running sum of each lane (cumsum), accumulated in double for floating
// types and int64 for integers, as PyTorch's CPU kernel accumulates.
#include <type_traits>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {

void cumsum(const Tensor& out, const Tensor& a, int64_t dim) {
  GRAFT_INTERNAL_ASSERT(out.is_contiguous() && out.dtype() == a.dtype(),
                        "cumsum: out must be contiguous, of a's dtype");
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
  GRAFT_DISPATCH_ALL(a.dtype(), "cumsum", [&] {
    using T = scalar_t;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const T* x = static_cast<const T*>(lanes.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t m = 0; m < M; ++m) {
      const T* lane = x + m * R;
      T* dst = o + (m / inner) * R * inner + m % inner;
      Acc acc = 0;
      for (int64_t j = 0; j < R; ++j) {
        acc += static_cast<Acc>(lane[j]);
        dst[j * inner] = static_cast<T>(acc);
      }
    }
  });
}

}  // namespace graft::cpu
