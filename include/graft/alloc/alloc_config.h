#pragma once
/// Allocator settings, parsed from GRAFT_ALLOC_CONF in PyTorch's `key:value,key:value` format
/// (PYTORCH_CUDA_ALLOC_CONF), with PyTorch's error texts. See docs/memory.md for the keys.
#include <array>
#include <cstddef>
#include <limits>
#include <string>

namespace graft::alloc {

enum class Backend : uint8_t {
  Native,  ///< the caching allocator (PyTorch's native backend)
  Malloc,  ///< no caching: every block is its own raw allocation, returned on free
};

struct AllocatorConfig {
  static constexpr size_t kRoundUpPowerOfTwoIntervals = 16;  // 1 MiB .. 64 GiB

  Backend backend = Backend::Native;
  /// Blocks of at least this size are never split ("oversize"); SIZE_MAX: unlimited.
  size_t max_split_size = std::numeric_limits<size_t>::max();
  /// How much bigger than the request an oversize cached block may be and still serve it.
  size_t max_non_split_rounding = 20u << 20;
  /// Divisions per power-of-two interval, interval i starting at 2^i MiB (0: off).
  std::array<size_t, kRoundUpPowerOfTwoIntervals> roundup_power2_divisions{};
  /// 0: off; else in (0, 1): reclaim old cached blocks above this fraction of the cap.
  double garbage_collection_threshold = 0.0;
  bool expandable_segments = false;
  // Accepted for PyTorch compatibility; meaningful only to a CUDA backend.
  bool release_lock_on_cudamalloc = false;
  bool pinned_use_cuda_host_register = false;
  size_t pinned_num_register_threads = 1;

  /// Parses `conf` (an empty string gives the defaults). Throws ValueError/RuntimeError with
  /// PyTorch's message for unknown keys and bad values.
  static AllocatorConfig parse(const std::string& conf);
  /// Applies `conf` on top of this config (PyTorch's _set_allocator_settings).
  void update(const std::string& conf);
  /// The config from the GRAFT_ALLOC_CONF environment variable (defaults when unset).
  static AllocatorConfig from_env();
  /// Divisions for a request of `size` bytes (0 or 1: plain 512-byte rounding).
  size_t divisions_for(size_t size) const;
  /// `key:value,...` of the settings in force (written into snapshots).
  std::string to_string() const;
};

}  // namespace graft::alloc
