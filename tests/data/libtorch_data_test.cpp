// libtorch's data API under `namespace torch = graft;`: a Dataset<Self> subclass, map() with
// Normalize and Stack, make_data_loader with libtorch's samplers and DataLoaderOptions builder,
// worker threads keeping the order, and the MNIST reader over idx files written here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_util.h"

namespace torch = graft;

namespace {

// Example i: data a [1, 2, 2] image of value i, target i.
struct Squares : torch::data::datasets::Dataset<Squares> {
  explicit Squares(size_t n) : n(n) {}
  torch::data::Example<> get(size_t index) override {
    const double v = static_cast<double>(index);
    return {torch::full({1, 2, 2}, v), torch::scalar_tensor(static_cast<int64_t>(index), torch::kInt64)};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n;
};

TEST(LibtorchData, MapNormalizeStackAndSequentialBatches) {
  auto dataset =
      Squares(10).map(torch::data::transforms::Normalize<>(1.0, 2.0)).map(torch::data::transforms::Stack<>());
  EXPECT_EQ(dataset.size().value(), 10u);
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(dataset), 4);
  std::vector<int64_t> sizes, firsts;
  for (auto& batch : *loader) {
    sizes.push_back(batch.data.size(0));
    firsts.push_back(batch.target[0].item<int64_t>());
    EXPECT_EQ(batch.data.sizes().size(), 4u);  // [B, 1, 2, 2]
    // (i - 1) / 2 for the first image of the batch
    EXPECT_FLOAT_EQ(batch.data.index({0, 0, 0, 0}).item<float>(), (static_cast<float>(firsts.back()) - 1) / 2);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(firsts, (std::vector<int64_t>{0, 4, 8}));
}

TEST(LibtorchData, OptionsBuilderDropLastAndRandomOrder) {
  torch::manual_seed(3);
  auto loader = torch::data::make_data_loader(Squares(10).map(torch::data::transforms::Stack<>()),
                                              torch::data::DataLoaderOptions().batch_size(3).drop_last(true));
  std::vector<int64_t> seen;
  for (auto& batch : *loader) {
    EXPECT_EQ(batch.target.size(0), 3);
    for (int64_t i = 0; i < 3; ++i) seen.push_back(batch.target[i].item<int64_t>());
  }
  EXPECT_EQ(seen.size(), 9u);  // the short last batch dropped
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(seen, sorted);  // RandomSampler by default
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
}

TEST(LibtorchData, WorkersKeepTheOrderAndUnstackedBatchesAreVectors) {
  auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Squares(23), torch::data::DataLoaderOptions().batch_size(5).workers(3));
  int64_t expected = 0;
  for (int epoch = 0; epoch < 2; ++epoch) {
    expected = 0;
    for (std::vector<torch::data::Example<>>& batch : *loader)
      for (auto& example : batch) EXPECT_EQ(example.target.item<int64_t>(), expected++);
  }
  EXPECT_EQ(expected, 23);
}

struct Failing : torch::data::datasets::Dataset<Failing> {
  torch::data::Example<> get(size_t index) override {
    if (index == 6) throw torch::ValueError("bad sample 6");
    return {torch::zeros({1}), torch::zeros({1})};
  }
  std::optional<size_t> size() const override { return 8; }
};

TEST(LibtorchData, AWorkersExceptionReachesTheConsumerAtItsBatch) {
  for (size_t workers : {size_t{0}, size_t{2}}) {
    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        Failing(), torch::data::DataLoaderOptions().batch_size(2).workers(workers));
    auto it = loader->begin();
    ++it;  // batch 1
    ++it;  // batch 2
    EXPECT_THROW_MSG(++it, ValueError, "bad sample 6");
  }
}

// Writes an idx file: big-endian header numbers, then the bytes.
void write_idx(const std::string& path, std::vector<int32_t> header, size_t bytes, unsigned char fill) {
  std::ofstream out(path, std::ios::binary);
  for (int32_t v : header)
    for (int shift = 24; shift >= 0; shift -= 8) out.put(static_cast<char>((v >> shift) & 0xff));
  for (size_t i = 0; i < bytes; ++i) out.put(static_cast<char>(fill + i % 7));
}

TEST(LibtorchData, MnistReadsTheIdxFiles) {
  const std::string root = testing::TempDir() + "graft_mnist";
  std::filesystem::create_directories(root);
  write_idx(root + "/t10k-images-idx3-ubyte", {2051, 10000, 28, 28}, size_t{10000} * 784, 10);
  write_idx(root + "/t10k-labels-idx1-ubyte", {2049, 10000}, 10000, 3);
  torch::data::datasets::MNIST test(root, torch::data::datasets::MNIST::Mode::kTest);
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(test.size().value(), 10000u);
  EXPECT_EQ(test.images().sizes(), torch::IntArrayRef({10000, 1, 28, 28}));
  EXPECT_EQ(test.targets().dtype(), torch::kInt64);
  torch::data::Example<> e = test.get(1);
  EXPECT_FLOAT_EQ(e.data.index({0, 0, 0}).item<float>(), static_cast<float>(10 + 784 % 7) / 255.0f);
  EXPECT_EQ(e.target.item<int64_t>(), 4);
  EXPECT_THROW_MSG(torch::data::datasets::MNIST mnist(root), RuntimeError,
                   "Error opening images file at " + root + "/train-images-idx3-ubyte");
  write_idx(root + "/t10k-labels-idx1-ubyte", {2051, 10000}, 10000, 3);
  EXPECT_THROW_MSG(torch::data::datasets::MNIST mnist(root, torch::data::datasets::MNIST::Mode::kTest), RuntimeError,
                   "Expected to read number 2049 but found 2051 instead");
  std::filesystem::remove_all(root);
}

}  // namespace
