// Raw allocators: host memory is 64-byte aligned; page-locked host memory is really locked
// (the kernel's VmLck grows by the segment) and unlocked when the segment goes back.
#include <fstream>
#include <string>

#include "alloc_test_util.h"

namespace graft::testing {
namespace {

int64_t locked_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmLck:", 0) == 0) return std::stoll(line.substr(6));
  return -1;
}

TEST(RawAllocator, HostIsAlignedAndReportsMemory) {
  alloc::HostRawAllocator raw;
  for (size_t n : {1, 63, 64, 4097, 3 << 20}) {
    void* p = raw.allocate(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    static_cast<char*>(p)[n - 1] = 1;
    raw.free(p, n);
  }
  auto info = raw.mem_info();
  ASSERT_TRUE(info.has_value());
  EXPECT_GT(info->total, 0u);
  EXPECT_LE(info->free, info->total);
  EXPECT_EQ(raw.allocate(info->total + 1), nullptr);  // more than the machine has: refused
}

TEST(RawAllocator, PageLockedSegmentsAreLocked) {
  const int64_t before = locked_kib();
  ASSERT_GE(before, 0);
  alloc::CachingAllocator a(kCPU, std::make_unique<alloc::HostRawAllocator>(/*page_locked=*/true));
  EXPECT_STREQ(a.raw().name(), "host page-locked");
  {
    DataPtr p = a.allocate(1000);  // a 2 MiB segment, locked
    ASSERT_NE(p.get(), nullptr);
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer ignores mlock: VmLck is checked in the normal build";
#endif
    EXPECT_GE(locked_kib() - before, 2048);
  }
  a.empty_cache();
  EXPECT_EQ(locked_kib(), before);
}

TEST(RawAllocator, TestAllocatorFailsOnDemand) {
  alloc::TestRawAllocator raw;
  raw.fail_at_call(2);
  void* p = raw.allocate(100);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(raw.allocate(100), nullptr);  // the second call
  void* q = raw.allocate(100);
  EXPECT_NE(q, nullptr);
  raw.set_cap(250);
  EXPECT_EQ(raw.allocate(100), nullptr);  // 200 live + 100 > 250
  EXPECT_EQ(raw.mem_info()->total, 250u);
  EXPECT_EQ(raw.mem_info()->free, 50u);
  raw.free(p, 100);
  raw.free(q, 100);
  EXPECT_EQ(raw.live_bytes(), 0u);
  EXPECT_EQ(raw.failed_calls(), 2);
  EXPECT_EQ(raw.alloc_calls(), 4);
}

}  // namespace
}  // namespace graft::testing
