"""graft.linalg: torch.linalg's cross product and norms (vector_norm, matrix_norm, norm), and torch.norm /
Tensor.norm, which PyTorch 2.x routes through them, with the factorizations of
_linalg_factorizations (det, inv, solve, cholesky, qr, svd, eigh, pinv, lstsq, ...), and matrix_exp and
householder_product, composed of graft ops in graft._composites. The vector norm
is one op with its own node (LinalgVectorNormBackward0); the matrix norms are built from it, from
sum, amax and amin, and from the singular values (ord 'nuc', 2, -2)."""
import math

from . import _C
from ._composites._common import _fmt, _scalar_name, _wrap_dim
from ._composites.dtypes import _promote
from ._composites.householder import householder_product
from ._composites.linalg import matrix_power
from ._composites.matrix_exponential import linalg_matrix_exp as matrix_exp
from ._linalg_factorizations import (LinAlgError, _scalar, _spectral_norm, cholesky, cond, det, diagonal, eigh,
                                     eigvalsh, inv, lstsq, matrix_rank, multi_dot, pinv, qr, slogdet, solve,
                                     solve_triangular, svd, svdvals, vecdot)
from ._tensor_types import _type_name

__all__ = ["cross", "vector_norm", "matrix_norm", "norm", "LinAlgError", "cholesky", "cond", "det", "diagonal", "eigh",
           "eigvalsh", "householder_product", "inv", "lstsq", "matrix_exp", "matrix_power", "matrix_rank", "multi_dot",
           "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot"]

_SPECTRAL = ("nuc", 2, -2)


def _dims(dim):
    """An int, a sequence of ints or None as the op's dim list (empty: every dim)."""
    if dim is None:
        return []
    return [dim] if isinstance(dim, int) else list(dim)


def cross(input, other, *, dim=-1, out=None):
    """The cross product of the 3-vectors of input and other along dim (the rest broadcast)."""
    if out is not None:
        raise NotImplementedError("graft.linalg.cross: out= is not supported")
    if isinstance(input, _C.Tensor) and isinstance(other, _C.Tensor) and isinstance(dim, int) \
            and not isinstance(dim, bool) and -2 ** 63 <= dim < 2 ** 63 and input.dim() == other.dim():
        _wrap_dim(dim, input.dim(), wrap_scalar=False)  # PyTorch's shape checks come before the dtypes'
    return _C.linalg_cross(input, other, dim)


_FLOAT_DTYPES = (_C.float32, _C.float64, _C.float16, _C.bfloat16)


def _check_norm_dtype(name, input, dtype):
    """PyTorch's checks of a norm's dtype=: a floating dtype, that the input's dtype converts to
    without narrowing (float64 values are not summed in float32)."""
    if dtype is None or not isinstance(dtype, _C.dtype):
        return
    if dtype not in _FLOAT_DTYPES:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {_scalar_name(dtype)}")
    if _promote(input.dtype, dtype) != dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({_scalar_name(input.dtype)}) should be convertible "
                           f"without narrowing to the specified dtype ({_scalar_name(dtype)})")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The ord-norm of x over dim (every dim when None): (sum |x|^ord)^(1/ord); inf and -inf the
    largest and smallest |x|; 0 the number of nonzero elements."""
    if out is not None:
        raise NotImplementedError("graft.linalg.vector_norm: out= is not supported")
    ord = _scalar(ord)
    if isinstance(x, _C.Tensor) and x.dtype in _FLOAT_DTYPES and isinstance(ord, (int, float)):
        _check_norm_dtype("linalg.vector_norm", x, dtype)
    return _C.linalg_vector_norm(x, ord, _dims(dim), keepdim, dtype=dtype)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the matrices of input over the two dims `dim`: 'fro' (Frobenius), 'nuc' (the
    sum of the singular values), 2 / -2 (the largest / smallest singular value), 1 / -1 (the largest /
    smallest column sum of |A|), inf / -inf (the same over rows). PyTorch's checks, in its order: the
    order, the input (a matrix of a floating dtype), dim (two different dims), dtype."""
    if out is not None:
        raise NotImplementedError("graft.linalg.matrix_norm: out= is not supported")
    A, ord = input, _scalar(ord)
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg_matrix_norm(): argument 'input' (position 1) must be Tensor, not {_type_name(A)}")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif isinstance(ord, (int, float)) and abs(ord) not in (1, 2, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if A.dtype not in _FLOAT_DTYPES:
        raise NotImplementedError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                                  f"{_scalar_name(A.dtype)}")
    if dim is None:
        raise TypeError("linalg_matrix_norm(): argument 'dim' must be tuple of ints, not NoneType")
    dim = _dims(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    rows, cols = (_wrap_dim(d, A.dim()) for d in dim)
    if rows == cols:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({rows}, {cols})")
    _check_norm_dtype("linalg.matrix_norm", A, dtype)
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if ord in _SPECTRAL:
        return _spectral_norm(A if dtype is None else A.to(dtype), ord, dim, keepdim)
    if dtype is not None:
        A = A.to(dtype)
    # ord +-1: sum over rows (each column's sum), then extreme over columns; +-inf the other way
    summed, across = (rows, cols) if abs(ord) == 1 else (cols, rows)
    sums = A.abs().sum(summed, keepdim=keepdim)
    if not keepdim and summed < across:
        across -= 1  # the summed dim is gone
    return sums.amax(across, keepdim=keepdim) if ord > 0 else sums.amin(across, keepdim=keepdim)


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm (ord over one dim, or over every element when ord is None) or a matrix norm
    (a string ord, or ord over two dims, or ord of a 2-d input without dim), as torch.linalg.norm
    chooses."""
    A, ord = input, _scalar(ord)
    if not isinstance(A, _C.Tensor):
        raise TypeError(f"linalg_norm(): argument 'input' (position 1) must be Tensor, not {_type_name(A)}")
    if dim is not None:
        dims = _dims(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                               f"[{', '.join(str(d) for d in dims)}]")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    if isinstance(ord, str) or ord is not None and (len(_dims(dim)) == 2 if dim is not None else A.dim() == 2):
        return matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def _torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm (and Tensor.norm): PyTorch 2.x's routing to the linalg norms. 'fro' over at
    most two dims and every number p are vector norms; 'nuc' is a matrix norm."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        return matrix_norm(input, p, list(range(input.dim())) if dim is None else dim, keepdim, dtype=dtype,
                           out=out)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """Tensor.norm: torch.norm of self."""
    return _torch_norm(self, p, dim, keepdim, dtype=dtype)


_C.Tensor.norm = _tensor_norm
