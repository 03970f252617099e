#pragma once
/// libtorch's data loader (torch::data::make_data_loader, StatelessDataLoader and its
/// DataLoaderOptions builder): batches of a libtorch-style dataset (graft/data/datasets/base.h)
/// in the order a libtorch sampler gives (graft/data/samplers.h), as the dataset's BatchType
/// (an Example<> after transforms::Stack). With workers(n) > 0, n threads each own a copy of the
/// dataset and build batches ahead (at most max_jobs in flight, 2 * workers by default);
/// batches come back in order. An exception while building a batch reaches the consumer when
/// that batch is asked for. Batch memory is allocated under MemoryCategory::DataBatch.
/// (graft's own data::DataLoader, over graft::data::Dataset, is in graft/data/dataloader.h.)
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "graft/core/allocator.h"
#include "graft/core/error.h"
#include "graft/data/datasets/base.h"
#include "graft/data/samplers.h"

namespace graft::data {

/// libtorch's DataLoaderOptions: `DataLoaderOptions().batch_size(64).workers(2)`.
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch's
#define GRAFT_LOADER_OPTION(T, name, init)           \
 public:                                             \
  DataLoaderOptions& name(T value) {                 \
    name##_ = value;                                 \
    return *this;                                    \
  }                                                  \
  const T& name() const noexcept { return name##_; } \
                                                     \
 private:                                            \
  T name##_ = init
  GRAFT_LOADER_OPTION(size_t, batch_size, 1);
  GRAFT_LOADER_OPTION(size_t, workers, 0);
  GRAFT_LOADER_OPTION(std::optional<size_t>, max_jobs, std::nullopt);
  GRAFT_LOADER_OPTION(std::optional<std::chrono::milliseconds>, timeout, std::nullopt);
  GRAFT_LOADER_OPTION(bool, enforce_ordering, true);
  GRAFT_LOADER_OPTION(bool, drop_last, false);
#undef GRAFT_LOADER_OPTION
};

namespace detail {
/// The worker threads of a StatelessDataLoader epoch: job k (a batch's indices) is built by a
/// worker's own dataset copy into slot k; the consumer takes slots in order.
template <typename Batch>
struct LoaderJobs {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<size_t>> requests;  ///< job k's indices (filled up front by the consumer)
  size_t next_job = 0;                        ///< the next job a worker takes
  size_t in_flight_limit = 0;                 ///< jobs beyond consumed + limit wait
  size_t consumed = 0;
  std::map<size_t, Batch> done;
  std::map<size_t, std::exception_ptr> failed;
  bool stop = false;
};
}  // namespace detail

/// Iterates a dataset in batches, one epoch per begin() (libtorch's StatelessDataLoader).
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(options) {
    GRAFT_CHECK(options_.batch_size() > 0, ValueError, "batch_size must be positive");
  }
  ~StatelessDataLoader() { stop_workers(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  /// An input iterator over one epoch's batches.
  class Iterator {
   public:
    Iterator(StatelessDataLoader* loader, std::optional<BatchType> batch) : loader_(loader), batch_(std::move(batch)) {}
    BatchType& operator*() { return *batch_; }
    BatchType* operator->() { return &*batch_; }
    Iterator& operator++() {
      batch_ = loader_->next_batch();
      return *this;
    }
    bool operator==(const Iterator& other) const { return batch_.has_value() == other.batch_.has_value(); }

   private:
    StatelessDataLoader* loader_;
    std::optional<BatchType> batch_;
  };
  /// Starts an epoch: the sampler is reset and the first batch built.
  Iterator begin() {
    start_epoch();
    return Iterator(this, next_batch());
  }
  Iterator end() { return Iterator(this, std::nullopt); }
  const DataLoaderOptions& options() const noexcept { return options_; }

 private:
  // The epoch's index batches, from the sampler (the last one dropped when short and drop_last).
  std::vector<std::vector<size_t>> epoch_requests() {
    sampler_.reset(dataset_.size());
    std::vector<std::vector<size_t>> out;
    while (auto indices = sampler_.next(options_.batch_size())) {
      if (indices->empty() || (options_.drop_last() && indices->size() < options_.batch_size())) break;
      out.push_back(std::move(*indices));
    }
    return out;
  }
  void start_epoch() {
    stop_workers();
    requests_ = epoch_requests();
    position_ = 0;
    if (options_.workers() == 0) return;
    jobs_ = std::make_shared<detail::LoaderJobs<BatchType>>();
    jobs_->requests = requests_;
    jobs_->in_flight_limit = options_.max_jobs().value_or(2 * options_.workers());
    for (size_t w = 0; w < options_.workers(); ++w)
      threads_.emplace_back([jobs = jobs_, dataset = dataset_]() mutable { work(*jobs, dataset); });
  }
  static void work(detail::LoaderJobs<BatchType>& jobs, Dataset& dataset) {
    MemoryCategoryGuard category(MemoryCategory::DataBatch);
    for (;;) {
      size_t k;
      {
        std::unique_lock lock(jobs.mutex);
        jobs.changed.wait(lock, [&] {
          return jobs.stop || jobs.next_job >= jobs.requests.size() ||
                 jobs.next_job < jobs.consumed + jobs.in_flight_limit;
        });
        if (jobs.stop || jobs.next_job >= jobs.requests.size()) return;
        k = jobs.next_job++;
      }
      std::optional<BatchType> batch;
      std::exception_ptr error;
      try {
        batch.emplace(dataset.get_batch(jobs.requests[k]));
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(jobs.mutex);
      if (error)
        jobs.failed[k] = error;
      else
        jobs.done.emplace(k, std::move(*batch));
      jobs.changed.notify_all();
    }
  }
  std::optional<BatchType> next_batch() {
    if (position_ >= requests_.size()) return std::nullopt;
    const size_t k = position_++;
    if (!jobs_) {
      MemoryCategoryGuard category(MemoryCategory::DataBatch);
      return dataset_.get_batch(requests_[k]);
    }
    return take(k);
  }
  std::optional<BatchType> take(size_t k) {
    std::unique_lock lock(jobs_->mutex);
    const auto ready = [&] { return jobs_->done.count(k) || jobs_->failed.count(k); };
    if (options_.timeout()) {
      if (!jobs_->changed.wait_for(lock, *options_.timeout(), ready))
        throw RuntimeError(graft::detail::str("Timeout in DataLoader::next()"));
    } else {
      jobs_->changed.wait(lock, ready);
    }
    jobs_->consumed = k + 1;
    jobs_->changed.notify_all();
    if (auto f = jobs_->failed.find(k); f != jobs_->failed.end()) {
      std::exception_ptr error = f->second;
      jobs_->failed.erase(f);
      std::rethrow_exception(error);
    }
    auto it = jobs_->done.find(k);
    BatchType batch = std::move(it->second);
    jobs_->done.erase(it);
    return batch;
  }
  void stop_workers() {
    if (jobs_) {
      {
        std::lock_guard lock(jobs_->mutex);
        jobs_->stop = true;
      }
      jobs_->changed.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    jobs_.reset();
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
  std::vector<std::vector<size_t>> requests_;
  size_t position_ = 0;
  std::shared_ptr<detail::LoaderJobs<BatchType>> jobs_;
  std::vector<std::thread> threads_;
};

/// What a libtorch-style loader needs of a sampler (graft/data/samplers.h).
template <typename S>
concept LibtorchSampler = requires(S s) {
  s.reset(std::nullopt);
  s.next(size_t{1});
};

/// A loader over `dataset` with the given sampler (libtorch's make_data_loader).
template <typename Dataset, LibtorchSampler Sampler>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options = {}) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler), options);
}
/// A loader over `dataset` with a Sampler built over its size (RandomSampler by default);
/// `options` may be a batch size.
template <LibtorchSampler Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = {}) {
  const std::optional<size_t> size = dataset.size();
  GRAFT_CHECK(size.has_value(), ValueError, "Expected the dataset to be sized in order to construct the Sampler");
  Sampler sampler(static_cast<int64_t>(*size));
  return make_data_loader(std::move(dataset), std::move(sampler), options);
}

}  // namespace graft::data
