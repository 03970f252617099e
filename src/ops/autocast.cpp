// Autocast's per-thread state and its casts (include/graft/ops/autocast.h).
#include "graft/ops/autocast.h"

#include "op_util.h"

namespace graft::autocast {
namespace {
struct State {
  bool enabled = false;
  bool suspended = false;
  DType dtype = kBFloat16;
};
thread_local State tl_state;

void check_cpu(DeviceType device) {
  GRAFT_CHECK(device == DeviceType::CPU, RuntimeError, "autocast: graft has autocast on the CPU only");
}
}  // namespace

bool is_enabled(DeviceType device) { return device == DeviceType::CPU && tl_state.enabled; }
void set_enabled(DeviceType device, bool enabled) {
  check_cpu(device);
  tl_state.enabled = enabled;
}
DType get_dtype(DeviceType device) {
  check_cpu(device);
  return tl_state.dtype;
}
void set_dtype(DeviceType device, DType dtype) {
  check_cpu(device);
  GRAFT_CHECK(is_reduced_floating_point(dtype), ValueError,
              "autocast: the CPU autocast dtype must be float16 or bfloat16, got ", dtype);
  tl_state.dtype = dtype;
}

bool active() { return tl_state.enabled && !tl_state.suspended; }

Suspend::Suspend() : was_(tl_state.suspended) { tl_state.suspended = true; }
Suspend::~Suspend() { tl_state.suspended = was_; }

Tensor cast(const Tensor& t, CastPolicy policy) {
  if (!t.defined() || !is_floating_point(t.dtype())) return t;
  if (policy == CastPolicy::LowerPrecision)  // float64 stays, as PyTorch's is_eligible
    return t.dtype() == kFloat32 ? t.to(tl_state.dtype) : t;
  return is_reduced_floating_point(t.dtype()) ? t.to(kFloat32) : t;
}

AutocastGuard::AutocastGuard(DType dtype, bool enabled) : prev_enabled_(tl_state.enabled), prev_dtype_(tl_state.dtype) {
  set_dtype(DeviceType::CPU, dtype);
  tl_state.enabled = enabled;
}
AutocastGuard::~AutocastGuard() {
  tl_state.enabled = prev_enabled_;
  tl_state.dtype = prev_dtype_;
}

}  // namespace graft::autocast
