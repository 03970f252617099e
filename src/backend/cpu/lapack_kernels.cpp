// The factorizations behind torch.linalg, from the LAPACK that ships with OpenBLAS (getrf,
// getrs, potrf, geqrf, orgqr, gesdd, syevd) and BLAS's trsm. Operands are batches of
// column-major matrices (kernels.h), factored one matrix after another; the workspaces are
// sized from geometry (backend/workspace.h), not queried, so the meta backend takes the same.
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "backend/workspace.h"
#include "graft/core/error.h"
#include "kernels.h"

// LAPACK's Fortran interface (OpenBLAS's LP64 build: 32-bit integers). Character arguments carry
// Fortran's hidden lengths at the end, which routines that do not read them ignore.
extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork,
             int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t, size_t);
}

namespace graft::cpu {
namespace {

// One overload per precision, so the kernels below are written once over scalar_t.
void getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
void getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
void getrs(char t, int n, int k, const float* a, const int* ipiv, float* b, int* info) {
  sgetrs_(&t, &n, &k, a, &n, ipiv, b, &n, info, 1);
}
void getrs(char t, int n, int k, const double* a, const int* ipiv, double* b, int* info) {
  dgetrs_(&t, &n, &k, a, &n, ipiv, b, &n, info, 1);
}
void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }
void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
void geqrf(int m, int n, float* a, float* tau, float* w, int lw, int* info) {
  sgeqrf_(&m, &n, a, &m, tau, w, &lw, info);
}
void geqrf(int m, int n, double* a, double* tau, double* w, int lw, int* info) {
  dgeqrf_(&m, &n, a, &m, tau, w, &lw, info);
}
void orgqr(int m, int n, int k, float* a, const float* tau, float* w, int lw, int* info) {
  sorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
void orgqr(int m, int n, int k, double* a, const double* tau, double* w, int lw, int* info) {
  dorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
struct SvdCall {
  char jobz;
  int m, n, ldu, ldvt, lwork;
  int* iwork;
};
void gesdd(const SvdCall& c, float* a, float* s, float* u, float* vt, float* w, int* info) {
  sgesdd_(&c.jobz, &c.m, &c.n, a, &c.m, s, u, &c.ldu, vt, &c.ldvt, w, &c.lwork, c.iwork, info, 1);
}
void gesdd(const SvdCall& c, double* a, double* s, double* u, double* vt, double* w, int* info) {
  dgesdd_(&c.jobz, &c.m, &c.n, a, &c.m, s, u, &c.ldu, vt, &c.ldvt, w, &c.lwork, c.iwork, info, 1);
}
void syevd(char jobz, char uplo, int n, float* a, float* w, float* work, int lw, int* iw, int liw, int* info) {
  ssyevd_(&jobz, &uplo, &n, a, &n, w, work, &lw, iw, &liw, info, 1, 1);
}
void syevd(char jobz, char uplo, int n, double* a, double* w, double* work, int lw, int* iw, int liw, int* info) {
  dsyevd_(&jobz, &uplo, &n, a, &n, w, work, &lw, iw, &liw, info, 1, 1);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const float* a, int lda, float* b) {
  cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0f, a, lda, b, m);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_DIAG diag, int m, int n, const double* a, int lda, double* b) {
  cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, m, n, 1.0, a, lda, b, m);
}

// The number of matrices of a batch (the product of every dim but the last two).
int64_t batch_of(const Tensor& t) {
  int64_t b = 1;
  for (int64_t d = 0; d + 2 < t.dim(); ++d) b *= t.size(d);
  return b;
}
int rows_of(const Tensor& t) { return static_cast<int>(t.size(-2)); }
int cols_of(const Tensor& t) { return static_cast<int>(t.size(-1)); }
template <typename T>
T* matrix(const Tensor& t, int64_t i) {
  return static_cast<T*>(t.data_ptr()) + i * t.size(-2) * t.size(-1);
}
int* int_at(const Tensor& t, int64_t i, int64_t per) { return static_cast<int*>(t.data_ptr()) + i * per; }

void check_lapack_dtype(const Tensor& t) {
  GRAFT_INTERNAL_ASSERT(t.dtype() == kFloat32 || t.dtype() == kFloat64, "LAPACK kernels take float32 or float64");
}

// Zeroes the triangle of the n x n column-major matrix a that the factor does not use.
template <typename T>
void zero_other_triangle(T* a, int n, bool upper) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (upper ? i > j : i < j) a[i + static_cast<int64_t>(j) * n] = T(0);
}

// The m x cols column-major identity (ones on the diagonal, zeros elsewhere).
template <typename T>
void set_identity(T* a, int m, int cols) {
  std::fill(a, a + static_cast<int64_t>(m) * cols, T(0));
  for (int d = 0; d < std::min(m, cols); ++d) a[d + static_cast<int64_t>(d) * m] = T(1);
}

}  // namespace

void lu_factor(const Tensor& lu, const Tensor& pivots, const Tensor& info) {
  check_lapack_dtype(lu);
  const int m = rows_of(lu), n = cols_of(lu), k = std::min(m, n);
  GRAFT_DISPATCH_FLOATING(lu.dtype(), "linalg_lu_factor", [&] {
    for (int64_t i = 0; i < batch_of(lu); ++i)
      getrf(m, n, matrix<scalar_t>(lu, i), int_at(pivots, i, k), int_at(info, i, 1));
  });
}

void lu_solve(const Tensor& b, const Tensor& lu, const Tensor& pivots, bool transpose) {
  check_lapack_dtype(b);
  const int n = rows_of(lu), k = cols_of(b);
  int info = 0;
  GRAFT_DISPATCH_FLOATING(b.dtype(), "linalg_lu_solve", [&] {
    for (int64_t i = 0; i < batch_of(b); ++i)
      getrs(transpose ? 'T' : 'N', n, k, matrix<scalar_t>(lu, i), int_at(pivots, i, n), matrix<scalar_t>(b, i), &info);
  });
}

void cholesky(const Tensor& a, const Tensor& info, bool upper) {
  check_lapack_dtype(a);
  const int n = rows_of(a);
  GRAFT_DISPATCH_FLOATING(a.dtype(), "linalg_cholesky", [&] {
    for (int64_t i = 0; i < batch_of(a); ++i) {
      potrf(upper ? 'U' : 'L', n, matrix<scalar_t>(a, i), int_at(info, i, 1));
      zero_other_triangle(matrix<scalar_t>(a, i), n, upper);
    }
  });
}

void triangular_solve(const Tensor& b, const Tensor& a, bool upper, bool left, bool unitriangular) {
  check_lapack_dtype(b);
  const int m = rows_of(b), n = cols_of(b), lda = std::max(rows_of(a), 1);
  if (m == 0 || n == 0) return;
  GRAFT_DISPATCH_FLOATING(b.dtype(), "linalg_solve_triangular", [&] {
    for (int64_t i = 0; i < batch_of(b); ++i)
      trsm(left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, unitriangular ? CblasUnit : CblasNonUnit, m,
           n, matrix<scalar_t>(a, i), lda, matrix<scalar_t>(b, i));
  });
}

void qr(const Tensor& q, const Tensor& r, const Tensor& a) {
  check_lapack_dtype(a);
  const int m = rows_of(a), n = cols_of(a), k = std::min(m, n), r_rows = rows_of(r);
  const int q_cols = q.numel() > 0 ? cols_of(q) : 0;
  const backend::LapackWorkspace ws = backend::qr_workspace(m, n, q_cols);
  Tensor work = scratch({ws.work}, a.dtype());
  int info = 0;
  GRAFT_DISPATCH_FLOATING(a.dtype(), "linalg_qr", [&] {
    scalar_t* tau = static_cast<scalar_t*>(work.data_ptr());
    scalar_t* w = tau + k;
    const int lw = static_cast<int>(ws.work - k);
    for (int64_t i = 0; i < batch_of(a); ++i) {
      scalar_t* x = matrix<scalar_t>(a, i);
      if (k > 0) geqrf(m, n, x, tau, w, lw, &info);
      scalar_t* ri = matrix<scalar_t>(r, i);
      for (int j = 0; j < n; ++j)  // R: the upper triangle of the first r_rows rows
        for (int row = 0; row < r_rows; ++row)
          ri[row + static_cast<int64_t>(j) * r_rows] = row <= j ? x[row + static_cast<int64_t>(j) * m] : scalar_t(0);
      if (q_cols == 0) continue;
      scalar_t* qi = matrix<scalar_t>(q, i);
      std::memcpy(qi, x, sizeof(scalar_t) * static_cast<size_t>(m) * static_cast<size_t>(std::min(n, q_cols)));
      if (k > 0)
        orgqr(m, q_cols, k, qi, tau, w, lw, &info);
      else
        set_identity(qi, m, q_cols);  // no reflectors: Q = I
    }
  });
}

void svd(const Tensor& u, const Tensor& s, const Tensor& vh, const Tensor& a, const Tensor& info) {
  check_lapack_dtype(a);
  const int m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  const bool vectors = u.numel() > 0 || vh.numel() > 0;
  if (k == 0) return;
  const backend::LapackWorkspace ws = backend::svd_workspace(m, n, vectors);
  Tensor work = scratch({ws.work}, a.dtype()), iwork = scratch({ws.iwork}, kInt32);
  const bool full = vectors && cols_of(u) == m && rows_of(vh) == n;
  SvdCall call{
      vectors ? (full ? 'A' : 'S') : 'N', m, n, vectors ? m : 1, vectors ? rows_of(vh) : 1, static_cast<int>(ws.work),
      static_cast<int*>(iwork.data_ptr())};
  GRAFT_DISPATCH_FLOATING(a.dtype(), "linalg_svd", [&] {
    scalar_t none[1];
    for (int64_t i = 0; i < batch_of(a); ++i) {
      scalar_t* ui = vectors ? matrix<scalar_t>(u, i) : none;
      scalar_t* vi = vectors ? matrix<scalar_t>(vh, i) : none;
      gesdd(call, matrix<scalar_t>(a, i), static_cast<scalar_t*>(s.data_ptr()) + i * k, ui, vi,
            static_cast<scalar_t*>(work.data_ptr()), int_at(info, i, 1));
    }
  });
}

void eigh(const Tensor& w, const Tensor& v, const Tensor& info, bool upper, bool vectors) {
  check_lapack_dtype(v);
  const int n = rows_of(v);
  if (n == 0) return;
  const backend::LapackWorkspace ws = backend::eigh_workspace(n, vectors);
  Tensor work = scratch({ws.work}, v.dtype()), iwork = scratch({ws.iwork}, kInt32);
  GRAFT_DISPATCH_FLOATING(v.dtype(), "linalg_eigh", [&] {
    for (int64_t i = 0; i < batch_of(v); ++i)
      syevd(vectors ? 'V' : 'N', upper ? 'U' : 'L', n, matrix<scalar_t>(v, i),
            static_cast<scalar_t*>(w.data_ptr()) + i * n, static_cast<scalar_t*>(work.data_ptr()),
            static_cast<int>(ws.work), static_cast<int*>(iwork.data_ptr()), static_cast<int>(ws.iwork),
            int_at(info, i, 1));
  });
}

}  // namespace graft::cpu
