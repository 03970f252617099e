// The caching policy on a test raw allocator: the worked-examples table of reference 11.2,
// scripted sequences with every statistic checked, best fit, splitting and merging,
// empty_cache, fragmentation, max_split_size_mb, roundup_power2_divisions, garbage collection.
#include <algorithm>

#include "alloc_test_util.h"

namespace graft::testing {
namespace {

struct WorkedExample {
  size_t request, block, segment, remainder;
  const char* pool;
};

// Reference section 11.2, "Worked examples (native backend, default config, empty cache)".
TEST(WorkedExamples, TableHoldsExactly) {
  const WorkedExample rows[] = {
      {1, 512, 2 * MiB, 2 * MiB - 512, "small_pool"},
      {1000, 1024, 2 * MiB, 2 * MiB - 1024, "small_pool"},
      {1 * MiB, 1 * MiB, 2 * MiB, 1 * MiB, "small_pool"},
      {1 * MiB + 1, 1 * MiB + 512, 20 * MiB, 20 * MiB - (1 * MiB + 512), "large_pool"},
      {9 * MiB, 9 * MiB, 20 * MiB, 11 * MiB, "large_pool"},
      {10 * MiB, 10 * MiB, 10 * MiB, 0, "large_pool"},
      {11 * MiB, 12 * MiB, 12 * MiB, 0, "large_pool"},  // the 1 MiB remainder is not > 1 MiB: not split
      {19 * MiB, 20 * MiB, 20 * MiB, 0, "large_pool"},
      {30 * MiB, 30 * MiB, 30 * MiB, 0, "large_pool"},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.request);
    TestAllocator t;
    DataPtr p = t.get(r.request);
    ASSERT_NE(p.get(), nullptr);
    const auto s = t.stats();
    EXPECT_EQ(s.at("allocated_bytes.all.current"), static_cast<int64_t>(r.block));  // memory_allocated
    EXPECT_EQ(s.at(std::string("allocated_bytes.") + r.pool + ".current"), static_cast<int64_t>(r.block));
    EXPECT_EQ(s.at("requested_bytes.all.current"), static_cast<int64_t>(r.request));
    EXPECT_EQ(s.at("reserved_bytes.all.current"), static_cast<int64_t>(r.segment));  // memory_reserved
    EXPECT_EQ(s.at(std::string("segment.") + r.pool + ".current"), 1);
    EXPECT_EQ(s.at("inactive_split_bytes.all.current"), static_cast<int64_t>(r.remainder));
    EXPECT_EQ(s.at("inactive_split.all.current"), r.remainder ? 1 : 0);
    EXPECT_EQ(t.raw->live_bytes(), r.segment);
    EXPECT_EQ(t.raw->alloc_calls(), 1);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u);
  }
}

// One scripted sequence, every key of memory_stats() checked at two points.
TEST(ScriptedStats, EveryKeyExact) {
  TestAllocator t;
  expect_stats(t.stats(), zero_stats());
  DataPtr a = t.get(1000);     // 1024 from a new 2 MiB small segment (remainder 2 MiB - 1024)
  DataPtr b = t.get(3000);     // 3072 from that remainder (now 2 MiB - 4096)
  a = DataPtr();               // a's block becomes an inactive split block
  DataPtr c = t.get(5 * MiB);  // 5 MiB from a new 20 MiB large segment (remainder 15 MiB)

  auto e = zero_stats();
  set4(e, "allocation.all", 2, 2, 3, 1);
  set4(e, "allocation.small_pool", 1, 2, 2, 1);
  set4(e, "allocation.large_pool", 1, 1, 1, 0);
  set4(e, "active.all", 2, 2, 3, 1);
  set4(e, "active.small_pool", 1, 2, 2, 1);
  set4(e, "active.large_pool", 1, 1, 1, 0);
  set4(e, "segment.all", 2, 2, 2, 0);
  set4(e, "segment.small_pool", 1, 1, 1, 0);
  set4(e, "segment.large_pool", 1, 1, 1, 0);
  set4(e, "inactive_split.all", 3, 3, 3, 0);
  set4(e, "inactive_split.small_pool", 2, 2, 2, 0);
  set4(e, "inactive_split.large_pool", 1, 1, 1, 0);
  set4(e, "inactive_split_bytes.all", 17 * MiB - 3072, 17 * MiB - 3072, 17 * MiB, 3072);
  set4(e, "inactive_split_bytes.small_pool", 2 * MiB - 3072, 2 * MiB - 1024, 2 * MiB, 3072);
  set4(e, "inactive_split_bytes.large_pool", 15 * MiB, 15 * MiB, 15 * MiB, 0);
  for (const char* k : {"allocated_bytes", "active_bytes"}) {
    set4(e, std::string(k) + ".all", 5 * MiB + 3072, 5 * MiB + 3072, 5 * MiB + 4096, 1024);
    set4(e, std::string(k) + ".small_pool", 3072, 4096, 4096, 1024);
    set4(e, std::string(k) + ".large_pool", 5 * MiB, 5 * MiB, 5 * MiB, 0);
  }
  set4(e, "requested_bytes.all", 5 * MiB + 3000, 5 * MiB + 3000, 5 * MiB + 4000, 1000);
  set4(e, "requested_bytes.small_pool", 3000, 4000, 4000, 1000);
  set4(e, "requested_bytes.large_pool", 5 * MiB, 5 * MiB, 5 * MiB, 0);
  set4(e, "reserved_bytes.all", 22 * MiB, 22 * MiB, 22 * MiB, 0);
  set4(e, "reserved_bytes.small_pool", 2 * MiB, 2 * MiB, 2 * MiB, 0);
  set4(e, "reserved_bytes.large_pool", 20 * MiB, 20 * MiB, 20 * MiB, 0);
  e["num_device_alloc"] = 2;
  expect_stats(t.stats(), e);

  b = DataPtr();       // merges with both free neighbours: the small segment is whole again
  t.a->empty_cache();  // releases it; the large segment is split (c lives) and stays
  c = DataPtr();       // merges with its remainder
  t.a->empty_cache();  // releases the large segment

  set4(e, "allocation.all", 0, 2, 3, 3);
  set4(e, "allocation.small_pool", 0, 2, 2, 2);
  set4(e, "allocation.large_pool", 0, 1, 1, 1);
  set4(e, "active.all", 0, 2, 3, 3);
  set4(e, "active.small_pool", 0, 2, 2, 2);
  set4(e, "active.large_pool", 0, 1, 1, 1);
  set4(e, "segment.all", 0, 2, 2, 2);
  set4(e, "segment.small_pool", 0, 1, 1, 1);
  set4(e, "segment.large_pool", 0, 1, 1, 1);
  set4(e, "inactive_split.all", 0, 3, 3, 3);
  set4(e, "inactive_split.small_pool", 0, 2, 2, 2);
  set4(e, "inactive_split.large_pool", 0, 1, 1, 1);
  set4(e, "inactive_split_bytes.all", 0, 17 * MiB - 3072, 17 * MiB, 17 * MiB);
  set4(e, "inactive_split_bytes.small_pool", 0, 2 * MiB - 1024, 2 * MiB, 2 * MiB);
  set4(e, "inactive_split_bytes.large_pool", 0, 15 * MiB, 15 * MiB, 15 * MiB);
  for (const char* k : {"allocated_bytes", "active_bytes"}) {
    set4(e, std::string(k) + ".all", 0, 5 * MiB + 3072, 5 * MiB + 4096, 5 * MiB + 4096);
    set4(e, std::string(k) + ".small_pool", 0, 4096, 4096, 4096);
    set4(e, std::string(k) + ".large_pool", 0, 5 * MiB, 5 * MiB, 5 * MiB);
  }
  set4(e, "requested_bytes.all", 0, 5 * MiB + 3000, 5 * MiB + 4000, 5 * MiB + 4000);
  set4(e, "requested_bytes.small_pool", 0, 4000, 4000, 4000);
  set4(e, "requested_bytes.large_pool", 0, 5 * MiB, 5 * MiB, 5 * MiB);
  set4(e, "reserved_bytes.all", 0, 22 * MiB, 22 * MiB, 22 * MiB);
  set4(e, "reserved_bytes.small_pool", 0, 2 * MiB, 2 * MiB, 2 * MiB);
  set4(e, "reserved_bytes.large_pool", 0, 20 * MiB, 20 * MiB, 20 * MiB);
  e["num_device_free"] = 2;
  e["num_sync_all_streams"] = 2;  // one per release of the whole cache (empty_cache here)
  expect_stats(t.stats(), e);
  EXPECT_EQ(t.raw->live_bytes(), 0u);

  t.a->reset_peak_stats();         // peak := current
  t.a->reset_accumulated_stats();  // allocated/freed and num_* := 0
  auto z = zero_stats();
  expect_stats(t.stats(), z);
}

TEST(Policy, ResetPeakKeepsCurrent) {
  TestAllocator t;
  DataPtr a = t.get(4000), b = t.get(4000);
  b = DataPtr();
  EXPECT_EQ(t.stat("allocated_bytes.all.peak"), 8192);
  t.a->reset_peak_stats();
  EXPECT_EQ(t.stat("allocated_bytes.all.peak"), 4096);
  EXPECT_EQ(t.stat("allocated_bytes.all.allocated"), 8192);  // untouched by a peak reset
  t.a->reset_accumulated_stats();
  EXPECT_EQ(t.stat("allocated_bytes.all.allocated"), 0);
  EXPECT_EQ(t.stat("allocated_bytes.all.current"), 4096);
}

TEST(Policy, BestFitSmallestThenLowestAddress) {
  TestAllocator t;
  // carve one 2 MiB segment: [h1 1024][x 512][h2 4096][y 512][h3 1024][z 512][rest]
  DataPtr h1 = t.get(1024), x = t.get(512), h2 = t.get(4096), y = t.get(512), h3 = t.get(1024), z = t.get(512);
  auto* base = static_cast<char*>(h1.get());
  void* p_h1 = h1.get();
  void* p_h2 = h2.get();
  void* p_h3 = h3.get();
  EXPECT_EQ(static_cast<char*>(h2.get()) - base, 1536);
  h2 = DataPtr();
  h3 = DataPtr();
  h1 = DataPtr();  // holes: 1024 @0, 4096 @1536, 1024 @6144, plus the segment's rest
  EXPECT_EQ(t.stat("inactive_split.all.current"), 4);
  DataPtr a = t.get(1000);  // smallest fit is 1024; of the two, the lower address
  EXPECT_EQ(a.get(), p_h1);
  DataPtr b = t.get(1024);
  EXPECT_EQ(b.get(), p_h3);
  DataPtr c = t.get(3000);  // 3072 from the 4096 hole, which splits (1024 left >= 512)
  EXPECT_EQ(c.get(), p_h2);
  EXPECT_EQ(t.stat("inactive_split.all.current"), 2);  // the 1024 tail of h2 and the segment's rest
  EXPECT_EQ(t.stat("segment.all.current"), 1);
}

TEST(Policy, SplitBoundaries) {
  TestAllocator t;
  DataPtr x = t.get(1024), pin = t.get(512);
  x = DataPtr();           // a 1024-byte hole
  DataPtr y = t.get(512);  // small pool: a 512-byte remainder (>= 512) is split off
  EXPECT_EQ(t.allocated(), 1024);
  EXPECT_EQ(t.stat("inactive_split.small_pool.current"), 2);  // the 512 tail and the segment's rest
  TestAllocator l;
  { DataPtr big = l.get(12 * MiB); }  // a 12 MiB large segment, cached
  DataPtr z = l.get(11 * MiB);        // remainder exactly 1 MiB: large pool needs > 1 MiB to split
  EXPECT_EQ(l.allocated(), static_cast<int64_t>(12 * MiB));
  z = DataPtr();
  DataPtr w = l.get(11 * MiB - 512);  // remainder 1 MiB + 512: split
  EXPECT_EQ(l.allocated(), static_cast<int64_t>(11 * MiB - 512));
  EXPECT_EQ(l.stat("inactive_split_bytes.large_pool.current"), static_cast<int64_t>(1 * MiB + 512));
}

TEST(Policy, FreeMergesNeighboursAndSnapshotShowsBlocks) {
  TestAllocator t;
  DataPtr a = t.get(512), b = t.get(512), c = t.get(512);
  auto snap = t.a->snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 4u);  // a, b, c, the free rest
  EXPECT_STREQ(snap[0].segment_type, "small");
  EXPECT_EQ(snap[0].total_size, 2 * MiB);
  EXPECT_EQ(snap[0].allocated_size, 1536u);
  EXPECT_STREQ(snap[0].blocks[3].state, "inactive");
  EXPECT_EQ(snap[0].blocks[3].size, 2 * MiB - 1536);
  b = DataPtr();  // no free neighbour: a hole
  EXPECT_EQ(t.a->snapshot()[0].blocks.size(), 4u);
  a = DataPtr();  // merges with b's hole
  snap = t.a->snapshot();
  ASSERT_EQ(snap[0].blocks.size(), 3u);
  EXPECT_EQ(snap[0].blocks[0].size, 1024u);
  EXPECT_STREQ(snap[0].blocks[0].state, "inactive");
  EXPECT_STREQ(snap[0].blocks[1].state, "active_allocated");
  EXPECT_EQ(snap[0].blocks[1].requested_size, 512u);
  c = DataPtr();  // merges both ways: one whole free block
  snap = t.a->snapshot();
  ASSERT_EQ(snap[0].blocks.size(), 1u);
  EXPECT_EQ(snap[0].blocks[0].size, 2 * MiB);
  EXPECT_EQ(t.stat("inactive_split.all.current"), 0);
  EXPECT_EQ(t.stat("inactive_split_bytes.all.current"), 0);
}

TEST(Policy, CachedBlockIsReusedWithoutRawCall) {
  TestAllocator t;
  void* first;
  {
    DataPtr a = t.get(300000);
    first = a.get();
  }
  EXPECT_EQ(t.allocated(), 0);
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(2 * MiB));  // cached, not returned
  DataPtr b = t.get(300000);
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(t.raw->alloc_calls(), 1);
  DataPtr big = t.get(3 * MiB);  // large pool: separate segment
  EXPECT_EQ(t.raw->alloc_calls(), 2);
}

TEST(Fragmentation, HolesAreNonReleasableAndSurviveEmptyCache) {
  TestAllocator t;
  DataPtr a = t.get(512 * KiB), b = t.get(512 * KiB);
  a = DataPtr();  // a hole in front of b; the segment stays split
  EXPECT_EQ(t.stat("inactive_split_bytes.all.current"), static_cast<int64_t>(512 * KiB + 1 * MiB));
  EXPECT_EQ(t.stat("inactive_split.all.current"), 2);
  t.a->empty_cache();
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(2 * MiB));  // nothing whole to give back
  EXPECT_EQ(t.stat("inactive_split_bytes.all.current"), static_cast<int64_t>(512 * KiB + 1 * MiB));
  EXPECT_EQ(t.raw->live_bytes(), 2 * MiB);
  DataPtr big = t.get(1 * MiB + 512 * KiB);  // does not fit any hole: a new large segment
  EXPECT_EQ(t.stat("segment.large_pool.current"), 1);
  b = DataPtr();
  t.a->empty_cache();  // now the small segment is whole and goes back
  EXPECT_EQ(t.stat("segment.small_pool.current"), 0);
}

TEST(Policy, EmptyCacheReturnsOnlyWholeFreeSegments) {
  TestAllocator t;
  DataPtr keep = t.get(100);
  { DataPtr x = t.get(12 * MiB), y = t.get(2 * MiB), z = t.get(3 * MiB); }
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(2 * MiB + 12 * MiB + 20 * MiB));
  t.a->empty_cache();
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(2 * MiB));  // the small segment holds `keep`
  EXPECT_EQ(t.allocated(), 512);
  EXPECT_EQ(t.raw->live_bytes(), 2 * MiB);
  EXPECT_EQ(t.stat("num_device_free"), 2);
}

TEST(MaxSplitSize, OversizeBlocksAreNotSplitAndServeOnlyLargeRequests) {
  TestAllocator t("max_split_size_mb:20");
  EXPECT_EQ(t.stat("max_split_size"), static_cast<int64_t>(20 * MiB));
  {
    DataPtr big = t.get(25 * MiB);  // 26 MiB segment, not split (25 MiB >= max_split_size)
    EXPECT_EQ(t.allocated(), static_cast<int64_t>(26 * MiB));
    EXPECT_EQ(t.stat("oversize_allocations.current"), 1);
    EXPECT_EQ(t.stat("oversize_segments.current"), 1);
  }
  EXPECT_EQ(t.stat("oversize_allocations.current"), 0);
  DataPtr small = t.get(5 * MiB);  // may not take the cached 26 MiB oversize block
  EXPECT_EQ(t.stat("segment.large_pool.current"), 2);
  DataPtr second = t.get(5 * MiB + 100);  // served by the 20 MiB segment's remainder
  EXPECT_EQ(t.stat("segment.large_pool.current"), 2);
  DataPtr fits = t.get(24 * MiB);  // 24 + max_non_split_rounding (20) > 26: takes the oversize block
  EXPECT_EQ(t.stat("segment.large_pool.current"), 2);
  EXPECT_EQ(t.raw->alloc_calls(), 2);
}

TEST(MaxSplitSize, NonSplitRoundingBoundsWaste) {
  TestAllocator t("max_split_size_mb:20,max_non_split_rounding_mb:20");
  { DataPtr big = t.get(60 * MiB); }
  DataPtr r = t.get(30 * MiB);  // 60 >= 30 + 20: too wasteful, new segment
  EXPECT_EQ(t.stat("segment.large_pool.current"), 2);
  DataPtr r2 = t.get(41 * MiB);  // 60 < 41 + 20: reuses the cached block
  EXPECT_EQ(t.stat("segment.large_pool.current"), 2);
  EXPECT_EQ(t.allocated(), static_cast<int64_t>(30 * MiB + 60 * MiB));
}

TEST(MaxSplitSize, ReleasesOversizeBlocksBeforeTheFullRetry) {
  TestAllocator t("max_split_size_mb:20");
  { DataPtr x = t.get(24 * MiB), y = t.get(26 * MiB); }  // both cached, oversize
  t.raw->set_cap(60 * MiB);                              // 50 MiB live: a new 50 MiB segment fails
  DataPtr big = t.get(50 * MiB);                         // releases 26 then 24 (largest first), then allocates
  EXPECT_EQ(t.stat("num_alloc_retries"), 0);             // no full-cache retry was needed
  EXPECT_EQ(t.stat("num_device_free"), 2);
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(50 * MiB));
}

TEST(RoundUpPower2, DivisionsRoundWithinPowerOfTwoIntervals) {
  TestAllocator t("roundup_power2_divisions:4");
  { DataPtr p = t.get(1258291); }  // 1.2 MiB: quarters of [1 MiB, 2 MiB) -> 1.25 MiB
  EXPECT_EQ(t.stat("allocated_bytes.all.allocated"), 1310720);
  { DataPtr p = t.get(2 * MiB); }  // a power of two stays
  EXPECT_EQ(t.stat("allocated_bytes.all.allocated"), static_cast<int64_t>(1310720 + 2 * MiB));
  { DataPtr p = t.get(1200); }  // <= 512 * divisions: plain 512 rounding (1536)
  EXPECT_EQ(t.stat("allocated_bytes.all.allocated"), static_cast<int64_t>(1310720 + 2 * MiB + 1536));
  TestAllocator list("roundup_power2_divisions:[1:2,2:2,256:1,>:8]");
  const auto d = list.a->config().roundup_power2_divisions;
  EXPECT_EQ(d[0], 2u);  // [1 MiB, 2 MiB)
  EXPECT_EQ(d[1], 2u);  // [2 MiB, 4 MiB)
  EXPECT_EQ(d[7], 0u);  // intervals not named stay off, as in PyTorch
  EXPECT_EQ(d[8], 1u);  // [256 MiB, 512 MiB)
  EXPECT_EQ(d[9], 8u);  // ">" fills every interval after the last one named
  EXPECT_EQ(d[15], 8u);
  { DataPtr p = list.get(3 * MiB + 1); }  // halves of [2 MiB, 4 MiB) -> 4 MiB
  EXPECT_EQ(list.stat("allocated_bytes.all.allocated"), static_cast<int64_t>(4 * MiB));
  // ">" first: PyTorch fills from last_index + 1, so interval 0 stays off
  const auto g = alloc::AllocatorConfig::parse("roundup_power2_divisions:[>:4]").roundup_power2_divisions;
  EXPECT_EQ(g[0], 0u);
  EXPECT_EQ(g[1], 4u);
  EXPECT_EQ(g[15], 4u);
}

TEST(Policy, AbsurdSizesAreOomNotOverflow) {
  TestAllocator t;
  EXPECT_THROW(t.get(SIZE_MAX), OutOfMemoryError);
  EXPECT_THROW(t.get(SIZE_MAX - 3 * MiB / 2), OutOfMemoryError);
  EXPECT_THROW(t.get((size_t{1} << 62) + 1), OutOfMemoryError);
  EXPECT_EQ(t.stat("num_ooms"), 3);
  EXPECT_EQ(t.stat("segment.all.allocated"), 0);
  EXPECT_EQ(t.raw->alloc_calls(), 0);
  { DataPtr p = t.get(3 * MiB); }  // 20 MiB reserved, above the cap set next
  t.a->set_memory_limit(1 * MiB);
  EXPECT_THROW(t.get(20 * MiB + 1), OutOfMemoryError);  // no unsigned wrap in the cap check
}

TEST(Policy, DestroyingTheAllocatorWithLiveBlocksIsSafe) {
  auto raw = std::make_unique<alloc::TestRawAllocator>();
  alloc::TestRawAllocator* r = raw.get();
  DataPtr a, b;
  {
    alloc::CachingAllocator alloc(kCPU, std::move(raw));
    a = alloc.allocate(1000);
    b = alloc.allocate(5 * MiB);
    { DataPtr cached = alloc.allocate(12 * MiB); }
  }  // the allocator is gone; its cached segment went back, the live ones stay valid
  static_cast<char*>(a.get())[999] = 1;
  static_cast<char*>(b.get())[5 * MiB - 1] = 1;
  a = DataPtr();
  b = DataPtr();  // the last block: the heir returns its segments and deletes itself (ASan checks)
  (void)r;
}

TEST(GarbageCollection, FreesBlocksOlderThanAverageAboveThreshold) {
  TestAllocator t("garbage_collection_threshold:0.5");
  t.a->set_memory_limit(100 * MiB);  // GC acts only under a cap; threshold 50 MiB
  { DataPtr a = t.get(12 * MiB), b = t.get(14 * MiB), c = t.get(16 * MiB); }  // cached, age base 3
  { DataPtr d = t.get(18 * MiB); }  // 42 MiB reserved <= 50: no GC; new segment (60 MiB); base 4
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(60 * MiB));
  // 60 > 50: ages are 2, 2, 2 (a, b, c) and 1 (d); mean 1.75: a, b and c go, d stays
  DataPtr e = t.get(20 * MiB);
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(18 * MiB + 20 * MiB));
  EXPECT_EQ(t.stat("num_device_free"), 3);
  EXPECT_EQ(t.stat("num_alloc_retries"), 0);
}

TEST(GarbageCollection, OffWithoutACap) {
  TestAllocator t("garbage_collection_threshold:0.5");
  { DataPtr a = t.get(12 * MiB), b = t.get(14 * MiB); }
  DataPtr e = t.get(20 * MiB);
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(46 * MiB));
  EXPECT_EQ(t.stat("num_device_free"), 0);
}

TEST(Policy, ZeroBytesIsNonNullAndUncounted) {
  TestAllocator t;
  DataPtr p = t.get(0);
  EXPECT_NE(p.get(), nullptr);
  expect_stats(t.stats(), zero_stats());
  EXPECT_EQ(t.raw->alloc_calls(), 0);
}

TEST(MallocBackend, EveryBlockIsItsOwnRawAllocation) {
  TestAllocator t("backend:malloc");
  DataPtr a = t.get(1000);
  EXPECT_EQ(t.allocated(), 1000);  // no rounding
  EXPECT_EQ(t.reserved(), 1000);
  EXPECT_EQ(t.raw->live_bytes(), 1000u);
  a = DataPtr();
  EXPECT_EQ(t.reserved(), 0);  // returned at once
  EXPECT_EQ(t.raw->live_bytes(), 0u);
  DataPtr b = t.get(1000);
  EXPECT_EQ(t.raw->alloc_calls(), 2);  // nothing cached
  DataPtr c = t.get(5 * MiB);
  EXPECT_EQ(t.stat("segment.large_pool.current"), 1);
  EXPECT_EQ(t.stat("reserved_bytes.all.current"), static_cast<int64_t>(5 * MiB + 1000));
  EXPECT_EQ(t.stat("inactive_split.all.allocated"), 0);
}

}  // namespace
}  // namespace graft::testing
