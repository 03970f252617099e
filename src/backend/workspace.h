#pragma once
// The scratch memory a kernel takes for itself, decided from geometry alone so that every
// backend takes the same: the CPU kernels allocate these buffers, the meta kernels allocate
// them on the meta device and drop them, so memory estimates (graft.utils.memory.estimate)
// see the same transient peaks as a real run. docs/notes/devices.md.
#include <algorithm>
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

/// The scratch LAPACK's routines take beyond their operands (one matrix's worth, reused across a
/// batch): `work` elements of the operands' dtype and `iwork` int32s. Sizes are LAPACK's documented
/// minimums plus room for its blocked paths (block size 64), never a workspace query, so that the
/// meta backend, which has no LAPACK call to make, takes the same.
struct LapackWorkspace {
  int64_t work = 0, iwork = 0;
};
/// geqrf + orgqr of an m x n matrix whose Q has q_cols columns: the reflectors' scales (min(m, n))
/// and the blocked work.
inline LapackWorkspace qr_workspace(int64_t m, int64_t n, int64_t q_cols) {
  return {std::min(m, n) + std::max<int64_t>({n, q_cols, 1}) * 64, 0};
}
/// gesdd of an m x n matrix, with singular vectors or without ('S'/'A' or 'N').
inline LapackWorkspace svd_workspace(int64_t m, int64_t n, bool vectors) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  const int64_t minimum = vectors ? 4 * mn * mn + 6 * mn + mx + mn : 3 * mn + std::max(mx, 7 * mn);
  return {std::max<int64_t>(minimum + (mx + mn) * 64, 1), std::max<int64_t>(8 * mn, 1)};
}
/// syevd of an n x n matrix, with eigenvectors or without ('V'/'N').
inline LapackWorkspace eigh_workspace(int64_t n, bool vectors) {
  if (n <= 1) return {1, 1};
  return vectors ? LapackWorkspace{1 + 6 * n + 2 * n * n, 3 + 5 * n} : LapackWorkspace{2 * n + 1, 1};
}

}  // namespace graft::backend
