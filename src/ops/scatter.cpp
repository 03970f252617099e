// Writes at indices, written in index_put (declared in src/ops/ops.yaml, the composite family):
// scatter (self[index[i][j]][j] = src[i][j] along dim 0, ...; the last of duplicates wins),
// index_copy (whole slices along dim) and masked_scatter (source's elements, in order, where
// mask holds), with their in-place forms. index_put records IndexPutBackward0, so the gradient
// of self is grad with the written positions zeroed and that of src the gathered grad.
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

using IndexList = std::vector<std::optional<Tensor>>;

// index's positions along every dim: index's values along dim, each other dim's own position
// (an arange shaped to broadcast against index).
IndexList positions_along(const Tensor& index, int64_t dim) {
  IndexList list;
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d == dim) {
      list.emplace_back(index.dtype() == kInt64 ? index : index.to(kInt64));
      continue;
    }
    Shape s(static_cast<size_t>(index.dim()), 1);
    s[static_cast<size_t>(d)] = index.size(d);
    list.emplace_back(arange(0, index.size(d), 1, TensorOptions(kInt64).device(index.device())).reshape(s));
  }
  return list;
}

// PyTorch's scatter checks: index's dtype and rank, its sizes against self's (but along dim)
// and src's, and (with data) each index inside [0, self.size(dim)).
void check_scatter(const Tensor& self, int64_t d, const Tensor& index, const Tensor* src, const char* op) {
  GRAFT_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32, RuntimeError, op,
              "(): Expected dtype int32/int64 for index");
  GRAFT_CHECK(index.dim() == self.dim(), RuntimeError,
              "Index tensor must have the same number of dimensions as self tensor");
  if (src) {
    GRAFT_CHECK(src->dim() == self.dim(), RuntimeError,
                "Index tensor must have the same number of dimensions as src tensor");
    GRAFT_CHECK(src->dtype() == self.dtype(), RuntimeError, op, "(): Expected self.dtype to be equal to src.dtype");
  }
  for (int64_t k = 0; k < index.dim(); ++k) {
    const bool fits = (k == d || index.size(k) <= self.size(k)) && (!src || index.size(k) <= src->size(k));
    if (fits) continue;
    if (src)
      throw RuntimeError(detail::str("Expected index ", index.sizes(), " to be no larger than self ", self.sizes(),
                                     " apart from dimension ", d, " and to be no larger size than src ", src->sizes()));
    throw RuntimeError(detail::str("Expected index ", index.sizes(), " to be no larger than self ", self.sizes(),
                                   " apart from dimension ", d));
  }
  if (index.numel() == 0) return;
  // the same temporaries on meta (sizes only) as on data, so the meta estimate stays exact
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  const Tensor bad = logical_or(lt(index, 0), ge(index, n));
  const Tensor any_bad = any(bad);
  if (detail::has_data(index) && any_bad.item<bool>())
    throw RuntimeError(detail::str("index ", index.masked_select(bad).reshape({-1})[0].item<int64_t>(),
                                   " is out of bounds for dimension ", d, " with size ", n));
}

// src cut to index's shape (scatter reads src only where index has an element).
Tensor cut_to(const Tensor& src, const Tensor& index) {
  Tensor out = src;
  for (int64_t k = 0; k < index.dim(); ++k)
    if (out.size(k) != index.size(k)) out = out.narrow(k, 0, index.size(k));
  return out;
}

// A 0-d tensor as a one-element 1-D one (scatter's and index_copy's rank rules count it as 1-D).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

Tensor scattered(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& values, bool is_src) {
  detail::check_tensor(self, "scatter", "self");
  detail::check_tensor(index, "scatter", "index");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "scatter");
  check_scatter(self, d, index, is_src ? &values : nullptr, "scatter");
  if (index.numel() == 0) return self.clone();
  const Tensor v = is_src ? cut_to(as_1d(values), as_1d(index)) : values;
  return index_put(as_1d(self), positions_along(as_1d(index), d), v).reshape(self.sizes());
}

Tensor& scattered_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& values, bool is_src) {
  detail::check_tensor(index, "scatter_", "index");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "scatter_");
  check_scatter(self, d, index, is_src ? &values : nullptr, "scatter_");
  if (index.numel() == 0) return self;
  const Tensor v = is_src ? cut_to(as_1d(values), as_1d(index)) : values;
  if (self.dim() > 0) return index_put_(self, positions_along(index, d), v);
  Tensor flat = self.reshape({1});  // a view of the 0-d self: written through it
  index_put_(flat, positions_along(as_1d(index), d), v);
  return self;
}

// index_copy's checks: a 0-d or 1-D int64 index, one index per slice of source, one dtype.
void check_index_copy(const Tensor& self, int64_t d, const Tensor& index, const Tensor& source) {
  GRAFT_CHECK(index.dim() <= 1, IndexError, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(),
              ")");
  GRAFT_CHECK(index.dtype() == kInt64, RuntimeError, "index_copy_(): Expected a long tensor for index, but got ",
              scalar_type_name(index.dtype()));
  GRAFT_CHECK(self.dtype() == source.dtype(), RuntimeError,
              "index_copy_(): self and source expected to have the same dtype, but got (self) ",
              scalar_type_name(self.dtype()), " and (source) ", scalar_type_name(source.dtype()));
  const int64_t slices = source.dim() == 0 ? 1 : source.size(d);
  GRAFT_CHECK(index.numel() == slices, IndexError, "index_copy_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", slices, ")");
}

IndexList along_dim(const Tensor& index, int64_t d) {
  IndexList list(static_cast<size_t>(d), std::nullopt);
  list.emplace_back(index.reshape({-1}));
  return list;
}

// masked_scatter's checks and the source elements it writes (as many as mask holds).
Tensor masked_values(const Tensor& self, const Tensor& mask, const Tensor& source) {
  GRAFT_CHECK(mask.dtype() == kBool, RuntimeError,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ", scalar_type_name(mask.dtype()));
  GRAFT_CHECK(self.dtype() == source.dtype(), RuntimeError,
              "masked_scatter: expected self and source to have same dtypes but got", scalar_type_name(self.dtype()),
              " and ", scalar_type_name(source.dtype()));
  if (!detail::has_data(mask)) kernel::not_implemented_for("aten::masked_scatter", mask.device());
  const Shape shape = detail::broadcast_shapes(self.sizes(), mask.sizes());
  const int64_t count = mask.expand(shape).sum().item<int64_t>();
  GRAFT_CHECK(count <= source.numel(), RuntimeError, "Number of elements of source < number of ones in mask");
  return source.reshape({-1}).narrow(0, 0, count);
}

}  // namespace

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scattered(self, dim, index, src, true);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scattered_(self, dim, index, src, true);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scattered(self, dim, index, scalar_tensor(value, TensorOptions(self.dtype()).device(self.device())), false);
}
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scattered_(self, dim, index, scalar_tensor(value, TensorOptions(self.dtype()).device(self.device())), false);
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  detail::check_tensor(self, "index_copy", "self");
  const int64_t d = detail::wrap_dim(dim, self.dim(), "index_copy");
  check_index_copy(self, d, index, source);
  return index_put(as_1d(self), along_dim(index, d), source).reshape(self.sizes());
}
Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t d = detail::wrap_dim(dim, self.dim(), "index_copy_");
  check_index_copy(self, d, index, source);
  if (self.dim() > 0) return index_put_(self, along_dim(index, d), source);
  Tensor flat = self.reshape({1});
  index_put_(flat, along_dim(index, d), source.reshape({-1}));
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  detail::check_tensor(self, "masked_scatter", "self");
  const Tensor values = masked_values(self, mask, source);
  const Shape shape = detail::broadcast_shapes(self.sizes(), mask.sizes());
  return index_put(self.expand(shape), {mask.expand(shape)}, values);
}
Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const Tensor values = masked_values(self, mask, source);
  return index_put_(self, {mask.expand(self.sizes())}, values);
}

}  // namespace graft
