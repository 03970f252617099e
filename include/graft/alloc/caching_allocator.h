#pragma once
/// CachingAllocator: PyTorch's CUDA caching-allocator policy over a RawAllocator, for any
/// device. 512-byte rounding; a small pool (<= 1 MiB requests) carved from 2 MiB segments and
/// a large pool (20 MiB segments for 1-10 MiB requests, 2 MiB-rounded segments above); best
/// fit; splitting and merging of free neighbours; release-and-retry before OutOfMemoryError;
/// max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold; a per-device
/// cap; PyTorch's statistics; a category byte per block; a history ring.
/// Rationale and worked examples: docs/memory.md.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/alloc/alloc_config.h"
#include "graft/alloc/memory_history.h"
#include "graft/alloc/memory_stats.h"
#include "graft/alloc/raw_allocator.h"
#include "graft/core/allocator.h"

namespace graft::alloc {

inline constexpr size_t kMinBlockSize = 512;        ///< every block is a multiple of this
inline constexpr size_t kSmallSize = 1 << 20;       ///< requests up to this use the small pool
inline constexpr size_t kSmallBuffer = 2 << 20;     ///< small-pool segment size
inline constexpr size_t kMinLargeAlloc = 10 << 20;  ///< large requests below this share 20 MiB
inline constexpr size_t kLargeBuffer = 20 << 20;    ///< large-pool segment size for 1-10 MiB
inline constexpr size_t kRoundLarge = 2 << 20;      ///< segments for >= 10 MiB round to this

/// A block of a segment, as memory_snapshot() reports it.
struct BlockInfo {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;
  const char* state = "inactive";  ///< "active_allocated" or "inactive"
  MemoryCategory category = MemoryCategory::Other;
  std::shared_ptr<const AllocContext> context;  ///< op (and frames) of the allocation, if recorded
};
/// A segment (one raw allocation) and its blocks in address order.
struct SegmentInfo {
  uintptr_t address = 0;
  size_t total_size = 0;
  const char* segment_type = "small";  ///< "small" or "large"
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  std::vector<BlockInfo> blocks;
};

/// What an allocation that raised OutOfMemoryError asked for, and the allocator's state then
/// (after it released every cached segment it could).
class CachingAllocator;
struct OomInfo {
  Device device;
  const CachingAllocator* allocator = nullptr;  ///< the allocator that failed
  size_t requested = 0;                         ///< the rounded request
  size_t alloc_size = 0;                        ///< the segment size it needed
  int64_t allocated = 0;                        ///< bytes of live blocks
  int64_t reserved = 0;                         ///< bytes of segments still held
  std::optional<size_t> limit;                  ///< the per-process cap, if any
  std::optional<MemInfo> device_info;           ///< the device's free/total, when known
};
/// Called on every OutOfMemoryError, outside the allocator's lock, before the exception is
/// thrown; what it returns is appended to the exception's message (the leak doctor writes its
/// report and names the file). Must not throw; may allocate host memory but not graft memory.
using OomObserver = std::string (*)(const OomInfo&) noexcept;
/// Installs the process-wide observer (null: none).
void set_oom_observer(OomObserver o) noexcept;

struct Block;
struct Segment;
class BlockPool;
class SpinLock;

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(Device device, std::unique_ptr<RawAllocator> raw, AllocatorConfig config = {});
  /// Returns every cached segment to the raw allocator. If blocks are still handed out, their
  /// state passes to a heir that frees them normally and deletes itself with the last one.
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// A block of at least `nbytes` (0 bytes: a non-null dummy pointer, nothing counted), tagged
  /// with MemoryCategoryGuard::current(). Throws OutOfMemoryError when even a retry after
  /// releasing the cache fails; the allocator and every live block stay as they were.
  DataPtr allocate(size_t nbytes) override;

  Device device() const { return device_; }
  /// The settings in force (a copy: update_config may run concurrently).
  AllocatorConfig config() const;
  /// Applies `key:value,...` settings at run time (PyTorch's _set_allocator_settings); the
  /// backend cannot change once memory has been allocated.
  void update_config(const std::string& conf);
  RawAllocator& raw() { return *raw_; }

  DeviceStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();
  /// Returns every cached block that is a whole segment to the raw allocator.
  void empty_cache();
  /// Segments in address order, each with its blocks.
  std::vector<SegmentInfo> snapshot() const;
  /// Allocated bytes (block sizes) per MemoryCategory, indexed by the enum's value.
  std::array<int64_t, kNumMemoryCategories> bytes_by_category() const;

  /// Caps reserved memory at `fraction` (0..1) of the device's total (PyTorch's
  /// set_per_process_memory_fraction). Throws ValueError outside [0, 1].
  void set_memory_fraction(double fraction);
  /// Caps reserved memory at `bytes`; nullopt removes the cap.
  void set_memory_limit(std::optional<size_t> bytes);
  std::optional<size_t> memory_limit() const;
  /// Free and total memory of the device (the cap, when set, bounds neither).
  MemInfo mem_get_info() const;

  MemoryHistory& history() { return history_; }
  const MemoryHistory& history() const { return history_; }

  /// True when `p` was handed out by a CachingAllocator.
  static bool owns(const DataPtr& p);
  /// Sets the category of the block behind `p` (no-op for memory not from this allocator).
  static void set_category(const DataPtr& p, MemoryCategory c);
  /// The category reported for the block behind `p` (Other for foreign memory).
  static MemoryCategory category(const DataPtr& p);
  /// Counts a SavedVariable holding the block (+1) or letting it go (-1): a block tagged Other
  /// is reported as SavedForBackward while at least one claim is held.
  static void add_saved_claim(const DataPtr& p, int delta);
  /// The block size behind `p` (what memory_allocated counts), or p's own size for foreign
  /// memory (0 when unknown).
  static size_t block_size(const DataPtr& p);
  /// block_size() and category() in one call (the leak doctor asks both at every storage event).
  static std::pair<size_t, MemoryCategory> size_and_category(const DataPtr& p);
  /// Records the creation site and generation of the storage using the block behind `p` (the
  /// leak doctor; reported back with category changes). No-op for foreign memory.
  static void set_lifetime(const DataPtr& p, uint32_t site, uint32_t generation);
  /// The largest single allocation that would succeed now, given the cached free blocks, the
  /// cap and the raw allocator's free memory (the leak doctor's fragmentation report).
  size_t largest_allocation() const;

 private:
  struct OrphanTag {};
  CachingAllocator(CachingAllocator& dying, OrphanTag);  // takes over the state of `dying`
  static void free_ctx(void* ctx);
  Block* malloc_block(size_t orig_size, MemoryCategory cat);
  void free_block_locked(Block* b, const std::shared_ptr<const AllocContext>& ctx);
  void free(Block* b);

  // policy steps, called with the lock held (see caching_allocator.cpp)
  size_t round_size(size_t size) const;
  bool get_free_block(BlockPool& pool, size_t size, Block*& out);
  bool alloc_segment(BlockPool& pool, size_t alloc_size, bool is_retry, Block*& out);
  void reserve_headers();    // keeps spare Block/Segment headers so no step fails half-way
  void on_config_changed();  // recomputes what derives from config_ (max_split_size stat, roundup flag)
  bool release_available_cached_blocks(BlockPool& pool, size_t size);
  void release_cached_blocks();
  void release_pool(BlockPool& pool);
  void release_segment(Block* b);
  void garbage_collect_cached_blocks();
  Block* alloc_found_block(BlockPool& pool, Block* b, size_t size, size_t orig_size, MemoryCategory cat,
                           std::shared_ptr<const AllocContext> ctx);
  bool should_split(const Block* b, size_t size) const;
  size_t try_merge_blocks(Block* dst, Block* src, BlockPool& pool);
  [[noreturn]] void raise_oom(size_t size, size_t alloc_size, std::unique_lock<SpinLock>& lock,
                              const std::shared_ptr<const AllocContext>& ctx);
  /// Records a history event when history is on; never throws (history is diagnostics: a
  /// failure drops the event). The check is inline; the recording is out of line.
  void record(TraceEntry::Action a, uintptr_t addr, size_t size, size_t requested, MemoryCategory cat,
              const std::shared_ptr<const AllocContext>& ctx) noexcept {
    if (__builtin_expect(history_.enabled(), 0)) record_event(a, addr, size, requested, cat, ctx);
  }
  void record_event(TraceEntry::Action a, uintptr_t addr, size_t size, size_t requested, MemoryCategory cat,
                    const std::shared_ptr<const AllocContext>& ctx) noexcept;
  /// history_->gather() when history is on, else (or if that fails) null; never throws.
  std::shared_ptr<const AllocContext> gather_context() const noexcept {
    if (__builtin_expect(!history_.enabled(), 1)) return nullptr;
    return gather_slow();
  }
  std::shared_ptr<const AllocContext> gather_slow() const noexcept;
  Block* new_block();
  void delete_block(Block* b);

  Device device_;
  std::unique_ptr<RawAllocator> raw_;
  AllocatorConfig config_;
  bool roundup_enabled_ = false;  // any roundup_power2_divisions > 1 (skips the lookup when not)
  std::unique_ptr<SpinLock> lock_;
  std::unique_ptr<BlockPool> small_, large_;
  Segment* segments_ = nullptr;    // intrusive list of live segments
  Block* spare_blocks_ = nullptr;  // recycled Block objects (linked through next)
  size_t num_spare_blocks_ = 0;
  Segment* spare_segments_ = nullptr;  // recycled Segment objects (linked through next)
  // On the host a free completes at once: active/active_bytes always equal allocation/
  // allocated_bytes, so stats() derives them instead of the hot path updating them twice.
  // (A CUDA backend with record_stream will need them kept separately.)
  DeviceStats stats_;
  size_t reserved_total_ = 0;    // bytes of all segments (PyTorch's total_allocated_memory)
  std::optional<size_t> limit_;  // the per-device cap (PyTorch's allowed_memory_maximum)
  bool has_allocated_ = false;
  bool orphaned_ = false;  // the owner was destroyed: delete this with the last block
  // the context of the entry point in progress (under the lock), for segment events
  std::shared_ptr<const AllocContext> event_ctx_;
  MemoryHistory history_;  // an heir starts with a fresh one (nobody can read the old)
};

}  // namespace graft::alloc
