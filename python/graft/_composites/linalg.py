"""Products and matrix constructions: msort, ger, inner, vdot, chain_matmul, matrix_power, vander,
tril_indices/triu_indices and combinations; torch.triangular_solve (deprecated: it warns once) and
torch.qr and torch.cholesky, which PyTorch 2.x has removed (they raise its RuntimeError)."""
import itertools
import warnings

from .. import _C
from .._tensor import Size
from .._tensor_types import _CPP_NAMES, _type_name
from ._common import Tensor, _FLOATS, _check_pieces, _check_tensor, _parse, _scalar_name
from .dtypes import _promote


def msort(input):
    """input sorted along dim 0 (the values of sort(dim=0))."""
    return _check_tensor("msort", input).sort(0).values


def ger(input, vec2):
    """The outer product of two 1-d tensors (torch.outer's older name)."""
    return _C.outer(input, vec2)


def inner(input, other):
    """The inner product over the last dims (shape input.shape[:-1] + other.shape[:-1]); a 0-d
    argument multiplies."""
    _check_tensor("inner", input)
    _check_tensor("inner", other, "other", 2)
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    if input.dtype != other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    k = input.shape[-1]
    rows = [Size(t.shape[:-1]).numel() for t in (input, other)]  # explicit: -1 is ambiguous for 0 elements
    if input.dtype == _C.bool and 0 in (rows[0], rows[1], k):  # (graft's mm has no bool kernel to skip)
        product = _C.zeros(rows, dtype=_C.bool, device=input.device)
    else:
        product = _C.mm(input.reshape(rows[0], k), other.reshape(rows[1], k).t())
    return product.reshape(list(input.shape[:-1]) + list(other.shape[:-1]))


def vdot(input, other):
    """The dot product of two 1-d tensors of the same dtype (no conjugation for real dtypes)."""
    _check_tensor("vdot", input)
    _check_tensor("vdot", other, "other", 2)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_scalar_name(input.dtype)} and "
                           f"{_scalar_name(other.dtype)}")
    return _C.dot(input, other)


_CHAIN_MATMUL_WARNING = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                         "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                         "multiple parameters.")


def chain_matmul(*matrices):
    """The matrix product of the 2-d tensors, in order (deprecated in PyTorch for linalg.multi_dot)."""
    for i, m in enumerate(matrices):
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_type_name(m)}")
    warnings.warn(_CHAIN_MATMUL_WARNING, UserWarning, stacklevel=2)
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    for i, m in enumerate(matrices[1:], 1):
        if m.dtype != matrices[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_CPP_NAMES[matrices[0].dtype]} and tensor {i} {_CPP_NAMES[m.dtype]}")
        if matrices[i - 1].shape[1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(matrices[i - 1].shape)} and "
                               f"{list(m.shape)} cannot be multiplied")
    result = matrices[0]
    for m in matrices[1:]:
        result = _C.mm(result, m)
    return result


def matrix_power(input, n):
    """The n-th power of the square matrices in input's last two dims (n = 0: identities; n < 0:
    the inverse's -n-th power)."""
    input, n = _parse("matrix_power", ("input", input, "Tensor", 1), ("n", n, "int", 2))
    if input.dim() < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    rows, cols = input.shape[-2], input.shape[-1]
    if rows != cols:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {rows} by {cols} "
                           "matrices")
    if n == 0:
        return input.clone().copy_(_C.eye(rows, dtype=input.dtype, device=input.device).expand(input.shape))
    if n < 0:  # the inverse's power, as PyTorch's
        if input.dtype not in _FLOATS:
            raise NotImplementedError("linalg.inv: Expected a floating point or complex tensor as input. Got "
                                      f"{_scalar_name(input.dtype)}")
        input, n = _C.linalg_inv(input), -n
    if n == 1 or input.numel() == 0:
        return input.clone()
    result, power = None, None
    while n > 0:  # binary powering, as PyTorch's linalg_matrix_power
        n, bit = divmod(n, 2)
        power = input if power is None else _C.matmul(power, power)
        if bit:
            result = power if result is None else _C.matmul(result, power)
    return result


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-d x: columns x ** (N - 1), ..., x ** 0 (increasing powers
    when ``increasing``); N defaults to len(x). Integer and bool x give int64."""
    x, N, increasing = _parse("vander", ("x", x, "Tensor", 1), ("N", N, "int?", 2),
                              ("increasing", increasing, "bool", None))
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _promote(x.dtype, _C.int64)
    if n == 0 or x.shape[0] == 0:
        return _C.empty([x.shape[0], n], dtype=dtype, device=x.device)
    x = x.to(dtype).unsqueeze(1)
    # PyTorch's construction: a column of ones, then the running products of x
    result = _C.cat([_C.ones_like(x), x.expand(x.shape[0], n - 1).cumprod(1)], 1) if n > 1 else _C.ones_like(x)
    return result if increasing else result.flip([1])


def _tri_indices(fname, row, col, offset, dtype, device, requires_grad, upper):
    row, col, offset, dtype, requires_grad = _parse(
        fname, ("row", row, "int", 1), ("col", col, "int", 2), ("offset", offset, "int", 3),
        ("dtype", dtype, "dtype?", None), ("requires_grad", requires_grad, "bool", None))
    dtype = _C.int64 if dtype is None else dtype
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (_C.int64, _C.int32):
        raise NotImplementedError(f"\"{fname}\" not implemented for '{_scalar_name(dtype)}'")
    if requires_grad:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    rows = _C.arange(row, dtype=_C.int64).unsqueeze(1).expand(row, col)
    cols = _C.arange(col, dtype=_C.int64).unsqueeze(0).expand(row, col)
    mask = (cols - rows >= offset) if upper else (cols - rows <= offset)
    out = _C.stack([rows.masked_select(mask), cols.masked_select(mask)])
    return out.to(dtype) if device is None else out.to(device=device, dtype=dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False):
    """The (row, column) indices of the lower triangle of a row x col matrix (on and below the
    ``offset`` diagonal), as a 2 x N tensor."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, requires_grad, upper=False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False, requires_grad=False):
    """The (row, column) indices of the upper triangle of a row x col matrix (on and above the
    ``offset`` diagonal), as a 2 x N tensor."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, requires_grad, upper=True)


def _check_index_grid(n, r):
    """PyTorch builds combinations from an r-dim meshgrid of n ** r elements: its errors where that
    grid cannot exist (graft computes the combinations directly, so it would not fail by itself)."""
    _check_pieces(r)
    if n < 2:
        return
    if r * (n.bit_length() - 1) >= 63 or n ** r > 2 ** 63 - 1:
        raise RuntimeError("numel: integer multiplication overflow")
    if n ** r > 2 ** 40:
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate {n ** r} bytes.")


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of the elements of the 1-d input (itertools.combinations order),
    one per row."""
    input, r, with_replacement = _parse("combinations", ("input", input, "Tensor", 1), ("r", r, "int", 2),
                                        ("with_replacement", with_replacement, "bool", None))
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _C.empty([0], dtype=input.dtype, device=input.device)
    _check_index_grid(input.shape[0], r)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = [i for c in pick(range(input.shape[0]), r) for i in c]
    index = _C.tensor(index, dtype=_C.int64, device=input.device)
    return input.index_select(0, index).reshape(len(index) // r, r)  # (even when empty: it keeps input's grad)


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_TRIANGULAR_SOLVE_WARNING = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a future "
    "PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a copy of one of "
    "the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")
_warned = []


def qr(input, some=True, *, out=None):
    """Removed in PyTorch 2.x (torch.linalg.qr replaces it): RuntimeError with PyTorch's advice."""
    raise RuntimeError(
        _REMOVED + "`torch.qr` is deprecated in favor of `torch.linalg.qr` and the boolean parameter `some` has been "
        "replaced with a string parameter `mode`.\n\nQ, R = torch.qr(A) should be replaced with:\n"
        "Q, R = torch.linalg.qr(A, mode='reduced')\n\nand\n\nQ, R = torch.qr(A, some=False) should be replaced with:\n"
        f"Q, R = torch.linalg.qr(A, mode='complete')\n\nSince `some` was set to {bool(some)}, use "
        f"mode='{'reduced' if some else 'complete'}'.")


def cholesky(input, upper=False, *, out=None):
    """Removed in PyTorch 2.x (torch.linalg.cholesky replaces it): RuntimeError with PyTorch's advice."""
    raise RuntimeError(
        _REMOVED + "`torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`.\nL = torch.cholesky(A) should "
        "be replaced with:\nL = torch.linalg.cholesky(A)\nU = torch.cholesky(A, upper=True) should be replaced with:\n"
        "U = torch.linalg.cholesky(A).mH")


class _GradLink:
    """A lazily made autograd Function: x's values (a copy), differentiable in x and, with a zero
    gradient, in `link`: an output of PyTorch's that requires grad because any input does (as
    triangular_solve's copy of A does when only b requires grad)."""
    fn = None

    @classmethod
    def apply(cls, x, link):
        if cls.fn is None:
            from ..autograd.function import Function

            class GradLink(Function):
                @staticmethod
                def forward(ctx, value, other):
                    return value.clone()

                @staticmethod
                def backward(ctx, grad):
                    return grad, None

            cls.fn = GradLink
        return cls.fn.apply(x, link)


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, a copy of A) with A X = b (A^T X = b when ``transpose``; b is ``input``) for A's triangle,
    both of the batch shape b and A broadcast to; deprecated in PyTorch (warning once), whose
    torch.linalg.solve_triangular takes A first. The copy of A is differentiable (its gradient goes
    to A) wherever b or A requires grad, as PyTorch's."""
    from .._tensor import return_types
    b = input
    _, _, upper, transpose, unitriangular = _parse(
        "triangular_solve", ("input", b, "Tensor", 1), ("A", A, "Tensor", 2), ("upper", upper, "bool", 3),
        ("transpose", transpose, "bool", 4), ("unitriangular", unitriangular, "bool", 5))
    if not _warned:
        _warned.append(True)
        warnings.warn(_TRIANGULAR_SOLVE_WARNING, UserWarning, stacklevel=2)
    for name, t in (("b", b), ("A", A)):
        if t.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{t.dim()} dimensions instead")
    if b.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_scalar_name(b.dtype)} and "
                           f"A of type {_scalar_name(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    coefficients = A.transpose(-2, -1) if transpose else A
    x = _C.linalg_solve_triangular(coefficients, b, upper=upper != transpose, unitriangular=unitriangular)
    batch = list(x.shape[:-2])
    copy = A.expand(batch + list(A.shape[-2:])).clone()
    if not copy.requires_grad and b.requires_grad and _C.is_grad_enabled():
        copy = _GradLink.apply(copy, b)
    return return_types.triangular_solve(x, copy)
