// Matrix multiply on the CPU: OpenBLAS for float32/float64, a plain loop for integers.
#include <cblas.h>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

// A 2-D operand BLAS can read directly: row-major with unit column stride, or transposed.
struct BlasView {
  Tensor t;  // possibly a contiguous copy
  bool trans;
  int64_t ld;
};

BlasView blas_view(const Tensor& m) {
  const int64_t r = m.dim() - 2;
  int64_t rows = m.size(r), cols = m.size(r + 1);
  int64_t rs = m.stride(r), cs = m.stride(r + 1);
  if (!backend::blas_needs_copy(m)) {  // the one decision the meta backend mirrors
    if (cs == 1 && (rs >= std::max<int64_t>(cols, 1) || rows == 1))
      return {m, false, std::max<int64_t>(rows == 1 ? cols : rs, 1)};
    return {m, true, std::max<int64_t>(cols == 1 ? rows : cs, 1)};
  }
  Tensor c = scratch(m.sizes(), m.dtype());
  copy(c, m);
  return {c, false, std::max<int64_t>(cols, 1)};
}

template <class T>
void gemm_loop(T* c, const T* a, const T* b, int64_t M, int64_t N, int64_t K, int64_t as0, int64_t as1, int64_t bs0,
               int64_t bs1, int64_t cs0) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += a[i * as0 + k * as1] * b[k * bs0 + j * bs1];
      c[i * cs0 + j] = acc;
    }
}

}  // namespace

void gemm(const Tensor& c, const Tensor& a, const Tensor& b) {
  // c: [B?, M, N] with unit column stride (rows and batches may be strided, e.g. a channel
  // slice of a convolution output); a: [B?, M, K]; b: [B?, K, N], any strides.
  const bool batched = c.dim() == 3;
  const int64_t B = batched ? c.size(0) : 1;
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  if (M == 0 || N == 0 || B == 0) return;
  if (K == 0) {
    fill(c, 0);
    return;
  }
  const DType dt = c.dtype();
  const int64_t ldc = M == 1 ? N : c.stride(-2);
  GRAFT_INTERNAL_ASSERT((c.stride(-1) == 1 || N == 1) && ldc >= N);
  const int64_t cbs = batched ? c.stride(0) : 0;
  const int64_t es = static_cast<int64_t>(element_size(dt));
  if (dt == kFloat32 || dt == kFloat64) {
    for (int64_t bi = 0; bi < B; ++bi) {
      Tensor ab = batched ? raw_select0(a, bi) : a;
      Tensor bb = batched ? raw_select0(b, bi) : b;
      BlasView va = blas_view(ab), vb = blas_view(bb);
      void* cp = static_cast<char*>(c.data_ptr()) + bi * cbs * es;
      auto ta = va.trans ? CblasTrans : CblasNoTrans;
      auto tb = vb.trans ? CblasTrans : CblasNoTrans;
      if (dt == kFloat32)
        cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, static_cast<const float*>(va.t.data_ptr()), va.ld,
                    static_cast<const float*>(vb.t.data_ptr()), vb.ld, 0.0f, static_cast<float*>(cp), ldc);
      else
        cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, static_cast<const double*>(va.t.data_ptr()), va.ld,
                    static_cast<const double*>(vb.t.data_ptr()), vb.ld, 0.0, static_cast<double*>(cp), ldc);
    }
    return;
  }
  GRAFT_DISPATCH_ALL(dt, "matmul", [&] {
    for (int64_t bi = 0; bi < B; ++bi) {
      Tensor ab = batched ? raw_select0(a, bi) : a;
      Tensor bb = batched ? raw_select0(b, bi) : b;
      gemm_loop<scalar_t>(static_cast<scalar_t*>(c.data_ptr()) + bi * cbs, static_cast<const scalar_t*>(ab.data_ptr()),
                          static_cast<const scalar_t*>(bb.data_ptr()), M, N, K, ab.stride(0), ab.stride(1),
                          bb.stride(0), bb.stride(1), ldc);
    }
  });
}

}  // namespace graft::cpu
