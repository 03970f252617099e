#pragma once
/// DataLoader: batches of a Dataset in sampler order, loaded in the calling thread or by a
/// pool of worker threads that prefetch (PyTorch's torch.utils.data.DataLoader, map-style
/// datasets with automatic batching).
///
///   auto ds = std::make_shared<data::TensorDataset>(std::vector<Tensor>{x, y});
///   data::DataLoader loader(ds, {.batch_size = 32, .shuffle = true, .seed = 0, .num_workers = 2});
///   for (data::Batch& b : loader) { Tensor xb = b[0], yb = b[1]; ... }   // one epoch
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>

#include "graft/data/collate.h"
#include "graft/data/dataset.h"
#include "graft/data/sampler.h"

namespace graft::data {

namespace detail {
class EpochRun;
}

/// The options of a DataLoader, PyTorch's keyword arguments (designated initializers read
/// like them: `{.batch_size = 4, .drop_last = true}`). (libtorch's chainable DataLoaderOptions,
/// of make_data_loader, is in graft/data/stateless_loader.h.)
struct LoaderOptions {
  /// Samples per batch.
  int64_t batch_size = 1;
  /// Visit the samples in a new random order every epoch (a RandomSampler).
  bool shuffle = false;
  /// Drop the last batch when it is smaller than batch_size.
  bool drop_last = false;
  /// A custom index order (mutually exclusive with shuffle).
  std::shared_ptr<Sampler> sampler = nullptr;
  /// Custom index batches (mutually exclusive with batch_size, shuffle, sampler, drop_last).
  std::shared_ptr<BatchSamplerBase> batch_sampler = nullptr;
  /// Seeds the shuffle (PyTorch's `generator`): the same seed gives the same epochs. Without
  /// it each epoch is seeded from graft's default generator (graft::manual_seed). Used only
  /// with shuffle.
  std::optional<uint64_t> seed = std::nullopt;
  /// Builds a batch from its samples; empty means default_collate.
  CollateFn collate_fn = nullptr;
  /// Worker threads that build batches ahead of the consumer; 0 loads in the calling thread.
  int64_t num_workers = 0;
  /// Batches in flight per worker (unset: 2 when num_workers > 0). At most
  /// num_workers * prefetch_factor batches are being built or waiting at any time.
  std::optional<int64_t> prefetch_factor = std::nullopt;
  /// Copy batches into page-locked memory for fast host-to-device copies. graft has no CUDA
  /// backend yet, so, as PyTorch without an accelerator, the flag has no effect: batches are
  /// returned as they are (not pinned) and the first epoch warns (PyTorch 2.x's UserWarning
  /// text, through graft::autograd::warn).
  bool pin_memory = false;
  /// Seconds to wait for a batch from the workers before RuntimeError "DataLoader timed out
  /// after 5.0 seconds"; 0 waits forever. Used only with num_workers > 0, as in PyTorch.
  double timeout = 0;
};

/// Iterates a dataset in batches. Each begin() starts one epoch: the batch sampler is asked
/// for the epoch's index batches, then batches come back in that order whatever num_workers
/// is. With num_workers > 0, the workers are threads sharing the dataset (its get() must be
/// thread-safe); worker w builds batches w, w + num_workers, ... (get() of each index, then
/// collate_fn), and the consumer receives them in order. Batch memory is allocated under
/// MemoryCategory::DataBatch, so memory_by_category() reports it as "data_batch".
///
/// An exception in a worker reaches the consumer where that batch would have been returned,
/// as the same graft error type (any other exception becomes RuntimeError) with the message
/// "Caught ValueError in DataLoader worker 1: <original message>"; with num_workers == 0 the
/// original exception propagates unchanged. Either way the failed batch is consumed: ++ again
/// continues with the next batch.
///
/// Stopping early (leaving the loop, destroying the iterator or the loader, calling begin()
/// again mid-epoch) stops the workers, joins their threads and frees the queued batches; an
/// iterator whose epoch was stopped that way by the loader raises RuntimeError on ++.
/// Stopping waits for a get() or collate_fn call already running in a worker to return (a
/// thread cannot be interrupted), then discards its batch. One loader is used by one consumer
/// thread at a time.
class DataLoader {
 public:
  /// A position in one epoch; move-only (it owns the epoch's workers). Dereferencing gives
  /// the current batch, which stays valid until ++ or the iterator's destruction.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    /// The end iterator.
    Iterator() = default;
    Iterator(Iterator&& other) noexcept;
    Iterator& operator=(Iterator&& other) noexcept;
    Iterator(const Iterator&) = delete;
    Iterator& operator=(const Iterator&) = delete;
    /// Stops this epoch's workers (joins them) if the epoch is not finished.
    ~Iterator();

    /// The current batch (RuntimeError at the end, or after a failed ++).
    Batch& operator*();
    Batch* operator->() { return &**this; }
    /// Fetches the next batch, waiting for the workers if needed. Rethrows a worker's
    /// exception for that batch (see DataLoader); RuntimeError when the loader stopped this
    /// epoch, or on timeout.
    Iterator& operator++();
    /// Iterators are equal when both are at the end.
    bool operator==(const Iterator& other) const { return at_end() == other.at_end(); }
    bool at_end() const { return run_ == nullptr; }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<detail::EpochRun> run);
    void fetch();
    void finish();

    std::shared_ptr<detail::EpochRun> run_;
    Batch current_;
    bool has_current_ = false;
  };

  /// Validates the options in PyTorch's order, with its messages (ValueError):
  /// "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.",
  /// "timeout option should be non-negative", prefetch_factor without workers,
  /// "sampler option is mutually exclusive with shuffle",
  /// "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last",
  /// then the samplers' own checks (batch_size > 0, ...). ValueError for a null dataset.
  DataLoader(std::shared_ptr<Dataset> dataset, LoaderOptions options = {});
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  DataLoader(DataLoader&& other) noexcept = default;
  /// Stops this loader's running epoch first.
  DataLoader& operator=(DataLoader&& other) noexcept;
  /// Stops a running epoch (joins its workers).
  ~DataLoader();

  /// Starts a new epoch (stopping one still running) and returns an iterator at its first
  /// batch (end() for an empty epoch); an error building the first batch is thrown here.
  Iterator begin();
  Iterator end() { return Iterator(); }
  /// Batches per epoch: ceil(N / batch_size), or floor with drop_last (the batch sampler's size).
  int64_t size() const { return batch_sampler_->size(); }

  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }
  const LoaderOptions& options() const { return options_; }
  /// The batch sampler in use (the custom one, or BatchSampler over the sampler).
  const std::shared_ptr<BatchSamplerBase>& batch_sampler() const { return batch_sampler_; }

 private:
  void stop_running_epoch() noexcept;

  std::shared_ptr<Dataset> dataset_;
  LoaderOptions options_;
  std::shared_ptr<BatchSamplerBase> batch_sampler_;
  std::weak_ptr<detail::EpochRun> running_;
  bool warned_pin_memory_ = false;
};

}  // namespace graft::data
