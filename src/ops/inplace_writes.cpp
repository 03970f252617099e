// The writes of in-place ops that do not go through an out-of-place op: the direct writes of
// add_, sub_, mul_ and index_put_ when nothing is recorded (ops.yaml's `inplace: direct`), and
// the writes of the in-place-only ops fill_, zero_ and copy_ (ops.yaml's inplace_only family).
// No autograd here: the generated forms (src/autograd/generated_functions.cpp) call a direct
// write only when nothing is recorded, and an in-place-only write after checking PyTorch's
// in-place rules; they bump self's version (and record) after. A direct write returns false
// when it cannot take the write: the generated form then computes the op out of place, with
// the full checks.
#include "graft/ops/generated_forwards.h"
#include "indexing.h"
#include "op_util.h"

namespace graft {

namespace {

// Whether self can take a direct write at all. Not when PyTorch's in-place rules may refuse it
// (two of its elements sharing memory, an inference tensor outside InferenceMode, under grad
// mode a view whose base requires grad: made under no_grad, of a leaf, one of several outputs):
// the recorded path, inplace_function, checks them all with PyTorch's texts, after the op's own
// checks (as PyTorch's kernels check before its TensorIterator refuses an overlap).
bool writable(const Tensor& self) {
  return !self.impl()->has_internal_overlap() && !(self.is_inference() && !InferenceMode::is_enabled()) &&
         !(GradMode::is_enabled() && self.is_view() && self._base().requires_grad());
}

// Whether a binary op's result can be written straight into self: self is writable, the
// promoted dtype is self's, `other` does not alias self's storage and broadcasts to self's shape.
bool fits_self(const Tensor& self, const Tensor* other, DType ct) {
  if (ct != self.dtype() || !writable(self)) return false;
  if (other && other->impl()->storage().get() == self.impl()->storage().get()) return false;
  if (other && !IntArrayRef(detail::broadcast_shapes(self.sizes(), other->sizes())).equals(self.sizes())) return false;
  return true;
}

/// self += alpha * o (or -=) straight into self, when self can hold the result.
bool add_sub_direct(Tensor& self, const Tensor& o, const Scalar& alpha, bool is_sub) {
  if (!o.defined()) return false;
  const DType result = detail::result_type(self, o);
  detail::check_add_sub(self.dtype(), o.dtype(), result, alpha, is_sub);
  if (!fits_self(self, &o, result) || self.dtype() == kBool) return false;
  kernel::binary(is_sub ? kernel::BinaryOp::Sub : kernel::BinaryOp::Add, self, self,
                 detail::cast_nograd(o, self.dtype()), alpha);
  return true;
}

}  // namespace

// ---- the direct writes of the generated in-place forms (ops.yaml: inplace: direct) ----
bool detail::add_direct_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub_direct(self, other, alpha, /*is_sub=*/false);
}
bool detail::sub_direct_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub_direct(self, other, alpha, /*is_sub=*/true);
}
bool detail::add_direct_(Tensor& self, const Scalar& other, const Scalar& alpha) {
  const DType result = detail::result_type(self, other);
  detail::check_add_sub(self.dtype(), detail::wrapped_dtype(other), result, alpha, /*is_sub=*/false);
  if (!fits_self(self, nullptr, result) || self.dtype() == kBool) return false;
  kernel::binary_scalar(kernel::BinaryOp::Add, self, self, other, alpha);
  return true;
}
bool detail::mul_direct_(Tensor& self, const Tensor& other) {
  if (!other.defined() || !fits_self(self, &other, detail::result_type(self, other))) return false;
  kernel::binary(kernel::BinaryOp::Mul, self, self, detail::cast_nograd(other, self.dtype()));
  return true;
}
bool detail::mul_direct_(Tensor& self, const Scalar& other) {
  if (!fits_self(self, nullptr, detail::result_type(self, other))) return false;
  kernel::binary_scalar(kernel::BinaryOp::Mul, self, self, other);
  return true;
}

bool detail::index_put_direct_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                               bool accumulate) {
  detail::check_tensor(values, "index_put_", "values");
  // Only the indexed elements are written.
  alloc::MemoryOpScope mem_scope("index_put_");
  const detail::IndexPlan plan = detail::plan_index(self.sizes(), indices);
  detail::check_index_put_values(self, plan, values);
  if (!writable(self)) return false;
  Tensor v = values;
  if (values.impl()->storage().get() == self.impl()->storage().get()) {  // read before any write
    v = detail::new_empty(values.sizes(), values.dtype(), values.device());
    kernel::copy(v, values);
  }
  detail::index_scatter(self, plan, v, accumulate);
  return true;
}

// ---- the in-place-only ops' writes (ops.yaml's inplace_only family) ----
void detail::fill_write(Tensor& self, const Scalar& value) {
  value.check_fits(self.dtype());
  kernel::fill(self, value);
}
void detail::zero_write(Tensor& self) { kernel::fill(self, 0); }

void detail::copy_write(Tensor& self, const Tensor& src) {
  detail::check_tensor(src, "copy_", "src");
  GRAFT_CHECK(IntArrayRef(detail::broadcast_shapes(self.sizes(), src.sizes())).equals(self.sizes()), RuntimeError,
              "copy_: the source of shape ", src.sizes(), " cannot be broadcast to the destination of shape ",
              self.sizes());
  if (src.impl()->storage().get() == self.impl()->storage().get() && !src.is_same(self)) {
    Tensor tmp = detail::new_empty(src.sizes(), src.dtype(), src.device());  // read before any write
    kernel::copy(tmp, src);
    kernel::copy(self, tmp);
  } else {
    kernel::copy(self, src);
  }
}

}  // namespace graft
