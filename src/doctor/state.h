#pragma once
// Session::State: everything a doctor session records. Guarded by detail::recorder_mutex()
// (the lower layers' events arrive on any thread); step boundaries are serialised by step_mu.
// See docs/notes/doctor.md.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "event_ring.h"
#include "graft/doctor/doctor.h"
#include "light_mutex.h"
#include "object_ledger.h"

namespace graft {
class Node;
class StorageImpl;
class TensorImpl;
}  // namespace graft

namespace graft::doctor {

namespace detail {
LightMutex& recorder_mutex();
Session::State*& active_state();
}  // namespace detail

/// What a timeline event records (its "kind" in the JSON: alloc, free, node_free, backward, step,
/// finding).
enum class EventKind : uint8_t { Alloc, Free, NodeFree, Backward, Step, Finding };
const char* event_kind_name(EventKind kind);

/// One event of the timeline's ring (schema in docs/doctor.md). Recorded for every storage made
/// and freed, so it holds no string of its own and no sequence number (the ring's order gives
/// it): a name and a finding's line are interned strings (Session::State::intern).
struct TimelineEvent {
  int64_t bytes = 0;
  int64_t step = 0;
  double t = 0;                       ///< seconds since the session started (not when deterministic)
  const std::string* name = nullptr;  ///< interned; nullptr: none
  const std::string* line = nullptr;  ///< a line given as text (findings), interned; nullptr: none
  lifetime::SiteId site = 0;          ///< or a site, resolved when the timeline is written
  EventKind kind = EventKind::Step;
  uint8_t category = 0;  ///< alloc, free: the storage's MemoryCategory
};
static_assert(std::is_trivially_copyable_v<TimelineEvent>, "an event is logged at every allocation: no copies");

struct Session::State {
  Session* owner = nullptr;
  Options options;
  std::chrono::steady_clock::time_point started;
  uint32_t start_generation = 0;
  bool watching = false;
  int64_t steps = 0;  ///< steps ended
  Annotator* annotator = nullptr;
  std::unique_ptr<Framework> graft_framework;  ///< graft's own (the object ledger)
  Framework* framework = nullptr;              ///< the one the program runs on (set_framework), else graft's
  Framework& fw() { return framework ? *framework : *graft_framework; }
  int window = 1;
  int accumulation = 1;
  std::vector<std::string> allowed;
  std::vector<Finding> findings;
  std::vector<StepRecord> records;
  /// The last step's peak, as (category, site) -> bytes; peak_report() gives it as text when asked.
  struct PeakSnapshot {
    int64_t step = 0, peak_bytes = 0, start_bytes = 0;
    std::vector<std::tuple<int, lifetime::SiteId, int64_t>> at_peak;  ///< live bytes of each (category, site)
  } last_peak;
  PeakReport peak_report() const;
  std::string last_oom_report;
  std::string stopped;  ///< the error the watched program stopped with ("" : none)
  bool stopped_oom = false;
  std::mutex step_mu;  ///< one boundary at a time (taken before recorder_mutex)
  // the optimizers' steps (Recorder::optimizer_step)
  std::vector<const void*> stepped_this_step;  ///< optimizers that began a step in the current step
  const void* last_optimizer = nullptr;        ///< its finished step ends a doctor step
  const void* previous_finished = nullptr;     ///< the optimizer that finished a step last
  const void* skip_finish = nullptr;           ///< its step began with a boundary: no second one

  // ---- timeline events (a ring) ----
  detail::EventRing<TimelineEvent> events;
  /// Adds an event (time-stamped unless deterministic), the oldest going when the ring is full.
  void log(TimelineEvent e) {
    if (!options.deterministic) e.t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    events.push(e);
  }
  std::unordered_set<std::string> interned;  ///< the events' names (node types, findings' ids)
  const std::string* intern(const std::string& name);

  // ---- evidence rules (LD005, LD006, LD008, LD009, LD010) ----
  struct Evidence {
    Rule rule = Rule::GraphGrowth;
    std::string line, key, message;
    std::vector<Holder> holders;
    std::set<int64_t> steps;  ///< steps the evidence was seen in
    int64_t bytes = 0;
    std::vector<uintptr_t> leaves;  ///< LD008: the parameters (for their holder paths)
    std::vector<lifetime::SiteId> leaf_sites;
    bool reported = false;
  };
  std::map<std::string, Evidence> evidence;
  Evidence& evidence_for(Rule rule, const std::string& line);

  // ---- backward passes (LD009, LD010) ----
  struct BackwardCall {
    int64_t step = 0;
    lifetime::SiteId site = 0;
    bool retain = false;
    bool reused = false;
    int64_t live_retained = 0;
    int64_t retained_saved_bytes = 0;
  };
  std::unordered_map<uint32_t, BackwardCall> backward_calls;  ///< retained passes with live nodes
  uint32_t next_backward_id = 1;
  std::set<int64_t> backward_steps;         ///< steps in which a backward pass ran
  std::set<lifetime::SiteId> sites_reused;  ///< lines whose retained graphs a later pass reached
  lifetime::SiteId current_backward_site = 0;
  struct Wasted {
    int64_t bytes = 0;
    std::map<lifetime::SiteId, int64_t> site_bytes;
  };
  std::map<int64_t, Wasted> wasted;  ///< per step: saved bytes of nodes that died without running

  // ---- the peak of the current step ----
  struct PeakEvent {
    int64_t delta;
    uint8_t category;
    lifetime::SiteId site;
  };
  std::vector<PeakEvent> peak_events;
  std::map<std::pair<int, lifetime::SiteId>, int64_t> live_breakdown;  ///< at the step's start
  void close_peak(int64_t step);

  // ---- growth keys ----
  struct KeyState {
    Rule rule = Rule::GraphGrowth;
    bool carried = false;
    lifetime::SiteId anchor = 0;
    std::string anchor_name;
    std::map<int64_t, int64_t> count;  ///< boundary -> distinct stale steps alive
    std::map<int64_t, int64_t> nodes;  ///< boundary -> nodes alive
    int64_t max_count = 0;
    bool reported = false;
  };
  std::map<std::string, KeyState> keys;
  std::vector<int64_t> observed_boundaries;  ///< boundaries whose key counts are known

  // ---- tensors without a graph (LD011), by the line that made them ----
  struct KeptState {
    std::map<int64_t, int64_t> count;  ///< observed boundary -> distinct past steps alive
    std::map<int64_t, int64_t> bytes;  ///< observed boundary -> their bytes
    bool reported = false;
  };
  std::map<lifetime::SiteId, KeptState> kept;
  std::map<std::string, lifetime::SiteId> kept_key_site;  ///< reported LD011 keys -> their line
  std::vector<std::string> withdrawn;                     ///< sentences on withdrawn LD011 findings
  /// At stop: LD011 findings whose tensors stopped growing (flat over the last 2K observed
  /// boundaries) are withdrawn, with a sentence for the verdict.
  void withdraw_bounded_growth();
  int64_t first_growth_report = 0;  ///< the step of the first growth finding (census backoff)

  // ---- handlers (called with recorder_mutex held) ----
  void on_node_released(const Node& n, const detail::NodeEntry& entry);
  uint32_t on_backward_started(bool retain_graph, bool create_graph, lifetime::SiteId site);
  void on_node_executed(const Node& n, uint32_t backward_id, bool retain_graph);
  void on_stale_gradient(const TensorImpl& leaf, uint32_t streak);
  void on_storage(const StorageImpl& st, bool created, const detail::ObjectEntry& entry);
  void on_recategorized(const void* block, int old_category, int new_category, int64_t bytes, uint32_t site,
                        uint32_t generation);

  /// The step boundary (Session::step): takes locks itself.
  void step_boundary();
};

}  // namespace graft::doctor
