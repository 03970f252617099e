#pragma once
/// Scalar: a number passed to an op (`x * 2`, `x + 0.5`). It remembers whether it is an
/// integer, floating or boolean value, because PyTorch's type promotion depends on it.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "graft/core/dtype.h"
#include "graft/core/error.h"

namespace graft {

class Scalar {
 public:
  Scalar() : kind_(Kind::Int), i_(0) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}
  Scalar(Half v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}
  Scalar(BFloat16 v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}

  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_long() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return kind_ == Kind::Float ? d_ != 0 : i_ != 0;
    else if constexpr (is_floating_type_v<T>)
      return static_cast<T>(to_double());
    else
      return kind_ == Kind::Float ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  /// Whether the value does not fit T, by PyTorch's rule (c10::overflows): an integer outside
  /// T's range; a floating value outside T's finite range (an infinity fits a floating T, a NaN
  /// any T that has one); never for bool.
  template <class T>
  bool overflows() const {
    using L = std::numeric_limits<T>;
    if constexpr (std::is_same_v<T, bool>) {
      return false;
    } else if (kind_ == Kind::Float) {
      if (L::has_infinity && std::isinf(d_)) return false;
      if (d_ != d_) return !L::has_quiet_NaN;
      if constexpr (std::is_integral_v<T>)  // max + 1 = -lowest is exact in a double; max is not
        return d_ < static_cast<double>(L::lowest()) || d_ >= -static_cast<double>(L::lowest());
      else
        return d_ < static_cast<double>(L::lowest()) || d_ > static_cast<double>(L::max());
    } else if constexpr (std::is_integral_v<T>) {
      return i_ < static_cast<int64_t>(L::lowest()) || i_ > static_cast<int64_t>(L::max());
    } else if constexpr (is_reduced_float_v<T>) {  // 70000 does not fit a float16
      return static_cast<double>(i_) < static_cast<double>(L::lowest()) ||
             static_cast<double>(i_) > static_cast<double>(L::max());
    } else {
      return false;  // an int64 always fits a float's range
    }
  }
  /// The value as T, or PyTorch's RuntimeError "value cannot be converted to type int without
  /// overflow" when it does not fit (fill_, full, clamp, masked_fill, where and every op that
  /// stores a Python number into a tensor of its own dtype; arithmetic wraps, as PyTorch's).
  template <class T>
  T checked_to() const {
    GRAFT_CHECK(!overflows<T>(), RuntimeError, "value cannot be converted to type ", cpp_type_name<T>(),
                " without overflow");
    return to<T>();
  }
  /// checked_to for the C++ type of `dtype`: throws when the value does not fit.
  void check_fits(DType dtype) const {
    GRAFT_DISPATCH_ALL_AND_REDUCED(dtype, "check_fits", [&] {
      if constexpr (!std::is_same_v<scalar_t, bool>) (void)checked_to<scalar_t>();  // anything is a bool
    });
  }
  /// The dtype a tensor made from this scalar gets: int64, float32 (default dtype) or bool.
  DType natural_dtype() const {
    return kind_ == Kind::Float ? default_dtype() : kind_ == Kind::Int ? DType::Int64 : DType::Bool;
  }

 private:
  template <class T>
  static const char* cpp_type_name() {  // c10's names in its overflow message
    if constexpr (std::is_same_v<T, int32_t>)
      return "int";
    else if constexpr (std::is_same_v<T, int64_t>)
      return "int64_t";
    else if constexpr (std::is_same_v<T, float>)
      return "float";
    else if constexpr (std::is_same_v<T, double>)
      return "double";
    else if constexpr (std::is_same_v<T, Half>)
      return "c10::Half";
    else if constexpr (std::is_same_v<T, BFloat16>)
      return "c10::BFloat16";
    else
      return "bool";
  }
  enum class Kind : uint8_t { Int, Float, Bool } kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace graft
