#pragma once
/// IntArrayRef: a non-owning view of int64 values (sizes, strides, dims), constructible from
/// `{2, 3}`, std::vector and SmallVector. Shape: the owning small vector used inside tensors.
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "graft/core/small_vector.h"

namespace graft {

using Shape = SmallVector<int64_t, 5>;

class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t* d, size_t n) : data_(d), size_(n) {}
  IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  /// Valid for the full expression that created the list (function arguments), as in c10.
  IntArrayRef(std::initializer_list<int64_t> il) : data_(il.begin()), size_(il.size()) {}
#pragma GCC diagnostic pop
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  IntArrayRef(const SmallVector<int64_t, N>& v) : data_(v.data()), size_(v.size()) {}

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  bool equals(IntArrayRef o) const {
    if (size_ != o.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  Shape shape() const { return Shape(begin(), end()); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

/// Prints "[2, 3]" as PyTorch prints sizes in messages.
std::ostream& operator<<(std::ostream& os, IntArrayRef a);
inline bool operator==(IntArrayRef a, IntArrayRef b) { return a.equals(b); }
inline bool operator!=(IntArrayRef a, IntArrayRef b) { return !a.equals(b); }

}  // namespace graft
