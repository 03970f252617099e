// TensorImpl geometry and destruction.
#include "graft/core/tensor_impl.h"

#include <atomic>
#include <utility>

#include "graft/core/error.h"

namespace graft {

Shape contiguous_strides(IntArrayRef sizes) {
  Shape st(sizes.size(), 1);
  int64_t acc = 1;
  bool overflow = false;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    if (i > 0) overflow |= __builtin_mul_overflow(acc, sizes[i] > 1 ? sizes[i] : 1, &acc);
  }
  GRAFT_CHECK(!overflow, RuntimeError, "Storage size calculation overflowed with sizes=", sizes);
  return st;
}
int64_t compute_numel(IntArrayRef sizes) {
  int64_t n = 1;
  bool overflow = false;
  for (auto s : sizes)
    if (s == 0) return 0;  // no elements, however large the other sizes
  for (auto s : sizes) overflow |= __builtin_mul_overflow(n, s, &n);
  GRAFT_CHECK(!overflow, RuntimeError, "numel: integer multiplication overflow for sizes ", sizes);
  return n;
}

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : sizes_(sizes.begin(), sizes.end()),
      strides_(strides.begin(), strides.end()),
      storage_offset_(storage_offset),
      storage_(std::move(storage)),
      dtype_(dtype) {
  refresh();
  if (lifetime::Observer* o = lifetime::observer()) o->tensor_created(*this);
}

namespace {
std::atomic<void (*)(TensorImpl*)> g_pyobject_release_hook{nullptr};
}  // namespace

void TensorImpl::set_pyobject_release_hook(void (*hook)(TensorImpl*)) {
  g_pyobject_release_hook.store(hook, std::memory_order_release);
}

bool TensorImpl::try_own_pyobject(void* pyobj) {
  std::atomic<uint32_t>& word = refcount_word();
  uint32_t c = word.load(std::memory_order_relaxed);
  // A concurrent decrement (another thread, without the GIL) makes the exchange fail; retry
  // with the new count, and give up once the Python object's handle is the only one left.
  while ((c & kOwnsPyObjectBit) == 0 && (c & kCountMask) > 1) {
    if (word.compare_exchange_weak(c, c | kOwnsPyObjectBit, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      owned_pyobject = pyobj;  // only read under the GIL, which the caller holds
      return true;
    }
  }
  return false;
}

void* TensorImpl::release_ref_and_take_pyobject() {
  std::atomic<uint32_t>& word = refcount_word();
  uint32_t c = word.load(std::memory_order_relaxed);
  for (;;) {
    // Other owners may have come (Python code while this thread waited for the GIL) or gone.
    const bool last_besides_pyobject = c == (kOwnsPyObjectBit | 2u);
    const uint32_t next = last_besides_pyobject ? 1u : c - 1;  // 1: the Python object's handle
    if (word.compare_exchange_weak(c, next, std::memory_order_acq_rel, std::memory_order_relaxed))
      return last_besides_pyobject ? std::exchange(owned_pyobject, nullptr) : nullptr;
  }
}

void tensor_decref_owning_pyobject(const RefCounted* p) {
  auto* t = static_cast<TensorImpl*>(const_cast<RefCounted*>(p));
  if (auto hook = g_pyobject_release_hook.load(std::memory_order_acquire)) {
    hook(t);
    return;
  }
  (void)t->release_ref_and_take_pyobject();  // no Python layer: nothing sets the bit
}

TensorImpl::~TensorImpl() {
  if (lifetime::Observer* o = lifetime::observer()) o->tensor_destroyed(*this);
  // grad_fn and the AutogradMeta go with the TensorAutogradState base (the autograd layer).
}

void TensorImpl::set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_.assign(sizes.begin(), sizes.end());
  strides_.assign(strides.begin(), strides.end());
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::set_data(const TensorImpl& src) {
  if (&src == this) return;
  // Keep this tensor's version counter (as PyTorch's set_data): graphs that saved it still
  // see the versions they recorded, whatever storage it points at now.
  if (!own_version_) {
    own_version_ = make_intrusive<VersionCounter>();
    own_version_->version.store(storage_->version.load());
  }
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  set_geometry(src.sizes(), src.strides(), src.storage_offset());
}

void TensorImpl::refresh() {
  numel_ = compute_numel(sizes_);
  bool c = true;
  int64_t expected = 1;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      c = false;
      break;
    }
    expected *= sizes_[i];
  }
  is_contiguous_ = c || numel_ == 0;
}

}  // namespace graft
