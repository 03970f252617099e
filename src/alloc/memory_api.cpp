// The per-device allocators and the public memory API (graft/memory.h).
#include <memory>
#include <mutex>

#include "graft/core/error.h"
#include "graft/core/storage.h"
#include "graft/core/tensor_impl.h"
#include "graft/memory.h"

namespace graft {

alloc::CachingAllocator& device_allocator(Device device) {
  check_device_available(device, "device_allocator");
  // Created on first use from GRAFT_ALLOC_CONF and never destroyed: tensors may be freed
  // during static destruction, after any destructor of ours would have run.
  static alloc::CachingAllocator* cpu = new alloc::CachingAllocator(kCPU, std::make_unique<alloc::HostRawAllocator>(),
                                                                    alloc::AllocatorConfig::from_env());
  if (device.is_meta()) {
    // The same policy and settings as the CPU's, over addresses with nothing behind them.
    static alloc::CachingAllocator* meta = new alloc::CachingAllocator(
        kMeta, std::make_unique<alloc::MetaRawAllocator>(), alloc::AllocatorConfig::from_env());
    return *meta;
  }
  return *cpu;
}

Allocator* allocator_for(Device device) {
  return device.is_cpu() ? cpu_allocator() : &device_allocator(device);  // every op's output: keep it short
}
Allocator* cpu_allocator() {
  static Allocator* a = &device_allocator(kCPU);
  return a;
}

std::map<std::string, int64_t> memory_stats(Device d) { return device_allocator(d).stats().to_map(); }
int64_t memory_allocated(Device d) { return device_allocator(d).stats().allocated_bytes[alloc::kAggregate].current; }
int64_t max_memory_allocated(Device d) { return device_allocator(d).stats().allocated_bytes[alloc::kAggregate].peak; }
int64_t memory_reserved(Device d) { return device_allocator(d).stats().reserved_bytes[alloc::kAggregate].current; }
int64_t max_memory_reserved(Device d) { return device_allocator(d).stats().reserved_bytes[alloc::kAggregate].peak; }
void reset_peak_memory_stats(Device d) { device_allocator(d).reset_peak_stats(); }
void reset_accumulated_memory_stats(Device d) { device_allocator(d).reset_accumulated_stats(); }
void empty_cache(Device d) { device_allocator(d).empty_cache(); }
std::vector<alloc::SegmentInfo> memory_snapshot(Device d) { return device_allocator(d).snapshot(); }

std::map<std::string, int64_t> memory_by_category(Device d) {
  const auto bytes = device_allocator(d).bytes_by_category();
  std::map<std::string, int64_t> out;
  for (int c = 0; c < kNumMemoryCategories; ++c)
    out[memory_category_name(static_cast<MemoryCategory>(c))] = bytes[static_cast<size_t>(c)];
  return out;
}

void set_memory_category(const Tensor& t, MemoryCategory c) {
  GRAFT_CHECK(t.defined(), ValueError, "set_memory_category: undefined tensor");
  const auto& st = t.impl()->storage();
  alloc::CachingAllocator::set_category(st->data_ptr(), c);
}

MemoryCategory memory_category(const Tensor& t) {
  GRAFT_CHECK(t.defined(), ValueError, "memory_category: undefined tensor");
  return alloc::CachingAllocator::category(t.impl()->storage()->data_ptr());
}

void set_per_process_memory_fraction(double fraction, Device d) { device_allocator(d).set_memory_fraction(fraction); }

void set_per_process_memory_limit(std::optional<int64_t> bytes, Device d) {
  GRAFT_CHECK(!bytes || *bytes >= 0, ValueError, "set_per_process_memory_limit: the limit must be >= 0, got ", *bytes);
  device_allocator(d).set_memory_limit(bytes ? std::optional<size_t>(static_cast<size_t>(*bytes)) : std::nullopt);
}

std::pair<int64_t, int64_t> mem_get_info(Device d) {
  const alloc::MemInfo info = device_allocator(d).mem_get_info();
  return {static_cast<int64_t>(info.free), static_cast<int64_t>(info.total)};
}

void record_memory_history(bool enabled, size_t max_entries, bool cpp_stacks, Device d) {
  device_allocator(d).history().configure(enabled, max_entries, cpp_stacks);
}

void set_allocator_settings(const std::string& settings, Device d) { device_allocator(d).update_config(settings); }

std::string allocator_backend(Device d) {
  return device_allocator(d).config().backend == alloc::Backend::Native ? "native" : "malloc";
}

MemoryEstimate estimate_memory(const std::function<void()>& step, int steps) {
  GRAFT_CHECK(steps >= 1, ValueError, "estimate_memory: steps must be >= 1, got ", steps);
  GRAFT_CHECK(static_cast<bool>(step), ValueError, "estimate_memory: no step function");
  // estimates share the meta allocator's cache and peaks: one runs at a time (another thread's
  // waits); the default device they switch to meta is this thread's only
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> serial(one_at_a_time);
  empty_cache(kMeta);
  reset_peak_memory_stats(kMeta);
  MemoryEstimate e;
  e.steps = steps;
  e.allocated_before = memory_allocated(kMeta);
  struct RestoreDefault {
    Device prev = default_device();
    ~RestoreDefault() { set_default_device(prev); }
  } restore;
  set_default_device(kMeta);
  for (int i = 0; i < steps; ++i) step();
  e.peak_allocated = max_memory_allocated(kMeta);
  e.peak_reserved = max_memory_reserved(kMeta);
  e.allocated_after = memory_allocated(kMeta);
  e.by_category = memory_by_category(kMeta);
  return e;
}

}  // namespace graft
