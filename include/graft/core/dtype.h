#pragma once
/// Element types and PyTorch's type-promotion lattice (bool < int32 < int64 < float32 < float64).
#include <cstddef>
#include <cstdint>
#include <ostream>

namespace graft {

/// The element type of a tensor. The enumerator order is the promotion order.
enum class DType : uint8_t { Bool = 0, Int32 = 1, Int64 = 2, Float32 = 3, Float64 = 4 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
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
  }
  return 0;
}
constexpr bool is_floating_point(DType t) { return t == DType::Float32 || t == DType::Float64; }
constexpr bool is_integral(DType t, bool include_bool) {
  return t == DType::Int32 || t == DType::Int64 || (include_bool && t == DType::Bool);
}
/// PyTorch's promote_types for the dtypes graft has.
constexpr DType promote_types(DType a, DType b) { return a > b ? a : b; }
/// "float32", "int64", ... as in `torch.float32`.
const char* dtype_name(DType t);
/// PyTorch's legacy type string used in some error messages: "FloatTensor", "LongTensor", ...
const char* legacy_type_name(DType t);
/// PyTorch's ScalarType name used in its messages: "Float", "Double", "Long", "Int", "Bool".
const char* scalar_type_name(DType t);
/// The C++ spelling PyTorch uses in some messages: "float", "double", "long", "int", "bool".
const char* dtype_cpp_name(DType t);
/// The default floating dtype (float32), as torch.get_default_dtype().
inline DType default_dtype() { return DType::Float32; }
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
#undef GRAFT_DTYPE_OF

}  // namespace graft

/// One `case` of a dtype switch: binds `scalar_t` to `type` and returns the body's result.
#define GRAFT_DTYPE_CASE(tag, type, ...) \
  case ::graft::DType::tag: {            \
    using scalar_t = type;               \
    return __VA_ARGS__();                \
  }

/// Runs the body with `scalar_t` bound to the C++ type of `dtype`.
#define GRAFT_DISPATCH_ALL(dtype, opname, ...)                                             \
  [&] {                                                                                    \
    switch (dtype) {                                                                       \
      GRAFT_DTYPE_CASE(Bool, bool, __VA_ARGS__)                                            \
      GRAFT_DTYPE_CASE(Int32, int32_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Int64, int64_t, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                        \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                       \
    }                                                                                      \
    throw ::graft::TypeError(::graft::detail::str(opname, ": unsupported dtype ", dtype)); \
  }()

/// Like GRAFT_DISPATCH_ALL, for float32 and float64 only.
#define GRAFT_DISPATCH_FLOATING(dtype, opname, ...)                                                               \
  [&] {                                                                                                           \
    switch (dtype) {                                                                                              \
      GRAFT_DTYPE_CASE(Float32, float, __VA_ARGS__)                                                               \
      GRAFT_DTYPE_CASE(Float64, double, __VA_ARGS__)                                                              \
      default:                                                                                                    \
        break;                                                                                                    \
    }                                                                                                             \
    throw ::graft::TypeError(::graft::detail::str(opname, ": expected a floating point tensor but got ", dtype)); \
  }()
