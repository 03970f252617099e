#pragma once
/// Autocast, PyTorch's automatic mixed precision on the CPU: inside an enabled region (Python's
/// `torch.autocast("cpu")`, C++'s AutocastGuard) the ops of PyTorch's lower-precision list
/// (mm, bmm, matmul, linear, the convolutions) run with their floating inputs cast to the
/// autocast dtype (bfloat16 by default), and the ops of its float32 list (the losses, prod) with
/// their 16-bit inputs cast to float32; every other op runs on what it is given. The casts are
/// ordinary differentiable `to()` calls, so gradients reach float32 parameters in float32. The
/// state is per thread, as PyTorch's. docs/notes/dtypes.md.
#include "graft/core/tensor.h"

namespace graft::autocast {

/// Which list an op is on.
enum class CastPolicy {
  LowerPrecision,  ///< float32 (not float64) inputs cast to the autocast dtype
  Float32          ///< float16 / bfloat16 inputs cast to float32
};

/// Whether autocast is enabled on this thread for `device` (only the CPU has it in graft).
bool is_enabled(DeviceType device = DeviceType::CPU);
void set_enabled(DeviceType device, bool enabled);
/// The dtype the lower-precision list runs in (bfloat16 unless set).
DType get_dtype(DeviceType device = DeviceType::CPU);
/// ValueError unless float16 or bfloat16.
void set_dtype(DeviceType device, DType dtype);

/// Whether an op on a list casts now: enabled, and not inside an op that already cast.
bool active();

/// Marks the body of an op that cast its inputs: the ops it calls run on what they are given.
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool was_;
};

/// `t` cast as `policy` says (undefined and non-floating tensors as they are).
Tensor cast(const Tensor& t, CastPolicy policy);

/// Runs `fn` on `tensors` cast as `policy` says, with nested ops suspended.
template <class Fn, class... Ts>
auto run(CastPolicy policy, Fn&& fn, const Ts&... tensors) {
  const Suspend suspend;
  return fn(cast(tensors, policy)...);
}

/// RAII: enables autocast on the CPU with `dtype` for a scope, restoring the previous state.
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype = kBFloat16, bool enabled = true);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_enabled_;
  DType prev_dtype_;
};

}  // namespace graft::autocast
