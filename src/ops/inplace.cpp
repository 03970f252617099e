// In-place ops: add_, sub_, mul_, div_, zero_, fill_, copy_, clamp_, masked_fill_, index_put_,
// and the generated ops' in-place forms (detail::inplace_unary).
// Without recording they write into self directly. When recording, the out-of-place op
// runs on a snapshot of self that carries self's history, the result is copied into self,
// and self's history is rebased onto the new node (CopySlices for views).
// See docs/notes/autograd-engine.md, "In-place ops".
#include "indexing.h"
#include "node_util.h"

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

// `self.op_(self)`: the other operand is self too. Use the snapshot for it, so the node does
// not save `self` itself (self -> new grad_fn -> saved self would be a reference cycle).
const Tensor& same_or(const Tensor& other, const Tensor& self, const Tensor& snapshot) {
  return other.defined() && other.is_same(self) ? snapshot : other;
}

struct FillBackward0 final : Node {  // also ZeroBackward0, for zero_()
  std::string name() const override { return is_zero ? "ZeroBackward0" : "FillBackward0"; }
  bool is_zero = false;
  TensorList apply(TensorList&& g) override { return {zeros_like(g[0])}; }
};
struct CopyBackwards final : Node {
  GRAFT_NODE_NAME("CopyBackwards")
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = zeros_like(g[0]);
    if (should_compute_output(1)) r[1] = g[0];
    return r;
  }
};

/// self += alpha * o (or -=): the kernel straight into self when nothing needs recording,
/// else through the out-of-place op and its history.
Tensor& add_sub_(Tensor& self, const Tensor& o, const Scalar& alpha, bool is_sub) {
  if (self.defined() && o.defined())
    detail::check_add_sub(self.dtype(), o.dtype(), detail::result_type(self, o), alpha, is_sub);
  if (self.defined() && o.defined() && direct_ok(self, &o, detail::result_type(self, o)) && self.dtype() != kBool) {
    kernel::binary(is_sub ? kernel::BinaryOp::Sub : kernel::BinaryOp::Add, self, self,
                   detail::cast_nograd(o, self.dtype()), alpha);
    autograd::bump_version(self);
    return self;
  }
  return inplace(self, is_sub ? "sub_" : "add_", o.defined() && o.requires_grad(), [&](const Tensor& x) {
    const Tensor& other = same_or(o, self, x);
    return is_sub ? graft::sub(x, other, alpha) : graft::add(x, other, alpha);
  });
}

}  // namespace

Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { return add_sub_(*this, o, alpha, /*is_sub=*/false); }
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  if (defined())
    detail::check_add_sub(dtype(), detail::wrapped_dtype(o), detail::result_type(*this, o), alpha, /*is_sub=*/false);
  if (defined() && direct_ok(*this, nullptr, detail::result_type(*this, o)) && dtype() != kBool) {
    kernel::binary_scalar(kernel::BinaryOp::Add, *this, *this, o, alpha);
    autograd::bump_version(*this);
    return *this;
  }
  return inplace(*this, "add_", false, [&](const Tensor& x) { return graft::add(x, o, alpha); });
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { return add_sub_(*this, o, alpha, /*is_sub=*/true); }
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  if (defined())
    detail::check_add_sub(dtype(), detail::wrapped_dtype(o), detail::result_type(*this, o), alpha, /*is_sub=*/true);
  return inplace(*this, "sub_", false, [&](const Tensor& x) { return graft::sub(x, o, alpha); });
}
Tensor& Tensor::mul_(const Tensor& o) {
  if (defined() && o.defined() && direct_ok(*this, &o, detail::result_type(*this, o))) {
    kernel::binary(kernel::BinaryOp::Mul, *this, *this, detail::cast_nograd(o, dtype()));
    autograd::bump_version(*this);
    return *this;
  }
  return inplace(*this, "mul_", o.defined() && o.requires_grad(),
                 [&](const Tensor& x) { return graft::mul(x, same_or(o, *this, x)); });
}
Tensor& Tensor::mul_(const Scalar& o) {
  if (defined() && direct_ok(*this, nullptr, detail::result_type(*this, o))) {
    kernel::binary_scalar(kernel::BinaryOp::Mul, *this, *this, o);
    autograd::bump_version(*this);
    return *this;
  }
  return inplace(*this, "mul_", false, [&](const Tensor& x) { return graft::mul(x, o); });
}
Tensor& Tensor::div_(const Tensor& o) {
  return inplace(*this, "div_", o.defined() && o.requires_grad(),
                 [&](const Tensor& x) { return graft::div(x, same_or(o, *this, x)); });
}
Tensor& Tensor::div_(const Scalar& o) {
  return inplace(*this, "div_", false, [&](const Tensor& x) { return graft::div(x, o); });
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return inplace(*this, "clamp_", false, [&](const Tensor& x) { return graft::clamp(x, lo, hi); });
}

static Tensor& fill_impl(Tensor& self, const Scalar& v, bool is_zero) {
  const char* op = is_zero ? "zero_" : "fill_";
  detail::check_tensor(self, op, "self");
  const bool record = GradMode::is_enabled() && autograd::requires_grad(self.impl());
  autograd::check_inplace(self, record, /*check_overlap=*/false);  // PyTorch fills an expanded tensor
  v.check_fits(self.dtype());                                      // before the version bump and the history
  kernel::fill(self, v);
  autograd::bump_version(self);
  if (record) {
    auto n = make_node<FillBackward0>({&self});
    n->is_zero = is_zero;
    n->add_input_metadata(self);
    autograd::rebase_history(self, n);
  }
  return self;
}
Tensor& Tensor::fill_(const Scalar& v) { return fill_impl(*this, v, false); }
Tensor& Tensor::zero_() { return fill_impl(*this, 0, true); }

Tensor& Tensor::copy_(const Tensor& src) {
  detail::check_tensor(*this, "copy_", "self");
  detail::check_tensor(src, "copy_", "src");
  detail::broadcast_shapes(sizes(), src.sizes());
  GRAFT_CHECK(IntArrayRef(detail::broadcast_shapes(sizes(), src.sizes())).equals(sizes()), RuntimeError,
              "copy_: the source of shape ", src.sizes(), " cannot be broadcast to the destination of shape ", sizes());
  const bool record =
      GradMode::is_enabled() && (autograd::requires_grad(impl()) || autograd::requires_grad(src.impl()));
  autograd::check_inplace(*this, record);
  if (src.impl()->storage().get() == impl()->storage().get() && !src.is_same(*this)) {
    Tensor tmp = detail::new_empty(src.sizes(), src.dtype(), src.device());
    kernel::copy(tmp, src);
    kernel::copy(*this, tmp);
  } else {
    kernel::copy(*this, src);
  }
  autograd::bump_version(*this);
  if (record && is_floating_point()) {
    auto n = make_node<CopyBackwards>({this, &src});
    n->add_input_metadata(*this);
    autograd::rebase_history(*this, n);
  }
  return *this;
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  detail::check_tensor(mask, "masked_fill_", "mask");
  return inplace(self, "masked_fill_", false, [&](const Tensor& x) { return graft::masked_fill(x, mask, value); });
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  return graft::masked_fill_(*this, mask, value);
}

Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate) {
  alloc::MemoryOpScope mem_scope("index_put_");
  detail::check_tensor(self, "index_put_", "self");
  detail::check_tensor(values, "index_put_", "values");
  const detail::IndexPlan plan = detail::plan_index(self.sizes(), indices);
  detail::check_index_put_values(self, plan, values);
  const bool values_rg = GradMode::is_enabled() && autograd::requires_grad(values.impl());
  if (GradMode::is_enabled() && (autograd::requires_grad(self.impl()) || values_rg))
    return inplace(self, "index_put_", values_rg,
                   [&](const Tensor& x) { return graft::index_put(x, indices, values, accumulate); });
  // Not recording: write only the indexed elements.
  autograd::check_inplace(self, /*will_record=*/false);
  Tensor v = values;
  if (values.impl()->storage().get() == self.impl()->storage().get()) {  // read before any write
    v = detail::new_empty(values.sizes(), values.dtype(), values.device());
    kernel::copy(v, values);
  }
  detail::index_scatter(self, plan, v, accumulate);
  autograd::bump_version(self);
  return self;
}
Tensor& detail::inplace_unary(Tensor& self, const char* name, const std::function<Tensor(const Tensor&)>& op) {
  return inplace(self, name, false, op);
}

Tensor& Tensor::index_put_(const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate) {
  return graft::index_put_(*this, indices, values, accumulate);
}

}  // namespace graft
