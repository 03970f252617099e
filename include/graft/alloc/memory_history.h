#pragma once
/// Memory history: a bounded ring of allocator events (alloc, free, segment alloc/free, OOM),
/// each with the op that caused it and, when asked, a C++ backtrace (PyTorch's
/// _record_memory_history). The op comes from MemoryOpScope, which ops and the autograd
/// engine open around their work; it costs two thread-local stores when history is off.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graft/core/allocator.h"
#include "graft/core/non_copyable.h"

namespace graft::alloc {

/// What caused an allocator event: the innermost op scope and, optionally, the C++ frames.
struct AllocContext {
  std::string op;
  std::vector<void*> frames;
  /// The frames as "function+offset" lines (demangled where possible).
  std::vector<std::string> symbolized_frames() const;
};

/// One event of the history ring.
struct TraceEntry {
  enum class Action : uint8_t { Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, Oom };
  Action action;
  uintptr_t addr;  ///< block or segment address; for Oom, the device's free bytes
  size_t size;     ///< block, segment or (Oom) requested size
  size_t requested_size;
  MemoryCategory category;
  int64_t time_us;  ///< microseconds since the epoch (system clock)
  std::shared_ptr<const AllocContext> context;
};
/// "alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom".
const char* trace_action_name(TraceEntry::Action a);

/// Names the op on whose behalf this thread allocates or frees while the scope lives
/// (innermost wins). `op` must outlive the scope (a string literal, or a node's name).
class MemoryOpScope : graft::detail::NonCopyable {
 public:
  explicit MemoryOpScope(const char* op) noexcept;
  /// Lazily named scope: `namer(obj)` is called only when an event is recorded.
  MemoryOpScope(const void* obj, std::string (*namer)(const void*)) noexcept;
  ~MemoryOpScope();
  /// The innermost scope's op name on this thread ("" outside every scope).
  static std::string current();

 private:
  const char* op_;
  const void* obj_;
  std::string (*namer_)(const void*);
  MemoryOpScope* outer_;
};

/// The ring buffer itself. Thread-safe; the caching allocator records into it under its lock.
class MemoryHistory {
 public:
  /// Starts (or stops) recording; `max_entries` bounds the ring; `cpp_stacks` adds backtraces.
  void configure(bool enabled, size_t max_entries, bool cpp_stacks);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  /// The context for an event happening now (op scope, frames if asked); null when off.
  std::shared_ptr<const AllocContext> gather() const;
  void record(TraceEntry e);
  /// Events oldest first.
  std::vector<TraceEntry> entries() const;
  size_t max_entries() const;
  bool cpp_stacks() const { return cpp_stacks_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> enabled_{false};
  std::atomic<bool> cpp_stacks_{false};
  mutable std::mutex mu_;
  size_t max_entries_ = 0;
  size_t next_ = 0;  // ring position of the next write once full
  std::vector<TraceEntry> ring_;
};

}  // namespace graft::alloc
