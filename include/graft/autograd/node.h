#pragma once
/// Node: a vertex of the backward graph (PyTorch's grad_fn objects such as MulBackward0).
/// Edges point from a node to the nodes that produced its forward inputs. Nodes are
/// destroyed iteratively, so a million-node chain does not overflow the stack.
/// See docs/notes/autograd-engine.md.
#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "graft/core/lifetime.h"
#include "graft/core/non_copyable.h"
#include "graft/core/tensor.h"

namespace graft {

class Node;
class SavedVariable;

/// What a node holds for its backward, shown to diagnostics (the leak doctor's census, which
/// counts saved bytes and draws the graph). Nodes report their SavedVariables, plain tensors
/// they keep, and nodes they own outside their edges.
class HeldVisitor {
 public:
  virtual ~HeldVisitor() = default;
  virtual void saved(const SavedVariable& sv, std::string_view what) = 0;
  virtual void tensor(const Tensor& t, std::string_view what) = 0;
  virtual void node(const Node& n, std::string_view what) {
    (void)n;
    (void)what;
  }
};

/// (function, input_nr): which input of `function` a gradient flows into.
struct Edge {
  intrusive_ptr<Node> function;
  uint32_t input_nr = 0;
  Edge() = default;
  Edge(intrusive_ptr<Node> f, uint32_t nr) : function(std::move(f)), input_nr(nr) {}
  bool is_valid() const { return function.get() != nullptr; }
};
using edge_list = SmallVector<Edge, 2>;

/// Shape, dtype and device of one forward output of a node: the gradient arriving there is
/// checked against it.
struct InputMetadata {
  Shape shape;
  DType dtype = kFloat32;
  Device device;
};

/// Hook on a node's incoming gradient for one forward output (Tensor::register_hook).
struct TensorPreHook {
  uint64_t id;
  uint32_t output_nr;
  std::function<Tensor(const Tensor&)> fn;
};
using HookList = std::vector<TensorPreHook>;

/// The hooks on one tensor's gradient (a leaf's, or a node's outputs'), safe to change while
/// a backward pass runs on another thread. The list is copy-on-write: registering or removing
/// a hook builds a new list under a small mutex and swaps it in; a backward pass runs the
/// hooks of a snapshot taken once per node. A hook removed (or added) while a pass is running
/// hooks may still run (or not yet run) once in that pass; the change is seen from the next
/// snapshot on, as under PyTorch's GIL a removal between passes takes effect in the next pass.
/// A node or leaf with no hooks costs one atomic load per backward visit, no lock.
class HookSlot {
 public:
  /// Appends a hook; returns its id (1, 2, ...: libtorch's registration index + 1).
  uint64_t add(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn);
  /// Removes hook `id` if it is still there (removing twice is a no-op).
  void remove(uint64_t id);
  /// The current hooks, or null when there are none (then no lock is taken).
  std::shared_ptr<const HookList> snapshot() const;
  /// Removes every hook for which `pred` is true; returns how many went. `pred` runs under the
  /// slot's lock; the removed hooks are destroyed after it is released (their closures may take
  /// the GIL). The Python layer uses it to break reference cycles (gc's tp_clear).
  size_t remove_if(const std::function<bool(const TensorPreHook&)>& pred);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const HookList> list_;  // guarded by mu_; replaced, never modified in place
  std::atomic<size_t> size_{0};           // size of *list_, read without the lock
  uint64_t next_id_ = 1;                  // guarded by mu_
};

/// A HookSlot made on the first registration and read lock-free afterwards. HookHandles hold
/// the slot weakly, so they keep neither the tensor nor the graph alive.
class LazyHookSlot {
 public:
  LazyHookSlot() = default;
  LazyHookSlot(const LazyHookSlot&) = delete;
  LazyHookSlot& operator=(const LazyHookSlot&) = delete;
  /// The slot, or null when no hook was ever registered.
  HookSlot* get() const { return ptr_.load(std::memory_order_acquire); }
  /// The slot, created if missing (thread-safe).
  std::shared_ptr<HookSlot> get_or_create();

 private:
  std::atomic<HookSlot*> ptr_{nullptr};  // published after owner_ is set
  std::shared_ptr<HookSlot> owner_;      // set once, under a process-wide mutex
};

/// Registers `fn` on `slot` and returns the remover a HookHandle calls: it removes the hook
/// if the slot still exists and is idempotent.
std::function<void()> add_hook_with_remover(LazyHookSlot& slot, uint32_t output_nr,
                                            std::function<Tensor(const Tensor&)> fn);

class Node : public RefCounted {
 public:
  Node();
  ~Node() override;
  void release_self() override;  ///< deferred, iterative deletion

  /// PyTorch's node name, e.g. "MulBackward0", "torch::autograd::AccumulateGrad".
  virtual std::string name() const = 0;
  /// The node's class name as Python shows it (`type(grad_fn).__name__`, `grad_fn=<...>` in a
  /// tensor's repr): name() without its C++ namespace, e.g. "AccumulateGrad".
  std::string class_name() const;
  /// Computes the gradients for the forward inputs from those of the forward outputs.
  /// `grads` has one entry per forward output (undefined = zero); the result one per edge.
  virtual TensorList apply(TensorList&& grads) = 0;
  /// Drops saved tensors (called after the node ran, unless retain_graph).
  virtual void release_variables() {}
  /// When every incoming gradient is undefined the engine skips apply() unless this is true
  /// (custom Functions are called anyway, with zeros when they materialize grads).
  virtual bool call_with_undefined_grads() const { return false; }
  /// Runs the tensor hooks registered on this node's outputs; they may replace gradients.
  virtual void call_tensor_pre_hooks(TensorList& grads);
  /// Writes `.grad` of outputs that called retain_grad() (after all tensor hooks).
  void call_retain_grad_hooks(const TensorList& grads);

  const edge_list& next_edges() const { return next_edges_; }
  edge_list& mutable_next_edges() { return next_edges_; }
  /// PyTorch's next_functions: one (node, input_nr) per differentiable forward input.
  const edge_list& next_functions() const { return next_edges_; }
  size_t num_outputs() const { return next_edges_.size(); }
  size_t num_inputs() const { return input_metadata_.size(); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_[i]; }
  /// Records the metadata of a new forward output; returns its output_nr.
  uint32_t add_input_metadata(const Tensor& t);
  void add_input_metadata_placeholder() { input_metadata_.emplace_back(); }
  uint64_t sequence_nr() const { return sequence_nr_; }
  /// True when edge `i` leads somewhere, i.e. gradient `i` must be computed.
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }

  /// Adds a hook on the gradient of forward output `output_nr`; returns its remover. Safe
  /// while a backward pass runs through this node on another thread (see HookSlot).
  std::function<void()> add_tensor_pre_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn);
  /// The hooks added by add_tensor_pre_hook (all outputs), or null when none were ever added.
  HookSlot* tensor_pre_hooks() const;
  /// retain_grad: `impl` receives the gradient of output `output_nr` after all hooks. The
  /// targets are guarded by a per-node mutex, held while a pass writes a retained .grad, so
  /// the TensorImpl destructor (which clears its target) waits for a write in flight.
  void set_retain_grad_target(uint32_t output_nr, TensorImpl* impl);
  void clear_retain_grad_target(uint32_t output_nr);
  /// Forward trace recorded in anomaly mode (empty otherwise).
  const std::string& anomaly_trace() const;
  void set_anomaly_trace(std::string trace);
  /// Shows what this node holds for its backward (saved tensors and the like) to `v`.
  virtual void visit_held(HeldVisitor& v) const { (void)v; }
  /// True for a leaf's AccumulateGrad: shared by every graph that uses the leaf.
  virtual bool is_accumulator() const { return false; }

 protected:
  uint64_t sequence_nr_;
  edge_list next_edges_;
  SmallVector<InputMetadata, 1> input_metadata_;

 private:
  struct Cold;                        // hooks, retain-grad targets, anomaly trace
  std::atomic<Cold*> cold_{nullptr};  // made once (compare-exchange), read lock-free; owned
  Cold& cold();
};

/// The hooks registered on leaf `t`'s gradient (Tensor::register_hook on a leaf), or null
/// when none were ever registered.
HookSlot* leaf_hook_slot(const TensorImpl& t);

/// Runs `hooks` in order on `grads` (shared by nodes and leaf accumulators).
void run_tensor_hooks(const HookList& hooks, TensorList& grads);
/// Runs the hooks of a snapshot of `slot` (null: none) on `grads`.
void run_tensor_hooks(const HookSlot* slot, TensorList& grads);

/// Pack/unpack hooks for tensors saved for backward (torch.autograd.graph.saved_tensors_hooks):
/// `pack` runs once per tensor when an op saves it, and what it returns is kept instead of the
/// tensor; `unpack` turns it back into a tensor on every access. Use SavedTensorsHooksGuard.
struct SavedTensorsHooks {
  std::function<std::any(const Tensor&)> pack;
  std::function<Tensor(const std::any&)> unpack;
};

/// RAII: installs saved-tensor hooks on this thread for the scope (the innermost wins).
class SavedTensorsHooksGuard : graft::detail::NonCopyable {
 public:
  SavedTensorsHooksGuard(std::function<std::any(const Tensor&)> pack, std::function<Tensor(const std::any&)> unpack);
  ~SavedTensorsHooksGuard();
};

/// Saves a tensor for backward with its version (PyTorch's SavedVariable). Unpacking after
/// release or after an in-place change throws PyTorch's exact messages.
class SavedVariable {
 public:
  SavedVariable() = default;
  /// `is_output`: the tensor is an output of the node that saves it; it is stored without
  /// its grad_fn (to avoid a node -> tensor -> node cycle) and relinked on unpack.
  SavedVariable(const Tensor& t, bool is_output);
  SavedVariable(const SavedVariable& o);
  SavedVariable(SavedVariable&& o) noexcept;
  SavedVariable& operator=(const SavedVariable& o);
  SavedVariable& operator=(SavedVariable&& o) noexcept;
  ~SavedVariable();
  /// Returns the saved tensor; `saved_for` is the owning node (needed for outputs).
  Tensor unpack(Node* saved_for = nullptr) const;
  void reset_data();
  bool defined() const { return was_defined_; }

  // --- for diagnostics (the leak doctor); none of these unpacks or checks versions ---
  /// True after release (backward without retain_graph, or the node's release).
  bool released() const { return released_; }
  /// True when saved-tensor hooks packed the tensor (its memory is whatever they kept).
  bool packed() const { return packed_ != nullptr; }
  /// The tensor held while not released and not packed (undefined otherwise); an output's
  /// alias has no history.
  const Tensor& held() const { return data_; }

 private:
  struct Packed;  // state kept when saved-tensor hooks were active
  std::shared_ptr<Packed> packed_;
  Tensor data_;  // inputs: the tensor itself; outputs: an alias without history
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  void report_created() const;
  bool was_defined_ = false;
  bool is_output_ = false;
  bool released_ = false;
  /// Counts this SavedVariable as a holder of the storage's memory, so that memory_by_category
  /// reports it as saved_for_backward while the graph keeps it (see docs/memory.md).
  class StorageClaim {
   public:
    StorageClaim() = default;
    explicit StorageClaim(intrusive_ptr<StorageImpl> s);
    StorageClaim(const StorageClaim& o);
    StorageClaim(StorageClaim&& o) noexcept = default;
    StorageClaim& operator=(StorageClaim o) noexcept;
    ~StorageClaim();

   private:
    intrusive_ptr<StorageImpl> storage_;
  };
  StorageClaim claim_;
};

}  // namespace graft
