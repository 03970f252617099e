// Test main: after every test, every handle has been dropped, so the CPU and meta caching
// allocators must be back where they started. A test that leaks fails here.
#include <gtest/gtest.h>

#include "graft/graft.h"

namespace {
class ZeroLiveBytes : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    start_ = graft::memory_allocated();
    meta_start_ = graft::memory_allocated(graft::kMeta);
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const int64_t meta_now = graft::memory_allocated(graft::kMeta);
    if (meta_now != meta_start_)
      ADD_FAILURE() << info.test_suite_name() << "." << info.name() << " leaked: " << (meta_now - meta_start_)
                    << " bytes still allocated on the meta device after the test";
    const int64_t now = graft::memory_allocated();
    if (now != start_)
      ADD_FAILURE() << info.test_suite_name() << "." << info.name() << " leaked: " << (now - start_)
                    << " bytes still allocated after the test (" << graft::memory_stats().at("allocation.all.current")
                    << " live allocations)";
  }
  int64_t start_ = 0, meta_start_ = 0;
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new ZeroLiveBytes);
  return RUN_ALL_TESTS();
}
