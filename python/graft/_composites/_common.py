"""The helpers the composites share: graft's module and Tensor, PyTorch's dtype names for messages,
dim wrapping, argument checks as PyTorch's argument parser makes them (tensors, ints, bools,
numbers, int lists: its TypeErrors, and RuntimeError for an int beyond int64), clamped slicing and
the "invalid combination of arguments" and "missing argument" errors."""
import numbers
import operator
import sys

from .. import _C
from .._tensor import Size
from .._tensor_types import _type_name

_graft = sys.modules[__package__.rpartition(".")[0]]
Tensor = _C.Tensor

# PyTorch's ScalarType names, as its messages print a dtype ("expected ... but got Float")
_SCALAR_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half", _C.bfloat16: "BFloat16",
                 _C.int64: "Long", _C.int32: "Int", _C.bool: "Bool"}
_FLOATS = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _scalar_name(dtype):
    return _SCALAR_NAMES.get(dtype, str(dtype))


def _fmt(value):
    """A number as C++'s ostream prints a double (PyTorch's messages): 1.5, -1, 1e-07."""
    return "%g" % value if isinstance(value, float) else str(value)


def _wrap_dim(dim, ndim, wrap_scalar=True):
    """``dim`` in [0, ndim) (a 0-d tensor counts as 1-d when ``wrap_scalar``), with PyTorch's IndexErrors."""
    dim = operator.index(dim)
    if ndim <= 0:
        if not wrap_scalar:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        ndim = 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _type_error(fname, name, expected, value, pos=None):
    """PyTorch's parser's TypeError for an argument of another type (``pos``: where given positionally)."""
    where = f" (position {pos})" if pos else ""
    return TypeError(f"{fname}(): argument '{name}'{where} must be {expected}, not {_type_name(value)}")


def _check_tensor(fname, value, name="input", pos=1):
    if not isinstance(value, Tensor):
        raise _type_error(fname, name, "Tensor", value, pos)
    return value


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _accepts_int(value):
    """Whether PyTorch's parser takes ``value`` as an int: a Python (or numpy) int, not a bool, or a
    0-dim integer tensor."""
    if isinstance(value, Tensor):
        return value.dim() == 0 and not value.is_floating_point() and value.dtype != _C.bool
    return _is_int(value)


def _accepts_number(value):
    """Whether PyTorch's parser takes ``value`` as a Number (a Scalar): a bool, int or float, or a
    0-dim tensor that does not require grad."""
    if isinstance(value, Tensor):
        return value.dim() == 0 and not value.requires_grad
    return isinstance(value, numbers.Real)


def _int64(value):
    """``value`` (an int, or a 0-dim integer tensor) as an int, RuntimeError beyond int64 as PyTorch's parser."""
    value = int(value.item()) if isinstance(value, Tensor) else int(value)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise RuntimeError("Overflow when unpacking long")
    return value


def _int_arg(fname, name, value, pos=None, optional=False):
    """An ``int`` argument as PyTorch's parser takes it (an ``int?`` when ``optional``: None passes)."""
    if optional and value is None:
        return None
    if not _accepts_int(value):
        raise _type_error(fname, name, "int", value, pos)
    return _int64(value)


def _number_arg(fname, name, value, pos=None):
    """A ``Scalar`` argument as a Python number (a 0-dim tensor's value; an int beyond int64 refused)."""
    if not _accepts_number(value):
        raise _type_error(fname, name, "Number", value, pos)
    if isinstance(value, Tensor):
        return value.item()
    return _int64(value) if _is_int(value) else value


def _is_index(value, strict):
    """Whether PyTorch's parser takes ``value`` as an element of a list of ints: an int, a one-element
    integer tensor, and after the first element (``strict`` False) a bool too."""
    if isinstance(value, Tensor):
        return value.numel() == 1 and not value.is_floating_point() and value.dtype != _C.bool
    return _is_int(value) or (not strict and isinstance(value, bool))


def _is_int_list(value):
    return isinstance(value, (tuple, list, Size)) and all(_is_index(v, i == 0) for i, v in enumerate(value))


def _int_list(fname, name, value, pos, single=True):
    """An int (when ``single``) or a sequence of ints as a list (PyTorch's IntArrayRef), with
    PyTorch 1.13's TypeErrors for another type, an element of another type or one beyond int64."""
    if single and _accepts_int(value):
        return [_int64(value)]
    if not isinstance(value, (tuple, list, Size)) or (value and not _is_index(value[0], True)):
        raise _type_error(fname, name, "tuple of ints", value, pos)
    out = []
    for i, v in enumerate(value):
        v = int(v.item()) if isinstance(v, Tensor) and _is_index(v, False) else v
        if not _is_index(v, False) or not _INT64_MIN <= v <= _INT64_MAX:
            raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{_type_name(v)} at pos {i + 1}")
        out.append(int(v))
    return out


def _varargs_ints(args, fname, name):
    """A method's ints given as varargs (x.tile(2, 1)) or as one sequence (x.tile((2, 1)))."""
    if not args:
        raise _missing(fname, name)
    if len(args) == 1 and not _accepts_int(args[0]):
        return args[0]
    return list(args)  # (checked as a list of ints by the function)


_EXPECTED = {"int": "int", "bool": "bool", "Number": "Number", "Tensor": "Tensor", "dtype": "torch.dtype",
             "ints": "tuple of ints", "int[]": "tuple of ints"}


def _accepts(value, kind):
    """Whether PyTorch's parser matches ``value`` to a parameter of ``kind`` ('int', 'bool', 'Number',
    'Tensor', 'dtype', 'ints': an int or a list of ints, 'int[]': a list of ints; a trailing '?'
    allows None). Of a list only the first element is checked, as PyTorch's parser does."""
    if value is None and kind.endswith("?"):
        return True
    kind = kind.rstrip("?")
    if kind in ("ints", "int[]"):
        if kind == "ints" and _accepts_int(value):
            return True
        return isinstance(value, (tuple, list, Size)) and (not value or _is_index(value[0], True))
    return {"int": _accepts_int, "bool": lambda v: isinstance(v, bool), "Number": _accepts_number,
            "Tensor": lambda v: isinstance(v, Tensor), "dtype": lambda v: isinstance(v, _C.dtype)}[kind](value)


def _parse(fname, *params):
    """PyTorch's argument parser over ``params``, each (name, value, kind, position or None; kinds as
    _accepts): the TypeError for the first argument of another type, then the values unpacked in
    order: ints within int64 (else RuntimeError), numbers out of 0-dim tensors, int lists as lists."""
    for name, value, kind, pos in params:
        if not _accepts(value, kind):
            raise _type_error(fname, name, _EXPECTED[kind.rstrip("?")], value, pos)
    values = []
    for name, value, kind, pos in params:
        kind = kind.rstrip("?")
        if value is not None and kind == "int":
            value = _int64(value)
        elif value is not None and kind == "Number":
            value = _number_arg(fname, name, value, pos)
        elif value is not None and kind in ("ints", "int[]"):
            value = _int_list(fname, name, value, pos, single=kind == "ints")
        values.append(value)
    return values


# the most tensors a split (or combinations' index grid) builds: PyTorch makes them all, running out
# of memory (std::bad_alloc) far below its vector's limit of 2 ** 60; graft refuses such counts at
# once instead of looping over them
_MAX_PIECES = 2 ** 24


def _check_pieces(count):
    """RuntimeError where building ``count`` tensors cannot finish: PyTorch's text beyond its
    vector's limit, below it graft's own (PyTorch fails with std::bad_alloc)."""
    if count > 2 ** 60:
        raise RuntimeError("cannot create std::vector larger than max_size()")
    if count > _MAX_PIECES:
        raise RuntimeError(f"cannot build {count} tensors: more than graft's limit of {_MAX_PIECES} (PyTorch runs "
                           "out of memory: std::bad_alloc)")


def _slice(t, dim, start=None, end=None):
    """t[..., start:end] along ``dim`` (a view), with PyTorch's slice clamping (step 1)."""
    size = t.shape[dim]
    start = 0 if start is None else start
    end = size if end is None else end
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return t.narrow(dim, start, end - start)


def _invalid_combination(fname, args, overloads, kwargs=None):
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in (kwargs or {}).items()])
    lines = "".join(f" * ({o})\n" for o in overloads)
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + lines)


def _missing(fname, name):
    return TypeError(f'{fname}() missing 1 required positional arguments: "{name}"')
