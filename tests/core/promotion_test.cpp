// Broadcasting and type promotion as in PyTorch (torch.result_type rules).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(Promotion, TensorAndPythonScalar) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  Tensor r = i + 2.5;
  EXPECT_EQ(r.dtype(), kFloat32);
  expect_tensor(r, {2}, {3.5, 4.5});
  EXPECT_EQ((i + 2).dtype(), kInt64);
  EXPECT_EQ((i * 2).dtype(), kInt64);
  Tensor i32 = tensor(std::vector<int32_t>{1, 2});
  EXPECT_EQ((i32 + 5).dtype(), kInt32);  // a Python int does not widen int32
  EXPECT_EQ((i32 * 1.5).dtype(), kFloat32);
  Tensor b = ones({2}, kBool);
  EXPECT_EQ((b + 1).dtype(), kInt64);
  EXPECT_EQ((b + 1.0).dtype(), kFloat32);
  EXPECT_EQ((b + true).dtype(), kBool);
  Tensor d = ones({2}, kFloat64);
  EXPECT_EQ((d + 1.5).dtype(), kFloat64);
  EXPECT_EQ((ones({2}) * 3).dtype(), kFloat32);
  EXPECT_EQ((2.5 - i).dtype(), kFloat32);
  expect_tensor(2.5 - i, {2}, {1.5, 0.5});
  EXPECT_EQ((1 / i).dtype(), kFloat32);
  expect_tensor(1 / i, {2}, {1.0, 0.5});
  // comparisons give bool whatever the operands
  Tensor c = i > 1.5;
  EXPECT_EQ(c.dtype(), kBool);
  expect_tensor(c, {2}, {0, 1});
}

TEST(Promotion, ZeroDimTensors) {
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  // a 0-d tensor of a higher category wins, keeping its own dtype
  Tensor r = i + scalar_tensor(0.5, kFloat64);
  EXPECT_EQ(r.dtype(), kFloat64);
  expect_tensor(r, {2}, {1.5, 2.5});
  EXPECT_EQ((i + scalar_tensor(0.5)).dtype(), kFloat32);
  // same category: the dimensioned tensor wins
  Tensor f = tensor({1.0, 2.0});
  EXPECT_EQ((f + scalar_tensor(1.0, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((tensor(std::vector<int32_t>{1}) + scalar_tensor(1)).dtype(), kInt32);
  // 1-d tensors always participate fully
  EXPECT_EQ((f + ones({1}, kFloat64)).dtype(), kFloat64);
  // bool dimensioned + 0-d int32: promote
  EXPECT_EQ((ones({2}, kBool) + scalar_tensor(1, kInt32)).dtype(), kInt32);
  // two 0-d tensors: ordinary promotion
  EXPECT_EQ((scalar_tensor(1, kInt32) + scalar_tensor(1.0, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((scalar_tensor(1, kInt32) + 2.5).dtype(), kFloat32);
  EXPECT_EQ((scalar_tensor(1, kInt32) + 2).dtype(), kInt32);
}

TEST(Promotion, TensorTensor) {
  Tensor b = tensor(std::vector<int32_t>{1, 0}).to(kBool);
  Tensor bb = b + b;
  EXPECT_EQ(bb.dtype(), kBool);
  expect_tensor(bb, {2}, {1, 0});
  expect_tensor(b * b, {2}, {1, 0});
  Tensor i32 = tensor(std::vector<int32_t>{1, 2}), i64 = tensor(std::vector<int64_t>{3, 4});
  EXPECT_EQ((i32 + i64).dtype(), kInt64);
  expect_tensor(i32 + i64, {2}, {4, 6});
  EXPECT_EQ((i32 * tensor({1.0, 1.0})).dtype(), kFloat32);
  EXPECT_EQ((tensor({1.0}) + ones({1}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((b + i32).dtype(), kInt32);
  // true division of integers is float32
  Tensor q = div(tensor(std::vector<int64_t>{1, 3}), tensor(std::vector<int64_t>{2, 2}));
  EXPECT_EQ(q.dtype(), kFloat32);
  expect_tensor(q, {2}, {0.5, 1.5});
  EXPECT_EQ((tensor(std::vector<int64_t>{7}) / 2).dtype(), kFloat32);
  EXPECT_EQ((ones({1}, kFloat64) / tensor(std::vector<int64_t>{2})).dtype(), kFloat64);
  EXPECT_EQ(div(b, b).dtype(), kFloat32);
  // unary float ops on ints give float32
  EXPECT_EQ(exp(tensor(std::vector<int64_t>{0})).dtype(), kFloat32);
  EXPECT_EQ(neg(i32).dtype(), kInt32);
  EXPECT_EQ(where(b, i32, i64).dtype(), kInt64);
  EXPECT_EQ(where(b, i32, 2.5).dtype(), kFloat32);
  EXPECT_EQ(maximum(i32, tensor({0.5, 0.5})).dtype(), kFloat32);
  EXPECT_EQ(cat({i32, i64}).dtype(), kInt64);
}

TEST(Broadcasting, Shapes) {
  Tensor a = arange(3.0).view({3, 1});
  Tensor b = arange(4.0);
  Tensor c = a + b;
  EXPECT_EQ(c.sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(c.to_vector<float>()[5], 2.0f);  // row 1, col 1
  EXPECT_EQ((zeros({2, 1, 3}) * zeros({4, 1})).sizes().vec(), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ((zeros({5, 0}) + zeros({1})).sizes().vec(), (std::vector<int64_t>{5, 0}));
  EXPECT_EQ((zeros({}) + zeros({2, 2})).sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((zeros({1, 0}) + zeros({3, 1})).sizes().vec(), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(where(zeros({2, 1}, kBool), zeros({3}), zeros({1, 1, 1})).sizes().vec(), (std::vector<int64_t>{1, 2, 3}));
  // broadcasting into non-contiguous operands
  Tensor t = arange(6.0).view({2, 3}).t();  // 3x2
  expect_tensor(t + tensor({10.0, 20.0}), {3, 2}, {10, 23, 11, 24, 12, 25});
}

// PyTorch's text word for word (torch 1.13): it names neither the op nor the shapes.
TEST(Broadcasting, ErrorsArePyTorchsText) {
  EXPECT_THROW_MSG(zeros({2, 3}) + zeros({4}), RuntimeError,
                   "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
  EXPECT_THROW_MSG(mul(zeros({2, 3}), zeros({3, 3})), RuntimeError,
                   "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  EXPECT_THROW_MSG(where(ones({2}, kBool), zeros({3}), zeros({3})), RuntimeError,
                   "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
  EXPECT_THROW_MSG(zeros({0}) + zeros({2}), RuntimeError,
                   "The size of tensor a (0) must match the size of tensor b (2) at non-singleton dimension 0");
}
