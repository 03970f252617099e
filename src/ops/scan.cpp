// Scans along a dim (declared in src/ops/ops.yaml): cumsum, cumprod, cummax, cummin and
// logcumsumexp, each lane walked once by the kernel (src/backend/cpu/scan_kernels.cpp).
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

using kernel::ScanOp;

// A 0-d tensor as the one-element lane the kernel scans.
Tensor as_lane(const Tensor& t) { return t.dim() == 0 ? kernel::raw_view(t, {1}, {1}, t.storage_offset()) : t; }

// out (and indices, for Max and Min) of self's shape in out_dtype: the scan of self along dim.
std::pair<Tensor, Tensor> scanned(ScanOp op, const Tensor& self, int64_t dim, DType out_dtype, const char* name) {
  detail::check_tensor(self, name);
  const int64_t d = detail::wrap_dim(dim, self.dim(), name);
  if ((op == ScanOp::Sum || op == ScanOp::Prod) && out_dtype == kBool)
    detail::kernel_not_implemented(op == ScanOp::Sum ? "cumsum_out_cpu" : "cumprod_out_cpu", kBool);
  Tensor tmp;
  const Tensor& src = detail::as_dtype(self, out_dtype, tmp);
  Tensor out = detail::new_empty(self.sizes(), out_dtype, self.device());
  Tensor indices;
  if (op == ScanOp::Max || op == ScanOp::Min) indices = detail::new_empty(self.sizes(), kInt64, self.device());
  kernel::scan(op, as_lane(out), indices.defined() ? as_lane(indices) : indices, as_lane(src), d);
  return {out, indices};
}

// Integer and bool inputs sum and multiply in int64 unless a dtype is given, as PyTorch's.
DType accumulating_dtype(const Tensor& self, std::optional<DType> dtype) {
  return dtype ? *dtype : is_integral(self.dtype(), /*include_bool=*/true) ? kInt64 : self.dtype();
}

// PyTorch 2.x's check of cummax's / cummin's dim on a 0-d tensor.
void check_scalar_dim(const Tensor& self, int64_t dim, const char* name) {
  GRAFT_CHECK(self.dim() > 0 || dim == 0 || dim == -1, IndexError, name,
              "(): Expected reduction dim -1 or 0 for scalar but got ", dim);
}

}  // namespace

Tensor detail::cumsum_forward(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scanned(ScanOp::Sum, self, dim, accumulating_dtype(self, dtype), "cumsum").first;
}

Tensor detail::cumprod_forward(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scanned(ScanOp::Prod, self, dim, accumulating_dtype(self, dtype), "cumprod").first;
}

std::pair<Tensor, Tensor> detail::cummax_forward(const Tensor& self, int64_t dim) {
  check_scalar_dim(self, dim, "cummax");
  return scanned(ScanOp::Max, self, dim, self.dtype(), "cummax");
}

std::pair<Tensor, Tensor> detail::cummin_forward(const Tensor& self, int64_t dim) {
  check_scalar_dim(self, dim, "cummin");
  return scanned(ScanOp::Min, self, dim, self.dtype(), "cummin");
}

Tensor detail::logcumsumexp_forward(const Tensor& self, int64_t dim) {
  detail::check_tensor(self, "logcumsumexp");
  (void)detail::wrap_dim(dim, self.dim(), "logcumsumexp");  // the dim is checked first, as PyTorch's
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented("logcumsumexp_out_cpu", self.dtype());
  return scanned(ScanOp::LogSumExp, self, dim, self.dtype(), "logcumsumexp").first;
}

}  // namespace graft
