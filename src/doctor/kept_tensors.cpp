// Kept tensors: live tensors without a graph made in past steps of the session (kept predictions,
// metrics, caches), grouped by the line that made them; graft's own from its object ledger. LD011's evidence: a group
// that keeps tensors from ever more past steps. See docs/notes/doctor.md ("Tensors without a graph").
#include <algorithm>
#include <unordered_set>

#include "graft/alloc/caching_allocator.h"
#include "internal.h"
#include "object_ledger.h"

namespace graft::doctor::detail {

namespace {

/// A tensor the rule is about: no graph, not a leaf that requires grad (a parameter), not a
/// parameter's, a gradient's or the optimizer's storage, and not saved by a live graph (the graph rules' part).
bool is_kept_candidate(const TensorImpl& t, const std::unordered_set<uintptr_t>& graph_storages) {
  if (t.grad_fn || t.requires_grad_leaf) return false;
  const StorageImpl* st = t.storage().get();
  if (!st || graph_storages.count(reinterpret_cast<uintptr_t>(st))) return false;
  const MemoryCategory c = alloc::CachingAllocator::category(st->data_ptr());
  return c != MemoryCategory::Parameter && c != MemoryCategory::Gradient && c != MemoryCategory::OptimizerState;
}

}  // namespace

std::vector<KeptTensor> take_kept_tensors(uint32_t start_generation, int64_t current_step,
                                          const std::unordered_set<uintptr_t>& graph_storages) {
  std::vector<KeptTensor> out;
  objects().tensors.locked([&](const RecordedTensors::View& tensors) {
    for (const auto& [t, entry] : tensors) {
      if (t->use_count() == 0) continue;  // being destroyed
      const int64_t step = step_of(entry.generation, start_generation);
      if (step == 0 || step >= current_step || !is_kept_candidate(*t, graph_storages)) continue;
      const StorageImpl* st = t->storage().get();
      KeptTensor k;
      k.handle.tensor = reinterpret_cast<uintptr_t>(t);
      k.handle.site = entry.site;
      k.handle.step = step;
      k.handle.shape.assign(t->sizes().begin(), t->sizes().end());
      k.storage = reinterpret_cast<uintptr_t>(st);
      k.bytes = static_cast<int64_t>(st->nbytes());
      k.order = entry.seq;
      out.push_back(std::move(k));
    }
  });
  return out;
}

KeptTensors group_kept(const std::vector<KeptTensor>& tensors) {
  KeptTensors out;
  std::map<lifetime::SiteId, std::unordered_set<uintptr_t>> storages;  // counted once per group
  for (const KeptTensor& k : tensors) {
    const lifetime::SiteId site = k.handle.site;
    KeptGroup& g = out.groups[site];
    g.site = site;
    g.steps.insert(k.handle.step);
    ++g.tensors;
    if (storages[site].insert(k.storage).second) g.bytes += k.bytes;
    g.handles.push_back({k.order, k.handle});
  }
  for (auto& [site, g] : out.groups) {  // the newest first, a few of them (the holders' search)
    constexpr size_t kHandles = 8;
    std::sort(g.handles.begin(), g.handles.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    if (g.handles.size() > kHandles) g.handles.resize(kHandles);
  }
  return out;
}

}  // namespace graft::doctor::detail
