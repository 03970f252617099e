// Samplers: one epoch of indices per call; seeded RandomSampler is reproducible and reshuffles
// every epoch; unseeded it follows graft::manual_seed; BatchSampler groups and drops.
#include <algorithm>
#include <numeric>

#include "graft/data/data.h"
#include "support/test_util.h"

using namespace graft;
using namespace graft::data;

namespace {
std::vector<int64_t> iota_vec(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}
bool is_permutation_of_range(std::vector<int64_t> v, int64_t n) {
  std::sort(v.begin(), v.end());
  return v == iota_vec(n);
}
}  // namespace

TEST(SequentialSampler, YieldsZeroToNMinusOneEveryEpoch) {
  SequentialSampler s(5);
  EXPECT_EQ(s.size(), 5);
  EXPECT_EQ(s.next_epoch(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.next_epoch(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(SequentialSampler(0).next_epoch().empty());
  EXPECT_THROW_HAS(SequentialSampler(-1), ValueError, "size=-1");
}

TEST(RandomSampler, SameSeedSameEpochsAndEachEpochReshuffles) {
  RandomSampler a(50, false, std::nullopt, 123), b(50, false, std::nullopt, 123);
  const auto a1 = a.next_epoch(), a2 = a.next_epoch();
  EXPECT_EQ(a1, b.next_epoch());
  EXPECT_EQ(a2, b.next_epoch());
  EXPECT_NE(a1, a2);  // a new order every epoch
  EXPECT_NE(a1, iota_vec(50));
  EXPECT_TRUE(is_permutation_of_range(a1, 50));
  EXPECT_TRUE(is_permutation_of_range(a2, 50));
  RandomSampler c(50, false, std::nullopt, 124);
  EXPECT_NE(c.next_epoch(), a1);
}

TEST(RandomSampler, UnseededFollowsManualSeed) {
  RandomSampler s(40);
  manual_seed(7);
  const auto e1 = s.next_epoch(), e2 = s.next_epoch();
  EXPECT_NE(e1, e2);
  manual_seed(7);
  RandomSampler fresh(40);
  EXPECT_EQ(fresh.next_epoch(), e1);
  EXPECT_EQ(fresh.next_epoch(), e2);
  manual_seed(8);
  EXPECT_NE(s.next_epoch(), e1);
}

TEST(RandomSampler, NumSamplesBeyondSizeGivesWholePermutationsThenAPart) {
  RandomSampler s(4, false, 10, 1);
  EXPECT_EQ(s.size(), 10);
  const auto e = s.next_epoch();
  ASSERT_EQ(e.size(), 10u);
  EXPECT_TRUE(is_permutation_of_range({e.begin(), e.begin() + 4}, 4));
  EXPECT_TRUE(is_permutation_of_range({e.begin() + 4, e.begin() + 8}, 4));
  for (int64_t i : e) EXPECT_TRUE(i >= 0 && i < 4);
  RandomSampler fewer(6, false, 3, 1);
  const auto f = fewer.next_epoch();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(std::set<int64_t>(f.begin(), f.end()).size(), 3u);  // no repeats without replacement
}

TEST(RandomSampler, WithReplacementDrawsNumSamplesInRange) {
  RandomSampler s(3, true, 300, 5);
  const auto e = s.next_epoch();
  ASSERT_EQ(e.size(), 300u);
  std::vector<int> seen(3, 0);
  for (int64_t i : e) {
    ASSERT_TRUE(i >= 0 && i < 3) << i;
    ++seen[static_cast<size_t>(i)];
  }
  for (int k : seen) EXPECT_GT(k, 50);  // every value drawn, roughly uniformly (expected 100)
  EXPECT_TRUE(s.replacement());
}

TEST(RandomSampler, BadNumSamplesIsPyTorchsError) {
  EXPECT_THROW_MSG(RandomSampler(0), ValueError,
                   "num_samples should be a positive integer value, but got num_samples=0");
  EXPECT_THROW_MSG(RandomSampler(5, true, -2), ValueError,
                   "num_samples should be a positive integer value, but got num_samples=-2");
  EXPECT_THROW_HAS(RandomSampler(0, true, 4), ValueError, "empty data source");
}

TEST(BatchSampler, GroupsInOrderAndDropsTheShortLastBatch) {
  auto seq = std::make_shared<SequentialSampler>(10);
  BatchSampler keep(seq, 4, false), drop(seq, 4, true);
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  EXPECT_EQ(keep.next_epoch(), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(drop.next_epoch(), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  BatchSampler exact(std::make_shared<SequentialSampler>(8), 4, true);
  EXPECT_EQ(exact.size(), 2);
  EXPECT_EQ(exact.next_epoch().size(), 2u);
  EXPECT_EQ(BatchSampler(std::make_shared<SequentialSampler>(0), 3, false).size(), 0);
}

TEST(BatchSampler, BadArgumentsArePyTorchsErrors) {
  auto seq = std::make_shared<SequentialSampler>(3);
  EXPECT_THROW_MSG(BatchSampler(seq, 0, false), ValueError,
                   "batch_size should be a positive integer value, but got batch_size=0");
  EXPECT_THROW_MSG(BatchSampler(seq, -4, false), ValueError,
                   "batch_size should be a positive integer value, but got batch_size=-4");
  EXPECT_THROW_MSG(BatchSampler(nullptr, 2, false), ValueError, "BatchSampler: sampler is null");
}
