// The forwards of the indexing ops index_select, index_add, gather, scatter_add, masked_fill,
// flip and roll (declared in src/ops/ops.yaml, the function family: their graft:: functions and
// backward nodes are generated).
#include <algorithm>

#include "graft/ops/generated_forwards.h"
#include "ops/op_util.h"

namespace graft {
using detail::wrap_dim;

namespace {

Tensor check_index(const Tensor& index, const char* op, int64_t max_dim) {
  detail::check_tensor(index, op, "index");
  GRAFT_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32, TypeError, op,
              "(): Expected dtype int64 for index but got ", index.dtype());
  GRAFT_CHECK(index.dim() <= max_dim, IndexError, op, "(): Index is supposed to be a vector, got shape ",
              index.sizes());
  return detail::cast_nograd(index, kInt64).contiguous();
}
// PyTorch's texts: index_select/index_add raise IndexError "index out of range in self",
// gather/scatter RuntimeError naming the index, the dim and its size.
void check_range(const Tensor& idx, int64_t n, const char* op, int64_t dim = -1) {
  if (!detail::has_data(idx)) return;  // meta: no values to check
  const int64_t* p = static_cast<const int64_t*>(idx.data_ptr());
  if (dim < 0) {
    GRAFT_CHECK(n > 0 || idx.numel() == 0, RuntimeError, op, "(): self indexing axis dim should be positive");
    for (int64_t i = 0; i < idx.numel(); ++i)
      GRAFT_CHECK(p[i] >= 0 && p[i] < n, IndexError, "index out of range in self");
    return;
  }
  for (int64_t i = 0; i < idx.numel(); ++i)
    GRAFT_CHECK(p[i] >= 0 && p[i] < n, RuntimeError, "index ", p[i], " is out of bounds for dimension ", dim,
                " with size ", n);
}

// PyTorch's gather/scatter shape rules, with 0-d tensors treated as 1-d of size 1.
void check_gather_shapes(const Tensor& a, int64_t d, const Tensor& index, const Tensor* src, const char* op) {
  auto shape1 = [](const Tensor& t) { return t.dim() == 0 ? Shape{1} : t.sizes().shape(); };
  const Shape as = shape1(a), is = shape1(index);
  GRAFT_CHECK(is.size() == as.size(), RuntimeError, "Index tensor must have the same number of dimensions as ",
              src ? "self" : "input", " tensor (", op, ": index ", index.sizes(), ", ", src ? "self " : "input ",
              a.sizes(), ")");
  Shape ss;
  if (src) {
    ss = shape1(*src);
    GRAFT_CHECK(ss.size() == is.size(), RuntimeError,
                "Index tensor must have the same number of dimensions as src tensor (", op, ": index ", index.sizes(),
                ", src ", src->sizes(), ")");
  }
  if (index.numel() == 0) return;  // PyTorch checks no sizes of an empty index
  for (size_t k = 0; k < is.size(); ++k) {
    GRAFT_CHECK(static_cast<int64_t>(k) == d || is[k] <= as[k], RuntimeError, "Size does not match at dimension ", k,
                " expected index ", index.sizes(), " to be smaller than self ", a.sizes(), " apart from dimension ", d);
    if (src)
      GRAFT_CHECK(is[k] <= ss[k], RuntimeError, "Size does not match at dimension ", k, " expected index ",
                  index.sizes(), " to be smaller than src ", src->sizes());
  }
}

/// What each op here starts from: self (and `other`, the source, when given) checked, the
/// index checked and made int64, dim wrapped, in PyTorch's order of errors.
struct IndexArgs {
  Tensor index;
  int64_t d;
};
IndexArgs index_args(const char* op, const Tensor& self, int64_t dim, const Tensor& index_in, int64_t max_index_dim,
                     const Tensor* other = nullptr, const char* other_name = nullptr) {
  detail::check_tensor(self, op, other ? "self" : "input");
  if (other) detail::check_tensor(*other, op, other_name);
  Tensor index = check_index(index_in, op, max_index_dim);
  return {index, wrap_dim(dim, self.dim(), op)};
}

}  // namespace

Tensor detail::index_select_forward(const Tensor& a, int64_t dim, const Tensor& index_in) {
  auto [index, d] = index_args("index_select", a, dim, index_in, 1);
  Tensor src = a.dim() == 0 ? a.reshape({1}) : a;
  check_range(index, src.size(d), "index_select");
  Shape os = src.sizes().shape();
  os[d] = index.numel();
  Tensor out = detail::new_empty(os, a.dtype(), a.device());
  kernel::index_select(out, src, d, index.reshape({-1}));
  if (a.dim() == 0) out = kernel::raw_view(out, {}, {}, 0);
  return out;
}

Tensor detail::index_add_forward(const Tensor& a, int64_t dim, const Tensor& index_in, const Tensor& source) {
  auto [index, d] = index_args("index_add", a, dim, index_in, 1, &source, "source");
  Tensor self1 = a.dim() == 0 ? a.reshape({1}) : a;
  Tensor src1 = source.dim() == 0 ? source.reshape({1}) : source;
  GRAFT_CHECK(src1.dim() == self1.dim(), RuntimeError,
              "index_add_(): Source/destination tensor must have same slice shapes. "
              "Destination slice shape: ",
              self1.sizes(), " and source slice shape: ", src1.sizes());
  for (int64_t k = 0; k < self1.dim(); ++k)
    GRAFT_CHECK(k == d || self1.size(k) == src1.size(k), RuntimeError,
                "index_add_(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
                self1.sizes(), " and source slice shape: ", src1.sizes());
  GRAFT_CHECK(src1.size(d) == index.numel(), RuntimeError, "index_add_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", src1.size(d), ")");
  check_range(index, self1.size(d), "index_add");
  DType dt = a.dtype();
  Tensor out = detail::new_empty(self1.sizes(), dt, self1.device());
  kernel::copy(out, self1);
  kernel::index_add(out, d, index.reshape({-1}), detail::cast_nograd(src1, dt));
  if (a.dim() == 0) out = kernel::raw_view(out, {}, {}, 0);
  return out;
}

Tensor detail::gather_forward(const Tensor& a, int64_t dim, const Tensor& index_in) {
  auto [index, d] = index_args("gather", a, dim, index_in, 64);
  check_gather_shapes(a, d, index, nullptr, "gather");
  check_range(index, a.dim() ? a.size(d) : 1, "gather", d);
  Tensor out = detail::new_empty(index.sizes(), a.dtype(), a.device());
  kernel::gather(out, a, d, index);
  return out;
}

Tensor detail::scatter_add_forward(const Tensor& a, int64_t dim, const Tensor& index_in, const Tensor& src) {
  auto [index, d] = index_args("scatter_add", a, dim, index_in, 64, &src, "src");
  GRAFT_CHECK(src.dtype() == a.dtype(), RuntimeError, "scatter_add(): Expected self.dtype to be equal to src.dtype");
  check_gather_shapes(a, d, index, &src, "scatter_add");
  check_range(index, a.dim() ? a.size(d) : 1, "scatter_add", d);
  Tensor out = detail::new_empty(a.sizes(), a.dtype(), a.device());
  kernel::copy(out, a);
  kernel::scatter_add(out, d, index, src);
  return out;
}

Tensor detail::masked_fill_forward(const Tensor& a, const Tensor& mask, const Scalar& value, Tensor* into) {
  detail::check_tensor(a, "masked_fill", "self");
  detail::check_tensor(mask, "masked_fill", "mask");
  GRAFT_CHECK(mask.dtype() == kBool, RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  Shape s = detail::broadcast_shapes(a.sizes(), mask.sizes());
  detail::ElementwiseOutput out(into, s, a.dtype(), a.device(), {&a, &mask});
  Tensor v = detail::wrapped_scalar(value, a.dtype(), a.device());
  kernel::where(out.out(), mask, v, a);
  return out.result();
}

Tensor detail::masked_fill_forward(const Tensor& a, const Tensor& mask, const Tensor& value, Tensor* into) {
  detail::check_tensor(a, "masked_fill", "self");
  detail::check_tensor(mask, "masked_fill", "mask");
  detail::check_tensor(value, "masked_fill", "value");
  GRAFT_CHECK(value.dim() == 0, RuntimeError,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ", value.dim(),
              " dimension(s).");
  GRAFT_CHECK(mask.dtype() == kBool, RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  Shape s = detail::broadcast_shapes(a.sizes(), mask.sizes());
  detail::ElementwiseOutput out(into, s, a.dtype(), a.device(), {&a, &mask});
  Tensor v;  // the value in self's dtype on self's device (a 0-d CPU value goes with any device)
  kernel::where(out.out(), mask, detail::as_operand(value, a.dtype(), a.device(), v), a);
  return out.result();
}

// ---- flip and roll: copies of self with its elements moved (one pass through kernel::copy) ----
Tensor detail::flip_forward(const Tensor& self, IntArrayRef dims) {
  detail::check_tensor(self, "flip");
  const uint64_t mask = detail::dim_mask(dims, self.dim(), "flip");  // PyTorch's error for a repeated dim
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  if (self.numel() == 0) return out;
  // self read backwards along the flipped dims: a kernel-only view with negative strides
  Shape strides = self.strides().shape();
  int64_t offset = self.storage_offset();
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!dims.empty() && (mask >> d & 1)) {
      offset += (self.size(d) - 1) * strides[static_cast<size_t>(d)];
      strides[static_cast<size_t>(d)] = -strides[static_cast<size_t>(d)];
    }
  kernel::copy(out, kernel::raw_view(self, self.sizes(), strides, offset));
  return out;
}

namespace {
// The (dim, shift) pairs of a roll, each dim once (a repeated dim's shifts add up, as rolling it
// twice does), shifts in [0, size).
std::vector<std::pair<int64_t, int64_t>> roll_plan(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  GRAFT_CHECK(!shifts.empty(), RuntimeError, "`shifts` required");
  GRAFT_CHECK(shifts.size() == dims.size(), RuntimeError, "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  std::vector<std::pair<int64_t, int64_t>> plan;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = detail::wrap_dim(dims[i], self.dim(), "roll");
    auto it = std::find_if(plan.begin(), plan.end(), [d](const auto& p) { return p.first == d; });
    if (it == plan.end()) it = plan.insert(plan.end(), {d, 0});
    const int64_t n = self.dim() == 0 ? 1 : self.size(d);
    it->second = n == 0 ? 0 : ((it->second + shifts[i]) % n + n) % n;
  }
  return plan;
}
}  // namespace

Tensor detail::roll_forward(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  detail::check_tensor(self, "roll");
  if (dims.empty()) {  // flattened, rolled, given back its shape
    GRAFT_CHECK(shifts.size() == 1, RuntimeError, "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
    Tensor flat = detail::new_empty({self.numel()}, self.dtype(), self.device());
    kernel::copy(kernel::raw_view(flat, self.sizes(), contiguous_strides(self.sizes()), 0), self);
    return kernel::raw_view(roll_forward(flat, shifts, std::vector<int64_t>{0}), self.sizes(),
                            contiguous_strides(self.sizes()), 0);
  }
  const auto plan = roll_plan(self, shifts, dims);
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  if (self.numel() == 0 || self.dim() == 0) {
    kernel::copy(out, self);
    return out;
  }
  // each rolled dim splits into two blocks, [0, n - s) moving to [s, n) and [n - s, n) to [0, s):
  // 2^k block copies for k dims, every element written once
  for (uint64_t pick = 0; pick < (uint64_t{1} << plan.size()); ++pick) {
    Shape sizes = self.sizes().shape();
    int64_t from = self.storage_offset(), to = 0;
    for (size_t i = 0; i < plan.size(); ++i) {
      const auto [d, s] = plan[i];
      const int64_t n = self.size(d);
      const bool wrapped = pick >> i & 1;  // the block [n - s, n) that wraps to the front
      sizes[static_cast<size_t>(d)] = wrapped ? s : n - s;
      from += (wrapped ? n - s : 0) * self.stride(d);
      to += (wrapped ? 0 : s) * out.stride(d);
    }
    if (compute_numel(sizes) == 0) continue;
    kernel::copy(kernel::raw_view(out, sizes, out.strides(), to), kernel::raw_view(self, sizes, self.strides(), from));
  }
  return out;
}

}  // namespace graft
