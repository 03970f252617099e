#pragma once
/// Size arithmetic that never wraps. Every shape computed from numbers a user passes (output
/// sizes of pooling, convolution and padding, repeat counts, averaging windows) goes through
/// these, so a huge size raises PyTorch's error instead of wrapping into a wrong shape, a hang
/// or a wild write (docs/notes/errors.md, "Sizes").
#include <cstdint>
#include <limits>

#include "graft/core/error.h"

namespace graft {

/// a * b, or RuntimeError "integer multiplication overflow" (c10's text for sizes).
inline int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  GRAFT_CHECK(!__builtin_mul_overflow(a, b, &r), RuntimeError, "integer multiplication overflow");
  return r;
}
/// a + b, or RuntimeError "integer addition overflow".
inline int64_t checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  GRAFT_CHECK(!__builtin_add_overflow(a, b, &r), RuntimeError, "integer addition overflow");
  return r;
}
/// a - b, or RuntimeError "integer subtraction overflow".
inline int64_t checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  GRAFT_CHECK(!__builtin_sub_overflow(a, b, &r), RuntimeError, "integer subtraction overflow");
  return r;
}
/// PyTorch's safe_downcast<int, int64_t> (window arguments of pooling): v as a 32-bit int, or
/// RuntimeError "integer out of range".
inline int64_t checked_int32(int64_t v) {
  GRAFT_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(), RuntimeError,
              "integer out of range");
  return v;
}

}  // namespace graft
