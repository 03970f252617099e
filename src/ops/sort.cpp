// Sorting along a dim: sort, topk and argsort (declared in src/ops/ops.yaml; the kernel orders
// each lane, src/backend/cpu/sort_kernels.cpp).
#include "graft/ops/generated_forwards.h"
#include "ops/op_util.h"

namespace graft {
namespace {

// A 0-d tensor as the one-element lane the kernel sorts.
Tensor as_lane(const Tensor& t) { return t.dim() == 0 ? kernel::raw_view(t, {1}, {1}, t.storage_offset()) : t; }

// (values, indices) of self's shape with k elements along dim d: each lane's first k in order.
std::pair<Tensor, Tensor> sorted_lanes(const Tensor& self, int64_t d, int64_t k, bool descending) {
  Shape sizes = self.sizes().shape();
  if (!sizes.empty()) sizes[static_cast<size_t>(d)] = k;
  Tensor values = detail::new_empty(sizes, self.dtype(), self.device());
  Tensor indices = detail::new_empty(sizes, kInt64, self.device());
  kernel::sort(as_lane(values), as_lane(indices), as_lane(self), d, descending);
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> detail::sort_forward(const Tensor& self, int64_t dim, bool descending, bool /*stable*/) {
  // always stable: PyTorch's CPU sort is too, whatever `stable` says
  detail::check_tensor(self, "sort");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "sort");
  return sorted_lanes(self, d, self.dim() == 0 ? 1 : self.size(d), descending);
}

std::pair<Tensor, Tensor> detail::topk_forward(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                               bool /*sorted*/) {
  // always sorted: PyTorch allows any order when sorted=False, and sorting costs the kernel little
  detail::check_tensor(self, "topk");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GRAFT_CHECK(k >= 0 && k <= n, RuntimeError, "selected index k out of range");
  return sorted_lanes(self, d, k, largest);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return detail::sort_forward(self, dim, descending, stable).second;  // indices: no gradient to record
}

}  // namespace graft
