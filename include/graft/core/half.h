#pragma once
/// The 16-bit floating types: Half (IEEE 754 binary16, PyTorch's float16) and BFloat16 (the top
/// half of a float32, PyTorch's bfloat16). Each stores its 16 bits and converts to and from
/// float with round-to-nearest-even, as PyTorch's c10::Half and c10::BFloat16; arithmetic on
/// them goes through float (the implicit conversion), so `a + b` is a float, rounded once when
/// it is stored back. Kernels compute 16-bit tensors in float32 (docs/notes/dtypes.md).
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace graft {

/// IEEE 754 half precision: 1 sign bit, 5 exponent bits, 10 fraction bits.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  constexpr Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit, as c10::Half
  constexpr Half(double d) : Half(static_cast<float>(d)) {}
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  constexpr Half(I i) : Half(static_cast<float>(i)) {}
  constexpr operator float() const { return to_float(bits); }  // NOLINT: implicit, as c10::Half
  static constexpr Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  static constexpr float to_float(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
  static constexpr uint16_t from_float(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }
};

/// bfloat16: the sign, the 8 exponent bits and the top 7 fraction bits of a float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  constexpr BFloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit, as c10::BFloat16
  constexpr BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  constexpr BFloat16(I i) : BFloat16(static_cast<float>(i)) {}
  constexpr operator float() const { return to_float(bits); }  // NOLINT: implicit, as c10::BFloat16
  static constexpr BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  static constexpr float to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
  /// Round to nearest, ties to even; every NaN becomes the quiet NaN 0x7fc0 (PyTorch's).
  static constexpr uint16_t from_float(float f) {
    if (f != f) return 0x7fc0;
    const uint32_t u = std::bit_cast<uint32_t>(f);
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

/// Half or BFloat16.
template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
/// float, double, Half or BFloat16.
template <class T>
inline constexpr bool is_floating_type_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

}  // namespace graft

namespace std {
template <>
class numeric_limits<graft::Half> {
 public:
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
  static constexpr bool has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 11, max_exponent = 16, min_exponent = -13;
  static constexpr graft::Half min() { return graft::Half::from_bits(0x0400); }
  static constexpr graft::Half lowest() { return graft::Half::from_bits(0xfbff); }
  static constexpr graft::Half max() { return graft::Half::from_bits(0x7bff); }
  static constexpr graft::Half epsilon() { return graft::Half::from_bits(0x1400); }
  static constexpr graft::Half infinity() { return graft::Half::from_bits(0x7c00); }
  static constexpr graft::Half quiet_NaN() { return graft::Half::from_bits(0x7e00); }
  static constexpr graft::Half denorm_min() { return graft::Half::from_bits(0x0001); }
};
template <>
class numeric_limits<graft::BFloat16> {
 public:
  static constexpr bool is_specialized = true, is_signed = true, is_integer = false, is_exact = false;
  static constexpr bool has_infinity = true, has_quiet_NaN = true;
  static constexpr int digits = 8, max_exponent = 128, min_exponent = -125;
  static constexpr graft::BFloat16 min() { return graft::BFloat16::from_bits(0x0080); }
  static constexpr graft::BFloat16 lowest() { return graft::BFloat16::from_bits(0xff7f); }
  static constexpr graft::BFloat16 max() { return graft::BFloat16::from_bits(0x7f7f); }
  static constexpr graft::BFloat16 epsilon() { return graft::BFloat16::from_bits(0x3c00); }
  static constexpr graft::BFloat16 infinity() { return graft::BFloat16::from_bits(0x7f80); }
  static constexpr graft::BFloat16 quiet_NaN() { return graft::BFloat16::from_bits(0x7fc0); }
  static constexpr graft::BFloat16 denorm_min() { return graft::BFloat16::from_bits(0x0001); }
};
}  // namespace std
