#pragma once
/// The allocator's statistics, named and updated as in PyTorch's CUDA caching allocator
/// (reference section 11.4): each array has an `all`, `small_pool` and `large_pool` entry,
/// each entry a {current, peak, allocated, freed} counter.
#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace graft::alloc {

/// One counter: `peak` is the max of `current` since start or reset; `allocated` and `freed`
/// are the sums of all increases and decreases.
struct Stat {
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void increase(int64_t n) {
    current += n;
    allocated += n;
    if (current > peak) peak = current;
  }
  void decrease(int64_t n) {
    current -= n;
    freed += n;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

enum StatType : int { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct DeviceStats {
  StatArray allocation;      ///< handed-out blocks
  StatArray segment;         ///< raw allocations (segments)
  StatArray active;          ///< allocated blocks plus blocks awaiting free
  StatArray inactive_split;  ///< free blocks inside split segments (non-releasable)
  StatArray allocated_bytes;
  StatArray reserved_bytes;
  StatArray active_bytes;
  StatArray inactive_split_bytes;
  StatArray requested_bytes;      ///< the sizes asked for, before rounding
  int64_t num_alloc_retries = 0;  ///< raw allocations retried after releasing the whole cache
  int64_t num_ooms = 0;           ///< OutOfMemoryErrors raised
  int64_t num_sync_all_streams = 0;
  int64_t num_device_alloc = 0;  ///< raw allocate calls that succeeded
  int64_t num_device_free = 0;   ///< raw free calls
  Stat oversize_allocations;     ///< blocks handed out with size >= max_split_size
  Stat oversize_segments;        ///< segments with size >= max_split_size
  int64_t max_split_size = -1;   ///< bytes; -1 when unlimited

  void reset_peak();
  void reset_accumulated();
  /// Flattened with "." as PyTorch's memory_stats(): "allocated_bytes.all.current", ...
  std::map<std::string, int64_t> to_map() const;
};

/// PyTorch's format_size (OOM messages): "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string format_size(uint64_t size);

}  // namespace graft::alloc
