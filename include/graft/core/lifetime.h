#pragma once
/// The lifetime ledger: the lowest layer of the leak doctor (graft/doctor/doctor.h).
///
/// Every graph node, saved-for-backward slot, storage and tensor records the *generation* in
/// which it was created: one integer, the number of steps the doctor had seen. While a doctor
/// session watches (tier Counters or above), creations and destructions are also counted per
/// generation, the objects are linked into live lists the doctor can walk, and (tier Sites)
/// each node, storage and tensor records the interned source line that created it, taken from
/// the Python frame or the C++ caller. With no session the cost is one relaxed load per
/// object. Design: docs/notes/doctor.md.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "graft/core/non_copyable.h"

namespace graft {

class Node;
class TensorImpl;
class StorageImpl;

namespace lifetime {

/// How much the ledger records.
enum class Tier : uint8_t {
  Off = 0,       ///< generation stamps only
  Counters = 1,  ///< + per-generation live counts and live lists (the doctor's tier 0)
  Sites = 2,     ///< + the creation line of every node, storage and tensor (tier 1)
};

/// The kinds of objects counted per generation.
enum class Kind : uint8_t { Node = 0, SavedSlot, Storage, Tensor };
inline constexpr int kNumKinds = 4;
/// "node", "saved_slot", "storage", "tensor".
const char* kind_name(Kind k);

namespace detail {
extern std::atomic<uint32_t> g_generation;
extern std::atomic<uint8_t> g_tier;
}  // namespace detail

/// The current generation (steps seen since the process started).
inline uint32_t generation() noexcept { return detail::g_generation.load(std::memory_order_relaxed); }
inline Tier tier() noexcept { return static_cast<Tier>(detail::g_tier.load(std::memory_order_relaxed)); }
/// True while a session counts objects (tier Counters or Sites).
inline bool counting() noexcept { return tier() != Tier::Off; }

/// Sets the tier (doctor::Session does this; at most one session watches at a time).
void set_tier(Tier t) noexcept;
/// Starts the next generation; returns it.
uint32_t advance_generation() noexcept;

// ---- per-generation counters ----

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
/// Counts an object of `kind` made in generation `gen` (call only when counting()).
void count_create(Kind kind, uint32_t gen, int64_t bytes) noexcept;
/// Uncounts it (call only for objects that were counted).
void count_destroy(Kind kind, uint32_t gen, int64_t bytes) noexcept;
/// Every generation with live counted objects, oldest first.
std::vector<GenerationCounts> live_generations();

// ---- sites: the source line that created an object ----

using SiteId = uint32_t;  ///< 0: unknown
/// A creation site. Python sites name the first frame outside graft's own package; when that
/// frame is a module's forward called through nn.Module (a user's model), the line that called
/// the model is the site and the forward's line is kept as `inner`. C++ sites keep the raw
/// return addresses and are symbolised when first asked for.
struct Site {
  std::string file;  ///< "train.py" (Python: as the code object names it)
  int line = 0;
  std::string function;  ///< "train" / "main"
  std::string scope;     ///< innermost nn.Module being called, when known ("Net.encoder")
  bool python = false;
  std::string inner;  ///< "Net.forward at model.py:40": the innermost user frame, if not this one
  /// "train.py:42" (or the function name when a C++ frame has no line).
  std::string where() const;
  /// where(), plus the inner frame when there is one: "train.py:42 (Net.forward at model.py:40)".
  std::string detail() const;
};
/// Interns a site; equal sites get the same id.
SiteId intern_site(const Site& s);
/// The site behind `id` (C++ sites are symbolised on first use).
Site site(SiteId id);
/// The creation site for an object made now: 0 below tier Sites; else the Python provider's
/// answer, or the C++ caller when there is no Python frame on this thread.
SiteId capture_site();
/// While alive, capture_site() on this thread returns `site` (when nonzero): the Python
/// bindings set it before releasing the interpreter lock, so that nodes made without it (a
/// backward with create_graph, a heavy op) still name the user's line.
class SiteScope : graft::detail::NonCopyable {
 public:
  explicit SiteScope(SiteId site) noexcept;
  ~SiteScope();

 private:
  SiteId prev_;
};
/// The C++ caller (a backtrace, interned; symbolised lazily).
SiteId capture_cpp_site();
/// Returns the site of the innermost Python frame outside graft, or 0 when this thread has no
/// Python frame (or does not hold the interpreter lock). Installed by the Python package.
using SiteProvider = SiteId (*)();
void set_python_site_provider(SiteProvider p) noexcept;

// ---- events the doctor observes ----

/// What the doctor is told by the lower layers while a session watches. The default methods
/// do nothing; doctor::Session installs its own.
class Observer {
 public:
  virtual ~Observer() = default;
  /// A graph node is about to be destroyed (its saved slots still hold what they held).
  virtual void node_released(const Node&) noexcept {}
  /// A backward pass (backward() or grad()) starts; returns its id (0: untracked).
  /// `retain_graph` is true only when asked for explicitly (create_graph implies it).
  virtual uint32_t backward_started(bool retain_graph, bool create_graph) noexcept { return 0; }
  /// A backward pass ran `node` (retained: retain_graph asked for explicitly). Called for every
  /// node it visits.
  virtual void node_executed(Node&, uint32_t backward_id, bool retain_graph) noexcept {}
  /// An optimizer stepped `leaf` with a `.grad` that still held gradients accumulated before the
  /// leaf's previous step, untouched since (no zero_grad): the `streak`-th such step in a row.
  virtual void stale_gradient_used(const TensorImpl& leaf, uint32_t streak) noexcept {}
  /// A storage was made or is being destroyed (its block's bytes, category and site).
  virtual void storage_event(const StorageImpl&, bool created) noexcept {}
  /// The allocator's category of a live storage's block changes (parameter tagging, or the
  /// first/last saved-for-backward claim); `site` and `generation` are what the doctor recorded
  /// for the block's storage (0 when it recorded nothing).
  virtual void storage_recategorized(const void* block_ctx, int old_category, int new_category, int64_t bytes,
                                     uint32_t site, uint32_t generation) noexcept {}
  /// Optimizer `optimizer` (an identity) is about to step (`finished` false: Python pre hook,
  /// or the start of a C++ optimizer's step) or finished its step (`finished` true).
  virtual void optimizer_step(const void* optimizer, bool finished) noexcept {
    (void)optimizer;
    (void)finished;
  }
};
/// Installs `o` (null: none). The caller keeps it alive while installed.
void set_observer(Observer* o) noexcept;
Observer* observer() noexcept;

/// Tells the observer that `optimizer` (an identity) is about to step (`finished` false) or has
/// stepped (`finished` true): a leak doctor's steps follow them (docs/notes/doctor.md, "Steps").
/// Called by graft's C++ optimizers and by the Python optimizer hooks.
void note_optimizer_step(const void* optimizer, bool finished) noexcept;

// ---- live lists ----

/// Links of an object in a live list (its owner holds one of these).
template <class T>
struct LiveLinks {
  T* prev = nullptr;
  T* next = nullptr;
  bool linked = false;
};

/// An intrusive list of live objects of one type, guarded by one mutex. Objects link
/// themselves when made while counting() and unlink when destroyed. Walking holds the lock:
/// objects cannot finish being destroyed meanwhile (their unlink waits), so the walker must
/// not drop references or allocate graft memory.
template <class T, LiveLinks<T> T::*Links>
class LiveList {
 public:
  void link(T* o) {
    std::lock_guard<std::mutex> g(mu_);
    LiveLinks<T>& l = o->*Links;
    l.prev = nullptr;
    l.next = head_;
    if (head_) (head_->*Links).prev = o;
    head_ = o;
    l.linked = true;
    ++size_;
  }
  void unlink(T* o) {
    LiveLinks<T>& l = o->*Links;
    if (!l.linked) return;
    std::lock_guard<std::mutex> g(mu_);
    if (l.prev)
      (l.prev->*Links).next = l.next;
    else
      head_ = l.next;
    if (l.next) (l.next->*Links).prev = l.prev;
    l.prev = l.next = nullptr;
    l.linked = false;
    --size_;
  }
  /// Calls fn(T&) for every linked object, holding the lock.
  template <class F>
  void for_each(F&& fn) const {
    std::lock_guard<std::mutex> g(mu_);
    for (T* o = head_; o; o = (o->*Links).next) fn(*o);
  }
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return size_;
  }

 private:
  mutable std::mutex mu_;
  T* head_ = nullptr;
  size_t size_ = 0;
};

}  // namespace lifetime
}  // namespace graft
