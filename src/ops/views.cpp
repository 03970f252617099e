// View ops (share storage): the geometries of the views declared in src/ops/ops.yaml (view,
// transpose, t, permute, expand, squeeze, unsqueeze, select, slice, diagonal) and their gradients'
// helpers, and the geometries of the views of several outputs (split, split_with_sizes, unbind);
// the composites over them (reshape, flatten, narrow, chunk), as_strided's geometry and
// gradient; plus the copies that go with them: the forwards of cat, stack, clone, repeat and
// to_copy, contiguous, as_strided_scatter. No autograd: graft::<name> (generated in the autograd
// layer) makes each view and records its node.
#include <algorithm>
#include <numeric>
#include "graft/core/checked_math.h"

#include "graft/ops/derivatives.h"
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
using detail::wrap_dim;

namespace {

using Geometry = detail::ViewGeometry;
Geometry geom_of(const Tensor& t) { return {t.sizes().shape(), t.strides().shape(), t.storage_offset()}; }
Geometry contiguous_geom(IntArrayRef sizes) { return {sizes.shape(), contiguous_strides(sizes), 0}; }

Geometry slice_geom(Geometry g, int64_t dim, int64_t start, int64_t len, int64_t step) {
  g.offset += start * g.strides[dim];
  g.sizes[dim] = len;
  g.strides[dim] *= step;
  return g;
}
// The offset-th diagonal of the matrices in dims d1 and d2 (wrapped, distinct), as a last dim.
Geometry diagonal_geom(Geometry g, int64_t offset, int64_t d1, int64_t d2) {
  const int64_t n1 = g.sizes[d1], n2 = g.sizes[d2];
  const int64_t length = std::max<int64_t>(offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2), 0);
  if (length > 0) g.offset += offset >= 0 ? offset * g.strides[d2] : -offset * g.strides[d1];
  const int64_t stride = g.strides[d1] + g.strides[d2];
  for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    g.sizes.erase(g.sizes.begin() + d);
    g.strides.erase(g.strides.begin() + d);
  }
  g.sizes.push_back(length);
  g.strides.push_back(stride);
  return g;
}
Geometry select_geom(Geometry g, int64_t dim, int64_t index) {
  g.offset += index * g.strides[dim];
  g.sizes.erase(g.sizes.begin() + dim);
  g.strides.erase(g.strides.begin() + dim);
  return g;
}

// True when some element of the strided window may be reached twice (conservative).
bool may_overlap(const Geometry& w) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of dims with size > 1
  for (size_t i = 0; i < w.sizes.size(); ++i) {
    if (w.sizes[i] == 0) return false;
    if (w.sizes[i] > 1) dims.emplace_back(w.strides[i], w.sizes[i]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 1;  // 1 + the largest offset reached by the dims so far
  for (auto [st, sz] : dims) {
    if (st < reach) return true;
    reach += (sz - 1) * st;
  }
  return false;
}
// The storage positions of the elements of the window, in row-major order (int64, 1-D).
Tensor positions(const Geometry& w, Device device) {
  Tensor pos = full({}, w.offset, TensorOptions(kInt64).device(device));
  for (size_t i = 0; i < w.sizes.size(); ++i) {
    Shape s(w.sizes.size(), 1);
    s[i] = w.sizes[i];
    pos = pos + (arange(0, w.sizes[i], 1, TensorOptions(device)) * w.strides[i]).reshape(s);
  }
  return pos.reshape({-1});
}
// PyTorch's computeStride: strides for viewing `a` as `sizes` without copying, if possible.
std::optional<Shape> view_strides(const Tensor& a, IntArrayRef sizes) {
  Shape out(sizes.size(), 0);
  if (a.numel() == 0) return a.sizes().equals(sizes) ? a.strides().shape() : contiguous_strides(sizes);
  if (a.dim() == 0) return Shape(sizes.size(), 1);  // a 0-d tensor views as any all-ones shape
  int64_t view_d = static_cast<int64_t>(sizes.size()) - 1;
  int64_t chunk_base_stride = a.dim() ? a.strides().back() : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = a.dim() - 1; td >= 0; --td) {
    tensor_numel *= a.size(td);
    if (td == 0 || (a.size(td - 1) != 1 && a.stride(td - 1) != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (td > 0) {
        chunk_base_stride = a.stride(td - 1);
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Shape infer_size(IntArrayRef sizes, int64_t numel) {  // PyTorch's texts (no op name: view and reshape alike)
  Shape out = sizes.shape();
  int64_t infer = -1, prod = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      GRAFT_CHECK(infer < 0, RuntimeError, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      GRAFT_CHECK(out[i] >= 0, RuntimeError, "invalid shape dimension ", out[i]);
      GRAFT_CHECK(!__builtin_mul_overflow(prod, out[i], &prod), RuntimeError, "shape '", sizes,
                  "' is invalid for input of size ", numel);
    }
  }
  if (infer >= 0) {
    GRAFT_CHECK(prod != 0 || numel != 0, RuntimeError, "cannot reshape tensor of 0 elements into shape ", sizes,
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    GRAFT_CHECK(prod != 0 && numel % prod == 0, RuntimeError, "shape '", sizes, "' is invalid for input of size ",
                numel);
    out[infer] = numel / prod;
  } else {
    GRAFT_CHECK(prod == numel, RuntimeError, "shape '", sizes, "' is invalid for input of size ", numel);
  }
  return out;
}

// The window of a select or slice in a contiguous frame of `sizes`: where the gradient goes.
Tensor window_backward(const Tensor& grad, IntArrayRef sizes, const Geometry& window) {
  return as_strided_scatter(zeros(sizes, TensorOptions(grad.dtype()).device(grad.device())), grad, window.sizes,
                            window.strides, window.offset);
}

// slice's [start, end) along a dim of n elements, PyTorch's clamping of negative and
// out-of-range bounds, and its length with `step`.
struct SliceBounds {
  int64_t start, length;
};
SliceBounds slice_bounds(int64_t n, std::optional<int64_t> start_o, std::optional<int64_t> end_o, int64_t step) {
  int64_t start = start_o.value_or(0), end = end_o.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  return {start, (end - start + step - 1) / step};
}

}  // namespace

// ---- the view ops' geometries (src/ops/ops.yaml's function family, view: true) ----
Geometry detail::view_geometry(const Tensor& self, IntArrayRef size) {
  detail::check_tensor(self, "view");
  Shape sizes = infer_size(size, self.numel());
  auto strides = view_strides(self, sizes);
  GRAFT_CHECK(strides.has_value(), RuntimeError, "view",
              ": view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return {std::move(sizes), std::move(*strides), self.storage_offset()};
}

Geometry detail::alias_geometry(const Tensor& self) {
  detail::check_tensor(self, "alias");
  return geom_of(self);
}

Geometry detail::transpose_geometry(const Tensor& self, int64_t dim0, int64_t dim1) {
  detail::check_tensor(self, "transpose");
  const int64_t a0 = wrap_dim(dim0, self.dim(), "transpose"), a1 = wrap_dim(dim1, self.dim(), "transpose");
  Geometry g = geom_of(self);
  if (self.dim() > 0) {
    std::swap(g.sizes[a0], g.sizes[a1]);
    std::swap(g.strides[a0], g.strides[a1]);
  }
  return g;
}

Geometry detail::t_geometry(const Tensor& self) {
  detail::check_tensor(self, "t");
  GRAFT_CHECK(self.dim() <= 2, RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(),
              "D");
  return self.dim() < 2 ? geom_of(self) : transpose_geometry(self, 0, 1);
}

Geometry detail::permute_geometry(const Tensor& self, IntArrayRef dims) {
  detail::check_tensor(self, "permute");
  GRAFT_CHECK(static_cast<int64_t>(dims.size()) == self.dim(), RuntimeError,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
              "ordering of dimensions i.e. input.dim() = ",
              self.dim(), " is not equal to len(dims) = ", dims.size());
  Geometry g;
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], self.dim(), "permute");
    GRAFT_CHECK(!seen[d], RuntimeError, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    g.sizes.push_back(self.size(d));
    g.strides.push_back(self.stride(d));
  }
  g.offset = self.storage_offset();
  return g;
}

Geometry detail::expand_geometry(const Tensor& self, IntArrayRef size, bool /*implicit: tracing's mark*/) {
  detail::check_tensor(self, "expand");
  GRAFT_CHECK(static_cast<int64_t>(size.size()) >= self.dim(), RuntimeError, "expand(", self.toString(), "{",
              self.sizes(), "}, size=", size, "): the number of sizes provided (", size.size(),
              ") must be greater or equal to the number of dimensions in the tensor (", self.dim(), ")");
  Geometry g;
  g.offset = self.storage_offset();
  const int64_t lead = static_cast<int64_t>(size.size()) - self.dim();
  for (int64_t i = 0; i < static_cast<int64_t>(size.size()); ++i) {
    const int64_t td = i - lead;
    int64_t want = size[i];
    if (td < 0) {
      GRAFT_CHECK(want >= 0, RuntimeError, "expand: the expanded size of the tensor (", want,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      g.sizes.push_back(want);
      g.strides.push_back(0);
      continue;
    }
    const int64_t have = self.size(td);
    if (want == -1) want = have;
    GRAFT_CHECK(have == want || have == 1, RuntimeError, "The expanded size of the tensor (", want,
                ") must match the existing size (", have, ") at non-singleton dimension ", i, ".  Target sizes: ", size,
                ".  Tensor sizes: ", self.sizes());
    g.sizes.push_back(want);
    g.strides.push_back(have == want ? self.stride(td) : 0);
  }
  return g;
}

namespace {
Geometry squeezed(const Tensor& self, std::optional<int64_t> dim) {
  detail::check_tensor(self, "squeeze");
  Geometry g;
  g.offset = self.storage_offset();
  const int64_t wd = dim ? wrap_dim(*dim, self.dim(), "squeeze") : -1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) == 1 && (!dim || d == wd)) continue;
    g.sizes.push_back(self.size(d));
    g.strides.push_back(self.stride(d));
  }
  return g;
}
}  // namespace
Geometry detail::squeeze_geometry(const Tensor& self) { return squeezed(self, std::nullopt); }
Geometry detail::squeeze_geometry(const Tensor& self, int64_t dim) { return squeezed(self, dim); }
Geometry detail::squeeze_geometry(const Tensor& self, IntArrayRef dim) {
  detail::check_tensor(self, "squeeze");
  // the dims named (each once; none when the list is empty) whose size is 1
  const uint64_t mask = dim.empty() ? 0 : detail::dim_mask(dim, self.dim(), "squeeze");
  Geometry g;
  g.offset = self.storage_offset();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) == 1 && (mask >> d & 1)) continue;
    g.sizes.push_back(self.size(d));
    g.strides.push_back(self.stride(d));
  }
  return g;
}

Geometry detail::unsqueeze_geometry(const Tensor& self, int64_t dim) {
  detail::check_tensor(self, "unsqueeze");
  const int64_t w = wrap_dim(dim, self.dim() + 1, "unsqueeze");
  Geometry g = geom_of(self);
  const int64_t stride = w < self.dim() ? self.stride(w) * self.size(w) : 1;
  g.sizes.insert(g.sizes.begin() + w, 1);
  g.strides.insert(g.strides.begin() + w, stride);
  return g;
}

Geometry detail::select_geometry(const Tensor& self, int64_t dim, int64_t index) {
  detail::check_tensor(self, "select");
  GRAFT_CHECK(self.dim() > 0, IndexError, "select() cannot be applied to a 0-dim tensor.");
  const int64_t w = wrap_dim(dim, self.dim(), "select");
  const int64_t n = self.size(w);
  GRAFT_CHECK(index >= -n && index < n, IndexError, "select(): index ", index, " out of range for tensor of size ",
              self.sizes(), " at dimension ", w);
  return select_geom(geom_of(self), w, index < 0 ? index + n : index);
}

Geometry detail::diagonal_geometry(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  detail::check_tensor(self, "diagonal");
  const int64_t d1 = wrap_dim(dim1, self.dim(), "diagonal"), d2 = wrap_dim(dim2, self.dim(), "diagonal");
  GRAFT_CHECK(d1 != d2, RuntimeError, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  return diagonal_geom(geom_of(self), offset, d1, d2);
}

Geometry detail::slice_geometry(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                                std::optional<int64_t> end, int64_t step) {
  detail::check_tensor(self, "slice");
  GRAFT_CHECK(self.dim() > 0, IndexError, "slice() cannot be applied to a 0-dim tensor.");
  const int64_t w = wrap_dim(dim, self.dim(), "slice");
  GRAFT_CHECK(step > 0, ValueError, "slice: step must be greater than zero, got ", step);
  const SliceBounds b = slice_bounds(self.size(w), start, end, step);
  return slice_geom(geom_of(self), w, b.start, b.length, step);
}

// ---- their gradients' helpers (include/graft/ops/derivatives.h) ----
Tensor derivatives::permute_backward(const Tensor& grad, IntArrayRef dims) {
  Shape inverse(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[wrap_dim(dims[i], static_cast<int64_t>(dims.size()), "permute")] = static_cast<int64_t>(i);
  return grad.permute(inverse);
}

Tensor derivatives::select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, int64_t index) {
  const int64_t w = wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "select");
  const int64_t i = index < 0 ? index + self_sizes[w] : index;
  return window_backward(grad, self_sizes, select_geom(contiguous_geom(self_sizes), w, i));
}

Tensor derivatives::slice_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim,
                                   std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  const int64_t w = wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "slice");
  const SliceBounds b = slice_bounds(self_sizes[w], start, end, step);
  return window_backward(grad, self_sizes, slice_geom(contiguous_geom(self_sizes), w, b.start, b.length, step));
}

Tensor derivatives::diagonal_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t offset, int64_t dim1,
                                      int64_t dim2) {
  const int64_t n = static_cast<int64_t>(self_sizes.size());
  return window_backward(
      grad, self_sizes,
      diagonal_geom(contiguous_geom(self_sizes), offset, wrap_dim(dim1, n, "diagonal"), wrap_dim(dim2, n, "diagonal")));
}

// ---- the composite views (src/ops/ops.yaml's composite family) ----
Tensor reshape(const Tensor& self, IntArrayRef shape) {
  detail::check_tensor(self, "reshape");
  Shape sizes = infer_size(shape, self.numel());
  if (view_strides(self, sizes)) return graft::view(self, sizes);
  return graft::view(graft::clone(self, MemoryFormat::Contiguous), sizes);
}

namespace {
// The geometry of view(dtype) for a different element size: the last dim (of stride 1) scaled
// by the ratio of the sizes, the other strides and the offset counted in the new elements.
Geometry retyped_geometry(const Tensor& self, DType dtype) {
  const auto from = static_cast<int64_t>(element_size(self.dtype())), to = static_cast<int64_t>(element_size(dtype));
  const std::string what = detail::str(" to view ", scalar_type_name(self.dtype()), " as ", scalar_type_name(dtype),
                                       " (different element sizes)");
  GRAFT_CHECK(self.dim() > 0, RuntimeError, "self.dim() cannot be 0", what);
  GRAFT_CHECK(self.stride(-1) == 1, RuntimeError, "self.stride(-1) must be 1", what, ", but got ", self.stride(-1));
  Geometry g{Shape(self.sizes().begin(), self.sizes().end()), Shape(self.strides().begin(), self.strides().end()),
             self.storage_offset()};
  if (to < from) {  // each element becomes from / to of the new ones
    for (int64_t d = 0; d + 1 < self.dim(); ++d) g.strides[d] *= from / to;
    g.sizes.back() *= from / to;
    g.offset *= from / to;
    return g;
  }
  const int64_t ratio = to / from;
  GRAFT_CHECK(g.sizes.back() % ratio == 0, RuntimeError, "self.size(-1) must be divisible by ", ratio, what,
              ", but got ", g.sizes.back());
  GRAFT_CHECK(g.offset % ratio == 0, RuntimeError, "self.storage_offset() must be divisible by ", ratio, what,
              ", but got ", g.offset);
  for (int64_t d = 0; d + 1 < self.dim(); ++d) {
    GRAFT_CHECK(g.strides[d] % ratio == 0, RuntimeError, "self.stride(", d, ") must be divisible by ", ratio, what,
                ", but got ", g.strides[d]);
    g.strides[d] /= ratio;
  }
  g.sizes.back() /= ratio;
  g.offset /= ratio;
  return g;
}
}  // namespace

// view(dtype): an alias of self's storage (its version counter too), outside autograd
Tensor view(const Tensor& self, DType dtype) {
  detail::check_tensor(self, "view");
  const Geometry g = element_size(dtype) == element_size(self.dtype())
                         ? Geometry{Shape(self.sizes().begin(), self.sizes().end()),
                                    Shape(self.strides().begin(), self.strides().end()), self.storage_offset()}
                         : retyped_geometry(self, dtype);
  auto impl = make_intrusive<TensorImpl>(self.impl()->storage(), dtype, g.sizes, g.strides, g.offset);
  impl->set_own_version(self.impl()->own_version());
  impl->is_inference = self.impl()->is_inference;
  return Tensor(std::move(impl));
}

std::vector<Tensor> split(const Tensor& self, IntArrayRef split_size, int64_t dim) {
  return graft::split_with_sizes(self, split_size, dim);
}

Tensor Tensor::expand_as(const Tensor& o) const {
  detail::check_tensor(o, "expand_as", "other");
  return expand(o.sizes());
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  detail::check_tensor(self, "flatten");
  const int64_t s = wrap_dim(start_dim, self.dim(), "flatten"), e = wrap_dim(end_dim, self.dim(), "flatten");
  GRAFT_CHECK(s <= e, RuntimeError, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return graft::reshape(self, {1});
  if (s == e) return self;
  Shape out;
  for (int64_t d = 0; d < s; ++d) out.push_back(self.size(d));
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= self.size(d);
  out.push_back(merged);
  for (int64_t d = e + 1; d < self.dim(); ++d) out.push_back(self.size(d));
  return graft::reshape(self, out);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  detail::check_tensor(self, "narrow");
  GRAFT_CHECK(self.dim() > 0, RuntimeError, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t w = wrap_dim(dim, self.dim(), "narrow");
  const int64_t n = self.size(w);
  if (start < 0) start += n;
  GRAFT_CHECK(start >= 0 && start <= n, IndexError, "start out of range (expected to be in range of [", -n, ", ", n,
              "], but got ", start, ")");
  GRAFT_CHECK(length >= 0 && start + length <= n, RuntimeError, "start (", start, ") + length (", length,
              ") exceeds dimension size (", n, ").");
  return graft::slice(self, w, start, start + length, 1);
}

// ---- the views of several outputs (ops.yaml: view: true, returns: TensorList) ----
namespace {
std::vector<Geometry> pieces_along(const Tensor& self, IntArrayRef sizes, int64_t dim) {
  std::vector<Geometry> out;
  int64_t off = 0;
  for (int64_t size : sizes) {
    out.push_back(slice_geom(geom_of(self), dim, off, size, 1));
    off += size;
  }
  return out;
}
}  // namespace

std::vector<Geometry> detail::split_with_sizes_geometry(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  detail::check_tensor(self, "split_with_sizes");
  GRAFT_CHECK(self.dim() > 0, RuntimeError, "split expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  int64_t total = 0;
  for (auto s : split_sizes) {
    GRAFT_CHECK(
        s >= 0, RuntimeError,
        "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=", split_sizes);
    total += s;
  }
  GRAFT_CHECK(total == self.size(d), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to ",
              self.size(d), " (input tensor's size at dimension ", d, "), but got split_sizes=", split_sizes);
  return pieces_along(self, split_sizes, d);
}

std::vector<Geometry> detail::split_geometry(const Tensor& self, int64_t split_size, int64_t dim) {
  detail::check_tensor(self, "split");
  GRAFT_CHECK(self.dim() > 0, RuntimeError, "split expects at least a 1-dimensional tensor");
  GRAFT_CHECK(split_size >= 0, RuntimeError,
              "split expects split_size be non-negative, but got split_size=", split_size);
  const int64_t d = wrap_dim(dim, self.dim(), "split");
  return pieces_along(self, split_piece_sizes(self.size(d), split_size), d);
}

std::vector<Geometry> detail::unbind_geometry(const Tensor& self, int64_t dim) {
  detail::check_tensor(self, "unbind");
  GRAFT_CHECK(self.dim() > 0, IndexError, "Dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self.dim(), "unbind");
  std::vector<Geometry> out;
  for (int64_t i = 0; i < self.size(d); ++i) out.push_back(select_geom(geom_of(self), d, i));
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  detail::check_tensor(self, "chunk");
  GRAFT_CHECK(chunks > 0, RuntimeError, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  GRAFT_CHECK(self.dim() > 0, RuntimeError, "chunk expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, self.dim(), "chunk");
  const int64_t n = self.size(d);
  const int64_t split_size = (n + chunks - 1) / chunks;
  if (split_size == 0 && n == 0) return graft::split_with_sizes(self, std::vector<int64_t>(chunks, 0), d);
  return graft::split(self, split_size, d);
}

Geometry detail::as_strided_geometry(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                     std::optional<int64_t> storage_offset) {
  detail::check_tensor(self, "as_strided");
  GRAFT_CHECK(size.size() == stride.size(), RuntimeError, "mismatch in length of strides and shape");
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  GRAFT_CHECK(offset >= 0, RuntimeError, "as_strided: Negative storage offset ", offset);
  for (size_t i = 0; i < size.size(); ++i)
    GRAFT_CHECK(size[i] >= 0 && stride[i] >= 0, RuntimeError, "as_strided: negative size or stride");
  const int64_t extent = detail::storage_extent(size, stride, offset);
  const int64_t capacity = static_cast<int64_t>(self.impl()->storage()->nbytes() / self.element_size());
  GRAFT_CHECK(extent <= capacity, RuntimeError, "setStorage: sizes ", size, ", strides ", stride, ", storage offset ",
              offset, ", and itemsize ", self.element_size(), " requiring a storage size of ",
              extent * static_cast<int64_t>(self.element_size()), " are out of bounds for storage of size ",
              self.impl()->storage()->nbytes());
  return {size.shape(), stride.shape(), offset};
}

Tensor derivatives::as_strided_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef self_strides,
                                        int64_t self_offset, IntArrayRef size, IntArrayRef stride,
                                        std::optional<int64_t> storage_offset) {
  const TensorOptions o = TensorOptions(grad.dtype()).device(grad.device());
  if (compute_numel(self_sizes) == 0) return zeros(self_sizes, o);
  // The part of the storage both geometries reach, from `first`: the view's gradient is added
  // at its elements' places, then read back through self's geometry (PyTorch's
  // as_strided_backward).
  const int64_t out_offset = storage_offset.value_or(self_offset);
  const int64_t first = std::min(self_offset, out_offset);
  const int64_t end = std::max(detail::storage_extent(self_sizes, self_strides, self_offset),
                               detail::storage_extent(size, stride, out_offset));
  const Geometry out{size.shape(), stride.shape(), out_offset - first};
  const Geometry in{self_sizes.shape(), self_strides.shape(), self_offset - first};
  Tensor storage = zeros({end - first}, o);
  if (may_overlap(out))  // elements seen several times by the view accumulate their gradients
    storage = index_add(storage, 0, positions(out, grad.device()), grad.reshape({-1}));
  else
    storage = as_strided_scatter(storage, grad, out.sizes, out.strides, out.offset);
  if (may_overlap(in)) {  // self's elements sharing a place share its gradient (an expanded self)
    const Tensor at = positions(in, grad.device());
    const Tensor count = index_add(zeros({end - first}, o), 0, at, ones({at.numel()}, o));
    storage = storage / count.clamp(1);
  }
  return storage.as_strided(in.sizes, in.strides, in.offset);
}

Tensor detail::as_strided_scatter_forward(const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride,
                                          int64_t storage_offset) {
  detail::check_tensor(self, "as_strided_scatter", "self");
  detail::check_tensor(src, "as_strided_scatter", "src");
  GRAFT_CHECK(src.sizes().equals(size), RuntimeError,
              "as_strided_scatter: expected src to have a size equal to the "
              "slice of self. src size = ",
              src.sizes(), ", slice size = ", size);
  GRAFT_CHECK(size.size() == stride.size(), RuntimeError,
              "as_strided_scatter: mismatch in length of strides and shape");
  GRAFT_CHECK(storage_offset >= 0, RuntimeError, "as_strided_scatter: Negative storage offset ", storage_offset);
  for (size_t i = 0; i < size.size(); ++i)
    GRAFT_CHECK(stride[i] >= 0, RuntimeError, "as_strided_scatter: negative stride in ", stride);
  // an empty window touches nothing, wherever it starts
  const int64_t extent = detail::storage_extent(size, stride, storage_offset);
  GRAFT_CHECK(extent <= self.numel(), RuntimeError, "as_strided_scatter: the window (sizes ", size, ", strides ",
              stride, ", offset ", storage_offset, ") lies outside the ", self.numel(), " elements of self");
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  kernel::copy(out, self);
  kernel::copy(kernel::raw_view(out, size, stride, storage_offset), src);
  return out;
}

Tensor derivatives::as_strided_scatter_self_backward(const Tensor& grad, IntArrayRef size, IntArrayRef stride,
                                                     int64_t storage_offset) {
  return as_strided_scatter(grad, zeros(size, TensorOptions(grad.dtype()).device(grad.device())), size, stride,
                            storage_offset);
}

Tensor derivatives::as_strided_scatter_src_backward(const Tensor& grad, IntArrayRef size, IntArrayRef stride,
                                                    int64_t storage_offset) {
  const Tensor frame = grad.contiguous();  // the window lies in a contiguous frame of self
  return frame.as_strided(size, stride, frame.storage_offset() + storage_offset);
}

Tensor detail::repeat_forward(const Tensor& a, IntArrayRef repeats) {
  detail::check_tensor(a, "repeat");
  GRAFT_CHECK(static_cast<int64_t>(repeats.size()) >= a.dim(), RuntimeError,
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const int64_t nd = static_cast<int64_t>(repeats.size()), lead = nd - a.dim();
  Shape out_sizes, dst_sizes, src_sizes, src_strides;
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t s = i < lead ? 1 : a.size(i - lead), st = i < lead ? 0 : a.stride(i - lead);
    out_sizes.push_back(checked_mul(s, repeats[i]));
    if (repeats[i] != 1) {  // a broadcast (stride 0) source dim in front of each repeated dim
      dst_sizes.push_back(repeats[i]);
      src_sizes.push_back(1);
      src_strides.push_back(0);
    }
    dst_sizes.push_back(s);
    src_sizes.push_back(s);
    src_strides.push_back(st);
  }
  Tensor out = detail::new_empty(out_sizes, a.dtype(), a.device());
  if (out.numel() > 0)
    kernel::copy(kernel::raw_view(out, dst_sizes, contiguous_strides(dst_sizes), 0),
                 kernel::raw_view(a, src_sizes, src_strides, a.storage_offset()));
  return out;
}

// Whether self's strides are exactly row-major's: contiguous with every size at least 2 (a
// size-1 or empty dim's stride is free, and preserve_format keeps it as it is).
static bool row_major_strides(const Tensor& self) {
  if (!self.is_contiguous()) return false;
  for (int64_t s : self.sizes())
    if (s < 2) return false;
  return true;
}
// The strides of clone(self, format): a fresh layout for Contiguous or a channels-last format;
// for Preserve, self's own strides when self is dense, else dense strides in self's order.
static Shape clone_strides(const Tensor& self, MemoryFormat format) {
  if (format != MemoryFormat::Preserve) return strides_for_memory_format(self.sizes(), format);
  if (self.is_non_overlapping_and_dense()) return self.strides().shape();
  return infer_dense_strides(self.sizes(), self.strides());
}
Tensor detail::clone_forward(const Tensor& self, std::optional<MemoryFormat> memory_format) {
  detail::check_tensor(self, "clone");
  const MemoryFormat format = memory_format.value_or(MemoryFormat::Preserve);
  Tensor out;
  if (format == MemoryFormat::Contiguous || (format == MemoryFormat::Preserve && row_major_strides(self))) {
    out = detail::new_empty(self.sizes(), self.dtype(), self.device());  // the common case, first
  } else {
    const Shape strides = clone_strides(self, format);
    out = strides == contiguous_strides(self.sizes())
              ? detail::new_empty(self.sizes(), self.dtype(), self.device())
              : empty_strided(self.sizes(), strides, TensorOptions(self.dtype()).device(self.device()));
  }
  kernel::copy(out, self);
  return out;
}
Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  detail::check_tensor(self, "contiguous");
  if (memory_format == MemoryFormat::Contiguous ? self.is_contiguous() : self.is_contiguous(memory_format)) return self;
  GRAFT_CHECK(memory_format != MemoryFormat::Preserve, RuntimeError,
              "preserve memory format is unsupported by the contiguous operator");
  return clone(self, memory_format);
}

Tensor Tensor::to(DType dtype, bool copy) const {
  detail::check_tensor(*this, "to");
  return to(device(), dtype, copy);
}
Tensor Tensor::to(Device device, bool copy) const {
  detail::check_tensor(*this, "to");
  return to(device, dtype(), copy);
}
Tensor Tensor::to(Device device, DType dtype, bool copy) const {
  detail::check_tensor(*this, "to");
  if (device == this->device() && dtype == this->dtype() && !copy) return *this;
  return graft::to_copy(*this, device, dtype);
}
Tensor detail::to_copy_forward(const Tensor& self, Device device, DType dtype) {
  detail::check_tensor(self, "to");
  check_device_available(device, "to");
  const bool same_device = device == self.device();
  // Between devices (this build has cpu -> meta, which copies no data) the result keeps the
  // sizes and, for a dense layout, the strides, as PyTorch's to() does; on one device, a
  // contiguous copy.
  GRAFT_CHECK(same_device || !self.device().is_meta(), NotImplementedError, "Cannot copy out of meta tensor; no data!");
  Tensor out;
  if (!same_device && !self.is_contiguous() && detail::storage_extent(self.sizes(), self.strides()) == self.numel() &&
      self.numel() > 0) {
    out = empty_strided(self.sizes(), self.strides(), TensorOptions(dtype).device(device));
  } else {
    out = detail::new_empty(self.sizes(), dtype, device);
  }
  kernel::copy(out, self);  // the destination's kernel: on meta, nothing to write
  return out;
}
Tensor Tensor::to(const Tensor& other, bool copy) const {
  detail::check_tensor(other, "to", "other");
  return to(other.device(), other.dtype(), copy);
}

namespace {
// cat's and stack's forward: the tensors copied into their places along dim (no autograd).
Tensor join(const TensorList& tensors, int64_t dim, bool is_stack) {
  const char* name = is_stack ? "stack" : "cat";
  GRAFT_CHECK(!tensors.empty(), RuntimeError,
              is_stack ? "stack expects a non-empty TensorList" : "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    GRAFT_CHECK(tensors[i].defined(), ValueError, name, "(): tensor ", i, " is undefined");
  // legacy behaviour: 1-D empty tensors are skipped by cat
  const Tensor* ref = nullptr;
  for (auto& t : tensors)
    if (is_stack || !(t.dim() == 1 && t.numel() == 0)) {
      ref = &t;
      break;
    }
  DType dt = tensors[0].dtype();
  for (auto& t : tensors) dt = promote_types(dt, t.dtype());
  if (!ref) return detail::new_empty({0}, dt, tensors[0].device());
  const int64_t nd = ref->dim() + (is_stack ? 1 : 0);
  GRAFT_CHECK(is_stack || ref->dim() > 0, RuntimeError,
              "zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t d = wrap_dim(dim, nd, name);
  Shape out_sizes = ref->sizes().shape();
  if (is_stack)
    out_sizes.insert(out_sizes.begin() + d, 0);
  else
    out_sizes[d] = 0;
  std::vector<int64_t> pieces;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!is_stack && t.dim() == 1 && t.numel() == 0) {
      pieces.push_back(0);
      continue;
    }
    if (is_stack) {
      GRAFT_CHECK(t.sizes().equals(ref->sizes()), RuntimeError, "stack expects each tensor to be equal size, but got ",
                  ref->sizes(), " at entry 0 and ", t.sizes(), " at entry ", i);
      pieces.push_back(1);
      out_sizes[d] += 1;
      continue;
    }
    GRAFT_CHECK(t.dim() == ref->dim(), RuntimeError, "Tensors must have same number of dimensions: got ", ref->dim(),
                " and ", t.dim());
    for (int64_t k = 0; k < t.dim(); ++k)
      GRAFT_CHECK(k == d || t.size(k) == ref->size(k), RuntimeError, "Sizes of tensors must match except in dimension ",
                  d, ". Expected size ", ref->size(k), " but got size ", t.size(k), " for tensor number ", i,
                  " in the list.");
    pieces.push_back(t.size(d));
    out_sizes[d] += t.size(d);
  }
  Tensor out = detail::new_empty(out_sizes, dt, ref->device());
  Geometry og = geom_of(out);
  int64_t off = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (pieces[i] == 0) continue;
    if (is_stack) {
      Geometry g = select_geom(og, d, off);
      kernel::copy(kernel::raw_view(out, g.sizes, g.strides, g.offset), tensors[i]);
    } else {
      Geometry g = slice_geom(og, d, off, pieces[i], 1);
      kernel::copy(kernel::raw_view(out, g.sizes, g.strides, g.offset), tensors[i]);
    }
    off += pieces[i];
  }
  return out;
}
}  // namespace
Tensor detail::cat_forward(const TensorList& tensors, int64_t dim) { return join(tensors, dim, false); }
Tensor detail::stack_forward(const TensorList& tensors, int64_t dim) { return join(tensors, dim, true); }

}  // namespace graft
