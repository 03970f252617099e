// torch.linalg's factorizations and what is made of them: the forwards of linalg_det,
// linalg_slogdet, linalg_inv, linalg_solve, linalg_cholesky, linalg_solve_triangular, linalg_qr,
// _linalg_svd, _linalg_eigh and linalg_pinv (LAPACK kernels over column-major copies, PyTorch's
// layout for these results), and the composites det, slogdet, logdet, inverse, linalg_svd,
// linalg_svdvals, svd, linalg_eigh, linalg_eigvalsh, pinverse, linalg_matrix_rank,
// cholesky_solve and cholesky_inverse. Their derivatives: linalg_derivatives.cpp.
#include <limits>

#include "graft/core/grad_mode.h"
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

namespace {

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

// The batch dims of a batch of matrices (every dim but the last two).
Shape batch_sizes(const Tensor& t) { return IntArrayRef(t.sizes().data(), t.dim() - 2).shape(); }
Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}
Shape with_vector(Shape batch, int64_t n) {
  batch.push_back(n);
  return batch;
}

// A fresh batch of column-major matrices of `sizes` (its last two dims transposed are contiguous).
Tensor column_major_empty(IntArrayRef sizes, DType dtype, Device device) {
  Shape swapped = sizes.shape();
  std::swap(swapped[swapped.size() - 2], swapped[swapped.size() - 1]);
  Tensor t = detail::new_empty(swapped, dtype, device);
  Shape strides = t.strides().shape();
  std::swap(strides[strides.size() - 2], strides[strides.size() - 1]);
  return kernel::raw_view(t, sizes, strides, 0);
}
// A column-major copy of t's matrices (no autograd), which LAPACK may overwrite.
Tensor column_major_copy(const Tensor& t) {
  Tensor out = column_major_empty(t.sizes(), t.dtype(), t.device());
  kernel::copy(out, t);
  return out;
}
// LAPACK's info per matrix, zero for the matrices a kernel skips (empty ones).
Tensor info_for(const Tensor& a) {
  return zeros({compute_numel(batch_sizes(a))}, TensorOptions(kInt32).device(a.device()));
}

// PyTorch's argument checks of the linalg functions, with their texts.
void check_matrix(const Tensor& a, const char* api, const char* arg = "A") {
  detail::check_tensor(a, api, arg);
  GRAFT_CHECK(a.dim() >= 2, RuntimeError, api, ": The input tensor ", arg, " must have at least 2 dimensions.");
}
// Float32 and float64 only, refused as PyTorch 2.x refuses the rest (NotImplementedError): an
// integer or bool dtype with "<api>: Expected a floating point ...", a 16-bit float with the name
// of the CPU kernel that has none (`kernel`), or, without one, "Low precision dtypes not supported".
// With `kernel` and `any_dtype`, every other dtype gets the kernel's refusal.
void check_floating(const Tensor& a, const char* api, const char* kernel = nullptr, bool any_dtype = false) {
  if (a.dtype() == kFloat32 || a.dtype() == kFloat64) return;
  GRAFT_CHECK(!any_dtype, NotImplementedError, "\"", kernel, "\" not implemented for '", scalar_type_name(a.dtype()),
              "'");
  GRAFT_CHECK(is_floating_point(a.dtype()), NotImplementedError, api,
              ": Expected a floating point or complex tensor as input. Got ", scalar_type_name(a.dtype()));
  GRAFT_CHECK(!kernel, NotImplementedError, "\"", kernel, "\" not implemented for '", scalar_type_name(a.dtype()), "'");
  throw NotImplementedError(
      detail::str(api, ": Low precision dtypes not supported. Got ", scalar_type_name(a.dtype())));
}
void check_square(const Tensor& a, const char* api, const char* arg = "A") {
  check_matrix(a, api, arg);
  GRAFT_CHECK(a.size(-1) == a.size(-2), RuntimeError, api, ": ", arg,
              " must be batches of square matrices, but they are ", a.size(-2), " by ", a.size(-1), " matrices");
}

// Throws PyTorch's LinAlgError for the first matrix whose LAPACK info is positive; `describe`
// gives the text for that info. Nothing to read on meta.
template <class Describe>
void check_info(const Tensor& info, const Tensor& a, const char* api, Describe describe) {
  if (!detail::has_data(info)) return;
  const auto* p = static_cast<const int32_t*>(info.data_ptr());
  for (int64_t i = 0; i < info.numel(); ++i) {
    if (p[i] <= 0) continue;
    const std::string batch = a.dim() > 2 ? detail::str("(Batch element ", i, "): ") : std::string();
    throw LinAlgError(detail::str(api, ": ", batch, describe(p[i])));
  }
}

// A's LU factorization (getrf) in column-major LU and int32 pivots.
std::pair<Tensor, Tensor> lu_factor_of(const Tensor& a, Tensor& info) {
  Tensor lu = column_major_copy(a);
  Tensor pivots = detail::new_empty(with_vector(batch_sizes(a), std::min(a.size(-2), a.size(-1))), kInt32, a.device());
  info = info_for(a);
  kernel::lu_factor(lu, pivots, info);
  return {lu, pivots};
}

// (-1)^(the number of row swaps) of each LU factorization, in dtype.
Tensor permutation_sign(const Tensor& pivots, DType dtype) {
  const int64_t n = pivots.size(-1);
  Tensor positions = arange(1, n + 1, 1, TensorOptions(kInt32).device(pivots.device()));
  Tensor swaps = pivots.ne(positions).sum({-1}).remainder(2);
  return (1 - 2 * swaps).to(dtype);
}

// Whether b (of A's batch) holds vectors rather than matrices: PyTorch's rule for linalg.solve.
bool is_vector_rhs(const Tensor& a, const Tensor& b) {
  if (b.dim() == 1) return true;
  if (b.dim() != a.dim() - 1) return false;
  return IntArrayRef(b.sizes()).equals(IntArrayRef(a.sizes().data(), a.dim() - 1));
}

// a and b (matrices) expanded to their broadcast batch, after PyTorch's shape check of A X = B
// (left) or X A = B.
std::pair<Tensor, Tensor> broadcast_system(const Tensor& a, const Tensor& b, bool left, const char* api) {
  const int64_t n = a.size(-1);
  GRAFT_CHECK(left ? b.size(-2) == n : b.size(-1) == n, RuntimeError, api,
              ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (", a.size(-2), "x",
              a.size(-1), " and ", b.size(-2), "x", b.size(-1), ")");
  const Shape batch = detail::broadcast_shapes(batch_sizes(a), batch_sizes(b));
  return {a.expand(with_matrix(batch, n, n)), b.expand(with_matrix(batch, b.size(-2), b.size(-1)))};
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* api) {
  GRAFT_CHECK(a.dtype() == b.dtype(), RuntimeError, api,
              ": Expected A and B to have the same dtype, but found A of type ", scalar_type_name(a.dtype()),
              " and B of type ", scalar_type_name(b.dtype()), " instead");
}

// The tolerance of pinv and matrix_rank for singular values S (descending or not): max(atol,
// rtol * the largest), rtol's default eps * max(m, n) when atol is not given.
Tensor singular_cutoff(const Tensor& s, int64_t m, int64_t n, std::optional<double> atol, std::optional<double> rtol) {
  const double eps =
      s.dtype() == kFloat32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double r = rtol ? *rtol : atol && *atol > 0 ? 0.0 : eps * static_cast<double>(std::max(m, n));
  Tensor largest =
      s.size(-1) > 0 ? s.amax({-1}, true)
                     : zeros(with_vector(batch_sizes(s.unsqueeze(-1)), 1), TensorOptions(s.dtype()).device(s.device()));
  return largest.mul(r).clamp(atol.value_or(0.0));
}

}  // namespace

Tensor detail::linalg_det_forward(const Tensor& A) {
  check_square(A, "linalg.det");
  check_floating(A, "linalg.det", "lu_cpu");
  NoGradGuard values_only;
  Tensor info;
  auto [lu, pivots] = lu_factor_of(A, info);
  return lu.diagonal(0, -2, -1).prod(-1).mul(permutation_sign(pivots, A.dtype()));
}

std::pair<Tensor, Tensor> detail::linalg_slogdet_forward(const Tensor& A) {
  check_square(A, "linalg.slogdet");
  check_floating(A, "linalg.slogdet");
  NoGradGuard values_only;
  Tensor info;
  auto [lu, pivots] = lu_factor_of(A, info);
  Tensor d = lu.diagonal(0, -2, -1);
  Tensor sign = d.sign().prod(-1).mul(permutation_sign(pivots, A.dtype()));
  return {sign, d.abs().log().sum({-1})};
}

Tensor detail::linalg_inv_forward(const Tensor& A) {
  check_square(A, "linalg.inv");
  check_floating(A, "linalg.inv");
  NoGradGuard values_only;
  Tensor info;
  auto [lu, pivots] = lu_factor_of(A, info);
  check_info(info, A, "linalg.inv", [](int i) {
    return detail::str("The diagonal element ", i,
                       " is zero, the inversion could not be completed because the input matrix is singular.");
  });
  Tensor inverse =
      column_major_copy(eye(A.size(-1), std::nullopt, TensorOptions(A.dtype()).device(A.device())).expand(A.sizes()));
  kernel::lu_solve(inverse, lu, pivots, false);
  return inverse;
}

Tensor detail::linalg_solve_forward(const Tensor& A, const Tensor& B, bool left) {
  check_square(A, "linalg.solve");
  check_floating(A, "linalg.solve", "lu_cpu");
  detail::check_tensor(B, "linalg.solve", "B");
  check_same_dtype(A, B, "linalg.solve");
  const bool vector = is_vector_rhs(A, B);
  GRAFT_CHECK(left || !vector, RuntimeError,
              "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. In this case "
              "linalg.solve is equivalent to B / A.squeeze(-1)");
  NoGradGuard values_only;
  // X A = B is A^T X^T = B^T
  auto [a, b] = broadcast_system(left ? A : mT(A), vector ? B.unsqueeze(-1) : left ? B : mT(B), true, "linalg.solve");
  Tensor info;
  auto [lu, pivots] = lu_factor_of(a, info);
  check_info(info, a, "torch.linalg.solve",
             [](int) { return "The solver failed because the input matrix is singular."; });
  Tensor x = column_major_copy(b);
  kernel::lu_solve(x, lu, pivots, false);
  return vector ? x.squeeze(-1) : left ? x : mT(x);
}

Tensor detail::linalg_cholesky_forward(const Tensor& A, bool upper) {
  check_square(A, "linalg.cholesky");
  check_floating(A, "linalg.cholesky", "cholesky_cpu");
  Tensor factor = column_major_copy(A), info = info_for(A);
  kernel::cholesky(factor, info, upper);
  check_info(info, A, "linalg.cholesky", [](int i) {
    return detail::str(
        "The factorization could not be completed because the input is not positive-definite (the "
        "leading minor of order ",
        i, " is not positive-definite).");
  });
  return factor;
}

Tensor detail::linalg_solve_triangular_forward(const Tensor& A, const Tensor& B, bool upper, bool left,
                                               bool unitriangular) {
  check_square(A, "linalg.solve_triangular");
  check_matrix(B, "linalg.solve_triangular", "B");
  check_floating(A, "linalg.solve_triangular", "triangular_solve_cpu", true);
  NoGradGuard values_only;
  // B of another dtype is solved in A's (PyTorch 2.x's result); its gradient goes back in B's
  auto [a, b] = broadcast_system(A, B.to(A.dtype()), left, "linalg.solve_triangular");
  Tensor coefficients = column_major_copy(a), x = column_major_copy(b);
  kernel::triangular_solve(x, coefficients, upper, left, unitriangular);
  return x;
}

std::pair<Tensor, Tensor> detail::linalg_qr_forward(const Tensor& A, const std::string& mode) {
  check_matrix(A, "linalg.qr");
  GRAFT_CHECK(mode == "reduced" || mode == "complete" || mode == "r", RuntimeError, "qr received unrecognized mode '",
              mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_floating(A, "linalg.qr", "geqrf_cpu");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const Shape batch = batch_sizes(A);
  const int64_t rows = mode == "complete" ? m : k;
  Tensor q = mode == "r" ? detail::new_empty({0}, A.dtype(), A.device())
                         : column_major_empty(with_matrix(batch, m, rows), A.dtype(), A.device());
  Tensor r = column_major_empty(with_matrix(batch, rows, n), A.dtype(), A.device());
  kernel::qr(q, r, column_major_copy(A));
  return {q, r};
}

std::tuple<Tensor, Tensor, Tensor> detail::_linalg_svd_forward(const Tensor& A, bool full_matrices, bool compute_uv) {
  check_matrix(A, "linalg.svd");
  check_floating(A, "linalg.svd", "linalg_svd_cpu");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const Shape batch = batch_sizes(A);
  const auto empty = [&](IntArrayRef sizes) { return column_major_empty(sizes, A.dtype(), A.device()); };
  Tensor u =
      compute_uv ? empty(with_matrix(batch, m, full_matrices ? m : k)) : detail::new_empty({0}, A.dtype(), A.device());
  Tensor vh =
      compute_uv ? empty(with_matrix(batch, full_matrices ? n : k, n)) : detail::new_empty({0}, A.dtype(), A.device());
  Tensor s = detail::new_empty(with_vector(batch, k), A.dtype(), A.device()), info = info_for(A);
  if (k == 0 && compute_uv) {  // nothing to factor: the vectors are the identity's columns
    NoGradGuard values_only;
    kernel::copy(u, eye(u.size(-2), u.size(-1), TensorOptions(A.dtype()).device(A.device())).expand(u.sizes()));
    kernel::copy(vh, eye(vh.size(-2), vh.size(-1), TensorOptions(A.dtype()).device(A.device())).expand(vh.sizes()));
  }
  kernel::svd(u, s, vh, column_major_copy(A), info);
  check_info(info, A, "linalg.svd", [](int i) {
    return detail::str(
        "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
        "repeated singular values (error code: ",
        i, ").");
  });
  return {u, s, vh};
}

std::pair<Tensor, Tensor> detail::_linalg_eigh_forward(const Tensor& A, const std::string& UPLO, bool compute_v) {
  GRAFT_CHECK(UPLO == "L" || UPLO == "U" || UPLO == "l" || UPLO == "u", RuntimeError,
              "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  check_square(A, "linalg.eigh");
  check_floating(A, "linalg.eigh", "linalg_eigh_cpu", true);
  Tensor v = column_major_copy(A), info = info_for(A);
  Tensor w = detail::new_empty(with_vector(batch_sizes(A), A.size(-1)), A.dtype(), A.device());
  kernel::eigh(w, v, info, UPLO == "U" || UPLO == "u", compute_v);
  check_info(info, A, "linalg.eigh", [](int i) {
    return detail::str(
        "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
        "repeated eigenvalues (error code: ",
        i, ").");
  });
  return {w, compute_v ? v : detail::new_empty({0}, A.dtype(), A.device())};
}

Tensor detail::linalg_pinv_forward(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                                   bool hermitian) {
  detail::check_tensor(A, "linalg.pinv");
  GRAFT_CHECK(A.dim() >= 2 && (A.dtype() == kFloat32 || A.dtype() == kFloat64), RuntimeError, "linalg.pinv(",
              scalar_type_name(A.dtype()), "{", detail::shape_str(A.sizes()),
              "}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types");
  NoGradGuard values_only;
  const int64_t m = A.size(-2), n = A.size(-1);
  if (hermitian) {
    auto [w, v] = detail::_linalg_eigh_forward(A, "L", true);
    Tensor cutoff = singular_cutoff(w.abs(), m, n, atol, rtol);
    Tensor inverse_w = where(w.abs().gt(cutoff), w.reciprocal(), 0.0);
    return matmul(v.mul(inverse_w.unsqueeze(-2)), mT(v));
  }
  auto [u, s, vh] = detail::_linalg_svd_forward(A, false, true);
  Tensor inverse_s = where(s.gt(singular_cutoff(s, m, n, atol, rtol)), s.reciprocal(), 0.0);
  return matmul(mT(vh).mul(inverse_s.unsqueeze(-2)), mT(u));
}

// ---- composites: autograd comes from the ops they call ----

Tensor det(const Tensor& self) { return linalg_det(self); }
std::pair<Tensor, Tensor> slogdet(const Tensor& self) { return linalg_slogdet(self); }
Tensor inverse(const Tensor& self) { return linalg_inv(self); }

Tensor logdet(const Tensor& self) {
  check_square(self, "logdet");
  check_floating(self, "logdet");
  auto [sign, logabsdet] = linalg_slogdet(self);
  return where(sign.eq(-1), std::numeric_limits<double>::quiet_NaN(), logabsdet);
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  return _linalg_svd(A, full_matrices, true);
}

// The vectors only when a gradient may be asked of the values (which needs them), as PyTorch's.
Tensor linalg_svdvals(const Tensor& A) {
  return std::get<1>(_linalg_svd(A, false, A.requires_grad() && GradMode::is_enabled()));
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some, bool compute_uv) {
  if (compute_uv) {
    auto [u, s, vh] = _linalg_svd(self, !some, true);
    return {u, s, mT(vh)};
  }
  check_matrix(self, "linalg.svd");
  const Shape batch = batch_sizes(self);
  const TensorOptions options = TensorOptions(self.dtype()).device(self.device());
  return {zeros(with_matrix(batch, self.size(-2), self.size(-2)), options), linalg_svdvals(self),
          zeros(with_matrix(batch, self.size(-1), self.size(-1)), options)};
}

std::pair<Tensor, Tensor> linalg_eigh(const Tensor& A, const std::string& UPLO) { return _linalg_eigh(A, UPLO, true); }

Tensor linalg_eigvalsh(const Tensor& A, const std::string& UPLO) {
  return _linalg_eigh(A, UPLO, A.requires_grad() && GradMode::is_enabled()).first;
}

Tensor pinverse(const Tensor& self, double rcond) { return linalg_pinv(self, 0.0, rcond); }

Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  check_matrix(A, "torch.linalg.matrix_rank");
  GRAFT_CHECK(A.dtype() == kFloat32 || A.dtype() == kFloat64, RuntimeError,
              "This function doesn't handle types other than float and double");
  NoGradGuard values_only;
  Tensor s = hermitian ? linalg_eigvalsh(A).abs() : linalg_svdvals(A);
  return s.gt(singular_cutoff(s, A.size(-2), A.size(-1), atol, rtol)).sum({-1});
}

Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper) {
  check_matrix(self, "cholesky_solve", "B");
  check_floating(self, "cholesky_solve", "cholesky_solve_cpu", true);
  // A = L L^T: L Y = B, then L^T X = Y (upper: A = U^T U, U^T Y = B, then U X = Y)
  const Tensor lower = upper ? mT(input2) : input2;
  return linalg_solve_triangular(mT(lower), linalg_solve_triangular(lower, self, false), true);
}

Tensor cholesky_inverse(const Tensor& self, bool upper) {
  check_square(self, "cholesky_inverse", "input");
  check_floating(self, "cholesky_inverse", "cholesky_inverse_out_cpu", true);
  Tensor identity = eye(self.size(-1), std::nullopt, TensorOptions(self.dtype()).device(self.device()));
  return cholesky_solve(identity.expand(self.sizes()), self, upper);
}

}  // namespace graft
