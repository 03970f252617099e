// graft's own framework for the doctor: what is alive and since which step, from the object
// ledger (counts by generation, the census, kept tensors), and memory from the caching allocator.
// The other framework is PyTorch, answered by the Python layer (python/graft/doctor/_torch.py).
// See docs/notes/doctor.md ("Frameworks").
#include <memory>
#include <shared_mutex>

#include "graft/autograd/autograd.h"
#include "graft/autograd/graph_walk.h"
#include "graft/memory.h"
#include "internal.h"
#include "object_ledger.h"

namespace graft::doctor::detail {

namespace {

/// While alive, no backward pass of another thread runs its nodes (or releases what they saved);
/// nothing when this thread runs a backward pass itself (a step ended inside a hook).
class NoBackward {
 public:
  NoBackward() : lock_(autograd::graph_walk_mutex(), std::defer_lock) {
    if (autograd::current_graph_task_id() < 0) lock_.lock();
  }

 private:
  std::unique_lock<std::shared_mutex> lock_;
};

class GraftFramework final : public Framework {
 public:
  explicit GraftFramework(uint32_t start_generation) : start_generation_(start_generation) {}

  std::string name() const override { return "graft"; }

  /// Adds up the ledger's live generations (nodes, saved slots, host bytes, what is stale) and
  /// the allocator's bytes by category.
  void count(int64_t, StepRecord& rec) override {
    const uint32_t current = objects().generation();
    for (const GenerationCounts& c : objects().live_generations()) {
      const int64_t node = c.count[int(Kind::Node)], slot = c.count[int(Kind::SavedSlot)];
      rec.graph_nodes += node;
      rec.saved_slots += slot;
      rec.saved_bytes += c.bytes[int(Kind::SavedSlot)];
      rec.graph_host_bytes += c.bytes[int(Kind::Node)];
      if (c.generation < current) {
        rec.stale_nodes += node;
        rec.stale_saved_slots += slot;
        if (node + slot > 0) ++rec.stale_generations;
      }
    }
    for (auto [name, bytes] : memory_by_category(kCPU)) rec.bytes_by_category[name] = bytes;
    rec.reserved = memory_reserved(kCPU);
  }

  Census census(int64_t step, std::shared_ptr<void>& keep) override {
    auto pinned = std::make_shared<PinnedCensus>();
    {
      NoBackward no_backward;
      *pinned = take_census(start_generation_, step);
    }
    Census out = std::move(pinned->census);
    keep = pinned;  // its pins: the handles' tensors
    return out;
  }

  std::vector<KeptTensor> kept_tensors(int64_t step, const std::unordered_set<uintptr_t>& graph_storages) override {
    NoBackward no_backward;
    return take_kept_tensors(start_generation_, step, graph_storages);
  }

  std::vector<std::string> memory_sentences() override {
    std::vector<std::string> out = ledger(kCPU).sentences();
    out.emplace_back();
    for (std::string& s : fragmentation(kCPU).sentences()) out.push_back(std::move(s));
    return out;
  }

 private:
  uint32_t start_generation_;
};

}  // namespace

std::unique_ptr<Framework> make_graft_framework(uint32_t start_generation) {
  return std::make_unique<GraftFramework>(start_generation);
}

}  // namespace graft::doctor::detail
