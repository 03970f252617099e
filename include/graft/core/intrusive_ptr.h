#pragma once
/// Intrusive reference counting: the count lives in the object, so a handle is one pointer
/// and copying it is one atomic increment. See docs/notes/ownership.md.
#include <atomic>
#include <cstdint>
#include <utility>

namespace graft {

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
  /// Current number of strong handles (for tests and diagnostics).
  uint32_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  template <class T>
  friend class intrusive_ptr;
  friend void intrusive_incref(const RefCounted* p);
  friend bool intrusive_try_incref(const RefCounted* p);
  friend bool intrusive_decref(const RefCounted* p);
  mutable std::atomic<uint32_t> refcount_{0};
};

inline void intrusive_incref(const RefCounted* p) { p->refcount_.fetch_add(1, std::memory_order_relaxed); }
/// Takes a reference only if the object is still alive (count > 0); for weak pointers
/// kept as raw pointers, e.g. a leaf's pointer to its AccumulateGrad.
inline bool intrusive_try_incref(const RefCounted* p) {
  uint32_t c = p->refcount_.load(std::memory_order_relaxed);
  while (c != 0)
    if (p->refcount_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  return false;
}
/// Returns true when the count reached zero.
inline bool intrusive_decref(const RefCounted* p) {
  return p->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1;
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
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : intrusive_ptr(static_cast<T*>(o.get())) {}
  template <class U>
  intrusive_ptr(intrusive_ptr<U>&& o) noexcept : p_(o.release()) {}
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
      if (intrusive_decref(p)) p->release_self();
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
