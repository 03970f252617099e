// TensorDataset: rows of tensors sharing dim 0, PyTorch's size-mismatch and index errors.
#include "graft/data/data.h"
#include "support/test_util.h"

using namespace graft;
using namespace graft::data;
using graft::testing::expect_tensor;

TEST(TensorDataset, GetReturnsRowIOfEveryTensor) {
  TensorDataset ds({arange(12, kFloat32).reshape({4, 3}), arange(4, kInt64) * 10});
  EXPECT_EQ(ds.size(), 4);
  Sample s = ds.get(2);
  ASSERT_EQ(s.size(), 2u);
  expect_tensor(s[0], {3}, {6, 7, 8});
  expect_tensor(s[1], {}, {20});
  EXPECT_EQ(s[1].dtype(), kInt64);
  // Rows are views of the dataset's tensors, as tensor[i] is in PyTorch.
  EXPECT_EQ(s[0].data_ptr(), static_cast<char*>(ds.tensors()[0].data_ptr()) + 6 * sizeof(float));
}

TEST(TensorDataset, NegativeIndexCountsFromTheEnd) {
  TensorDataset ds({arange(5, kInt64)});
  EXPECT_EQ(ds.get(-1)[0].item<int64_t>(), 4);
  EXPECT_EQ(ds.get(-5)[0].item<int64_t>(), 0);
}

TEST(TensorDataset, OutOfRangeIndexNamesIndexAndSize) {
  TensorDataset ds({zeros({10, 2}), zeros({10})});
  EXPECT_THROW_MSG(ds.get(10), IndexError, "index 10 is out of bounds for dimension 0 with size 10");
  EXPECT_THROW_MSG(ds.get(-11), IndexError, "index -11 is out of bounds for dimension 0 with size 10");
  EXPECT_THROW_MSG(ds.get(1000), IndexError, "index 1000 is out of bounds for dimension 0 with size 10");
}

TEST(TensorDataset, SizeMismatchIsPyTorchsError) {
  EXPECT_THROW_MSG(TensorDataset({zeros({4, 2}), zeros({5})}), ValueError, "Size mismatch between tensors");
  EXPECT_THROW_MSG(TensorDataset({zeros({4}), zeros({4}), zeros({3, 4})}), ValueError, "Size mismatch between tensors");
}

TEST(TensorDataset, RejectsEmptyUndefinedAndZeroDimInputs) {
  EXPECT_THROW_MSG(TensorDataset({}), ValueError, "TensorDataset: expected at least one tensor");
  EXPECT_THROW_MSG(TensorDataset({zeros({2}), Tensor()}), ValueError, "TensorDataset: tensor 1 is undefined");
  EXPECT_THROW_HAS(TensorDataset({zeros({2}), scalar_tensor(1.0)}), ValueError, "tensor 1 is 0-dimensional");
}
