#pragma once
// SpinLock: the object ledger's lock. See docs/notes/doctor.md ("The object ledger").
#include <atomic>

namespace graft::doctor::detail {

/// The side tables' lock: held for a few dozen instructions by the thread that makes or destroys
/// an object, and for a whole walk by the doctor at a step boundary. Taking it uncontended is
/// one atomic exchange (a std::mutex is a call into pthreads each way, a tenth of what an object
/// costs the counters tier); a waiter spins briefly, then yields its core.
class SpinLock {
 public:
  [[gnu::always_inline]] void lock() noexcept {  // (not a call: it is on every object's path)
    if (!held_.exchange(true, std::memory_order_acquire)) return;
    wait();
  }
  [[gnu::always_inline]] void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  void wait() noexcept;
  std::atomic<bool> held_{false};
};

}  // namespace graft::doctor::detail
