#pragma once
// Internal autograd helpers shared by ops: history (grad_fn, edges), leaf accumulators,
// view bookkeeping. Public behaviour is documented in include/graft/autograd/.
#include <mutex>
#include <vector>

#include "graft/autograd/node.h"
#include "graft/core/grad_mode.h"

namespace graft {

/// How a view was created; decides whether in-place on it is allowed (PyTorch's CreationMeta).
enum class CreationMeta : uint8_t { Default, NoGradMode, MultiOutputNode, InferenceMode };

/// Cold per-tensor autograd state (allocated on first need).
struct AutogradMeta {
  Tensor grad;
  std::mutex grad_mutex;             // accumulation into `grad` from concurrent backward passes
  Node* grad_accumulator = nullptr;  // weak: AccumulateGrad clears it when it dies
  bool retains_grad = false;
  LazyHookSlot leaf_hooks;  // hooks registered on a leaf (changed while backward may run)
  // --- views ---
  bool is_view = false;
  Tensor base;  // the root base (never itself a view)
  CreationMeta creation_meta = CreationMeta::Default;
  std::string creator_name;  // node name of a multi-output view op (SplitBackward0)
  uint32_t creator_output_nr = 0;
  uint32_t attr_version = 0;  // version of base when grad_fn was last set
};

namespace autograd {

/// PyTorch's exact text for using saved tensors after they were released.
extern const char* const kSecondBackwardMessage;

AutogradMeta& meta(const Tensor& t);  // creates if missing
inline AutogradMeta* meta_or_null(const Tensor& t) { return t.impl()->meta.get(); }

inline bool requires_grad(const TensorImpl* t) { return t->requires_grad_leaf || t->grad_fn; }
/// GradMode on and any defined input requires grad.
inline bool any_requires_grad(std::initializer_list<const Tensor*> ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && requires_grad(t->impl())) return true;
  return false;
}
bool any_requires_grad(const TensorList& ts);
/// The edge a gradient for `t` flows into: (grad_fn, output_nr), (AccumulateGrad, 0) or invalid.
Edge gradient_edge(const Tensor& t);
/// The leaf's AccumulateGrad node (created on demand; shared while alive).
intrusive_ptr<Node> grad_accumulator(const Tensor& leaf);
/// Adds edges for each input to `node` (invalid edges for inputs not requiring grad).
void collect_next_edges(Node* node, std::initializer_list<const Tensor*> inputs);
void collect_next_edges(Node* node, const TensorList& inputs);
/// Makes `node` the grad_fn of the fresh output `out` (non-bool/int outputs only).
void set_history(const Tensor& out, const intrusive_ptr<Node>& node);
/// Throws if an op that records a graph would have to save this inference tensor.
void check_not_inference_for_save(const Tensor& t);
/// Creates a view tensor of `base` with the given geometry and autograd view metadata.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                 CreationMeta creation_meta = CreationMeta::Default);
/// Checks done before an in-place op writes `self` (leaf and view rules, inference tensors).
/// `check_overlap` false skips the internal-overlap refusal, for the writes PyTorch allows into
/// an expanded tensor (fill_, zero_: every alias gets the same value).
void check_inplace(const Tensor& self, bool will_record, bool check_overlap = true);
/// PyTorch's autograd rules of an in-place write alone (a leaf that requires grad, a view of
/// one, a view made under no_grad or one of several outputs), which its VariableType checks
/// before the kernel; the written-to tensor's own checks (overlap, inference) are the kernel's.
void check_inplace_rules(const Tensor& self, bool will_record);
/// After an in-place op on `self` recorded `node` as the new history: rebase self (and, for
/// views, the base through CopySlices). Bumps nothing; callers bump the version.
void rebase_history(const Tensor& self, intrusive_ptr<Node> node, uint32_t output_nr = 0);
/// Replaces the grad_fn of an existing tensor (in-place rebase, regenerated views, mark_dirty).
/// A retain_grad target moves to the new node, as PyTorch 2.x moves the retains_grad hook.
void replace_grad_fn(TensorImpl* impl, intrusive_ptr<Node> fn, uint32_t output_nr);
/// For a view whose base was modified in place: regenerates grad_fn (AsStridedBackward0).
void refresh_view_grad_fn(const Tensor& view);
/// Bumps the version counter of `t` (and everything that shares it).
inline void bump_version(const Tensor& t) { ++t.impl()->version(); }

}  // namespace autograd
}  // namespace graft
