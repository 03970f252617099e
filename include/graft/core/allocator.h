#pragma once
/// The allocator interface Storage takes its memory through. A DataPtr is a pointer plus the
/// deleter and context that free it, plus the device, so Storage never knows which
/// allocator made it. Every device's memory comes from a caching allocator
/// (include/graft/alloc/caching_allocator.h); the statistics are in graft/memory.h.
#include <cstddef>
#include <cstdint>

#include "graft/core/device.h"
#include "graft/core/non_copyable.h"

namespace graft {

/// Owner of one allocation: frees it through `deleter(ctx)` when destroyed.
class DataPtr {
 public:
  using Deleter = void (*)(void* ctx);
  DataPtr() = default;
  DataPtr(void* data, void* ctx, Deleter deleter, Device device)
      : data_(data), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = static_cast<DataPtr&&>(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      free();
      data_ = o.data_;
      ctx_ = o.ctx_;
      deleter_ = o.deleter_;
      device_ = o.device_;
      o.data_ = nullptr;
      o.ctx_ = nullptr;
      o.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { free(); }
  void* get() const { return data_; }
  Device device() const { return device_; }
  /// The allocator's handle for this allocation (a block header for graft's allocators).
  void* context() const { return ctx_; }
  Deleter deleter() const { return deleter_; }

 private:
  void free() {
    if (deleter_) deleter_(ctx_);
    deleter_ = nullptr;
  }
  void* data_ = nullptr;
  void* ctx_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

/// Who owns an allocation, kept as one byte in the block header and reported per category
/// by memory_by_category(). See docs/memory.md, "Who owns the bytes".
enum class MemoryCategory : uint8_t { Other = 0, Parameter, Gradient, SavedForBackward, OptimizerState, DataBatch };
inline constexpr int kNumMemoryCategories = 6;
/// "parameter", "gradient", "saved_for_backward", "optimizer_state", "data_batch", "other".
const char* memory_category_name(MemoryCategory c);

/// Sets the category of allocations made on this thread while it lives (innermost wins).
/// Used by the code that owns the memory: optimizers for their state, data loaders for
/// batches. Tensors that become owned later (parameters, gradients) are tagged with
/// set_memory_category() instead.
class MemoryCategoryGuard : graft::detail::NonCopyable {
 public:
  explicit MemoryCategoryGuard(MemoryCategory c) noexcept;
  ~MemoryCategoryGuard();
  /// The category new allocations on this thread get.
  static MemoryCategory current() noexcept { return tl_current_; }

 private:
  static constinit thread_local MemoryCategory tl_current_;
  MemoryCategory prev_;
};

/// Interface every device allocator implements.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns `nbytes` of memory (64-byte aligned on the host); nbytes may be 0.
  virtual DataPtr allocate(size_t nbytes) = 0;
};

/// The allocator used for new tensors on `device` (the caching allocator unless
/// GRAFT_ALLOC_CONF says backend:malloc). Throws for a device this build cannot use.
Allocator* allocator_for(Device device);
/// allocator_for(kCPU).
Allocator* cpu_allocator();

}  // namespace graft
