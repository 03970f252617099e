#pragma once
/// The allocator interface Storage takes its memory through. A DataPtr is a pointer plus the
/// deleter and context that free it, plus the device, so Storage never knows which
/// allocator made it. The caching allocator (issue 3) will sit behind the same interface.
#include <cstddef>
#include <cstdint>

#include "graft/core/device.h"

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
      data_ = o.data_; ctx_ = o.ctx_; deleter_ = o.deleter_; device_ = o.device_;
      o.data_ = nullptr; o.ctx_ = nullptr; o.deleter_ = nullptr;
    }
    return *this;
  }
  ~DataPtr() { free(); }
  void* get() const { return data_; }
  Device device() const { return device_; }

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

/// Who owns an allocation; reported per category by memory_by_category (issue 3).
enum class MemoryCategory : uint8_t { Other = 0, Parameter, Gradient, SavedForBackward, OptimizerState, DataBatch };

/// Interface every device allocator implements.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// Returns `nbytes` of memory (64-byte aligned on the host); nbytes may be 0.
  virtual DataPtr allocate(size_t nbytes) = 0;
};

/// The allocator used for new CPU tensors.
Allocator* cpu_allocator();

/// Bytes currently allocated through graft's allocator on `device` (PyTorch's
/// memory_allocated). Memory passed in with from_blob is not counted.
int64_t memory_allocated(Device device = kCPU);
/// Number of live allocations on `device`.
int64_t memory_allocation_count(Device device = kCPU);

}  // namespace graft
