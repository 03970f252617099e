"""dtype composites: PyTorch's type promotion (promote_types, result_type), can_cast, the
predicates is_complex, is_signed, is_same_size and is_nonzero, and the constants e, pi, inf, nan."""
import math
import numbers

from .. import _C
from .._tensor_types import _type_name
from ._common import Tensor, _FLOATS, _check_tensor, _int64, _invalid_combination

# the constants torch has (torch.e, torch.pi, torch.inf, torch.nan)
e, pi, inf, nan = math.e, math.pi, math.inf, math.nan


def _category(dtype):
    if dtype == _C.bool:
        return 0
    return 2 if dtype in _FLOATS else 1


_FLOAT_RANK = {_C.float16: 0, _C.bfloat16: 0, _C.float32: 1, _C.float64: 2}


def _promote(a, b):
    if a is None or a == b:
        return b
    if b is None:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 1:
        return _C.int64 if _C.int64 in (a, b) else _C.int32
    if {a, b} == {_C.float16, _C.bfloat16}:
        return _C.float32
    return a if _FLOAT_RANK[a] > _FLOAT_RANK[b] else b


def _check_dtype(fname, value, name, pos):
    if not isinstance(value, _C.dtype):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be torch.dtype, not {_type_name(value)}")


def promote_types(type1, type2):
    """The smallest dtype neither argument's values lose precision in (torch.promote_types)."""
    _check_dtype("promote_types", type1, "type1", 1)
    _check_dtype("promote_types", type2, "type2", 2)
    return _promote(type1, type2)


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` to ``to``: not float to integer, not a
    non-bool to bool."""
    _check_dtype("can_cast", from_, "from", 1)
    _check_dtype("can_cast", to, "to", 2)
    if _category(from_) == 2 and _category(to) == 1:
        return False
    return not (from_ != _C.bool and to == _C.bool)


def _combine(higher, lower):
    if higher is None:
        return lower
    if _category(higher) == 2:
        return higher
    if higher == _C.bool or (lower is not None and _category(lower) == 2):
        return _promote(higher, lower)
    return higher


_RESULT_TYPE_SIGNATURES = ((("tensor", True), ("other", True)), (("scalar", False), ("tensor", True)),
                           (("tensor", True), ("other", False)), (("scalar1", False), ("scalar2", False)))


def _bind_result_type(args, kwargs):
    """result_type's two arguments, bound as PyTorch's parser binds them to one of its overloads
    (keywords by each overload's names; True marks a Tensor, False a Number), else None."""
    for signature in _RESULT_TYPE_SIGNATURES:
        names = [name for name, _ in signature]
        if len(args) > 2 or sorted(kwargs) != sorted(names[len(args):]):
            continue
        values = list(args) + [kwargs[name] for name in names[len(args):]]
        if all(isinstance(v, Tensor) if is_tensor else isinstance(v, numbers.Real) and not isinstance(v, Tensor)
               for v, (_, is_tensor) in zip(values, signature)):
            return values
    return None


def result_type(*args, **kwargs):
    """result_type(tensor, other): the dtype an arithmetic op of the two arguments (tensors or
    numbers) gives: tensors with dims rank over 0-d tensors, which rank over Python numbers, unless
    a lower rank has a higher kind."""
    values = _bind_result_type(args, kwargs)
    if values is None:
        raise _invalid_combination("result_type", args, (
            "Tensor tensor, Tensor other", "Number scalar, Tensor tensor", "Tensor tensor, Number other",
            "Number scalar1, Number scalar2"), kwargs)
    results = {"dim": None, "zero": None, "wrapped": None}
    for arg in values:
        if isinstance(arg, Tensor):
            key, dtype = ("dim" if arg.dim() > 0 else "zero"), arg.dtype
        elif isinstance(arg, bool):
            key, dtype = "wrapped", _C.bool
        elif isinstance(arg, numbers.Integral):
            _int64(arg)  # PyTorch's parser refuses an int beyond int64
            key, dtype = "wrapped", _C.int64
        else:
            key, dtype = "wrapped", _C.get_default_dtype()
        results[key] = _promote(results[key], dtype)
    return _combine(results["dim"], _combine(results["zero"], results["wrapped"]))


def is_complex(input):
    """Whether input's dtype is complex (never, in graft)."""
    return _check_tensor("is_complex", input).is_complex()


def is_signed(input):
    """Whether input's dtype is signed (every graft dtype but bool)."""
    return _check_tensor("is_signed", input).dtype.is_signed


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    _check_tensor("is_same_size", input)
    _check_tensor("is_same_size", other, "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_nonzero(input):
    """Whether the single value of a one-element tensor is nonzero."""
    return bool(_check_tensor("is_nonzero", input))
