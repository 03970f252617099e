// More of libtorch's C++ front end under `namespace torch = graft;`: torch::indexing, loss and
// layer modules (MSELoss, CrossEntropyLoss, LeakyReLU, Dropout2d), ExpandingArray-style window
// options, torch::save/load of tensors and of modules through their holders, layouts and
// torch::str. Each test states libtorch's result.
#include <cstdio>
#include <string>

#include "support/test_util.h"

namespace torch = graft;

namespace {

using namespace torch::indexing;

torch::Tensor grid() { return torch::arange(12.0).reshape({3, 4}); }

TEST(LibtorchIndexing, BasicItemsAreViews) {
  torch::Tensor x = grid();
  torch::Tensor column = x.index({Slice(), 1});  // x[:, 1]
  EXPECT_EQ(column.sizes(), torch::IntArrayRef({3}));
  EXPECT_DOUBLE_EQ(column[2].item<double>(), 9.0);
  column.fill_(-1.0);  // a view: x changes too
  EXPECT_DOUBLE_EQ(x.index({0, 1}).item<double>(), -1.0);
  EXPECT_EQ(x.index({Slice(1, None), Slice(None, None, 2)}).sizes(), torch::IntArrayRef({2, 2}));  // x[1:, ::2]
  EXPECT_EQ(x.index({Slice(-2)}).sizes(), torch::IntArrayRef({2, 4}));                             // x[-2:]
  EXPECT_EQ(x.index({Ellipsis, None}).sizes(), torch::IntArrayRef({3, 4, 1}));                     // x[..., None]
  EXPECT_EQ(x.index({None, 0}).sizes(), torch::IntArrayRef({1, 4}));                               // x[None, 0]
  EXPECT_EQ(x.index({false}).sizes(), torch::IntArrayRef({0, 3, 4}));                              // x[False]
  EXPECT_DOUBLE_EQ(x.index({-1, -1}).item<double>(), 11.0);
}

TEST(LibtorchIndexing, TensorsIndexAsPytorchs) {
  torch::Tensor x = grid();
  torch::Tensor rows = torch::tensor({2, 0});
  torch::Tensor picked = x.index({rows, Slice(None, 2)});  // x[[2, 0], :2]
  EXPECT_EQ(picked.sizes(), torch::IntArrayRef({2, 2}));
  EXPECT_DOUBLE_EQ(picked.index({0, 1}).item<double>(), 9.0);
  torch::Tensor masked = x.index({x > 9});  // x[x > 9]
  EXPECT_EQ(masked.sizes(), torch::IntArrayRef({2}));
  std::vector<TensorIndex> items{1, Slice(1, 3)};  // a list built at run time
  EXPECT_EQ(x.index(items).sizes(), torch::IntArrayRef({2}));
}

TEST(LibtorchIndexing, IndexPutWritesInPlace) {
  torch::Tensor x = grid();
  x.index_put_({0, Slice(None, 2)}, 100.0);  // x[0, :2] = 100
  EXPECT_DOUBLE_EQ(x.index({0, 1}).item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(x.index({0, 2}).item<double>(), 2.0);
  x.index_put_({x > 10}, torch::tensor({-5.0}));  // x[x > 10] = -5
  EXPECT_DOUBLE_EQ(x.index({2, 3}).item<double>(), -5.0);
  EXPECT_DOUBLE_EQ(x.index({0, 0}).item<double>(), -5.0);
}

TEST(LibtorchIndexing, ErrorsAsPytorchs) {
  torch::Tensor x = grid();
  EXPECT_THROW_MSG(x.index({3}), IndexError, "index 3 is out of bounds for dimension 0 with size 3");
  EXPECT_THROW_MSG(x.index({0, 0, 0}), IndexError, "too many indices for tensor of dimension 2");
  EXPECT_THROW_MSG(x.index({Ellipsis, Ellipsis}), IndexError, "an index can only have a single ellipsis ('...')");
  EXPECT_THROW_MSG(x.index({Slice(None, None, -1)}), ValueError, "step must be greater than zero");
  EXPECT_THROW_MSG(x.index({torch::ones({2})}), IndexError,
                   "tensors used as indices must be long, int or bool tensors");
}

TEST(LibtorchModules, LossLayersCallTheirFunctions) {
  torch::Tensor input = torch::tensor({1.0, 2.0, 4.0}), target = torch::tensor({1.0, 0.0, 0.0});
  EXPECT_FLOAT_EQ(torch::nn::MSELoss()(input, target).item<float>(), 20.0f / 3.0f);
  EXPECT_DOUBLE_EQ(torch::nn::MSELoss(torch::nn::MSELossOptions().reduction(torch::kSum))(input, target).item<float>(),
                   20.0);
  EXPECT_DOUBLE_EQ(torch::nn::L1Loss()(input, target).item<float>(), 2.0);
  torch::Tensor logits = torch::tensor({2.0, 0.0, 0.0, 2.0}).reshape({2, 2});
  torch::Tensor labels = torch::tensor({0, 1});
  const double expected = std::log(1.0 + std::exp(-2.0));
  EXPECT_NEAR(torch::nn::CrossEntropyLoss()(logits, labels).item<float>(), expected, 1e-6);
  torch::nn::CrossEntropyLoss ignoring(torch::nn::CrossEntropyLossOptions().ignore_index(1));
  EXPECT_NEAR(ignoring(logits, labels).item<float>(), expected, 1e-6);
  torch::nn::NLLLoss weighted(torch::nn::NLLLossOptions().weight(torch::tensor({1.0, 0.0})));
  EXPECT_EQ(weighted->named_buffers().size(), 1u);  // the class weight is a buffer, as PyTorch's
  EXPECT_NEAR(weighted(torch::log_softmax(logits, 1), labels).item<float>(), expected, 1e-6);
  std::ostringstream os;
  os << *torch::nn::MSELoss();
  EXPECT_EQ(os.str(), "MSELoss()");
}

TEST(LibtorchModules, LeakyReluAndChannelDropout) {
  torch::nn::LeakyReLU leaky(torch::nn::LeakyReLUOptions().negative_slope(0.2));
  EXPECT_NEAR(leaky(torch::tensor({-1.0, 3.0}))[0].item<float>(), -0.2, 1e-7);
  torch::manual_seed(0);
  torch::nn::Dropout2d drop;  // default-constructed, p = 0.5, as libtorch's mnist example holds it
  torch::Tensor x = torch::ones({4, 16, 3, 3});
  torch::Tensor y = drop(x);
  // each channel is all zeros or all 2: one draw per (sample, channel)
  torch::Tensor per_channel = y.amax({2, 3}) - y.amin({2, 3});
  EXPECT_EQ(per_channel.abs().sum().item<float>(), 0.0);
  EXPECT_TRUE(((y == 0) | (y == 2)).all().item<bool>());
  EXPECT_GT(y.eq(0).sum().item<int64_t>(), 0);
  drop->eval();
  EXPECT_TRUE(drop(x).equal(x));
  EXPECT_THROW_MSG(drop(torch::ones({2})), RuntimeError, "dropout2d: Expected 3D or 4D input, but received a 1D input");
}

TEST(LibtorchModules, WindowOptionsTakeOneIntForEveryDim) {
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 2, 3).stride(2).padding(1));
  EXPECT_EQ(conv(torch::ones({1, 1, 8, 8})).sizes(), torch::IntArrayRef({1, 2, 4, 4}));
  torch::nn::MaxPool2d pool(torch::nn::MaxPool2dOptions(2).stride(1));
  EXPECT_EQ(pool(torch::ones({1, 1, 4, 4})).sizes(), torch::IntArrayRef({1, 1, 3, 3}));
}

TEST(LibtorchSerialize, TensorsAndModulesThroughTheirHolders) {
  const std::string path = testing::TempDir() + "graft_libtorch_save.pt";
  torch::Tensor x = torch::randn({2, 3});
  torch::save(x, path);
  torch::Tensor y;
  torch::load(y, path);
  EXPECT_TRUE(y.equal(x));
  torch::save(std::vector<torch::Tensor>{x, x * 2}, path);
  std::vector<torch::Tensor> both;
  torch::load(both, path);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(both[1].equal(x * 2));
  torch::nn::Linear a(3, 2), b(3, 2);
  torch::save(a, path);
  torch::load(b, path);
  EXPECT_TRUE(a->weight.equal(b->weight));
  EXPECT_THROW(torch::load(y, path), torch::ValueError);  // a module's file is not one tensor
  std::remove(path.c_str());
}

TEST(LibtorchNames, LayoutAndStr) {
  EXPECT_EQ(torch::ones({2}).layout(), torch::kStrided);
  EXPECT_EQ(torch::str("step ", 3, ": ", 0.5), "step 3: 0.5");
}

}  // namespace
