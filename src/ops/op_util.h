#pragma once
// Shared helpers for op implementations: dimension wrapping, broadcasting, type promotion,
// output allocation (those the autograd layer also uses are in graft/ops/forwards.h).
#include <string>

#include "graft/alloc/memory_history.h"
#include "graft/backend/generated_kernel_ids.h"
#include "graft/backend/kernels.h"
#include "graft/core/error.h"
#include "graft/core/grad_mode.h"
#include "graft/ops/forwards.h"
#include "graft/ops/ops.h"

namespace graft::detail {

/// The sizes of split's pieces of a dim of n elements: split_size each, the last one smaller;
/// one empty piece for n == 0 (PyTorch's max(ceil(n / split_size), 1) pieces).
std::vector<int64_t> split_piece_sizes(int64_t n, int64_t split_size);

/// Wraps a possibly negative dim into [0, ndim) or throws PyTorch's IndexError (which, as
/// PyTorch's maybe_wrap_dim, names no op: `op` is for the reader of the call).
inline int64_t wrap_dim(int64_t d, int64_t ndim, [[maybe_unused]] const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;  // 0-d tensors accept dim 0 and -1, like PyTorch
  if (d < -n || d >= n)
    throw IndexError(
        str("Dimension out of range (expected to be in range of [", -n, ", ", n - 1, "], but got ", d, ")"));
  return d < 0 ? d + n : d;
}
/// Bitmask of reduced dims (empty = all).
uint64_t dim_mask(IntArrayRef dims, int64_t ndim, const char* op);
/// The number of elements a reduction over the dims in `mask` combines into each result.
int64_t reduced_count(IntArrayRef sizes, uint64_t mask);
/// grad of a reduction output, reshaped so it broadcasts against the input (keepdim form).
Tensor unsqueeze_reduced(const Tensor& g, IntArrayRef in_sizes, uint64_t mask, bool keepdim);
/// Broadcast shape of two shapes, or PyTorch's RuntimeError "The size of tensor a (3) must
/// match the size of tensor b (4) at non-singleton dimension 1" (which names no op).
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b);
/// PyTorch's result_type for two tensors (0-d and wrapped scalars have lower priority).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& s);
/// Floating result dtype for ops like exp/div: the tensor's dtype if floating, else float32.
inline DType float_result(DType t) { return is_floating_point(t) ? t : default_dtype(); }
/// Number of elements a strided layout spans (1 + sum (size-1)*stride; 0 if any size is 0),
/// with overflow checked: raises PyTorch's "Storage size calculation overflowed" error.
int64_t storage_extent(IntArrayRef sizes, IntArrayRef strides, int64_t offset = 0);
/// extent * element size in bytes, overflow-checked.
size_t storage_nbytes(int64_t extent, DType dtype, IntArrayRef sizes, IntArrayRef strides);
/// False for tensors without data (the meta device): ops skip their data loops for them.
inline bool has_data(const Tensor& t) { return !t.device().is_meta(); }
/// `t` converted to `dtype` without recording autograd (returns t if already that dtype).
Tensor cast_nograd(const Tensor& t, DType dtype);
/// Hot-path form: returns `t` itself when it already has `dtype`, else a converted copy kept
/// in `tmp` (saves a reference-count round trip per operand).
inline const Tensor& as_dtype(const Tensor& t, DType dtype, Tensor& tmp) {
  if (t.dtype() == dtype) return t;
  tmp = cast_nograd(t, dtype);
  return tmp;
}
/// The device an op on `a` and `b` runs on: theirs when they share it; a 0-d CPU tensor goes
/// with a tensor of any device (as PyTorch lets it); else PyTorch's "Expected all tensors to
/// be on the same device" error.
inline Device common_device(const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return a.device();
  if (a.dim() == 0 && a.device().is_cpu()) return b.device();
  if (b.dim() == 0 && b.device().is_cpu()) return a.device();
  kernel::check_same_device(a, b);  // throws
  return a.device();
}
/// as_dtype, also moving a 0-d CPU operand to `device` (no autograd).
inline const Tensor& as_operand(const Tensor& t, DType dtype, Device device, Tensor& tmp) {
  if (t.device() == device) return as_dtype(t, dtype, tmp);
  tmp = new_empty({}, dtype, device);
  kernel::copy(tmp, t);  // the destination's kernel
  return tmp;
}
/// PyTorch's checks of add and sub (its sub_check and alpha_check): `self` and `other` are the
/// operands' dtypes (a Python number's as PyTorch wraps it), `result` the common dtype.
void check_add_sub(DType self, DType other, DType result, const Scalar& alpha, bool is_sub);
/// The largest finite value of a floating dtype (finfo(dtype).max).
double largest_finite(DType dtype);
/// PyTorch's refusal of a dtype its kernel was not built for: `"<kernel>" not implemented for 'Long'`.
[[noreturn]] void kernel_not_implemented(const char* kernel, DType dtype);
std::string shape_str(IntArrayRef s);
/// PyTorch's random_ bounds for an integer dtype: [from, last] must fit it ("from is out of
/// bounds for int", "to - 1 is out of bounds for int").
void check_random_bounds(DType dtype, int64_t from, int64_t last);

}  // namespace graft::detail
