// Raw failures: release-and-retry (num_alloc_retries), OutOfMemoryError with PyTorch's
// message (num_ooms), caps by bytes and by fraction, and that nothing is lost after an OOM.
#include <cstring>

#include "alloc_test_util.h"

namespace graft::testing {
namespace {

TEST(Retry, FailedRawCallIsRetriedOnceAfterReleasingTheCache) {
  TestAllocator t;
  t.raw->fail_at_call(1);  // the first raw call fails, the retry succeeds
  DataPtr p = t.get(1000);
  EXPECT_NE(p.get(), nullptr);
  EXPECT_EQ(t.stat("num_alloc_retries"), 1);
  EXPECT_EQ(t.stat("num_ooms"), 0);
  EXPECT_EQ(t.stat("num_sync_all_streams"), 1);
  EXPECT_EQ(t.raw->alloc_calls(), 2);
  EXPECT_EQ(t.stat("num_device_alloc"), 1);
}

TEST(Retry, ReleasingCachedSegmentsMakesRoom) {
  TestAllocator t;
  { DataPtr big = t.get(5 * MiB); }  // a 20 MiB segment, now cached
  t.raw->set_cap(21 * MiB);          // a new 2 MiB small segment does not fit beside it
  DataPtr small = t.get(1000);
  EXPECT_EQ(t.stat("num_alloc_retries"), 1);
  EXPECT_EQ(t.stat("segment.large_pool.freed"), 1);  // the cached segment went back
  EXPECT_EQ(t.reserved(), static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(t.allocated(), 1024);
}

TEST(Oom, MessageCountersAndNothingLost) {
  TestAllocator t;
  t.raw->set_cap(4 * MiB);
  // PyTorch's format_size prints sizes up to 1 MiB in KiB: 1 MiB is "1024.00 KiB"
  DataPtr a = t.get(1 * MiB);  // a 2 MiB small segment, 1 MiB of it free (split)
  std::memset(a.get(), 0x5a, 1 * MiB);
  const auto before = t.stats();
  try {
    DataPtr b = t.get(1 * MiB + 512 * KiB);  // needs a 20 MiB large segment
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "CPU out of memory. Tried to allocate 20.00 MiB. CPU 0 has a total capacity of 4.00 MiB of which "
              "2.00 MiB is free. Of the allocated memory 1024.00 KiB is allocated by graft, and 1024.00 KiB is "
              "reserved by graft but unallocated. If reserved but unallocated memory is large try setting "
              "GRAFT_ALLOC_CONF=max_split_size_mb:<MB> to avoid fragmentation.  See documentation for Memory "
              "Management  (docs/memory.md)");
  }
  // an OutOfMemoryError is a RuntimeError, as torch.OutOfMemoryError
  EXPECT_THROW(t.get(30 * MiB), RuntimeError);
  auto after = t.stats();
  EXPECT_EQ(after.at("num_ooms"), 2);
  EXPECT_EQ(after.at("num_alloc_retries"), 2);  // each OOM came after one full retry
  EXPECT_EQ(after.at("num_sync_all_streams"), 2);
  // everything else is as it was: the failed calls changed no block and no segment
  for (const char* k : {"num_ooms", "num_alloc_retries", "num_sync_all_streams"}) after[k] = before.at(k);
  expect_stats(after, before);
  // the live block is intact and the allocator keeps working
  auto* bytes = static_cast<unsigned char*>(a.get());
  EXPECT_EQ(bytes[0], 0x5a);
  EXPECT_EQ(bytes[1 * MiB - 1], 0x5a);
  DataPtr c = t.get(512 * KiB);  // fits in the small segment's free half
  EXPECT_NE(c.get(), nullptr);
  EXPECT_EQ(t.stat("segment.all.current"), 1);
}

TEST(Oom, ByteLimitShowsAllowed) {
  TestAllocator t;
  t.a->set_memory_limit(3 * MiB);
  DataPtr a = t.get(100);
  try {
    DataPtr b = t.get(2 * MiB);  // a 20 MiB segment would pass the 3 MiB cap
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Tried to allocate 20.00 MiB. "), std::string::npos) << m;
    EXPECT_NE(m.find(" is free. 3.00 MiB allowed; Of the allocated memory 512 bytes is allocated by graft, and "
                     "2.00 MiB is reserved by graft but unallocated."),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(t.raw->failed_calls(), 0);  // the cap refused it before the raw allocator was asked
  t.a->set_memory_limit(std::nullopt);
  DataPtr b = t.get(2 * MiB);
  EXPECT_EQ(t.stat("num_ooms"), 1);
}

TEST(Oom, FractionOfTotal) {
  TestAllocator t;
  t.raw->set_cap(40 * MiB);  // the test raw allocator reports its cap as total memory
  t.a->set_memory_fraction(0.5);
  EXPECT_EQ(t.a->memory_limit(), std::optional<size_t>(20 * MiB));
  DataPtr a = t.get(9 * MiB);                   // one 20 MiB segment: exactly the cap
  EXPECT_THROW(t.get(1000), OutOfMemoryError);  // a 2 MiB small segment passes it
  EXPECT_THROW_MSG(t.a->set_memory_fraction(1.5), ValueError, "Invalid fraction value: 1.5. Allowed range: 0~1");
  EXPECT_THROW_MSG(t.a->set_memory_fraction(-0.1), ValueError, "Invalid fraction value: -0.1. Allowed range: 0~1");
  EXPECT_EQ(t.a->memory_limit(), std::optional<size_t>(20 * MiB));  // unchanged by the bad calls
}

TEST(Oom, HugeRequestIsAnOomNotACrash) {
  TestAllocator t;
  EXPECT_THROW(t.get(size_t{1} << 60), OutOfMemoryError);
  EXPECT_EQ(t.stat("num_ooms"), 1);
  EXPECT_EQ(t.allocated(), 0);
}

TEST(Oom, MallocBackendRaisesTheSameError) {
  TestAllocator t("backend:malloc");
  t.raw->fail_always();
  EXPECT_THROW(t.get(100), OutOfMemoryError);
  EXPECT_EQ(t.stat("num_ooms"), 1);
  t.raw->allow_all();
  DataPtr p = t.get(100);
  EXPECT_EQ(t.allocated(), 100);
}

TEST(Config, ParsesPyTorchFormat) {
  auto c = alloc::AllocatorConfig::parse(
      " max_split_size_mb : 64 , garbage_collection_threshold:0.6,roundup_power2_divisions:2,"
      "expandable_segments:False,backend:native");
  EXPECT_EQ(c.max_split_size, 64 * MiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  EXPECT_EQ(c.roundup_power2_divisions[5], 2u);
  EXPECT_EQ(c.backend, alloc::Backend::Native);
  EXPECT_EQ(alloc::AllocatorConfig::parse("backend:malloc").backend, alloc::Backend::Malloc);
  EXPECT_EQ(alloc::AllocatorConfig::parse("").max_split_size, std::numeric_limits<size_t>::max());
}

TEST(Config, PyTorchErrorTexts) {
  using alloc::AllocatorConfig;
  EXPECT_THROW_MSG(AllocatorConfig::parse("foo:1"), RuntimeError, "Unrecognized CachingAllocator option: foo");
  EXPECT_THROW_MSG(AllocatorConfig::parse("backend:cudaMallocAsync"), ValueError,
                   "Unknown allocator backend, options are native and malloc");
  EXPECT_THROW_MSG(AllocatorConfig::parse("max_split_size_mb:19"), ValueError,
                   "CachingAllocator option max_split_size_mb too small, must be >= 20");
  EXPECT_THROW_MSG(AllocatorConfig::parse("max_non_split_rounding_mb:1"), ValueError,
                   "CachingAllocator option max_non_split_rounding_mb too small, must be >= 20");
  EXPECT_THROW_MSG(AllocatorConfig::parse("garbage_collection_threshold:1.0"), ValueError,
                   "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  EXPECT_THROW_MSG(AllocatorConfig::parse("garbage_collection_threshold:0"), ValueError,
                   "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
  EXPECT_THROW_MSG(AllocatorConfig::parse("expandable_segments:yes"), ValueError,
                   "Expected a single True/False argument for expandable_segments");
  EXPECT_THROW_MSG(AllocatorConfig::parse("roundup_power2_divisions:3"), ValueError,
                   "For roundups, the divisons has to be power of 2");
  EXPECT_THROW_MSG(AllocatorConfig::parse("roundup_power2_divisions:[256:3]"), ValueError,
                   "For roundups, the divisons has to be power of 2 or 0 to disable roundup");
  EXPECT_THROW_MSG(AllocatorConfig::parse("roundup_power2_divisions:[100:2]"), ValueError,
                   "For roundups, the intervals have to be power of 2");
  EXPECT_THROW_MSG(AllocatorConfig::parse("max_split_size_mb"), RuntimeError,
                   "Error parsing CachingAllocator settings, expected :");
  EXPECT_THROW_MSG(AllocatorConfig::parse("max_split_size_mb:abc"), ValueError,
                   "Error parsing CachingAllocator settings, expected a non-negative integer for max_split_size_mb, "
                   "got 'abc'");
  EXPECT_THROW(AllocatorConfig::parse("expandable_segments:True"), NotImplementedError);
}

TEST(Config, RuntimeUpdateKeepsSettingsOnBadInput) {
  TestAllocator t;
  t.a->update_config("max_split_size_mb:40");
  EXPECT_EQ(t.stat("max_split_size"), static_cast<int64_t>(40 * MiB));
  t.a->update_config("garbage_collection_threshold:0.5");  // as PyTorch: a parse resets the split size
  EXPECT_EQ(t.stat("max_split_size"), -1);
  t.a->update_config("max_split_size_mb:40");
  EXPECT_THROW(t.a->update_config("max_split_size_mb:60,bogus:1"), RuntimeError);
  EXPECT_EQ(t.a->config().max_split_size, 40 * MiB);  // the bad string changed nothing
  DataPtr p = t.get(10);
  EXPECT_THROW_HAS(t.a->update_config("backend:malloc"), RuntimeError, "backend cannot be changed");
  EXPECT_EQ(t.a->config().backend, alloc::Backend::Native);
}

}  // namespace
}  // namespace graft::testing
