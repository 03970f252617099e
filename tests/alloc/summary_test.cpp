// memory_summary against golden tables rendered by an independent port of PyTorch 2.x's
// memory_summary (tests/alloc/golden/memory_summary_reference.py): the state of a real
// scripted run, abbreviated and not, and a synthetic state that exercises every unit and
// count suffix. Plus the title and OOM line on the process-wide CPU allocator.
#include "alloc_test_util.h"

namespace graft::testing {
namespace {

const char* const kScripted = R"TXT(|===========================================================================|
|                  graft CPU memory summary, device ID 0                    |
|---------------------------------------------------------------------------|
|            CPU OOMs: 0             |        raw alloc retries: 0          |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   5123 KiB |   5123 KiB |   5124 KiB |   1024 B   |
|       from large pool |   5120 KiB |   5120 KiB |   5120 KiB |      0 B   |
|       from small pool |      3 KiB |      4 KiB |      4 KiB |   1024 B   |
|---------------------------------------------------------------------------|
| Active memory         |   5123 KiB |   5123 KiB |   5124 KiB |   1024 B   |
|       from large pool |   5120 KiB |   5120 KiB |   5120 KiB |      0 B   |
|       from small pool |      3 KiB |      4 KiB |      4 KiB |   1024 B   |
|---------------------------------------------------------------------------|
| Requested memory      |   5122 KiB |   5122 KiB |   5123 KiB |   1000 B   |
|       from large pool |   5120 KiB |   5120 KiB |   5120 KiB |      0 B   |
|       from small pool |      2 KiB |      3 KiB |      3 KiB |   1000 B   |
|---------------------------------------------------------------------------|
| CPU reserved memory   |  22528 KiB |  22528 KiB |  22528 KiB |      0 B   |
|       from large pool |  20480 KiB |  20480 KiB |  20480 KiB |      0 B   |
|       from small pool |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |
|---------------------------------------------------------------------------|
| Non-releasable memory |  17405 KiB |  17405 KiB |  17408 KiB |   3072 B   |
|       from large pool |  15360 KiB |  15360 KiB |  15360 KiB |      0 B   |
|       from small pool |   2045 KiB |   2047 KiB |   2048 KiB |   3072 B   |
|---------------------------------------------------------------------------|
| Allocations           |       2    |       2    |       3    |       1    |
|       from large pool |       1    |       1    |       1    |       0    |
|       from small pool |       1    |       2    |       2    |       1    |
|---------------------------------------------------------------------------|
| Active allocs         |       2    |       2    |       3    |       1    |
|       from large pool |       1    |       1    |       1    |       0    |
|       from small pool |       1    |       2    |       2    |       1    |
|---------------------------------------------------------------------------|
| CPU reserved segments |       2    |       2    |       2    |       0    |
|       from large pool |       1    |       1    |       1    |       0    |
|       from small pool |       1    |       1    |       1    |       0    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |       3    |       3    |       3    |       0    |
|       from large pool |       1    |       1    |       1    |       0    |
|       from small pool |       2    |       2    |       2    |       0    |
|---------------------------------------------------------------------------|
| Oversize allocations  |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Oversize CPU segments |       0    |       0    |       0    |       0    |
|===========================================================================|
)TXT";

const char* const kScriptedAbbreviated =
    R"TXT(|===========================================================================|
|                  graft CPU memory summary, device ID 0                    |
|---------------------------------------------------------------------------|
|            CPU OOMs: 0             |        raw alloc retries: 0          |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   5123 KiB |   5123 KiB |   5124 KiB |   1024 B   |
|---------------------------------------------------------------------------|
| Active memory         |   5123 KiB |   5123 KiB |   5124 KiB |   1024 B   |
|---------------------------------------------------------------------------|
| Requested memory      |   5122 KiB |   5122 KiB |   5123 KiB |   1000 B   |
|---------------------------------------------------------------------------|
| CPU reserved memory   |  22528 KiB |  22528 KiB |  22528 KiB |      0 B   |
|---------------------------------------------------------------------------|
| Non-releasable memory |  17405 KiB |  17405 KiB |  17408 KiB |   3072 B   |
|---------------------------------------------------------------------------|
| Allocations           |       2    |       2    |       3    |       1    |
|---------------------------------------------------------------------------|
| Active allocs         |       2    |       2    |       3    |       1    |
|---------------------------------------------------------------------------|
| CPU reserved segments |       2    |       2    |       2    |       0    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |       3    |       3    |       3    |       0    |
|---------------------------------------------------------------------------|
| Oversize allocations  |       0    |       0    |       0    |       0    |
|---------------------------------------------------------------------------|
| Oversize CPU segments |       0    |       0    |       0    |       0    |
|===========================================================================|
)TXT";

const char* const kSynthetic = R"TXT(|===========================================================================|
|                  graft CPU memory summary, device ID 0                    |
|---------------------------------------------------------------------------|
|            CPU OOMs: 12            |        raw alloc retries: 345        |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   3072 MiB |   5120 GiB |   7168 TiB | 785408 B   |
|       from large pool |   3072 MiB |   5119 GiB |   7168 TiB | 785308 B   |
|       from small pool |      0 MiB |      0 GiB |      0 TiB |    100 B   |
|---------------------------------------------------------------------------|
| Active memory         |   3072 MiB |   5120 GiB |   7168 TiB | 785408 B   |
|       from large pool |   3072 MiB |   5119 GiB |   7168 TiB | 785308 B   |
|       from small pool |      0 MiB |      0 GiB |      0 TiB |    100 B   |
|---------------------------------------------------------------------------|
| Requested memory      |   3072 MiB |   5120 GiB |   7168 TiB | 785408 B   |
|       from large pool |   3072 MiB |   5119 GiB |   7168 TiB | 785308 B   |
|       from small pool |      0 MiB |      0 GiB |      0 TiB |    100 B   |
|---------------------------------------------------------------------------|
| CPU reserved memory   |   3072 MiB |   5120 GiB |   7168 TiB | 785408 B   |
|       from large pool |   3072 MiB |   5119 GiB |   7168 TiB | 785308 B   |
|       from small pool |      0 MiB |      0 GiB |      0 TiB |    100 B   |
|---------------------------------------------------------------------------|
| Non-releasable memory |   3072 MiB |   5120 GiB |   7168 TiB | 785408 B   |
|       from large pool |   3072 MiB |   5119 GiB |   7168 TiB | 785308 B   |
|       from small pool |      0 MiB |      0 GiB |      0 TiB |    100 B   |
|---------------------------------------------------------------------------|
| Allocations           |     900 K  |    2500 K  |    3000 M  |      12    |
|       from large pool |     100 K  |    2499 K  |       0 M  |       7    |
|       from small pool |     800 K  |       1 K  |       0 M  |       5    |
|---------------------------------------------------------------------------|
| Active allocs         |     900 K  |    2500 K  |    3000 M  |      12    |
|       from large pool |     100 K  |    2499 K  |       0 M  |       7    |
|       from small pool |     800 K  |       1 K  |       0 M  |       5    |
|---------------------------------------------------------------------------|
| CPU reserved segments |     900 K  |    2500 K  |    3000 M  |      12    |
|       from large pool |     100 K  |    2499 K  |       0 M  |       7    |
|       from small pool |     800 K  |       1 K  |       0 M  |       5    |
|---------------------------------------------------------------------------|
| Non-releasable allocs |     900 K  |    2500 K  |    3000 M  |      12    |
|       from large pool |     100 K  |    2499 K  |       0 M  |       7    |
|       from small pool |     800 K  |       1 K  |       0 M  |       5    |
|---------------------------------------------------------------------------|
| Oversize allocations  |       3    |     800 K  |    1200 K  |     999    |
|---------------------------------------------------------------------------|
| Oversize CPU segments |       1    |       2    |       3    |       2    |
|===========================================================================|
)TXT";

TEST(MemorySummary, GoldenFromAScriptedRun) {
  TestAllocator t;
  DataPtr a = t.get(1000), b = t.get(3000);
  a = DataPtr();
  DataPtr c = t.get(5 * MiB);
  EXPECT_EQ(format_memory_summary(t.stats(), kCPU, false), kScripted);
  EXPECT_EQ(format_memory_summary(t.stats(), kCPU, true), kScriptedAbbreviated);
}

TEST(MemorySummary, GoldenUnitsAndCounts) {
  const std::map<std::string, int64_t> stats = {{"active.all.allocated", 3000000007LL},
                                                {"active.all.current", 900002LL},
                                                {"active.all.freed", 12LL},
                                                {"active.all.peak", 2500000LL},
                                                {"active.large_pool.allocated", 749999LL},
                                                {"active.large_pool.current", 100002LL},
                                                {"active.large_pool.freed", 7LL},
                                                {"active.large_pool.peak", 2499000LL},
                                                {"active.small_pool.allocated", 999999LL},
                                                {"active.small_pool.current", 800000LL},
                                                {"active.small_pool.freed", 5LL},
                                                {"active.small_pool.peak", 1000LL},
                                                {"active_bytes.all.allocated", 7881299347898491LL},
                                                {"active_bytes.all.current", 3221225474LL},
                                                {"active_bytes.all.freed", 785408LL},
                                                {"active_bytes.all.peak", 5497558138880LL},
                                                {"active_bytes.large_pool.allocated", 7881299347898368LL},
                                                {"active_bytes.large_pool.current", 3221225472LL},
                                                {"active_bytes.large_pool.freed", 785308LL},
                                                {"active_bytes.large_pool.peak", 5497556041728LL},
                                                {"active_bytes.small_pool.allocated", 786432LL},
                                                {"active_bytes.small_pool.current", 1000LL},
                                                {"active_bytes.small_pool.freed", 100LL},
                                                {"active_bytes.small_pool.peak", 2097152LL},
                                                {"allocated_bytes.all.allocated", 7881299347898491LL},
                                                {"allocated_bytes.all.current", 3221225472LL},
                                                {"allocated_bytes.all.freed", 785408LL},
                                                {"allocated_bytes.all.peak", 5497558138880LL},
                                                {"allocated_bytes.large_pool.allocated", 7881299347898368LL},
                                                {"allocated_bytes.large_pool.current", 3221225472LL},
                                                {"allocated_bytes.large_pool.freed", 785308LL},
                                                {"allocated_bytes.large_pool.peak", 5497556041728LL},
                                                {"allocated_bytes.small_pool.allocated", 786432LL},
                                                {"allocated_bytes.small_pool.current", 1000LL},
                                                {"allocated_bytes.small_pool.freed", 100LL},
                                                {"allocated_bytes.small_pool.peak", 2097152LL},
                                                {"allocation.all.allocated", 3000000007LL},
                                                {"allocation.all.current", 900000LL},
                                                {"allocation.all.freed", 12LL},
                                                {"allocation.all.peak", 2500000LL},
                                                {"allocation.large_pool.allocated", 749999LL},
                                                {"allocation.large_pool.current", 100000LL},
                                                {"allocation.large_pool.freed", 7LL},
                                                {"allocation.large_pool.peak", 2499000LL},
                                                {"allocation.small_pool.allocated", 999999LL},
                                                {"allocation.small_pool.current", 800000LL},
                                                {"allocation.small_pool.freed", 5LL},
                                                {"allocation.small_pool.peak", 1000LL},
                                                {"inactive_split.all.allocated", 3000000007LL},
                                                {"inactive_split.all.current", 900003LL},
                                                {"inactive_split.all.freed", 12LL},
                                                {"inactive_split.all.peak", 2500000LL},
                                                {"inactive_split.large_pool.allocated", 749999LL},
                                                {"inactive_split.large_pool.current", 100003LL},
                                                {"inactive_split.large_pool.freed", 7LL},
                                                {"inactive_split.large_pool.peak", 2499000LL},
                                                {"inactive_split.small_pool.allocated", 999999LL},
                                                {"inactive_split.small_pool.current", 800000LL},
                                                {"inactive_split.small_pool.freed", 5LL},
                                                {"inactive_split.small_pool.peak", 1000LL},
                                                {"inactive_split_bytes.all.allocated", 7881299347898491LL},
                                                {"inactive_split_bytes.all.current", 3221225475LL},
                                                {"inactive_split_bytes.all.freed", 785408LL},
                                                {"inactive_split_bytes.all.peak", 5497558138880LL},
                                                {"inactive_split_bytes.large_pool.allocated", 7881299347898368LL},
                                                {"inactive_split_bytes.large_pool.current", 3221225472LL},
                                                {"inactive_split_bytes.large_pool.freed", 785308LL},
                                                {"inactive_split_bytes.large_pool.peak", 5497556041728LL},
                                                {"inactive_split_bytes.small_pool.allocated", 786432LL},
                                                {"inactive_split_bytes.small_pool.current", 1000LL},
                                                {"inactive_split_bytes.small_pool.freed", 100LL},
                                                {"inactive_split_bytes.small_pool.peak", 2097152LL},
                                                {"max_split_size", -1LL},
                                                {"num_alloc_retries", 345LL},
                                                {"num_device_alloc", 0LL},
                                                {"num_device_free", 0LL},
                                                {"num_ooms", 12LL},
                                                {"num_sync_all_streams", 0LL},
                                                {"oversize_allocations.allocated", 1200000LL},
                                                {"oversize_allocations.current", 3LL},
                                                {"oversize_allocations.freed", 999LL},
                                                {"oversize_allocations.peak", 800000LL},
                                                {"oversize_segments.allocated", 3LL},
                                                {"oversize_segments.current", 1LL},
                                                {"oversize_segments.freed", 2LL},
                                                {"oversize_segments.peak", 2LL},
                                                {"requested_bytes.all.allocated", 7881299347898491LL},
                                                {"requested_bytes.all.current", 3221225476LL},
                                                {"requested_bytes.all.freed", 785408LL},
                                                {"requested_bytes.all.peak", 5497558138880LL},
                                                {"requested_bytes.large_pool.allocated", 7881299347898368LL},
                                                {"requested_bytes.large_pool.current", 3221225472LL},
                                                {"requested_bytes.large_pool.freed", 785308LL},
                                                {"requested_bytes.large_pool.peak", 5497556041728LL},
                                                {"requested_bytes.small_pool.allocated", 786432LL},
                                                {"requested_bytes.small_pool.current", 1000LL},
                                                {"requested_bytes.small_pool.freed", 100LL},
                                                {"requested_bytes.small_pool.peak", 2097152LL},
                                                {"reserved_bytes.all.allocated", 7881299347898491LL},
                                                {"reserved_bytes.all.current", 3221225473LL},
                                                {"reserved_bytes.all.freed", 785408LL},
                                                {"reserved_bytes.all.peak", 5497558138880LL},
                                                {"reserved_bytes.large_pool.allocated", 7881299347898368LL},
                                                {"reserved_bytes.large_pool.current", 3221225472LL},
                                                {"reserved_bytes.large_pool.freed", 785308LL},
                                                {"reserved_bytes.large_pool.peak", 5497556041728LL},
                                                {"reserved_bytes.small_pool.allocated", 786432LL},
                                                {"reserved_bytes.small_pool.current", 1000LL},
                                                {"reserved_bytes.small_pool.freed", 100LL},
                                                {"reserved_bytes.small_pool.peak", 2097152LL},
                                                {"segment.all.allocated", 3000000007LL},
                                                {"segment.all.current", 900001LL},
                                                {"segment.all.freed", 12LL},
                                                {"segment.all.peak", 2500000LL},
                                                {"segment.large_pool.allocated", 749999LL},
                                                {"segment.large_pool.current", 100001LL},
                                                {"segment.large_pool.freed", 7LL},
                                                {"segment.large_pool.peak", 2499000LL},
                                                {"segment.small_pool.allocated", 999999LL},
                                                {"segment.small_pool.current", 800000LL},
                                                {"segment.small_pool.freed", 5LL},
                                                {"segment.small_pool.peak", 1000LL}};
  EXPECT_EQ(format_memory_summary(stats, kCPU, false), kSynthetic);
}

TEST(MemorySummary, EveryLineIs75WideOnTheProcessAllocator) {
  Tensor x = ones({1000});
  const std::string s = memory_summary();
  size_t start = 0, lines = 0;
  while (start < s.size()) {
    const size_t end = s.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    EXPECT_EQ(end - start, 77u) << s.substr(start, end - start);
    start = end + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 47u);
  EXPECT_NE(s.find("graft CPU memory summary, device ID 0"), std::string::npos);
  EXPECT_EQ(memory_summary(kCPU, true).find("from large pool"), std::string::npos);
  EXPECT_THROW_HAS(memory_summary(Device("cuda")), RuntimeError, "without CUDA");
}

}  // namespace
}  // namespace graft::testing
