#pragma once
/// SmallVector: a vector that keeps up to N elements inline (no heap allocation),
/// used for sizes, strides and edge lists on the per-op hot path.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>

namespace graft {

template <class T, size_t N>
class SmallVector {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  explicit SmallVector(size_t n, const T& v = T()) { resize(n, v); }
  template <class It, class = decltype(*std::declval<It>())>
  SmallVector(It b, It e) {
    assign(b, e);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(std::move(o)); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      clear();
      assign(o.begin(), o.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      destroy();
      steal(std::move(o));
    }
    return *this;
  }
  ~SmallVector() { destroy(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return ptr(); }
  const T* data() const { return ptr(); }
  T& operator[](size_t i) { return ptr()[i]; }
  const T& operator[](size_t i) const { return ptr()[i]; }
  T& back() { return ptr()[size_ - 1]; }
  const T& back() const { return ptr()[size_ - 1]; }
  T* begin() { return ptr(); }
  T* end() { return ptr() + size_; }
  const T* begin() const { return ptr(); }
  const T* end() const { return ptr() + size_; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    T* fresh = static_cast<T*>(::operator new(n * sizeof(T)));
    for (size_t i = 0; i < size_; ++i) {
      new (fresh + i) T(std::move(ptr()[i]));
      ptr()[i].~T();
    }
    if (heap_) ::operator delete(heap_);
    heap_ = fresh;
    cap_ = n;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  template <class... A>
  T& emplace_back(A&&... a) {
    if (size_ == cap_) {
      // `a` may alias an element: build first, then grow.
      T tmp(std::forward<A>(a)...);
      reserve(cap_ * 2);
      return *new (ptr() + size_++) T(std::move(tmp));
    }
    return *new (ptr() + size_++) T(std::forward<A>(a)...);
  }
  void pop_back() { ptr()[--size_].~T(); }
  void resize(size_t n, const T& v = T()) {
    reserve(n);
    while (size_ > n) pop_back();
    while (size_ < n) new (ptr() + size_++) T(v);
  }
  void clear() {
    while (size_ > 0) pop_back();
  }
  T* insert(T* pos, const T& v) {
    size_t idx = pos - begin();
    T copy = v;
    emplace_back(copy);
    std::rotate(begin() + idx, end() - 1, end());
    return begin() + idx;
  }
  T* erase(T* pos) {
    std::move(pos + 1, end(), pos);
    pop_back();
    return pos;
  }
  template <class It>
  void assign(It b, It e) {
    clear();
    reserve(static_cast<size_t>(std::distance(b, e)));
    for (; b != e; ++b) new (ptr() + size_++) T(*b);
  }
  bool operator==(const SmallVector& o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }
  bool operator!=(const SmallVector& o) const { return !(*this == o); }

 private:
  T* ptr() { return heap_ ? heap_ : reinterpret_cast<T*>(inline_); }
  const T* ptr() const { return heap_ ? heap_ : reinterpret_cast<const T*>(inline_); }
  void destroy() {
    clear();
    if (heap_) ::operator delete(heap_);
    heap_ = nullptr;
    cap_ = N;
  }
  void steal(SmallVector&& o) {
    if (o.heap_) {
      heap_ = o.heap_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.size_ = 0;
      o.cap_ = N;
    } else {
      heap_ = nullptr;
      cap_ = N;
      size_ = 0;
      for (size_t i = 0; i < o.size_; ++i) new (ptr() + size_++) T(std::move(o.ptr()[i]));
      o.clear();
    }
  }
  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = N;
};

}  // namespace graft
