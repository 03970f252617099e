#pragma once
// CPU kernels. They compute values only: no autograd, no argument checks beyond internal
// asserts (the ops layer in src/ops validates and promotes first). Outputs are preallocated.
// Registered in cpu_table.cpp.
#include "graft/backend/kernels.h"
#include "graft/core/allocator.h"
#include "graft/core/tensor.h"

namespace graft::cpu {

using kernel::BinaryOp;
using kernel::DivMode;
using kernel::raw_view;
using kernel::ReduceOp;
using kernel::select_raw;
using kernel::UnaryOp;
using kernel::Window2d;

/// A contiguous scratch tensor for a kernel's own use (no autograd, no checks): allocated
/// through the CPU allocator, so the backend needs nothing from the ops layer above it.
inline Tensor scratch(IntArrayRef sizes, DType dtype) {
  Shape strides = contiguous_strides(sizes);
  const size_t nbytes = static_cast<size_t>(compute_numel(sizes)) * element_size(dtype);
  auto storage = make_intrusive<StorageImpl>(cpu_allocator()->allocate(nbytes), nbytes);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

/// raw_view of t[i] along dim 0.
inline Tensor raw_select0(const Tensor& t, int64_t i) {
  return raw_view(t, IntArrayRef(t.sizes().data() + 1, t.dim() - 1), IntArrayRef(t.strides().data() + 1, t.dim() - 1),
                  t.storage_offset() + i * t.stride(0));
}

// The CPU backend's entries of the kernel table (include/graft/backend/kernels.h says what
// each computes); ops reach them through graft::kernel, never directly.

/// out = op(a); `a` has out's dtype p0/p1: Softplus
/// (beta, threshold), Clamp (min, max; NaN = none).
void unary(UnaryOp op, const Tensor& out, const Tensor& a, double p0, double p1);
/// out = a op b (Add/Sub: a op alpha*b), broadcast; a and b have the compute dtype.
void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
/// out = a op s, with s converted to a's dtype; `reverse` computes s op a.
void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s, const Scalar& alpha = 1,
                   bool reverse = false);
/// out = cond ? a : b (broadcast; cond bool, a and b out's dtype).
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
/// dst = src broadcast to dst's shape, converting dtype. dst may be any strided tensor.
void copy(const Tensor& dst, const Tensor& src);
/// Every element of dst = v.
void fill(const Tensor& dst, const Scalar& v);

/// Reduces over the dims in `mask` into `out` (shape with those dims removed or kept as 1).
void reduce(ReduceOp op, const Tensor& out, const Tensor& a, uint64_t mask);
/// out = a // b, a % b or trunc(a / b); true when an integer division by zero happened.
bool rounding_div(DivMode mode, const Tensor& out, const Tensor& a, const Tensor& b);
/// Max/min over one dim: values and int64 indices (first occurrence), for dim-reductions.
void arg_reduce(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim);
/// Variance over `mask` with the given correction.
void var(const Tensor& out, const Tensor& a, uint64_t mask, double correction, bool sqrt_result);

/// c = a @ b for 2-D (or batched 3-D) tensors of float32/float64/integral dtype; c needs unit
/// column stride only (rows and batches may be strided), a and b any strides.
void gemm(const Tensor& c, const Tensor& a, const Tensor& b);

void index_select(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index);
/// out (already a copy of self) += source along dim at index.
void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& source);
void gather(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index);
/// out (already a copy of self) scatter-adds src at index along dim.
void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);

/// im2col: x [N, C, H, W] (contiguous) -> the columns of every window position, zero where the
/// window reads padding. Element (n, row, l) of the columns (row = (c*kh + i)*kw + j,
/// l = window position) is written at cols.data + n*ns + row*rs + l: ns = rows*L, rs = L gives
/// [N, C*kh*kw, L]; ns = L, rs = N*L gives one [C*kh*kw, N*L] matrix for a single GEMM.
void im2col(const Tensor& cols, const Tensor& x, const Window2d& w, int64_t ns, int64_t rs);
/// col2im: x [N, C, H, W] (contiguous, zero-filled by the caller) += every column scattered
/// back to the input positions it was read from (the adjoint of im2col; same layout args).
void col2im(const Tensor& x, const Tensor& cols, const Window2d& w, int64_t ns, int64_t rs);
/// Max pooling over planes: x [P, H, W] (contiguous) -> out [P, oh, ow] and int64 indices
/// (flat h*W + w of the max in each plane; NaN wins, then the first maximum).
void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w);
/// Every element of self drawn from `kind` (random_kernels.cpp).
void random_fill(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p, std::mt19937_64& gen);
/// Categories drawn from each row of weights (random_kernels.cpp).
void multinomial(const Tensor& out, const Tensor& probs, bool replacement, std::mt19937_64& gen);
/// Sorted lanes along dim, their first values.size(dim) elements (sort_kernels.cpp).
void sort(const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim, bool descending);
/// The running sum, product, maximum or minimum (with indices) or log-sum-exp along dim
/// (scan_kernels.cpp).
void scan(kernel::ScanOp op, const Tensor& out, const Tensor& indices, const Tensor& a, int64_t dim);
/// Insertion points of values in ascending lanes (search_kernels.cpp).
void search_sorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right);
void lu_factor(const Tensor& lu, const Tensor& pivots, const Tensor& info);
void lu_solve(const Tensor& b, const Tensor& lu, const Tensor& pivots, bool transpose);
void cholesky(const Tensor& a, const Tensor& info, bool upper);
void triangular_solve(const Tensor& b, const Tensor& a, bool upper, bool left, bool unitriangular);
void qr(const Tensor& q, const Tensor& r, const Tensor& a);
void svd(const Tensor& u, const Tensor& s, const Tensor& vh, const Tensor& a, const Tensor& info);
void eigh(const Tensor& w, const Tensor& v, const Tensor& info, bool upper, bool vectors);
/// tril (lower) / triu of the last two dims; out may be a.
void triangle(const Tensor& out, const Tensor& a, int64_t diagonal, bool lower);
/// The ord-norm over the dims in `mask` (reduce_kernels.cpp).
void vector_norm(const Tensor& out, const Tensor& a, uint64_t mask, double ord);

}  // namespace graft::cpu
