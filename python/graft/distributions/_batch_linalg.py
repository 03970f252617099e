"""The batched linear algebra that PyTorch's MultivariateNormal, LowRankMultivariateNormal and their
KL divergences share (``_batch_mv``, ``_batch_mahalanobis``, ``_batch_trace_XXT``, the capacitance
matrix of a low-rank covariance and what the Woodbury identity and the determinant lemma make of
it), in PyTorch's forms: matrices and vectors of different but broadcastable batch shapes, the
matrices' batch never materialised at the vectors' batch shape."""
from .. import _C, linalg

__all__ = ["_add_identity", "_batch_capacitance_tril", "_batch_lowrank_logdet", "_batch_lowrank_mahalanobis",
           "_batch_mahalanobis", "_batch_mv", "_batch_trace_XXT", "_half_log_det"]


def _batch_mv(bmat, bvec):
    """The matrix-vector products of a batch of n x n matrices and a batch of n-vectors (batch
    shapes broadcast)."""
    return _C.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distances x^T M^-1 x of the vectors ``bx`` for M = L L^T, ``bL`` a
    batch of lower-triangular L whose batch shape broadcasts to that of ``bx`` (PyTorch's
    algorithm: bx is reshaped so that each L solves all its vectors in one triangular solve)."""
    n = bx.size(-1)
    bx_batch_shape = tuple(bx.shape[:-1])

    # Assume that bL.shape = (i, 1, n, n), bx.shape = (..., i, j, n),
    # we are going to make bx have shape (..., 1, j,  i, 1, n) to apply batched tri.solve
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # Reshape bx with the shape (..., 1, i, j, 1, n)
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sL, sL)
    bx_new_shape += (n,)
    bx = bx.reshape(bx_new_shape)
    # Permute bx to make it have shape (..., 1, j, i, 1, n)
    permute_dims = (list(range(outer_batch_dims)) + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2)) + [new_batch_dims])
    bx = bx.permute(permute_dims)

    flat_L = bL.reshape(-1, n, n)  # shape = b x n x n
    flat_x = bx.reshape(-1, flat_L.size(0), n)  # shape = c x b x n
    flat_x_swap = flat_x.permute(1, 2, 0)  # shape = b x n x c
    M_swap = linalg.solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)  # shape = b x c
    M = M_swap.t()  # shape = c x b

    # Now we revert the above reshape and permute operators.
    permuted_M = M.reshape(tuple(bx.shape[:-1]))  # shape = (..., 1, j, i, 1)
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_M = permuted_M.permute(permute_inv_dims)  # shape = (..., 1, i, j, 1)
    return reshaped_M.reshape(bx_batch_shape)


def _batch_trace_XXT(bmat):
    """The traces of X X^T (the sums of squares) of a batch of matrices X."""
    n = bmat.size(-1)
    m = bmat.size(-2)
    flat_trace = bmat.reshape(-1, m * n).pow(2).sum(-1)
    return flat_trace.reshape(tuple(bmat.shape[:-2]))


def _half_log_det(scale_tril):
    """log |L| = the sum of the logs of the diagonal of each lower-triangular L: half the log
    determinant of L L^T."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _add_identity(matrices):
    """``matrices`` (a batch of square matrices) + the identity."""
    n = matrices.size(-1)
    return matrices + _C.eye(n, dtype=matrices.dtype, device=matrices.device)


def _batch_capacitance_tril(W, D):
    """The Cholesky factors of the capacitance matrices C = I + W^T D^-1 W of a batch of n x m
    matrices W and of n-vectors D (the diagonal of a diagonal matrix)."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = _C.matmul(Wt_Dinv, W)
    return linalg.cholesky(_add_identity(K))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log |W W^T + D| = log |C| + log |D| (the matrix determinant lemma), C the capacitance matrix."""
    return 2 * _half_log_det(capacitance_tril) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x, through the Woodbury identity
    (W W^T + D)^-1 = D^-1 - D^-1 W C^-1 W^T D^-1, C the capacitance matrix."""
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    Wt_Dinv_x = _batch_mv(Wt_Dinv, x)
    mahalanobis_term1 = (x.pow(2) / D).sum(-1)
    mahalanobis_term2 = _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)
    return mahalanobis_term1 - mahalanobis_term2
