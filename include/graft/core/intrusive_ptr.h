#pragma once
/// Intrusive reference counting: the count lives in the object, so a handle is one pointer
/// and copying it is one atomic increment. See docs/notes/ownership.md.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "graft/core/object_pool.h"

namespace graft {

class TensorImpl;

/// Base for intrusively counted objects. When the last handle goes, `release_self()` runs;
/// Node overrides it to defer deletion so that long graphs are destroyed iteratively.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) : refcount_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }
  virtual ~RefCounted() = default;
  /// Called once the count reaches zero. Default: delete.
  virtual void release_self() { delete this; }
  /// Every counted object (tensors, storages, nodes) comes from this thread's free lists
  /// (include/graft/core/object_pool.h). The destructor is virtual, so `delete` passes the
  /// size of the object's own class.
  static void* operator new(size_t size) { return detail::pooled_allocate(size); }
  static void operator delete(void* p, size_t size) noexcept { detail::pooled_deallocate(p, size); }
  /// Over-aligned classes keep the global operators (the pool's blocks are 16-byte aligned).
  static void* operator new(size_t size, std::align_val_t al) { return ::operator new(size, al); }
  static void operator delete(void* p, size_t size, std::align_val_t al) noexcept { ::operator delete(p, size, al); }
  /// Placement new stays available (the class-scope operators above would hide it).
  static void* operator new(size_t, void* where) noexcept { return where; }
  /// Current number of strong handles (for tests and diagnostics).
  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed) & kCountMask; }

  /// The high bit of the count word. Only TensorImpl uses it: set while the tensor owns one
  /// reference to its Python object (see TensorImpl::try_own_pyobject). It lives in the word
  /// of the count so that one compare-exchange sees both. Other types never set it.
  static constexpr uint32_t kOwnsPyObjectBit = 0x80000000u;
  static constexpr uint32_t kCountMask = ~kOwnsPyObjectBit;

 protected:
  /// The raw count word (count | kOwnsPyObjectBit), for TensorImpl's ownership transitions.
  std::atomic<uint32_t>& refcount_word() const { return refcount_; }

 private:
  template <class T>
  friend class intrusive_ptr;
  friend void intrusive_incref(const RefCounted* p);
  friend bool intrusive_try_incref(const RefCounted* p);
  friend bool intrusive_decref(const RefCounted* p);
  friend bool intrusive_decref_tensor(const RefCounted* p);
  mutable std::atomic<uint32_t> refcount_{0};
};

inline void intrusive_incref(const RefCounted* p) { p->refcount_.fetch_add(1, std::memory_order_relaxed); }
/// Takes a reference only if the object is still alive (count > 0); for weak pointers
/// kept as raw pointers, e.g. a leaf's pointer to its AccumulateGrad.
inline bool intrusive_try_incref(const RefCounted* p) {
  uint32_t c = p->refcount_.load(std::memory_order_relaxed);
  while ((c & RefCounted::kCountMask) != 0)
    if (p->refcount_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  return false;
}
/// Returns true when the count reached zero.
inline bool intrusive_decref(const RefCounted* p) { return p->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

/// Whether intrusive_ptr<T> drops references with intrusive_decref_tensor (which watches
/// kOwnsPyObjectBit) instead of a plain decrement. Only TensorImpl pays for the check.
template <class T>
struct intrusive_watches_pyobject_bit : std::false_type {};
template <>
struct intrusive_watches_pyobject_bit<TensorImpl> : std::true_type {};

/// Slow path of intrusive_decref_tensor (src/core/tensor_impl.cpp): the tensor owns its Python
/// object and this reference is the last one besides that object's own handle.
void tensor_decref_owning_pyobject(const RefCounted* p);

/// Drops one reference to a TensorImpl. When the tensor owns its Python object and the count
/// is 2 (that object's handle and the caller's), the release hook installed by the Python
/// layer takes over: it takes the GIL, then decrements, then drops the Python object (see
/// docs/notes/python.md, "Tensor identity"). Returns true when the count reached zero.
inline bool intrusive_decref_tensor(const RefCounted* p) {
  uint32_t c = p->refcount_.load(std::memory_order_relaxed);
  for (;;) {
    if (c == (RefCounted::kOwnsPyObjectBit | 2u)) {
      tensor_decref_owning_pyobject(p);  // never reaches zero: the Python object's handle stays
      return false;
    }
    if (p->refcount_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel, std::memory_order_relaxed))
      return c == 1;
  }
}

/// A strong handle to a RefCounted object.
template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() noexcept = default;
  intrusive_ptr(std::nullptr_t) noexcept {}
  /// Takes a new reference to `p` (which may already be shared).
  explicit intrusive_ptr(T* p) noexcept : p_(p) {
    if (p_) intrusive_incref(p_);
  }
  /// Adopts a reference the caller already took (no increment).
  static intrusive_ptr adopt(T* p) noexcept {
    intrusive_ptr r;
    r.p_ = p;
    return r;
  }
  intrusive_ptr(const intrusive_ptr& o) noexcept : p_(o.p_) {
    if (p_) intrusive_incref(p_);
  }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : intrusive_ptr(static_cast<T*>(o.get())) {
    static_assert(!intrusive_watches_pyobject_bit<U>::value, "a TensorImpl handle must stay intrusive_ptr<TensorImpl>");
  }
  template <class U>
  intrusive_ptr(intrusive_ptr<U>&& o) noexcept : p_(o.release()) {
    static_assert(!intrusive_watches_pyobject_bit<U>::value, "a TensorImpl handle must stay intrusive_ptr<TensorImpl>");
  }
  ~intrusive_ptr() { reset(); }
  intrusive_ptr& operator=(const intrusive_ptr& o) noexcept {
    intrusive_ptr(o).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }
  void reset() noexcept {
    if (p_) {
      T* p = p_;
      p_ = nullptr;
      if constexpr (intrusive_watches_pyobject_bit<T>::value) {
        if (intrusive_decref_tensor(p)) p->release_self();
      } else {
        if (intrusive_decref(p)) p->release_self();
      }
    }
  }
  /// Gives up ownership without decrementing.
  T* release() noexcept {
    T* p = p_;
    p_ = nullptr;
    return p;
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool operator==(const intrusive_ptr& o) const noexcept { return p_ == o.p_; }
  uint32_t use_count() const noexcept { return p_ ? p_->use_count() : 0; }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace graft
