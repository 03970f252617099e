#pragma once
// Elementwise loops over strided, broadcast operands (a small TensorIterator). Fast path:
// every operand contiguous with the output's shape -> one flat loop the compiler vectorizes.
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "graft/core/tensor.h"

namespace graft::cpu {

constexpr int kMaxDims = 16;

/// Geometry of one elementwise loop: output shape and per-operand element strides, with
/// broadcast dims given stride 0 and adjacent dims coalesced.
template <int K>
struct LoopPlan {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[K][kMaxDims];  // in elements
  bool flat = true;              // all operands contiguous, no broadcast

  LoopPlan(IntArrayRef out_sizes, const std::array<const TensorImpl*, K>& ops) {
    ndim = static_cast<int>(out_sizes.size());
    GRAFT_CHECK(ndim <= kMaxDims, NotImplementedError, "graft supports at most ", kMaxDims, " dimensions");
    for (int d = 0; d < ndim; ++d) sizes[d] = out_sizes[d];
    for (int k = 0; k < K; ++k) {
      const TensorImpl* t = ops[k];
      int off = ndim - static_cast<int>(t->dim());
      if (!(t->is_contiguous() && off == 0 && t->sizes().equals(out_sizes))) flat = false;
      for (int d = 0; d < ndim; ++d) {
        int td = d - off;
        strides[k][d] = (td < 0 || t->sizes()[td] == 1) ? 0 : t->strides()[td];
      }
    }
    if (!flat) coalesce();
  }
  void coalesce() {
    // drop size-1 dims, then merge d into d+1 when every operand is "contiguous" across them
    int w = 0;
    for (int d = 0; d < ndim; ++d) {
      if (sizes[d] == 1) continue;
      sizes[w] = sizes[d];
      for (int k = 0; k < K; ++k) strides[k][w] = strides[k][d];
      ++w;
    }
    ndim = w;
    if (ndim == 0) return;
    int out = 0;
    for (int d = 1; d < ndim; ++d) {
      bool can = true;
      for (int k = 0; k < K; ++k)
        if (strides[k][out] != strides[k][d] * sizes[d]) {
          can = false;
          break;
        }
      if (can) {
        sizes[out] *= sizes[d];
        for (int k = 0; k < K; ++k) strides[k][out] = strides[k][d];
      } else {
        ++out;
        sizes[out] = sizes[d];
        for (int k = 0; k < K; ++k) strides[k][out] = strides[k][d];
      }
    }
    ndim = out + 1;
  }
};

/// Calls body(ptrs..., inner_size, inner_strides) over the outer dims of `plan`, where ptrs
/// are typed pointers to the first element of each row. Operand 0 is the output.
template <int K, class Body>
void for_each_row(const LoopPlan<K>& plan, std::array<char*, K> base, std::array<size_t, K> elsize, Body body) {
  if (plan.ndim == 0) {  // scalar output
    int64_t st[K] = {};
    body(base, int64_t{1}, st);
    return;
  }
  const int nd = plan.ndim;
  int64_t inner = plan.sizes[nd - 1];
  int64_t inner_st[K];
  for (int k = 0; k < K; ++k) inner_st[k] = plan.strides[k][nd - 1];
  int64_t counter[kMaxDims] = {};
  int64_t outer = 1;
  for (int d = 0; d < nd - 1; ++d) outer *= plan.sizes[d];
  if (inner == 0 || outer == 0) return;
  std::array<char*, K> p = base;
  for (int64_t o = 0; o < outer; ++o) {
    body(p, inner, inner_st);
    // advance the counter over dims nd-2 .. 0
    for (int d = nd - 2; d >= 0; --d) {
      ++counter[d];
      for (int k = 0; k < K; ++k) p[k] += plan.strides[k][d] * static_cast<int64_t>(elsize[k]);
      if (counter[d] < plan.sizes[d]) break;
      for (int k = 0; k < K; ++k) p[k] -= plan.strides[k][d] * plan.sizes[d] * static_cast<int64_t>(elsize[k]);
      counter[d] = 0;
    }
  }
}

/// out[i] = f(in0[i], in1[i], ...) with broadcasting. `out` must have the broadcast shape and
/// the dtype of Out; inputs must have the dtypes of In... .
template <class Out, class... In, class F>
void elementwise(const Tensor& out, F f, const std::conditional_t<true, Tensor, In>&... ins) {
  constexpr int K = sizeof...(In) + 1;
  std::array<const TensorImpl*, K> ops{out.impl(), ins.impl()...};
  LoopPlan<K> plan(out.sizes(), ops);
  std::array<char*, K> base{static_cast<char*>(out.data_ptr()), static_cast<char*>(ins.data_ptr())...};
  if (plan.flat) {
    Out* o = reinterpret_cast<Out*>(base[0]);
    const int64_t n = out.numel();
    [&]<size_t... I>(std::index_sequence<I...>) {
      std::tuple<const In*...> in{reinterpret_cast<const In*>(base[I + 1])...};
      for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(in)[i]...);
    }
    (std::index_sequence_for<In...>{});
    return;
  }
  std::array<size_t, K> es{sizeof(Out), sizeof(In)...};
  for_each_row<K>(plan, base, es, [&](const std::array<char*, K>& p, int64_t n, const int64_t* st) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      Out* o = reinterpret_cast<Out*>(p[0]);
      std::tuple<const In*...> in{reinterpret_cast<const In*>(p[I + 1])...};
      const int64_t so = st[0];
      if (so == 1 && ((st[I + 1] == 1) && ...)) {
        for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(in)[i]...);
      } else {
        for (int64_t i = 0; i < n; ++i) o[i * so] = f(std::get<I>(in)[i * st[I + 1]]...);
      }
    }
    (std::index_sequence_for<In...>{});
  });
}

}  // namespace graft::cpu
