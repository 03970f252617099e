// DataLoader in the calling thread: order, contents, len, drop_last, shuffle, custom sampler,
// batch_sampler and collate, PyTorch's option-conflict errors, pin_memory, memory categories.
#include <algorithm>
#include <numeric>

#include "graft/data/data.h"
#include "probe_dataset.h"
#include "support/test_util.h"

using namespace graft;
using namespace graft::data;
using graft::data::testing::epoch_labels;
using graft::testing::expect_tensor;

namespace {
// x row i = [2i, 2i+1] (float32), y i = i (int64).
std::shared_ptr<TensorDataset> ten_rows(int64_t n = 10) {
  return std::make_shared<TensorDataset>(
      std::vector<Tensor>{arange(2 * n, kFloat32).reshape({n, 2}), arange(n, kInt64)});
}
std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& v) {
  std::vector<int64_t> out;
  for (const auto& b : v) out.insert(out.end(), b.begin(), b.end());
  return out;
}
std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}
std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}
}  // namespace

TEST(DataLoader, SequentialBatchesHoldTheRightRows) {
  DataLoader loader(ten_rows(), {.batch_size = 4});
  std::vector<Batch> batches;
  for (Batch& b : loader) batches.push_back(b);
  ASSERT_EQ(batches.size(), 3u);
  expect_tensor(batches[0][0], {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_tensor(batches[0][1], {4}, {0, 1, 2, 3});
  expect_tensor(batches[1][0], {4, 2}, {8, 9, 10, 11, 12, 13, 14, 15});
  expect_tensor(batches[1][1], {4}, {4, 5, 6, 7});
  expect_tensor(batches[2][0], {2, 2}, {16, 17, 18, 19});
  expect_tensor(batches[2][1], {2}, {8, 9});
  EXPECT_EQ(batches[2][1].dtype(), kInt64);
}

TEST(DataLoader, DefaultBatchSizeIsOne) {
  DataLoader loader(ten_rows(3));
  EXPECT_EQ(loader.size(), 3);
  EXPECT_EQ(epoch_labels(loader), (std::vector<std::vector<int64_t>>{{0}, {1}, {2}}));
  EXPECT_FALSE(loader.options().prefetch_factor.has_value());  // only set with workers
}

TEST(DataLoader, LenIsCeilOrFloorWithDropLast) {
  DataLoader keep(ten_rows(), {.batch_size = 4});
  DataLoader drop(ten_rows(), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  std::vector<int64_t> keep_sizes, drop_sizes;
  for (Batch& b : keep) keep_sizes.push_back(b[0].size(0));
  for (Batch& b : drop) drop_sizes.push_back(b[0].size(0));
  EXPECT_EQ(keep_sizes, (std::vector<int64_t>{4, 4, 2}));
  EXPECT_EQ(drop_sizes, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(DataLoader(ten_rows(8), {.batch_size = 4, .drop_last = true}).size(), 2);
  EXPECT_EQ(DataLoader(ten_rows(8), {.batch_size = 4}).size(), 2);
  EXPECT_EQ(DataLoader(ten_rows(3), {.batch_size = 4, .drop_last = true}).size(), 0);
}

TEST(DataLoader, EveryEpochRestartsAndLoopsCanBeRepeated) {
  DataLoader loader(ten_rows(5), {.batch_size = 2});
  const auto first = epoch_labels(loader);
  EXPECT_EQ(first, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(epoch_labels(loader), first);
}

TEST(DataLoader, ShuffleWithSeedIsReproducibleAndReshufflesEachEpoch) {
  DataLoader a(ten_rows(20), {.batch_size = 3, .shuffle = true, .seed = 11});
  DataLoader b(ten_rows(20), {.batch_size = 3, .shuffle = true, .seed = 11});
  const auto a1 = epoch_labels(a), a2 = epoch_labels(a);
  EXPECT_EQ(a1, epoch_labels(b));
  EXPECT_EQ(a2, epoch_labels(b));
  EXPECT_NE(flatten(a1), flatten(a2));
  EXPECT_NE(flatten(a1), range(20));
  // Every index exactly once per epoch, batch sizes as without shuffle.
  EXPECT_EQ(sorted(flatten(a1)), range(20));
  EXPECT_EQ(sorted(flatten(a2)), range(20));
  ASSERT_EQ(a1.size(), 7u);
  EXPECT_EQ(a1.back().size(), 2u);
  DataLoader other(ten_rows(20), {.batch_size = 3, .shuffle = true, .seed = 12});
  EXPECT_NE(flatten(epoch_labels(other)), flatten(a1));
}

TEST(DataLoader, ShuffleWithoutSeedFollowsManualSeed) {
  manual_seed(42);
  DataLoader a(ten_rows(16), {.batch_size = 5, .shuffle = true});
  const auto a1 = epoch_labels(a), a2 = epoch_labels(a);
  manual_seed(42);
  DataLoader b(ten_rows(16), {.batch_size = 5, .shuffle = true});
  EXPECT_EQ(epoch_labels(b), a1);
  EXPECT_EQ(epoch_labels(b), a2);
  EXPECT_NE(a1, a2);
  EXPECT_EQ(sorted(flatten(a1)), range(16));
}

TEST(DataLoader, ShuffleWithDropLastKeepsOnlyFullBatches) {
  DataLoader loader(ten_rows(), {.batch_size = 4, .shuffle = true, .drop_last = true, .seed = 3});
  const auto e = epoch_labels(loader);
  ASSERT_EQ(e.size(), 2u);
  const auto all = flatten(e);
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 8u);  // 8 distinct of the 10
}

namespace {
class ReverseSampler : public Sampler {
 public:
  explicit ReverseSampler(int64_t n) : n_(n) {}
  std::vector<int64_t> next_epoch() override {
    std::vector<int64_t> v;
    for (int64_t i = n_ - 1; i >= 0; --i) v.push_back(i);
    return v;
  }
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};
class FixedBatches : public BatchSamplerBase {
 public:
  explicit FixedBatches(std::vector<std::vector<int64_t>> b) : batches_(std::move(b)) {}
  std::vector<std::vector<int64_t>> next_epoch() override {
    ++epochs;
    return batches_;
  }
  int64_t size() const override { return static_cast<int64_t>(batches_.size()); }
  int epochs = 0;

 private:
  std::vector<std::vector<int64_t>> batches_;
};
}  // namespace

TEST(DataLoader, CustomSamplerSetsTheOrder) {
  DataLoader loader(ten_rows(), {.batch_size = 3, .sampler = std::make_shared<ReverseSampler>(10)});
  EXPECT_EQ(loader.size(), 4);
  EXPECT_EQ(epoch_labels(loader), (std::vector<std::vector<int64_t>>{{9, 8, 7}, {6, 5, 4}, {3, 2, 1}, {0}}));
}

TEST(DataLoader, CustomBatchSamplerSetsBatchesAndLen) {
  auto bs = std::make_shared<FixedBatches>(std::vector<std::vector<int64_t>>{{3, 1}, {0}, {2, 4, 5}});
  DataLoader loader(ten_rows(), {.batch_sampler = bs});
  EXPECT_EQ(loader.size(), 3);
  std::vector<Batch> batches;
  for (Batch& b : loader) batches.push_back(b);
  ASSERT_EQ(batches.size(), 3u);
  expect_tensor(batches[0][0], {2, 2}, {6, 7, 2, 3});
  expect_tensor(batches[0][1], {2}, {3, 1});
  expect_tensor(batches[1][1], {1}, {0});
  expect_tensor(batches[2][1], {3}, {2, 4, 5});
  EXPECT_EQ(bs->epochs, 1);  // asked once per epoch
  EXPECT_EQ(loader.batch_sampler(), bs);
}

TEST(DataLoader, CustomCollateBuildsTheBatch) {
  // Sums the x rows of the batch and returns the labels times 10.
  CollateFn collate = [](std::vector<Sample> samples) {
    Tensor sum = zeros({2});
    std::vector<int64_t> labels;
    for (Sample& s : samples) {
      sum = sum + s[0];
      labels.push_back(s[1].item<int64_t>() * 10);
    }
    return Batch{sum, tensor(labels)};
  };
  DataLoader loader(ten_rows(5), {.batch_size = 2, .collate_fn = collate});
  std::vector<Batch> batches;
  for (Batch& b : loader) batches.push_back(b);
  ASSERT_EQ(batches.size(), 3u);
  expect_tensor(batches[0][0], {2}, {0 + 2, 1 + 3});
  expect_tensor(batches[0][1], {2}, {0, 10});
  expect_tensor(batches[1][0], {2}, {4 + 6, 5 + 7});
  expect_tensor(batches[2][0], {2}, {8, 9});
  expect_tensor(batches[2][1], {1}, {40});
  EXPECT_EQ(memory_category(batches[0][0]), MemoryCategory::DataBatch);  // collate runs under the guard
}

TEST(DataLoader, ConflictingOptionsRaisePyTorchsErrors) {
  auto ds = ten_rows();
  auto seq = std::make_shared<SequentialSampler>(10);
  auto bs = std::make_shared<BatchSampler>(seq, 2, false);
  EXPECT_THROW_MSG(DataLoader(ds, {.shuffle = true, .sampler = seq}), ValueError,
                   "sampler option is mutually exclusive with shuffle");
  const char* batch_sampler_msg =
      "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last";
  EXPECT_THROW_MSG(DataLoader(ds, {.batch_size = 2, .batch_sampler = bs}), ValueError, batch_sampler_msg);
  EXPECT_THROW_MSG(DataLoader(ds, {.shuffle = true, .batch_sampler = bs}), ValueError, batch_sampler_msg);
  EXPECT_THROW_MSG(DataLoader(ds, {.sampler = seq, .batch_sampler = bs}), ValueError, batch_sampler_msg);
  EXPECT_THROW_MSG(DataLoader(ds, {.drop_last = true, .batch_sampler = bs}), ValueError, batch_sampler_msg);
  EXPECT_THROW_MSG(DataLoader(ds, {.num_workers = -1}), ValueError,
                   "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  EXPECT_THROW_MSG(DataLoader(ds, {.prefetch_factor = 2}), ValueError,
                   "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
                   "multiprocessing, otherwise set prefetch_factor to None.");
  EXPECT_THROW_MSG(DataLoader(ds, {.num_workers = 1, .prefetch_factor = -1}), ValueError,
                   "prefetch_factor option should be non-negative");
  EXPECT_THROW_HAS(DataLoader(ds, {.num_workers = 1, .prefetch_factor = 0}), ValueError, "prefetch_factor=0");
  EXPECT_THROW_MSG(DataLoader(ds, {.timeout = -1}), ValueError, "timeout option should be non-negative");
  // PyTorch checks num_workers before the sampler conflicts.
  EXPECT_THROW_MSG(DataLoader(ds, {.shuffle = true, .sampler = seq, .num_workers = -2}), ValueError,
                   "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  EXPECT_THROW_MSG(DataLoader(ds, {.batch_size = 0}), ValueError,
                   "batch_size should be a positive integer value, but got batch_size=0");
  EXPECT_THROW_MSG(DataLoader(ten_rows(0), {.shuffle = true}), ValueError,
                   "num_samples should be a positive integer value, but got num_samples=0");
  EXPECT_THROW_MSG(DataLoader(nullptr), ValueError, "DataLoader: dataset is null");
  // A batch_sampler with the default options is fine, and workers default prefetch_factor to 2.
  EXPECT_EQ(DataLoader(ds, {.batch_sampler = bs}).size(), 5);
  EXPECT_EQ(DataLoader(ds, {.num_workers = 2}).options().prefetch_factor, std::optional<int64_t>(2));
}

TEST(DataLoader, EmptyDatasetGivesNoBatches) {
  DataLoader loader(ten_rows(0), {.batch_size = 3});
  EXPECT_EQ(loader.size(), 0);
  EXPECT_TRUE(loader.begin() == loader.end());
  EXPECT_TRUE(epoch_labels(loader).empty());
}

TEST(DataLoader, BadIndexFromASamplerRaisesTheDatasetsIndexError) {
  auto bs = std::make_shared<FixedBatches>(std::vector<std::vector<int64_t>>{{0, 1}, {9, 12}});
  DataLoader loader(ten_rows(), {.batch_sampler = bs});
  auto it = loader.begin();
  expect_tensor((*it)[1], {2}, {0, 1});
  EXPECT_THROW_MSG(++it, IndexError, "index 12 is out of bounds for dimension 0 with size 10");
  EXPECT_THROW_HAS(*it, RuntimeError, "no current batch");
  ++it;  // the failed batch was consumed: the epoch is over
  EXPECT_TRUE(it == loader.end());
  EXPECT_THROW_HAS(++it, RuntimeError, "at the end of its epoch");
}

TEST(DataLoader, RaggedSamplesRaiseStacksErrorFromTheLoader) {
  class Ragged : public Dataset {
   public:
    Sample get(int64_t i) const override { return {zeros({i + 1})}; }
    int64_t size() const override { return 2; }
  };
  DataLoader loader(std::make_shared<Ragged>(), {.batch_size = 2});
  EXPECT_THROW_MSG(loader.begin(), RuntimeError,
                   "stack expects each tensor to be equal size, but got [1] at entry 0 and [2] at entry 1");
}

TEST(DataLoader, PinMemoryIsANoOpWithoutCudaAndWarnsOnce) {
  graft::testing::WarningCapture warnings;
  DataLoader pinned(ten_rows(), {.batch_size = 4, .pin_memory = true});
  DataLoader plain(ten_rows(), {.batch_size = 4});
  std::vector<Batch> a, b;
  for (Batch& x : pinned) a.push_back(x);
  for (Batch& x : pinned) a.push_back(x);
  for (Batch& x : plain) b.push_back(x);
  for (Batch& x : plain) b.push_back(x);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t f = 0; f < 2; ++f) {
      EXPECT_EQ(a[i][f].sizes().vec(), b[i][f].sizes().vec());
      EXPECT_EQ(graft::testing::values(a[i][f]), graft::testing::values(b[i][f]));
      EXPECT_EQ(a[i][f].device(), kCPU);
    }
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_EQ(warnings.messages()[0],
            "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be "
            "used.");
}

TEST(DataLoader, BatchBytesAreTaggedDataBatch) {
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{ones({8, 256}), arange(8, kInt64)});
  EXPECT_EQ(memory_category(ds->tensors()[0]), MemoryCategory::Other);
  const int64_t before = memory_allocated();
  EXPECT_EQ(memory_by_category().at("data_batch"), 0);
  DataLoader loader(ds, {.batch_size = 4});
  int64_t seen = 0;
  for (Batch& b : loader) {
    // Everything allocated since `before` is this batch, and all of it is data_batch.
    const int64_t batch_bytes = memory_by_category().at("data_batch");
    EXPECT_EQ(batch_bytes, memory_allocated() - before);
    EXPECT_GE(batch_bytes, static_cast<int64_t>(b[0].nbytes() + b[1].nbytes()));
    EXPECT_EQ(memory_category(b[0]), MemoryCategory::DataBatch);
    EXPECT_EQ(memory_category(b[1]), MemoryCategory::DataBatch);
    ++seen;
  }
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(memory_by_category().at("data_batch"), 0);  // batches freed with the iterator
  EXPECT_EQ(memory_allocated(), before);
}

TEST(DataLoader, GradModeOfTheEpochAppliesToBatches) {
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{ones({4, 2}, requires_grad())});
  DataLoader loader(ds, {.batch_size = 2});
  for (Batch& b : loader) EXPECT_TRUE(b[0].requires_grad());
  NoGradGuard no_grad;
  for (Batch& b : loader) EXPECT_FALSE(b[0].requires_grad());
}
