#pragma once
// The scratch memory a kernel takes for itself, decided from geometry alone so that every
// backend takes the same: the CPU kernels allocate these buffers, the meta kernels allocate
// them on the meta device and drop them, so memory estimates (graft.utils.memory.estimate)
// see the same transient peaks as a real run. docs/notes/devices.md.
#include <vector>

#include "graft/backend/kernels.h"

namespace graft::backend {

/// Whether binary_scalar(op) on dtype `dt` copies the scalar into a 0-d operand tensor (the
/// ops it has no direct scalar loop for) instead of applying it in the loop.
inline bool binary_scalar_uses_operand(kernel::BinaryOp op, DType dt) {
  using kernel::BinaryOp;
  if (dt == kBool) return true;
  if (op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Pow) return false;
  if (op == BinaryOp::Div) return !is_floating_point(dt);
  return true;
}

/// `a` with the dims in `mask` moved last (a view, no autograd); R = their element count.
/// Reductions copy it to a contiguous scratch tensor when it is not contiguous.
inline Tensor reduce_permuted(const Tensor& a, uint64_t mask, int64_t& R) {
  std::vector<int64_t> perm;
  R = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!(mask >> d & 1)) perm.push_back(d);
  for (int64_t d = 0; d < a.dim(); ++d)
    if (mask >> d & 1) {
      perm.push_back(d);
      R *= a.size(d);
    }
  Shape sizes, strides;
  for (auto d : perm) {
    sizes.push_back(a.size(d));
    strides.push_back(a.stride(d));
  }
  return kernel::raw_view(a, sizes, strides, a.storage_offset());
}

/// Whether gemm must copy the matrix m (its last two dims) to a contiguous scratch tensor
/// because neither m nor its transpose has a unit inner stride BLAS can take.
inline bool blas_needs_copy(const Tensor& m) {
  const int64_t r = m.dim() - 2;
  const int64_t rows = m.size(r), cols = m.size(r + 1);
  const int64_t rs = m.stride(r), cs = m.stride(r + 1);
  if (cs == 1 && (rs >= std::max<int64_t>(cols, 1) || rows == 1)) return false;
  if (rs == 1 && (cs >= std::max<int64_t>(rows, 1) || cols == 1)) return false;
  return true;
}

}  // namespace graft::backend
