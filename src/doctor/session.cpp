// The doctor's session: the recorder that the lower layers report to, the step boundary
// (census, growth verdict, rules), and the findings. See docs/notes/doctor.md.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <type_traits>
#include <unordered_map>

#include "graft/alloc/caching_allocator.h"
#include "graft/autograd/node.h"
#include "graft/core/error.h"
#include "graft/core/storage.h"
#include "graft/memory.h"
#include "internal.h"
#include "object_ledger.h"
#include "state.h"

namespace graft::doctor {

namespace detail {

LightMutex& recorder_mutex() {
  static LightMutex* mu = new LightMutex;  // never destroyed: objects may die during exit
  return *mu;
}
Session::State*& active_state() {
  static Session::State* s = nullptr;
  return s;
}

namespace {

/// Calls `handle(state)` under the recorder lock when a session watches; otherwise, or when
/// it throws, returns a value-initialized result (diagnostics never fail the program).
template <class F>
std::invoke_result_t<F&, Session::State&> deliver(F&& handle) noexcept {
  using Result = std::invoke_result_t<F&, Session::State&>;
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  Session::State* s = active_state();
  if (!s) return Result();
  try {
    return handle(*s);
  } catch (...) {
    return Result();
  }
}

/// Uninstalls the recorder once no session watches and no object it recorded is alive (after a
/// session, the objects it saw keep their entries until they die: a report still walks them).
void retire_drained() noexcept;
inline void retire_if_drained() noexcept {  // on every destruction: the common case inline
  if (objects().recording.load(std::memory_order_relaxed) || objects().entries() != 0) return;
  retire_drained();
}
void retire_drained() noexcept {
  // try: a destruction may run where the lock is held; the next one retires the recorder then
  std::unique_lock<detail::LightMutex> g(recorder_mutex(), std::try_to_lock);
  if (g.owns_lock() && !active_state() && !objects().recording.load(std::memory_order_relaxed) &&
      objects().entries() == 0) {
    lifetime::set_observer(nullptr);
    objects().release_tables();  // empty: their slots go back
  }
}

/// The lower layers' events: objects go to the object ledger, the rest to the session that watches
/// (if any). One per process: events may arrive from any thread at any time, also after a
/// session ended.
class Recorder final : public lifetime::Observer {
 public:
  void node_created(const Node& n) noexcept override { objects().node_created(n); }
  void node_destroyed(const Node& n) noexcept override {
    NodeEntry e;
    if (!objects().node_destroyed(n, &e)) return;
    deliver([&](Session::State& s) { s.on_node_released(n, e); });
    retire_if_drained();
  }
  void node_reused(const Node& n) noexcept override { objects().node_reused(n); }
  void tensor_created(const TensorImpl& t) noexcept override { objects().tensor_created(t); }
  void tensor_destroyed(const TensorImpl& t) noexcept override {
    objects().tensor_destroyed(t);
    retire_if_drained();
  }
  void storage_created(const StorageImpl& st) noexcept override {
    ObjectEntry e;
    if (!objects().storage_created(st, &e)) return;
    deliver([&](Session::State& s) { s.on_storage(st, true, e); });
  }
  void storage_destroyed(const StorageImpl& st) noexcept override {
    ObjectEntry e;
    if (!objects().storage_destroyed(st, &e)) return;
    deliver([&](Session::State& s) { s.on_storage(st, false, e); });
    retire_if_drained();
  }
  void saved_created(const SavedVariable& sv, int64_t bytes) noexcept override { objects().saved_created(sv, bytes); }
  void saved_copied(const SavedVariable& from, const SavedVariable& to, bool moved) noexcept override {
    objects().saved_copied(from, to, moved);
  }
  void saved_destroyed(const SavedVariable& sv) noexcept override {
    objects().saved_destroyed(sv);
    retire_if_drained();
  }
  void gradient_accumulated(const TensorImpl& leaf, const TensorImpl* before, uint32_t before_version,
                            const TensorImpl& after, uint32_t after_version) noexcept override {
    objects().gradient_accumulated(leaf, before, before_version, &after, after_version);
  }
  uint32_t leaf_stepped(const TensorImpl& leaf, const TensorImpl* grad, uint32_t grad_version,
                        bool grad_has_graph) noexcept override {
    return objects().leaf_stepped(leaf, grad, grad_version, grad_has_graph);
  }
  uint32_t backward_started(bool retain_graph, bool create_graph) noexcept override {
    const lifetime::SiteId site = lifetime::capture_site();  // before the lock: it may walk frames
    return deliver([&](Session::State& s) { return s.on_backward_started(retain_graph, create_graph, site); });
  }
  void node_executed(const Node& n, uint32_t backward_id, bool retain_graph) noexcept override {
    if (!objects().nodes.update(&n, [](NodeEntry& e) { e.executed = true; })) return;
    if (n.is_accumulator()) return;  // shared by every graph of its leaf: says nothing of reuse
    deliver([&](Session::State& s) { s.on_node_executed(n, backward_id, retain_graph); });
  }
  void stale_gradient_used(const TensorImpl& leaf, uint32_t streak) noexcept override {
    deliver([&](Session::State& s) { s.on_stale_gradient(leaf, streak); });
  }
  void storage_recategorized(const void* block, int old_category, int new_category, int64_t bytes, uint32_t site,
                             uint32_t generation) noexcept override {
    deliver([&](Session::State& s) { s.on_recategorized(block, old_category, new_category, bytes, site, generation); });
  }
  void optimizer_step(const void* optimizer, bool finished) noexcept override {
    // Steps follow the optimizers (docs/notes/doctor.md, "Steps"): a step ends when the
    // iteration's last optimizer finishes its step. Until an optimizer steps twice within a step,
    // that is the first optimizer ever to finish (one optimizer: every step() ends a step; a
    // GAN's two: once per iteration). An optimizer about to step a second time within one step
    // shows the pattern changed (a second training stage's new optimizer, a probe that steps
    // rarely): the step ends there, and the optimizer that finished just before becomes the last.
    Session* session = nullptr;
    {
      std::lock_guard<detail::LightMutex> g(recorder_mutex());
      Session::State* s = active_state();
      if (!s || !s->options.step_on_optimizer) return;
      auto& seen = s->stepped_this_step;
      if (!finished) {
        if (std::find(seen.begin(), seen.end(), optimizer) == seen.end()) {
          seen.push_back(optimizer);
          return;
        }
        s->last_optimizer = s->previous_finished;
        s->skip_finish = optimizer;  // this step already ended the doctor's step
      } else {
        s->previous_finished = optimizer;
        if (s->skip_finish == optimizer) {
          s->skip_finish = nullptr;
          return;
        }
        if (!s->last_optimizer) s->last_optimizer = optimizer;
        if (optimizer != s->last_optimizer) return;
      }
      session = s->owner;
    }
    try {
      session->step();
    } catch (...) {  // a failing diagnosis never fails the optimizer step
    }
    // after a boundary taken before an update, the optimizer is not recorded as stepping in the
    // new step: its next step() finds it unseen, and its end (it is now the last) ends the step
  }
};

Recorder& recorder() {
  static Recorder* r = new Recorder;
  return *r;
}

std::string oom_observer_text(const alloc::OomInfo& info) noexcept {
  try {
    std::string path;
    {
      std::lock_guard<detail::LightMutex> g(recorder_mutex());
      Session::State* s = active_state();
      if (!s) return {};
      path = s->options.oom_report_path;
    }
    std::string text = oom_report(info);
    {
      std::lock_guard<detail::LightMutex> g(recorder_mutex());
      if (Session::State* s = active_state()) s->last_oom_report = text;
    }
    if (path.empty()) return "\n\ngraft.doctor:\n" + text;
    std::ofstream f(path, std::ios::trunc);
    f << text;
    return f ? "\n\ngraft.doctor wrote its report to " + path + "\n" + text : "\n\ngraft.doctor:\n" + text;
  } catch (...) {
    return {};
  }
}

}  // namespace
}  // namespace detail

using detail::format_bytes;
using detail::NodeEntry;
using detail::ObjectEntry;
using detail::objects;
using detail::step_of;
using detail::where;

// ---------------------------------------------------------------- State: event handlers

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Alloc:
      return "alloc";
    case EventKind::Free:
      return "free";
    case EventKind::NodeFree:
      return "node_free";
    case EventKind::Backward:
      return "backward";
    case EventKind::Step:
      return "step";
    case EventKind::Finding:
      return "finding";
  }
  return "";
}

const std::string* Session::State::intern(const std::string& name) {
  return name.empty() ? nullptr : &*interned.insert(name).first;
}

void Session::State::on_node_released(const Node& n, const NodeEntry& entry) {
  const int64_t step = step_of(entry.generation, start_generation);
  if (step <= 0) return;
  // LD009: a graph retained by a backward pass dies; was it reached again?
  if (uint32_t r = entry.retained_by) {
    auto it = backward_calls.find(r);
    if (it != backward_calls.end() && --it->second.live_retained <= 0) {
      const BackwardCall& b = it->second;
      if (!b.reused && !sites_reused.count(b.site)) {
        const std::string line = where(b.site);
        Evidence& e = evidence_for(Rule::RetainGraphUnused, line);
        e.steps.insert(b.step);
        e.bytes = std::max(e.bytes, b.retained_saved_bytes);
        e.message = "backward(retain_graph=True)" + (line.empty() ? std::string() : " at " + line) +
                    " kept its graph (" + format_bytes(b.retained_saved_bytes) +
                    " saved) until it died, and no later backward reached it";
      }
      backward_calls.erase(it);
    }
  }
  // LD010: a node that never ran dies; what it saved was for nothing
  if (!entry.executed) {
    struct Bytes final : HeldVisitor {
      int64_t bytes = 0;
      std::set<const void*> seen;
      void saved(const SavedVariable& sv, std::string_view) override {
        const Tensor& t = sv.held();
        if (!t.defined() || sv.released()) return;
        const StorageImpl* st = t.impl()->storage().get();
        if (alloc::CachingAllocator::category(st->data_ptr()) == MemoryCategory::Parameter) return;
        if (seen.insert(st).second) bytes += static_cast<int64_t>(st->nbytes());
      }
      void tensor(const Tensor&, std::string_view) override {}
    } v;
    n.visit_held(v);
    if (v.bytes > 0) {
      Wasted& w = wasted[step];
      w.bytes += v.bytes;
      w.site_bytes[entry.site] += v.bytes;
    }
  }
  log(TimelineEvent{0, step, 0, intern(n.class_name()), nullptr, entry.site, EventKind::NodeFree});
}

uint32_t Session::State::on_backward_started(bool retain_graph, bool create_graph, lifetime::SiteId site) {
  const uint32_t id = next_backward_id++;
  const int64_t step = steps + 1;
  backward_steps.insert(step);
  if (retain_graph) backward_calls[id] = BackwardCall{step, site, true, false, 0, 0};
  log(TimelineEvent{0, step, 0, intern(retain_graph ? (create_graph ? "create_graph" : "retain_graph") : ""), nullptr,
                    site, EventKind::Backward});
  current_backward_site = site;
  return id;
}

void Session::State::on_node_executed(const Node& n, uint32_t backward_id, bool retain_graph) {
  uint32_t retained_by = objects().nodes.value(&n).retained_by;
  if (uint32_t r = retained_by; r && r != backward_id) {
    auto it = backward_calls.find(r);
    if (it != backward_calls.end()) {
      it->second.reused = true;
      // this line's retain_graph is needed: forget what its other calls suggested (LD009)
      if (sites_reused.insert(it->second.site).second) evidence.erase(std::string("LD009@") + where(it->second.site));
      --it->second.live_retained;
      if (it->second.live_retained <= 0) backward_calls.erase(it);
    }
    retained_by = 0;
    objects().nodes.update(&n, [](NodeEntry& e) { e.retained_by = 0; });
  }
  if (retain_graph && retained_by != backward_id) {
    auto it = backward_calls.find(backward_id);
    if (it != backward_calls.end()) {
      ++it->second.live_retained;
      objects().nodes.update(&n, [&](NodeEntry& e) { e.retained_by = backward_id; });
      struct Bytes final : HeldVisitor {
        int64_t bytes = 0;
        void saved(const SavedVariable& sv, std::string_view) override {
          const Tensor& t = sv.held();
          if (!t.defined() || sv.released()) return;
          if (alloc::CachingAllocator::category(t.impl()->storage()->data_ptr()) == MemoryCategory::Parameter) return;
          bytes += static_cast<int64_t>(t.impl()->storage()->nbytes());
        }
        void tensor(const Tensor&, std::string_view) override {}
      } v;
      n.visit_held(v);
      it->second.retained_saved_bytes += v.bytes;
    }
  }
}

void Session::State::on_stale_gradient(const TensorImpl& leaf, uint32_t streak) {
  if (static_cast<int64_t>(streak) < accumulation) return;  // declared accumulation
  const std::string line = where(current_backward_site);
  Evidence& e = evidence_for(Rule::MissingZeroGrad, line);
  e.steps.insert(steps + 1);
  if (std::find(e.leaves.begin(), e.leaves.end(), reinterpret_cast<uintptr_t>(&leaf)) == e.leaves.end() &&
      e.leaves.size() < 64) {
    e.leaves.push_back(reinterpret_cast<uintptr_t>(&leaf));
    e.leaf_sites.push_back(objects().tensors.value(&leaf).site);
  }
  e.message = "backward" + (line.empty() ? std::string() : " at " + line) + " added into gradients that " +
              std::to_string(e.leaves.size()) +
              " parameter(s) kept from before their previous optimizer step, and the optimizer used them";
}

void Session::State::on_storage(const StorageImpl& st, bool created, const ObjectEntry& entry) {
  const auto [block_bytes, category] = alloc::CachingAllocator::size_and_category(st.data_ptr());
  const auto bytes = static_cast<int64_t>(block_bytes);
  const int cat = static_cast<int>(category);
  // a storage made before the session is in the baseline's "before the session" (site 0),
  // whatever site an earlier session recorded for it
  const lifetime::SiteId site = entry.generation >= start_generation ? entry.site : 0;
  if (created) {
    // the block remembers its storage's site, for the category changes reported without it
    alloc::CachingAllocator::set_lifetime(st.data_ptr(), entry.site, entry.generation);
    peak_events.push_back(PeakEvent{bytes, static_cast<uint8_t>(cat), site});
  } else {
    peak_events.push_back(PeakEvent{-bytes, static_cast<uint8_t>(cat), site});
  }
  log(TimelineEvent{bytes, steps + 1, 0, nullptr, nullptr, entry.site, created ? EventKind::Alloc : EventKind::Free,
                    static_cast<uint8_t>(cat)});
}

void Session::State::on_recategorized(const void*, int old_category, int new_category, int64_t bytes, uint32_t site,
                                      uint32_t generation) {
  if (generation < start_generation) return;  // a storage from before the session
  peak_events.push_back(PeakEvent{-bytes, static_cast<uint8_t>(old_category), site});
  peak_events.push_back(PeakEvent{bytes, static_cast<uint8_t>(new_category), site});
}

Session::State::Evidence& Session::State::evidence_for(Rule rule, const std::string& line) {
  const std::string key = std::string(rule_info(rule).id) + "@" + line;
  Evidence& e = evidence[key];
  e.rule = rule;
  e.line = line;
  e.key = key;
  return e;
}

// ---------------------------------------------------------------- the peak of a step

void Session::State::close_peak(int64_t step) {
  // replay this step's storage events from the breakdown at its start: the total's peak first,
  // then the breakdown at the peak and, applying the rest, at the step's end (the next start)
  int64_t total = 0;
  for (auto& [k, v] : live_breakdown) total += v;
  const int64_t start = total;
  int64_t peak = total;
  size_t peak_at = 0;  // events applied at the peak
  for (size_t i = 0; i < peak_events.size(); ++i) {
    total += peak_events[i].delta;
    if (total > peak) {
      peak = total;
      peak_at = i + 1;
    }
  }
  std::map<std::pair<int, lifetime::SiteId>, int64_t>& live = live_breakdown;
  auto cell = live.end();  // the last event's: runs of events of one category and line are common
  auto apply = [&](const PeakEvent& e) {
    const std::pair<int, lifetime::SiteId> key{e.category, e.site};
    if (cell == live.end() || cell->first != key) cell = live.try_emplace(key, 0).first;
    cell->second += e.delta;
  };
  for (size_t i = 0; i < peak_at; ++i) apply(peak_events[i]);
  last_peak.step = step;
  last_peak.peak_bytes = peak;
  last_peak.start_bytes = start;
  last_peak.at_peak.clear();
  for (auto& [k, v] : live)
    if (v > 0) last_peak.at_peak.emplace_back(k.first, k.second, v);
  for (size_t i = peak_at; i < peak_events.size(); ++i) apply(peak_events[i]);
  for (auto it = live.begin(); it != live.end();) it = it->second == 0 ? live.erase(it) : std::next(it);
  peak_events.clear();
}

PeakReport Session::State::peak_report() const {
  PeakReport r;
  r.step = last_peak.step;
  r.peak_bytes = last_peak.peak_bytes;
  r.start_bytes = last_peak.start_bytes;
  std::map<std::string, int64_t> by_line, by_scope;
  for (const auto& [category, site, bytes] : last_peak.at_peak) {
    r.by_category[memory_category_name(static_cast<MemoryCategory>(category))] += bytes;
    const std::string w = site ? where(site) : std::string("before the session");
    by_line[w.empty() ? "<unknown>" : w] += bytes;
    if (category == static_cast<int>(MemoryCategory::SavedForBackward) && site) {
      const std::string scope = lifetime::site(site).scope;
      if (!scope.empty()) by_scope[scope] += bytes;
    }
  }
  for (auto& [w, v] : by_line) r.by_line.push_back({w, v});
  std::sort(r.by_line.begin(), r.by_line.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (auto& [sc, v] : by_scope) r.by_scope.push_back({sc, v});
  std::sort(r.by_scope.begin(), r.by_scope.end(), [](auto& a, auto& b) { return a.second > b.second; });
  return r;
}

// ---------------------------------------------------------------- Session

using detail::active_state;
using detail::recorder_mutex;

Session::Session(Options options) : s_(std::make_unique<State>()) {
  GRAFT_CHECK(options.warmup >= 0 && options.confirm >= 1, ValueError,
              "doctor.Session: warmup must be >= 0 and confirm >= 1, got ", options.warmup, " and ", options.confirm);
  GRAFT_CHECK(options.tier != lifetime::Tier::Off, ValueError, "doctor.Session: the tier must be Counters or Sites");
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  GRAFT_CHECK(active_state() == nullptr, RuntimeError,
              "a graft.doctor session is already watching; stop it before starting another");
  // an observer installed over the recorder kept it from hearing of destructions: what the
  // ledger still holds from an earlier session cannot be trusted
  if (lifetime::observer() != &detail::recorder()) detail::objects().forget_all();
  s_->owner = this;
  s_->options = options;
  s_->events = detail::EventRing<TimelineEvent>(options.max_events);
  s_->started = std::chrono::steady_clock::now();
  // objects made from now on belong to step 1
  s_->start_generation = detail::objects().advance_generation();
  s_->graft_framework = detail::make_graft_framework(s_->start_generation);
  // what lives already (parameters made before the session) is the peak's baseline
  const auto before = device_allocator(kCPU).bytes_by_category();
  for (int c = 0; c < kNumMemoryCategories; ++c)
    if (before[static_cast<size_t>(c)] > 0) s_->live_breakdown[{c, 0}] = before[static_cast<size_t>(c)];
  s_->watching = true;
  active_state() = s_.get();
  detail::objects().recording.store(true, std::memory_order_relaxed);
  lifetime::set_observer(&detail::recorder());
  lifetime::set_tier(options.tier);
  alloc::set_oom_observer(&detail::oom_observer_text);
}

Session::~Session() { stop(); }

void Session::stop() {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  if (!s_->watching) return;
  s_->watching = false;
  s_->withdraw_bounded_growth();
  if (active_state() == s_.get()) {
    active_state() = nullptr;
    lifetime::set_tier(lifetime::Tier::Off);
    detail::objects().recording.store(false, std::memory_order_relaxed);
    detail::objects().forget_leaves();  // the gradient history is the session's own
    // the objects the session saw keep their entries until they die; with none left, nothing
    // is reported (or locked) while no session watches
    if (detail::objects().entries() == 0) lifetime::set_observer(nullptr);
    alloc::set_oom_observer(nullptr);
  }
}

bool Session::watching() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->watching;
}

int64_t Session::steps() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->steps;
}

Session* Session::current() {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return active_state() ? active_state()->owner : nullptr;
}

void Session::set_annotator(Annotator* a) {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  s_->annotator = a;
}

void Session::set_framework(Framework* f) {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  s_->framework = f;
}

std::string Session::framework_name() const {
  Framework* framework;
  {
    std::lock_guard<detail::LightMutex> g(recorder_mutex());
    framework = &s_->fw();
  }
  return framework->name();
}

void Session::allow_window(int steps) {
  GRAFT_CHECK(steps >= 1, ValueError, "allow_window: the window must be >= 1 step, got ", steps);
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  s_->window = steps;
}

void Session::declare_accumulation(int micro_steps) {
  GRAFT_CHECK(micro_steps >= 1, ValueError, "declare_accumulation: micro_steps must be >= 1, got ", micro_steps);
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  s_->accumulation = micro_steps;
}

void Session::allow(const std::string& path_prefix_or_line) {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  s_->allowed.push_back(path_prefix_or_line);
}

void Session::add_evidence(Rule rule, const std::string& line, const std::string& message, std::vector<Holder> holders,
                           int64_t bytes) {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  State::Evidence& e = s_->evidence_for(rule, line);
  e.steps.insert(s_->steps + 1);
  e.message = message;
  if (!holders.empty()) e.holders = std::move(holders);
  e.bytes = std::max(e.bytes, bytes);
}

std::vector<Finding> Session::findings() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->findings;
}

std::vector<StepRecord> Session::timeline() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->records;
}

StepRecord Session::last_step() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->records.empty() ? StepRecord{} : s_->records.back();
}

std::string Session::last_oom_report() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->last_oom_report;
}

PeakReport Session::peak() const {
  std::lock_guard<detail::LightMutex> g(recorder_mutex());
  return s_->peak_report();
}

Census Session::live_graphs() const {
  Framework* framework;
  uint32_t start;
  int64_t step;
  {
    std::lock_guard<detail::LightMutex> g(recorder_mutex());
    framework = s_->framework;
    start = s_->start_generation;
    step = s_->steps + 1;
  }
  if (framework) {
    std::shared_ptr<void> keep;
    return framework->census(step, keep);
  }
  // graft's census outside a boundary takes no graph-walk lock: the caller (a report, the Python
  // layer) may hold the GIL, which a backward pass on another thread may be waiting for while it
  // holds that lock shared
  detail::PinnedCensus pc = detail::take_census(start, step);
  return std::move(pc.census);
}

void Session::assert_no_leak() const {
  std::vector<Finding> serious;
  for (const Finding& f : findings())
    if (f.severity != Severity::Info) serious.push_back(f);
  if (!serious.empty())
    throw RuntimeError("graft.doctor found " + std::to_string(serious.size()) + " problem(s):\n" +
                       format_findings(serious));
}

namespace {
/// One object a diff counts: its kind, site (resolved later, outside the ledger's locks: a C++
/// site may run addr2line), type, bytes and step.
struct DiffRaw {
  const char* kind;
  lifetime::SiteId site;
  std::string type;
  int64_t bytes;
  int64_t step;
};

/// The nodes, saved slots and storages made in steps from + 1 .. to that are still alive.
std::vector<DiffRaw> made_between(uint32_t start, int64_t from, int64_t to) {
  auto in_range = [&](uint32_t gen) {
    const int64_t s = detail::step_of(gen, start);
    return s > from && s <= to;
  };
  std::vector<DiffRaw> raw;
  objects().nodes.locked([&](const auto& nodes) {
    for (const auto& [n, entry] : nodes) {
      if (n->use_count() == 0 || !in_range(entry.generation)) continue;
      raw.push_back({"node", entry.site, n->class_name(), entry.host_bytes, detail::step_of(entry.generation, start)});
      struct Slots final : HeldVisitor {
        std::vector<DiffRaw>* out;
        const Node* node;
        lifetime::SiteId site;
        uint32_t start;
        std::function<bool(uint32_t)> in_range;
        void saved(const SavedVariable& sv, std::string_view what) override {
          const uint32_t gen = objects().saved.value(&sv).generation;
          if (!sv.defined() || sv.released() || !in_range(gen)) return;
          const Tensor& t = sv.held();
          out->push_back({"saved_slot", site, node->class_name() + "." + std::string(what),
                          t.defined() ? static_cast<int64_t>(t.impl()->storage()->nbytes()) : 0,
                          detail::step_of(gen, start)});
        }
        void tensor(const Tensor&, std::string_view) override {}
      } slots;
      slots.out = &raw;
      slots.node = n;
      slots.site = entry.site;
      slots.start = start;
      slots.in_range = in_range;
      n->visit_held(slots);
    }
  });
  objects().storages.locked([&](const auto& storages) {
    for (const auto& [st, entry] : storages) {
      if (st->use_count() == 0 || !in_range(entry.generation)) continue;
      raw.push_back({"storage", entry.site, memory_category_name(alloc::CachingAllocator::category(st->data_ptr())),
                     static_cast<int64_t>(st->nbytes()), detail::step_of(entry.generation, start)});
    }
  });
  return raw;
}
}  // namespace

Diff Session::diff(int64_t from, int64_t to) const {
  GRAFT_CHECK(from >= 0 && to >= from, ValueError, "diff: expected 0 <= from <= to, got ", from, " and ", to);
  uint32_t start;
  {
    std::lock_guard<detail::LightMutex> g(recorder_mutex());
    start = s_->start_generation;
  }
  Diff d;
  d.from = from;
  d.to = to;
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, DiffEntry> groups;
  std::map<Key, std::map<int64_t, int64_t>> by_step;  // how many each step made ("N per step")
  auto add = [&](const char* kind, lifetime::SiteId site, const std::string& type, int64_t bytes, int64_t step) {
    const Key key{kind, detail::where(site), type};
    auto& e = groups[key];
    e.kind = kind;
    e.line = detail::where(site);
    e.type = type;
    e.count += 1;
    e.bytes += bytes;
    by_step[key][step] += 1;
  };
  for (const DiffRaw& r : made_between(start, from, to)) add(r.kind, r.site, r.type, r.bytes, r.step);
  for (auto& [k, e] : groups) {
    // "N per step" only when every step of the range made exactly N
    const auto& steps = by_step[k];
    if (static_cast<int64_t>(steps.size()) == to - from) {
      e.per_step = steps.begin()->second;
      for (auto [step, n] : steps)
        if (n != e.per_step) e.per_step = 0;
    }
    d.entries.push_back(e);
  }
  std::sort(d.entries.begin(), d.entries.end(), [](const DiffEntry& a, const DiffEntry& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.count != b.count) return a.count > b.count;
    return a.line != b.line ? a.line < b.line : a.type < b.type;
  });
  return d;
}

std::vector<std::string> Diff::sentences() const {
  std::vector<std::string> out;
  const int64_t n = std::max<int64_t>(1, to - from);
  for (const DiffEntry& e : entries) {
    std::ostringstream o;
    o << "+" << e.count << " " << e.kind << (e.count == 1 ? "" : "s") << " (" << e.type << ")";
    if (!e.line.empty()) o << " from " << e.line;
    if (e.per_step > 0 && n > 1) o << ", " << e.per_step << " per step";
    o << ", " << detail::format_bytes(e.bytes);
    out.push_back(o.str());
  }
  if (out.empty())
    out.push_back(from == to ? "no steps between " + std::to_string(from) + " and " + std::to_string(to)
                             : "nothing made in steps " + std::to_string(from + 1) + ".." + std::to_string(to) +
                                   " is still alive");
  return out;
}

void Session::step() { s_->step_boundary(); }

}  // namespace graft::doctor
