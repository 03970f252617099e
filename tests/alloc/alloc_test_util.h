#pragma once
// A private CachingAllocator over a TestRawAllocator, so tests see exact statistics without
// the process-wide CPU allocator's history.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "graft/graft.h"
#include "support/test_util.h"

namespace graft::testing {

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * 1024;

struct TestAllocator {
  alloc::TestRawAllocator* raw;
  std::unique_ptr<alloc::CachingAllocator> a;
  explicit TestAllocator(const std::string& conf = "") {
    auto r = std::make_unique<alloc::TestRawAllocator>();
    raw = r.get();
    a = std::make_unique<alloc::CachingAllocator>(kCPU, std::move(r), alloc::AllocatorConfig::parse(conf));
  }
  DataPtr get(size_t n) { return a->allocate(n); }
  std::map<std::string, int64_t> stats() const { return a->stats().to_map(); }
  int64_t stat(const std::string& k) const { return stats().at(k); }
  int64_t allocated() const { return stat("allocated_bytes.all.current"); }
  int64_t reserved() const { return stat("reserved_bytes.all.current"); }
};

/// Every key memory_stats() has, all zero (max_split_size -1): the state of a fresh allocator.
inline std::map<std::string, int64_t> zero_stats() {
  std::map<std::string, int64_t> m;
  for (const char* k : {"allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
                        "active_bytes", "inactive_split_bytes", "requested_bytes"})
    for (const char* p : {"all", "small_pool", "large_pool"})
      for (const char* f : {"current", "peak", "allocated", "freed"}) m[std::string(k) + "." + p + "." + f] = 0;
  for (const char* k : {"oversize_allocations", "oversize_segments"})
    for (const char* f : {"current", "peak", "allocated", "freed"}) m[std::string(k) + "." + f] = 0;
  for (const char* k : {"num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free"})
    m[k] = 0;
  m["max_split_size"] = -1;
  return m;
}

/// Sets key.{current,peak,allocated,freed}.
inline void set4(std::map<std::string, int64_t>& m, const std::string& key, int64_t cur, int64_t peak, int64_t alloc,
                 int64_t freed) {
  m[key + ".current"] = cur;
  m[key + ".peak"] = peak;
  m[key + ".allocated"] = alloc;
  m[key + ".freed"] = freed;
}

/// Asserts two stat maps are equal key by key (reports every differing key).
inline void expect_stats(const std::map<std::string, int64_t>& actual, const std::map<std::string, int64_t>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [k, v] : expected) {
    auto it = actual.find(k);
    ASSERT_NE(it, actual.end()) << "missing key " << k;
    EXPECT_EQ(it->second, v) << "stat " << k;
  }
}

}  // namespace graft::testing
