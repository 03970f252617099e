// The meta backend: tensors with sizes, strides and dtype but no data (PyTorch's "meta"
// device). The ops layer has already checked the arguments and allocated every output with
// its metadata, so a meta kernel computes nothing. What it does do is take the same scratch
// memory the CPU kernel would (backend/workspace.h decides it from geometry for both), so the
// meta device's caching allocator sees a real run's allocations: graft.utils.memory.estimate
// reads its peaks. docs/notes/devices.md.
#include <array>

#include "backend/workspace.h"
#include "graft/backend/generated_kernel_ids.h"
#include "graft/core/allocator.h"
#include "meta_table.h"

namespace graft::meta {
namespace {

using kernel::BinaryOp;
using kernel::DivMode;
using kernel::ReduceOp;
using kernel::Window2d;

// A CPU kernel's scratch tensor of `numel` elements, on the meta device: freed when dropped.
DataPtr scratch(int64_t numel, DType dtype) {
  return allocator_for(kMeta)->allocate(static_cast<size_t>(numel) * element_size(dtype));
}
// ... given back at once, as the CPU kernel gives its own back when it returns.
void transient_scratch(int64_t numel, DType dtype) { (void)scratch(numel, dtype); }

// Reductions copy a non-contiguous permuted input to scratch first (cpu/reduce_kernels.cpp).
void reduce_scratch(const Tensor& a, uint64_t mask) {
  int64_t r = 0;
  Tensor p = backend::reduce_permuted(a, mask, r);
  if (!p.is_contiguous()) transient_scratch(p.numel(), p.dtype());
}

void unary(kernel::UnaryOp, const Tensor&, const Tensor&, double, double) {}
void binary(BinaryOp, const Tensor&, const Tensor&, const Tensor&, const Scalar&) {}
void binary_scalar(BinaryOp op, const Tensor&, const Tensor& a, const Scalar&, const Scalar&, bool) {
  if (backend::binary_scalar_uses_operand(op, a.dtype())) transient_scratch(1, a.dtype());
}
bool rounding_div(DivMode, const Tensor&, const Tensor&, const Tensor&) { return false; }
void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) {}
void copy(const Tensor&, const Tensor&) {}
void fill(const Tensor&, const Scalar&) {}
void reduce(ReduceOp, const Tensor&, const Tensor& a, uint64_t mask) { reduce_scratch(a, mask); }
void arg_reduce(bool, const Tensor&, const Tensor&, const Tensor& a, int64_t dim) {
  reduce_scratch(a, uint64_t{1} << dim);
}
void var(const Tensor&, const Tensor& a, uint64_t mask, double, bool) { reduce_scratch(a, mask); }
void gemm(const Tensor& c, const Tensor& a, const Tensor& b) {
  // BLAS takes float32/float64 operands it cannot read in place as contiguous copies, one
  // batch at a time (cpu/gemm.cpp); every batch has the first one's geometry.
  const bool batched = c.dim() == 3;
  if ((batched && c.size(0) == 0) || a.size(-2) == 0 || b.size(-1) == 0 || a.size(-1) == 0) return;
  if (c.dtype() != kFloat32 && c.dtype() != kFloat64) return;
  auto matrix = [&](const Tensor& m) {
    return batched ? kernel::raw_view(m, {m.size(1), m.size(2)}, {m.stride(1), m.stride(2)}, m.storage_offset()) : m;
  };
  const Tensor ma = matrix(a), mb = matrix(b);
  DataPtr sa, sb;  // both live through the BLAS call
  if (backend::blas_needs_copy(ma)) sa = scratch(ma.numel(), ma.dtype());
  if (backend::blas_needs_copy(mb)) sb = scratch(mb.numel(), mb.dtype());
}
void index_select(const Tensor&, const Tensor&, int64_t, const Tensor&) {}
void index_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {}
void gather(const Tensor&, const Tensor&, int64_t, const Tensor&) {}
void scatter_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {}
void im2col(const Tensor&, const Tensor&, const Window2d&, int64_t, int64_t) {}
void col2im(const Tensor&, const Tensor&, const Window2d&, int64_t, int64_t) {}
void max_pool2d(const Tensor&, const Tensor&, const Tensor&, const Window2d&) {}
void random_fill(kernel::RandomFill, const Tensor&, const kernel::RandomParams&, std::mt19937_64&) {}
void multinomial(const Tensor&, const Tensor& probs, bool replacement, std::mt19937_64&) {
  const DataPtr work = scratch(probs.size(1), kFloat64), order = scratch(replacement ? 0 : probs.size(1), kInt64);
}
// sort and the scans read each lane contiguously: a non-contiguous one is copied to scratch first;
// sort orders a lane through a permutation of its length
DataPtr lanes_scratch(const Tensor& a, int64_t dim, int64_t& R) {
  Tensor lanes = backend::reduce_permuted(a, uint64_t{1} << dim, R);
  return lanes.is_contiguous() ? DataPtr() : scratch(lanes.numel(), a.dtype());
}
void sort(const Tensor&, const Tensor&, const Tensor& a, int64_t dim, bool) {
  int64_t R = 0;
  const DataPtr lanes = lanes_scratch(a, dim, R);
  const DataPtr order = scratch(R, kInt64);
}
void scan(kernel::ScanOp, const Tensor&, const Tensor&, const Tensor& a, int64_t dim) {
  int64_t R = 0;
  const DataPtr lanes = lanes_scratch(a, dim, R);
}
void search_sorted(const Tensor&, const Tensor&, const Tensor&, bool) {}
// The LAPACK kernels take the workspaces backend/workspace.h sizes (cpu/lapack_kernels.cpp).
void lu_factor(const Tensor&, const Tensor&, const Tensor&) {}
void lu_solve(const Tensor&, const Tensor&, const Tensor&, bool) {}
void cholesky(const Tensor&, const Tensor&, bool) {}
void triangular_solve(const Tensor&, const Tensor&, bool, bool, bool) {}
void qr(const Tensor& q, const Tensor&, const Tensor& a) {
  const int64_t q_cols = q.numel() > 0 ? q.size(-1) : 0;
  const DataPtr work = scratch(backend::qr_workspace(a.size(-2), a.size(-1), q_cols).work, a.dtype());
}
void svd(const Tensor& u, const Tensor&, const Tensor& vh, const Tensor& a, const Tensor&) {
  if (std::min(a.size(-2), a.size(-1)) == 0) return;
  const auto ws = backend::svd_workspace(a.size(-2), a.size(-1), u.numel() > 0 || vh.numel() > 0);
  const DataPtr work = scratch(ws.work, a.dtype()), iwork = scratch(ws.iwork, kInt32);
}
void eigh(const Tensor&, const Tensor& v, const Tensor&, bool, bool vectors) {
  if (v.size(-1) == 0) return;
  const auto ws = backend::eigh_workspace(v.size(-1), vectors);
  const DataPtr work = scratch(ws.work, v.dtype()), iwork = scratch(ws.iwork, kInt32);
}
void triangle(const Tensor&, const Tensor&, int64_t, bool) {}
void vector_norm(const Tensor&, const Tensor& a, uint64_t mask, double) { reduce_scratch(a, mask); }
void generated_op(const Tensor&, const Tensor&, const double*) {}

constexpr std::array<kernel::UnaryKernelFn, kernel::kNumGeneratedKernels> all_generated_ops() {
  std::array<kernel::UnaryKernelFn, kernel::kNumGeneratedKernels> a{};
  for (auto& f : a) f = &generated_op;
  return a;
}
constinit const std::array<kernel::UnaryKernelFn, kernel::kNumGeneratedKernels> kGenerated = all_generated_ops();
void generated_binary_op(const Tensor&, const Tensor&, const Tensor&) {}
constexpr std::array<kernel::BinaryKernelFn, kernel::kNumGeneratedBinaryKernels> all_generated_binary_ops() {
  std::array<kernel::BinaryKernelFn, kernel::kNumGeneratedBinaryKernels> a{};
  for (auto& f : a) f = &generated_binary_op;
  return a;
}
constinit const std::array<kernel::BinaryKernelFn, kernel::kNumGeneratedBinaryKernels> kGeneratedBinary =
    all_generated_binary_ops();

}  // namespace

constinit const kernel::KernelTable kKernelTable{
    .name = "Meta",
    GRAFT_FOR_EACH_KERNEL(GRAFT_KERNEL_ENTRY).generated = kGenerated.data(),
    .generated_binary = kGeneratedBinary.data(),
};

}  // namespace graft::meta
