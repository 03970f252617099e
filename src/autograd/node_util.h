#pragma once
// Helpers for recording ops' autograd history: the backward nodes (a struct deriving from Node
// with its saved tensors as SavedVariable members, written by the generator; its apply() in
// graft's differentiable ops), the in-place path and the views of several outputs. Used by the
// generated functions of src/ops/ops.yaml (generated_functions.cpp) and the hand-written
// convolution node, all in this layer over the ops layer's forwards (docs/notes/architecture.md).
#include "graft/ops/derivatives.h"
#include "graft/ops/forwards.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft::detail {

/// A list of optional tensors saved by a node (advanced indexing's indices: nullopt for ':'),
/// each tensor as a SavedVariable: released with the node's saved state and reported to the
/// leak doctor under one name.
class SavedTensorList {
 public:
  void save(const std::vector<std::optional<Tensor>>& list) {
    entries_.clear();
    for (const auto& e : list)
      entries_.push_back(e.has_value() && e->defined() ? SavedVariable(*e, false) : SavedVariable());
  }
  std::vector<std::optional<Tensor>> unpack(Node* node) const {
    std::vector<std::optional<Tensor>> out;
    for (const auto& sv : entries_) out.push_back(sv.defined() ? std::optional<Tensor>(sv.unpack(node)) : std::nullopt);
    return out;
  }
  void reset_data() {
    for (auto& sv : entries_) sv.reset_data();
  }
  void visit(HeldVisitor& v, const char* name) const {
    for (const auto& sv : entries_) v.saved(sv, name);
  }

 private:
  std::vector<SavedVariable> entries_;
};

/// Creates node T with edges to `inputs` (in order).
template <class T, class... Args>
intrusive_ptr<T> make_node(std::initializer_list<const Tensor*> inputs, Args&&... args) {
  auto n = make_intrusive<T>(std::forward<Args>(args)...);
  autograd::collect_next_edges(n.get(), inputs);
  return n;
}

/// The autograd half of a generated in-place form (src/autograd/inplace.cpp). Checks self
/// (undefined: PyTorch's error naming `name`) and, when the op records (grad mode on, self or
/// one of `others` requiring grad), PyTorch's leaf and view rules; returns whether it records.
bool begin_inplace(const Tensor& self, const char* name, std::initializer_list<const Tensor*> others);
/// What a node saves for a formula that names self, the value about to be overwritten: a
/// clone (recorded, so double backward reaches self's old history), as PyTorch's original_self.
Tensor original_self(const Tensor& self);
/// What a node saves of a tensor input `input` of an in-place op: the input itself, or, when
/// it is self, an alias of self with self's history before the write (sharing self's version
/// counter, so that backward raises PyTorch's version error: x.mul_(x)).
Tensor saved_input(const Tensor& input, const Tensor& self);
/// After the write: self's version bumped and, when `node` is given (the op recorded), self's
/// history rebased onto it (CopySlices when self is a view).
void finish_inplace(const Tensor& self, const intrusive_ptr<Node>& node);
/// The views of self over `geometries`, the outputs of one node named `node_name` (split,
/// unbind): modifying one in place is refused, with PyTorch's text naming the node and output.
std::vector<Tensor> make_multi_output_views(const Tensor& self, const std::vector<ViewGeometry>& geometries,
                                            const char* node_name);  // src/autograd/views.cpp

}  // namespace graft::detail

namespace graft {
// What every op file that wires its own nodes uses, said once here.
using autograd::any_requires_grad;
using autograd::set_history;
using detail::make_node;
}  // namespace graft
