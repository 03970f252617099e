// Thread-local grad mode and inference mode flags (graft/core/grad_mode.h).
#include "graft/core/grad_mode.h"

namespace graft {
namespace {
thread_local bool tl_grad_enabled = true;
thread_local bool tl_inference = false;
}  // namespace

bool GradMode::is_enabled() { return tl_grad_enabled; }
void GradMode::set_enabled(bool enabled) { tl_grad_enabled = enabled; }

InferenceMode::InferenceMode(bool enabled) : prev_inference_(tl_inference), prev_grad_(tl_grad_enabled) {
  tl_inference = enabled;
  if (enabled) tl_grad_enabled = false;
}
InferenceMode::~InferenceMode() {
  tl_inference = prev_inference_;
  tl_grad_enabled = prev_grad_;
}
bool InferenceMode::is_enabled() { return tl_inference; }

}  // namespace graft
