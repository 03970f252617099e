// The autograd half of the generated in-place forms (tanh_, relu_, add_, mul_, clamp_, pow_,
// index_put_, ... declared in src/ops/ops.yaml), as PyTorch's VariableType does it for an op
// that writes self. A generated form `name_`:
//   1. begin_inplace: self is checked; the op records when grad mode is on and self or another
//      tensor input requires grad; PyTorch's leaf and view rules then apply;
//   2. when recording, the node, its edges to the inputs' histories as they are before the
//      write, and what its formulas save of the inputs. A formula that reads self's old value
//      saves a clone of self taken before the write (original_self, PyTorch's `original_self =
//      self.clone()`); another input that is self itself is saved as an alias of it
//      (saved_input), which the write's version bump makes stale, as in PyTorch;
//   3. the op's forward with `into` = self: its kernel writes self (detail::ElementwiseOutput);
//   4. finish_inplace: the version bump, and self's history rebased onto the node (CopySlices
//      for a view);
//   5. a formula that names `result` saves self, now the node's output (a later write to self
//      makes backward raise PyTorch's version error).
// See docs/notes/autograd-engine.md, "In-place ops".
#include "node_util.h"

namespace graft {

bool detail::begin_inplace(const Tensor& self, const char* name, std::initializer_list<const Tensor*> others) {
  detail::check_tensor(self, name, "self");
  const bool record =
      GradMode::is_enabled() && (autograd::requires_grad(self.impl()) || autograd::any_requires_grad(others));
  autograd::check_inplace_rules(self, record);
  return record;
}

Tensor detail::original_self(const Tensor& self) {
  return clone(self);  // recorded (CloneBackward0): double backward reaches self's old history
}

Tensor detail::saved_input(const Tensor& input, const Tensor& self) {
  if (!input.defined() || !input.is_same(self)) return input;
  // an alias sharing self's storage and version counter, with self's history before the write:
  // saving self itself would make the node own the tensor whose history it becomes
  const TensorImpl* src = self.impl();
  auto alias =
      make_intrusive<TensorImpl>(src->storage(), src->dtype(), src->sizes(), src->strides(), src->storage_offset());
  alias->set_own_version(src->own_version());
  const Edge e = autograd::gradient_edge(self);
  alias->grad_fn = e.function;
  alias->output_nr = e.input_nr;
  return Tensor(std::move(alias));
}

void detail::finish_inplace(const Tensor& self, const intrusive_ptr<Node>& node) {
  autograd::bump_version(self);
  if (!node || !is_floating_point(self.dtype())) return;
  node->add_input_metadata(self);
  autograd::rebase_history(self, node);
}

}  // namespace graft
