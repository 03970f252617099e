// DataLoader with worker threads: same batches in the same order as num_workers = 0, errors
// reach the consumer with the worker index, a bounded prefetch window, and clean shutdown
// (threads joined, queued batches freed) on break, iterator or loader destruction and a new
// epoch mid-way. Waits use condition variables (ProbeDataset::wait_for_calls), never sleeps.
#include <algorithm>
#include <numeric>

#include "graft/data/data.h"
#include "probe_dataset.h"
#include "support/test_util.h"

using namespace graft;
using namespace graft::data;
using graft::data::testing::epoch_labels;
using graft::data::testing::live_loader_threads;
using graft::data::testing::ProbeDataset;
using graft::testing::expect_tensor;

namespace {
// Every batch of one epoch, as (field sizes, values) so epochs compare exactly.
struct BatchValues {
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::vector<double>> values;
  bool operator==(const BatchValues&) const = default;
};
std::vector<BatchValues> epoch_values(DataLoader& loader) {
  std::vector<BatchValues> out;
  for (Batch& b : loader) {
    BatchValues v;
    for (const Tensor& t : b) {
      v.sizes.push_back(t.sizes().vec());
      v.values.push_back(graft::testing::values(t));
    }
    out.push_back(std::move(v));
  }
  return out;
}
}  // namespace

TEST(Workers, SameBatchesInSamplerOrderForAnyNumberOfWorkers) {
  auto ds = std::make_shared<ProbeDataset>(23);
  for (bool shuffle : {false, true}) {
    DataLoader reference(ds, {.batch_size = 3, .shuffle = shuffle, .seed = 5});
    const auto ref1 = epoch_values(reference), ref2 = epoch_values(reference);
    ASSERT_EQ(ref1.size(), 8u);
    for (int64_t workers : {1, 3}) {
      DataLoader loader(ds, {.batch_size = 3, .shuffle = shuffle, .seed = 5, .num_workers = workers});
      EXPECT_EQ(epoch_values(loader), ref1) << workers << " workers, shuffle " << shuffle;
      EXPECT_EQ(epoch_values(loader), ref2) << workers << " workers, shuffle " << shuffle;
    }
  }
  EXPECT_EQ(live_loader_threads().load(), 0);
}

TEST(Workers, RepeatedRunsAreDeterministic) {
  auto ds =
      std::make_shared<TensorDataset>(std::vector<Tensor>{arange(60, kFloat32).reshape({30, 2}), arange(30, kInt64)});
  DataLoader reference(ds, {.batch_size = 4, .drop_last = true});
  const auto expected = epoch_values(reference);
  for (int run = 0; run < 25; ++run) {
    DataLoader loader(ds, {.batch_size = 4, .drop_last = true, .num_workers = 3, .prefetch_factor = 1 + run % 3});
    ASSERT_EQ(epoch_values(loader), expected) << "run " << run;
  }
}

TEST(Workers, EveryIndexExactlyOncePerEpoch) {
  auto ds = std::make_shared<ProbeDataset>(50);
  DataLoader loader(ds, {.batch_size = 4, .shuffle = true, .seed = 9, .num_workers = 3});
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> all;
    for (const auto& b : epoch_labels(loader)) all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> want(50);
    std::iota(want.begin(), want.end(), int64_t{0});
    EXPECT_EQ(all, want) << "epoch " << epoch;
  }
  EXPECT_EQ(ds->calls(), 150);
}

TEST(Workers, WorkerErrorReachesTheConsumerWithTypeMessageAndWorker) {
  auto ds = std::make_shared<ProbeDataset>(12);
  ds->fail_at(5);  // in batch 2 (indices 4, 5), which worker 2 of 3 builds
  DataLoader loader(ds, {.batch_size = 2, .num_workers = 3});
  auto it = loader.begin();
  expect_tensor((*it)[1], {2}, {0, 1});
  ++it;
  expect_tensor((*it)[1], {2}, {2, 3});
  EXPECT_THROW_MSG(++it, ValueError, "Caught ValueError in DataLoader worker 2: bad sample 5");
  EXPECT_THROW_HAS(*it, RuntimeError, "no current batch");
  ++it;  // the epoch goes on after the failed batch
  expect_tensor((*it)[1], {2}, {6, 7});
  ++it;
  ++it;
  expect_tensor((*it)[1], {2}, {10, 11});
  ++it;
  EXPECT_TRUE(it == loader.end());
  EXPECT_EQ(live_loader_threads().load(), 0);
}

TEST(Workers, WithoutWorkersTheOriginalErrorPropagates) {
  auto ds = std::make_shared<ProbeDataset>(6);
  ds->fail_at(3);
  DataLoader loader(ds, {.batch_size = 2});
  auto it = loader.begin();
  EXPECT_THROW_MSG(++it, ValueError, "bad sample 3");
}

TEST(Workers, ErrorInARangeForLoopStopsTheLoop) {
  auto ds = std::make_shared<ProbeDataset>(40);
  ds->fail_at(9);
  DataLoader loader(ds, {.batch_size = 1, .num_workers = 2});
  std::vector<int64_t> seen;
  EXPECT_THROW_MSG(for (Batch& b
                        : loader) seen.push_back(b[1].item<int64_t>()),
                   ValueError, "Caught ValueError in DataLoader worker 1: bad sample 9");
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(live_loader_threads().load(), 0);
}

TEST(Workers, OtherExceptionsBecomeRuntimeErrorNamingTheirType) {
  auto ds = std::make_shared<ProbeDataset>(4);
  ds->fail_at(0, /*with_std_exception=*/true);
  DataLoader loader(ds, {.num_workers = 2});
  EXPECT_THROW_MSG(loader.begin(), RuntimeError,
                   "Caught std::out_of_range in DataLoader worker 0: sample 0 is missing");
}

TEST(Workers, DatasetIndexAndCollateErrorsKeepTheirGraftType) {
  auto rows = std::make_shared<TensorDataset>(std::vector<Tensor>{arange(10, kInt64)});
  class Bad : public BatchSamplerBase {
   public:
    std::vector<std::vector<int64_t>> next_epoch() override { return {{0}, {12}}; }
    int64_t size() const override { return 2; }
  };
  DataLoader loader(rows, {.batch_sampler = std::make_shared<Bad>(), .num_workers = 2});
  auto it = loader.begin();
  EXPECT_THROW_MSG(++it, IndexError,
                   "Caught IndexError in DataLoader worker 1: index 12 is out of bounds for dimension 0 with size 10");

  class Ragged : public Dataset {
   public:
    Sample get(int64_t i) const override { return {zeros({i + 1})}; }
    int64_t size() const override { return 2; }
  };
  DataLoader ragged(std::make_shared<Ragged>(), {.batch_size = 2, .num_workers = 1});
  EXPECT_THROW_MSG(ragged.begin(), RuntimeError,
                   "Caught RuntimeError in DataLoader worker 0: stack expects each tensor to be equal size, but got "
                   "[1] at entry 0 and [2] at entry 1");
}

TEST(Workers, PrefetchIsBoundedByWorkersTimesPrefetchFactor) {
  auto ds = std::make_shared<ProbeDataset>(40);
  const int64_t window = 3 * 2;
  DataLoader loader(ds, {.num_workers = 3, .prefetch_factor = 2});  // batch_size 1: batch i = index i
  int64_t received = 0;
  for (Batch& b : loader) {
    EXPECT_EQ(b[1].item<int64_t>(), received);
    ds->consumed = ++received;
    if (received == 1) ds->wait_for_calls(window + 1);  // batches 0..6 started, the window is full
  }
  EXPECT_EQ(received, 40);
  // get(i) ran only while i <= batches received + window (the consumer's count lags by at most one).
  EXPECT_LE(ds->max_lead(), window);
  EXPECT_GE(ds->max_lead(), window - 1);
}

TEST(Workers, BreakWithAFullQueueJoinsWorkersAndFreesBatches) {
  for (int run = 0; run < 5; ++run) {
    auto ds = std::make_shared<ProbeDataset>(30);
    ds->set_slow();
    const int64_t before = memory_allocated();
    {
      DataLoader loader(ds, {.batch_size = 1, .num_workers = 2, .prefetch_factor = 2});
      int64_t seen = 0;
      for (Batch& b : loader) {
        EXPECT_EQ(b[1].item<int64_t>(), 0);
        ds->wait_for_calls(5);  // batches 0..4: batch 0 held, four queued or in flight
        EXPECT_EQ(live_loader_threads().load(), 2);
        ++seen;
        break;
      }
      EXPECT_EQ(seen, 1);
      EXPECT_EQ(live_loader_threads().load(), 0);  // joined when the loop's iterator died
      EXPECT_EQ(ds->calls(), 5);                   // nothing started beyond the window
      EXPECT_EQ(memory_allocated(), before);       // queued batches freed
      EXPECT_EQ(memory_by_category().at("data_batch"), 0);
      // The loader is still usable: a full epoch after the break.
      EXPECT_EQ(epoch_labels(loader).size(), 30u);
    }
    EXPECT_EQ(live_loader_threads().load(), 0);
  }
}

TEST(Workers, DestroyingTheLoaderStopsItsEpoch) {
  auto ds = std::make_shared<ProbeDataset>(30);
  int64_t one_batch = 0;  // data_batch bytes of one batch held alone
  {
    DataLoader inline_loader(ds, {.batch_size = 2});
    auto it = inline_loader.begin();
    one_batch = memory_by_category().at("data_batch");
  }
  ASSERT_GT(one_batch, 0);
  auto loader = std::make_unique<DataLoader>(ds, LoaderOptions{.batch_size = 2, .num_workers = 3});
  auto it = loader->begin();
  ds->wait_for_calls(2 * 6 + 2);  // batch 0 held, batches 1..6 (the window) started
  EXPECT_EQ(live_loader_threads().load(), 3);
  loader.reset();
  EXPECT_EQ(live_loader_threads().load(), 0);
  EXPECT_EQ(memory_by_category().at("data_batch"), one_batch);  // queued batches freed, the held one kept
  expect_tensor((*it)[1], {2}, {0, 1});                         // the batch in hand stays valid
  EXPECT_THROW_HAS(++it, RuntimeError, "was destroyed");
}

TEST(Workers, NewEpochMidWayStopsTheOldOne) {
  auto ds = std::make_shared<ProbeDataset>(20);
  DataLoader loader(ds, {.batch_size = 2, .num_workers = 2, .prefetch_factor = 3});
  auto old_epoch = loader.begin();
  ++old_epoch;
  expect_tensor((*old_epoch)[1], {2}, {2, 3});
  ds->wait_for_calls(2 * (2 + 6));             // the old epoch's window is full
  auto fresh = loader.begin();                 // stops the old epoch first
  EXPECT_LE(live_loader_threads().load(), 2);  // only the new epoch's workers
  EXPECT_THROW_HAS(++old_epoch, RuntimeError, "started a new epoch");
  std::vector<std::vector<int64_t>> labels;
  for (; fresh != loader.end(); ++fresh) labels.push_back((*fresh)[1].to_vector<int64_t>());
  ASSERT_EQ(labels.size(), 10u);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(labels[static_cast<size_t>(i)], (std::vector<int64_t>{2 * i, 2 * i + 1}));
  EXPECT_EQ(live_loader_threads().load(), 0);
  // Range-for: break mid-epoch, then a full epoch.
  int64_t n = 0;
  for (Batch& b : loader) {
    (void)b;
    if (++n == 3) break;
  }
  EXPECT_EQ(epoch_labels(loader).size(), 10u);
}

TEST(Workers, TimeoutRaisesAndTheBatchCanStillArrive) {
  auto ds = std::make_shared<ProbeDataset>(4);
  ds->close_gate_from(1);  // batch 1 cannot be built until the gate opens
  // Batch 0 must arrive within the timeout too: 0.25 s is ample for one tiny batch (the one
  // wait in this file that depends on the clock; batch 1's timeout is certain, the gate is shut).
  DataLoader loader(ds, {.num_workers = 1, .timeout = 0.25});
  auto it = loader.begin();
  EXPECT_EQ((*it)[1].item<int64_t>(), 0);
  EXPECT_THROW_MSG(++it, RuntimeError, "DataLoader timed out after 0.25 seconds");
  ds->open_gate();
  ++it;  // waits again for the same batch
  EXPECT_EQ((*it)[1].item<int64_t>(), 1);
  ++it;
  ++it;
  EXPECT_EQ((*it)[1].item<int64_t>(), 3);
  ++it;
  EXPECT_TRUE(it == loader.end());
  DataLoader whole(std::make_shared<ProbeDataset>(2), {.num_workers = 1, .timeout = 5});
  EXPECT_EQ(epoch_labels(whole).size(), 2u);
}

TEST(Workers, HeldBatchIsTaggedDataBatch) {
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{ones({12, 128}), arange(12, kInt64)});
  const int64_t before = memory_allocated();
  DataLoader loader(ds, {.batch_size = 4, .num_workers = 2});
  Batch last;
  for (Batch& b : loader) {
    EXPECT_EQ(memory_category(b[0]), MemoryCategory::DataBatch);
    EXPECT_GE(memory_by_category().at("data_batch"), static_cast<int64_t>(b[0].nbytes()));
    last = b;
  }
  // The epoch is over and its workers joined: the held batch is all that is left.
  EXPECT_EQ(memory_by_category().at("data_batch"), memory_allocated() - before);
  EXPECT_GE(memory_by_category().at("data_batch"), static_cast<int64_t>(last[0].nbytes() + last[1].nbytes()));
  expect_tensor(last[1], {4}, {8, 9, 10, 11});
  last.clear();
  EXPECT_EQ(memory_by_category().at("data_batch"), 0);
}

TEST(Workers, WorkersUseTheGradModeOfTheEpoch) {
  auto ds = std::make_shared<TensorDataset>(std::vector<Tensor>{ones({6, 2}, requires_grad())});
  DataLoader loader(ds, {.batch_size = 2, .num_workers = 2});
  for (Batch& b : loader) EXPECT_TRUE(b[0].requires_grad());
  NoGradGuard no_grad;
  for (Batch& b : loader) EXPECT_FALSE(b[0].requires_grad());
}
