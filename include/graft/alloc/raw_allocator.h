#pragma once
/// Raw allocators: where the caching allocator gets whole segments from (PyTorch's cudaMalloc
/// layer). Small on purpose: allocate, free, and an optional free/total query. The policy
/// (rounding, pools, splitting, statistics) lives in CachingAllocator. See docs/memory.md.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace graft::alloc {

/// Free and total bytes of a device, as cudaMemGetInfo reports them.
struct MemInfo {
  size_t free = 0;
  size_t total = 0;
};

/// The raw memory of one device.
class RawAllocator {
 public:
  virtual ~RawAllocator() = default;
  /// `nbytes` (> 0) of memory aligned to 64 bytes, or nullptr when the device has none left.
  virtual void* allocate(size_t nbytes) = 0;
  /// Returns memory from allocate(); `nbytes` is the size it was allocated with.
  virtual void free(void* ptr, size_t nbytes) = 0;
  /// Free and total memory of the device, when the device can tell.
  virtual std::optional<MemInfo> mem_info() const { return std::nullopt; }
  /// A short name for messages ("host", "host page-locked", "test").
  virtual const char* name() const = 0;
};

/// Host memory: 64-byte aligned blocks from malloc. With `page_locked`, each block is also
/// locked in RAM (mlock), as later CUDA copies need; failure to lock counts as no memory.
class HostRawAllocator final : public RawAllocator {
 public:
  explicit HostRawAllocator(bool page_locked = false) : page_locked_(page_locked) {}
  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  /// Total: physical RAM; free: MemAvailable from /proc/meminfo (or free RAM from sysinfo).
  std::optional<MemInfo> mem_info() const override;
  const char* name() const override { return page_locked_ ? "host page-locked" : "host"; }
  bool page_locked() const { return page_locked_; }

 private:
  bool page_locked_;
};

/// The `meta` device's memory: addresses that are never backed by anything. Each allocate
/// returns a fresh 64-byte aligned range of a reserved address space that no host pointer
/// uses, so the caching allocator's rounding, pooling, splitting and statistics run exactly as
/// on a real device while nothing is allocated (graft.utils.memory.estimate relies on it).
/// Never dereference what it returns. No free/total: the device has no capacity of its own.
class MetaRawAllocator final : public RawAllocator {
 public:
  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  const char* name() const override { return "meta"; }

 private:
  std::atomic<uintptr_t> next_{uintptr_t{1} << 62};  // above any user-space address
};

/// For tests: host memory that can be told to fail at the N-th allocate call or when live
/// bytes would pass a cap, and that counts calls and live bytes. mem_info reports the cap
/// as the total when one is set, else the host's memory.
class TestRawAllocator final : public RawAllocator {
 public:
  void* allocate(size_t nbytes) override;
  void free(void* ptr, size_t nbytes) override;
  std::optional<MemInfo> mem_info() const override;
  const char* name() const override { return "test"; }

  /// The `n`-th allocate call from now (1 = the next one) fails; 0 disarms.
  void fail_at_call(int64_t n);
  /// Every allocate call fails from now on (until allow_all()).
  void fail_always();
  /// Allocations that would take live bytes above `cap` fail; nullopt removes the cap.
  void set_cap(std::optional<size_t> cap);
  /// Disarms every failure rule.
  void allow_all();

  int64_t alloc_calls() const { return alloc_calls_.load(); }
  int64_t free_calls() const { return free_calls_.load(); }
  int64_t failed_calls() const { return failed_calls_.load(); }
  size_t live_bytes() const { return live_bytes_.load(); }

 private:
  HostRawAllocator host_;
  mutable std::mutex mu_;
  std::optional<size_t> cap_;
  int64_t fail_countdown_ = 0;  // > 0: fail when it reaches 1
  bool fail_always_ = false;
  std::atomic<int64_t> alloc_calls_{0}, free_calls_{0}, failed_calls_{0};
  std::atomic<size_t> live_bytes_{0};
};

}  // namespace graft::alloc
