// The in-place path of the generated in-place forms (add_, sub_, mul_, div_, clamp_,
// masked_fill_, index_put_, square_, exp_, ... declared in src/ops/ops.yaml):
// detail::inplace_function and the gate of the direct writes, detail::inplace_unrecorded.
// Without recording they write into self directly. When recording, the out-of-place op
// runs on a snapshot of self that carries self's history, the result is copied into self,
// and self's history is rebased onto the new node (CopySlices for views).
// See docs/notes/autograd-engine.md, "In-place ops".
#include "graft/backend/kernels.h"
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

}  // namespace

Tensor& detail::inplace_function(Tensor& self, const char* name, bool others_require_grad,
                                 const std::function<Tensor(const Tensor&)>& op) {
  detail::check_tensor(self, name, "self");
  const bool record = GradMode::is_enabled() && (autograd::requires_grad(self.impl()) || others_require_grad);
  autograd::check_inplace(self, record);
  if (!record) {
    Tensor r;
    {
      NoGradGuard ng;
      r = op(self);
    }
    check_result(self, r);
    kernel::copy(self, r);
    autograd::bump_version(self);
    return self;
  }
  Tensor r = op(snapshot_with_history(self));
  check_result(self, r);
  kernel::copy(self, r);
  autograd::bump_version(self);
  autograd::rebase_history(self, r.grad_fn());
  return self;
}

bool detail::inplace_unrecorded(const Tensor& self, std::initializer_list<const Tensor*> others) {
  if (!self.defined()) return false;  // inplace_function names the undefined self
  return !(GradMode::is_enabled() && autograd::requires_grad(self.impl())) && !autograd::any_requires_grad(others);
}

}  // namespace graft
