// Advanced indexing: index (x[i, :, j]), index_put (x[i, :, j] = v), nonzero, masked_select.
// An index list is first resolved into an IndexPlan (indexing.h): masks become the int64
// columns of their nonzero(), indices are range-checked and wrapped, and the result layout is
// fixed by NumPy's rule (adjacent indexed dims are replaced in place, separated ones go first).
// The kernels then walk the broadcast index shape and, for each of its positions, the box of
// non-indexed dims.
#include "indexing.h"

#include <sstream>

#include "graft/ops/derivatives.h"
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
using detail::IndexPlan;

namespace {

bool present(const std::optional<Tensor>& e) { return e.has_value() && e->defined(); }

int64_t numel_of(IntArrayRef s) {
  int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

// Strides of t for the plan's work dims (0 for inserted unit dims).
Shape work_strides(const Tensor& t, const IndexPlan& p) {
  Shape ws(p.work_sizes.size(), 0);
  for (size_t w = 0; w < ws.size(); ++w)
    if (p.self_dim[w] >= 0) ws[w] = t.strides()[p.self_dim[w]];
  return ws;
}

// For each position of the broadcast index shape (row-major): the source offset selected by
// the index values (through `ws`) and the offset in a second tensor with strides `bstrides`
// over the broadcast dims.
void broadcast_offsets(const IndexPlan& p, IntArrayRef ws, IntArrayRef bstrides, std::vector<int64_t>& src_off,
                       std::vector<int64_t>& other_off) {
  const int64_t nb = numel_of(p.bshape);
  const size_t K = p.adv.size();
  const int64_t nd = static_cast<int64_t>(p.bshape.size());
  src_off.assign(static_cast<size_t>(nb), 0);
  other_off.assign(static_cast<size_t>(nb), 0);
  if (nb == 0) return;
  std::vector<std::vector<int64_t>> ist(K, std::vector<int64_t>(static_cast<size_t>(nd), 0));
  std::vector<const int64_t*> ip(K);
  for (size_t k = 0; k < K; ++k) {
    const Tensor& t = p.idx[k];
    const int64_t lead = nd - t.dim();
    for (int64_t d = 0; d < t.dim(); ++d) ist[k][lead + d] = t.size(d) == 1 ? 0 : t.stride(d);
    ip[k] = t.data_ptr<int64_t>();
  }
  std::vector<int64_t> ctr(static_cast<size_t>(nd), 0), ipos(K, 0);
  int64_t opos = 0;
  for (int64_t n = 0; n < nb; ++n) {
    int64_t s = 0;
    for (size_t k = 0; k < K; ++k) s += ip[k][ipos[k]] * ws[p.adv[k]];
    src_off[n] = s;
    other_off[n] = opos;
    for (int64_t d = nd - 1; d >= 0; --d) {
      ++ctr[d];
      for (size_t k = 0; k < K; ++k) ipos[k] += ist[k][d];
      opos += bstrides[d];
      if (ctr[d] < p.bshape[d]) break;
      for (size_t k = 0; k < K; ++k) ipos[k] -= ist[k][d] * p.bshape[d];
      opos -= bstrides[d] * p.bshape[d];
      ctr[d] = 0;
    }
  }
}

// Calls f(a, b) for every position of the box `sizes`, with offsets a0 + sum i*sa and
// b0 + sum i*sb (the non-indexed dims of the two tensors).
template <class F>
void walk_box(IntArrayRef sizes, IntArrayRef sa, IntArrayRef sb, std::vector<int64_t>& ctr, int64_t a0, int64_t b0,
              F& f) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (nd == 0) {
    f(a0, b0);
    return;
  }
  const int64_t inner = sizes[nd - 1], ia = sa[nd - 1], ib = sb[nd - 1];
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - 1; ++d) outer *= sizes[d];
  if (inner == 0 || outer == 0) return;
  std::fill(ctr.begin(), ctr.end(), 0);
  int64_t pa = a0, pb = b0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) f(pa + i * ia, pb + i * ib);
    for (int64_t d = nd - 2; d >= 0; --d) {
      ++ctr[d];
      pa += sa[d];
      pb += sb[d];
      if (ctr[d] < sizes[d]) break;
      pa -= sa[d] * sizes[d];
      pb -= sb[d] * sizes[d];
      ctr[d] = 0;
    }
  }
}

// Calls f(work_offset, other_offset) for every element of the indexed result: work_offset in
// the indexed tensor (work strides `ws`, the index values applied), other_offset in a tensor of
// the result's shape with strides `other_strides` (the output of index, the values of index_put).
template <class F>
void for_each_indexed_element(const IndexPlan& p, IntArrayRef ws, IntArrayRef other_strides, F f) {
  Shape ob, rs, rsa, rsb;
  for (auto d : p.out_bpos) ob.push_back(other_strides[d]);
  for (size_t i = 0; i < p.rest.size(); ++i) {
    rs.push_back(p.work_sizes[p.rest[i]]);
    rsa.push_back(ws[p.rest[i]]);
    rsb.push_back(other_strides[p.out_rpos[i]]);
  }
  std::vector<int64_t> woff, ooff, ctr(rs.size());
  broadcast_offsets(p, ws, ob, woff, ooff);
  for (size_t n = 0; n < woff.size(); ++n) walk_box(rs, rsa, rsb, ctr, woff[n], ooff[n], f);
}

[[noreturn]] void dim_out_of_range(int64_t d, int64_t ndim) {
  throw IndexError(detail::str("Dimension out of range (expected to be in range of [", -ndim, ", ", ndim - 1,
                               "], but got ", d, ")"));
}

// A fresh int64 copy of an integer index with negative values wrapped; `ordinal` (the index's
// position among the index tensors) names it in the out-of-range message, as PyTorch does.
Tensor wrapped_index(const Tensor& ix, int64_t size, int64_t ordinal) {
  Tensor c = detail::cast_nograd(ix, kInt64).contiguous();
  GRAFT_CHECK(size > 0 || c.numel() == 0, IndexError, "index is out of bounds for dimension with size 0");
  if (!detail::has_data(c)) return c.clone();  // meta: no values to check or wrap
  Tensor out = detail::new_empty(c.sizes(), kInt64, c.device());
  const int64_t* src = c.data_ptr<int64_t>();
  int64_t* dst = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    int64_t v = src[i];
    GRAFT_CHECK(v >= -size && v < size, IndexError, "index ", v, " is out of bounds for dimension ", ordinal,
                " with size ", size);
    dst[i] = v < 0 ? v + size : v;
  }
  return out;
}

}  // namespace

namespace detail {

IndexPlan plan_index(IntArrayRef sizes, const std::vector<std::optional<Tensor>>& indices) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  int64_t consumed = 0;  // entries that take up a dim of self (all but 0-dim bools)
  for (auto& e : indices) {
    if (present(e)) {
      const DType t = e->dtype();
      GRAFT_CHECK(t == kInt64 || t == kInt32 || t == kBool, IndexError,
                  "tensors used as indices must be long, int, byte or bool tensors");
      if (t == kBool && e->dim() == 0) continue;
    }
    ++consumed;
  }
  GRAFT_CHECK(consumed <= ndim, IndexError, "too many indices for tensor of dimension ", ndim, " (got ", consumed, ")");

  IndexPlan p;
  std::vector<Tensor> raw;      // per work dim: the index before range checks (undefined = ':')
  std::vector<bool> from_mask;  // per work dim: a column of a mask's nonzero() (already in range)
  auto add_dim = [&](int64_t size, int64_t self_dim, Tensor ix, bool masked) {
    p.work_sizes.push_back(size);
    p.self_dim.push_back(self_dim);
    raw.push_back(std::move(ix));
    from_mask.push_back(masked);
  };
  int64_t pos = 0;  // next dim of self
  for (auto& e : indices) {
    if (present(e) && e->dtype() == kBool && e->dim() == 0) {
      // NumPy's x[True] / x[False]: a new dim of size 1, taken once or not at all
      Tensor ix = new_empty({e->item<bool>() ? 1 : 0}, kInt64, e->device());
      if (ix.numel()) ix.data_ptr<int64_t>()[0] = 0;
      add_dim(1, -1, ix, true);
      continue;
    }
    if (pos >= ndim) dim_out_of_range(pos, ndim);
    if (!present(e)) {
      add_dim(sizes[pos], pos, Tensor(), false);
      ++pos;
      continue;
    }
    const Tensor& ix = *e;
    if (ix.dtype() != kBool) {
      add_dim(sizes[pos], pos, ix, false);
      ++pos;
      continue;
    }
    for (int64_t j = 0; j < ix.dim(); ++j) {
      if (pos + j >= ndim) dim_out_of_range(pos + j, ndim);
      GRAFT_CHECK(ix.size(j) == sizes[pos + j], IndexError, "The shape of the mask ", ix.sizes(), " at index ", j,
                  " does not match the shape of the indexed tensor ", sizes, " at index ", pos + j);
    }
    Tensor nz = nonzero(ix);
    for (int64_t j = 0; j < ix.dim(); ++j) {
      Tensor col = new_empty({nz.size(0)}, kInt64, nz.device());
      kernel::copy(col, kernel::select_raw(nz, 1, j));
      add_dim(sizes[pos + j], pos + j, col, true);
    }
    pos += ix.dim();
  }
  for (; pos < ndim; ++pos) add_dim(sizes[pos], pos, Tensor(), false);

  // broadcast the index tensors together
  bool ok = true;
  for (size_t w = 0; w < raw.size(); ++w) {
    if (!raw[w].defined()) continue;
    IntArrayRef s = raw[w].sizes();
    const size_t n = std::max(p.bshape.size(), s.size());
    Shape b(n, 1);
    for (size_t i = 0; i < n; ++i) {
      int64_t x = i < p.bshape.size() ? p.bshape[p.bshape.size() - 1 - i] : 1;
      int64_t y = i < s.size() ? s[s.size() - 1 - i] : 1;
      ok = ok && (x == y || x == 1 || y == 1);
      b[n - 1 - i] = x == 1 ? y : x;
    }
    p.bshape = b;
  }
  if (!ok) {
    std::ostringstream shapes;
    bool first = true;
    for (auto& t : raw)
      if (t.defined()) {
        shapes << (first ? "" : ", ") << t.sizes();
        first = false;
      }
    throw IndexError(
        str("shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes.str()));
  }

  int64_t ordinal = 0;
  for (size_t w = 0; w < raw.size(); ++w) {
    if (raw[w].defined()) {
      p.adv.push_back(static_cast<int64_t>(w));
      p.idx.push_back(from_mask[w] ? raw[w] : wrapped_index(raw[w], p.work_sizes[w], ordinal));
      if (p.self_dim[w] >= 0) ++ordinal;
    } else {
      p.rest.push_back(static_cast<int64_t>(w));
    }
  }

  // NumPy's layout rule
  const bool adjacent = p.adv.empty() || p.adv.back() - p.adv.front() + 1 == static_cast<int64_t>(p.adv.size());
  const int64_t first = p.adv.empty() ? 0 : p.adv.front();
  auto put_bshape = [&] {
    for (auto s : p.bshape) {
      p.out_bpos.push_back(static_cast<int64_t>(p.out_sizes.size()));
      p.out_sizes.push_back(s);
    }
  };
  if (!adjacent) put_bshape();
  bool placed = !adjacent;
  for (auto w : p.rest) {
    if (!placed && w > first) {
      put_bshape();
      placed = true;
    }
    p.out_rpos.push_back(static_cast<int64_t>(p.out_sizes.size()));
    p.out_sizes.push_back(p.work_sizes[w]);
  }
  if (!placed) put_bshape();
  return p;
}

void check_index_put_values(const Tensor& self, const IndexPlan& p, const Tensor& values) {
  GRAFT_CHECK(values.dtype() == self.dtype(), RuntimeError,
              "Index put requires the source and destination dtypes match, got ", scalar_type_name(self.dtype()),
              " for the destination and ", scalar_type_name(values.dtype()), " for the source.");
  const int64_t nd = static_cast<int64_t>(p.out_sizes.size());
  bool ok = values.dim() <= nd;
  for (int64_t i = 1; ok && i <= values.dim(); ++i) {
    const int64_t v = values.sizes()[values.dim() - i];
    ok = v == 1 || v == p.out_sizes[nd - i];
  }
  GRAFT_CHECK(ok, RuntimeError, "shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", IntArrayRef(p.out_sizes));
}

void index_gather(const Tensor& out, const Tensor& src, const IndexPlan& p) {
  if (out.numel() == 0 || !detail::has_data(out)) return;  // meta: nothing to move
  GRAFT_DISPATCH_ALL_AND_REDUCED(src.dtype(), "index", [&] {
    using T = scalar_t;
    T* o = static_cast<T*>(out.data_ptr());
    const T* s = static_cast<const T*>(src.data_ptr());
    for_each_indexed_element(p, work_strides(src, p), out.strides(), [&](int64_t a, int64_t b) { o[b] = s[a]; });
  });
}

void index_scatter(const Tensor& dst, const IndexPlan& p, const Tensor& values, bool accumulate) {
  if (numel_of(p.out_sizes) == 0 || !detail::has_data(dst)) return;  // meta: nothing to move
  const Shape ws = work_strides(dst, p);
  // values' strides broadcast to the indexed shape
  const int64_t nd = static_cast<int64_t>(p.out_sizes.size());
  Shape vst(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < values.dim(); ++i) vst[nd - values.dim() + i] = values.size(i) == 1 ? 0 : values.stride(i);
  GRAFT_DISPATCH_ALL_AND_REDUCED(dst.dtype(), "index_put", [&] {
    using T = scalar_t;
    T* d = static_cast<T*>(dst.data_ptr());
    const T* v = static_cast<const T*>(values.data_ptr());
    if (accumulate)
      for_each_indexed_element(p, ws, vst, [&](int64_t a, int64_t b) { d[a] = static_cast<T>(d[a] + v[b]); });
    else
      for_each_indexed_element(p, ws, vst, [&](int64_t a, int64_t b) { d[a] = v[b]; });
  });
}

Tensor index_put_planned(const Tensor& self, const IndexPlan& p, const Tensor& values, bool accumulate) {
  Tensor out = new_empty(self.sizes(), self.dtype(), self.device());
  kernel::copy(out, self);
  index_scatter(out, p, values, accumulate);
  return out;
}

}  // namespace detail

Tensor detail::index_forward(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  detail::check_tensor(self, "index", "self");
  IndexPlan p = detail::plan_index(self.sizes(), indices);
  Tensor out = detail::new_empty(p.out_sizes, self.dtype(), self.device());
  detail::index_gather(out, self, p);
  return out;
}

Tensor detail::index_put_forward(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                                 const Tensor& values, bool accumulate, Tensor* into) {
  detail::check_tensor(self, "index_put", "self");
  detail::check_tensor(values, "index_put", "values");
  IndexPlan p = detail::plan_index(self.sizes(), indices);
  detail::check_index_put_values(self, p, values);
  if (!into) return detail::index_put_planned(self, p, values, accumulate);
  detail::check_written(*into, {&values});  // only the indexed elements are written
  detail::index_scatter(*into, p, values, accumulate);
  return *into;
}

Tensor derivatives::index_backward(const Tensor& grad, IntArrayRef self_sizes,
                                   const std::vector<std::optional<Tensor>>& indices) {
  return index_put(zeros(self_sizes, TensorOptions(grad.dtype()).device(grad.device())), indices, grad,
                   /*accumulate=*/true);
}

Tensor derivatives::index_put_self_backward(const Tensor& grad, const std::vector<std::optional<Tensor>>& indices,
                                            bool accumulate) {
  if (accumulate) return grad;
  return index_put(grad, indices, zeros({}, TensorOptions(grad.dtype()).device(grad.device())));
}

Tensor nonzero(const Tensor& a) {
  alloc::MemoryOpScope mem_scope("nonzero");
  detail::check_tensor(a, "nonzero");
  if (!detail::has_data(a)) kernel::not_implemented_for("aten::nonzero", a.device());  // data-dependent size
  Tensor flags;
  {
    NoGradGuard ng;
    flags = (a.dtype() == kBool ? a : ne(a, 0)).contiguous();
  }
  const bool* f = flags.data_ptr<bool>();
  const int64_t n = flags.numel(), nd = a.dim();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += f[i] ? 1 : 0;
  Tensor out = detail::new_empty({count, nd}, kInt64, a.device());
  int64_t* o = out.data_ptr<int64_t>();
  std::vector<int64_t> ctr(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (f[i]) {
      std::copy(ctr.begin(), ctr.end(), o);
      o += nd;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++ctr[d] < a.size(d)) break;
      ctr[d] = 0;
    }
  }
  return out;
}

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  detail::check_tensor(self, "nonzero_numpy");
  if (self.dim() == 0) return nonzero_numpy(self.reshape({1}));  // a 0-d self as 1-D, as NumPy's
  const Tensor indices = nonzero(self);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < self.dim(); ++d) out.push_back(indices.select(1, d));
  return out;
}
std::vector<Tensor> where(const Tensor& condition) { return nonzero_numpy(condition); }

Tensor detail::masked_select_forward(const Tensor& a, const Tensor& mask) {
  detail::check_tensor(a, "masked_select", "self");
  detail::check_tensor(mask, "masked_select", "mask");
  GRAFT_CHECK(mask.dtype() == kBool, RuntimeError, "masked_select: expected BoolTensor for mask");
  const Shape bs = detail::broadcast_shapes(a.sizes(), mask.sizes());
  Tensor m = mask.sizes().equals(bs) ? mask : mask.expand(bs);
  Tensor src = a;
  if (!a.sizes().equals(bs)) {  // a read-only broadcast view, without autograd
    Shape st(bs.size(), 0);
    const int64_t lead = static_cast<int64_t>(bs.size()) - a.dim();
    for (int64_t i = 0; i < a.dim(); ++i) st[lead + i] = a.size(i) == 1 ? 0 : a.stride(i);
    src = kernel::raw_view(a, bs, st, a.storage_offset());
  }
  IndexPlan p = detail::plan_index(bs, {m});
  Tensor out = detail::new_empty(p.out_sizes, a.dtype(), a.device());
  detail::index_gather(out, src, p);
  return out;
}

}  // namespace graft
