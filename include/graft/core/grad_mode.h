#pragma once
/// Thread-local grad modes: GradMode (NoGradGuard, EnableGradGuard) and InferenceMode. They
/// are core flags (as c10/core's GradMode and InferenceMode): the ops read them when they
/// allocate (inference tensors) and decide whether to record, autograd when it runs.
/// graft/autograd/grad_mode.h includes this header, for code written against the old path.
#include "graft/core/non_copyable.h"

namespace graft {

/// Whether ops record a backward graph on this thread.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// RAII: sets grad mode to `enabled` for the current scope (PyTorch's AutoGradMode).
class AutoGradMode : graft::detail::NonCopyable {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }

 private:
  bool prev_;
};

/// RAII: no graph recording in this scope (torch.no_grad()).
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};
/// RAII: graph recording on in this scope, even inside NoGradGuard (torch.enable_grad()).
struct EnableGradGuard : AutoGradMode {
  EnableGradGuard() : AutoGradMode(true) {}
};

/// RAII: inference mode (torch.inference_mode()): no recording, and tensors created here are
/// inference tensors that cannot be saved for backward later.
class InferenceMode : graft::detail::NonCopyable {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  static bool is_enabled();

 private:
  bool prev_inference_;
  bool prev_grad_;
};

}  // namespace graft
