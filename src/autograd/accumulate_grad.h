#pragma once
// AccumulateGrad: the node that represents a leaf in the graph and adds incoming gradients
// into the leaf's `.grad` (in place without create_graph, out of place with it).
#include <mutex>

#include "variable.h"

namespace graft {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  ~AccumulateGrad() override;
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }  // PyTorch's
  TensorList apply(TensorList&& grads) override;
  void call_tensor_pre_hooks(TensorList& grads) override;
  const Tensor& variable() const { return variable_; }
  void visit_held(HeldVisitor& v) const override { v.tensor(variable_, "variable"); }
  bool is_accumulator() const override { return true; }

 private:
  Tensor variable_;
};

/// Node for in-place ops on views: routes the base's gradient through the in-place op's own
/// node applied to the view's window (PyTorch's CopySlices).
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, intrusive_ptr<Node> fn);
  std::string name() const override { return "torch::autograd::CopySlices"; }  // PyTorch's
  TensorList apply(TensorList&& grads) override;
  void release_variables() override;
  void visit_held(HeldVisitor& v) const override {
    if (fn_) v.node(*fn_, "fn");
  }

 private:
  Shape base_sizes_, base_strides_, view_sizes_, view_strides_;
  int64_t view_offset_;  // relative to the base's storage offset
  intrusive_ptr<Node> fn_;
};

}  // namespace graft
