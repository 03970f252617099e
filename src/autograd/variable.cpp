// Autograd bookkeeping on tensors: edges, leaf accumulators, history, views and the
// in-place rules. See docs/notes/autograd-engine.md.
#include "variable.h"

#include <execinfo.h>

#include <mutex>

#include "accumulate_grad.h"
#include "graft/alloc/caching_allocator.h"
#include "graft/autograd/autograd.h"
#include "graft/ops/forwards.h"
#include "graft/ops/ops.h"

namespace graft {

// Declared in core's tensor_impl.h; defined here because creating and destroying grad_fn (a
// Node) and the AutogradMeta needs their definitions, which belong to this layer.
TensorAutogradState::TensorAutogradState() noexcept = default;
TensorAutogradState::~TensorAutogradState() {
  // A retain_grad target registered on grad_fn points back at us: unregister it.
  if (meta && meta->retains_grad && grad_fn) grad_fn->clear_retain_grad_target(output_nr);
}

namespace autograd {

AutogradMeta& meta(const Tensor& t) {
  auto* impl = t.impl();
  if (!impl->meta) impl->meta = std::make_unique<AutogradMeta>();
  return *impl->meta;
}

bool any_requires_grad(const TensorList& ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : ts)
    if (t.defined() && requires_grad(t.impl())) return true;
  return false;
}

namespace {
// Guards leaves' weak pointers to their AccumulateGrad (creation, reuse, clearing).
std::mutex g_accumulator_mu;
}  // namespace

intrusive_ptr<Node> grad_accumulator(const Tensor& leaf) {
  // One accumulator per leaf even when several threads build graphs on the same parameter.
  std::lock_guard<std::mutex> lock(g_accumulator_mu);
  auto& m = meta(leaf);
  // The accumulator may be dying on another thread: take a reference only if it is alive.
  if (m.grad_accumulator && intrusive_try_incref(m.grad_accumulator)) {
    // a leaf's accumulator is shared by every graph that uses the leaf while one is alive (the
    // leak doctor counts it in the newest step that uses it)
    if (lifetime::Observer* o = lifetime::observer()) o->node_reused(*m.grad_accumulator);
    return intrusive_ptr<Node>::adopt(m.grad_accumulator);
  }
  auto acc = make_intrusive<AccumulateGrad>(leaf);
  m.grad_accumulator = acc.get();
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return Edge();
  if (t.impl()->meta && t.impl()->meta->is_view) refresh_view_grad_fn(t);
  TensorImpl* impl = t.impl();
  if (impl->grad_fn) return Edge(impl->grad_fn, impl->output_nr);
  if (impl->requires_grad_leaf) return Edge(grad_accumulator(t), 0);
  return Edge();
}

void collect_next_edges(Node* node, std::initializer_list<const Tensor*> inputs) {
  auto& edges = node->mutable_next_edges();
  for (const Tensor* t : inputs) edges.push_back(gradient_edge(*t));
}
void collect_next_edges(Node* node, const TensorList& inputs) {
  auto& edges = node->mutable_next_edges();
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
}

static std::function<std::string()>& anomaly_trace_provider() {
  static std::function<std::string()> provider;
  return provider;
}

static std::string capture_backtrace() {
  if (const auto& provider = anomaly_trace_provider()) return provider();
  void* frames[48];
  int n = ::backtrace(frames, 48);
  char** syms = ::backtrace_symbols(frames, n);
  std::string out;
  for (int i = 2; i < n && syms; ++i) out += std::string("  ") + syms[i] + "\n";
  std::free(syms);
  return out;
}

}  // namespace autograd

void autograd::set_anomaly_trace_provider(std::function<std::string()> provider) {
  anomaly_trace_provider() = std::move(provider);
}

namespace autograd {

void set_history(const Tensor& out, const intrusive_ptr<Node>& node) {
  TensorImpl* impl = out.impl();
  if (!is_floating_point(impl->dtype())) return;  // integer/bool outputs never require grad
  const uint32_t nr = node->add_input_metadata(out);
  if (impl->meta && impl->meta->retains_grad) {
    replace_grad_fn(impl, node, nr);  // moves the retain_grad target off the old node
  } else {
    impl->output_nr = nr;
    impl->grad_fn = node;
  }
  if (impl->meta && impl->meta->is_view) impl->meta->attr_version = impl->version();
  if (AnomalyMode::is_enabled() && node->anomaly_trace().empty()) node->set_anomaly_trace(capture_backtrace());
}

void check_not_inference_for_save(const Tensor& t) {
  if (t.impl()->is_inference && !InferenceMode::is_enabled())
    throw RuntimeError(
        "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
        "tensor and use it in autograd.");
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                 CreationMeta creation_meta) {
  auto impl = make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), sizes, strides, offset);
  impl->set_own_version(base.impl()->own_version());
  impl->is_inference = base.impl()->is_inference;
  Tensor v(std::move(impl));
  if (InferenceMode::is_enabled()) return v;  // inference views carry no view metadata
  auto& m = meta(v);
  m.is_view = true;
  const AutogradMeta* bm = base.impl()->meta.get();
  m.base = (bm && bm->is_view) ? bm->base : base;
  if (!GradMode::is_enabled()) creation_meta = CreationMeta::NoGradMode;
  if (bm && bm->is_view && bm->creation_meta != CreationMeta::Default) creation_meta = bm->creation_meta;
  m.creation_meta = creation_meta;
  m.attr_version = v.impl()->version();
  return v;
}

void check_inplace(const Tensor& self, bool will_record, bool check_overlap) {
  detail::check_writable(self, check_overlap);  // internal overlap, inference tensors
  check_inplace_rules(self, will_record);
}

void check_inplace_rules(const Tensor& self, bool will_record) {
  TensorImpl* impl = self.impl();
  // As PyTorch's check_inplace: the rules apply only when the op will record a graph. A view
  // reports requires_grad when its base does (PyTorch's DifferentiableViewMeta), even if it
  // was created under no_grad.
  if (!GradMode::is_enabled()) return;
  const AutogradMeta* m = impl->meta.get();
  if (!will_record && !(m && m->is_view && requires_grad(m->base.impl()))) return;
  if (m && m->is_view) {
    const Tensor& base = m->base;
    // handle_view_on_rebase first, then the leaf rule
    if (m->creation_meta == CreationMeta::MultiOutputNode)
      throw RuntimeError(detail::str(
          "Output ", m->creator_output_nr, " of ", m->creator_name,
          " is a view and is being modified inplace. This view is the output of a function that returns multiple "
          "views. Such functions do not allow the output views to be modified inplace. You should replace the "
          "inplace operation by an out-of-place one."));
    if (m->creation_meta == CreationMeta::NoGradMode)
      throw RuntimeError(
          "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
          "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
          "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
          "tracked) or both outside (if you want the inplace to be tracked).");
    if (base.impl()->requires_grad_leaf && !base.impl()->grad_fn)
      throw RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.");
  } else if (impl->requires_grad_leaf && !impl->grad_fn) {
    throw RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

void replace_grad_fn(TensorImpl* impl, intrusive_ptr<Node> fn, uint32_t output_nr) {
  const bool retains = impl->meta && impl->meta->retains_grad;
  if (retains && impl->grad_fn) impl->grad_fn->clear_retain_grad_target(impl->output_nr);
  impl->grad_fn = std::move(fn);
  impl->output_nr = output_nr;
  if (retains && impl->grad_fn) impl->grad_fn->set_retain_grad_target(output_nr, impl);
}

void refresh_view_grad_fn(const Tensor& view) {
  TensorImpl* impl = view.impl();
  AutogradMeta* m = impl->meta.get();
  if (m->attr_version == impl->version()) return;
  const Tensor& base = m->base;
  // Regenerated whatever the grad mode (printing under no_grad must not freeze a stale node).
  if (!requires_grad(base.impl())) {
    m->attr_version = impl->version();
    return;
  }
  // PyTorch's regenerated node: as_strided of the base over the view's geometry
  // (AsStridedBackward0, with its edge to the base's history), recorded whatever the grad mode
  Tensor regenerated;
  {
    EnableGradGuard record;
    regenerated = as_strided(base, view.sizes(), view.strides(), view.storage_offset());
  }
  m->attr_version = impl->version();
  replace_grad_fn(impl, regenerated.impl()->grad_fn, regenerated.impl()->output_nr);
}

void rebase_history(const Tensor& self, intrusive_ptr<Node> node, uint32_t output_nr) {
  TensorImpl* impl = self.impl();
  AutogradMeta* m = impl->meta.get();
  if (m && m->is_view) {
    const Tensor& base = m->base;
    auto cs = make_intrusive<CopySlices>(base, self, std::move(node));
    replace_grad_fn(base.impl(), std::move(cs), 0);
    m->attr_version = impl->version() - 1;  // force regeneration from the new base history
    refresh_view_grad_fn(self);
    return;
  }
  replace_grad_fn(impl, std::move(node), output_nr);
}

}  // namespace autograd

// ---------------- AccumulateGrad ----------------
AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  sequence_nr_ = UINT64_MAX;
  add_input_metadata(variable_);
}
AccumulateGrad::~AccumulateGrad() {
  std::lock_guard<std::mutex> lock(autograd::g_accumulator_mu);
  if (variable_.impl()->meta && variable_.impl()->meta->grad_accumulator == this)
    variable_.impl()->meta->grad_accumulator = nullptr;
}

void AccumulateGrad::call_tensor_pre_hooks(TensorList& grads) {
  // One atomic load when the leaf has no hooks; otherwise a snapshot (see HookSlot).
  if (const AutogradMeta* m = variable_.impl()->meta.get()) run_tensor_hooks(m->leaf_hooks.get(), grads);
}

// The leak doctor's LD008 (missing zero_grad), kept while a session counts: an accumulation
// into a .grad that nothing wrote since the previous accumulation (no zero_grad, clipping or
// user write: same tensor, same version) across a step of the leaf's optimizer carries the
// old gradients over. Whether that matters is judged when the optimizer steps the leaf
// (note_leaf_stepped): a GAN's generator backward adds into the discriminator's .grad after
// its step, but zero_grad clears it before the discriminator's next step.
namespace autograd {
void note_leaf_stepped(const Tensor& leaf) {
  lifetime::Observer* const o = lifetime::observer();
  if (!o || !leaf.defined()) return;
  AutogradMeta* m = meta_or_null(leaf);
  if (!m) return;
  uint32_t streak = 0;
  {
    std::lock_guard<std::mutex> lock(m->grad_mutex);
    TensorImpl* g = m->grad.defined() ? m->grad.impl() : nullptr;
    streak = o->leaf_stepped(*leaf.impl(), g, g ? g->version().load() : 0, g && g->grad_fn);
  }
  if (streak > 0) o->stale_gradient_used(*leaf.impl(), streak);
}
}  // namespace autograd

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor& new_grad = grads[0];
  if (!new_grad.defined()) return {};
  // Two backward passes on different threads may reach the same leaf; the lock lives in the
  // leaf's meta, so it also orders accumulation across successive accumulator objects.
  AutogradMeta& m = autograd::meta(variable_);
  // A replaced .grad dies after the lock is released: dropping a tensor may take the GIL
  // (its Python object, see docs/notes/python.md), and a thread holding the GIL may wait here.
  Tensor replaced;
  std::lock_guard<std::mutex> lock(m.grad_mutex);
  Tensor& g = m.grad;
  // an observer (the leak doctor's missing-zero_grad check) sees which .grad became which
  lifetime::Observer* const observer = lifetime::observer();
  const TensorImpl* const before = observer && g.defined() ? g.impl() : nullptr;
  const uint32_t before_version = before ? g.impl()->version().load() : 0;
  if (!g.defined()) {
    if (!GradMode::is_enabled() && new_grad.use_count() == 1 && new_grad.is_contiguous() &&
        !(new_grad.impl()->meta && new_grad.impl()->meta->is_view) && !autograd::requires_grad(new_grad.impl()) &&
        new_grad.impl()->storage()->use_count() == 1) {
      g = std::move(new_grad);  // steal the buffer nobody else references
    } else if (GradMode::is_enabled() && autograd::requires_grad(new_grad.impl())) {
      g = empty_like(new_grad);  // PyTorch's clone_obey_contract: new_empty + copy_ (CopyBackwards)
      g.copy_(new_grad);
    } else {
      g = new_grad.clone(MemoryFormat::Contiguous);
    }
  } else if (!GradMode::is_enabled()) {
    NoGradGuard ng;
    g.add_(new_grad);
  } else {
    replaced = std::move(g);
    g = replaced + new_grad;
  }
  // the buffer now belongs to .grad (memory_by_category reports it as gradient)
  alloc::CachingAllocator::set_category(g.impl()->storage()->data_ptr(), MemoryCategory::Gradient);
  if (observer)
    observer->gradient_accumulated(*variable_.impl(), before, before_version, *g.impl(), g.impl()->version().load());
  return {};
}

// ---------------- CopySlices ----------------
CopySlices::CopySlices(const Tensor& base, const Tensor& view, intrusive_ptr<Node> fn)
    : base_sizes_(base.sizes().begin(), base.sizes().end()),
      base_strides_(base.strides().begin(), base.strides().end()),
      view_sizes_(view.sizes().begin(), view.sizes().end()),
      view_strides_(view.strides().begin(), view.strides().end()),
      view_offset_(view.storage_offset() - base.storage_offset()),
      fn_(std::move(fn)) {
  next_edges_.push_back(autograd::gradient_edge(base));
  for (size_t i = 1; i < fn_->next_edges().size(); ++i) next_edges_.push_back(fn_->next_edges()[i]);
  add_input_metadata(base);
}

TensorList CopySlices::apply(TensorList&& grads) {
  TensorList out(next_edges_.size());
  GRAFT_CHECK(fn_, RuntimeError, autograd::kSecondBackwardMessage);
  const Tensor& grad = grads[0];
  if (!grad.defined()) return out;
  // the base's gradient laid out as the base (any strides: a transposed or preserved-layout
  // base), so the view's geometry finds its window in it, as PyTorch's CopySlices
  Tensor result = empty_strided(base_sizes_, base_strides_, TensorOptions(grad.dtype()).device(grad.device()));
  result.copy_(grad);
  Tensor window = result.as_strided(view_sizes_, view_strides_, view_offset_);
  TensorList res = fn_->apply(TensorList{window.clone()});
  // the window's gradient is replaced by what fn gives its first input
  if (res.size() > 0 && res[0].defined())
    window.copy_(res[0]);
  else
    window.zero_();
  out[0] = result;
  for (size_t i = 1; i < res.size() && i < out.size(); ++i) out[i] = res[i];
  return out;
}

void CopySlices::release_variables() {
  if (fn_) fn_->release_variables();
  fn_.reset();  // as PyTorch: a second backward through CopySlices always raises
}

}  // namespace graft
