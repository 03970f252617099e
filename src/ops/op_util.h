#pragma once
// Shared helpers for op implementations: dimension wrapping, broadcasting, type promotion,
// output allocation.
#include <functional>
#include <string>

#include "graft/alloc/memory_history.h"
#include "graft/backend/generated_kernel_ids.h"
#include "graft/backend/kernels.h"
#include "graft/core/error.h"
#include "graft/core/grad_mode.h"
#include "graft/ops/ops.h"

namespace graft::detail {

/// Where a view lies in its base's storage: the view ops' forwards compute one (no data).
struct ViewGeometry {
  Shape sizes, strides;
  int64_t offset = 0;
};

/// The sizes of the tensors of a list (what a node keeps of a list input, such as cat's).
std::vector<Shape> sizes_of(const TensorList& tensors);
/// The sizes of split's pieces of a dim of n elements: split_size each, the last one smaller;
/// one empty piece for n == 0 (PyTorch's max(ceil(n / split_size), 1) pieces).
std::vector<int64_t> split_piece_sizes(int64_t n, int64_t split_size);

/// Wraps a possibly negative dim into [0, ndim) or throws IndexError naming the op.
inline int64_t wrap_dim(int64_t d, int64_t ndim, const char* op) {
  int64_t n = ndim == 0 ? 1 : ndim;  // 0-d tensors accept dim 0 and -1, like PyTorch
  if (d < -n || d >= n)
    throw IndexError(
        str(op, ": Dimension out of range (expected to be in range of [", -n, ", ", n - 1, "], but got ", d, ")"));
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
/// A fresh contiguous tensor (no autograd).
Tensor new_empty(IntArrayRef sizes, DType dtype, Device device);
/// A 0-d tensor from a C++ scalar marked as wrapped number (PyTorch's wrapped_scalar_tensor).
Tensor wrapped_scalar(const Scalar& s, DType dtype, Device device);
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
/// The dtype PyTorch gives a Python number wrapped into a tensor (bool, int64 or float64).
inline DType wrapped_dtype(const Scalar& s) {
  return s.is_floating_point() ? DType::Float64 : s.is_bool() ? DType::Bool : DType::Int64;
}
/// `value` as the 0-d tensor PyTorch wraps a Python number in (wrapped_dtype, marked as a
/// wrapped number for type promotion), on `device`.
inline Tensor wrapped_number(const Scalar& value, Device device) {
  return wrapped_scalar(value, wrapped_dtype(value), device);
}
/// PyTorch's refusal of a dtype its kernel was not built for: `"<kernel>" not implemented for 'Long'`.
[[noreturn]] void kernel_not_implemented(const char* kernel, DType dtype);
/// Checks that `t` is defined and on an available device.
void check_tensor(const Tensor& t, const char* op, const char* arg = "input");
std::string shape_str(IntArrayRef s);

/// The forward of an elementwise op with a floating result (the generated unary_float ops):
/// checks `self`, allocates the result (integer and bool inputs give the default dtype) and runs
/// generated kernel `k`; no autograd.
Tensor unary_float_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k);
/// The forward of an elementwise op keeping self's dtype (the generated unary_rounding ops):
/// floats through generated kernel `k`, integers copied when `copy_integers` and otherwise refused, bool
/// refused ('"<refused_as>" not implemented for ...'); no autograd.
Tensor unary_rounding_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, const char* refused_as,
                              bool copy_integers);
/// The forward of an elementwise op keeping self's dtype for every dtype (the generated
/// unary_keep ops): generated kernel `k` on integers too; a bool self refused with
/// `bool_refusal` (PyTorch's RuntimeError text) unless it is null; no autograd.
Tensor unary_keep_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, const char* bool_refusal);
/// The forward of an activation (the generated activation ops): a floating self (integers and
/// bool refused with '"<refused_as>" not implemented for ...', as PyTorch's kernels), the result
/// of self's dtype written by generated kernel `k` with the op's arguments `args`; no autograd.
Tensor activation_forward(const Tensor& self, const char* name, const char* refused_as, kernel::GeneratedKernel k,
                          const double* args);
/// The forward of an elementwise test (the generated unary_predicate ops): a bool tensor of
/// self's shape written by generated kernel `k`; no autograd (bool results never require grad).
Tensor unary_predicate_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k);
/// How a generated binary op's result dtype follows its operands (ops.yaml's `result`).
enum class BinaryResult {
  Promote,      ///< the promoted dtype, any
  Float,        ///< floating: integer and bool operands compute in the default dtype
  FloatingOnly  ///< floating operands only: integers and bool refused ("<name>_cpu" not implemented)
};
/// The forward of a generated binary op: checks, broadcasts and promotes self and other as
/// `rule` says, and runs generated kernel `k`; no autograd.
Tensor binary_generated_forward(const Tensor& self, const Tensor& other, const char* name,
                                kernel::GeneratedBinaryKernel k, BinaryResult rule);
/// The forward of a generated comparison or logic op: a bool tensor of the broadcast shape,
/// compared in the promoted dtype by generated kernel `k`; no autograd.
Tensor binary_predicate_forward(const Tensor& self, const Tensor& other, const char* name,
                                kernel::GeneratedBinaryKernel k);
/// The same against a number (PyTorch's Scalar overload: the number as a wrapped 0-d tensor).
Tensor binary_predicate_forward(const Tensor& self, const Scalar& other, const char* name,
                                kernel::GeneratedBinaryKernel k);
/// The forward of a generated bitwise op: integer and bool operands broadcast in the promoted
/// dtype through generated kernel `k`; floats refused ("<name>_cpu" not implemented); no autograd.
Tensor binary_bitwise_forward(const Tensor& self, const Tensor& other, const char* name,
                              kernel::GeneratedBinaryKernel k);
/// The same against a number (wrapped into a 0-d tensor of the compute dtype).
Tensor binary_bitwise_forward(const Tensor& self, const Scalar& other, const char* name,
                              kernel::GeneratedBinaryKernel k);
/// `self.op_(...)` for an op computed out of place by `op` (the generated in-place forms):
/// PyTorch's in-place rules (leaf and view checks, version bump, history rebased onto the
/// op's node; a result that cannot be cast back to self's dtype is refused). Recorded when self
/// or, as `others_require_grad` says, another input requires grad: `op` then runs on a copy of
/// self carrying its history. Defined in src/ops/inplace.cpp.
Tensor& inplace_function(Tensor& self, const char* name, bool others_require_grad,
                         const std::function<Tensor(const Tensor&)>& op);
/// In an in-place form's out-of-place call, `other` itself, or `snapshot` (what `op` got for
/// self) when other is self (x.mul_(x)): the node must not save self, whose history it becomes.
inline const Tensor& same_or(const Tensor& other, const Tensor& self, const Tensor& snapshot) {
  return other.defined() && other.is_same(self) ? snapshot : other;
}

}  // namespace graft::detail
