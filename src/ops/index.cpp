// Indexing ops: index_select, index_add, gather, scatter_add, masked_fill.
#include "node_util.h"

namespace graft {
using autograd::any_requires_grad;
using autograd::set_history;
using detail::make_node;
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

struct IndexSelectBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("IndexSelectBackward0", index)
  SavedVariable index;
  Shape in_sizes;
  int64_t dim = 0;
  TensorList apply(TensorList&& g) override {
    Tensor idx = index.unpack(this);
    Tensor gg = in_sizes.empty() ? g[0].reshape({1}) : g[0];
    Tensor z = zeros(in_sizes.empty() ? Shape{1} : in_sizes, TensorOptions(g[0].dtype()).device(g[0].device()));
    Tensor r = index_add(z, dim, idx.reshape({-1}), gg);
    return {in_sizes.empty() ? r.reshape({}) : r};
  }
};
struct IndexAddBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("IndexAddBackward0", index)
  SavedVariable index;
  int64_t dim = 0;
  Shape src_sizes;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = g[0];
    if (should_compute_output(1)) {
      Tensor gg = g[0].dim() == 0 ? g[0].reshape({1}) : g[0];
      r[1] = index_select(gg, dim, index.unpack(this)).reshape(src_sizes);
    }
    return r;
  }
};
struct GatherBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("GatherBackward0", index)
  SavedVariable index;
  Shape in_sizes;
  int64_t dim = 0;
  TensorList apply(TensorList&& g) override {
    return {
        scatter_add(zeros(in_sizes, TensorOptions(g[0].dtype()).device(g[0].device())), dim, index.unpack(this), g[0])};
  }
};
struct ScatterAddBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("ScatterAddBackward0", index)
  SavedVariable index;
  int64_t dim = 0;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = g[0];
    if (should_compute_output(1)) r[1] = gather(g[0], dim, index.unpack(this));
    return r;
  }
};
struct MaskedFillBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("MaskedFillBackward0", mask)
  SavedVariable mask;
  TensorList apply(TensorList&& g) override { return {masked_fill(g[0], mask.unpack(this), 0)}; }
};

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

/// Records Backward (IndexSelectBackward0 or GatherBackward0: the gradient scattered back
/// through `index` along `d` into a's sizes) as out's history when `a` requires grad.
template <class Backward>
Tensor with_index_history(const Tensor& out, const Tensor& a, const Tensor& index, int64_t d) {
  if (any_requires_grad({&a})) {
    auto n = make_node<Backward>({&a});
    n->index = SavedVariable(index, false);
    n->in_sizes = a.sizes().shape();
    n->dim = d;
    set_history(out, n);
  }
  return out;
}

}  // namespace

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index_in) {
  alloc::MemoryOpScope mem_scope("index_select");
  detail::check_tensor(a, "index_select");
  Tensor index = check_index(index_in, "index_select", 1);
  int64_t d = wrap_dim(dim, a.dim(), "index_select");
  Tensor src = a.dim() == 0 ? a.reshape({1}) : a;
  check_range(index, src.size(d), "index_select");
  Shape os = src.sizes().shape();
  os[d] = index.numel();
  Tensor out = detail::new_empty(os, a.dtype(), a.device());
  kernel::index_select(out, src, d, index.reshape({-1}));
  if (a.dim() == 0) out = kernel::raw_view(out, {}, {}, 0);
  return with_index_history<IndexSelectBackward0>(out, a, index, d);
}

Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index_in, const Tensor& source) {
  alloc::MemoryOpScope mem_scope("index_add");
  detail::check_tensor(a, "index_add", "self");
  detail::check_tensor(source, "index_add", "source");
  Tensor index = check_index(index_in, "index_add", 1);
  int64_t d = wrap_dim(dim, a.dim(), "index_add");
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
  if (any_requires_grad({&a, &source})) {
    auto n = make_node<IndexAddBackward0>({&a, &source});
    n->index = SavedVariable(index.reshape({-1}), false);
    n->dim = d;
    n->src_sizes = source.sizes().shape();
    set_history(out, n);
  }
  return out;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index_in) {
  alloc::MemoryOpScope mem_scope("gather");
  detail::check_tensor(a, "gather");
  Tensor index = check_index(index_in, "gather", 64);
  int64_t d = wrap_dim(dim, a.dim(), "gather");
  check_gather_shapes(a, d, index, nullptr, "gather");
  check_range(index, a.dim() ? a.size(d) : 1, "gather", d);
  Tensor out = detail::new_empty(index.sizes(), a.dtype(), a.device());
  kernel::gather(out, a, d, index);
  return with_index_history<GatherBackward0>(out, a, index, d);
}

Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index_in, const Tensor& src) {
  alloc::MemoryOpScope mem_scope("scatter_add");
  detail::check_tensor(a, "scatter_add", "self");
  detail::check_tensor(src, "scatter_add", "src");
  Tensor index = check_index(index_in, "scatter_add", 64);
  int64_t d = wrap_dim(dim, a.dim(), "scatter_add");
  GRAFT_CHECK(src.dtype() == a.dtype(), RuntimeError, "scatter_add(): Expected self.dtype to be equal to src.dtype");
  check_gather_shapes(a, d, index, &src, "scatter_add");
  check_range(index, a.dim() ? a.size(d) : 1, "scatter_add", d);
  Tensor out = detail::new_empty(a.sizes(), a.dtype(), a.device());
  kernel::copy(out, a);
  kernel::scatter_add(out, d, index, src);
  if (any_requires_grad({&a, &src})) {
    auto n = make_node<ScatterAddBackward0>({&a, &src});
    n->index = SavedVariable(index, false);
    n->dim = d;
    set_history(out, n);
  }
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  alloc::MemoryOpScope mem_scope("masked_fill");
  detail::check_tensor(a, "masked_fill", "self");
  detail::check_tensor(mask, "masked_fill", "mask");
  GRAFT_CHECK(mask.dtype() == kBool, RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  Shape s = detail::broadcast_shapes(a.sizes(), mask.sizes());
  Tensor out = detail::new_empty(s, a.dtype(), a.device());
  Tensor v = detail::wrapped_scalar(value, a.dtype(), a.device());
  kernel::where(out, mask, v, a);
  if (any_requires_grad({&a})) {
    auto n = make_node<MaskedFillBackward0>({&a});
    n->mask = SavedVariable(mask, false);
    set_history(out, n);
  }
  return out;
}

}  // namespace graft
