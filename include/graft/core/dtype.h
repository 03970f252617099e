#pragma once
/// Element types and PyTorch's type-promotion lattice (bool < int32 < int64 < the floats; among
/// the floats float16 and bfloat16 < float32 < float64, and float16 with bfloat16 is float32).
#include <cstddef>
#include <cstdint>
#include <ostream>

#include "graft/core/half.h"

namespace graft {

/// The element type of a tensor. The values are fixed (files and tables use them); the
/// 16-bit floats came last.
enum class DType : uint8_t { Bool = 0, Int32 = 1, Int64 = 2, Float32 = 3, Float64 = 4, Float16 = 5, BFloat16 = 6 };
/// Number of DType values (the size of per-dtype tables).
inline constexpr int kNumDTypes = 7;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kHalf = DType::Float16;
/// Aliases with libtorch's names.
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kDouble = DType::Float64;
inline constexpr DType kLong = DType::Int64;
inline constexpr DType kInt = DType::Int32;

/// Bytes per element.
constexpr size_t element_size(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::Int32:
      return 4;
    case DType::Int64:
      return 8;
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::Float16:
    case DType::BFloat16:
      return 2;
  }
  return 0;
}
/// float16 and bfloat16: stored in 16 bits, computed in float32 (the kernel dispatch widens them).
constexpr bool is_reduced_floating_point(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
constexpr bool is_floating_point(DType t) {
  return t == DType::Float32 || t == DType::Float64 || is_reduced_floating_point(t);
}
constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::Int32 || t == DType::Int64 || (include_bool && t == DType::Bool);
}
/// PyTorch's promote_types for the dtypes graft has: the higher of bool < int32 < int64 <
/// float16, bfloat16 < float32 < float64, with float16 and bfloat16 together giving float32.
constexpr DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_reduced_floating_point(a) && is_reduced_floating_point(b)) return DType::Float32;
  auto rank = [](DType t) {
    switch (t) {
      case DType::Bool:
        return 0;
      case DType::Int32:
        return 1;
      case DType::Int64:
        return 2;
      case DType::Float16:
      case DType::BFloat16:
        return 3;
      case DType::Float32:
        return 4;
      case DType::Float64:
        return 5;
    }
    return 0;
  };
  return rank(a) > rank(b) ? a : b;
}
/// "float32", "int64", ... as in `torch.float32`.
const char* dtype_name(DType t);
/// PyTorch's legacy type string used in some error messages: "FloatTensor", "LongTensor", ...
const char* legacy_type_name(DType t);
/// PyTorch's ScalarType name used in its messages: "Float", "Double", "Long", "Int", "Bool".
const char* scalar_type_name(DType t);
/// The C++ spelling PyTorch uses in some messages: "float", "double", "long", "int", "bool".
const char* dtype_cpp_name(DType t);
/// The default floating dtype, as torch.get_default_dtype(): float32 unless set_default_dtype
/// changed it. Python floats, the floating factories (zeros, rand, arange with a float step, ...)
/// and integer tensors promoted by a Python float take it.
DType default_dtype();
/// PyTorch's torch.set_default_dtype: float32, float64, float16 or bfloat16 (TypeError "only
/// floating-point types are supported as the default type" otherwise). Process-wide, as PyTorch's.
void set_default_dtype(DType dtype);
std::ostream& operator<<(std::ostream& os, DType t);

/// dtype_of<T>::value: the DType of the C++ type T (bool, int32_t, int64_t, float, double).
template <class T>
struct dtype_of;
#define GRAFT_DTYPE_OF(type, tag)              \
  template <>                                  \
  struct dtype_of<type> {                      \
    static constexpr DType value = DType::tag; \
  }
GRAFT_DTYPE_OF(bool, Bool);
GRAFT_DTYPE_OF(int32_t, Int32);
GRAFT_DTYPE_OF(int64_t, Int64);
GRAFT_DTYPE_OF(float, Float32);
GRAFT_DTYPE_OF(double, Float64);
GRAFT_DTYPE_OF(Half, Float16);
GRAFT_DTYPE_OF(BFloat16, BFloat16);
#undef GRAFT_DTYPE_OF

}  // namespace graft

/// One `case` of a dtype switch: binds `scalar_t` to `type` and returns the body's result.
#define GRAFT_DTYPE_CASE(tag, type, ...) \
  case ::graft::DType::tag: {            \
    using scalar_t = type;               \
    return __VA_ARGS__();                \
  }

/// Runs the body with `scalar_t` bound to the C++ type of `dtype`: bool, int32_t, int64_t,
/// float or double. The 16-bit floats are refused (TypeError): kernels compute them in float32
/// (the dispatch in graft/backend/kernels.h widens them first); code that handles their 16 bits
/// itself uses GRAFT_DISPATCH_ALL_AND_REDUCED.
#define GRAFT_DISPATCH_ALL(dtype, opname, ...)                                             \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      GRAFT_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                            \
      GRAFT_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                       \
      case ::graft::DType::Float16:                                                        \
      case ::graft::DType::BFloat16:                                                       \
        break;                                                                             \
    }                                                                                      \
    throw ::graft::TypeError(::graft::detail::str(opname, ": unsupported dtype ", dtype)); \
  }()

/// GRAFT_DISPATCH_ALL with Half and BFloat16 too (graft/core/half.h), for code that moves or
/// converts elements one at a time (copy, fill, item, indexing, tensor construction).
#define GRAFT_DISPATCH_ALL_AND_REDUCED(dtype, opname, ...)                                 \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      GRAFT_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                            \
      GRAFT_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                       \
      GRAFT_DTYPE_CASE(Float16, ::graft::Half, __VA_ARGS__)                                \
      GRAFT_DTYPE_CASE(BFloat16, ::graft::BFloat16, __VA_ARGS__)                           \
    }                                                                                      \
    throw ::graft::TypeError(::graft::detail::str(opname, ": unsupported dtype ", dtype)); \
  }()

/// Like GRAFT_DISPATCH_ALL, for float32 and float64 only.
#define GRAFT_DISPATCH_FLOATING(dtype, opname, ...)                                                               \
  [&] {                                                                                                           \
    switch (dtype) {                                                                                              \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                                               \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                                              \
      case ::graft::DType::Float16:                                                                               \
      case ::graft::DType::BFloat16:                                                                              \
        throw ::graft::TypeError(::graft::detail::str(opname, ": unsupported dtype ", dtype));                    \
      default:                                                                                                    \
        break;                                                                                                    \
    }                                                                                                             \
    throw ::graft::TypeError(::graft::detail::str(opname, ": expected a floating point tensor but got ", dtype)); \
  }()

/// GRAFT_DISPATCH_FLOATING with Half and BFloat16 too.
#define GRAFT_DISPATCH_FLOATING_AND_REDUCED(dtype, opname, ...)                                                   \
  [&] {                                                                                                           \
    switch (dtype) {                                                                                              \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                                               \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                                              \
      GRAFT_DTYPE_CASE(Float16, ::graft::Half, __VA_ARGS__)                                                       \
      GRAFT_DTYPE_CASE(BFloat16, ::graft::BFloat16, __VA_ARGS__)                                                  \
      default:                                                                                                    \
        break;                                                                                                    \
    }                                                                                                             \
    throw ::graft::TypeError(::graft::detail::str(opname, ": expected a floating point tensor but got ", dtype)); \
  }()
