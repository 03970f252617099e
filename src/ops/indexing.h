#pragma once
// Advanced indexing internals shared by indexing.cpp (index, index_put, masked_select) and
// inplace.cpp (index_put_): the validated plan of an index list and the kernels that walk it.
#include <optional>
#include <vector>

#include "graft/ops/ops.h"

namespace graft::detail {

/// An index list resolved against a shape. The "work" dims are self's dims with a unit dim
/// inserted for each 0-dim bool index (NumPy's x[True]); masks are replaced by the int64
/// columns of their nonzero(), int32 indices are widened, negative indices wrapped.
struct IndexPlan {
  Shape work_sizes;
  std::vector<int64_t> self_dim;  ///< per work dim: the dim of self, or -1 for an inserted unit dim
  std::vector<int64_t> adv;       ///< work dims that carry an index tensor, ascending
  std::vector<Tensor> idx;        ///< per adv dim: int64 indices in [0, size), contiguous
  Shape bshape;                   ///< the broadcast shape of the index tensors
  std::vector<int64_t> rest;      ///< work dims without an index tensor, ascending
  Shape out_sizes;                ///< the shape of self[indices]
  std::vector<int64_t> out_bpos;  ///< where bshape's dims sit in out_sizes
  std::vector<int64_t> out_rpos;  ///< where the rest dims sit in out_sizes
};

/// Validates `indices` against `sizes` (PyTorch's IndexError texts) and resolves them.
IndexPlan plan_index(IntArrayRef sizes, const std::vector<std::optional<Tensor>>& indices);
/// Checks values for index_put on self: dtype equal to self's, broadcastable to the indexed shape.
void check_index_put_values(const Tensor& self, const IndexPlan& p, const Tensor& values);
/// out (shape p.out_sizes) = src[indices]. No autograd.
void index_gather(const Tensor& out, const Tensor& src, const IndexPlan& p);
/// dst[indices] = values (or += with accumulate), values broadcast to p.out_sizes. No autograd,
/// no version bump; values must not share dst's storage.
void index_scatter(const Tensor& dst, const IndexPlan& p, const Tensor& values, bool accumulate);
/// Out-of-place index_put of a validated plan. No autograd.
Tensor index_put_planned(const Tensor& self, const IndexPlan& p, const Tensor& values, bool accumulate);

}  // namespace graft::detail
