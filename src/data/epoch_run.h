#pragma once
// Private to src/data: one epoch of a DataLoader being loaded, in the calling thread
// (inline_epoch.cpp) or by worker threads (worker_epoch.cpp).
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "graft/data/collate.h"
#include "graft/data/dataset.h"

namespace graft::data::detail {

/// Everything an epoch needs, fixed when it starts.
struct EpochPlan {
  std::shared_ptr<const Dataset> dataset;
  CollateFn collate;
  std::vector<std::vector<int64_t>> batches;  // the batch sampler's index batches, in order
  bool grad_enabled = true;                   // the grad mode of the thread that started the epoch
};

/// Gets every sample of batch `batch_index` of the plan and collates them, allocating under
/// MemoryCategory::DataBatch on the calling thread.
Batch build_batch(const EpochPlan& plan, size_t batch_index);

/// Hands out one epoch's batches in order. Used from one consumer thread.
class EpochRun {
 public:
  virtual ~EpochRun() = default;
  /// The next batch in order, nullopt after the last. A batch whose building failed throws
  /// its error, and counts as returned.
  virtual std::optional<Batch> next() = 0;
  /// Stops loading: joins any worker thread and frees batches not yet returned. Idempotent.
  virtual void stop() noexcept = 0;
  /// stop(), marking the run as stopped by its loader (a new epoch began, or the loader died).
  void cancel() noexcept {
    cancelled_ = true;
    stop();
  }
  bool cancelled() const { return cancelled_; }

 private:
  bool cancelled_ = false;
};

/// Builds each batch on the consumer thread when it is asked for (num_workers == 0).
std::shared_ptr<EpochRun> make_inline_epoch(EpochPlan plan);
/// Starts `num_workers` threads that build batches ahead, at most num_workers *
/// prefetch_factor in flight; next() waits at most `timeout` seconds (0: no limit).
std::shared_ptr<EpochRun> make_worker_epoch(EpochPlan plan, int64_t num_workers, int64_t prefetch_factor,
                                            double timeout);

/// The exception the consumer sees for `error` raised in worker `worker`: the same graft
/// error type (RuntimeError for anything else) with "Caught <Type> in DataLoader worker <w>: <what>".
std::exception_ptr wrap_worker_error(std::exception_ptr error, int64_t worker) noexcept;

}  // namespace graft::data::detail
