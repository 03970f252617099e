#pragma once
// Helpers the optimizers share: state creation under the optimizer-state memory category,
// the step counter, the choice between the fused loop and the tensor-op fallback, and the
// fallback's composite ops (lerp_, addcmul-style updates) written with graft ops in PyTorch's
// order.
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graft/core/allocator.h"
#include "graft/core/grad_mode.h"
#include "graft/core/python_format.h"
#include "graft/ops/ops.h"
#include "graft/optim/optimizer.h"

namespace graft::optim::detail {

/// PyTorch's constructor checks: ValueError "Invalid <what>: <value>" for the first value that
/// is not >= 0 (NaN included).
inline void check_nonnegative(std::initializer_list<std::pair<const char*, double>> checks) {
  for (const auto& [what, value] : checks)
    GRAFT_CHECK(0.0 <= value, ValueError, "Invalid ", what, ": ", graft::detail::python_float(value));
}

/// A zero-filled state tensor shaped like `param` (contiguous), tagged optimizer_state.
inline Tensor zeros_state(const Tensor& param) {
  MemoryCategoryGuard category(MemoryCategory::OptimizerState);
  return zeros(param.sizes(), TensorOptions(param.dtype()).device(param.device()));
}
/// A `value`-filled state tensor shaped like `param` (contiguous), tagged optimizer_state.
inline Tensor full_state(const Tensor& param, double value) {
  MemoryCategoryGuard category(MemoryCategory::OptimizerState);
  return full(param.sizes(), value, TensorOptions(param.dtype()).device(param.device()));
}
/// An uninitialized state tensor shaped like `param` (contiguous), tagged optimizer_state.
inline Tensor empty_state(const Tensor& param) {
  MemoryCategoryGuard category(MemoryCategory::OptimizerState);
  return empty(param.sizes(), TensorOptions(param.dtype()).device(param.device()));
}
/// PyTorch's refusals of an in-place update of `p`: an inference tensor outside InferenceMode,
/// a tensor whose elements overlap in memory.
inline void check_writable(const Tensor& p) {
  GRAFT_CHECK(!p.is_inference() || InferenceMode::is_enabled(), RuntimeError,
              "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
              "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
              "details.");
  GRAFT_CHECK(!p.impl()->has_internal_overlap(), RuntimeError,
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
}
/// PyTorch's `step` state: a 0-d float32 zero, on the CPU (as PyTorch keeps it for any device)
/// except for meta parameters, whose steps stay on meta so that a memory estimate counts them
/// as a CPU run, where they share the parameters' allocator, does.
inline Tensor new_step(Device param_device = kCPU) {
  MemoryCategoryGuard category(MemoryCategory::OptimizerState);
  return zeros({}, TensorOptions(kFloat32).device(param_device.is_meta() ? kMeta : kCPU));
}

/// One parameter's state during an update: existing entries are used in place, missing ones
/// are made on demand and added to the optimizer's state by commit() once the update has
/// run (so a failed update leaves no half-made state behind).
class StateSlots {
 public:
  StateSlots(std::unordered_map<const TensorImpl*, ParamState>& state, const Tensor& param)
      : state_(state), param_(param) {
    auto it = state.find(param.impl());
    existing_ = it == state.end() ? nullptr : &it->second;
  }
  /// The entry `name`, or make() when missing (remembered for commit).
  template <class Make>
  Tensor get(const char* name, Make make) {
    if (existing_)
      if (Tensor* t = existing_->find(name)) return *t;
    Tensor t = make();
    fresh_.emplace_back(name, t);
    return t;
  }
  /// Whether `name` was made by this update.
  bool is_new(const char* name) const {
    for (const auto& f : fresh_)
      if (f.first == name) return true;
    return false;
  }
  void commit() {
    if (fresh_.empty()) return;
    ParamState& st = state_[param_.impl()];
    for (auto& f : fresh_) st.insert(f.first, std::move(f.second));
    fresh_.clear();
  }

 private:
  std::unordered_map<const TensorImpl*, ParamState>& state_;
  const Tensor& param_;
  ParamState* existing_ = nullptr;
  std::vector<std::pair<std::string, Tensor>> fresh_;
};

/// step += 1 (in the tensor's dtype, as PyTorch's `step_t += 1`); returns the new value.
inline double increment_step(Tensor& step) {
  if (step.device().is_meta()) {  // no count to keep: 1 makes every bias correction defined
    ++step.impl()->version();
    return 1.0;
  }
  if (step.dtype() == kFloat32) {
    float* s = step.data_ptr<float>();
    *s = *s + 1.0f;
    ++step.impl()->version();
    return *s;
  }
  step.add_(1);
  return step.item<double>();
}

/// Whether the fused loop applies: float32/float64, param, grad and buffers contiguous and of
/// one dtype (undefined buffers are ignored).
inline bool fusable(const Tensor& param, const Tensor& grad, std::initializer_list<const Tensor*> buffers) {
  const DType dt = param.dtype();
  if (dt != kFloat32 && dt != kFloat64) return false;
  if (!param.is_contiguous() || !grad.is_contiguous() || grad.dtype() != dt) return false;
  for (const Tensor* b : buffers)
    if (b->defined() && (!b->is_contiguous() || b->dtype() != dt || b->numel() != param.numel())) return false;
  return true;
}

/// The fused loops write through raw pointers: bump the version counters as in-place ops do.
inline void bump_versions(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->defined()) ++t->impl()->version();
}

/// Typed data pointer of a possibly undefined tensor (null when undefined).
template <class T>
inline T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

/// Calls a fused loop (fused_kernels.h) as `kernel(param, grad, buffers..., numel)` with typed
/// pointers of the parameter's dtype, float32 or float64 (null for undefined buffers); on meta
/// there are no values, so nothing is called. Kernels are generic lambdas forwarding to the
/// loop: `[&](auto... p) { sgd_fused(p..., args); }`.
template <class Kernel, class... Buffers>
void call_fused(const Kernel& kernel, const Tensor& param, const Tensor& grad, const Buffers&... buffers) {
  if (param.device().is_meta()) return;
  if (param.dtype() == kFloat32)
    kernel(param.data_ptr<float>(), grad.data_ptr<float>(), ptr_or_null<float>(buffers)..., param.numel());
  else
    kernel(param.data_ptr<double>(), grad.data_ptr<double>(), ptr_or_null<double>(buffers)..., param.numel());
}

/// One parameter's update with its state `buffers` (undefined ones allowed): the fused loop
/// (call_fused) and the version bumps when fusable() says it applies, else `fallback()`, the
/// same update in tensor ops.
template <class Kernel, class Fallback, class... Buffers>
void fused_or_fallback(Tensor& param, const Tensor& grad, const Kernel& kernel, const Fallback& fallback,
                       const Buffers&... buffers) {
  if (!fusable(param, grad, {&buffers...})) {
    fallback();
    return;
  }
  call_fused(kernel, param, grad, buffers...);
  bump_versions({&param, &buffers...});
}

/// The optimizers' loop over a group: `update(param, grad, slots)` for every parameter that
/// has a gradient, then the state it made is added (StateSlots::commit).
template <class Update>
void for_each_param_with_grad(std::unordered_map<const TensorImpl*, ParamState>& state, OptimizerParamGroup& group,
                              const Update& update) {
  for (Tensor& param : group.params()) {
    const Tensor& grad = param.grad();
    if (!grad.defined()) continue;
    StateSlots slots(state, param);
    update(param, grad, slots);
    slots.commit();
  }
}

/// -grad when maximizing (a new tensor), else grad itself.
inline Tensor signed_grad(const Tensor& grad, bool maximize) { return maximize ? grad.neg() : grad; }

/// self.lerp_(end, weight) with PyTorch's formula choice (see fused_kernels.h's lerp).
inline void lerp_(Tensor& self, const Tensor& end, double weight) {
  if (self.dtype() == kFloat32) {
    const float w = static_cast<float>(weight);
    if (w < 0.5f && w > -0.5f) {
      self.add_(end.sub(self), weight);
    } else {
      self.copy_(end.sub(end.sub(self).mul(static_cast<double>(1.0f - w))));
    }
    return;
  }
  if (weight < 0.5 && weight > -0.5)
    self.add_(end.sub(self), weight);
  else
    self.copy_(end.sub(end.sub(self).mul(1.0 - weight)));
}

}  // namespace graft::optim::detail
