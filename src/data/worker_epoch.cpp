// An epoch loaded by worker threads. Worker w builds batches w, w + W, w + 2W, ... (W workers;
// a fixed assignment, so an error names the same worker every run). A worker may start batch
// i only while i < next + W * prefetch_factor, where `next` is the batch the consumer waits
// for: at most W * prefetch_factor batches are being built or queued. Finished batches wait
// in `ready_` until the consumer takes them in order. One mutex guards the shared state;
// workers sleep on `work_cv_` (the window moved, or stop), the consumer on `ready_cv_`.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "epoch_run.h"
#include "graft/core/error.h"

namespace graft::data::detail {

namespace {

// Seconds as Python's str(float) writes them ("5.0", "0.05"), for the timeout message.
std::string python_float(double seconds) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, seconds);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

class WorkerEpoch final : public EpochRun {
 public:
  WorkerEpoch(EpochPlan plan, int64_t num_workers, int64_t prefetch_factor, double timeout)
      : plan_(std::move(plan)),
        num_batches_(static_cast<int64_t>(plan_.batches.size())),
        num_workers_(num_workers),
        window_(num_workers * std::min<int64_t>(prefetch_factor, std::max<int64_t>(num_batches_, 1))),
        timeout_(timeout) {
    try {
      threads_.reserve(static_cast<size_t>(num_workers));
      for (int64_t w = 0; w < num_workers; ++w) threads_.emplace_back([this, w] { work(w); });
    } catch (...) {
      stop();
      throw;
    }
  }
  ~WorkerEpoch() override { stop(); }

  std::optional<Batch> next() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_ || next_ >= num_batches_) return std::nullopt;
    auto arrived = [this] { return ready_.count(next_) != 0; };
    if (timeout_ > 0) {
      GRAFT_CHECK(ready_cv_.wait_for(lock, std::chrono::duration<double>(timeout_), arrived), RuntimeError,
                  "DataLoader timed out after ", python_float(timeout_), " seconds");
    } else {
      ready_cv_.wait(lock, arrived);
    }
    auto node = ready_.extract(next_);
    ++next_;
    lock.unlock();
    work_cv_.notify_all();  // the window moved: the worker owning batch next_ + window - 1 may start
    if (node.mapped().error) std::rethrow_exception(node.mapped().error);
    return std::move(node.mapped().batch);
  }

  void stop() noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
    std::map<int64_t, Result> unclaimed;  // freed outside the lock
    std::lock_guard<std::mutex> lock(mu_);
    unclaimed.swap(ready_);
  }

 private:
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  void work(int64_t worker) {
    for (int64_t i = worker; i < num_batches_; i += num_workers_) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stopping_ || i < next_ + window_; });
        if (stopping_) return;
      }
      Result result;
      try {
        result.batch = build_batch(plan_, static_cast<size_t>(i));
      } catch (...) {
        result.error = wrap_worker_error(std::current_exception(), worker);
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) return;  // the batch is dropped by `result`'s destructor
        ready_.emplace(i, std::move(result));
      }
      ready_cv_.notify_one();
    }
  }

  const EpochPlan plan_;
  const int64_t num_batches_;
  const int64_t num_workers_;
  const int64_t window_;
  const double timeout_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable ready_cv_;
  std::map<int64_t, Result> ready_;   // built, not yet returned (guarded by mu_)
  int64_t next_ = 0;                  // the next batch to return (guarded by mu_)
  bool stopping_ = false;             // guarded by mu_
  std::vector<std::thread> threads_;  // touched by the consumer thread only
};

}  // namespace

std::shared_ptr<EpochRun> make_worker_epoch(EpochPlan plan, int64_t num_workers, int64_t prefetch_factor,
                                            double timeout) {
  return std::make_shared<WorkerEpoch>(std::move(plan), num_workers, prefetch_factor, timeout);
}

}  // namespace graft::data::detail
