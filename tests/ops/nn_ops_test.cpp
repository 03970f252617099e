// Neural-network ops beyond what the registry checks: running statistics, the padding row of
// embedding, dropout's statistics and seeding, hand-worked values, and PyTorch's error texts.
#include <cmath>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;
using graft::testing::values;

TEST(NNOps, Conv2dHandWorkedExample) {
  // 1x1x3x3 input 0..8, 2x2 kernel of ones, bias 0.5: each output is the sum of a 2x2 block.
  Tensor x = arange(9.0).view({1, 1, 3, 3});
  Tensor w = ones({1, 1, 2, 2});
  Tensor b = tensor({0.5});
  expect_tensor(conv2d(x, w, b), {1, 1, 2, 2}, {8.5, 12.5, 20.5, 24.5});
  // stride 2, padding 1: windows at (-1,-1), (-1,1), (1,-1), (1,1)
  expect_tensor(conv2d(x, w, Tensor(), {2}, {1}), {1, 1, 2, 2}, {0, 1 + 2, 3 + 6, 4 + 5 + 7 + 8});
}

TEST(NNOps, ConvTransposeIsTheAdjointOfConv) {
  // <conv(x, w), y> == <x, conv_transpose(y, w)> for matching geometry.
  manual_seed(3);
  Tensor x = randn({2, 4, 7, 6}, kFloat64), w = randn({6, 2, 3, 2}, kFloat64);
  Tensor y = conv2d(x, w, Tensor(), {2, 1}, {1, 0}, {1, 2}, 2);
  Tensor z = randn(y.sizes(), kFloat64);
  Tensor back = conv_transpose2d(z, w, Tensor(), {2, 1}, {1, 0}, {0}, 2, {1, 2});
  ASSERT_EQ(back.sizes().vec(), x.sizes().vec());
  EXPECT_NEAR((y * z).sum().item<double>(), (x * back).sum().item<double>(), 1e-9);
}

TEST(NNOps, BatchNormUpdatesRunningStatistics) {
  Tensor x = tensor({1.0, 2.0, 3.0, 5.0, 4.0, 8.0}).view({3, 2});  // channel 0: 1,3,4  channel 1: 2,5,8
  Tensor rm = zeros({2}), rv = ones({2});
  Tensor y = batch_norm(x, rm, rv, Tensor(), Tensor(), true, 0.1, 1e-5);
  // mean (8/3, 5), unbiased var (7/3, 9): running = 0.9 * old + 0.1 * new
  expect_tensor(rm, {2}, {0.1 * 8.0 / 3.0, 0.5}, 1e-6);
  expect_tensor(rv, {2}, {0.9 + 0.1 * 7.0 / 3.0, 0.9 + 0.1 * 9.0}, 1e-6);
  // normalized with the biased variance (14/9, 6)
  EXPECT_NEAR(y[0][0].item<float>(), (1 - 8.0 / 3.0) / std::sqrt(14.0 / 9.0 + 1e-5), 1e-5);
  EXPECT_NEAR(y[2][1].item<float>(), (8 - 5.0) / std::sqrt(6.0 + 1e-5), 1e-5);
  // eval uses the running statistics and leaves them alone
  Tensor ye = batch_norm(x, rm, rv, Tensor(), Tensor(), false);
  EXPECT_NEAR(ye[0][1].item<float>(), (2 - 0.5) / std::sqrt(0.9 + 0.9 + 1e-5), 1e-5);
  expect_tensor(rm, {2}, {0.1 * 8.0 / 3.0, 0.5}, 1e-6);
  EXPECT_THROW_MSG(batch_norm(ones({1, 3}), zeros({3}), ones({3}), Tensor(), Tensor(), true), ValueError,
                   "Expected more than 1 value per channel when training, got input size [1, 3]");
  EXPECT_THROW_MSG(batch_norm(ones({2, 3}), zeros({4}), ones({3})), RuntimeError,
                   "running_mean should contain 3 elements not 4");
  // evaluation needs the running statistics (PyTorch's C++ check, ahead of the others)
  EXPECT_THROW_MSG(batch_norm(ones({2, 3}), Tensor(), ones({3})), RuntimeError,
                   "running_mean must be defined in evaluation mode");
  EXPECT_THROW_MSG(batch_norm(ones({2, 3}), zeros({3}), Tensor()), RuntimeError,
                   "running_var must be defined in evaluation mode");
}

TEST(NNOps, EmbeddingPaddingRowGetsNoGradient) {
  Tensor w = arange(8.0).view({4, 2}).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{1, 3, 1, 0});
  Tensor out = embedding(w, idx, 1);
  expect_tensor(out, {4, 2}, {2, 3, 6, 7, 2, 3, 0, 1});  // the padding row's values are returned as is
  out.sum().backward();
  expect_tensor(w.grad(), {4, 2}, {1, 1, 0, 0, 0, 0, 1, 1});
  Tensor w2 = arange(8.0).view({4, 2}).requires_grad_();
  embedding(w2, idx).sum().backward();  // without padding_idx the repeated row accumulates
  expect_tensor(w2.grad(), {4, 2}, {1, 1, 2, 2, 0, 0, 1, 1});
  EXPECT_THROW_HAS(embedding(w, tensor(std::vector<int64_t>{4})), IndexError, "index out of range in self");
  EXPECT_THROW_HAS(embedding(w, tensor({1.0})), RuntimeError, "'indices' to have one of the following scalar types");
}

TEST(NNOps, EmbeddingShowsItsOwnNodeAndIsNoView) {
  // PyTorch's F.embedding shows EmbeddingBackward0 with or without padding_idx/scale_grad_by_freq
  // (graft showed IndexSelectBackward0 before embedding was declared in ops.yaml); its result is
  // its own tensor, so an in-place op on it records as on any result
  Tensor w = arange(8.0).view({4, 2}).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{3, 0, 3}).view({3, 1});
  Tensor out = embedding(w, idx);
  EXPECT_EQ(out.grad_fn()->name(), "EmbeddingBackward0");
  EXPECT_FALSE(out.is_view());
  out.mul_(2);
  EXPECT_EQ(out.grad_fn()->name(), "MulBackward0");
  out.sum().backward();
  expect_tensor(w.grad(), {4, 2}, {2, 2, 0, 0, 0, 0, 4, 4});
}

TEST(NNOps, UnbatchedIm2ColIsItsOwnResult) {
  // im2col of [C, H, W] is Im2ColBackward0's result, not a view of a batched temporary (a view
  // made without grad would refuse in-place ops, or rebase them onto the temporary)
  Tensor x = arange(12.0).view({1, 3, 4}).requires_grad_();
  Tensor cols = im2col(x, {2, 2});
  EXPECT_EQ(cols.grad_fn()->name(), "Im2ColBackward0");
  EXPECT_FALSE(cols.is_view());
  EXPECT_TRUE(cols.sizes().equals({4, 6}));
  cols.add_(1);
  cols.sum().backward();  // each element counted once per window covering it
  expect_tensor(x.grad(), {1, 3, 4}, {1, 2, 2, 1, 2, 4, 4, 2, 1, 2, 2, 1});
  Tensor back = col2im(cols.detach(), {3, 4}, {2, 2});
  EXPECT_FALSE(back.is_view());
  EXPECT_TRUE(back.sizes().equals({1, 3, 4}));
}

TEST(NNOps, EmbeddingScaleGradByFreqDividesByTheIndexCount) {
  // expected gradients from torch 1.13: F.embedding(idx, w, scale_grad_by_freq=True).backward(g)
  Tensor w = arange(8.0).view({4, 2}).requires_grad_();
  Tensor idx = tensor(std::vector<int64_t>{1, 3, 1, 0, 1});
  Tensor g = arange(10.0).view({5, 2});
  Tensor out = embedding(w, idx, std::nullopt, /*scale_grad_by_freq=*/true);
  expect_tensor(out, {5, 2}, {2, 3, 6, 7, 2, 3, 0, 1, 2, 3});
  EXPECT_EQ(out.grad_fn()->name(), "EmbeddingBackward0");
  out.backward(g);
  expect_tensor(w.grad(), {4, 2}, {6, 7, 4, 5, 0, 0, 2, 3}, 1e-6);
  Tensor w2 = arange(8.0).view({4, 2}).requires_grad_();
  embedding(w2, idx, 3, true).backward(g);  // the padding row gets none
  expect_tensor(w2.grad(), {4, 2}, {6, 7, 4, 5, 0, 0, 0, 0}, 1e-6);
}

TEST(NNOps, DropoutKeepsAboutOneMinusPAndScales) {
  manual_seed(42);
  Tensor x = ones({100000});
  Tensor y = dropout(x, 0.3);
  auto v = values(y);
  int64_t kept = 0;
  for (double e : v) {
    if (e != 0) {
      ++kept;
      EXPECT_NEAR(e, 1.0 / 0.7, 1e-6);
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / 100000.0, 0.7, 0.01);
  manual_seed(42);
  EXPECT_TRUE(equal(dropout(x, 0.3), y));          // seeded: the same mask again
  EXPECT_TRUE(dropout(x, 0.3, false).is_same(x));  // eval: identity
  EXPECT_THROW_MSG(dropout(x, 1.5), ValueError, "dropout probability has to be between 0 and 1, but got 1.5");
}

TEST(NNOps, CrossEntropyHandWorked) {
  // logits [0, ln 3] -> p = [1/4, 3/4]; target 1 -> -ln(3/4)
  Tensor logits = tensor({0.0, std::log(3.0)}).view({1, 2});
  Tensor t = tensor(std::vector<int64_t>{1});
  EXPECT_NEAR(cross_entropy(logits, t).item<float>(), -std::log(0.75), 1e-6);
  // label smoothing 0.2 over 2 classes: target distribution [0.1, 0.9]
  EXPECT_NEAR(cross_entropy(logits, t, Tensor(), Reduction::Mean, -100, 0.2).item<float>(),
              -(0.1 * std::log(0.25) + 0.9 * std::log(0.75)), 1e-6);
  // every target ignored: mean is 0/0
  EXPECT_TRUE(std::isnan(cross_entropy(logits, t, Tensor(), Reduction::Mean, 1).item<float>()));
  EXPECT_THROW_MSG(cross_entropy(logits, tensor(std::vector<int64_t>{2})), IndexError, "Target 2 is out of bounds.");
  EXPECT_THROW_MSG(cross_entropy(ones({3, 2}), tensor(std::vector<int64_t>{0, 1})), ValueError,
                   "Expected input batch_size (3) to match target batch_size (2).");
  EXPECT_THROW_HAS(nll_loss(ones({2, 3}), tensor(std::vector<int64_t>{0, 1}), ones({4})), RuntimeError,
                   "weight tensor should be defined either for all 3 classes or no classes");
  EXPECT_THROW_MSG(nll_loss(ones({2, 3}), tensor(std::vector<int32_t>{0, 1})), RuntimeError,
                   "expected scalar type Long but found Int");
}

TEST(NNOps, LossErrors) {
  EXPECT_THROW_MSG(binary_cross_entropy(tensor({0.5, 1.5}), tensor({0.0, 1.0})), RuntimeError,
                   "all elements of input should be between 0 and 1");
  EXPECT_THROW_MSG(binary_cross_entropy(tensor({0.5}), ones({1, 1})), ValueError,
                   "Using a target size ([1, 1]) that is different to the input size ([1]) is deprecated. Please "
                   "ensure they have the same size.");
  EXPECT_THROW_MSG(reduction_from_string("avg"), ValueError, "avg is not a valid value for reduction");
  EXPECT_THROW_MSG(smooth_l1_loss(ones({2}), ones({2}), Reduction::Mean, -1.0), RuntimeError,
                   "smooth_l1_loss does not support negative values for beta.");
}

TEST(NNOps, ConvAndPoolErrors) {
  Tensor x = ones({2, 4, 5, 5});
  EXPECT_THROW_MSG(conv2d(x, ones({8, 3, 3, 3})), RuntimeError,
                   "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 5, 5] to have 3 channels, but "
                   "got 4 channels instead");
  EXPECT_THROW_MSG(conv2d(x, ones({3, 2, 3, 3}), Tensor(), {1}, IntArrayRef{0}, {1}, 2), RuntimeError,
                   "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
                   "[3, 2, 3, 3] instead");
  EXPECT_THROW_MSG(conv2d(ones({1, 1, 2, 2}), ones({1, 1, 3, 3})), RuntimeError,
                   "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
                   "greater than actual input size");
  EXPECT_THROW_MSG(conv2d(ones({2, 3}), ones({1, 1, 1, 1})), RuntimeError,
                   "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]");
  EXPECT_THROW_MSG(conv2d(x, ones({2, 4, 1, 1}), ones({3})), RuntimeError,
                   "Given weight of size [2, 4, 1, 1], expected bias to be 1-dimensional with 2 elements, but got "
                   "bias of size [3] instead");
  EXPECT_THROW_HAS(conv2d(x, ones({2, 4, 1, 1}, kFloat64)), TypeError, "should be the same");
  EXPECT_THROW_HAS(conv2d(x, ones({2, 4, 1, 1}), Tensor(), {0}), RuntimeError, "non-positive stride is not supported");
  // convolution itself (torch.convolution): 1-d and 2-d; a 3-d convolution is not there yet
  EXPECT_THROW_MSG(convolution(ones({1, 1, 2, 2, 2}), ones({1, 1, 1, 1, 1}), Tensor(), {1}, {0}, {1}, false, {0}, 1),
                   NotImplementedError,
                   "graft's convolution is 1-d or 2-d, but got 5-dimensional weight [1, 1, 1, 1, 1]");
  EXPECT_THROW_MSG(convolution(ones({1, 1, 5}), ones({1, 1, 9}), Tensor(), {1}, {0}, {1}, false, {0}, 1), RuntimeError,
                   "Calculated padded input size per channel: (5). Kernel size: (9). Kernel size can't be greater than "
                   "actual input size");
  EXPECT_THROW_MSG(convolution(ones({1, 1, 2, 2}), ones({1, 1, 3, 3}), Tensor(), {1}, {2}, {1}, true, {0}, 1),
                   RuntimeError,
                   "Given input size per channel: (2 x 2). Calculated output size per channel: (0 x 0). Output size "
                   "is too small");
  EXPECT_THROW_MSG(convolution(ones({1, 1, 2, 2}), ones({1, 1, 3, 3}), Tensor(), {2}, {0}, {1}, true, {2}, 1),
                   RuntimeError,
                   "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
                   "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1");
  EXPECT_THROW_MSG(max_pool2d(x, {3}, {1}, {2}), RuntimeError,
                   "pad should be smaller than or equal to half of kernel size, but got padW = 2, padH = 2, kW = 3, "
                   "kH = 3");
  EXPECT_THROW_MSG(max_pool2d(ones({1, 3, 2, 2}), {3}), RuntimeError,
                   "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small");
  EXPECT_THROW_MSG(layer_norm(ones({2, 4}), {5}), RuntimeError,
                   "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 4]");
  EXPECT_THROW_MSG(group_norm(ones({2, 5, 3}), 2), RuntimeError,
                   "Expected number of channels in input to be divisible by num_groups, but got input of shape "
                   "[2, 5, 3] and num_groups=2");
  EXPECT_THROW_MSG(pad(ones({3}), {1}), RuntimeError, "Padding length must be divisible by 2");
  EXPECT_THROW_MSG(
      scaled_dot_product_attention(ones({1, 2, 3}), ones({1, 2, 3}), ones({1, 2, 3}), ones({2, 2}, kBool), 0.0, true),
      RuntimeError, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
}

TEST(NNOps, MaxPoolIndicesAreFlatPlanePositions) {
  Tensor x = tensor({1.0, 5.0, 2.0, 0.0, 3.0, 4.0, 9.0, 8.0, 7.0, 6.0, 1.0, 2.0}).view({1, 1, 3, 4});
  auto [v, i] = max_pool2d_with_indices(x, {2}, {2}, {0}, {1}, true);  // ceil mode: a partial last row of windows
  expect_tensor(v, {1, 1, 2, 2}, {5, 9, 7, 2});
  expect_tensor(i, {1, 1, 2, 2}, {1, 6, 8, 11});
}

// ---- regressions found in review ----

TEST(NNOps, ConvBiasOnlyGradient) {
  Tensor x = randn({2, 3, 5, 5}), w = randn({4, 3, 3, 3});  // neither requires grad
  Tensor b = zeros({4}).requires_grad_();
  conv2d(x, w, b).sum().backward();
  expect_tensor(b.grad(), {4}, {2 * 9, 2 * 9, 2 * 9, 2 * 9});  // N * oh * ow per channel
}

TEST(NNOps, BinaryCrossEntropyGradientIsFiniteAtZeroAndOne) {
  Tensor x = tensor({1.0, 0.0, 0.25}).requires_grad_();
  Tensor y = tensor({1.0, 0.0, 1.0});
  Tensor loss = binary_cross_entropy(x, y, Tensor(), Reduction::Sum);
  EXPECT_NEAR(loss.item<float>(), -std::log(0.25), 1e-6);
  loss.backward();
  // PyTorch's (x - y) / max(x (1 - x), 1e-12): 0 at the two exact points, -4 at 0.25
  expect_tensor(x.grad(), {3}, {0, 0, (0.25 - 1) / (0.25 * 0.75)}, 1e-5);
}

TEST(NNOps, WindowsSmallerThanTheKernelAreRejected) {
  EXPECT_THROW_HAS(im2col(randn({1, 1, 2, 2}), {3}, {1}, {0}, {2}), RuntimeError, "must be at least one");
  EXPECT_THROW_HAS(col2im(randn({1, 9, 1}), {2, 2}, {3}, {1}, {0}, {2}), RuntimeError, "sliding blocks");
}

TEST(NNOps, MaxPoolWindowOfPaddingOnlyGetsNoGradient) {
  // a 1x1 input, kernel 2 with dilation 2 and padding 1: the one window reads rows -1 and 1
  Tensor x = ones({1, 1, 1, 1}).requires_grad_();
  auto [v, i] = max_pool2d_with_indices(x, {2}, {1}, {1}, {2});
  EXPECT_EQ(i.item<int64_t>(), -1);
  (v.clamp(-1.0, 1.0)).sum().backward();
  expect_tensor(x.grad(), {1, 1, 1, 1}, {0});
}

TEST(NNOps, EmptyBatches) {
  Tensor x = randn({0, 2, 4, 4}).requires_grad_();
  max_pool2d(x, {2}).sum().backward();
  EXPECT_EQ(x.grad().sizes().vec(), (std::vector<int64_t>{0, 2, 4, 4}));
  EXPECT_EQ(group_norm(randn({0, 4, 3}), 2).sizes().vec(), (std::vector<int64_t>{0, 4, 3}));
  Tensor e = randn({2, 0}).requires_grad_();
  Tensor p = pad(e, {1, 1});
  EXPECT_TRUE(p.requires_grad());  // an empty input still has a gradient path
  EXPECT_EQ(p.sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_THROW_HAS(pad(randn({3}), {-5, 4}), RuntimeError, "crops more than the 3 elements");
}

TEST(NNOps, BatchNormRunningStatsOfAnotherShapeUpdateWhole) {
  Tensor x = tensor({1.0, 2.0, 3.0, 5.0}).view({2, 2});
  Tensor rm = zeros({2, 1}), rv = ones({2, 1});
  batch_norm(x, rm, rv, Tensor(), Tensor(), true);
  expect_tensor(rm, {2, 1}, {0.2, 0.35});
  expect_tensor(rv, {2, 1}, {1.1, 0.9 + 0.45});
}
