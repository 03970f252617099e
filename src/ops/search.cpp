// Counting and searching, not differentiable (declared in src/ops/ops.yaml, the composite
// family): searchsorted and bucketize (a binary-search kernel), isin (sort, then search),
// bincount and histc (index_add of ones), unique and unique_consecutive (sort, then mark where
// the value changes). bincount, histc without a range, and unique have data-dependent sizes, so
// they refuse the meta device, as PyTorch's do.
#include <cmath>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

// The dtype both operands are compared in: the promoted one, 16-bit floats widened to float32
// (exactly) for the kernel.
DType compare_dtype(const Tensor& a, const Tensor& b) {
  const DType dt = promote_types(a.dtype(), b.dtype());
  return dt == kFloat16 || dt == kBFloat16 ? kFloat32 : dt;
}

Tensor contiguous_as(const Tensor& t, DType dtype) {
  Tensor tmp;
  return detail::as_dtype(t, dtype, tmp).contiguous();
}

// The insertion points of values in sorted: one shared lane (sorted 1-D) or one lane per row of
// values' leading dims (sorted [..., n], values [..., m]).
Tensor searched(const Tensor& sorted, const Tensor& values, bool right) {
  const DType dt = compare_dtype(sorted, values);
  if (dt == kBool) detail::kernel_not_implemented("searchsorted_out_cpu", kBool);
  const Tensor s = contiguous_as(sorted, dt), v = contiguous_as(values, dt);
  const bool shared = s.dim() <= 1;
  const int64_t n = s.dim() == 0 ? 1 : s.size(-1);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < s.dim(); ++d) rows *= s.size(d);
  const Tensor lanes = s.reshape({rows, n});
  const Tensor vals = shared ? v.reshape({1, v.numel()}) : v.reshape({rows, v.size(-1)});
  Tensor out = detail::new_empty(vals.sizes(), kInt64, values.device());
  kernel::search_sorted(out, lanes, vals, right);
  return out.reshape(values.sizes());
}

void refuse_meta(const Tensor& t, const char* aten_op) {
  if (!detail::has_data(t)) kernel::not_implemented_for(aten_op, t.device());
}

// [values, inverse, counts] of the elements of flat (1-D) in their order there, each run of
// equal elements (order its permutation of the original positions, or empty) kept once.
std::vector<Tensor> runs_of(const Tensor& flat, const Tensor& order, IntArrayRef shape, bool inverse, bool counts) {
  const TensorOptions longs = TensorOptions(kInt64).device(flat.device());
  const int64_t n = flat.numel();
  Tensor starts = ones({n}, TensorOptions(kBool).device(flat.device()));  // where a new value starts
  if (n > 1) starts.narrow(0, 1, n - 1).copy_(ne(flat.narrow(0, 1, n - 1), flat.narrow(0, 0, n - 1)));
  std::vector<Tensor> out{flat.masked_select(starts), empty({0}, longs), empty({0}, longs)};
  const Tensor group = sub(cumsum(starts, 0), 1);  // each element's value's position in out[0]
  if (inverse) {
    const Tensor positions = order.defined() ? zeros({n}, longs).scatter_add(0, order, group) : group;
    out[1] = positions.reshape(shape);
  }
  if (counts) out[2] = zeros({out[0].numel()}, longs).index_add(0, group, ones({n}, longs));
  return out;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  detail::check_tensor(sorted_sequence, "searchsorted", "sorted_sequence");
  detail::check_tensor(self, "searchsorted", "self");
  if (side) {
    GRAFT_CHECK(*side == "left" || *side == "right", RuntimeError,
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    GRAFT_CHECK(!right || *side == "right", RuntimeError,
                "torch.searchsorted(): side and right can't be set to opposites, got side of ", *side,
                " while right was True");
    right = *side == "right";
  }
  const bool one_lane = sorted_sequence.dim() == 1;
  bool leading_match = sorted_sequence.dim() == self.dim() && self.dim() > 0;
  for (int64_t d = 0; leading_match && d + 1 < self.dim(); ++d) leading_match = sorted_sequence.size(d) == self.size(d);
  GRAFT_CHECK(one_lane || leading_match, RuntimeError,
              "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
              "tensor and input value tensor must match, but we got boundaries tensor ",
              sorted_sequence.sizes(), " and input value tensor ", self.sizes());
  Tensor lanes = sorted_sequence;
  if (sorter.defined()) {
    GRAFT_CHECK(sorter.sizes().equals(sorted_sequence.sizes()), RuntimeError,
                "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
                sorted_sequence.sizes(), "and got sorter tensor ", sorter.sizes());
    lanes = sorted_sequence.gather(-1, sorter);
  }
  const Tensor out = searched(lanes, self, right);
  return out_int32 ? out.to(kInt32) : out;
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  detail::check_tensor(sorted_sequence, "searchsorted", "sorted_sequence");
  GRAFT_CHECK(sorted_sequence.dim() == 1, RuntimeError,
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we "
              "got boundaries tensor dim(",
              sorted_sequence.dim(), ") and input value's dim(0) numel(1)");
  const Tensor value = scalar_tensor(self, TensorOptions(detail::result_type(sorted_sequence, self)));
  return searchsorted(sorted_sequence, value, out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  detail::check_tensor(self, "bucketize", "self");
  GRAFT_CHECK(boundaries.dim() == 1, RuntimeError, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right);
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/, bool invert) {
  detail::check_tensor(elements, "isin", "elements");
  detail::check_tensor(test_elements, "isin", "test_elements");
  const DType dt = compare_dtype(elements, test_elements);
  const Tensor pool = std::get<0>(sort(contiguous_as(test_elements, dt).reshape({-1})));
  const Tensor values = contiguous_as(elements, dt);
  Tensor found = zeros(elements.sizes(), TensorOptions(kBool).device(elements.device()));
  if (pool.numel() > 0) {
    // NaN (sorted last, matching nothing) searched as +inf, after any real +inf: the search stays ordered
    const Tensor searchable = is_floating_point(dt) ? where(isnan(pool), INFINITY, pool) : pool;
    const Tensor at = clamp(searched(searchable, values, false), std::nullopt, Scalar(pool.numel() - 1));
    found = eq(pool.index_select(0, at.reshape({-1})).reshape(values.sizes()), values);
  }
  return invert ? logical_not(found) : found;
}

Tensor isin(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  detail::check_tensor(elements, "isin", "elements");
  return isin(
      elements,
      scalar_tensor(test_element, TensorOptions(detail::result_type(elements, test_element)).device(elements.device())),
      assume_unique, invert);
}

Tensor isin(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  detail::check_tensor(test_elements, "isin", "test_elements");
  return isin(
      scalar_tensor(element, TensorOptions(detail::result_type(test_elements, element)).device(test_elements.device())),
      test_elements, assume_unique, invert);
}

Tensor bincount(const Tensor& self, const Tensor& weights, int64_t minlength) {
  detail::check_tensor(self, "bincount", "self");
  if (!is_integral(self.dtype(), false)) detail::kernel_not_implemented("bincount_cpu", self.dtype());
  GRAFT_CHECK(minlength >= 0, RuntimeError, "minlength should be >= 0");
  GRAFT_CHECK(self.dim() == 1, RuntimeError, "bincount only supports 1-d non-negative integral inputs.");
  GRAFT_CHECK(!weights.defined() || (weights.dim() == 1 && weights.size(0) == self.size(0)), RuntimeError,
              "weights should be 1-d and have the same length as input");
  refuse_meta(self, "aten::bincount");
  const DType dt = !weights.defined() ? kInt64 : is_floating_point(weights.dtype()) ? weights.dtype() : kFloat64;
  int64_t length = minlength;
  if (self.numel() > 0) {
    GRAFT_CHECK(self.min().item<int64_t>() >= 0, RuntimeError,
                "bincount only supports 1-d non-negative integral inputs.");
    length = std::max(length, self.max().item<int64_t>() + 1);
  }
  const TensorOptions options = TensorOptions(dt).device(self.device());
  const Tensor added = weights.defined() ? weights.to(dt) : ones({self.numel()}, options);
  return zeros({length}, options).index_add(0, self.to(kInt64), added);
}

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  detail::check_tensor(self, "histc");
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented("histogram_cpu", self.dtype());
  GRAFT_CHECK(bins > 0, RuntimeError, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double lo = min.to_double(), hi = max.to_double();
  GRAFT_CHECK(lo <= hi, RuntimeError, "torch.histc: max must be larger than min");
  if (lo == hi && self.numel() > 0) {  // the data's own range
    refuse_meta(self, "aten::histc");
    lo = self.min().item<double>();
    hi = self.max().item<double>();
  }
  if (lo == hi) lo -= 1, hi += 1;
  GRAFT_CHECK(std::isfinite(lo) && std::isfinite(hi), RuntimeError, "torch.histc: range of [", lo, ", ", hi,
              "] is not finite");
  GRAFT_CHECK(lo < hi, RuntimeError, "torch.histc: max must be larger than min");
  // each element's bin by the edges PyTorch's linspace gives (an element on an edge goes right;
  // max falls in the last bin), so elements near an edge land where PyTorch's do
  const TensorOptions options = TensorOptions(self.dtype()).device(self.device());
  const Tensor edges = linspace(lo, hi, bins + 1, options);
  const Tensor x = self.reshape({-1});
  const Tensor inside = logical_and(ge(x, edges[0]), le(x, edges[bins]));
  const Tensor bin = clamp(sub(searched(edges, x, true), 1), Scalar(0), Scalar(bins - 1));
  const Tensor index = bin.masked_select(inside);
  return zeros({bins}, options).index_add(0, index, ones({index.numel()}, options));
}

std::vector<Tensor> unique(const Tensor& self, bool /*sorted*/, bool return_inverse, bool return_counts) {
  detail::check_tensor(self, "unique");
  refuse_meta(self, "aten::_unique2");
  const auto [values, order] = sort(self.reshape({-1}));
  return runs_of(values, order, self.sizes(), return_inverse, return_counts);
}

std::vector<Tensor> unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts) {
  detail::check_tensor(self, "unique_consecutive");
  refuse_meta(self, "aten::unique_consecutive");
  return runs_of(self.reshape({-1}), Tensor(), self.sizes(), return_inverse, return_counts);
}

}  // namespace graft
