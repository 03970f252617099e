// The backward engine: dependency counting from the roots, a ready queue ordered by
// sequence number (reverse creation order), per-node input buffers, no recursion.
// See docs/notes/autograd-engine.md.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "accumulate_grad.h"
#include "graft/alloc/memory_history.h"
#include "graft/autograd/autograd.h"
#include "graft/autograd/graph_walk.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft::autograd {
namespace {

// Feeds the root gradients into the graph.
class GraphRoot final : public Node {
 public:
  GraphRoot(const edge_list& roots, TensorList grads) : grads_(std::move(grads)) {
    next_edges_ = roots;
    sequence_nr_ = UINT64_MAX;
  }
  std::string name() const override { return "GraphRoot"; }
  bool call_with_undefined_grads() const override { return true; }
  TensorList apply(TensorList&&) override { return grads_; }

 private:
  TensorList grads_;
};

struct Capture {
  uint32_t input_nr;
  size_t output_idx;
};
struct ExecInfo {
  bool needed = false;
  std::vector<Capture> captures;
};

struct NodeState {
  int dependencies = 0;
  TensorList buffer;
};

// Node* -> NodeState with open addressing: one backward touches few nodes, and a flat table
// avoids a heap allocation per node (std::unordered_map) on the per-op hot path. The table and
// the states of a small graph (up to 16 nodes) are inline: no heap allocation at all. A
// returned reference is valid until the next get() (states_ may move when it grows).
class NodeStates {
 public:
  NodeStates() : keys_(kInlineSlots, nullptr), slots_(kInlineSlots, 0) {}
  /// The state of `n`, created if absent; `created` tells which.
  NodeState& get(Node* n, bool* created = nullptr) {
    size_t i = probe(n);
    if (keys_[i] == n) {
      if (created) *created = false;
      return states_[slots_[i]];
    }
    if ((states_.size() + 1) * 2 > keys_.size()) {
      grow();
      i = probe(n);
    }
    keys_[i] = n;
    slots_[i] = static_cast<uint32_t>(states_.size());
    states_.emplace_back();
    if (created) *created = true;
    return states_.back();
  }
  NodeState* find(Node* n) {
    size_t i = probe(n);
    return keys_[i] == n ? &states_[slots_[i]] : nullptr;
  }

 private:
  size_t probe(Node* n) const {
    size_t mask = keys_.size() - 1;
    size_t i = (reinterpret_cast<uintptr_t>(n) >> 4) * 0x9E3779B97F4A7C15ULL >> 20 & mask;
    while (keys_[i] && keys_[i] != n) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    const size_t n = keys_.size() * 2;
    Keys old_keys = std::exchange(keys_, Keys(n, nullptr));
    Slots old_slots = std::exchange(slots_, Slots(n, 0));
    for (size_t j = 0; j < old_keys.size(); ++j)
      if (old_keys[j]) {
        size_t i = probe(old_keys[j]);
        keys_[i] = old_keys[j];
        slots_[i] = old_slots[j];
      }
  }
  static constexpr size_t kInlineSlots = 32;  // a power of two; at most half full
  using Keys = SmallVector<Node*, kInlineSlots>;
  using Slots = SmallVector<uint32_t, kInlineSlots>;
  Keys keys_;
  Slots slots_;
  SmallVector<NodeState, kInlineSlots / 2> states_;
};

// The ready queue: a max-heap on (sequence_nr, node) as std::priority_queue keeps it (the same
// std::push_heap / std::pop_heap, so the same order), over inline storage for a few entries.
class ReadyQueue {
 public:
  using Item = std::pair<uint64_t, Node*>;
  bool empty() const { return heap_.empty(); }
  const Item& top() const { return heap_[0]; }
  void push(Item item) {
    heap_.push_back(item);
    std::push_heap(heap_.begin(), heap_.end());
  }
  void pop() {
    std::pop_heap(heap_.begin(), heap_.end());
    heap_.pop_back();
  }

 private:
  SmallVector<Item, 8> heap_;
};

std::atomic<int64_t> g_next_graph_task_id{0};
thread_local int64_t tl_graph_task_id = -1;
thread_local bool tl_checkpoint_valid = true;

// Publishes the running graph task on this thread for its duration (restored on exit, also
// when the pass throws), so that code called from inside the pass can tell which one it is in.
class CurrentGraphTask {
 public:
  explicit CurrentGraphTask(bool can_checkpoint) : prev_id_(tl_graph_task_id), prev_valid_(tl_checkpoint_valid) {
    tl_graph_task_id = g_next_graph_task_id.fetch_add(1, std::memory_order_relaxed);
    tl_checkpoint_valid = prev_valid_ && can_checkpoint;
  }
  ~CurrentGraphTask() {
    tl_graph_task_id = prev_id_;
    tl_checkpoint_valid = prev_valid_;
  }
  CurrentGraphTask(const CurrentGraphTask&) = delete;
  CurrentGraphTask& operator=(const CurrentGraphTask&) = delete;

 private:
  int64_t prev_id_;
  bool prev_valid_;
};

std::string ordinal(size_t i) { return std::to_string(i) + "th"; }

// Checks and fixes one produced gradient against the metadata of the input it flows into.
Tensor validate_grad(Node* producer, size_t index, Tensor grad, const InputMetadata& md) {
  if (!grad.sizes().equals(md.shape)) {
    // is md.shape expandable to grad.sizes()? then reduce (broadcast backward)
    bool expandable = md.shape.size() <= static_cast<size_t>(grad.dim());
    for (size_t i = 0; expandable && i < md.shape.size(); ++i) {
      int64_t a = md.shape[md.shape.size() - 1 - i], b = grad.sizes()[grad.dim() - 1 - i];
      if (a != b && a != 1) expandable = false;
    }
    GRAFT_CHECK(expandable, RuntimeError, "Function ", producer->name(), " returned an invalid gradient at index ",
                index, " - got ", grad.sizes(), " but expected shape compatible with ", IntArrayRef(md.shape));
    grad = sum_to(grad, md.shape);
  }
  if (grad.dtype() != md.dtype) grad = grad.to(md.dtype);
  if (grad.device() != md.device) [[unlikely]] {  // a 0-d gradient moves, as in PyTorch
    GRAFT_CHECK(grad.dim() == 0, RuntimeError, "Function ", producer->name(), " returned an invalid gradient at index ",
                index, " - expected device ", md.device, " but got ", grad.device());
    grad = grad.to(md.device);
  }
  return grad;
}

void add_to_buffer(TensorList& buf, uint32_t pos, Tensor&& g) {
  if (!g.defined()) return;
  Tensor& slot = buf[pos];
  if (!slot.defined())
    slot = std::move(g);
  else
    slot = slot + g;
}

class GraphTask {
 public:
  GraphTask(bool keep_graph, bool create_graph) : keep_graph_(keep_graph), create_graph_(create_graph) {
    // the leak doctor tracks which retained graphs a later pass reaches (LD009)
    if (lifetime::Observer* o = lifetime::observer()) {
      observer_ = o;
      id_ = o->backward_started(keep_graph && !create_graph, create_graph);
    }
  }

  // outputs: edges whose incoming gradient is captured (autograd.grad / backward(inputs=)).
  TensorList run(const edge_list& roots, TensorList root_grads, const edge_list& outputs, bool accumulate) {
    std::shared_lock<std::shared_mutex> walkers_wait;  // an outermost pass pauses graph walkers
    if (tl_graph_task_id < 0) walkers_wait = std::shared_lock<std::shared_mutex>(graph_walk_mutex());
    auto root = make_intrusive<GraphRoot>(roots, std::move(root_grads));
    compute_dependencies(root.get());
    if (!outputs.empty()) init_exec_info(root.get(), outputs, accumulate);
    captured_.resize(outputs.size());
    CurrentGraphTask current(exec_info_.empty());

    ReadyQueue ready;
    ready.push({root->sequence_nr(), root.get()});
    AutoGradMode mode(create_graph_);
    while (!ready.empty()) {
      Node* fn = ready.top().second;
      ready.pop();
      TensorList inputs;
      if (fn != root.get()) {
        inputs = std::move(state_.find(fn)->buffer);
        if (inputs.size() < fn->num_inputs()) inputs.resize(fn->num_inputs());
      }
      if (!exec_info_.empty()) {
        auto& info = exec_info_[fn];
        if (!info.captures.empty()) {
          fn->call_tensor_pre_hooks(inputs);
          for (const auto& c : info.captures) captured_[c.output_idx] = inputs[c.input_nr];
          if (!info.needed) continue;
          fn->call_retain_grad_hooks(inputs);
          evaluate(fn, std::move(inputs), ready, /*hooks_done=*/true);
          continue;
        }
        if (!info.needed && fn != root.get()) continue;
      }
      evaluate(fn, std::move(inputs), ready, false);
    }
    return std::move(captured_);
  }

 private:
  void compute_dependencies(Node* root) {
    SmallVector<Node*, 16> stack{root};
    state_.get(root);
    while (!stack.empty()) {
      Node* fn = stack.back();
      stack.pop_back();
      for (const Edge& e : fn->next_edges()) {
        Node* next = e.function.get();
        if (!next) continue;
        bool created = false;
        state_.get(next, &created).dependencies++;
        if (created) stack.push_back(next);
      }
    }
  }

  // Marks nodes on a path to a capture target as needed (iterative post-order DFS).
  void init_exec_info(Node* root, const edge_list& outputs, bool accumulate) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Edge& e = outputs[i];
      if (!e.is_valid()) continue;
      auto& info = exec_info_[e.function.get()];
      if (accumulate)
        info.needed = true;  // backward(inputs=): non-leaf grad_fns run, retain_grad fills .grad
      else
        info.captures.push_back({e.input_nr, i});
    }
    struct Frame {
      Node* fn;
      size_t next;
    };
    std::vector<Frame> stack{{root, 0}};
    std::unordered_map<Node*, bool> visited;
    visited[root] = true;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto& edges = f.fn->next_edges();
      if (f.next < edges.size()) {
        Node* child = edges[f.next++].function.get();
        if (child && !visited[child]) {
          visited[child] = true;
          stack.push_back({child, 0});
        }
        continue;
      }
      // post-order: needed if any child needed or captured
      Node* fn = f.fn;
      stack.pop_back();
      bool needed = false;
      for (const Edge& e : edges) {
        if (!e.function) continue;
        auto it = exec_info_.find(e.function.get());
        if (it != exec_info_.end() && (it->second.needed || !it->second.captures.empty())) {
          needed = true;
          break;
        }
      }
      if (needed) exec_info_[fn].needed = true;
    }
    exec_info_[root].needed = true;
  }

  bool should_run(Node* fn) {
    if (exec_info_.empty()) return true;
    auto it = exec_info_.find(fn);
    return it != exec_info_.end() && (it->second.needed || !it->second.captures.empty());
  }

  void evaluate(Node* fn, TensorList&& inputs, ReadyQueue& ready, bool hooks_done) {
    if (!hooks_done) {
      fn->call_tensor_pre_hooks(inputs);
      fn->call_retain_grad_hooks(inputs);
    }
    if (observer_ && id_) observer_->node_executed(*fn, id_, keep_graph_ && !create_graph_);
    // memory allocated and freed while the node runs is attributed to it (named lazily)
    alloc::MemoryOpScope mem_scope(fn, [](const void* n) { return static_cast<const Node*>(n)->name(); });
    TensorList outputs;
    bool any_defined = fn->num_inputs() == 0;
    for (const Tensor& t : inputs) any_defined |= t.defined();
    try {
      if (any_defined || fn->call_with_undefined_grads()) outputs = fn->apply(std::move(inputs));
    } catch (const std::exception&) {
      if (AnomalyMode::is_enabled()) {
        warn("Error detected in " + fn->name() + ". Traceback of forward call that caused the error:\n" +
             fn->anomaly_trace());
      }
      throw;
    }
    const auto& edges = fn->next_edges();
    const size_t n = edges.size();
    if (outputs.size() < n) outputs.resize(n);
    // Validate before releasing (as PyTorch's call_function): after a shape error the graph is
    // still intact.
    for (size_t i = 0; i < n; ++i)
      if (edges[i].function && outputs[i].defined())
        outputs[i] = validate_grad(fn, i, std::move(outputs[i]), edges[i].function->input_metadata(edges[i].input_nr));
    if (!keep_graph_) fn->release_variables();
    if (AnomalyMode::is_enabled() && AnomalyMode::should_check_nan()) {
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (!outputs[i].defined() || !outputs[i].is_floating_point()) continue;
        NoGradGuard ng;
        if (!outputs[i].device().is_meta() && isnan(outputs[i]).to(kInt64).sum().item<int64_t>()) {
          // like any error inside a node, it first reports where the node came from
          warn("Error detected in " + fn->name() + ". Traceback of forward call that caused the error:\n" +
               fn->anomaly_trace());
          throw RuntimeError(
              detail::str("Function '", fn->name(), "' returned nan values in its ", ordinal(i), " output."));
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      const Edge& e = edges[i];
      Node* next = e.function.get();
      if (!next) continue;
      NodeState& st = state_.get(next);
      if (outputs[i].defined()) {
        if (st.buffer.size() < next->num_inputs()) st.buffer.resize(next->num_inputs());
        add_to_buffer(st.buffer, e.input_nr, std::move(outputs[i]));
      }
      if (--st.dependencies == 0 && should_run(next)) ready.push({next->sequence_nr(), next});
    }
  }

  bool keep_graph_, create_graph_;
  lifetime::Observer* observer_ = nullptr;
  uint32_t id_ = 0;
  NodeStates state_;
  std::unordered_map<Node*, ExecInfo> exec_info_;
  TensorList captured_;
};

Tensor make_root_grad(const Tensor& out, const Tensor& grad, size_t i) {
  if (!grad.defined()) {
    GRAFT_CHECK(out.numel() == 1, RuntimeError, "grad can be implicitly created only for scalar outputs");
    return ones_like(out);
  }
  GRAFT_CHECK(grad.sizes().equals(out.sizes()), RuntimeError, "Mismatch in shape: grad_output[", i,
              "] has a shape of torch.Size(", grad.sizes(), ") and output[", i, "] has a shape of torch.Size(",
              out.sizes(), ").");
  return grad.dtype() == out.dtype() ? grad : grad.to(out.dtype());
}

void collect_roots(const TensorList& tensors, const TensorList& grads, edge_list& roots, TensorList& root_grads) {
  GRAFT_CHECK(grads.empty() || grads.size() == tensors.size(), RuntimeError, "got ", tensors.size(), " tensors and ",
              grads.size(), " gradients");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    GRAFT_CHECK(t.defined(), ValueError, "backward: element ", i, " of tensors is undefined");
    GRAFT_CHECK(t.requires_grad(), RuntimeError, "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    roots.push_back(gradient_edge(t));
    root_grads.push_back(make_root_grad(t, grads.empty() ? Tensor() : grads[i], i));
  }
}

}  // namespace

int64_t current_graph_task_id() { return tl_graph_task_id; }

std::shared_mutex& graph_walk_mutex() {
  static std::shared_mutex mu;
  return mu;
}
bool is_checkpoint_valid() { return tl_checkpoint_valid; }

void backward(const TensorList& tensors, const TensorList& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const std::optional<TensorList>& inputs) {
  GRAFT_CHECK(!inputs || !inputs->empty(), RuntimeError, "`inputs` argument to `backward()` cannot be empty.");
  if (create_graph)
    warn(
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
        "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
        "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters to "
        "None after use to break the cycle and avoid the leak.");
  edge_list roots;
  TensorList root_grads;
  collect_roots(tensors, grad_tensors, roots, root_grads);
  edge_list outputs;
  std::vector<Tensor> nonleaf_inputs;
  if (inputs) {
    for (const Tensor& t : *inputs) {
      GRAFT_CHECK(t.defined() && t.requires_grad(), RuntimeError,
                  "One of the differentiated Tensors does not require grad");
      if (!t.is_leaf()) t.retain_grad();  // as PyTorch: a non-leaf input's .grad is filled by retain_grad
      outputs.push_back(gradient_edge(t));
    }
  }
  GraphTask task(retain_graph.value_or(create_graph), create_graph);
  task.run(roots, std::move(root_grads), outputs, /*accumulate=*/true);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused, bool materialize_grads) {
  edge_list roots;
  TensorList root_grads;
  collect_roots(outputs, grad_outputs, roots, root_grads);
  edge_list out_edges;
  for (const Tensor& t : inputs) {
    GRAFT_CHECK(t.defined() && t.requires_grad(), RuntimeError,
                "One of the differentiated Tensors does not require grad");
    out_edges.push_back(gradient_edge(t));
  }
  GraphTask task(retain_graph.value_or(create_graph), create_graph);
  TensorList res = task.run(roots, std::move(root_grads), out_edges, /*accumulate=*/false);
  for (size_t i = 0; i < res.size(); ++i) {
    if (res[i].defined()) continue;
    if (materialize_grads) {
      res[i] = zeros_like(inputs[i]);
      continue;
    }
    GRAFT_CHECK(allow_unused, RuntimeError,
                "One of the differentiated Tensors appears to not have been used in the graph. Set "
                "allow_unused=True if this is the desired behavior.");
  }
  return res;
}

}  // namespace graft::autograd
