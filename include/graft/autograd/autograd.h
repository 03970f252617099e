#pragma once
/// backward(), grad(), anomaly mode: the public entry points of the autograd engine.
#include <optional>
#include <string>

#include "graft/autograd/node.h"
#include "graft/core/grad_mode.h"
#include "graft/core/non_copyable.h"

namespace graft::autograd {

/// torch.autograd.graph.saved_tensors_hooks, as an RAII guard (declared in node.h).
using graft::SavedTensorsHooks;
using graft::SavedTensorsHooksGuard;

/// Accumulates d(tensors)/d(leaves) into the leaves' `.grad` (torch.autograd.backward).
/// `grad_tensors` may be empty (implicit ones for one-element outputs). `retain_graph`
/// defaults to `create_graph`. `inputs`, when given, restricts accumulation to them.
void backward(const TensorList& tensors, const TensorList& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::optional<TensorList>& inputs = std::nullopt);

/// Returns d(outputs)/d(inputs) without touching `.grad` (torch.autograd.grad). Unused inputs
/// raise unless `allow_unused` (then the entry is undefined), or get zeros with `materialize_grads`.
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false, bool allow_unused = false,
                bool materialize_grads = false);

/// The id of the backward pass (graph task) running on this thread, or -1 outside one
/// (torch._C._current_graph_task_id). A backward started inside a backward (reentrant: a
/// custom Function's backward calling backward) has its own id while it runs.
int64_t current_graph_task_id();

/// False while a backward pass on this thread, or one it runs inside, computes only some
/// gradients (grad(), or backward() with `inputs`): reentrant checkpointing cannot work then
/// (torch.autograd._is_checkpoint_valid).
bool is_checkpoint_valid();

/// Anomaly detection: nodes record where they were created; a NaN in any backward output
/// raises "Function 'XBackward0' returned nan values in its 0th output."
struct AnomalyMode {
  static bool is_enabled();
  static bool should_check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
};

/// RAII form of AnomalyMode (torch.autograd.detect_anomaly()).
class DetectAnomalyGuard : graft::detail::NonCopyable {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();

 private:
  bool prev_, prev_nan_;
};

/// Replaces how anomaly mode records "the forward call that created a node" (default: a C++
/// backtrace). The Python package installs one that formats the Python stack, as PyTorch's
/// anomaly mode prints. Pass nullptr to restore the default.
void set_anomaly_trace_provider(std::function<std::string()> provider);

/// Receives warnings autograd emits (PyTorch's UserWarning); default prints to stderr.
void set_warning_handler(std::function<void(const std::string&)> handler);
void warn(const std::string& message);

/// For diagnostics (the leak doctor): the TensorImpl of `t`'s `.grad`, or null; takes no
/// reference and never warns.
const TensorImpl* grad_impl(const TensorImpl& t);
/// For diagnostics: the grad_fn of `t`'s `.grad` (identity only, read under the gradient's
/// lock; null when none).
const Node* grad_fn_of_grad(const TensorImpl& t);
/// For diagnostics: the base of `t` when `t` is a view (identity only; null otherwise).
const TensorImpl* view_base(const TensorImpl& t);
/// An optimizer stepped `leaf` (graft's optimizers and the Python optimizer hook call it while
/// a doctor session counts): judges whether the step used gradients carried over from before
/// the leaf's previous step without a reset (the doctor's LD008).
void note_leaf_stepped(const Tensor& leaf);

}  // namespace graft::autograd
