// In-place ops: the generated in-place forms' common path (detail::inplace_function: add_,
// sub_, mul_, div_, clamp_, masked_fill_, index_put_, square_, exp_, ... declared in
// src/ops/ops.yaml), the direct writes of add_, sub_, mul_ and index_put_ when nothing is
// recorded, and the writes of the in-place-only ops fill_, zero_ and copy_ (ops.yaml's
// inplace_only family).
// Without recording they write into self directly. When recording, the out-of-place op
// runs on a snapshot of self that carries self's history, the result is copied into self,
// and self's history is rebased onto the new node (CopySlices for views).
// See docs/notes/autograd-engine.md, "In-place ops".
#include "indexing.h"
#include "node_util.h"
#include "ops/generated_forwards.h"

namespace graft {

namespace {

// A copy of self's data that carries self's autograd history (not a view, not saved state).
Tensor snapshot_with_history(const Tensor& self) {
  Tensor s = detail::new_empty(self.sizes(), self.dtype(), self.device());
  kernel::copy(s, self);
  Edge e = autograd::gradient_edge(self);
  if (e.is_valid()) {
    s.impl()->grad_fn = e.function;
    s.impl()->output_nr = e.input_nr;
  }
  return s;
}

// PyTorch's texts, which do not name the op.
void check_result(const Tensor& self, const Tensor& r) {
  GRAFT_CHECK(r.sizes().equals(self.sizes()), RuntimeError, "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", r.sizes());
  GRAFT_CHECK(!(is_floating_point(r.dtype()) && !is_floating_point(self.dtype())) &&
                  !(r.dtype() != kBool && self.dtype() == kBool),
              RuntimeError, "result type ", scalar_type_name(r.dtype()), " can't be cast to the desired output type ",
              scalar_type_name(self.dtype()));
}

// Generic in-place: `fn(x)` computes the out-of-place result from x (self or its snapshot).
template <class F>
Tensor& inplace(Tensor& self, const char* op, bool others_require_grad, F fn) {
  detail::check_tensor(self, op, "self");
  const bool record = GradMode::is_enabled() && (autograd::requires_grad(self.impl()) || others_require_grad);
  autograd::check_inplace(self, record);
  if (!record) {
    Tensor r;
    {
      NoGradGuard ng;
      r = fn(self);
    }
    check_result(self, r);
    kernel::copy(self, r);
    autograd::bump_version(self);
    return self;
  }
  Tensor r = fn(snapshot_with_history(self));
  check_result(self, r);
  kernel::copy(self, r);
  autograd::bump_version(self);
  autograd::rebase_history(self, r.grad_fn());
  return self;
}

// Fast path for binary in-place ops without recording: write straight into self when the
// promoted dtype is self's and `other` does not alias self's storage.
bool direct_ok(const Tensor& self, const Tensor* other, DType ct) {
  if (GradMode::is_enabled() &&
      (autograd::requires_grad(self.impl()) || (other && autograd::requires_grad(other->impl()))))
    return false;
  if (self.impl()->is_inference && !InferenceMode::is_enabled()) return false;
  if (ct != self.dtype()) return false;
  if (other && other->impl()->storage().get() == self.impl()->storage().get()) return false;
  if (other && !IntArrayRef(detail::broadcast_shapes(self.sizes(), other->sizes())).equals(self.sizes())) return false;
  autograd::check_inplace(self, /*will_record=*/false);  // view rules still apply (no-grad views)
  return true;
}

}  // namespace

// ---- the direct writes of the generated in-place forms (ops.yaml: inplace: direct) ----
namespace {
/// self += alpha * o (or -=) straight into self, when nothing is recorded and self can hold the result.
bool add_sub_direct(Tensor& self, const Tensor& o, const Scalar& alpha, bool is_sub) {
  if (!self.defined() || !o.defined()) return false;
  const DType result = detail::result_type(self, o);
  detail::check_add_sub(self.dtype(), o.dtype(), result, alpha, is_sub);
  if (!direct_ok(self, &o, result) || self.dtype() == kBool) return false;
  kernel::binary(is_sub ? kernel::BinaryOp::Sub : kernel::BinaryOp::Add, self, self,
                 detail::cast_nograd(o, self.dtype()), alpha);
  autograd::bump_version(self);
  return true;
}
}  // namespace

bool detail::add_direct_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub_direct(self, other, alpha, /*is_sub=*/false);
}
bool detail::sub_direct_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub_direct(self, other, alpha, /*is_sub=*/true);
}
bool detail::add_direct_(Tensor& self, const Scalar& other, const Scalar& alpha) {
  if (!self.defined()) return false;
  const DType result = detail::result_type(self, other);
  detail::check_add_sub(self.dtype(), detail::wrapped_dtype(other), result, alpha, /*is_sub=*/false);
  if (!direct_ok(self, nullptr, result) || self.dtype() == kBool) return false;
  kernel::binary_scalar(kernel::BinaryOp::Add, self, self, other, alpha);
  autograd::bump_version(self);
  return true;
}
bool detail::mul_direct_(Tensor& self, const Tensor& other) {
  if (!self.defined() || !other.defined() || !direct_ok(self, &other, detail::result_type(self, other))) return false;
  kernel::binary(kernel::BinaryOp::Mul, self, self, detail::cast_nograd(other, self.dtype()));
  autograd::bump_version(self);
  return true;
}
bool detail::mul_direct_(Tensor& self, const Scalar& other) {
  if (!self.defined() || !direct_ok(self, nullptr, detail::result_type(self, other))) return false;
  kernel::binary_scalar(kernel::BinaryOp::Mul, self, self, other);
  autograd::bump_version(self);
  return true;
}

// ---- the in-place-only ops' writes (ops.yaml's inplace_only family) ----
namespace {
void fill_checked(Tensor& self, const Scalar& value, bool record, const char* op) {
  detail::check_tensor(self, op, "self");
  autograd::check_inplace(self, record, /*check_overlap=*/false);  // PyTorch fills an expanded tensor
  value.check_fits(self.dtype());                                  // before the version bump and the history
  kernel::fill(self, value);
}
}  // namespace

void detail::fill_write(Tensor& self, const Scalar& value, bool record) { fill_checked(self, value, record, "fill_"); }
void detail::zero_write(Tensor& self, bool record) { fill_checked(self, 0, record, "zero_"); }

void detail::copy_write(Tensor& self, const Tensor& src, bool record) {
  detail::check_tensor(self, "copy_", "self");
  detail::check_tensor(src, "copy_", "src");
  GRAFT_CHECK(IntArrayRef(detail::broadcast_shapes(self.sizes(), src.sizes())).equals(self.sizes()), RuntimeError,
              "copy_: the source of shape ", src.sizes(), " cannot be broadcast to the destination of shape ",
              self.sizes());
  autograd::check_inplace(self, record);
  if (src.impl()->storage().get() == self.impl()->storage().get() && !src.is_same(self)) {
    Tensor tmp = detail::new_empty(src.sizes(), src.dtype(), src.device());  // read before any write
    kernel::copy(tmp, src);
    kernel::copy(self, tmp);
  } else {
    kernel::copy(self, src);
  }
}

bool detail::index_put_direct_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                               bool accumulate) {
  detail::check_tensor(self, "index_put_", "self");
  detail::check_tensor(values, "index_put_", "values");
  if (autograd::any_requires_grad({&self, &values})) return false;
  // Not recording: write only the indexed elements.
  alloc::MemoryOpScope mem_scope("index_put_");
  const detail::IndexPlan plan = detail::plan_index(self.sizes(), indices);
  detail::check_index_put_values(self, plan, values);
  autograd::check_inplace(self, /*will_record=*/false);
  Tensor v = values;
  if (values.impl()->storage().get() == self.impl()->storage().get()) {  // read before any write
    v = detail::new_empty(values.sizes(), values.dtype(), values.device());
    kernel::copy(v, values);
  }
  detail::index_scatter(self, plan, v, accumulate);
  autograd::bump_version(self);
  return true;
}
Tensor& detail::inplace_function(Tensor& self, const char* name, bool others_require_grad,
                                 const std::function<Tensor(const Tensor&)>& op) {
  return inplace(self, name, others_require_grad, op);
}

}  // namespace graft
