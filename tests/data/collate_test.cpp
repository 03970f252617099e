// default_collate: stack each field along a new dim 0; ragged sizes raise stack's error.
#include "graft/data/data.h"
#include "support/test_util.h"

using namespace graft;
using namespace graft::data;
using graft::testing::expect_tensor;

TEST(DefaultCollate, StacksEachFieldAlongANewDimZero) {
  std::vector<Sample> samples = {{tensor({1.0, 2.0}), scalar_tensor(int64_t{7}, kInt64)},
                                 {tensor({3.0, 4.0}), scalar_tensor(int64_t{8}, kInt64)},
                                 {tensor({5.0, 6.0}), scalar_tensor(int64_t{9}, kInt64)}};
  Batch b = default_collate(samples);
  ASSERT_EQ(b.size(), 2u);
  expect_tensor(b[0], {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor(b[1], {3}, {7, 8, 9});
  EXPECT_EQ(b[0].dtype(), kFloat32);
  EXPECT_EQ(b[1].dtype(), kInt64);
}

TEST(DefaultCollate, RaggedSizesRaiseStacksError) {
  std::vector<Sample> samples = {{zeros({1})}, {zeros({2})}};
  EXPECT_THROW_MSG(default_collate(samples), RuntimeError,
                   "stack expects each tensor to be equal size, but got [1] at entry 0 and [2] at entry 1");
}

TEST(DefaultCollate, DifferentFieldCountsRaiseAClearError) {
  std::vector<Sample> samples = {{zeros({1}), zeros({1})}, {zeros({1}), zeros({1})}, {zeros({1})}};
  EXPECT_THROW_MSG(default_collate(samples), RuntimeError,
                   "each element in list of batch should be of equal size (example 0 has 2 fields, example 2 has 1)");
  EXPECT_THROW_HAS(default_collate({}), ValueError, "empty list");
}

TEST(DefaultCollate, RequiresGradPropagatesThroughStack) {
  Tensor w = ones({2}, requires_grad());
  Batch b = default_collate({{w * 2}, {w * 3}});
  ASSERT_TRUE(b[0].requires_grad());
  b[0].sum().backward();
  graft::testing::expect_tensor(w.grad(), {2}, {5, 5});
}
