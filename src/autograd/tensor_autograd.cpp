// The autograd methods of Tensor: requires_grad, grad, hooks, detach, backward.
#include "accumulate_grad.h"
#include "graft/autograd/autograd.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft {

bool Tensor::requires_grad() const { return defined() && autograd::requires_grad(impl()); }

Tensor& Tensor::requires_grad_(bool flag) {
  GRAFT_CHECK(defined(), ValueError, "requires_grad_: undefined tensor");
  if (!is_leaf()) {
    GRAFT_CHECK(flag, RuntimeError,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in "
                "a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return *this;
  }
  if (flag) {
    GRAFT_CHECK(is_floating_point(), RuntimeError, "only Tensors of floating point dtype can require gradients");
    GRAFT_CHECK(!impl()->is_inference || InferenceMode::is_enabled(), RuntimeError,
                "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  }
  if (flag) autograd::meta(*this);  // created now, not lazily by concurrent graph builders
  impl()->requires_grad_leaf = flag;
  return *this;
}

bool Tensor::is_leaf() const {
  GRAFT_CHECK(defined(), ValueError, "is_leaf: undefined tensor");
  return !grad_fn();
}

const intrusive_ptr<Node>& Tensor::grad_fn() const {
  if (impl()->meta && impl()->meta->is_view) autograd::refresh_view_grad_fn(*this);
  return impl()->grad_fn;
}

namespace autograd {
const TensorImpl* grad_impl(const TensorImpl& t) {
  const AutogradMeta* m = t.meta.get();
  return m ? m->grad.impl() : nullptr;
}
const Node* grad_fn_of_grad(const TensorImpl& t) {
  AutogradMeta* m = t.meta.get();
  if (!m) return nullptr;
  std::lock_guard<std::mutex> lock(m->grad_mutex);
  return m->grad.defined() ? m->grad.impl()->grad_fn.get() : nullptr;
}
const TensorImpl* view_base(const TensorImpl& t) {
  const AutogradMeta* m = t.meta.get();
  return m && m->is_view ? m->base.impl() : nullptr;
}
}  // namespace autograd

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  GRAFT_CHECK(defined(), ValueError, "grad: undefined tensor");
  const AutogradMeta* m = impl()->meta.get();
  if (!is_leaf() && !(m && m->retains_grad) && !(m && m->grad.defined()))
    autograd::warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
        "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
        "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
        "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more informations.");
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() {
  GRAFT_CHECK(defined(), ValueError, "mutable_grad: undefined tensor");
  return autograd::meta(*this).grad;
}

void Tensor::set_grad(const Tensor& g) {
  GRAFT_CHECK(defined(), ValueError, "set_grad: undefined tensor");
  if (g.defined()) {
    GRAFT_CHECK(g.dtype() == dtype(), RuntimeError, "attempting to assign a gradient with dtype '",
                dtype_cpp_name(g.dtype()), "' to a tensor with dtype '", dtype_cpp_name(dtype()),
                "'. Please ensure that the gradient and the tensor have the same dtype");
    GRAFT_CHECK(g.sizes().equals(sizes()), RuntimeError, "attempting to assign a gradient of size '", g.sizes(),
                "' to a tensor of size '", sizes(),
                "'. Please ensure that the gradient and the tensor are the same size");
  }
  autograd::meta(*this).grad = g;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const std::optional<TensorList>& inputs) const {
  autograd::backward({*this}, gradient.defined() ? TensorList{gradient} : TensorList{}, retain_graph, create_graph,
                     inputs);
}

void Tensor::retain_grad() const {
  GRAFT_CHECK(defined(), ValueError, "retain_grad: undefined tensor");
  GRAFT_CHECK(requires_grad(), RuntimeError, "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf()) return;
  auto& m = autograd::meta(*this);
  if (m.retains_grad) return;
  m.retains_grad = true;
  impl()->grad_fn->set_retain_grad_target(impl()->output_nr, impl());
}

bool Tensor::retains_grad() const { return defined() && impl()->meta && impl()->meta->retains_grad; }

HookHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> fn) const {
  GRAFT_CHECK(defined(), ValueError, "register_hook: undefined tensor");
  GRAFT_CHECK(requires_grad(), RuntimeError, "cannot register a hook on a tensor that doesn't require gradient");
  // Safe while a backward pass runs on another thread (the Python package releases the GIL
  // during backward): the hook lists are copy-on-write, see HookSlot.
  if (is_leaf()) return HookHandle(add_hook_with_remover(autograd::meta(*this).leaf_hooks, 0, std::move(fn)));
  return HookHandle(grad_fn()->add_tensor_pre_hook(output_nr(), std::move(fn)));
}

Tensor Tensor::detach() const {
  GRAFT_CHECK(defined(), ValueError, "detach: undefined tensor");
  auto t = make_intrusive<TensorImpl>(impl()->storage(), dtype(), sizes(), strides(), storage_offset());
  t->set_own_version(impl()->own_version());
  t->is_inference = impl()->is_inference;
  return Tensor(std::move(t));
}

Tensor& Tensor::detach_() {
  GRAFT_CHECK(defined(), ValueError, "detach_: undefined tensor");
  GRAFT_CHECK(!is_view(), RuntimeError,
              "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
              "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
              "detach_() cannot be called on these gradients. To fix this error, please refer to the "
              "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  if (impl()->meta && impl()->meta->retains_grad && impl()->grad_fn)
    impl()->grad_fn->clear_retain_grad_target(impl()->output_nr);
  if (impl()->meta) impl()->meta->retains_grad = false;
  impl()->grad_fn.reset();
  impl()->output_nr = 0;
  impl()->requires_grad_leaf = false;
  return *this;
}

Tensor Tensor::variable_data() const {
  Tensor t = detach();
  t.impl()->set_own_version(make_intrusive<VersionCounter>());
  return t;
}

bool Tensor::is_view() const { return defined() && impl()->meta && impl()->meta->is_view; }
const Tensor& Tensor::_base() const {
  static const Tensor undefined;
  return is_view() ? impl()->meta->base : undefined;
}

}  // namespace graft
