"""torch.linalg's factorizations and what is made of them, over graft's LAPACK ops: det, slogdet,
inv, solve, cholesky, solve_triangular, qr, svd, svdvals, eigh, eigvalsh, pinv, matrix_rank, lstsq,
cond, multi_dot, vecdot, diagonal and LinAlgError. Each factorization is one op with its own
backward node (LinalgSvdBackward0, ...), as PyTorch's; graft.linalg re-exports these.

The first parameter is named as PyTorch's argument parser names it (``input`` for cholesky, cond,
eigh, eigvalsh, lstsq, matrix_rank, pinv and solve_triangular; ``A`` for det, slogdet, inv, solve,
qr, svd, svdvals and diagonal), not always as its documentation does: torch.linalg.cholesky(A=x) is
a TypeError in PyTorch, and so in graft."""
import math

from . import _C
from ._composites._common import _int_arg, _parse
from ._tensor_types import _type_name
from ._type_info import finfo

LinAlgError = _C._LinAlgError
LinAlgError.__module__ = "graft.linalg"
LinAlgError.__qualname__ = LinAlgError.__name__ = "LinAlgError"

_SCALAR_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half", _C.bfloat16: "BFloat16",
                 _C.int64: "Long", _C.int32: "Int", _C.bool: "Bool"}


class _Unset:
    """The default of an argument whose absence PyTorch's parser tells from None (pinv's rcond,
    matrix_rank's tol, their atol and rtol): which overload applies depends on what was given."""

    def __repr__(self):
        return "None"


_UNSET = _Unset()


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"graft.linalg.{name}: out= is not supported")


def _scalar_name(dtype):
    return _SCALAR_NAMES.get(dtype, str(dtype))


def _check_tensor(fname, value, name, pos):
    if not isinstance(value, _C.Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not {_type_name(value)}")
    return value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, complex)


def _scalar(value):
    """A Python number as PyTorch's parser takes a Scalar: ints below 2 ** 64 (those beyond int64 as
    doubles), OverflowError beyond; other values unchanged."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not -2 ** 63 <= value < 2 ** 64:
            raise OverflowError("int too big to convert")
        if value >= 2 ** 63:
            return float(value)
    return value


def _tolerance_batch(input, *tolerances):
    """The batch shape of the result where a tolerance is a one-element tensor with dims (PyTorch
    broadcasts the tolerances against the batch of matrices), else None."""
    shapes = [list(t.shape) for t in tolerances if isinstance(t, _C.Tensor) and t.numel() == 1 and t.dim() > 0]
    if not shapes or not isinstance(input, _C.Tensor) or input.dim() < 2:
        return None
    from . import broadcast_shapes
    return list(broadcast_shapes(tuple(input.shape[:-2]), *map(tuple, shapes)))


def _tolerance(name, value, input=None):
    """atol / rtol as a float: a number, or a tensor of one element (per-matrix tolerances are not
    supported: NotImplementedError, after PyTorch's checks of `input`, which come first)."""
    if value is None or _is_number(value):
        return None if value is None else float(value)
    if isinstance(value, _C.Tensor) and value.numel() == 1:
        return float(value)
    if isinstance(input, _C.Tensor):
        if name == "pinv" and (input.dim() < 2 or input.dtype not in (_C.float32, _C.float64)):
            shape = ", ".join(str(s) for s in input.shape)
            raise RuntimeError(f"linalg.pinv({_scalar_name(input.dtype)}{{[{shape}]}}): expected a tensor with 2 or "
                               "more dimensions of float, double, cfloat or cdouble types")
        if name == "matrix_rank" and input.dim() < 2:
            raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
        if name == "matrix_rank" and input.dtype not in (_C.float32, _C.float64):
            raise RuntimeError("This function doesn't handle types other than float and double")
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


def cholesky(input, *, upper=False, out=None):
    """The lower Cholesky factor L of each symmetric positive-definite matrix (upper: L^T)."""
    _no_out("cholesky", out)
    return _C.linalg_cholesky(input, upper=upper)


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (X A = B when not left) for A's (``input``'s) upper or lower triangle."""
    _no_out("solve_triangular", out)
    return _C.linalg_solve_triangular(input, B, upper=upper, left=left, unitriangular=unitriangular)


def qr(A, mode="reduced", *, out=None):
    """(Q, R) with A = Q R: mode 'reduced', 'complete' or 'r' (R alone, Q empty)."""
    _no_out("qr", out)
    return _C.linalg_qr(A, mode)


def _check_driver(fname, driver, A):
    """svd's driver=: a str, and on the CPU none at all (PyTorch's cuSOLVER-only option)."""
    if driver is None:
        return
    if not isinstance(driver, str):
        raise TypeError(f"{fname}(): argument 'driver' must be str, not {_type_name(driver)}")
    if isinstance(A, _C.Tensor) and A.device.type != "cuda":
        if A.dim() < 2:
            raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
        if A.dtype not in (_C.float32, _C.float64, _C.float16, _C.bfloat16):
            raise NotImplementedError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                                      f"{_scalar_name(A.dtype)}")
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending (driver: cuSOLVER's; refused on the CPU, as PyTorch's)."""
    _no_out("svd", out)
    if not isinstance(full_matrices, bool):
        raise TypeError(f"linalg_svd(): argument 'full_matrices' must be bool, not {_type_name(full_matrices)}")
    _check_driver("linalg_svd", driver, A)
    return _C.linalg_svd(A, full_matrices)


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix of A, descending."""
    _no_out("svdvals", out)
    _check_driver("linalg_svdvals", driver, A)
    return _C.linalg_svdvals(A)


def eigh(input, UPLO="L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix, read from the UPLO triangle."""
    _no_out("eigh", out)
    return _C.linalg_eigh(input, UPLO)


def eigvalsh(input, UPLO="L", *, out=None):
    """The eigenvalues (ascending) of each symmetric matrix, read from the UPLO triangle."""
    _no_out("eigvalsh", out)
    return _C.linalg_eigvalsh(input, UPLO)


def _tolerances(fname, old, input, old_value, hermitian, atol, rtol):
    """(atol, rtol) from PyTorch's overloads of pinv and matrix_rank: (input, *, atol=None,
    rtol=None, hermitian=False) and the older (input, rcond / tol, hermitian=False), whose rcond is
    rtol with atol 0 and whose tol is atol with rtol 0; rcond / tol is a number or a tensor, neither
    None nor given with atol or rtol. Anything else matches no overload ("invalid combination")."""
    def tolerance_like(v):
        return _is_number(v) or isinstance(v, _C.Tensor)

    if isinstance(hermitian, bool) and isinstance(input, _C.Tensor):
        if old_value is not _UNSET:
            if atol is _UNSET and rtol is _UNSET and tolerance_like(old_value):
                return (0.0, old_value) if fname == "pinv" else (old_value, 0.0)
        else:
            atol = None if atol is _UNSET else atol
            rtol = None if rtol is _UNSET else rtol
            if (atol is None or tolerance_like(atol)) and (rtol is None or tolerance_like(rtol)):
                return atol, rtol
    kwargs = {k: v for k, v in ((old, old_value), ("atol", atol), ("rtol", rtol), ("hermitian", hermitian))
              if v is not _UNSET and v is not None or k == old and v is None}
    got = ", ".join(["Tensor" if isinstance(input, _C.Tensor) else _type_name(input)] +
                    [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    overloads = ["(Tensor input, *, Tensor atol = None, Tensor rtol = None, bool hermitian = False, Tensor out = None)",
                 "(Tensor input, *, float atol = None, float rtol = None, bool hermitian = False, Tensor out = None)",
                 f"(Tensor input, Tensor {old}, bool hermitian = False, *, Tensor out = None)",
                 f"(Tensor input, float {old}, bool hermitian = False, *, Tensor out = None)"]
    lines = "".join(f" * {o}\n" for o in overloads)
    raise TypeError(f"linalg_{fname}() received an invalid combination of arguments - got ({got}), but expected "
                    f"one of:\n{lines}")


def pinv(input, rcond=_UNSET, hermitian=False, *, atol=_UNSET, rtol=_UNSET, out=None):
    """The pseudo-inverse of each matrix: singular values at most max(atol, rtol * the largest)
    dropped; the older positional rcond is rtol with atol 0."""
    _no_out("pinv", out)
    atol, rtol = _tolerances("pinv", "rcond", input, rcond, hermitian, atol, rtol)
    if atol is not None and rtol is None and input.dim() < 2:  # PyTorch sizes the default rtol first
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if input.dim() == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if _C.is_grad_enabled():  # PyTorch's autograd refuses a tolerance tensor that requires grad
        for name, value in (("atol", atol), ("rtol", rtol)):
            if isinstance(value, _C.Tensor) and value.requires_grad:
                raise RuntimeError(f"The function 'linalg_pinv' is not differentiable with respect to argument "
                                   f"'{name}'. This input cannot have requires_grad True.")
    batch = _tolerance_batch(input, atol, rtol)
    atol, rtol = _tolerance("pinv", atol, input), _tolerance("pinv", rtol, input)
    result = _C.linalg_pinv(input, atol=atol, rtol=rtol, hermitian=hermitian)
    return result if batch is None else result.expand(batch + list(result.shape[-2:])).clone()


def matrix_rank(input, tol=_UNSET, hermitian=False, *, atol=_UNSET, rtol=_UNSET, out=None):
    """The number of singular values above max(atol, rtol * the largest), as int64; the older
    tol is atol with rtol 0."""
    _no_out("matrix_rank", out)
    atol, rtol = _tolerances("matrix_rank", "tol", input, tol, hermitian, atol, rtol)
    batch = _tolerance_batch(input, atol, rtol)
    atol, rtol = _tolerance("matrix_rank", atol, input), _tolerance("matrix_rank", rtol, input)
    result = _C.linalg_matrix_rank(input, atol=atol, rtol=rtol, hermitian=hermitian)
    return result if batch is None else result.expand(batch).clone()


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(input, b, rcond=None, *, driver=None):
    """The least-squares solution X of A X = B (A ``input``, B ``b``), with PyTorch 2.x's outputs for
    each driver: the residuals (the squared column norms of A X - B; differentiable) when A is tall
    and, but for gelsy, of full rank; the ranks (not with gels) and the singular values (gelsd and
    gelss). X is the pseudo-inverse's solution, the minimum-norm one, which is what gelsy, gelsd and
    gelss compute (gels only exists for matrices of full rank: an exactly zero diagonal element of
    its triangular factor is a LinAlgError, as PyTorch 2.x's)."""
    A, B = input, b
    _check_tensor("linalg_lstsq", A, "input", 1)
    _check_tensor("linalg_lstsq", B, "b", 2)
    if isinstance(rcond, _C.Tensor) and rcond.dim() == 0 and not rcond.requires_grad:  # (as PyTorch's parser)
        rcond = float(rcond)
    if rcond is not None and not _is_number(rcond):
        raise TypeError(f"linalg_lstsq(): argument 'rcond' must be float, not {_type_name(rcond)}")
    if driver is not None and not isinstance(driver, str):
        raise TypeError(f"linalg_lstsq(): argument 'driver' must be str, not {_type_name(driver)}")
    name = "gelsy" if driver is None else driver.lower()
    if name not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_scalar_name(A.dtype)} and other's dtype {_scalar_name(B.dtype)}")
    dim_diff = A.dim() - B.dim()
    if not 0 <= dim_diff <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    if dim_diff == 1:  # vectors, exactly of A's batch (PyTorch 1.13 refuses the rest, 2.x most of it)
        if A.shape[-2] != B.shape[-1]:
            raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)")
        if tuple(B.shape) != tuple(A.shape[:-1]):
            raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    elif A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if A.dtype not in (_C.float32, _C.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = dim_diff == 1
    m, n = A.shape[-2], A.shape[-1]
    eps = finfo(A.dtype).eps
    default = eps * max(m, n)
    if rcond is None:
        rtol = default
    elif name == "gelsy":
        rtol = max(float(rcond), 0.0)  # gelsy: no rank cut at or below zero
    else:
        rtol = eps if rcond < 0 else float(rcond)  # gelsd, gelss: below zero means machine precision
    if name == "gels":
        rtol = 0.0
        _check_full_rank(A, m, n)
    B2 = B.unsqueeze(-1) if vector else B
    pseudo = _C.linalg_pinv(A, atol=0.0, rtol=rtol)
    solution = pseudo @ B2
    if rtol != default:  # PyTorch's gradient: the default pseudo-inverse's, whatever rcond
        grad_path = _C.linalg_pinv(A, atol=0.0, rtol=default) @ B2
        solution = grad_path + (solution - grad_path).detach()
    k = B2.shape[-1]
    if k == 0 and name in ("gelsd", "gelss") and min(m, n) > 0:  # PyTorch's LAPACK call fails (an internal assert)
        raise RuntimeError(f"torch.linalg.lstsq: Argument 4 has illegal value ({name} with an empty right-hand side)")
    no_grad = _no_grad_mode()
    with no_grad():
        s = svdvals(A) if min(m, n) > 0 else A.new_zeros(tuple(A.shape[:-2]) + (0,))
        ranks = (s > s.amax(-1, keepdim=True) * rtol).sum(-1) if min(m, n) > 0 else \
            A.new_zeros(tuple(A.shape[:-2]), dtype=_C.int64)
        if k == 0:  # no LAPACK call: rank 0
            ranks = _C.zeros_like(ranks)
        if name == "gels":
            ranks = A.new_empty((0,), dtype=_C.int64)
    full_rank = name == "gels" or (name != "gelsy" and bool((ranks == n).all()))
    if m > n and name != "gelsy" and full_rank:
        residuals = ((A @ solution - B2) ** 2).sum(-2)
    else:
        residuals = solution.reshape(-1)[:0]
    if vector:
        solution = solution.squeeze(-1)
    singular_values = s.detach() if name in ("gelsd", "gelss") else A.new_empty((0,))
    from ._tensor import return_types
    return return_types.linalg_lstsq(solution, residuals, ranks.detach(), singular_values)


def _no_grad_mode():
    from .autograd.grad_mode import no_grad
    return no_grad


def _check_full_rank(A, m, n):
    """gels's failure: LinAlgError where the triangular factor of A's QR (LQ when A is wide) has an
    exactly zero diagonal element."""
    if min(m, n) == 0:
        return
    with _no_grad_mode()():
        r = _C.linalg_qr(A if m >= n else A.transpose(-2, -1), "r")[1]
        zero = r.diagonal(0, -2, -1) == 0
        if not bool(zero.any()):
            return
        flat = zero.reshape(-1, zero.shape[-1])
        for i in range(flat.shape[0]):
            row = flat[i].tolist()
            if any(row):
                batch = f"(Batch element {i}): " if A.dim() > 2 else ""
                raise LinAlgError(f"torch.linalg.lstsq: {batch}The least squares solution could not be computed "
                                  f"because the input matrix does not have full rank (error code: "
                                  f"{row.index(True) + 1}).")


def _cond_ord(p):
    """PyTorch's check of linalg.cond's p (ValueError in PyTorch 2.x)."""
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise ValueError(f"linalg.cond got an invalid norm type: {p}")
    elif abs(p) not in (1, 2, math.inf):
        raise ValueError(f"linalg.cond got an invalid norm type: {'%g' % p}")


def cond(input, p=None, *, out=None):
    """The condition number of each matrix, as PyTorch 2.x computes it: p None, 2 or -2 the ratio of
    its largest and smallest singular values (or the inverse ratio); 'nuc' the sum of the singular
    values times the sum of their reciprocals; 'fro', 1, -1, inf and -inf matrix_norm(A, p) *
    matrix_norm(inv(A), p) for square matrices, infinite for a singular one. Matrices without
    elements have condition number 0."""
    _no_out("cond", out)
    from .linalg import matrix_norm
    A = _check_tensor("linalg_cond", input, "input", 1)
    if not (p is None or isinstance(p, str) or _is_number(p)):
        raise TypeError(f"linalg_cond(): argument 'p' must be Number, not {_type_name(p)}")
    p = _scalar(p)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    label = None
    if isinstance(p, str):
        label = p
        if A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are "
                               f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _cond_ord(2 if p is None else p)
    if A.numel() == 0:
        return _C.zeros(list(A.shape[:-2]), dtype=A.dtype, device=A.device)
    if p == "nuc":
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    if label is None and abs(p if p is not None else 2) == 2:
        s = svdvals(A)
        largest, smallest = s[..., 0], s[..., -1]
        return smallest / largest if p == -2 else largest / smallest
    if label is None:
        label = str(int(p)) if abs(p) == 1 else "%f" % p
        if A.shape[-1] != A.shape[-2]:
            raise RuntimeError(f"linalg.cond(ord={label}): A must be batches of square matrices, but they are "
                               f"{A.shape[-2]} by {A.shape[-1]} matrices")
    inverse = _inverse_or_inf(A)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.nan_to_num(math.inf, math.inf, -math.inf)


def _inverse_or_inf(A):
    """inv(A), with the inverse of each singular matrix made of infinities (PyTorch's inv_ex with
    the failed ones masked)."""
    try:
        return inv(A)
    except LinAlgError:
        if A.dim() == 2:
            return _C.full_like(A, math.inf)
    flat = A.reshape(-1, A.shape[-2], A.shape[-1])
    pieces = []
    for i in range(flat.shape[0]):
        try:
            pieces.append(inv(flat[i]))
        except LinAlgError:
            pieces.append(_C.full_like(flat[i], math.inf))
    return _C.stack(pieces).reshape(A.shape)


def _mm(a, b):
    """a @ b of two matrices; of bool matrices with no elements to multiply, zeros (PyTorch runs no
    kernel there, and has no bool one to refuse with)."""
    if a.dtype == _C.bool and 0 in (a.shape[0], a.shape[1], b.shape[1]):
        return _C.zeros([a.shape[0], b.shape[1]], dtype=_C.bool, device=a.device)
    return _C.mm(a, b)


def _chain_order(dims):
    """PyTorch's matrix-chain order (dynamic programming over the costs p_i p_k+1 p_j+1): split[i][j]
    is where the product of matrices i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = 2 ** 63 - 1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def multi_dot(tensors, *, out=None):
    """The product of the matrices in order; the first may be a 1-d row, the last a 1-d column. The
    products are taken in PyTorch's order (the cheapest parenthesization), which decides where
    infinities meet zeros."""
    _no_out("multi_dot", out)
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, _C.Tensor) for t in tensors):
        bad = tensors if not isinstance(tensors, (list, tuple)) else next(t for t in tensors
                                                                          if not isinstance(t, _C.Tensor))
        raise TypeError(f"linalg_multi_dot(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{_type_name(bad)}")
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    out_shape = ([first.shape[0]] if first.dim() == 2 else []) + ([last.shape[1]] if last.dim() == 2 else [])
    matrices = [first.unsqueeze(0) if first.dim() == 1 else first, *tensors[1:-1],
                last.unsqueeze(-1) if last.dim() == 1 else last]
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if matrices[i].dtype != matrices[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_scalar_name(matrices[0].dtype)} and tensor {i} {_scalar_name(matrices[i].dtype)}")
        if matrices[i - 1].shape[-1] != matrices[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        result = _mm(matrices[0], matrices[1])
    elif n == 3:
        a, b, c, d = matrices[0].shape[0], matrices[1].shape[0], matrices[2].shape[0], matrices[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            result = _mm(matrices[0], _mm(matrices[1], matrices[2]))
        else:
            result = _mm(_mm(matrices[0], matrices[1]), matrices[2])
    else:
        split = _chain_order([m.shape[0] for m in matrices] + [matrices[-1].shape[1]])

        def product(i, j):
            if i == j:
                return matrices[i]
            return _mm(product(i, split[i][j]), product(split[i][j] + 1, j))
        result = product(0, n - 1)
    return result.reshape(out_shape)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot products of x's and y's vectors along dim (broadcast); two 1-d tensors are one dot
    product whatever dim (PyTorch's vdot)."""
    _no_out("vecdot", out)
    _check_tensor("linalg_vecdot", x, "x", 1)
    _check_tensor("linalg_vecdot", y, "y", 2)
    dim = _int_arg("linalg_vecdot", "dim", dim)
    if x.dtype not in (_C.float32, _C.float64, _C.float16, _C.bfloat16):
        raise NotImplementedError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                                  f"{_scalar_name(x.dtype)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_scalar_name(x.dtype)} and y of type {_scalar_name(y.dtype)} instead")
    if x.dim() == 1 and y.dim() == 1:
        return _C.dot(x, y)
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (a view), torch.diagonal with the last two dims by default."""
    A, offset, dim1, dim2 = _parse("linalg_diagonal", ("A", A, "Tensor", 1), ("offset", offset, "int", None),
                                   ("dim1", dim1, "int", None), ("dim2", dim2, "int", None))
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
