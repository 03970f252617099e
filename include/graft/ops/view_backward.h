#pragma once
/// The backward node of as_strided, for the autograd layer: a view whose base was modified in
/// place gets it as its regenerated grad_fn (autograd::refresh_view_grad_fn, PyTorch's
/// AsStridedBackward0 there too).
#include "graft/core/int_array.h"
#include "graft/core/intrusive_ptr.h"

namespace graft {
class Node;
namespace detail {

/// AsStridedBackward0 (overlap-aware) for the window (sizes, strides, offset) of a contiguous
/// base of `in_sizes`; its edges are left to the caller.
intrusive_ptr<Node> make_as_strided_backward(IntArrayRef in_sizes, IntArrayRef sizes, IntArrayRef strides,
                                             int64_t offset);

}  // namespace detail
}  // namespace graft
