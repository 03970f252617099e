#pragma once
/// Memory statistics and control, named as PyTorch's torch.cuda memory API, for every device
/// (the CPU included). All of them read the device's caching allocator.
/// See docs/memory.md: allocated vs reserved vs non-releasable, the settings, the snapshot
/// schema.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graft/alloc/caching_allocator.h"
#include "graft/core/tensor.h"

namespace graft {

/// The caching allocator of `device` (throws for a device this build cannot use).
alloc::CachingAllocator& device_allocator(Device device = kCPU);

/// Every statistic, flattened and sorted by key: "allocated_bytes.all.current",
/// "segment.small_pool.peak", "num_ooms", ... (reference section 11.4).
std::map<std::string, int64_t> memory_stats(Device device = kCPU);
/// Bytes of blocks handed out (block sizes, so a 4-byte tensor counts 512).
int64_t memory_allocated(Device device = kCPU);
int64_t max_memory_allocated(Device device = kCPU);
/// Bytes of segments the allocator holds (allocated + cached).
int64_t memory_reserved(Device device = kCPU);
int64_t max_memory_reserved(Device device = kCPU);
/// Every peak := current.
void reset_peak_memory_stats(Device device = kCPU);
/// Every allocated/freed total := 0, and the num_* counters := 0.
void reset_accumulated_memory_stats(Device device = kCPU);
/// Returns every cached whole segment to the system. Never touches live tensors; free pieces
/// of partly used segments (non-releasable memory) stay.
void empty_cache(Device device = kCPU);
/// PyTorch's memory_summary table (2.x layout), titled with the device.
std::string memory_summary(Device device = kCPU, bool abbreviated = false);
/// The same table for a memory_stats()-shaped map (e.g. from a private CachingAllocator).
std::string format_memory_summary(const std::map<std::string, int64_t>& stats, Device device, bool abbreviated);
/// Segments with their blocks, sizes, states and categories, in address order.
std::vector<alloc::SegmentInfo> memory_snapshot(Device device = kCPU);
/// Live bytes per owner category, keyed by memory_category_name(): "parameter", "gradient",
/// "saved_for_backward", "optimizer_state", "data_batch", "other". Sums to memory_allocated.
std::map<std::string, int64_t> memory_by_category(Device device = kCPU);
/// Tags the memory behind `t` as owned by `c` (for the whole storage, views included).
void set_memory_category(const Tensor& t, MemoryCategory c);
/// The category reported for the memory behind `t`.
MemoryCategory memory_category(const Tensor& t);
/// Caps reserved memory at `fraction` of the device's total; allocations beyond it raise
/// OutOfMemoryError. ValueError outside [0, 1].
void set_per_process_memory_fraction(double fraction, Device device = kCPU);
/// The same cap in bytes; nullopt removes it.
void set_per_process_memory_limit(std::optional<int64_t> bytes, Device device = kCPU);
/// (free, total) bytes of the device.
std::pair<int64_t, int64_t> mem_get_info(Device device = kCPU);
/// Starts or stops recording allocator events (alloc, free, segment alloc/free, OOM) in a
/// ring of at most `max_entries`, each with its op and, with `cpp_stacks`, a C++ backtrace.
void record_memory_history(bool enabled, size_t max_entries = 100000, bool cpp_stacks = false, Device device = kCPU);
/// The snapshot and the history as JSON (schema "graft.memory_snapshot", version 1;
/// docs/memory.md).
std::string memory_snapshot_json(Device device = kCPU);
/// Writes memory_snapshot_json() to `path` (through a temporary file: an existing file is
/// replaced only by a complete snapshot). Throws RuntimeError naming the path on failure.
void dump_snapshot(const std::string& path, Device device = kCPU);
/// Applies `key:value,...` settings at run time (PyTorch's _set_allocator_settings).
void set_allocator_settings(const std::string& settings, Device device = kCPU);
/// "native" (caching) or "malloc".
std::string allocator_backend(Device device = kCPU);

/// What estimate_memory measured on the meta device, in bytes.
struct MemoryEstimate {
  int64_t peak_allocated = 0;                  ///< max_memory_allocated(kMeta) over the steps (what was live counts)
  int64_t peak_reserved = 0;                   ///< max_memory_reserved(kMeta): the segments a device must have
  int64_t allocated_before = 0;                ///< live bytes when the steps began
  int64_t allocated_after = 0;                 ///< ... and when they ended
  std::map<std::string, int64_t> by_category;  ///< live bytes per owner at the end
  int steps = 1;
};
/// Runs `step` `steps` times on the meta device (tensors with sizes and no data, through the
/// same caching-allocator policy as the CPU's) and returns the memory a real run would take:
/// empties the meta allocator's cache, resets its peaks and makes meta the default device while
/// the steps run (restored on return or throw). Tensors the step uses must be on meta (build
/// them after set_default_device(kMeta), or move them with .to(kMeta)). A step that reads values
/// throws PyTorch's NotImplementedError for the meta backend. graft.utils.memory.estimate in
/// Python; see docs/memory.md, "Estimating a step".
MemoryEstimate estimate_memory(const std::function<void()>& step, int steps = 1);

}  // namespace graft
