// SavedVariable: a tensor saved for backward, with its version at save time.
// See docs/notes/autograd-engine.md, "Saved tensors".
#include "graft/alloc/caching_allocator.h"
#include "graft/autograd/autograd.h"
#include "graft/autograd/node.h"
#include "variable.h"

#include <utility>

namespace graft {

namespace autograd {
const char* const kSecondBackwardMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.";
}  // namespace autograd

namespace {
thread_local std::vector<SavedTensorsHooks> tl_saved_hooks;
}

SavedTensorsHooksGuard::SavedTensorsHooksGuard(std::function<std::any(const Tensor&)> pack,
                                               std::function<Tensor(const std::any&)> unpack) {
  GRAFT_CHECK(pack && unpack, ValueError, "saved_tensors_hooks: pack_hook and unpack_hook must both be given");
  tl_saved_hooks.push_back({std::move(pack), std::move(unpack)});
}
SavedTensorsHooksGuard::~SavedTensorsHooksGuard() { tl_saved_hooks.pop_back(); }

struct SavedVariable::Packed {
  std::any object;
  std::function<Tensor(const std::any&)> unpack;
  intrusive_ptr<Node> grad_fn;  // history of a saved non-output (outputs relink to the owner)
  uint32_t output_nr = 0;
};

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  autograd::check_not_inference_for_save(t);
  was_defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.impl()->version();
  if (!tl_saved_hooks.empty()) {
    const SavedTensorsHooks hooks = tl_saved_hooks.back();
    auto p = std::make_shared<Packed>();
    p->unpack = hooks.unpack;
    if (!is_output) {
      Edge e = autograd::gradient_edge(t);  // a leaf's edge is its AccumulateGrad
      p->grad_fn = e.function;
      p->output_nr = e.input_nr;
    }
    output_nr_ = t.output_nr();
    {
      // as PyTorch: the pack hook runs without grad mode, so what it computes (t.clone()) has no
      // history leading back to the node that saves it: no cycle through C++ that would keep a
      // dropped forward alive. It gets the tensor itself, as 1.13 does (2.x passes inputs
      // detached)
      NoGradGuard no_grad;
      p->object = hooks.pack(t);
    }
    GRAFT_CHECK(t.impl()->version() == saved_version_, RuntimeError,
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook can "
                "not be modified by in-place operations as this can lead to unexpected side-effects. Please open an "
                "issue if you need to perform in-place operations on the input to a pack hook.");
    packed_ = std::move(p);
    report_created();
    return;
  }
  if (is_output) {
    // Alias without history: the node would otherwise own a tensor that owns the node.
    auto* src = t.impl();
    auto alias =
        make_intrusive<TensorImpl>(src->storage(), src->dtype(), src->sizes(), src->strides(), src->storage_offset());
    alias->set_own_version(src->own_version());
    data_ = Tensor(std::move(alias));
    output_nr_ = t.output_nr();
  } else {
    data_ = t;
  }
  claim_ = StorageClaim(data_.impl()->storage());
  report_created();
}

// An observer (the leak doctor) counts live slots while it watches; a copy is another slot, a
// move hands the slot over, a release ends it.
void SavedVariable::report_created() const {
  if (lifetime::Observer* o = lifetime::observer())
    o->saved_created(*this, data_.defined() ? static_cast<int64_t>(data_.impl()->storage()->nbytes()) : 0);
}

SavedVariable::SavedVariable(const SavedVariable& o)
    : packed_(o.packed_),
      data_(o.data_),
      saved_version_(o.saved_version_),
      output_nr_(o.output_nr_),
      was_defined_(o.was_defined_),
      is_output_(o.is_output_),
      released_(o.released_),
      claim_(o.claim_) {
  if (lifetime::Observer* obs = lifetime::observer()) obs->saved_copied(o, *this, false);
}
SavedVariable::SavedVariable(SavedVariable&& o) noexcept
    : packed_(std::move(o.packed_)),
      data_(std::move(o.data_)),
      saved_version_(o.saved_version_),
      output_nr_(o.output_nr_),
      was_defined_(o.was_defined_),
      is_output_(o.is_output_),
      released_(o.released_),
      claim_(std::move(o.claim_)) {
  if (lifetime::Observer* obs = lifetime::observer()) obs->saved_copied(o, *this, true);
}
SavedVariable& SavedVariable::operator=(const SavedVariable& o) {
  if (this != &o) *this = SavedVariable(o);
  return *this;
}
SavedVariable& SavedVariable::operator=(SavedVariable&& o) noexcept {
  if (this == &o) return *this;
  lifetime::Observer* const obs = lifetime::observer();
  if (obs) obs->saved_destroyed(*this);
  packed_ = std::move(o.packed_);
  data_ = std::move(o.data_);
  saved_version_ = o.saved_version_;
  output_nr_ = o.output_nr_;
  was_defined_ = o.was_defined_;
  is_output_ = o.is_output_;
  released_ = o.released_;
  claim_ = std::move(o.claim_);
  if (obs) obs->saved_copied(o, *this, true);
  return *this;
}
SavedVariable::~SavedVariable() {
  if (lifetime::Observer* o = lifetime::observer()) o->saved_destroyed(*this);
}

SavedVariable::StorageClaim::StorageClaim(intrusive_ptr<StorageImpl> s) : storage_(std::move(s)) {
  if (storage_) alloc::CachingAllocator::add_saved_claim(storage_->data_ptr(), +1);
}
SavedVariable::StorageClaim::StorageClaim(const StorageClaim& o) : StorageClaim(o.storage_) {}
SavedVariable::StorageClaim& SavedVariable::StorageClaim::operator=(StorageClaim o) noexcept {
  std::swap(storage_, o.storage_);
  return *this;
}
SavedVariable::StorageClaim::~StorageClaim() {
  if (storage_) alloc::CachingAllocator::add_saved_claim(storage_->data_ptr(), -1);
}

void SavedVariable::reset_data() {
  if (!was_defined_) return;
  if (lifetime::Observer* o = lifetime::observer()) o->saved_destroyed(*this);
  claim_ = StorageClaim();
  data_ = Tensor();
  packed_.reset();
  released_ = true;
}

Tensor SavedVariable::unpack(Node* saved_for) const {
  if (!was_defined_) return Tensor();
  GRAFT_CHECK(!released_, RuntimeError, autograd::kSecondBackwardMessage);
  if (packed_) {
    // Only the content comes from the hook; autograd metadata is restored here.
    Tensor r = packed_->unpack(packed_->object);
    GRAFT_CHECK(r.defined(), TypeError, "saved_tensors_hooks: unpack_hook must return a Tensor");
    auto t = make_intrusive<TensorImpl>(r.impl()->storage(), r.dtype(), r.sizes(), r.strides(), r.storage_offset());
    t->set_own_version(r.impl()->own_version());
    if (is_output_ && saved_for) {
      t->grad_fn = intrusive_ptr<Node>(saved_for);
      t->output_nr = output_nr_;
    } else if (packed_->grad_fn) {
      t->grad_fn = packed_->grad_fn;
      t->output_nr = packed_->output_nr;
    }
    return Tensor(std::move(t));
  }
  const uint32_t current = data_.impl()->version();
  if (current != saved_version_) {
    std::string who;
    Node* fn = is_output_ ? saved_for : data_.grad_fn().get();
    uint32_t nr = is_output_ ? output_nr_ : data_.output_nr();
    if (fn) who = detail::str(", which is output ", nr, " of ", fn->name(), ",");
    std::string hint = autograd::AnomalyMode::is_enabled()
                           ? "Hint: the backtrace further above shows the operation that failed to compute its "
                             "gradient. The variable in question was changed in there or anywhere later. Good luck!"
                           : "Hint: enable anomaly detection to find the operation that failed to compute its "
                             "gradient, with torch.autograd.set_detect_anomaly(True).";
    throw RuntimeError(detail::str(
        "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.",
        legacy_type_name(data_.dtype()), " ", data_.sizes(), "]", who, " is at version ", current,
        "; expected version ", saved_version_, " instead. ", hint));
  }
  if (!is_output_) return data_;
  auto* src = data_.impl();
  auto t =
      make_intrusive<TensorImpl>(src->storage(), src->dtype(), src->sizes(), src->strides(), src->storage_offset());
  t->set_own_version(src->own_version());
  if (saved_for) {
    t->grad_fn = intrusive_ptr<Node>(saved_for);
    t->output_nr = output_nr_;
  }
  return Tensor(std::move(t));
}

}  // namespace graft
