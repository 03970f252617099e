#pragma once
// Argument helpers shared by the neural-network ops (src/ops/conv.cpp, pooling.cpp, ...).
#include <array>

#include "graft/core/error.h"
#include "graft/core/int_array.h"
#include "graft/ops/forwards.h"

namespace graft::detail {

/// One value for both dims or one per dim, as PyTorch's int-or-tuple arguments.
inline Pair pair_arg(IntArrayRef v, const char* op, const char* name) {
  GRAFT_CHECK(v.size() == 1 || v.size() == 2, ValueError, op, ": ", name,
              " must either be a single int, or a tuple of two ints, but got ", v);
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

}  // namespace graft::detail
