// Elementwise CPU kernels: unary, binary, where, copy, fill.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"
#include "loops.h"

namespace graft::cpu {
namespace {

template <class T>
T int_pow(T base, T e) {
  if (e < 0) {  // integer ** negative: PyTorch returns 1/base**|e| truncated
    if (base == 1) return 1;
    if (base == -1) return (e % 2 == 0) ? 1 : -1;
    return 0;
  }
  T r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

template <class T>
void unary_typed(UnaryOp op, const Tensor& out, const Tensor& a, double p0, double p1) {
  using C = std::conditional_t<std::is_floating_point_v<T>, T, double>;  // compute type
  auto run = [&](auto f) { elementwise<T, T>(out, f, a); };
  switch (op) {
    case UnaryOp::BitNot:
      if constexpr (std::is_same_v<T, bool>)
        return run([](T x) { return !x; });
      else if constexpr (std::is_integral_v<T>)
        return run([](T x) { return static_cast<T>(~x); });
      else
        break;
    case UnaryOp::Clamp: {
      // p0 / p1: the bounds, -inf / +inf when absent; a NaN bound makes every output NaN
      const bool has_lo = !(std::isinf(p0) && p0 < 0), has_hi = !(std::isinf(p1) && p1 > 0);
      // a bound is checked to fit T by clamp(); as a double, 2**63 - 1 rounds up to 2**63, so
      // integer bounds saturate instead of an out-of-range (undefined) cast
      auto bound = [](double v) -> T {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (v >= -static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::max();
          if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        }
        return static_cast<T>(v);
      };
      const T lo = has_lo ? bound(p0) : T(0), hi = has_hi ? bound(p1) : T(0);
      const bool nan_bound = std::isnan(p0) || std::isnan(p1);
      return run([=](T x) {
        if constexpr (std::is_floating_point_v<T>) {
          if (nan_bound) return std::numeric_limits<T>::quiet_NaN();
          if (std::isnan(x)) return x;
        }
        if (has_lo && x < lo) x = lo;
        if (has_hi && x > hi) x = hi;
        return x;
      });
    }
    case UnaryOp::Threshold:
      if constexpr (std::is_same_v<T, bool>)
        break;
      else {
        // the threshold and the value in the tensor's dtype, as PyTorch converts them; a NaN
        // element fails the test and stays
        const T threshold = static_cast<T>(p0), value = static_cast<T>(p1);
        return run([=](T x) { return x <= threshold ? value : x; });
      }
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Gelu:
        return run([](T x) { return static_cast<T>(C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2)))); });
      case UnaryOp::GeluTanh:
        return run([](T x) {
          const C k = C(M_2_SQRTPI * M_SQRT1_2);  // sqrt(2/pi)
          return static_cast<T>(C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x))));
        });
      default:
        break;
    }
  }
  GRAFT_INTERNAL_ASSERT(false, "unary kernel: op not implemented for dtype ", out.dtype());
}

template <class T>
void binary_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha_s) {
  auto run = [&](auto f) { elementwise<T, T, T>(out, f, a, b); };
  switch (op) {
    case BinaryOp::Add:
      if constexpr (std::is_same_v<T, bool>) {
        if (!alpha_s.to<bool>()) return run([](T x, T) { return x; });  // x + y * False
        return run([](T x, T y) { return x || y; });
      } else {
        const T alpha = alpha_s.to<T>();
        if (alpha == T(1)) return run([](T x, T y) { return static_cast<T>(x + y); });
        return run([=](T x, T y) { return static_cast<T>(x + alpha * y); });
      }
    case BinaryOp::Sub:
      if constexpr (std::is_same_v<T, bool>)
        break;
      else {
        const T alpha = alpha_s.to<T>();
        if (alpha == T(1)) return run([](T x, T y) { return static_cast<T>(x - y); });
        return run([=](T x, T y) { return static_cast<T>(x - alpha * y); });
      }
    case BinaryOp::Mul:
      if constexpr (std::is_same_v<T, bool>)
        return run([](T x, T y) { return x && y; });
      else
        return run([](T x, T y) { return static_cast<T>(x * y); });
    case BinaryOp::Div:
      if constexpr (std::is_floating_point_v<T>)
        return run([](T x, T y) { return x / y; });
      else
        break;
    case BinaryOp::Pow:
      if constexpr (std::is_floating_point_v<T>)
        return run([](T x, T y) { return std::pow(x, y); });
      else if constexpr (!std::is_same_v<T, bool>)
        return run([](T x, T y) { return int_pow<T>(x, y); });
      else
        break;
    case BinaryOp::ThresholdBackward:
      if constexpr (std::is_same_v<T, bool>)
        break;
      else {
        const T threshold = alpha_s.to<T>();
        return run([=](T g, T x) { return x <= threshold ? T(0) : g; });
      }
  }
  GRAFT_INTERNAL_ASSERT(false, "binary kernel: op not implemented for dtype ", a.dtype());
}

template <class T>
void binary_scalar_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s_, const Scalar& alpha_s,
                         bool rev) {
  auto run = [&](auto f) { elementwise<T, T>(out, f, a); };
  const T s = s_.to<T>();
  if constexpr (!std::is_same_v<T, bool>) {
    const T alpha = alpha_s.to<T>();
    const T sa = static_cast<T>(s * alpha);
    switch (op) {
      case BinaryOp::Add:
        if (rev) return run([=](T x) { return static_cast<T>(s + alpha * x); });
        return run([=](T x) { return static_cast<T>(x + sa); });
      case BinaryOp::Sub:
        if (rev) return run([=](T x) { return static_cast<T>(s - alpha * x); });
        return run([=](T x) { return static_cast<T>(x - sa); });
      case BinaryOp::Mul:
        return run([=](T x) { return static_cast<T>(x * s); });
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (op == BinaryOp::Div) {
        if (rev) return run([=](T x) { return s / x; });
        return run([=](T x) { return x / s; });
      }
      if (op == BinaryOp::Pow) {
        if (rev) return run([=](T x) { return std::pow(s, x); });
        if (s == T(2)) return run([](T x) { return x * x; });
        if (s == T(0.5)) return run([](T x) { return std::sqrt(x); });
        // an exponent T cannot hold exactly (2**31 - 1 in float32 rounds to an even number)
        // is applied in double, so odd integer exponents keep negative bases negative
        if (const double e = s_.to_double(); static_cast<double>(s) != e && !std::isnan(e))
          return run([=](T x) { return static_cast<T>(std::pow(static_cast<double>(x), e)); });
        return run([=](T x) { return std::pow(x, s); });
      }
    } else {
      if (op == BinaryOp::Pow) {
        if (rev) return run([=](T x) { return int_pow<T>(s, x); });
        return run([=](T x) { return int_pow<T>(x, s); });
      }
    }
  }
  // Everything else goes through the tensor path with a 0-d operand.
  GRAFT_INTERNAL_ASSERT(backend::binary_scalar_uses_operand(op, a.dtype()));  // the meta backend mirrors it
  Tensor st = scratch({}, a.dtype());
  fill(st, s_);
  if (rev)
    binary_typed<T>(op, out, st, a, alpha_s);
  else
    binary_typed<T>(op, out, a, st, alpha_s);
}

}  // namespace

void unary(UnaryOp op, const Tensor& out, const Tensor& a, double p0, double p1) {
  GRAFT_DISPATCH_ALL(out.dtype(), "unary", [&] { unary_typed<scalar_t>(op, out, a, p0, p1); });
}

void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  GRAFT_DISPATCH_ALL(a.dtype(), "binary", [&] { binary_typed<scalar_t>(op, out, a, b, alpha); });
}

void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s, const Scalar& alpha,
                   bool reverse) {
  GRAFT_DISPATCH_ALL(a.dtype(), "binary", [&] { binary_scalar_typed<scalar_t>(op, out, a, s, alpha, reverse); });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  GRAFT_DISPATCH_ALL(out.dtype(), "where", [&] {
    elementwise<scalar_t, bool, scalar_t, scalar_t>(
        out, [](bool c, scalar_t x, scalar_t y) { return c ? x : y; }, cond, a, b);
  });
}

// Copies convert every dtype to every other, the 16-bit floats included: a 16-bit value goes
// through float (exact), a value becoming 16-bit is rounded to nearest even from float (from
// a double, through float, as PyTorch's c10::Half(float) takes it).
void copy(const Tensor& dst, const Tensor& src) {
  GRAFT_DISPATCH_ALL_AND_REDUCED(dst.dtype(), "copy_", [&] {
    using D = scalar_t;
    GRAFT_DISPATCH_ALL_AND_REDUCED(src.dtype(), "copy_", [&] {
      using S = scalar_t;
      if constexpr (std::is_same_v<D, S>) {
        if (dst.is_contiguous() && src.is_contiguous() && dst.sizes().equals(src.sizes())) {
          if (dst.numel() > 0) std::memmove(dst.data_ptr(), src.data_ptr(), dst.nbytes());
          return;
        }
      }
      elementwise<D, S>(
          dst,
          [](S x) {
            using Wide = std::conditional_t<is_reduced_float_v<S>, float, S>;  // 16 bits read as float
            if constexpr (std::is_same_v<D, bool>)
              return static_cast<Wide>(x) != Wide(0);
            else
              return static_cast<D>(static_cast<Wide>(x));
          },
          src);
    });
  });
}

void fill(const Tensor& dst, const Scalar& v) {
  GRAFT_DISPATCH_ALL_AND_REDUCED(dst.dtype(), "fill_", [&] {
    const scalar_t x = v.checked_to<scalar_t>();  // PyTorch's overflow error, before any write
    // zero-stride trick: fill via a broadcast of a stack value
    if (dst.is_contiguous()) {
      scalar_t* p = static_cast<scalar_t*>(dst.data_ptr());
      for (int64_t i = 0, n = dst.numel(); i < n; ++i) p[i] = x;
      return;
    }
    elementwise<scalar_t, scalar_t>(
        dst, [=](scalar_t) { return x; }, dst);
  });
}

namespace {
// The element offsets of every matrix of t (its dims but the last two), in row-major order.
std::vector<int64_t> matrix_offsets(const Tensor& t) {
  std::vector<int64_t> offsets{t.storage_offset()};
  for (int64_t d = 0; d + 2 < t.dim(); ++d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(t.size(d)));
    for (int64_t base : offsets)
      for (int64_t i = 0; i < t.size(d); ++i) next.push_back(base + i * t.stride(d));
    offsets = std::move(next);
  }
  return offsets;
}
}  // namespace

void triangle(const Tensor& out, const Tensor& a, int64_t diagonal, bool lower) {
  const int64_t rows = a.size(-2), cols = a.size(-1);
  if (out.numel() == 0) return;
  const std::vector<int64_t> from = matrix_offsets(a), to = matrix_offsets(out);
  const int64_t ar = a.stride(-2), ac = a.stride(-1), orr = out.stride(-2), oc = out.stride(-1);
  GRAFT_DISPATCH_ALL(out.dtype(), "tril", [&] {
    using T = scalar_t;
    // the raw base of the storage: the offsets above already count each tensor's own offset
    const T* x = static_cast<const T*>(a.data_ptr()) - a.storage_offset();
    T* o = static_cast<T*>(out.data_ptr()) - out.storage_offset();
    for (size_t b = 0; b < from.size(); ++b)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
          o[to[b] + i * orr + j * oc] = keep ? x[from[b] + i * ar + j * ac] : T(0);
        }
  });
}

namespace {
// ---------------- floor, floor division, remainder ----------------
// Python's semantics: the quotient rounds toward -inf and the remainder takes the divisor's
// sign. Floats follow the fmod-based formulation (as PyTorch and CPython do), so that
// a == b * q + r holds as closely as rounding allows; division by a float zero gives inf/nan.
template <class T>
T floor_div_value(T a, T b, bool& zero_div) {
  if constexpr (std::is_floating_point_v<T>) {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T q = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) q -= 1;
    if (q == 0) return std::copysign(T(0), a / b);
    T fq = std::floor(q);
    return q - fq > T(0.5) ? fq + 1 : fq;
  } else {
    if (b == 0) {
      zero_div = true;
      return 0;
    }
    // -1 separately: INT_MIN / -1 overflows (wraps, as two's complement negation does)
    if (b == -1) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    T q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  }
}
// C's division: the quotient rounded toward zero (div's rounding_mode='trunc').
template <class T>
T trunc_div_value(T a, T b, bool& zero_div) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::trunc(a / b);
  } else {
    if (b == 0) {
      zero_div = true;
      return 0;
    }
    if (b == -1) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    return a / b;
  }
}
template <class T>
T remainder_value(T a, T b, bool& zero_div) {
  if constexpr (std::is_floating_point_v<T>) {
    T mod = std::fmod(a, b);
    if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
    return mod;
  } else {
    if (b == 0) {
      zero_div = true;
      return 0;
    }
    if (b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

}  // namespace

bool rounding_div(DivMode mode, const Tensor& out, const Tensor& x, const Tensor& y) {
  bool zero_div = false;
  auto run = [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>)
      GRAFT_INTERNAL_ASSERT(false, "rounding_div: bool is refused by the op");
    else if (mode == DivMode::Remainder)
      elementwise<T, T, T>(
          out, [&](T p, T q) { return remainder_value(p, q, zero_div); }, x, y);
    else if (mode == DivMode::Trunc)
      elementwise<T, T, T>(
          out, [&](T p, T q) { return trunc_div_value(p, q, zero_div); }, x, y);
    else
      elementwise<T, T, T>(
          out, [&](T p, T q) { return floor_div_value(p, q, zero_div); }, x, y);
  };
  GRAFT_DISPATCH_ALL(out.dtype(), "rounding_div", [&] { run.template operator()<scalar_t>(); });
  return zero_div;
}

}  // namespace graft::cpu
