// Custom Function machinery: AutogradContext, output wrapping, and CppNode::apply.
#include <algorithm>

#include "graft/autograd/function.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft::autograd {

void AutogradContext::save_for_backward(TensorList to_save) { to_save_ = std::move(to_save); }

TensorList AutogradContext::get_saved_variables() const {
  GRAFT_CHECK(!has_freed_buffers_, RuntimeError, kSecondBackwardMessage);
  if (saved_.empty() && !to_save_.empty()) return to_save_;  // forward not finished, or nothing recorded
  TensorList out;
  for (const auto& sv : saved_) out.push_back(sv.unpack(node_));
  return out;
}

void AutogradContext::mark_dirty(const TensorList& inputs) {
  for (auto& t : inputs) dirty_.push_back(t.impl());
}
void AutogradContext::mark_non_differentiable(const TensorList& outputs) {
  for (auto& t : outputs) non_differentiable_.push_back(t.impl());
}

namespace detail {

std::string custom_node_name(const char* mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string n = (status == 0 && d) ? d : mangled;
  std::free(d);
  auto pos = n.rfind("::");
  if (pos != std::string::npos) n = n.substr(pos + 2);
  return n + "Backward";
}

bool connect_inputs(CppNodeBase* node, const TensorList& tensors) {
  bool executable = false;
  if (GradMode::is_enabled())
    for (const Tensor& t : tensors) executable |= t.defined() && t.requires_grad();
  size_t ti = 0;
  for (bool is_tensor : node->is_tensor_input) {
    if (!is_tensor) {
      node->ctx.needs_input_grad_.push_back(false);
      node->edge_of_input.push_back(-1);
      continue;
    }
    const Tensor& t = tensors[ti++];
    node->ctx.needs_input_grad_.push_back(executable && t.defined() && t.requires_grad());
    node->edge_of_input.push_back(static_cast<int>(node->mutable_next_edges().size()));
    node->mutable_next_edges().push_back(executable ? gradient_edge(t) : Edge());
  }
  return executable;
}

void wrap_outputs(CppNodeBase* node, const TensorList& inputs, TensorList& outputs, bool is_executable) {
  AutogradContext& ctx = node->ctx;
  auto contains = [](const std::vector<TensorImpl*>& v, TensorImpl* p) {
    return std::find(v.begin(), v.end(), p) != v.end();
  };
  // every dirty input must be returned
  for (TensorImpl* d : ctx.dirty_) {
    bool found = false;
    for (auto& o : outputs) found |= o.defined() && o.impl() == d;
    GRAFT_CHECK(found, RuntimeError,
                "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
                "are modified inplace must all be outputs of the Function.");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& o = outputs[i];
    if (!o.defined()) {
      node->add_input_metadata_placeholder();
      continue;
    }
    const bool is_input = std::any_of(inputs.begin(), inputs.end(), [&](const Tensor& t) { return t.is_same(o); });
    const bool dirty = contains(ctx.dirty_, o.impl());
    const bool non_diff = contains(ctx.non_differentiable_, o.impl()) || !o.is_floating_point();
    if (!is_executable) {
      if (dirty) bump_version(o);
      if (is_input && !dirty) o = o.view(o.sizes());
      node->add_input_metadata(o);
      continue;
    }
    if (dirty) {
      if (o.impl()->requires_grad_leaf && !o.impl()->grad_fn && GradMode::is_enabled())
        throw RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.");
      const bool is_view = o.impl()->meta && o.impl()->meta->is_view;
      GRAFT_CHECK(!is_view || outputs.size() == 1, NotImplementedError, node->name(),
                  ": a custom Function that modifies a view in place (mark_dirty) must return exactly one output");
      bump_version(o);  // as libtorch's get_and_bump_dirty
      uint32_t nr = node->add_input_metadata(o);
      if (non_diff) continue;
      rebase_history(o, intrusive_ptr<Node>(node), nr);  // views: the base goes through CopySlices
      continue;
    }
    if (is_input) {
      AutoGradMode off(false);
      o = o.view(o.sizes());  // a fresh alias of the input, as PyTorch returns
    }
    if (non_diff) {
      node->add_input_metadata(o);
      continue;
    }
    set_history(o, intrusive_ptr<Node>(node));
  }
  // save tensors now that outputs have their history
  if (is_executable) {
    for (const Tensor& t : ctx.to_save_) {
      bool is_output = false;
      for (auto& o : outputs)
        is_output |= t.defined() && o.defined() && o.impl() == t.impl() && o.grad_fn().get() == node;
      ctx.saved_.emplace_back(t, is_output);
    }
  }
  ctx.to_save_.clear();
}

namespace {
// Stands in for the backward of a once_differentiable Function's results (PyTorch's
// DelayedError): differentiating through it raises.
class DelayedError final : public Node {
 public:
  std::string name() const override { return "DelayedError"; }
  TensorList apply(TensorList&&) override {
    throw RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable");
  }
};
}  // namespace

TensorList CppNodeBase::apply(TensorList&& grads) {
  if (once_differentiable_) {
    TensorList needing;  // incoming gradients that carry a graph
    for (const Tensor& g : grads)
      if (g.defined() && g.requires_grad()) needing.push_back(g);
    TensorList res;
    {
      NoGradGuard ng;
      res = run_backward(std::move(grads));
    }
    if (needing.empty()) return res;
    auto err = make_intrusive<DelayedError>();
    for (const Tensor& g : needing) err->mutable_next_edges().push_back(gradient_edge(g));
    for (Tensor& r : res)
      if (r.defined() && r.is_floating_point()) {
        r = r.detach();
        set_history(r, err);
      }
    return res;
  }
  return run_backward(std::move(grads));
}

TensorList CppNodeBase::run_backward(TensorList&& grads) {
  if (ctx.materialize_grads_) {
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined() && i < num_inputs())
        grads[i] =
            zeros(input_metadata(i).shape, TensorOptions(input_metadata(i).dtype).device(input_metadata(i).device));
  }
  TensorList res = call_backward(std::move(grads));
  const size_t n_args = is_tensor_input.size();
  if (res.size() > n_args) {
    bool extras_defined = false;
    for (size_t i = n_args; i < res.size(); ++i) extras_defined |= res[i].defined();
    GRAFT_CHECK(!extras_defined, RuntimeError, "function ", name(),
                " returned an incorrect number of gradients (expected ", n_args, ", got ", res.size(), ")");
    res.resize(n_args);
  }
  GRAFT_CHECK(res.size() == n_args, RuntimeError, "function ", name(),
              " returned an incorrect number of gradients (expected ", n_args, ", got ", res.size(), ")");
  TensorList out(next_edges_.size());
  for (size_t i = 0; i < n_args; ++i) {
    if (!is_tensor_input[i]) {
      GRAFT_CHECK(!res[i].defined(), RuntimeError, "function ", name(),
                  " returned a gradient different than None at position ", i + 1,
                  ", but the corresponding forward input was not a Variable");
      continue;
    }
    int e = edge_of_input[i];
    if (should_compute_output(e)) out[e] = std::move(res[i]);
  }
  return out;
}

void CppNodeBase::visit_held(HeldVisitor& v) const {
  for (const auto& sv : ctx.saved_) v.saved(sv, "saved_tensors");
  for (const auto& [key, value] : ctx.saved_data)
    if (value.isTensor()) v.tensor(value.toTensor(), key.c_str());
}

void CppNodeBase::release_variables() {
  for (auto& sv : ctx.saved_) sv.reset_data();
  ctx.has_freed_buffers_ = true;
}

TensorList BackwardHookNode::call_backward(TensorList grads) {
  std::optional<TensorList> replaced = hook_(grads);
  if (!replaced) return grads;
  GRAFT_CHECK(replaced->size() == grads.size(), RuntimeError,
              "Backward hook returned an invalid number of grad_input, got ", replaced->size(), ", but expected ",
              grads.size());
  return std::move(*replaced);
}

TensorList backward_hook_identity(const TensorList& tensors, BackwardHookNode::Hook hook) {
  auto node = make_intrusive<BackwardHookNode>(std::move(hook));
  node->ctx.set_materialize_grads(false);
  node->is_tensor_input.assign(tensors.size(), true);
  const bool executable = connect_inputs(node.get(), tensors);
  for (const Tensor& t : tensors)
    if (!t.requires_grad()) node->ctx.mark_non_differentiable({t});
  TensorList outs = tensors;
  wrap_outputs(node.get(), tensors, outs, executable);
  return outs;
}

}  // namespace detail
}  // namespace graft::autograd
