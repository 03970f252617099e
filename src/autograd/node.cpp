// Node bookkeeping: sequence numbers, iterative deletion, tensor hooks, retain_grad targets.
// See docs/notes/autograd-engine.md, "Iterative destruction".
#include "graft/autograd/node.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "graft/core/grad_mode.h"
#include "graft/ops/ops.h"
#include "variable.h"

namespace graft {
namespace {
std::atomic<uint64_t> g_sequence_nr{0};
thread_local std::vector<Node*>* tl_pending_deletes = nullptr;
}  // namespace

struct Node::Cold {
  LazyHookSlot hooks;
  std::mutex retain_mu;  // guards retain_targets and the writes of retained .grad
  SmallVector<std::pair<uint32_t, TensorImpl*>, 1> retain_targets;
  std::atomic<size_t> num_retain_targets{0};  // lets a pass skip the lock when there are none
  std::string anomaly_trace;
};

Node::Node() : sequence_nr_(g_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {
  if (lifetime::Observer* o = lifetime::observer()) o->node_created(*this);
}
Node::~Node() { delete cold_.load(std::memory_order_relaxed); }

std::string Node::class_name() const {
  std::string n = name();
  const size_t colons = n.rfind("::");
  return colons == std::string::npos ? n : n.substr(colons + 2);
}

// Deleting a node drops its edges and saved tensors, which may drop the last reference to
// further nodes. Instead of recursing, nested releases are queued and drained here.
void Node::release_self() {
  // an observer sees the node whole (saved slots included) before it goes
  if (lifetime::Observer* o = lifetime::observer()) o->node_destroyed(*this);
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

// Made on first need; a user thread may register a hook while a backward pass on another
// thread reads cold_, so it is published with a compare-exchange and never replaced.
Node::Cold& Node::cold() {
  Cold* c = cold_.load(std::memory_order_acquire);
  if (c) return *c;
  auto fresh = std::make_unique<Cold>();
  if (cold_.compare_exchange_strong(c, fresh.get(), std::memory_order_acq_rel, std::memory_order_acquire))
    return *fresh.release();
  return *c;  // another thread won
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back(InputMetadata{Shape(t.sizes().begin(), t.sizes().end()), t.dtype(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

uint64_t HookSlot::add(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  auto next = list_ ? std::make_shared<HookList>(*list_) : std::make_shared<HookList>();
  const uint64_t id = next_id_++;
  next->push_back(TensorPreHook{id, output_nr, std::move(fn)});
  size_.store(next->size(), std::memory_order_release);
  list_ = std::move(next);
  return id;
}

void HookSlot::remove(uint64_t id) {
  std::shared_ptr<const HookList> old;  // the hook's closure dies after the lock is released
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!list_) return;
    auto it = std::find_if(list_->begin(), list_->end(), [id](const TensorPreHook& h) { return h.id == id; });
    if (it == list_->end()) return;
    auto next = std::make_shared<HookList>();
    next->reserve(list_->size() - 1);
    for (const auto& h : *list_)
      if (h.id != id) next->push_back(h);
    size_.store(next->size(), std::memory_order_release);
    old = std::exchange(list_, std::move(next));
  }
}

size_t HookSlot::remove_if(const std::function<bool(const TensorPreHook&)>& pred) {
  std::shared_ptr<const HookList> old;  // the removed hooks die after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  if (!list_) return 0;
  auto next = std::make_shared<HookList>();
  for (const auto& h : *list_)
    if (!pred(h)) next->push_back(h);
  const size_t removed = list_->size() - next->size();
  if (removed == 0) return 0;
  size_.store(next->size(), std::memory_order_release);
  old = std::exchange(list_, std::move(next));
  return removed;
}

std::shared_ptr<const HookList> HookSlot::snapshot() const {
  if (size_.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return list_;
}

namespace {
std::mutex g_hook_slot_create_mu;  // only taken when a slot is made (first registration)
}  // namespace

std::shared_ptr<HookSlot> LazyHookSlot::get_or_create() {
  std::lock_guard<std::mutex> lock(g_hook_slot_create_mu);
  if (!owner_) {
    owner_ = std::make_shared<HookSlot>();
    ptr_.store(owner_.get(), std::memory_order_release);
  }
  return owner_;
}

std::function<void()> add_hook_with_remover(LazyHookSlot& slot, uint32_t output_nr,
                                            std::function<Tensor(const Tensor&)> fn) {
  std::shared_ptr<HookSlot> s = slot.get_or_create();
  const uint64_t id = s->add(output_nr, std::move(fn));
  return [weak = std::weak_ptr<HookSlot>(s), id]() {
    if (auto l = weak.lock()) l->remove(id);
  };
}

std::function<void()> Node::add_tensor_pre_hook(uint32_t output_nr, std::function<Tensor(const Tensor&)> fn) {
  return add_hook_with_remover(cold().hooks, output_nr, std::move(fn));
}
HookSlot* Node::tensor_pre_hooks() const {
  const Cold* c = cold_.load(std::memory_order_acquire);
  return c ? c->hooks.get() : nullptr;
}

HookSlot* leaf_hook_slot(const TensorImpl& t) { return t.meta ? t.meta->leaf_hooks.get() : nullptr; }

void Node::set_retain_grad_target(uint32_t output_nr, TensorImpl* impl) {
  Cold& c = cold();
  std::lock_guard<std::mutex> lock(c.retain_mu);
  for (auto& p : c.retain_targets)
    if (p.first == output_nr) {
      p.second = impl;
      return;
    }
  c.retain_targets.push_back({output_nr, impl});
  c.num_retain_targets.store(c.retain_targets.size(), std::memory_order_release);
}
void Node::clear_retain_grad_target(uint32_t output_nr) {
  Cold* c = cold_.load(std::memory_order_acquire);
  if (!c) return;
  std::lock_guard<std::mutex> lock(c->retain_mu);
  auto& t = c->retain_targets;
  for (auto* it = t.begin(); it != t.end(); ++it)
    if (it->first == output_nr) {
      t.erase(it);
      c->num_retain_targets.store(t.size(), std::memory_order_release);
      return;
    }
}
const std::string& Node::anomaly_trace() const {
  static const std::string empty;
  const Cold* c = cold_.load(std::memory_order_acquire);
  return c ? c->anomaly_trace : empty;
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

void run_tensor_hooks(const HookSlot* slot, TensorList& grads) {
  if (!slot) return;
  // A snapshot: hooks may add or remove hooks (themselves included), and other threads may
  // too; a hook removed after this point still runs once in this pass.
  if (auto hooks = slot->snapshot()) run_tensor_hooks(*hooks, grads);
}

void Node::call_tensor_pre_hooks(TensorList& grads) {
  const Cold* c = cold_.load(std::memory_order_acquire);
  if (c) run_tensor_hooks(c->hooks.get(), grads);
}

void Node::call_retain_grad_hooks(const TensorList& grads) {
  Cold* c = cold_.load(std::memory_order_acquire);
  if (!c || c->num_retain_targets.load(std::memory_order_acquire) == 0) return;
  SmallVector<Tensor, 1> replaced;  // old .grad values die after the lock is released
  std::lock_guard<std::mutex> lock(c->retain_mu);
  for (auto& [nr, impl] : c->retain_targets) {
    if (nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor& g = impl->meta->grad;
    if (!g.defined()) {
      g = grads[nr].clone(MemoryFormat::Contiguous);  // PyTorch's retain_grad: row-major
    } else {
      Tensor old = std::move(g);
      g = old + grads[nr];
      replaced.push_back(std::move(old));
    }
  }
}

}  // namespace graft
