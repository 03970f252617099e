#pragma once
/// What the lower layers tell a diagnostic observer (the leak doctor, graft/doctor/doctor.h).
///
/// Graph nodes, tensors, storages and saved-for-backward slots report their creation and
/// destruction, the engine its passes, the leaves their gradients and optimizer steps, to one
/// installed Observer, as PyTorch's RecordFunction callbacks or MLX's hooks report to theirs.
/// What the doctor knows of each object (its step, its creation line, the pass that retained
/// it) lives in side tables the doctor owns, but for tensors, the objects made most often: each
/// carries an ObserverSlot for the observer's entry, so that recording one needs no table.
/// With no observer installed the cost is one load per object made or destroyed.
///
/// This layer also interns *sites*, the source lines that create objects (from the Python
/// frame or the C++ caller), while site capture is on. Design: docs/notes/doctor.md.
#include <atomic>
#include <cstdint>
#include <string>

#include "graft/core/non_copyable.h"

namespace graft {

class Node;
class TensorImpl;
class StorageImpl;
class SavedVariable;

namespace lifetime {

/// How much a watching observer records.
enum class Tier : uint8_t {
  Off = 0,       ///< no observer watches
  Counters = 1,  ///< objects are reported (the doctor's tier 0)
  Sites = 2,     ///< + capture_site() names the creation line of every object (tier 1)
};

namespace detail {
extern std::atomic<uint8_t> g_tier;
}  // namespace detail

inline Tier tier() noexcept { return static_cast<Tier>(detail::g_tier.load(std::memory_order_relaxed)); }
/// True while an observer watches (tier Counters or Sites).
inline bool counting() noexcept { return tier() != Tier::Off; }
/// Sets the tier (doctor::Session does this; at most one session watches at a time).
void set_tier(Tier t) noexcept;

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

/// Room in every tensor for the observer's entry of it (TensorImpl::observer_slot()): a link in
/// the observer's list of the tensors it recorded, and what it recorded. Zero while the tensor
/// is not recorded. Written and read only by the observer, under its own lock.
struct ObserverSlot {
  TensorImpl* prev = nullptr;
  TensorImpl* next = nullptr;
  uint64_t seq = 0;  ///< nonzero while recorded: the observer's creation order
  uint32_t generation = 0;
  SiteId site = 0;
};

/// What the lower layers report while an observer is installed. Every method may be called
/// on any thread, with locks of the reporting layer held (a leaf's gradient lock, for the
/// gradient events), so an observer must not call back into graft objects beyond reading the
/// one it is given. The default methods do nothing.
class Observer {
 public:
  virtual ~Observer() = default;

  // ---- objects: made and destroyed ----
  /// A graph node is being made (its base part only: no virtual call on it yet).
  virtual void node_created(const Node&) noexcept {}
  /// A graph node is about to be destroyed (its saved slots still hold what they held).
  virtual void node_destroyed(const Node&) noexcept {}
  /// A node shared by graphs (a leaf's AccumulateGrad) is used by one more graph.
  virtual void node_reused(const Node&) noexcept {}
  /// A tensor was made (geometry, storage and dtype set; autograd state not yet).
  virtual void tensor_created(const TensorImpl&) noexcept {}
  virtual void tensor_destroyed(const TensorImpl&) noexcept {}
  /// A storage was made or is being destroyed.
  virtual void storage_created(const StorageImpl&) noexcept {}
  virtual void storage_destroyed(const StorageImpl&) noexcept {}
  /// A slot saved `bytes` for backward.
  virtual void saved_created(const SavedVariable&, int64_t bytes) noexcept {}
  /// A saved slot was copied (`moved` false) or moved into `to`.
  virtual void saved_copied(const SavedVariable& from, const SavedVariable& to, bool moved) noexcept {}
  /// A saved slot released what it held, or is being destroyed.
  virtual void saved_destroyed(const SavedVariable&) noexcept {}

  // ---- the engine ----
  /// A backward pass (backward() or grad()) starts; returns its id (0: untracked).
  /// `retain_graph` is true only when asked for explicitly (create_graph implies it).
  virtual uint32_t backward_started(bool retain_graph, bool create_graph) noexcept { return 0; }
  /// A backward pass ran `node` (retained: retain_graph asked for explicitly). Called for every
  /// node it visits.
  virtual void node_executed(const Node&, uint32_t backward_id, bool retain_graph) noexcept {}

  // ---- leaves: gradients and optimizer steps ----
  /// AccumulateGrad wrote `leaf`'s .grad (with the leaf's gradient lock held): `before` (null:
  /// there was none) at version `before_version` is now `after` at version `after_version`.
  virtual void gradient_accumulated(const TensorImpl& leaf, const TensorImpl* before, uint32_t before_version,
                                    const TensorImpl& after, uint32_t after_version) noexcept {}
  /// An optimizer is stepping `leaf`, whose .grad is `grad` (null: none) at `grad_version`
  /// (`grad_has_graph`: the .grad has a grad_fn), with the leaf's gradient lock held. Returns
  /// how many steps in a row used a .grad carried over from before the leaf's previous step,
  /// untouched since (no zero_grad); 0 when this one did not.
  virtual uint32_t leaf_stepped(const TensorImpl& leaf, const TensorImpl* grad, uint32_t grad_version,
                                bool grad_has_graph) noexcept {
    return 0;
  }
  /// leaf_stepped returned `streak` > 0 (called after the leaf's lock is released).
  virtual void stale_gradient_used(const TensorImpl& leaf, uint32_t streak) noexcept {}

  // ---- the allocator and the optimizers ----
  /// The allocator's category of a live storage's block changes (parameter tagging, or the
  /// first/last saved-for-backward claim); `site` and `generation` are what the observer stored
  /// for the block (CachingAllocator::set_lifetime; 0 when nothing).
  virtual void storage_recategorized(const void* block_ctx, int old_category, int new_category, int64_t bytes,
                                     uint32_t site, uint32_t generation) noexcept {}
  /// Optimizer `optimizer` (an identity) is about to step (`finished` false: Python pre hook,
  /// or the start of a C++ optimizer's step) or finished its step (`finished` true).
  virtual void optimizer_step(const void* optimizer, bool finished) noexcept {
    (void)optimizer;
    (void)finished;
  }
};
namespace detail {
extern std::atomic<Observer*> g_observer;
}  // namespace detail
/// Installs `o` (null: none). The caller keeps it alive as long as a call may still reach it
/// (the doctor's recorder is never destroyed).
void set_observer(Observer* o) noexcept;
/// The installed observer, or null: what every reporting object loads first.
inline Observer* observer() noexcept { return detail::g_observer.load(std::memory_order_acquire); }

/// Tells the observer that `optimizer` (an identity) is about to step (`finished` false) or has
/// stepped (`finished` true): a leak doctor's steps follow them (docs/notes/doctor.md, "Steps").
/// Called by graft's C++ optimizers and by the Python optimizer hooks.
void note_optimizer_step(const void* optimizer, bool finished) noexcept;

}  // namespace lifetime
}  // namespace graft
