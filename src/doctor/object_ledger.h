#pragma once
// The object ledger: the leak doctor's side tables. What the doctor knows of each graph node,
// storage and saved slot made while it watched (the step that made it, its creation line, the
// backward pass that retained it) is kept here, keyed by the object's address, and not in the
// objects; tensors, made most often, carry their entry in their ObserverSlot (recorded_tensors.h). The
// lower layers only report creations and destructions (include/graft/core/lifetime.h) and the
// recorder (session.cpp) keeps these records up to date. Also the per-generation counters that
// make a step boundary cheap. See docs/notes/doctor.md ("The object ledger").
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "address_table.h"
#include "graft/core/lifetime.h"
#include "recorded_tensors.h"
#include "spin_lock.h"

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

/// Entries of one kind of object, keyed by address, in an AddressTable (entries live in the
/// table's own array: making or destroying an object allocates nothing) under one lock. An
/// object's entry is removed when the object reports its destruction, which waits while a walk
/// (locked()) holds the lock: a walker may read the objects it finds, but must not drop
/// references to graft objects or make new ones (that would wait for itself).
template <class T, class E>
class SideTable {
 public:
  using Map = AddressTable<T, E>;
  explicit SideTable(std::atomic<int64_t>& total) : total_(total) {}
  void insert(const T* o, const E& e) {
    std::lock_guard<SpinLock> g(mu_);
    auto [entry, fresh] = map_.try_emplace(o);
    *entry = e;
    if (fresh) total_.fetch_add(1, std::memory_order_relaxed);
  }
  /// Removes `o`'s entry into `*out`; false when it has none.
  bool take(const T* o, E* out) {
    std::lock_guard<SpinLock> g(mu_);
    if (!map_.erase(o, out)) return false;
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
    std::lock_guard<SpinLock> g(mu_);
    const E* e = map_.find(o);
    if (!e) return false;
    *out = *e;
    return true;
  }
  /// Calls fn(E&) on `o`'s entry, if any; returns whether it had one.
  template <class F>
  bool update(const T* o, F&& fn) {
    std::lock_guard<SpinLock> g(mu_);
    E* e = map_.find(o);
    if (!e) return false;
    fn(*e);
    return true;
  }
  /// Calls fn(E&) on `o`'s entry, made (default) when it has none, under one lock.
  template <class F>
  void upsert(const T* o, F&& fn) {
    std::lock_guard<SpinLock> g(mu_);
    auto [e, fresh] = map_.try_emplace(o);
    if (fresh) total_.fetch_add(1, std::memory_order_relaxed);
    fn(*e);
  }
  /// Calls fn(const Map&) holding the lock (see the class comment).
  template <class F>
  decltype(auto) locked(F&& fn) const {
    std::lock_guard<SpinLock> g(mu_);
    return fn(map_);
  }
  void clear() {
    std::lock_guard<SpinLock> g(mu_);
    total_.fetch_sub(static_cast<int64_t>(map_.size()), std::memory_order_relaxed);
    map_.clear();
  }
  /// Gives back slots unused since the last trim (AddressTable::trim).
  void trim() {
    std::lock_guard<SpinLock> g(mu_);
    map_.trim();
  }

 private:
  mutable SpinLock mu_;
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
  RecordedTensors tensors;
  SideTable<StorageImpl, ObjectEntry> storages;
  SideTable<SavedVariable, SavedEntry> saved;
  SideTable<TensorImpl, LeafEntry> leaves;
  /// Gives back the tables' slots unused since the last call (at step boundaries, and once the
  /// last recorded object is gone).
  void trim_tables() {
    nodes.trim();
    storages.trim();
    saved.trim();
    leaves.trim();
  }
  /// Gives back every table's slots (once no recorded object is left: the tables are empty).
  void release_tables() {
    nodes.clear();
    tensors.clear();
    storages.clear();
    saved.clear();
    leaves.clear();
  }
  /// Forgets the leaves' gradient histories (a session's own).
  void forget_leaves() {
    leaves.clear();
    for (auto& word : leaf_filter_) word.store(0, std::memory_order_relaxed);
  }

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
  // (inline: every tensor made or destroyed while a session records comes here)
  void tensor_created(const TensorImpl& t) {
    if (!recording.load(std::memory_order_relaxed)) return;
    ObjectEntry e;
    e.generation = generation();
    e.seq = next_seq();
    if (lifetime::tier() == lifetime::Tier::Sites) e.site = site_of_new_tensor(t, e.generation);
    count(Kind::Tensor, e.generation, 1, 0);
    tensors.insert(&t, e);
  }
  void tensor_destroyed(const TensorImpl& t) {
    ObjectEntry e;
    if (tensors.take(&t, &e)) count(Kind::Tensor, e.generation, -1, 0);
    if (may_be_leaf(&t)) leaves.take(&t, nullptr);
  }
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
  // Which tensors may have a leaf entry: a bit per address hash, set when an entry is made, so
  // that the destruction of every other tensor (all but the parameters) skips the leaf table.
  // A bit is set before its entry is made and cleared only when the table is emptied.
  static constexpr size_t kLeafFilterWords = 64;
  std::atomic<uint64_t> leaf_filter_[kLeafFilterWords] = {};
  static size_t leaf_bit(const void* t) noexcept { return (address_hash(t) >> 7) % (64 * kLeafFilterWords); }
  void note_leaf(const void* t) noexcept {
    const size_t bit = leaf_bit(t);
    leaf_filter_[bit / 64].fetch_or(uint64_t{1} << (bit % 64), std::memory_order_relaxed);
  }
  bool may_be_leaf(const void* t) const noexcept {
    const size_t bit = leaf_bit(t);
    return leaf_filter_[bit / 64].load(std::memory_order_relaxed) & (uint64_t{1} << (bit % 64));
  }
  lifetime::SiteId site_of_new_tensor(const TensorImpl& t, uint32_t generation);
  uint64_t next_seq() noexcept { return seq_.fetch_add(1, std::memory_order_relaxed) + 1; }
  /// Adds `n` objects of `bytes` each to generation `gen`'s cell (bytes 0: only the count).
  void count(Kind kind, uint32_t gen, int64_t n, int64_t bytes) noexcept {
    if (CounterCell* c = counter_cell(gen)) {
      c->count[int(kind)].fetch_add(n, std::memory_order_relaxed);
      if (bytes) c->bytes[int(kind)].fetch_add(n * bytes, std::memory_order_relaxed);
    }
  }
  /// The cells of the generations, in chunks of kCounterChunk made on first use.
  struct CounterCell {
    std::atomic<int64_t> count[kNumKinds];
    std::atomic<int64_t> bytes[kNumKinds];
  };
  static constexpr uint32_t kCounterChunkBits = 10;
  static constexpr uint32_t kCounterChunk = 1u << kCounterChunkBits;
  static constexpr uint32_t kMaxCounterChunks = 1u << 14;  // 16 M generations; later ones share the last cell
  std::atomic<CounterCell*> counter_chunks_[kMaxCounterChunks] = {};
  CounterCell* counter_cell(uint32_t gen) noexcept {
    const uint32_t chunk = gen >> kCounterChunkBits;
    if (chunk < kMaxCounterChunks)
      if (CounterCell* c = counter_chunks_[chunk].load(std::memory_order_acquire)) return &c[gen & (kCounterChunk - 1)];
    return new_counter_cell(gen);
  }
  CounterCell* new_counter_cell(uint32_t gen) noexcept;
};

/// The process's ledger (made while the library loads, never destroyed: objects may die during
/// exit). Only an installed observer (a session) reads it, never a static initializer.
extern ObjectLedger* const g_object_ledger;
inline ObjectLedger& objects() { return *g_object_ledger; }

}  // namespace graft::doctor::detail
