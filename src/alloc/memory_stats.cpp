// DeviceStats flattening and resets, PyTorch's format_size, and the category names/guard.
#include "graft/alloc/memory_stats.h"

#include <cstdio>
#include <iterator>

#include "graft/core/allocator.h"
#include "graft/core/enum_names.h"

namespace graft {

const char* memory_category_name(MemoryCategory c) {
  static constexpr const char* kNames[] = {"other",           "parameter", "gradient", "saved_for_backward",
                                           "optimizer_state", "data_batch"};
  static_assert(std::size(kNames) == kNumMemoryCategories);
  return detail::enum_name(kNames, c, "other");
}

constinit thread_local MemoryCategory MemoryCategoryGuard::tl_current_ = MemoryCategory::Other;
MemoryCategoryGuard::MemoryCategoryGuard(MemoryCategory c) noexcept : prev_(tl_current_) { tl_current_ = c; }
MemoryCategoryGuard::~MemoryCategoryGuard() { tl_current_ = prev_; }

namespace alloc {
namespace {
constexpr const char* kPools[3] = {"all", "small_pool", "large_pool"};

void put(std::map<std::string, int64_t>& m, const std::string& prefix, const Stat& s) {
  m[prefix + ".current"] = s.current;
  m[prefix + ".peak"] = s.peak;
  m[prefix + ".allocated"] = s.allocated;
  m[prefix + ".freed"] = s.freed;
}
void put(std::map<std::string, int64_t>& m, const char* name, const StatArray& a) {
  for (int t = 0; t < 3; ++t) put(m, std::string(name) + "." + kPools[t], a[static_cast<size_t>(t)]);
}
template <class F>
void for_each_array(DeviceStats& s, F f) {
  for (StatArray* a : {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes, &s.reserved_bytes,
                       &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes})
    for (Stat& st : *a) f(st);
  f(s.oversize_allocations);
  f(s.oversize_segments);
}
}  // namespace

void DeviceStats::reset_peak() {
  for_each_array(*this, [](Stat& s) { s.reset_peak(); });
}

void DeviceStats::reset_accumulated() {
  for_each_array(*this, [](Stat& s) { s.reset_accumulated(); });
  num_alloc_retries = num_ooms = num_sync_all_streams = num_device_alloc = num_device_free = 0;
}

std::map<std::string, int64_t> DeviceStats::to_map() const {
  std::map<std::string, int64_t> m;
  put(m, "allocation", allocation);
  put(m, "segment", segment);
  put(m, "active", active);
  put(m, "inactive_split", inactive_split);
  put(m, "allocated_bytes", allocated_bytes);
  put(m, "reserved_bytes", reserved_bytes);
  put(m, "active_bytes", active_bytes);
  put(m, "inactive_split_bytes", inactive_split_bytes);
  put(m, "requested_bytes", requested_bytes);
  put(m, "oversize_allocations", oversize_allocations);
  put(m, "oversize_segments", oversize_segments);
  m["num_alloc_retries"] = num_alloc_retries;
  m["num_ooms"] = num_ooms;
  m["num_sync_all_streams"] = num_sync_all_streams;
  m["num_device_alloc"] = num_device_alloc;
  m["num_device_free"] = num_device_free;
  m["max_split_size"] = max_split_size;
  return m;
}

std::string format_size(uint64_t size) {
  char buf[64];
  if (size <= 1024)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(size));
  else if (size <= 1048576)
    std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(size) / 1024.0);
  else if (size <= 1073741824ULL)
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(size) / 1048576.0);
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(size) / 1073741824.0);
  return buf;
}

}  // namespace alloc
}  // namespace graft
