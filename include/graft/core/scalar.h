#pragma once
/// Scalar: a number passed to an op (`x * 2`, `x + 0.5`). It remembers whether it is an
/// integer, floating or boolean value, because PyTorch's type promotion depends on it.
#include <cstdint>
#include <type_traits>

#include "graft/core/dtype.h"

namespace graft {

class Scalar {
 public:
  Scalar() : kind_(Kind::Int), i_(0) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}

  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_long() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return kind_ == Kind::Float ? d_ != 0 : i_ != 0;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(to_double());
    else return kind_ == Kind::Float ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  /// The dtype a tensor made from this scalar gets: int64, float32 (default dtype) or bool.
  DType natural_dtype() const {
    return kind_ == Kind::Float ? default_dtype() : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

 private:
  enum class Kind : uint8_t { Int, Float, Bool } kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace graft
