#pragma once
/// The leak doctor: says which graph grows, who holds it, at which line, and how to fix it.
///
///   graft::doctor::Session dr;          // starts watching (one session at a time)
///   for (...) { ...; opt.step(); }      // every optimizer step is a doctor step
///   std::cout << dr.report();           // findings, live graphs, the memory ledger
///   dr.write_html("doctor.html");       // the same as one self-contained page
///
/// It counts objects by generation (the step that made them), from what the lower layers report
/// to its observer (include/graft/core/lifetime.h), in side tables of its own: a leak is a set
/// of graph objects from ever more past steps that stays alive. After a
/// warm-up of 2 steps, growth confirmed over 3 more steps is reported at step 5, never earlier,
/// with a rule (LD001..LD010) naming the habit that causes it and its fix. The Python package
/// adds the holders' paths (`state['total']`, `model.fc.weight.grad`). Design, rules and
/// their evidence: docs/notes/doctor.md; user guide: docs/doctor.md.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "graft/alloc/caching_allocator.h"
#include "graft/core/device.h"
#include "graft/core/lifetime.h"

namespace graft {
class Node;
class StorageImpl;
class TensorImpl;
}  // namespace graft

namespace graft::doctor {

// ---------------------------------------------------------------- rules

/// The rule catalogue; ids are stable ("LD001").
enum class Rule : uint8_t {
  GraphGrowth = 0,           ///< LD000: a graph grows across steps and no rule below explains it
  AccumulatedLoss = 1,       ///< LD001: `total_loss += loss` (or a list of losses) keeps graphs
  CarriedAcrossSteps = 2,    ///< LD002: a tensor carried into the next step keeps its graph
  OutputsKeptUnderGrad = 3,  ///< LD003: outputs kept in containers in steps without backward
  CreateGraphGradCycle = 4,  ///< LD004: `.grad` with a grad_fn after backward(create_graph=True)
  HookCapture = 5,           ///< LD005: a hook's closure (or an attribute set in a hook) keeps graphs
  CycleHeld = 6,             ///< LD006: memory freed only by the cyclic garbage collector
  DetachedTooLate = 7,       ///< LD007: carried state detached only every few steps
  MissingZeroGrad = 8,       ///< LD008: gradients accumulated across optimizer steps
  RetainGraphUnused = 9,     ///< LD009: retain_graph=True and no second backward reached the graph
  GradModeEval = 10,         ///< LD010: forward under grad mode with no backward saved bytes for nothing
  TensorGrowth = 11,         ///< LD011: tensors without a graph, kept from ever more past steps
};
inline constexpr int kNumRules = 12;

/// How bad a finding is: a leak (graphs kept for ever), a warning (a bug or a waste that does not
/// grow), information, or growth (memory that grows step after step and may be intended: a cache).
enum class Severity : uint8_t { Leak, Warning, Info, Growth };
/// "leak", "warning", "info", "growth".
const char* severity_name(Severity s);

/// What a rule says, independent of any run.
struct RuleInfo {
  Rule rule;
  const char* id;    ///< "LD001"
  const char* name;  ///< "accumulated-loss"
  Severity severity;
  const char* summary;  ///< one line: what happens
  const char* fix;      ///< one line: what to write instead
};
const RuleInfo& rule_info(Rule r);
/// Every rule, LD000 first.
const std::vector<RuleInfo>& rules();

// ---------------------------------------------------------------- census

/// A slot a node keeps for its backward.
struct SavedInfo {
  std::string what;  ///< the member's name ("self", "indices")
  std::vector<int64_t> shape;
  std::string dtype;      ///< "float32"
  int64_t bytes = 0;      ///< of its storage (0 once released or when packed by hooks)
  uintptr_t storage = 0;  ///< identity of the storage (shared storages count once)
  uint32_t generation = 0;
  bool released = false;
  bool packed = false;     ///< kept by saved_tensors_hooks
  bool parameter = false;  ///< the storage belongs to a parameter (not counted as saved bytes)
};

/// A live graph node.
struct NodeInfo {
  uintptr_t id = 0;
  uint64_t sequence_nr = 0;  ///< creation order (stable ids in pictures)
  std::string name;          ///< "MulBackward0"
  uint32_t generation = 0;   ///< absolute generation
  int64_t step = 0;          ///< the session step that made it (1-based; 0: before the session)
  lifetime::SiteId site = 0;
  bool executed = false;        ///< a backward pass visited it
  int64_t host_bytes = 0;       ///< the node object's heap block
  std::vector<uintptr_t> next;  ///< edges (ids of the nodes its gradients flow into)
  std::vector<SavedInfo> saved;
  std::vector<int64_t> output_shape;  ///< shape of forward output 0
  uintptr_t variable = 0;             ///< AccumulateGrad: the leaf it accumulates into (TensorImpl identity)
};

/// A tensor that holds a node of a graph: the user's handle (or a gradient, or a tensor the
/// C++ side keeps).
struct HandleInfo {
  uintptr_t tensor = 0;       ///< TensorImpl identity (the Python layer maps it to its object)
  uintptr_t node = 0;         ///< the node it holds (its grad_fn, or its .grad's grad_fn)
  bool grad_of_leaf = false;  ///< it is the `.grad` of `leaf` (LD004)
  uintptr_t leaf = 0;
  lifetime::SiteId site = 0;  ///< where the tensor was made
  int64_t step = 0;
  std::vector<int64_t> shape;
};

/// One connected piece of the live backward graph.
struct GraphComponent {
  int64_t id = 0;               ///< stable within one census
  std::vector<NodeInfo> nodes;  ///< newest first
  std::map<std::string, int64_t> nodes_by_type;
  int64_t saved_bytes = 0;      ///< storages held by saved slots, each counted once (parameters excluded)
  int64_t parameter_bytes = 0;  ///< parameter storages the slots reference (alive anyway)
  int64_t host_bytes = 0;       ///< node objects
  int64_t oldest_step = 0, newest_step = 0;
  int64_t stale_steps = 0;        ///< distinct steps before the current one with live nodes here
  bool executed = false;          ///< some node was run by a backward pass
  bool cross_step_edges = false;  ///< a node of a later step points into an earlier step's node
  std::vector<HandleInfo> handles;
  std::vector<lifetime::SiteId> sites;  ///< creation sites present, most nodes first
};

/// Every live graph, from the nodes made while the session watched.
struct Census {
  int64_t step = 0;  ///< the session step it was taken at
  std::vector<GraphComponent> components;
  int64_t nodes() const;
  int64_t saved_bytes() const;
};
/// A census from a framework's live nodes (each with its `next` ids and saved slots) and the
/// tensors that hold them: nodes joined by edges make a component (a leaf's AccumulateGrad joins
/// only its newest user's), with its steps, types and bytes (each storage once); the biggest
/// first. `step` is the step being ended (nodes of earlier steps are stale).
Census assemble_census(std::vector<NodeInfo> nodes, std::vector<HandleInfo> handles, int64_t step);

// ---------------------------------------------------------------- findings

/// Who holds a graph: a path from a named root, with where the handle was made.
struct Holder {
  std::string path;        ///< "state['total']", "model.fc.weight.grad", "<held by native code>"
  std::string created_at;  ///< "train.py:89": where the held tensor was made
  std::string stored_at;   ///< where the reference was stored ("train.py:91": an append, +=, assignment,
                           ///< a hook's body); "" when unknown
  int64_t created_step = 0;
  bool through_hook = false;       ///< the path goes through a hook's closure or a hook-set attribute
  std::string hook_registered_at;  ///< the line that registered that hook, when known
  uintptr_t tensor = 0;            ///< the handle it names (0: unknown)
};

/// One diagnosis.
struct Finding {
  Rule rule = Rule::GraphGrowth;
  std::string id;  ///< "LD001"
  Severity severity = Severity::Leak;
  int64_t step = 0;        ///< the step it was reported at
  int64_t first_step = 0;  ///< the first step of the evidence
  std::string message;     ///< one line, with this run's numbers
  std::string fix;
  std::string line;     ///< the user's line ("train.py:89"): where the first holder stored the reference
  std::string made_at;  ///< where the held tensor was made, when that is another line ("": the same)
  std::vector<Holder> holders;
  int64_t nodes = 0;  ///< graph nodes held (leaks)
  int64_t saved_bytes = 0;
  int64_t host_bytes = 0;
  double nodes_per_step = 0;         ///< growth rate over the confirmation steps
  int64_t tensor_bytes = 0;          ///< LD011: bytes of the kept tensors (each storage once)
  double bytes_per_step = 0;         ///< LD011: their growth per step since they were first seen
  std::string key;                   ///< what makes two findings the same (rule + line + holder)
  std::string graph_dot, graph_svg;  ///< the leaking graph when it was reported (growth rules)
};

/// The doctor's error for assert_no_leak() (a RuntimeError whose message lists the findings).
std::string format_findings(const std::vector<Finding>& fs);

// ---------------------------------------------------------------- memory

/// Where the reserved bytes of one device go; the parts add up to `reserved` exactly.
struct Ledger {
  Device device;
  int64_t reserved = 0;
  std::map<std::string, int64_t> live_by_category;  ///< requested bytes of live blocks, by owner
  int64_t rounding = 0;                             ///< block sizes minus requested sizes of live blocks
  int64_t cached_releasable = 0;                    ///< whole free segments (empty_cache() returns them)
  int64_t free_trapped = 0;                         ///< free blocks inside segments that also hold live blocks
  int64_t graph_host_bytes = 0;                     ///< graph node objects on the host (not part of reserved)
  std::optional<int64_t> outside;                   ///< device memory in use outside this allocator, when known
  /// One plain sentence per line.
  std::vector<std::string> sentences() const;
};
Ledger ledger(Device device = kCPU);
/// The same for one allocator (tests use private ones).
Ledger ledger(const alloc::CachingAllocator& allocator);

/// Per-pool fragmentation, as TensorFlow's profiler defines it: 1 - largest free / total free.
struct PoolFragmentation {
  std::string pool;  ///< "small" or "large"
  int64_t segments = 0;
  int64_t free_blocks = 0;
  int64_t free_bytes = 0;
  int64_t largest_free = 0;
  double fragmentation = 0;
};
struct Fragmentation {
  Device device;
  std::vector<PoolFragmentation> pools;
  int64_t largest_allocation = 0;  ///< the largest request that would succeed now
  std::vector<std::string> sentences() const;
};
Fragmentation fragmentation(Device device = kCPU);
Fragmentation fragmentation(const alloc::CachingAllocator& allocator);

/// Answers "how much device memory is used outside graft's allocator" for `device` (F13); the
/// default for the CPU is the process's resident memory minus what the allocator reserves.
/// Tests install a fake. Returns nullopt when unknown.
using ExternalMemoryQuery = std::function<std::optional<int64_t>(Device)>;
void set_external_memory_query(ExternalMemoryQuery q);

/// What was live at one step's peak, from the storages' creation and destruction.
struct PeakReport {
  int64_t step = 0;
  int64_t peak_bytes = 0;   ///< live storage blocks at the peak
  int64_t start_bytes = 0;  ///< live at the start of the step
  std::map<std::string, int64_t> by_category;
  std::vector<std::pair<std::string, int64_t>> by_line;   ///< "train.py:40" -> bytes, largest first
  std::vector<std::pair<std::string, int64_t>> by_scope;  ///< module path -> saved bytes at the peak
  std::vector<std::string> sentences() const;
};

// ---------------------------------------------------------------- step diff

struct DiffEntry {
  std::string kind;  ///< "node", "saved_slot", "storage"
  std::string line;  ///< creation line
  std::string type;  ///< node type, or storage category
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t per_step = 0;  ///< the count each step of (from, to] made, when every one made as many (0: uneven)
};
/// Objects made in steps (from, to] that are still alive, grouped by kind, line and type.
struct Diff {
  int64_t from = 0, to = 0;
  std::vector<DiffEntry> entries;
  std::vector<std::string> sentences() const;
};

// ---------------------------------------------------------------- the session

/// How a Session watches.
struct Options {
  lifetime::Tier tier = lifetime::Tier::Sites;  ///< Counters: verdicts only; Sites: + lines
  int warmup = 2;                               ///< steps whose new long-lived objects are accepted
  int confirm = 3;                              ///< further steps over which growth must continue
  bool step_on_optimizer = true;                ///< the optimizers end the doctor's steps, one per iteration
                                                ///< (docs/notes/doctor.md, "Steps")
  int max_holders = 5;                          ///< holder paths per finding
  std::string oom_report_path;                  ///< where an OutOfMemoryError's report is written ("" : not written)
  size_t max_events = 100000;                   ///< timeline events kept (a ring)
  bool deterministic = false;                   ///< sequence numbers instead of times in the timeline
};

/// One step's record in the timeline.
struct StepRecord {
  int64_t step = 0;
  double seconds = 0;                                ///< since the session started (0 when deterministic)
  std::map<std::string, int64_t> bytes_by_category;  ///< allocator categories at the boundary
  int64_t reserved = 0;
  int64_t graph_nodes = 0, stale_nodes = 0, saved_slots = 0, stale_saved_slots = 0;
  int64_t saved_bytes = 0, graph_host_bytes = 0;
  int64_t stale_generations = 0;
  int64_t peak_bytes = 0;
  std::vector<std::string> findings;  ///< ids reported at this step
};

/// Extra knowledge the Python layer gives a Session: holder paths for a component's handles,
/// and findings only Python can see (cycles, hooks).
class Annotator {
 public:
  virtual ~Annotator() = default;
  /// Paths from named roots to these handles (at most `max` in all).
  virtual std::vector<Holder> holders(const std::vector<HandleInfo>& handles, int max) = 0;
  /// Called at every step boundary before the census (Python collects cycles here); may add
  /// findings' evidence through Session::add_evidence.
  virtual void at_boundary(int64_t step) = 0;
};

/// A tensor without a graph that a framework reports as kept from a past step (LD011's input).
struct KeptTensor {
  HandleInfo handle;      ///< its identity, creation line, step and shape (`node` unused)
  uintptr_t storage = 0;  ///< identity of its storage (counted once per line)
  int64_t bytes = 0;      ///< of that storage
  uint64_t order = 0;     ///< creation order (the newest are the ones shown)
};

/// What the doctor asks of the framework the watched program runs on: what is alive, since which
/// step, who holds it, how many bytes. graft answers from its object ledger (the default); the
/// Python layer answers for PyTorch (`watch(backend="torch")`). Steps, rules, the verdict and the
/// reports are the same for both (docs/notes/doctor.md, "Frameworks"). Called at step boundaries,
/// one at a time, with none of the doctor's locks held.
class Framework {
 public:
  virtual ~Framework() = default;
  /// What the report calls it: "graft", "torch 2.5.1".
  virtual std::string name() const = 0;
  /// The counts that end step `step`, into `rec`: graph nodes, saved slots and bytes, how many of
  /// them were made before `step` (stale) and in how many steps, memory by category and reserved.
  virtual void count(int64_t step, StepRecord& rec) = 0;
  /// Every live graph (for a boundary: at `step`), its nodes and handles stamped with the steps that
  /// made them (0: before the session); `keep` receives what keeps the handles' identities valid
  /// until their holders are found.
  virtual Census census(int64_t step, std::shared_ptr<void>& keep) = 0;
  /// The tensors without a graph made in steps before `step` and alive now, except parameters,
  /// gradients, optimizer state and the storages in `graph_storages` (what live graphs save).
  virtual std::vector<KeptTensor> kept_tensors(int64_t step, const std::unordered_set<uintptr_t>& graph_storages) = 0;
  /// The report's memory section, one sentence per line.
  virtual std::vector<std::string> memory_sentences() = 0;
};

class Session {
 public:
  explicit Session(Options options = {});
  /// Stops watching. Findings and records stay readable.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Ends the current step (the optimizer does it too, unless Options::step_on_optimizer is off).
  void step();
  /// Steps ended so far.
  int64_t steps() const;
  bool watching() const;
  /// Stops watching now (the destructor does it too).
  void stop();

  /// Every finding so far, in the order reported.
  std::vector<Finding> findings() const;
  /// The live graphs now.
  Census live_graphs() const;
  /// What appeared in steps (from, to] and is still alive.
  Diff diff(int64_t from, int64_t to) const;
  /// The peak of the last completed step.
  PeakReport peak() const;
  std::vector<StepRecord> timeline() const;
  /// The record of the last step ended (a step-0 record before the first).
  StepRecord last_step() const;
  /// The report written for the last OutOfMemoryError during this session ("" if none).
  std::string last_oom_report() const;

  /// Allows graphs carried across up to `steps` steps (truncated BPTT): LD007 stays quiet and
  /// carried graphs shorter than the window are not leaks.
  void allow_window(int steps);
  /// Declares gradient accumulation over `micro_steps` optimizer steps (LD008 stays quiet).
  void declare_accumulation(int micro_steps);
  /// Suppresses findings whose holder path is `path_prefix` or lies under it ("replay" covers
  /// "replay[3]" and "replay.items", not "replay_old"), or whose line is it (intended
  /// retention: a replay buffer, EMA weights).
  void allow(const std::string& path_prefix_or_line);

  /// The text report: findings with holders and fixes, live graphs, peak, ledger, fragmentation.
  std::string report() const;
  /// The timeline as versioned JSON (schema "graft.doctor.timeline", version 1).
  std::string timeline_json() const;
  /// One self-contained HTML page (inline SVG and script; nothing fetched).
  std::string html() const;
  void write_html(const std::string& path) const;
  /// The live graphs (or one component) as Graphviz DOT / as SVG with graft's own layout;
  /// `handle_labels` names holders (tensor identity -> "state['total']").
  std::string graph_dot(int64_t component = -1, const std::map<uintptr_t, std::string>& handle_labels = {}) const;
  std::string graph_svg(int64_t component = -1, const std::map<uintptr_t, std::string>& handle_labels = {}) const;
  /// Throws RuntimeError listing the findings when there are leak or warning findings.
  void assert_no_leak() const;
  /// Records that the watched program stopped with an error (`error`: the exception's last
  /// line; `out_of_memory`: an OutOfMemoryError): the report and the page lead with it.
  void note_stopped(const std::string& error, bool out_of_memory = false);
  /// The report's first paragraph, which says only what the steps watched show: an error that
  /// stopped the program, too few steps for a verdict, memory or graphs that grew with no
  /// finding naming a cause, or that nothing grows (allocated memory and live graphs flat).
  std::vector<std::string> verdict() const;

  // --- for the Python layer ---
  void set_annotator(Annotator* a);
  /// The framework the watched program runs on (nullptr: graft itself, the default); set before
  /// the first step, kept alive by the caller while the session lives.
  void set_framework(Framework* f);
  /// The framework's name ("graft", "torch 1.13.1").
  std::string framework_name() const;
  /// Evidence only the caller can see (LD005/LD006): counted like the doctor's own.
  void add_evidence(Rule rule, const std::string& line, const std::string& message, std::vector<Holder> holders,
                    int64_t bytes);
  /// The session watching now, if any.
  static Session* current();

  struct State;  // (docs/notes/doctor.md)

 private:
  std::unique_ptr<State> s_;
};

/// The HTML page for a timeline (as timeline_json() writes it), a graph SVG and a text report:
/// what Session::html() returns, also for a timeline loaded from a file.
std::string render_html(const std::string& timeline_json, const std::string& graph_svg, const std::string& report_text);

/// The OOM report for `device` now (F6/F11): the ledger, fragmentation, and the top holders
/// by creation line. Session installs an allocator observer that writes it on every
/// OutOfMemoryError; this is the same text on demand.
std::string oom_report(const alloc::OomInfo& info);

// ---------------------------------------------------------------- what the doctor recorded

/// Where and when an object was made, as a session recorded it: its creation line (at tier
/// Sites) and its generation. Both 0 for an object made while no session watched.
struct Origin {
  lifetime::SiteId site = 0;
  uint32_t generation = 0;
};
Origin origin(const TensorImpl& t);
Origin origin(const StorageImpl& st);
Origin origin(const Node& n);
/// The current generation: steps the doctor has seen since the process started (a session's
/// start begins one too).
uint32_t current_generation();

}  // namespace graft::doctor
