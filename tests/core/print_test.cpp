// Printing matches PyTorch 2.x's repr (torch/_tensor_str.py), with "graft." for "torch.".
#include <cmath>

#include "support/test_util.h"

using namespace graft;

TEST(Print, FloatVectors) {
  EXPECT_EQ(tensor({1.0, 2.0, 3.0}).str(), "tensor([1., 2., 3.])");
  EXPECT_EQ(tensor({1.5, 2.25}).str(), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(tensor({-1.0, 2.0}).str(), "tensor([-1.,  2.])");
  EXPECT_EQ(tensor({0.0, 0.0}).str(), "tensor([0., 0.])");
  EXPECT_EQ(tensor({0.1, -12.345}).str(), "tensor([  0.1000, -12.3450])");
  EXPECT_EQ(tensor({1.0, 2.0}, kFloat64).str(), "tensor([1., 2.], dtype=graft.float64)");
  std::ostringstream os;
  os << tensor({0.5});
  EXPECT_EQ(os.str(), "tensor([0.5000])");
}

TEST(Print, TwoDimensionalAligned) {
  EXPECT_EQ(arange(6.0).view({2, 3}).str(), "tensor([[0., 1., 2.],\n        [3., 4., 5.]])");
  EXPECT_EQ(tensor({1.5, -10.25, 100.0, 2.0}).view({2, 2}).str(),
            "tensor([[  1.5000, -10.2500],\n        [100.0000,   2.0000]])");
  EXPECT_EQ(arange(8.0).view({2, 2, 2}).str(),
            "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
  // non-contiguous views print in logical order
  EXPECT_EQ(arange(6).view({2, 3}).t().str(), "tensor([[0, 3],\n        [1, 4],\n        [2, 5]])");
}

TEST(Print, IntegerAndBool) {
  EXPECT_EQ(arange(3).str(), "tensor([0, 1, 2])");
  EXPECT_EQ(tensor(std::vector<int64_t>{-1, 10, 100}).str(), "tensor([ -1,  10, 100])");
  EXPECT_EQ(tensor(std::vector<int32_t>{1, 2}).str(), "tensor([1, 2], dtype=graft.int32)");
  EXPECT_EQ((arange(3) > 0).str(), "tensor([False,  True,  True])");
  EXPECT_EQ(ones({2}, kBool).str(), "tensor([True, True])");
  EXPECT_EQ(scalar_tensor(true).str(), "tensor(True)");
}

TEST(Print, ZeroDimAndEmpty) {
  EXPECT_EQ(scalar_tensor(3.0).str(), "tensor(3.)");
  EXPECT_EQ(scalar_tensor(3).str(), "tensor(3)");
  EXPECT_EQ(scalar_tensor(-2.5, kFloat64).str(), "tensor(-2.5000, dtype=graft.float64)");
  EXPECT_EQ(scalar_tensor(7, kInt32).str(), "tensor(7, dtype=graft.int32)");
  EXPECT_EQ(tensor(std::vector<double>{}).str(), "tensor([])");
  EXPECT_EQ(zeros({0, 3}).str(), "tensor([], size=(0, 3))");
  // an empty tensor shows every non-default dtype, int64 and bool included
  EXPECT_EQ(zeros({0}, kInt64).str(), "tensor([], dtype=graft.int64)");
  EXPECT_EQ(zeros({0}, kBool).str(), "tensor([], dtype=graft.bool)");
  EXPECT_EQ(zeros({2, 0}, kInt32).str(), "tensor([], size=(2, 0), dtype=graft.int32)");
}

TEST(Print, ScientificNotation) {
  EXPECT_EQ(tensor({1e-5, 1e3}).str(), "tensor([1.0000e-05, 1.0000e+03])");
  EXPECT_EQ(tensor({1e-5}).str(), "tensor([1.0000e-05])");
  EXPECT_EQ(tensor({1e9}).str(), "tensor([1.0000e+09])");
  EXPECT_EQ(tensor({1.5e9, 1.0}).str(), "tensor([1.5000e+09, 1.0000e+00])");
  // integer-valued floats with a range over 1000 also switch to scientific
  EXPECT_EQ(tensor({1.0, 10000.0}).str(), "tensor([1.0000e+00, 1.0000e+04])");
  EXPECT_EQ(tensor({1.0, 1000.0}).str(), "tensor([   1., 1000.])");
  EXPECT_EQ(tensor({0.0, 1e-5, -2.0}).str(), "tensor([ 0.0000e+00,  1.0000e-05, -2.0000e+00])");
}

TEST(Print, NonFinite) {
  // the width comes from the finite non-zero values only
  EXPECT_EQ(tensor({1.0, INFINITY}).str(), "tensor([1., inf])");
  EXPECT_EQ(tensor({-INFINITY, 1.0}).str(), "tensor([-inf, 1.])");
  EXPECT_EQ(tensor({NAN, 1.5}).str(), "tensor([   nan, 1.5000])");
  EXPECT_EQ(tensor({-INFINITY, 2.5}).str(), "tensor([  -inf, 2.5000])");
  EXPECT_EQ(tensor({0.0, NAN}).str(), "tensor([0., nan])");
  EXPECT_EQ(tensor({NAN}).str(), "tensor([nan])");
}

TEST(Print, LineWrapping) {
  EXPECT_EQ(arange(20.0).str(),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19.])");
  EXPECT_EQ(arange(30).view({1, 30}).str(),
            "tensor([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "         18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]])");
}

TEST(Print, Summarization) {
  EXPECT_EQ(arange(1000).str().find("..."), std::string::npos);  // threshold is > 1000
  EXPECT_EQ(arange(1001).str(), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  EXPECT_EQ(arange(2000.0).str(),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(ones({40, 40}).str(),
            "tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        ...,\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.]])");
  // only the shown edges decide the format: the middle 1e6 does not force scientific
  Tensor t = ones({1001});
  t.select(0, 500).fill_(1e6);
  EXPECT_EQ(t.str(), "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}

TEST(Print, AutogradSuffixes) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  EXPECT_EQ(x.str(), "tensor([1., 2.], requires_grad=True)");
  EXPECT_EQ((x * 2).str(), "tensor([2., 4.], grad_fn=<MulBackward0>)");
  EXPECT_EQ((x * x).sum().str(), "tensor(5., grad_fn=<SumBackward0>)");
  Tensor d = tensor({1.0, 2.0}, TensorOptions(kFloat64).requires_grad());
  EXPECT_EQ(d.str(), "tensor([1., 2.], dtype=graft.float64, requires_grad=True)");
  EXPECT_EQ(x.detach().str(), "tensor([1., 2.])");
  EXPECT_EQ(scalar_tensor(2.0, requires_grad()).str(), "tensor(2., requires_grad=True)");
  // suffixes that would pass 80 columns go on a new line indented like the data
  Tensor w = linspace(0, 1, 8, TensorOptions(kFloat64).requires_grad());
  EXPECT_EQ(w.str(),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000],\n"
            "       dtype=graft.float64, requires_grad=True)");
}

TEST(Print, LargeInt64PrintsExactly) {
  Tensor t = tensor(std::vector<int64_t>{9007199254740993LL, -1});     // 2^53 + 1
  EXPECT_EQ(t.str(), "tensor([9007199254740993,               -1])");  // -1 padded to width 16
}
