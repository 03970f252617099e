#pragma once
/// TensorImpl: sizes, strides, storage offset, dtype and device over a shared StorageImpl,
/// plus the few autograd fields every differentiable result needs (grad_fn, output_nr,
/// requires_grad). Colder autograd state (grad, hooks, view base) lives in a lazily
/// allocated AutogradMeta. See docs/notes/ownership.md.
#include <memory>

#include "graft/core/dtype.h"
#include "graft/core/int_array.h"
#include "graft/core/intrusive_ptr.h"
#include "graft/core/lifetime.h"
#include "graft/core/storage.h"

namespace graft {

class Node;
struct AutogradMeta;

/// The autograd state every TensorImpl carries: the hot fields a differentiable result needs
/// and the cold AutogradMeta. Core declares it; the autograd layer, which defines Node and
/// AutogradMeta, defines its constructor and destructor (src/autograd/variable.cpp), so core
/// compiles without either definition (c10 keeps an AutogradMetaInterface for the same reason;
/// docs/notes/architecture.md).
struct TensorAutogradState {
  TensorAutogradState() noexcept;
  /// Also unregisters a retain_grad target registered on grad_fn (it points back at us).
  ~TensorAutogradState();
  TensorAutogradState(const TensorAutogradState&) = delete;
  TensorAutogradState& operator=(const TensorAutogradState&) = delete;

  intrusive_ptr<Node> grad_fn;         ///< null for leaves
  uint32_t output_nr = 0;              ///< which output of grad_fn this is
  bool requires_grad_leaf = false;     ///< requires_grad flag of a leaf
  bool is_wrapped_number = false;      ///< made from a C++ scalar argument (`x * 2`)
  bool is_inference = false;           ///< created under InferenceMode
  std::unique_ptr<AutogradMeta> meta;  ///< cold autograd state; null until needed
};

class TensorImpl final : public RefCounted, public TensorAutogradState {
 public:
  TensorImpl(intrusive_ptr<StorageImpl> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  /// PyTorch's has_internal_overlap() == YES: a dimension of size > 1 with stride 0 (an
  /// expand()) in a tensor with elements. Writing into such a tensor is refused.
  bool has_internal_overlap() const {
    if (numel_ == 0) return false;
    for (size_t d = 0; d < sizes_.size(); ++d)
      if (sizes_[d] > 1 && strides_[d] == 0) return true;
    return false;
  }
  const intrusive_ptr<StorageImpl>& storage() const { return storage_; }
  /// Pointer to element 0 (storage base + offset); null on the meta device, which has no data.
  void* data() const {
    char* base = static_cast<char*>(storage_->data());
    return base ? base + storage_offset_ * static_cast<int64_t>(element_size(dtype_)) : nullptr;
  }
  /// Changes geometry in place (used by detach_-free paths and in-place reshapes of fresh tensors).
  void set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  /// Takes src's storage, dtype and geometry, keeping this object (and its autograd state).
  void set_data(const TensorImpl& src);

  /// The version counter this tensor reports (shared with views and detach()).
  std::atomic<uint32_t>& version() { return own_version_ ? own_version_->version : storage_->version; }
  const intrusive_ptr<VersionCounter>& own_version() const { return own_version_; }
  void set_own_version(intrusive_ptr<VersionCounter> v) { own_version_ = std::move(v); }

  // the autograd fields (grad_fn, output_nr, requires_grad_leaf, ..., meta) are inherited
  // from TensorAutogradState
  // --- Python object preservation (docs/notes/python.md, "Tensor identity") ---
  /// The Python object this tensor owns one reference to, or null. Set and read by the
  /// Python layer under the GIL; non-null exactly while kOwnsPyObjectBit is set.
  void* owned_pyobject = nullptr;
  /// Makes this tensor own one reference to `pyobj` (the caller gives it), if other owners
  /// remain besides `pyobj`'s own handle (use_count() > 1) and it owns none yet. Returns
  /// false otherwise. Called with the GIL, from the Python object's deallocator.
  bool try_own_pyobject(void* pyobj);
  /// For the release hook, with the GIL held: drops the caller's reference (never the last
  /// one). If that leaves only the Python object's handle while the tensor owns that object,
  /// clears the ownership and returns the object, whose reference the caller must drop;
  /// otherwise returns null.
  void* release_ref_and_take_pyobject();
  /// Installs the release hook (once, by the Python layer): called when a reference is dropped
  /// from a tensor that owns its Python object and only that object's handle would remain.
  /// It must take the GIL, then call release_ref_and_take_pyobject and drop the result.
  static void set_pyobject_release_hook(void (*hook)(TensorImpl*));

  /// The lifetime observer's entry for this tensor (graft/core/lifetime.h; the leak doctor's).
  lifetime::ObserverSlot& observer_slot() const { return observer_slot_; }

 private:
  mutable lifetime::ObserverSlot observer_slot_;
  Shape sizes_;
  Shape strides_;
  int64_t storage_offset_;
  int64_t numel_;
  intrusive_ptr<StorageImpl> storage_;
  intrusive_ptr<VersionCounter> own_version_;
  DType dtype_;
  bool is_contiguous_;
  void refresh();
};

/// Contiguous (row-major) strides for `sizes`.
Shape contiguous_strides(IntArrayRef sizes);
/// Product of sizes.
int64_t compute_numel(IntArrayRef sizes);

}  // namespace graft
