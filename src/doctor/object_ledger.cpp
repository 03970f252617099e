// The object ledger's side tables and per-generation counters. See object_ledger.h and docs/notes/doctor.md.
#include "object_ledger.h"

#include <malloc.h>

#include <thread>

#include "graft/autograd/node.h"
#include "graft/core/storage.h"
#include "graft/core/tensor_impl.h"
#include "graft/doctor/doctor.h"

namespace graft::doctor::detail {

ObjectLedger* const g_object_ledger = new ObjectLedger;

namespace {
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

void SpinLock::wait() noexcept {
  for (;;) {
    for (int spin = 0; spin < 64; ++spin) {
      if (!held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire)) return;
      cpu_relax();
    }
    std::this_thread::yield();  // the holder may be walking a table, or waiting for a core
  }
}

// ---- counters: a table of cells, one per generation, in chunks made on first use ----

ObjectLedger::CounterCell* ObjectLedger::new_counter_cell(uint32_t gen) noexcept {
  uint32_t chunk = gen >> kCounterChunkBits;
  uint32_t index = gen & (kCounterChunk - 1);
  if (chunk >= kMaxCounterChunks) {
    chunk = kMaxCounterChunks - 1;
    index = kCounterChunk - 1;
  }
  CounterCell* c = counter_chunks_[chunk].load(std::memory_order_acquire);
  if (!c) {
    CounterCell* fresh = new (std::nothrow) CounterCell[kCounterChunk]();
    if (!fresh) return nullptr;  // counting is diagnostics: never fail the caller
    if (counter_chunks_[chunk].compare_exchange_strong(c, fresh, std::memory_order_acq_rel))
      c = fresh;
    else
      delete[] fresh;
  }
  return &c[index];
}

// Counts of a generation only go down once later generations exist (objects are counted in the
// generation current when they are made, and a reused AccumulateGrad moves to the current one),
// so the scan starts at the oldest generation that still had live objects last time.
std::vector<GenerationCounts> ObjectLedger::live_generations() {
  std::vector<GenerationCounts> out;
  const uint32_t last = generation();
  const uint32_t first = oldest_live_.load(std::memory_order_relaxed);
  for (uint32_t chunk = first >> kCounterChunkBits; chunk <= (last >> kCounterChunkBits) && chunk < kMaxCounterChunks;
       ++chunk) {
    const CounterCell* c = counter_chunks_[chunk].load(std::memory_order_acquire);
    if (!c) continue;
    for (uint32_t i = 0; i < kCounterChunk; ++i) {
      GenerationCounts g;
      g.generation = (chunk << kCounterChunkBits) | i;
      if (g.generation < first) continue;
      if (g.generation > last) break;
      for (int k = 0; k < kNumKinds; ++k) {
        g.count[k] = c[i].count[k].load(std::memory_order_relaxed);
        g.bytes[k] = c[i].bytes[k].load(std::memory_order_relaxed);
      }
      if (!g.empty()) out.push_back(g);
    }
  }
  // the oldest live generation (or the current one) is where the next scan starts
  uint32_t oldest = out.empty() ? last : out.front().generation;
  uint32_t seen = first;
  while (oldest > seen && !oldest_live_.compare_exchange_weak(seen, oldest, std::memory_order_relaxed)) {
  }
  return out;
}

void ObjectLedger::forget_all() {
  auto uncount = [&](auto& table, Kind kind, auto bytes_of) {
    table.locked([&](const auto& map) {
      for (const auto& [o, e] : map) count(kind, e.generation, -1, bytes_of(e));
    });
    table.clear();
  };
  uncount(nodes, Kind::Node, [](const NodeEntry& e) { return int64_t(e.host_bytes); });
  uncount(tensors, Kind::Tensor, [](const ObjectEntry&) { return int64_t(0); });
  uncount(storages, Kind::Storage, [](const ObjectEntry& e) { return e.bytes; });
  uncount(saved, Kind::SavedSlot, [](const SavedEntry& e) { return e.bytes; });
  forget_leaves();
}

// ---- nodes ----

void ObjectLedger::node_created(const Node& n) {
  if (!recording.load(std::memory_order_relaxed)) return;
  NodeEntry e;
  e.site = lifetime::capture_site();  // before any lock: it may walk Python frames
  e.generation = generation();
  e.seq = next_seq();
  // nodes are always made with new (intrusive_ptr), and Node is the first base of every node
  e.host_bytes = static_cast<uint32_t>(malloc_usable_size(const_cast<Node*>(&n)));
  count(Kind::Node, e.generation, 1, e.host_bytes);
  nodes.insert(&n, e);
}

bool ObjectLedger::node_destroyed(const Node& n, NodeEntry* out) {
  if (!nodes.take(&n, out)) return false;
  count(Kind::Node, out->generation, -1, out->host_bytes);
  return true;
}

void ObjectLedger::node_reused(const Node& n) {
  // a leaf's AccumulateGrad, shared by every graph that uses the leaf, belongs to the newest step
  const uint32_t now = generation();
  uint32_t old = now, bytes = 0;
  const bool tracked = nodes.update(&n, [&](NodeEntry& e) {
    old = e.generation;
    bytes = e.host_bytes;
    e.generation = now;
  });
  if (tracked && old != now) {
    count(Kind::Node, old, -1, bytes);
    count(Kind::Node, now, 1, bytes);
  }
}

// ---- tensors and storages ----

lifetime::SiteId ObjectLedger::site_of_new_tensor(const TensorImpl& t, uint32_t generation) {
  // a tensor made with its storage (the common case) shares the storage's site
  ObjectEntry st;
  const bool fresh_storage =
      t.storage()->use_count() == 1 && storages.get(t.storage().get(), &st) && st.generation == generation && st.site;
  return fresh_storage ? st.site : lifetime::capture_site();
}

bool ObjectLedger::storage_created(const StorageImpl& st, ObjectEntry* out) {
  if (!recording.load(std::memory_order_relaxed)) return false;
  ObjectEntry& e = *out;
  e.site = lifetime::capture_site();
  e.generation = generation();
  e.seq = next_seq();
  e.bytes = static_cast<int64_t>(st.nbytes());
  count(Kind::Storage, e.generation, 1, e.bytes);
  storages.insert(&st, e);
  return true;
}

bool ObjectLedger::storage_destroyed(const StorageImpl& st, ObjectEntry* out) {
  if (!storages.take(&st, out)) return false;
  count(Kind::Storage, out->generation, -1, out->bytes);
  return true;
}

// ---- saved slots: a copy is another slot, a move hands the slot over ----

void ObjectLedger::saved_created(const SavedVariable& sv, int64_t bytes) {
  if (!recording.load(std::memory_order_relaxed)) return;
  const SavedEntry e{generation(), bytes};
  count(Kind::SavedSlot, e.generation, 1, bytes);
  saved.insert(&sv, e);
}

void ObjectLedger::saved_copied(const SavedVariable& from, const SavedVariable& to, bool moved) {
  SavedEntry e;
  if (moved ? !saved.take(&from, &e) : !saved.get(&from, &e)) return;
  if (!moved) count(Kind::SavedSlot, e.generation, 1, e.bytes);
  saved.insert(&to, e);
}

void ObjectLedger::saved_destroyed(const SavedVariable& sv) {
  SavedEntry e;
  if (saved.take(&sv, &e)) count(Kind::SavedSlot, e.generation, -1, e.bytes);
}

// ---- leaves (LD008) ----

void ObjectLedger::gradient_accumulated(const TensorImpl& leaf, const void* before, uint32_t before_version,
                                        const void* after, uint32_t after_version) {
  if (!recording.load(std::memory_order_relaxed)) return;
  note_leaf(&leaf);
  leaves.upsert(&leaf, [&](LeafEntry& e) {
    if (!before) {
      e.carried_over = false;
    } else {
      const bool untouched = e.accum_grad == before && before_version == e.accum_version;
      if (!untouched)
        e.carried_over = false;
      else if (e.leaf_steps > e.accum_leaf_steps)
        e.carried_over = true;
    }
    e.accum_grad = after;
    e.accum_version = after_version;
    e.accum_leaf_steps = e.leaf_steps;
  });
}

uint32_t ObjectLedger::leaf_stepped(const TensorImpl& leaf, const void* grad, uint32_t grad_version,
                                    bool grad_has_graph) {
  if (!recording.load(std::memory_order_relaxed)) return 0;
  uint32_t streak = 0;
  note_leaf(&leaf);
  leaves.upsert(&leaf, [&](LeafEntry& e) {
    // a .grad with a graph (backward(create_graph=True)) accumulating across steps is LD004's
    // cycle, whose fix (p.grad = None) also ends the accumulation: one finding, not two
    const bool stale =
        e.carried_over && grad && grad == e.accum_grad && grad_version == e.accum_version && !grad_has_graph;
    e.stale_steps = stale ? e.stale_steps + 1 : 0;
    e.carried_over = false;
    ++e.leaf_steps;
    streak = e.stale_steps;
  });
  return streak;
}

}  // namespace graft::doctor::detail

namespace graft::doctor {

Origin origin(const TensorImpl& t) {
  const detail::ObjectEntry e = detail::objects().tensors.value(&t);
  return {e.site, e.generation};
}
Origin origin(const StorageImpl& st) {
  const detail::ObjectEntry e = detail::objects().storages.value(&st);
  return {e.site, e.generation};
}
Origin origin(const Node& n) {
  const detail::NodeEntry e = detail::objects().nodes.value(&n);
  return {e.site, e.generation};
}
uint32_t current_generation() { return detail::objects().generation(); }

}  // namespace graft::doctor
