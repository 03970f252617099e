// The derivatives of torch.linalg's factorizations (src/ops/factorizations.cpp), in graft ops so
// that they are recorded under create_graph. The formulas are the standard matrix-calculus ones
// that PyTorch's FunctionsManual.cpp uses too (the SVD's after Townsend, "Differentiating the
// Singular Value Decomposition"; QR's after Walter and Lehmann / Liao et al.); gradcheck and
// gradgradcheck in the op registry check each.
#include "graft/core/grad_mode.h"
#include "graft/ops/derivatives.h"

namespace graft::derivatives {

namespace {

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }
// Batches of scalars as batches of 1 x 1 matrices, to scale matrices.
Tensor as_matrices(const Tensor& t) { return t.unsqueeze(-1).unsqueeze(-1); }
// The n x n identity of like's dtype and device.
Tensor identity(int64_t n, const Tensor& like) {
  return eye(n, std::nullopt, TensorOptions(like.dtype()).device(like.device()));
}
// X - X^T
Tensor skew(const Tensor& x) { return x - mT(x); }
// The product of every element of each lane but the one at each position, without dividing
// (exact at zeros): the exclusive running products from the left and from the right.
Tensor prod_of_others(const Tensor& s) {
  const int64_t k = s.size(-1);
  Tensor one = ones_like(s.narrow(-1, 0, 1));
  Tensor left = cat({one, s.narrow(-1, 0, k - 1).cumprod(-1)}, -1);
  Tensor right = cat({s.narrow(-1, 1, k - 1).flip({-1}).cumprod(-1).flip({-1}), one}, -1);
  return left * right;
}

// det's gradient through the SVD A = U diag(S) Vh, defined for singular A too: the cofactor
// matrix det(U) det(Vh) U diag(prod_{j != i} S_j) Vh.
Tensor det_backward_svd(const Tensor& grad, const Tensor& A) {
  auto [u, s, vh] = linalg_svd(A, false);
  Tensor alpha = linalg_det(u) * linalg_det(vh);
  Tensor d = prod_of_others(s) * (alpha * grad).unsqueeze(-1);
  return matmul(u * d.unsqueeze(-2), vh);
}

// (I - U U^T) applied to x from the left (U with orthonormal columns).
Tensor off_columns(const Tensor& u, const Tensor& x) { return x - matmul(u, matmul(mT(u), x)); }

// QR's gradient for m >= n (Q m x n, R n x n): (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q,
// copyltu(M) the symmetric matrix of M's lower triangle.
Tensor qr_backward_tall(const Tensor& gq, const Tensor& gr, const Tensor& q, const Tensor& r) {
  Tensor m = matmul(r, mT(gr)) - matmul(mT(gq), q);
  Tensor sym = m.tril() + mT(m.tril(-1));
  return linalg_solve_triangular(mT(r), gq + matmul(q, sym), /*upper=*/false, /*left=*/false);
}

}  // namespace

Tensor linalg_det_backward(const Tensor& grad, const Tensor& det, const Tensor& A) {
  // the SVD is about a hundred times the cost of a solve: only where a matrix is singular, or
  // when the gradient is itself differentiated (PyTorch's choice); meta has no values to test
  Tensor singular = det.eq(0).any();
  const bool use_svd = GradMode::is_enabled() || (!A.device().is_meta() && singular.item<bool>());
  if (use_svd) return det_backward_svd(grad, A);
  return as_matrices(grad * det) * mT(linalg_inv(A));
}

Tensor slogdet_backward(const Tensor& grad_logabsdet, const Tensor& A) {
  if (!grad_logabsdet.defined()) return Tensor();  // the sign's gradient is zero for real matrices
  return as_matrices(grad_logabsdet) * mT(linalg_inv(A));
}

Tensor linalg_inv_backward(const Tensor& grad, const Tensor& inverse) {
  return -matmul(matmul(mT(inverse), grad), mT(inverse));
}

TensorList linalg_solve_backward(const Tensor& grad, const Tensor& X, const Tensor& A, bool left,
                                 const std::array<bool, 2>& grad_input_mask) {
  // gB solves the transposed system; gA = -gB X^T (left) or -X^T gB (X A = B)
  const bool vector = X.dim() == A.dim() - 1;
  Tensor gb = linalg_solve(mT(A), grad, left);
  Tensor ga;
  if (grad_input_mask[0]) {
    const Tensor gb_m = vector ? gb.unsqueeze(-1) : gb, x_m = vector ? X.unsqueeze(-1) : X;
    ga = left ? -matmul(gb_m, mT(x_m)) : -matmul(mT(x_m), gb_m);
  }
  return {ga, grad_input_mask[1] ? gb : Tensor()};
}

Tensor cholesky_backward(const Tensor& grad, bool upper, const Tensor& L) {
  // gA = L^-T Phi(L^T gL) L^-1, Phi the lower triangle with its diagonal halved, symmetrized
  const Tensor lower = upper ? mT(L) : L, gl = upper ? mT(grad) : grad;
  Tensor phi = matmul(mT(lower), gl);
  phi = phi.tril() - 0.5 * diag_embed(phi.diagonal(0, -2, -1));
  Tensor ga = linalg_solve_triangular(mT(lower), phi, /*upper=*/true);
  ga = linalg_solve_triangular(lower, ga, /*upper=*/false, /*left=*/false);
  return 0.5 * (ga + mT(ga));
}

TensorList linalg_solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& X, bool upper, bool left,
                                            bool unitriangular, const std::array<bool, 2>& grad_input_mask) {
  Tensor gb = linalg_solve_triangular(mT(A), grad, !upper, left, unitriangular);
  Tensor ga;
  if (grad_input_mask[0]) {
    ga = left ? -matmul(gb, mT(X)) : -matmul(mT(X), gb);
    ga = upper ? ga.triu(unitriangular ? 1 : 0) : ga.tril(unitriangular ? -1 : 0);
  }
  return {ga, grad_input_mask[1] ? gb : Tensor()};
}

Tensor linalg_qr_backward(const Tensor& grad_Q, const Tensor& grad_R, const Tensor& Q, const Tensor& R,
                          const std::string& mode) {
  GRAFT_CHECK(mode != "r", RuntimeError,
              "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
              "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  const int64_t m = Q.size(-2), n = R.size(-1);
  GRAFT_CHECK(mode == "reduced" || m <= n, RuntimeError,
              "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  const Tensor gq = grad_Q.defined() ? grad_Q : zeros_like(Q), gr = grad_R.defined() ? grad_R : zeros_like(R);
  if (m >= n) return qr_backward_tall(gq, gr, Q, R);
  // A = Q [U | V] with U square: X = Q U is a square QR, Y = Q V moves with Q
  const Tensor u = R.narrow(-1, 0, m), v = R.narrow(-1, m, n - m), gv = gr.narrow(-1, m, n - m);
  Tensor gx = qr_backward_tall(gq + matmul(matmul(Q, v), mT(gv)), gr.narrow(-1, 0, m), Q, u);
  return cat({gx, matmul(Q, gv)}, -1);
}

Tensor svd_backward(const Tensor& grad_U, const Tensor& grad_S, const Tensor& grad_Vh, const Tensor& U, const Tensor& S,
                    const Tensor& Vh, bool full_matrices) {
  if (!grad_U.defined() && !grad_S.defined() && !grad_Vh.defined()) return Tensor();
  GRAFT_CHECK(U.dim() >= 2, RuntimeError,
              "linalg.svd: the singular vectors were not computed (compute_uv=False), and the gradient needs them");
  const int64_t k = S.size(-1);
  // full_matrices: only the first k columns of U and rows of Vh carry a gradient
  const Tensor u = full_matrices ? U.narrow(-1, 0, k) : U, vh = full_matrices ? Vh.narrow(-2, 0, k) : Vh;
  const Tensor gu = grad_U.defined() && full_matrices ? grad_U.narrow(-1, 0, k) : grad_U;
  const Tensor gvh = grad_Vh.defined() && full_matrices ? grad_Vh.narrow(-2, 0, k) : grad_Vh;
  if (!gu.defined() && !gvh.defined()) return matmul(u * grad_S.unsqueeze(-2), vh);
  Tensor s2 = S * S;
  Tensor e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + identity(k, S);  // s_j^2 - s_i^2, 1 on the diagonal
  Tensor inner = zeros_like(e);
  if (gu.defined()) inner = inner + skew(matmul(mT(u), gu)) * S.unsqueeze(-2);
  if (gvh.defined()) inner = inner + S.unsqueeze(-1) * skew(matmul(vh, mT(gvh)));
  inner = inner / e;
  if (grad_S.defined()) inner = inner + diag_embed(grad_S);
  Tensor ga = matmul(matmul(u, inner), vh);
  if (gu.defined() && u.size(-2) > k) ga = ga + matmul(off_columns(u, gu) / S.unsqueeze(-2), vh);
  if (gvh.defined() && vh.size(-1) > k) ga = ga + matmul(u, mT(off_columns(mT(vh), mT(gvh))) / S.unsqueeze(-1));
  return ga;
}

Tensor eigh_backward(const Tensor& grad_eigenvalues, const Tensor& grad_eigenvectors, const Tensor& eigenvalues,
                     const Tensor& eigenvectors) {
  if (!grad_eigenvalues.defined() && !grad_eigenvectors.defined()) return Tensor();
  GRAFT_CHECK(eigenvectors.dim() >= 2, RuntimeError,
              "linalg.eigh: the eigenvectors were not computed (eigvalsh under no_grad), and the gradient needs them");
  const Tensor& v = eigenvectors;
  // gA = V (diag(gL) + skew(V^T gV) / 2 / E) V^T, E_ij = L_j - L_i: symmetric, as A is
  Tensor inner;
  if (grad_eigenvectors.defined()) {
    Tensor e = eigenvalues.unsqueeze(-2) - eigenvalues.unsqueeze(-1) + identity(v.size(-1), v);
    inner = 0.5 * skew(matmul(mT(v), grad_eigenvectors)) / e;
  }
  if (grad_eigenvalues.defined())
    inner = inner.defined() ? inner + diag_embed(grad_eigenvalues) : diag_embed(grad_eigenvalues);
  return matmul(matmul(v, inner), mT(v));
}

Tensor pinv_backward(const Tensor& grad, const Tensor& pinv, const Tensor& A) {
  // the derivative of A+ (Golub and Pereyra), arranged so that the products are of the smaller side
  const Tensor pinv_t = mT(pinv), grad_t = mT(grad);
  if (A.size(-2) <= A.size(-1)) {
    Tensor k = matmul(grad_t, pinv);
    Tensor k_pinv_t = matmul(k, pinv_t);
    return -mT(matmul(pinv, k)) + k_pinv_t - matmul(matmul(A, pinv), k_pinv_t) +
           matmul(matmul(pinv_t, pinv), grad_t - matmul(k, A));
  }
  Tensor k = matmul(pinv, grad_t);
  Tensor pinv_t_k = matmul(pinv_t, k);
  return -mT(matmul(k, pinv)) + matmul(matmul(grad_t - matmul(A, k), pinv), pinv_t) + pinv_t_k -
         matmul(matmul(pinv_t_k, pinv), A);
}

}  // namespace graft::derivatives
