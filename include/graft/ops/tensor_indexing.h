#pragma once
/// Python's and libtorch's indexing rules over a list of index items (graft/core/tensor_index.h),
/// the one implementation behind Tensor::index / index_put_ and the Python bindings'
/// __getitem__ / __setitem__: ints select, slices narrow, None adds a dim, Ellipsis stands for
/// the dims not named, bools add a dim (kept or emptied), tensors are advanced indices
/// (graft::index / index_put_), with PyTorch's IndexError texts.
#include <optional>
#include <span>
#include <vector>

#include "graft/core/tensor_index.h"

namespace graft::detail {

/// Applies the basic items (ints, slices, None, Ellipsis, bools) to self as views, and collects
/// the advanced ones (tensors; a bool beside them, as PyTorch's 0-d mask) against the dims of
/// the result, in the form graft::index takes (empty when there are none).
Tensor apply_basic_indices(const Tensor& self, std::span<const indexing::TensorIndex> items,
                           std::vector<std::optional<Tensor>>& advanced);
/// self[items]: a view when every item is basic (x[...] an alias), else a new tensor.
Tensor index_with(const Tensor& self, std::span<const indexing::TensorIndex> items);
/// self[items] = value (broadcast; cast to self's dtype when it indexes by tensors), in place.
void index_put_with(const Tensor& self, std::span<const indexing::TensorIndex> items, const Tensor& value);

}  // namespace graft::detail
