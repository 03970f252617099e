#pragma once
// LightMutex: the recorder's lock. See docs/notes/doctor.md ("Layers", "Threads and locks").
#include <atomic>

namespace graft::doctor::detail {

/// A mutex whose uncontended lock and unlock are one atomic operation each (a std::mutex is a
/// call into pthreads each way: about 50 instructions a pair, taken at every storage event the
/// doctor records). Contended, a waiter sleeps in the kernel (std::atomic::wait, a futex on
/// Linux) as a std::mutex's would: the step boundary holds this lock for milliseconds, so
/// waiters must not spin. Not recursive. The three states are the classic futex mutex's:
/// free, held, held with (possible) sleepers.
class LightMutex {
 public:
  void lock() noexcept {
    int expected = kFree;
    if (state_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire, std::memory_order_relaxed)) return;
    lock_contended();
  }
  bool try_lock() noexcept {
    int expected = kFree;
    return state_.compare_exchange_strong(expected, kHeld, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    if (state_.exchange(kFree, std::memory_order_release) == kSleepers) state_.notify_one();
  }

 private:
  static constexpr int kFree = 0, kHeld = 1, kSleepers = 2;
  void lock_contended() noexcept {
    // mark the lock as having sleepers before sleeping, so that its unlock wakes one; a waiter
    // that gets it this way leaves it marked (a spurious wake-up at worst, never a lost one)
    while (state_.exchange(kSleepers, std::memory_order_acquire) != kFree)
      state_.wait(kSleepers, std::memory_order_relaxed);
  }
  std::atomic<int> state_{kFree};
};

}  // namespace graft::doctor::detail
