#pragma once
// The object ledger: the leak doctor's side tables. What the doctor knows of each graph node, tensor,
// storage and saved slot made while it watched (the step that made it, its creation line, the
// backward pass that retained it) is kept here, keyed by the object's address, and not in the
// objects: the lower layers only report creations and destructions (include/graft/core/lifetime.h)
// and the recorder (session.cpp) keeps these tables up to date. Also the per-generation counters
// that make a step boundary cheap. See docs/notes/doctor.md ("The object ledger").
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "graft/core/lifetime.h"

namespace graft::doctor::detail {

/// The kinds of objects counted per generation.
enum class Kind : uint8_t { Node = 0, SavedSlot, Storage, Tensor };
inline constexpr int kNumKinds = 4;

/// Live objects and bytes of one generation.
struct GenerationCounts {
  uint32_t generation = 0;
  int64_t count[kNumKinds] = {};
  int64_t bytes[kNumKinds] = {};
  bool empty() const {
    for (int k = 0; k < kNumKinds; ++k)
      if (count[k] != 0) return false;
    return true;
  }
};

/// What the doctor knows of a tensor or storage made while it watched.
struct ObjectEntry {
  uint32_t generation = 0;    ///< the generation (steps seen) in which it was made
  lifetime::SiteId site = 0;  ///< its creation line (0 below tier Sites)
  uint64_t seq = 0;           ///< creation order: walks sort by it, so reports come out the same
  int64_t bytes = 0;          ///< a storage's bytes (0 for a tensor)
};

/// What the doctor knows of a graph node made while it watched.
struct NodeEntry : ObjectEntry {
  uint32_t host_bytes = 0;   ///< the node's heap block
  uint32_t retained_by = 0;  ///< the last tracked backward pass that ran it with retain_graph
  bool executed = false;     ///< a tracked backward pass ran it
};

/// A saved-for-backward slot made while the doctor watched.
struct SavedEntry {
  uint32_t generation = 0;
  int64_t bytes = 0;
};

/// A leaf's gradient history, for the missing-zero_grad check (LD008).
struct LeafEntry {
  const void* accum_grad = nullptr;  ///< the .grad last accumulated into (identity only)
  uint32_t accum_version = 0;        ///< its version right after that accumulation
  uint32_t leaf_steps = 0;           ///< optimizer steps that updated the leaf
  uint32_t accum_leaf_steps = 0;     ///< leaf_steps at the last accumulation
  uint32_t stale_steps = 0;          ///< consecutive steps that used a gradient carried over a step
  bool carried_over = false;         ///< .grad holds gradients from before the leaf's last step
};

/// Entries of one kind of object, keyed by address, under one mutex. An object's entry is
/// removed when the object reports its destruction, which waits while a walk (locked()) holds
/// the mutex: a walker may read the objects it finds, but must not drop references to graft
/// objects or make new ones (that would wait for itself).
template <class T, class E>
class SideTable {
 public:
  using Map = std::unordered_map<const T*, E>;
  explicit SideTable(std::atomic<int64_t>& total) : total_(total) {}
  void insert(const T* o, const E& e) {
    std::lock_guard<std::mutex> g(mu_);
    if (map_.insert_or_assign(o, e).second) total_.fetch_add(1, std::memory_order_relaxed);
  }
  /// Removes `o`'s entry into `*out`; false when it has none.
  bool take(const T* o, E* out) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(o);
    if (it == map_.end()) return false;
    if (out) *out = it->second;
    map_.erase(it);
    total_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  /// `o`'s entry, or a default one (generation 0, site 0) when it has none.
  E value(const T* o) const {
    E e{};
    get(o, &e);
    return e;
  }
  /// Copies `o`'s entry into `*out`; false when it has none.
  bool get(const T* o, E* out) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(o);
    if (it == map_.end()) return false;
    *out = it->second;
    return true;
  }
  /// Calls fn(E&) on `o`'s entry, if any; returns whether it had one.
  template <class F>
  bool update(const T* o, F&& fn) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(o);
    if (it == map_.end()) return false;
    fn(it->second);
    return true;
  }
  /// Calls fn(E&) on `o`'s entry, made (default) when it has none, under one lock.
  template <class F>
  void upsert(const T* o, F&& fn) {
    std::lock_guard<std::mutex> g(mu_);
    auto [it, fresh] = map_.try_emplace(o);
    if (fresh) total_.fetch_add(1, std::memory_order_relaxed);
    fn(it->second);
  }
  /// Calls fn(const Map&) holding the lock (see the class comment).
  template <class F>
  decltype(auto) locked(F&& fn) const {
    std::lock_guard<std::mutex> g(mu_);
    return fn(map_);
  }
  void clear() {
    std::lock_guard<std::mutex> g(mu_);
    total_.fetch_sub(static_cast<int64_t>(map_.size()), std::memory_order_relaxed);
    map_.clear();
  }

 private:
  mutable std::mutex mu_;
  Map map_;
  std::atomic<int64_t>& total_;
};

/// The doctor's tables and counters (one per process, never destroyed: objects may report
/// their destruction during exit).
class ObjectLedger {
  std::atomic<int64_t> total_{0};  // entries in all tables (first: the tables count into it)

 public:
  ObjectLedger() : nodes(total_), tensors(total_), storages(total_), saved(total_), leaves(total_) {}

  SideTable<Node, NodeEntry> nodes;
  SideTable<TensorImpl, ObjectEntry> tensors;
  SideTable<StorageImpl, ObjectEntry> storages;
  SideTable<SavedVariable, SavedEntry> saved;
  SideTable<TensorImpl, LeafEntry> leaves;

  /// True while a session watches: new objects get entries. Once it stops, entries of objects
  /// still alive stay until those objects die (a report after the session still walks them).
  std::atomic<bool> recording{false};
  /// Entries in all tables.
  int64_t entries() const { return total_.load(std::memory_order_relaxed); }
  /// Forgets every entry and uncounts it (the entries cannot be trusted: an observer installed
  /// over the recorder kept it from hearing of destructions).
  void forget_all();

  // ---- recording objects (called by the recorder) ----
  void node_created(const Node& n);
  /// Forgets `n` into `*out` and uncounts it; false when it had no entry.
  bool node_destroyed(const Node& n, NodeEntry* out);
  void node_reused(const Node& n);
  void tensor_created(const TensorImpl& t);
  void tensor_destroyed(const TensorImpl& t);
  /// Records `st` into `*out`; false while no session records.
  bool storage_created(const StorageImpl& st, ObjectEntry* out);
  /// Forgets `st` into `*out`; false when it had no entry.
  bool storage_destroyed(const StorageImpl& st, ObjectEntry* out);
  void saved_created(const SavedVariable& sv, int64_t bytes);
  void saved_copied(const SavedVariable& from, const SavedVariable& to, bool moved);
  void saved_destroyed(const SavedVariable& sv);
  void gradient_accumulated(const TensorImpl& leaf, const void* before, uint32_t before_version, const void* after,
                            uint32_t after_version);
  uint32_t leaf_stepped(const TensorImpl& leaf, const void* grad, uint32_t grad_version, bool grad_has_graph);

  // lookups: the tables' value() (a default entry for objects made while the doctor did not watch)

  // ---- generations and their counters ----
  /// The current generation (steps seen since the process started).
  uint32_t generation() const noexcept { return generation_.load(std::memory_order_relaxed); }
  /// Starts the next generation; returns it.
  uint32_t advance_generation() noexcept { return generation_.fetch_add(1, std::memory_order_relaxed) + 1; }
  /// Every generation with live counted objects, oldest first.
  std::vector<GenerationCounts> live_generations();

 private:
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint64_t> seq_{0};
  std::atomic<uint32_t> oldest_live_{0};
  uint64_t next_seq() noexcept { return seq_.fetch_add(1, std::memory_order_relaxed) + 1; }
  void count(Kind kind, uint32_t gen, int64_t count, int64_t bytes) noexcept;
};

ObjectLedger& objects();

}  // namespace graft::doctor::detail
