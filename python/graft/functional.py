"""The torch functions that PyTorch writes in Python over its C++ ops (torch/functional.py):
their varargs, sublist and string forms over graft's ops. einsum (operands as varargs or a
list; the sublist format), meshgrid (varargs; PyTorch 2.x's warning without ``indexing``),
block_diag and cartesian_prod (varargs), cdist (``compute_mode`` names), tensordot (an int,
a pair of lists or a tensor as ``dims``), unique and unique_consecutive (one tensor or a tuple,
as asked; ``dim`` for unique), and torch.cross's deprecation warning without ``dim``."""
import math
import operator
import warnings

from . import _C

__all__ = ["block_diag", "cartesian_prod", "cdist", "cross", "einsum", "meshgrid", "tensordot", "unique",
           "unique_consecutive"]

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _operands(args):
    """A single list or tuple of tensors given as the one vararg, or the varargs themselves."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def _sublist_equation(args):
    """einsum's sublist format, (op1, sub1, op2, sub2, ..., [out]), as an equation and operands."""
    def term(subs):
        letters = []
        for s in subs:
            if s is Ellipsis:
                letters.append("...")
            else:
                s = operator.index(s)  # a non-integer: TypeError, as PyTorch's int conversion
                if not 0 <= s < 52:
                    raise ValueError("einsum(): expected subscript to be within the range [0, 52)")
                letters.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
        return "".join(letters)
    count = len(args) // 2
    equation = ",".join(term(args[2 * i + 1]) for i in range(count))
    if len(args) % 2 == 1:
        equation += "->" + term(args[-1])
    return equation, [args[2 * i] for i in range(count)]


def einsum(*args):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)``, the operands as varargs or one list, or
    the sublist format ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], _C.Tensor):
        equation, operands = _sublist_equation(args)
        return _C.einsum(equation, operands)
    operands = _operands(args[1:])
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    return _C.einsum(args[0], operands)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 1-D tensors (varargs or one list); ``indexing`` 'ij' (the default, with
    PyTorch's warning when it is not given) or 'xy'."""
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    return tuple(_C.meshgrid(_operands(tensors), indexing))


def block_diag(*tensors):
    """The tensors (0-d, 1-D or 2-D) on the diagonal of one matrix."""
    return _C.block_diag(list(tensors))


def cartesian_prod(*tensors):
    """The cartesian product of 1-D tensors, one row per combination."""
    return _C.cartesian_prod(list(tensors))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distances between the rows of x1 and of x2."""
    if not isinstance(compute_mode, str) or compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _C.cdist(x1, x2, p, _CDIST_MODES[compute_mode])


def tensordot(a, b, dims=2, out=None):
    """The sum of a * b over the last ``dims`` dims of a and the first of b, or over the pairs of
    dims given as two lists (or a [2, k] tensor)."""
    if out is not None:
        raise NotImplementedError("graft.tensordot: out= is not supported")
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist() if dims.dim() > 0 else dims.item()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists")
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    return _C.tensordot(a, b, dims_a, dims_b)


def _returned(values, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def _unique_dim(input, dim, return_inverse, return_counts, consecutive):
    """unique (or unique_consecutive) over the slices of input along dim: the slices sorted
    lexicographically (a stable sort per element position, last first; consecutive: kept in
    order), runs of equal slices kept once."""
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = dim + input.dim() if -input.dim() <= dim < 0 else dim
    if not 0 <= dim < input.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         f"but got {dim}")
    if input.numel() == 0 and input.shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    front = [dim] + [d for d in range(input.dim()) if d != dim]
    back = [front.index(d) for d in range(input.dim())]
    moved = input.permute(front)
    rows = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
    order = _C.arange(rows.shape[0])
    if not consecutive:
        for column in reversed(range(rows.shape[1])):
            order = order[rows[order, column].argsort(stable=True)]
    ranked = rows[order]
    starts = _C.ones(ranked.shape[0], dtype=_C.bool)
    if ranked.shape[0] > 1:
        starts[1:] = (ranked[1:] != ranked[:-1]).any(1)
    group = starts.cumsum(0) - 1
    values = moved[order[starts]].permute(back)
    inverse = _C.zeros(rows.shape[0], dtype=_C.int64).scatter_add(0, order, group)
    counts = _C.zeros(int(starts.sum()), dtype=_C.int64).index_add(0, group, _C.ones_like(group))
    return _returned(values, inverse, counts, return_inverse, return_counts)


def _check_input(name, input):
    """The argument parser's refusal of a non-tensor input."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _check_bools(name, **flags):
    """unique_dim's argument parser: each flag a bool."""
    for arg, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(value).__name__}")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of input, sorted; with return_inverse each element's position among
    them, with return_counts how often each occurs; with dim, the distinct slices along dim."""
    # PyTorch picks what to return by the flags' truth first (a tensor flag: its truth value)
    counted = bool(return_counts)
    shape = (bool(return_inverse), counted)
    _check_input("unique", input)
    if dim is not None:
        _check_bools("unique_dim", sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
        return _unique_dim(input, dim, return_inverse, return_counts, consecutive=False)
    values, inverse, counts = _C.unique(input, sorted, return_inverse, return_counts)
    return _returned(values, inverse, counts, *shape)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """input with each run of equal consecutive elements (or, with dim, of equal consecutive
    slices along dim) kept once."""
    counted = bool(return_counts)
    shape = (bool(return_inverse), counted)
    _check_input("unique_consecutive", input)
    if dim is not None:
        _check_bools("unique_consecutive", return_inverse=return_inverse, return_counts=return_counts)
        return _unique_dim(input, dim, return_inverse, return_counts, consecutive=True)
    values, inverse, counts = _C.unique_consecutive(input, return_inverse, return_counts)
    return _returned(values, inverse, counts, *shape)


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along dim; without dim, the first dim of size 3, with
    PyTorch 2.x's deprecation warning."""
    if out is not None:
        raise NotImplementedError("graft.cross: out= is not supported")
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                      "The default value of dim will change to agree with that of linalg.cross in a future release.",
                      UserWarning, stacklevel=2)
    return _C.cross(input, other, dim)


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    return unique(self, sorted, return_inverse, return_counts, dim)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse, return_counts, dim)


def _tensor_cross(self, other, dim=None):
    return cross(self, other, dim)


_C.Tensor.unique = _tensor_unique
_C.Tensor.unique_consecutive = _tensor_unique_consecutive
_C.Tensor.cross = _tensor_cross
