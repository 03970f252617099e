// Indexing CPU kernels: index_select, index_add, gather, scatter_add. Indices were
// range-checked by the ops layer.
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

// Iterates over every position of `shape` except `dim`, calling f(offset_a, offset_b, ...)
// where each offset is computed with the matching strides (in elements).
template <int K, class F>
void for_each_except(IntArrayRef shape, int64_t dim, const std::array<IntArrayRef, K>& strides, F f) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t total = 1;
  for (int64_t d = 0; d < nd; ++d)
    if (d != dim) total *= shape[d];
  if (total == 0) return;
  std::vector<int64_t> idx(nd, 0);
  std::array<int64_t, K> off{};
  for (int64_t n = 0; n < total; ++n) {
    f(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (d == dim) continue;
      ++idx[d];
      for (int k = 0; k < K; ++k) off[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (int k = 0; k < K; ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

// The elements of a tensor along one dim through one position: line[i] is the i-th.
template <class T>
struct StridedLine {
  T* data;
  int64_t stride;
  T& operator[](int64_t i) const { return data[i * stride]; }
};

// gather's and scatter_add's walk: for every entry of `index`, calls f(out_line, other_line, j,
// k) with the lines along dim of out (T) and other (const T) through the entry's position, j the
// entry's position along dim and k its value.
template <class T, class F>
void for_each_index_entry(const Tensor& out, const Tensor& other, const Tensor& index, int64_t dim, F f) {
  T* o = static_cast<T*>(out.data_ptr());
  const T* x = static_cast<const T*>(other.data_ptr());
  const int64_t* ix = static_cast<const int64_t*>(index.data_ptr());
  const int64_t L = index.dim() ? index.size(dim) : 1;
  auto stride_along = [dim](const Tensor& t) { return t.dim() ? t.stride(dim) : 0; };
  const int64_t ost = stride_along(out), xst = stride_along(other), ist = stride_along(index);
  for_each_except<3>(index.sizes(), index.dim() ? dim : -1, {out.strides(), other.strides(), index.strides()},
                     [&](const std::array<int64_t, 3>& off) {
                       const StridedLine<T> out_line{o + off[0], ost};
                       const StridedLine<const T> other_line{x + off[1], xst};
                       for (int64_t j = 0; j < L; ++j) f(out_line, other_line, j, ix[off[2] + j * ist]);
                     });
}

}  // namespace

void index_select(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index) {
  const int64_t n = index.numel();
  const int64_t* ix = static_cast<const int64_t*>(index.data_ptr());
  const int64_t ist = index.dim() ? index.stride(0) : 1;
  for (int64_t i = 0; i < n; ++i) {
    Tensor src = select_raw(a, dim, ix[i * ist]);
    Tensor dst = select_raw(out, dim, i);
    copy(dst, src);
  }
}

void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t n = index.numel();
  const int64_t* ix = static_cast<const int64_t*>(index.data_ptr());
  const int64_t ist = index.dim() ? index.stride(0) : 1;
  for (int64_t i = 0; i < n; ++i) {
    Tensor dst = select_raw(out, dim, ix[i * ist]);
    Tensor src = source.dim() ? select_raw(source, dim, i) : source;
    cpu::binary(BinaryOp::Add, dst, dst, src);
  }
}

void gather(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index) {
  GRAFT_DISPATCH_ALL(a.dtype(), "gather", [&] {
    for_each_index_entry<scalar_t>(out, a, index, dim,
                                   [](auto out_line, auto a_line, int64_t j, int64_t k) { out_line[j] = a_line[k]; });
  });
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  GRAFT_DISPATCH_ALL(out.dtype(), "scatter_add", [&] {
    using T = scalar_t;
    for_each_index_entry<T>(out, src, index, dim, [](auto out_line, auto src_line, int64_t j, int64_t k) {
      T& dst = out_line[k];
      if constexpr (std::is_same_v<T, bool>)
        dst = dst || src_line[j];
      else
        dst = static_cast<T>(dst + src_line[j]);
    });
  });
}

}  // namespace graft::cpu
