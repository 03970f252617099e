"""torch.linalg's factorizations and what is made of them, over graft's LAPACK ops: det, slogdet,
inv, solve, cholesky, solve_triangular, qr, svd, svdvals, eigh, eigvalsh, pinv, matrix_rank, lstsq,
cond, multi_dot, vecdot, diagonal and LinAlgError. Each factorization is one op with its own
backward node (LinalgSvdBackward0, ...), as PyTorch's; graft.linalg re-exports these."""
from . import _C
from ._type_info import finfo

LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "graft.linalg"
LinAlgError.__qualname__ = LinAlgError.__name__ = "LinAlgError"


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"graft.linalg.{name}: out= is not supported")


def _tolerance(name, value):
    """atol / rtol as a float: a number, or a tensor of one element (per-matrix tolerances are not
    supported)."""
    if value is None or isinstance(value, (int, float)):
        return value
    if isinstance(value, _C.Tensor) and value.numel() == 1:
        return float(value)
    raise NotImplementedError(f"graft.linalg.{name}: atol and rtol are numbers or one-element tensors")


def det(A, *, out=None):
    """The determinant of each square matrix of A (the last two dims), through its LU factorization."""
    _no_out("det", out)
    return _C.linalg_det(A)


def slogdet(A, *, out=None):
    """(sign, logabsdet) of the determinant of each square matrix of A."""
    _no_out("slogdet", out)
    return _C.linalg_slogdet(A)


def inv(A, *, out=None):
    """The inverse of each square matrix of A; LinAlgError for a singular one."""
    _no_out("inv", out)
    return _C.linalg_inv(A)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (X A = B when not left); B matrices or, of A's batch shape, vectors."""
    _no_out("solve", out)
    return _C.linalg_solve(A, B, left=left)


def cholesky(A, *, upper=False, out=None):
    """The lower Cholesky factor L of each symmetric positive-definite matrix (upper: L^T)."""
    _no_out("cholesky", out)
    return _C.linalg_cholesky(A, upper=upper)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (X A = B when not left) for A's upper or lower triangle."""
    _no_out("solve_triangular", out)
    return _C.linalg_solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R: mode 'reduced', 'complete' or 'r' (R alone, Q empty)."""
    _no_out("qr", out)
    return _C.linalg_qr(A, mode)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (driver: CUDA's; ignored on the CPU, as PyTorch's)."""
    _no_out("svd", out)
    return _C.linalg_svd(A, full_matrices)


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix of A, descending."""
    _no_out("svdvals", out)
    return _C.linalg_svdvals(A)


def eigh(A, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix, read from the UPLO triangle."""
    _no_out("eigh", out)
    return _C.linalg_eigh(A, UPLO)


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of each symmetric matrix, read from the UPLO triangle."""
    _no_out("eigvalsh", out)
    return _C.linalg_eigvalsh(A, UPLO)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The pseudo-inverse of each matrix: singular values at most max(atol, rtol * the largest)
    dropped; the older positional rcond is rtol with atol 0."""
    _no_out("pinv", out)
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.pinv: rcond and atol/rtol cannot be given together")
        atol, rtol = 0.0, rcond
    return _C.linalg_pinv(A, atol=_tolerance("pinv", atol), rtol=_tolerance("pinv", rtol), hermitian=hermitian)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above max(atol, rtol * the largest), as int64; the older
    tol is atol with rtol 0."""
    _no_out("matrix_rank", out)
    if tol is not None:
        atol, rtol = tol, 0.0
    return _C.linalg_matrix_rank(A, atol=_tolerance("matrix_rank", atol), rtol=_tolerance("matrix_rank", rtol),
                                 hermitian=hermitian)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of A X = B, the minimum-norm one for a rank-deficient A (the
    pseudo-inverse's, which is what the CPU's default driver, gelsy, computes), with the rank;
    residuals and singular_values are empty, as gelsy gives them."""
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {A.dtype} and other's dtype {B.dtype}")
    vector = A.dim() == B.dim() + 1
    if A.shape[-2] != (B.shape[-1] if vector else B.shape[-2]):
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if vector else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2], A.shape[-1]
    rtol = finfo(A.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    pseudo = _C.linalg_pinv(A, atol=0.0, rtol=rtol)
    solution = (pseudo @ B.unsqueeze(-1)).squeeze(-1) if vector else pseudo @ B
    rank = _C.linalg_matrix_rank(A.detach(), atol=0.0, rtol=rtol)
    from ._tensor import return_types
    return return_types.linalg_lstsq(solution, A.new_empty((0,)), rank, A.new_empty((0,)))


def cond(A, p=None, *, out=None):
    """The condition number of each matrix: the ratio of its largest and smallest singular values
    (p None or 2; -2 the inverse ratio), else matrix_norm(A, p) * matrix_norm(inv(A), p)."""
    _no_out("cond", out)
    from .linalg import matrix_norm
    if p is None or p in (2, -2):
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def multi_dot(tensors, *, out=None):
    """The product of the matrices in order; the first may be a 1-d row, the last a 1-d column."""
    _no_out("multi_dot", out)
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0].dim() == 1, tensors[-1].dim() == 1
    matrices = [tensors[0].unsqueeze(0) if first else tensors[0], *tensors[1:-1],
                tensors[-1].unsqueeze(1) if last else tensors[-1]]
    for i, t in enumerate(matrices):
        if t.dim() != 2:
            which = "first" if i == 0 else "last" if i == len(matrices) - 1 else None
            raise RuntimeError(f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D" if which else
                               f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    result = matrices[0]
    for t in matrices[1:]:
        result = result @ t
    if first:
        result = result.squeeze(0)
    if last:
        result = result.squeeze(-1)
    return result


def vecdot(x, y, *, dim=-1, out=None):
    """The dot products of x's and y's vectors along dim (broadcast)."""
    _no_out("vecdot", out)
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (a view), torch.diagonal with the last two dims by default."""
    return A.diagonal(offset, dim1, dim2)


def _spectral_norm(A, ord, dim, keepdim):
    """matrix_norm's 'nuc' (sum of singular values), 2 (largest) and -2 (smallest) over `dim`."""
    rows, cols = (d % A.dim() for d in dim)
    moved = A.movedim((rows, cols), (-2, -1))
    s = svdvals(moved)
    value = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        for d in sorted((rows, cols)):
            value = value.unsqueeze(d)
    return value

