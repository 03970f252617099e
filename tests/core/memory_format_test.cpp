// Memory formats: the stride rules (PyTorch's channels-last strides, is_contiguous per format,
// is_non_overlapping_and_dense, infer_dense_strides) and what clone and contiguous make of them;
// var and std's correction and unbiased overloads in C++.
#include "support/test_util.h"

using namespace graft;

namespace {
using V = std::vector<int64_t>;
V vec(const Shape& s) { return V(s.begin(), s.end()); }
}  // namespace

TEST(MemoryFormat, NamesAsPython) {
  EXPECT_STREQ(memory_format_name(MemoryFormat::Contiguous), "contiguous_format");
  EXPECT_STREQ(memory_format_name(MemoryFormat::Preserve), "preserve_format");
  EXPECT_STREQ(memory_format_name(MemoryFormat::ChannelsLast), "channels_last");
  EXPECT_STREQ(memory_format_name(MemoryFormat::ChannelsLast3d), "channels_last_3d");
}

TEST(MemoryFormat, StridesOfEachFormat) {
  EXPECT_EQ(vec(strides_for_memory_format({2, 3, 4, 5}, MemoryFormat::Contiguous)), (V{60, 20, 5, 1}));
  EXPECT_EQ(vec(strides_for_memory_format({2, 3, 4, 5}, MemoryFormat::ChannelsLast)), (V{60, 1, 15, 3}));
  EXPECT_EQ(vec(strides_for_memory_format({2, 3, 1, 1}, MemoryFormat::ChannelsLast)), (V{3, 1, 3, 3}));
  EXPECT_EQ(vec(strides_for_memory_format({0, 3, 0, 5}, MemoryFormat::ChannelsLast)), (V{0, 1, 15, 3}));
  EXPECT_EQ(vec(strides_for_memory_format({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d)), (V{360, 1, 90, 18, 3}));
  EXPECT_THROW_HAS(strides_for_memory_format({3, 4}, MemoryFormat::ChannelsLast), RuntimeError,
                   "required rank 4 tensor to use channels_last format");
  EXPECT_THROW_HAS(strides_for_memory_format({3, 4}, MemoryFormat::ChannelsLast3d), RuntimeError,
                   "required rank 5 tensor to use channels_last_3d format");
}

TEST(MemoryFormat, ContiguityPerFormat) {
  EXPECT_TRUE(is_contiguous_as({2, 3, 4, 5}, {60, 1, 15, 3}, MemoryFormat::ChannelsLast));
  EXPECT_FALSE(is_contiguous_as({2, 3, 4, 5}, {60, 1, 15, 3}, MemoryFormat::Contiguous));
  EXPECT_FALSE(is_contiguous_as({2, 3, 4, 5}, {60, 20, 5, 1}, MemoryFormat::ChannelsLast));
  // size-1 dims' strides do not count: NC11 is both
  EXPECT_TRUE(is_contiguous_as({2, 3, 1, 1}, {3, 1, 1, 1}, MemoryFormat::ChannelsLast));
  EXPECT_TRUE(is_contiguous_as({2, 3, 1, 1}, {3, 1, 1, 1}, MemoryFormat::Contiguous));
  EXPECT_FALSE(is_contiguous_as({3, 4}, {4, 1}, MemoryFormat::ChannelsLast));  // the wrong rank
  EXPECT_TRUE(is_contiguous_as({0, 3}, {1, 7}, MemoryFormat::Contiguous));     // empty
  EXPECT_TRUE(is_contiguous_as({3, 4}, {4, 1}, MemoryFormat::Preserve));       // Preserve asks for row-major
}

TEST(MemoryFormat, DenseAndInferredStrides) {
  EXPECT_TRUE(is_non_overlapping_and_dense({4, 3}, {1, 4}));
  EXPECT_FALSE(is_non_overlapping_and_dense({2, 4}, {8, 1}));  // gaps
  EXPECT_FALSE(is_non_overlapping_and_dense({3, 4}, {1, 0}));  // overlap
  EXPECT_TRUE(is_non_overlapping_and_dense({4, 1}, {1, 4}));   // a size-1 dim's stride is free
  // PyTorch's examples: a stride-0 dim keeps its row-major place, equal strides put the smaller size first
  EXPECT_EQ(vec(infer_dense_strides({6, 5, 4, 3, 2}, {6, 0, 120, 0, 1})), (V{6, 36, 180, 2, 1}));
  EXPECT_EQ(vec(infer_dense_strides({3, 4}, {1, 0})), (V{4, 1}));
  EXPECT_EQ(vec(infer_dense_strides({4, 2}, {1, 8})), (V{1, 4}));
  EXPECT_EQ(vec(infer_dense_strides({2, 4, 3, 2}, {120, 5, 1, 40})), (V{24, 3, 1, 12}));
}

TEST(MemoryFormat, ClonePreservesLayoutByDefault) {
  Tensor t = arange(12.0).view({3, 4}).t();
  Tensor c = t.clone();
  EXPECT_EQ(c.strides().vec(), (V{1, 4}));
  EXPECT_EQ(c.to_vector<float>(), t.contiguous().to_vector<float>());
  EXPECT_NE(c.data_ptr(), t.data_ptr());
  EXPECT_EQ(t.clone(MemoryFormat::Contiguous).strides().vec(), (V{3, 1}));
  Tensor gaps = arange(16.0).view({4, 4}).slice(0, 0, 4, 2).t();  // sizes 4,2 strides 1,8
  EXPECT_EQ(gaps.clone().strides().vec(), (V{1, 4}));
  Tensor x = arange(120.0).view({2, 3, 4, 5});
  Tensor cl = x.clone(MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.strides().vec(), (V{60, 1, 15, 3}));
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(cl.to_vector<float>(), x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2}).to_vector<float>());
}

TEST(MemoryFormat, ContiguousReturnsSelfOrACopyInTheFormat) {
  Tensor x = arange(120.0).view({2, 3, 4, 5});
  EXPECT_EQ(x.contiguous().data_ptr(), x.data_ptr());
  Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_NE(cl.data_ptr(), x.data_ptr());
  EXPECT_EQ(cl.contiguous(MemoryFormat::ChannelsLast).data_ptr(), cl.data_ptr());
  EXPECT_EQ(cl.contiguous().strides().vec(), (V{60, 20, 5, 1}));
  EXPECT_THROW_HAS(cl.contiguous(MemoryFormat::Preserve), RuntimeError,
                   "preserve memory format is unsupported by the contiguous operator");
  EXPECT_EQ(x.contiguous(MemoryFormat::Preserve).data_ptr(), x.data_ptr());  // already contiguous: as PyTorch
  EXPECT_THROW_HAS(arange(4.0).contiguous(MemoryFormat::ChannelsLast), RuntimeError,
                   "required rank 4 tensor to use channels_last format");
}

TEST(MemoryFormat, CloneOfALayoutIsDifferentiable) {
  Tensor x = arange(6.0).view({2, 3}).requires_grad_(true);
  Tensor y = x.t().clone();
  EXPECT_EQ(y.strides().vec(), (V{1, 3}));
  (y * arange(6.0).view({3, 2})).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(x.grad().strides().vec(), (V{3, 1}));  // AccumulateGrad keeps row-major
}

TEST(VarStd, CorrectionAndUnbiasedOverloads) {
  Tensor x = tensor({1.0, 2.0, 4.0, 7.0}, kFloat64).view({2, 2});
  // N = 2 per row: row 0 squares sum to 0.5, row 1 to 4.5
  EXPECT_EQ(var(x, {1}).to_vector<double>(), (std::vector<double>{0.5, 4.5}));
  EXPECT_EQ(var(x, {1}, 0).to_vector<double>(), (std::vector<double>{0.25, 2.25}));      // an int: a correction
  EXPECT_EQ(var(x, {1}, false).to_vector<double>(), (std::vector<double>{0.25, 2.25}));  // a bool: unbiased
  EXPECT_EQ(var(x, {1}, 0.5).to_vector<double>(), (std::vector<double>{1.0 / 3, 3.0}));
  EXPECT_EQ(x.var({1}, 1.5, true).sizes().vec(), (V{2, 1}));
  EXPECT_EQ(x.var({1}, 1.5, true).to_vector<double>(), (std::vector<double>{1.0, 9.0}));
  EXPECT_TRUE(std::isinf(var(x, {1}, 2).to_vector<double>()[0]));  // N - correction = 0, as PyTorch
  EXPECT_DOUBLE_EQ(var(x, {}, true).item<double>(), var(x).item<double>());
  EXPECT_DOUBLE_EQ(graft::std(x, {}, false).item<double>(), std::sqrt(var(x, {}, 0).item<double>()));
  // a braced or plain int is the dim (no var(x, bool unbiased) in C++ to take it)
  EXPECT_EQ(var(x, {1}).to_vector<double>(), var(x, 1).to_vector<double>());
  EXPECT_EQ(x.var({0}).sizes().vec(), (V{2}));
  EXPECT_DOUBLE_EQ(detail::var_default(x, false).item<double>(), var(x, {}, 0).item<double>());  // Python's var(False)
  EXPECT_DOUBLE_EQ(x.std({0}, 0).to_vector<double>()[0], 1.5);
  EXPECT_THROW_HAS(var(arange(3)), RuntimeError, "std and var only support floating point and complex dtypes");
}
