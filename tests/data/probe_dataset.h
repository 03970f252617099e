#pragma once
// Datasets for the data-layer tests that record how they are called: how many get() calls,
// from how many live worker threads, how far ahead of the consumer, with optional failures,
// slowness and a gate that holds get() back until the test opens it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "graft/data/data.h"
#include "support/test_util.h"

namespace graft::data::testing {

/// Threads other than the test's main thread that have called ProbeDataset::get and not yet
/// exited (a thread_local object's destructor runs when its thread exits, before join returns).
inline std::atomic<int>& live_loader_threads() {
  static std::atomic<int> n{0};
  return n;
}
inline const std::thread::id& main_thread_id() {
  static const std::thread::id id = std::this_thread::get_id();
  return id;
}
inline void track_this_thread() {
  struct Tracker {
    Tracker() { ++live_loader_threads(); }
    ~Tracker() { --live_loader_threads(); }
  };
  if (std::this_thread::get_id() == main_thread_id()) return;
  thread_local Tracker tracker;
  (void)tracker;
}

/// Sample i is {tensor([i, 10 i]) float32, tensor(i) int64}.
class ProbeDataset : public Dataset {
 public:
  explicit ProbeDataset(int64_t n) : n_(n) { (void)main_thread_id(); }

  Sample get(int64_t index) const override {
    track_this_thread();
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_;
      indices_.insert(index);
      max_lead_ = std::max(max_lead_, index - consumed.load());
    }
    called_.notify_all();
    if (slow_) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // slowness only, never sync
    if (gate_from_ && index >= *gate_from_) {
      std::unique_lock<std::mutex> lock(mu_);
      gate_cv_.wait(lock, [&] { return gate_open_; });
    }
    if (fail_at_ && index == *fail_at_) {
      if (fail_with_std_) throw std::out_of_range("sample " + std::to_string(index) + " is missing");
      throw ValueError("bad sample " + std::to_string(index));
    }
    return {tensor({static_cast<double>(index), 10.0 * static_cast<double>(index)}), scalar_tensor(index, kInt64)};
  }
  int64_t size() const override { return n_; }

  // ---- configuration (before iterating) ----
  void fail_at(int64_t index, bool with_std_exception = false) {
    fail_at_ = index;
    fail_with_std_ = with_std_exception;
  }
  void set_slow() { slow_ = true; }
  /// get(i) for i >= index waits until open_gate().
  void close_gate_from(int64_t index) { gate_from_ = index; }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      gate_open_ = true;
    }
    gate_cv_.notify_all();
  }

  // ---- observation ----
  int64_t calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  int64_t max_lead() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_lead_;
  }
  std::set<int64_t> indices() const {
    std::lock_guard<std::mutex> lock(mu_);
    return indices_;
  }
  /// Blocks until get() has been called at least `n` times (a condition variable, no polling).
  void wait_for_calls(int64_t n) const {
    std::unique_lock<std::mutex> lock(mu_);
    called_.wait(lock, [&] { return calls_ >= n; });
  }
  /// Batches the consumer has received so far; get() records index - consumed.
  mutable std::atomic<int64_t> consumed{0};

 private:
  int64_t n_;
  std::optional<int64_t> fail_at_;
  bool fail_with_std_ = false;
  bool slow_ = false;
  std::optional<int64_t> gate_from_;
  mutable std::mutex mu_;
  mutable std::condition_variable called_;
  mutable std::condition_variable gate_cv_;
  mutable bool gate_open_ = false;
  mutable int64_t calls_ = 0;
  mutable int64_t max_lead_ = std::numeric_limits<int64_t>::min();
  mutable std::set<int64_t> indices_;
};

/// The int64 labels (field 1) of every batch of one epoch.
inline std::vector<std::vector<int64_t>> epoch_labels(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (Batch& b : loader) out.push_back(b.at(1).to_vector<int64_t>());
  return out;
}

}  // namespace graft::data::testing
