// Sorting along a dim: sort, topk and argsort, and the order statistics picked from sorted lanes:
// kthvalue, median, nanmedian (declared in src/ops/ops.yaml; the kernel orders each lane,
// src/backend/cpu/sort_kernels.cpp).
#include <cmath>
#include <limits>

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

namespace {

// A compact copy of t (a view of a sorted buffer would keep the whole buffer alive).
Tensor compact(const Tensor& t) {
  Tensor out = detail::new_empty(t.sizes(), t.dtype(), t.device());
  kernel::copy(out, t);
  return out;
}

// (values, indices) at position `pos` (int64, self's shape with 1 along d) of each sorted lane.
std::pair<Tensor, Tensor> picked(const std::pair<Tensor, Tensor>& sorted, int64_t d, const Tensor& pos, bool keepdim) {
  if (sorted.first.dim() == 0) return sorted;
  Tensor values = compact(sorted.first.gather(d, pos)), indices = compact(sorted.second.gather(d, pos));
  if (keepdim) return {values, indices};
  return {compact(values.squeeze(d)), compact(indices.squeeze(d))};
}

// The number of NaNs of each lane along d (keepdim), 0 for non-floating self.
Tensor nan_counts(const Tensor& self, int64_t d) {
  if (self.dim() == 0) return zeros({}, TensorOptions(kInt64).device(self.device()));
  return isnan(self).sum({d}, /*keepdim=*/true);
}

// The lower median (or, ignoring NaN, nanmedian) of each lane of self along dim.
std::pair<Tensor, Tensor> lane_median(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan,
                                      const char* name) {
  detail::check_tensor(self, name);
  if (self.dtype() == kBool) detail::kernel_not_implemented("median_cpu", kBool);
  const int64_t d = detail::wrap_dim(dim, self.dim(), name);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GRAFT_CHECK(n > 0, IndexError, name, "(): Expected reduction dim ", d, " to have non-zero size.");
  const auto sorted = sorted_lanes(self, d, n, false);
  const Tensor nans = nan_counts(self, d);
  const Tensor counted = ignore_nan ? (n - nans) : full({}, n, TensorOptions(kInt64).device(self.device()));
  Tensor pos = floor_divide(clamp(counted - 1, Scalar(0)), 2);
  if (!ignore_nan) pos = where(gt(nans, 0), n - nans, pos);  // a lane with NaN: its first NaN
  return picked(sorted, d, pos, keepdim);
}

}  // namespace

std::pair<Tensor, Tensor> detail::kthvalue_forward(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  detail::check_tensor(self, "kthvalue");
  if (self.dtype() == kBool) detail::kernel_not_implemented("kthvalue_cpu", kBool);
  const int64_t d = detail::wrap_dim(dim, self.dim(), "kthvalue");
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  GRAFT_CHECK(k >= 1 && k <= n, RuntimeError, "kthvalue(): selected number k out of range for dimension ", d);
  const auto sorted = sorted_lanes(self, d, n, false);
  Shape at = self.sizes().shape();
  if (!at.empty()) at[static_cast<size_t>(d)] = 1;
  return picked(sorted, d, full(at, k - 1, TensorOptions(kInt64).device(self.device())), keepdim);
}

std::pair<Tensor, Tensor> detail::median_forward(const Tensor& self, int64_t dim, bool keepdim) {
  return lane_median(self, dim, keepdim, /*ignore_nan=*/false, "median");
}

std::pair<Tensor, Tensor> detail::nanmedian_forward(const Tensor& self, int64_t dim, bool keepdim) {
  return lane_median(self, dim, keepdim, /*ignore_nan=*/true, "nanmedian");
}

// The median of no element: NaN, or for integers what NaN converts to on x86, the lowest value
// (PyTorch fills NaN into the integer result).
Tensor no_median(const Tensor& self) {
  const TensorOptions options = TensorOptions(self.dtype()).device(self.device());
  if (self.dtype() == kBool) return full({}, true, options);  // NaN converted to bool
  if (is_floating_point(self.dtype())) return full({}, NAN, options);
  return full({},
              self.dtype() == kInt32 ? Scalar(std::numeric_limits<int32_t>::min())
                                     : Scalar(std::numeric_limits<int64_t>::min()),
              options);
}

Tensor detail::median_forward(const Tensor& self) {
  detail::check_tensor(self, "median");
  if (self.numel() == 0) return no_median(self);
  return lane_median(self.reshape({-1}), 0, false, false, "median").first;
}

Tensor detail::nanmedian_forward(const Tensor& self) {
  detail::check_tensor(self, "nanmedian");
  if (self.numel() == 0) return no_median(self);
  return lane_median(self.reshape({-1}), 0, false, true, "nanmedian").first;
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return detail::sort_forward(self, dim, descending, stable).second;  // indices: no gradient to record
}

}  // namespace graft
