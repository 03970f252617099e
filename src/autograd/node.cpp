// Node bookkeeping: sequence numbers, iterative deletion, tensor hooks, retain_grad targets.
// See docs/notes/autograd-engine.md, "Iterative destruction".
#include "graft/autograd/node.h"

#include <atomic>
#include <vector>

#include "graft/autograd/grad_mode.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft {
namespace {
std::atomic<uint64_t> g_sequence_nr{0};
thread_local std::vector<Node*>* tl_pending_deletes = nullptr;
}  // namespace

struct Node::Cold {
  std::shared_ptr<HookList> hooks;
  SmallVector<std::pair<uint32_t, TensorImpl*>, 1> retain_targets;
  std::string anomaly_trace;
  uint64_t next_hook_id = 1;
};

Node::Node() : sequence_nr_(g_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}
Node::~Node() = default;

// Deleting a node drops its edges and saved tensors, which may drop the last reference to
// further nodes. Instead of recursing, nested releases are queued and drained here.
void Node::release_self() {
  if (tl_pending_deletes) {
    tl_pending_deletes->push_back(this);
    return;
  }
  std::vector<Node*> pending;
  tl_pending_deletes = &pending;
  delete this;
  while (!pending.empty()) {
    Node* n = pending.back();
    pending.pop_back();
    delete n;
  }
  tl_pending_deletes = nullptr;
}

Node::Cold& Node::cold() {
  if (!cold_) cold_ = std::make_unique<Cold>();
  return *cold_;
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back(InputMetadata{Shape(t.sizes().begin(), t.sizes().end()), t.dtype(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

std::function<void()> hook_remover(const std::shared_ptr<HookList>& list, uint64_t id) {
  return [weak = std::weak_ptr<HookList>(list), id]() {
    auto l = weak.lock();
    if (!l) return;
    for (auto it = l->begin(); it != l->end(); ++it)
      if (it->id == id) { l->erase(it); return; }
  };
}

std::function<void()> Node::add_tensor_pre_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn) {
  auto& c = cold();
  if (!c.hooks) c.hooks = std::make_shared<HookList>();
  uint64_t id = c.next_hook_id++;
  c.hooks->push_back(TensorPreHook{id, output_nr, std::move(fn)});
  return hook_remover(c.hooks, id);
}
void Node::set_retain_grad_target(uint32_t output_nr, TensorImpl* impl) {
  auto& t = cold().retain_targets;
  for (auto& p : t)
    if (p.first == output_nr) { p.second = impl; return; }
  t.push_back({output_nr, impl});
}
void Node::clear_retain_grad_target(uint32_t output_nr) {
  if (!cold_) return;
  auto& t = cold_->retain_targets;
  for (auto* it = t.begin(); it != t.end(); ++it)
    if (it->first == output_nr) { t.erase(it); return; }
}
const std::string& Node::anomaly_trace() const {
  static const std::string empty;
  return cold_ ? cold_->anomaly_trace : empty;
}
void Node::set_anomaly_trace(std::string trace) { cold().anomaly_trace = std::move(trace); }

void run_tensor_hooks(const HookList& hooks, TensorList& grads) {
  for (const auto& h : hooks) {
    if (h.output_nr >= grads.size() || !grads[h.output_nr].defined()) continue;
    Tensor r = h.fn(grads[h.output_nr]);
    if (!r.defined()) continue;
    // libtorch names a C++ hook by its registration index (removed hooks keep their slot)
    GRAFT_CHECK(r.sizes().equals(grads[h.output_nr].sizes()), RuntimeError, "hook '", h.id - 1,
                "' has changed the size of value");
    grads[h.output_nr] = std::move(r);
  }
}

void Node::call_tensor_pre_hooks(TensorList& grads) {
  if (!cold_) return;
  if (cold_->hooks && !cold_->hooks->empty()) {
    HookList hooks = *cold_->hooks;  // a hook may remove itself
    run_tensor_hooks(hooks, grads);
  }
}

void Node::call_retain_grad_hooks(const TensorList& grads) {
  if (!cold_) return;
  for (auto& [nr, impl] : cold_->retain_targets) {
    if (nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor& g = impl->meta->grad;
    if (!g.defined()) g = grads[nr].clone();
    else g = g + grads[nr];
  }
}

}  // namespace graft
