#pragma once
/// What the ops layer gives the layer above it that records autograd history (the generated
/// functions of src/ops/ops.yaml, src/autograd/generated_functions.cpp; see
/// docs/notes/architecture.md): each op's forward is checks, output allocation and kernels,
/// with no autograd, and these are the shared pieces of them. Internal to graft (namespace
/// detail): C++ users call the ops of ops.h.
#include <array>

#include "graft/backend/generated_kernel_ids.h"
#include "graft/backend/kernels.h"
#include "graft/core/tensor.h"

namespace graft::detail {

/// Where a view lies in its base's storage: the view ops' forwards compute one (no data).
struct ViewGeometry {
  Shape sizes, strides;
  int64_t offset = 0;
};
/// A per-spatial-dim pair (height, width) of the 2-d window ops' arguments.
using Pair = std::array<int64_t, 2>;

/// The sizes of the tensors of a list (what a node keeps of a list input, such as cat's).
std::vector<Shape> sizes_of(const TensorList& tensors);
/// A fresh contiguous tensor (no autograd).
Tensor new_empty(IntArrayRef sizes, DType dtype, Device device);
/// var and std's correction as a number: nullopt is 1 (Bessel's), as PyTorch's.
double var_correction(const std::optional<Scalar>& correction);
/// A 0-d tensor from a C++ scalar marked as wrapped number (PyTorch's wrapped_scalar_tensor).
Tensor wrapped_scalar(const Scalar& s, DType dtype, Device device);
/// The dtype PyTorch gives a Python number wrapped into a tensor (bool, int64 or float64).
inline DType wrapped_dtype(const Scalar& s) {
  return s.is_floating_point() ? DType::Float64 : s.is_bool() ? DType::Bool : DType::Int64;
}
/// `value` as the 0-d tensor PyTorch wraps a Python number in (wrapped_dtype, marked as a
/// wrapped number for type promotion), on `device`.
inline Tensor wrapped_number(const Scalar& value, Device device) {
  return wrapped_scalar(value, wrapped_dtype(value), device);
}
/// Checks that `t` is defined and on an available device.
void check_tensor(const Tensor& t, const char* op, const char* arg = "input");

/// Where an elementwise forward writes its result (PyTorch's TensorIterator output): a new
/// contiguous tensor of the op's shape and compute dtype, or, for an in-place form, `into`
/// (self), which the kernel then writes in place. `into` is checked as PyTorch checks a
/// written-to tensor, in its order: no two of its elements sharing memory, no partial overlap
/// with an input (the same elements in the same order are allowed: x.mul_(x)), the op's shape,
/// a compute dtype it can be cast to, not an inference tensor outside InferenceMode. Where the
/// compute dtype is not into's (a float32 self, a float64 other) the kernel writes a temporary
/// of the compute dtype that result() copies into `into`, as PyTorch's CPU TensorIterator does.
class ElementwiseOutput {
 public:
  ElementwiseOutput(Tensor* into, IntArrayRef shape, DType dtype, Device device,
                    std::initializer_list<const Tensor*> inputs = {})
      : into_(into) {
    if (!into)
      out_ = new_empty(shape, dtype, device);  // out of place: inline, on every elementwise op's path
    else
      check_and_take_into(shape, dtype, device, inputs);
  }
  /// What the kernel writes.
  const Tensor& out() const { return out_; }
  /// The op's result: the new tensor, or `into` holding the values.
  Tensor result() { return into_ ? into_result() : std::move(out_); }

 private:
  Tensor* into_;
  Tensor out_;
  void check_and_take_into(IntArrayRef shape, DType dtype, Device device, std::initializer_list<const Tensor*> inputs);
  Tensor into_result();
};
/// PyTorch's checks of a tensor an in-place op writes (ElementwiseOutput's, for writes that are
/// not elementwise: masked_fill_, index_put_): no internal overlap, no partial overlap with
/// `inputs`, not an inference tensor outside InferenceMode.
void check_written(const Tensor& into, std::initializer_list<const Tensor*> inputs);

/// The forward of an elementwise op with a floating result (the generated unary_float ops):
/// checks `self`, allocates the result (integer and bool inputs give the default dtype) and runs
/// generated kernel `k`; no autograd. With `into` (an in-place form's self) the kernel writes
/// into it instead (ElementwiseOutput); so for every forward of this header that takes `into`.
Tensor unary_float_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, Tensor* into = nullptr);
/// The forward of an elementwise op keeping self's dtype (the generated unary_rounding ops):
/// floats through generated kernel `k`, integers copied when `copy_integers` and otherwise refused, bool
/// refused ('"<refused_as>" not implemented for ...'); no autograd.
Tensor unary_rounding_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, const char* refused_as,
                              bool copy_integers, Tensor* into = nullptr);
/// The forward of an elementwise op keeping self's dtype for every dtype (the generated
/// unary_keep ops): generated kernel `k` on integers too; a bool self refused with
/// `bool_refusal` (PyTorch's RuntimeError text) unless it is null; no autograd.
Tensor unary_keep_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, const char* bool_refusal,
                          Tensor* into = nullptr);
/// The forward of an activation (the generated activation ops): a floating self (integers and
/// bool refused with '"<refused_as>" not implemented for ...', as PyTorch's kernels), the result
/// of self's dtype written by generated kernel `k` with the op's arguments `args`; no autograd.
Tensor activation_forward(const Tensor& self, const char* name, const char* refused_as, kernel::GeneratedKernel k,
                          const double* args, Tensor* into = nullptr);
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
                                kernel::GeneratedBinaryKernel k, BinaryResult rule, Tensor* into = nullptr);
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
                              kernel::GeneratedBinaryKernel k, Tensor* into = nullptr);
/// The same against a number (wrapped into a 0-d tensor of the compute dtype).
Tensor binary_bitwise_forward(const Tensor& self, const Scalar& other, const char* name,
                              kernel::GeneratedBinaryKernel k, Tensor* into = nullptr);

/// Fills self with `kind` from `gen` (default_generator() when absent), locked while it draws
/// (src/ops/generator_state.cpp); a meta self leaves the generator untouched. No checks: the
/// random fills (src/ops/inplace_writes.cpp) and nn::init's trunc_normal_ check first.
void draw(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p,
          const std::optional<Generator>& gen);
/// PyTorch's checks of a tensor written in place that hold whatever autograd records: no two
/// elements sharing memory (an expanded tensor; skipped when `check_overlap` is false: fill_
/// writes one), not an inference tensor outside InferenceMode. The autograd layer's
/// check_inplace adds the leaf and view rules.
void check_writable(const Tensor& self, bool check_overlap = true);

}  // namespace graft::detail
