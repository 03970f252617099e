#pragma once
// Helpers for recording ops' autograd history: the backward nodes (a struct deriving from Node
// with its saved tensors as SavedVariable members; its apply() written in graft's
// differentiable ops), the in-place path and the views of several outputs. Used by the
// generated functions of src/ops/ops.yaml (generated_functions.cpp) and the hand-written
// convolution node, all in this layer over the ops layer's forwards (docs/notes/architecture.md).
#include <functional>

#include "graft/ops/derivatives.h"
#include "graft/ops/forwards.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft::detail {

/// The i-th name of a stringified member list ("self, other", 1 -> "other").
constexpr std::string_view nth_name(std::string_view list, size_t i) {
  for (; i > 0; --i) {
    const size_t comma = list.find(',');
    if (comma == std::string_view::npos) return {};
    list.remove_prefix(comma + 1);
    while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
  }
  return list.substr(0, list.find(','));
}

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

/// Declares release_variables() and visit_held() for a node with the given saved members
/// (SavedVariables): the engine releases them after backward, the leak doctor counts them.
#define GRAFT_NODE_SAVED(...)                                                                                  \
  void release_variables() override {                                                                          \
    [](auto&... sv) { (sv.reset_data(), ...); }(__VA_ARGS__);                                                  \
  }                                                                                                            \
  void visit_held(HeldVisitor& v) const override {                                                             \
    size_t i = 0;                                                                                              \
    [&](const auto&... sv) { (v.saved(sv, ::graft::detail::nth_name(#__VA_ARGS__, i++)), ...); }(__VA_ARGS__); \
  }
#define GRAFT_NODE_NAME(NameStr) \
  std::string name() const override { return NameStr; }
/// name() plus GRAFT_NODE_SAVED(...).
#define GRAFT_NODE_BOILERPLATE(NameStr, ...) \
  GRAFT_NODE_NAME(NameStr)                   \
  GRAFT_NODE_SAVED(__VA_ARGS__)

/// `self.op_(...)` for an op computed out of place by `op` (the generated in-place forms):
/// PyTorch's in-place rules (leaf and view checks, version bump, history rebased onto the
/// op's node; a result that cannot be cast back to self's dtype is refused). Recorded when self
/// or, as `others_require_grad` says, another input requires grad: `op` then runs on a copy of
/// self carrying its history. Defined in src/autograd/inplace.cpp.
Tensor& inplace_function(Tensor& self, const char* name, bool others_require_grad,
                         const std::function<Tensor(const Tensor&)>& op);
/// In an in-place form's out-of-place call, `other` itself, or `snapshot` (what `op` got for
/// self) when other is self (x.mul_(x)): the node must not save self, whose history it becomes.
inline const Tensor& same_or(const Tensor& other, const Tensor& self, const Tensor& snapshot) {
  return other.defined() && other.is_same(self) ? snapshot : other;
}

/// Whether the in-place form of an op declared `inplace: direct` (add_, sub_, mul_, index_put_)
/// may try the op's direct write: self is defined and nothing is recorded (grad mode off, or
/// neither self nor `others` requires grad). The op's detail::<name>_direct_ then checks its
/// arguments and writes self, or declines when self cannot take the write directly (then
/// inplace_function computes the op and refuses what PyTorch's in-place rules refuse).
bool inplace_unrecorded(const Tensor& self, std::initializer_list<const Tensor*> others);
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
