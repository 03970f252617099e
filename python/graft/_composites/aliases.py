"""Elementwise aliases: positive (unary +), rsub (other - alpha * input), and the table of PyTorch's
arc* names for graft's inverse trigonometric functions (arccos for acos, ...)."""
from .. import _C
from ._common import Tensor, _accepts_number, _check_tensor, _invalid_combination, _number_arg


def positive(input):
    """input itself (unary +); not for bool tensors."""
    if _check_tensor("positive", input).dtype == _C.bool:
        raise NotImplementedError("The `+` operator, on a bool tensor is not supported.")
    return input


_RSUB_OVERLOADS = ("Tensor input, Tensor other, *, Number alpha = 1", "Tensor input, Number other, Number alpha = 1")


def rsub(input, other, *args, alpha=None):
    """other - alpha * input (``other`` a tensor or a number; alpha positional only after a number)."""
    given = args[0] if len(args) == 1 else alpha
    if not (isinstance(input, Tensor) and (isinstance(other, Tensor) or _accepts_number(other))
            and len(args) <= 1 and not (args and (alpha is not None or isinstance(other, Tensor)))
            and (given is None or _accepts_number(given))):
        raise _invalid_combination("rsub", (input, other) + args, _RSUB_OVERLOADS,
                                   None if alpha is None else {"alpha": alpha})
    if not isinstance(other, Tensor):
        other = _number_arg("rsub", "other", other)
    alpha = 1 if given is None else _number_arg("rsub", "alpha", given)
    other_bool = other.dtype == _C.bool if isinstance(other, Tensor) else isinstance(other, bool)
    if input.dtype == _C.bool and other_bool:
        raise NotImplementedError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
                                  "or `logical_xor()` operator instead.")
    if input.dtype == _C.bool or other_bool:
        raise NotImplementedError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                                  "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return _C.sub(other, input, alpha=alpha)


# PyTorch's arc* names of the inverse trigonometric functions
_ALIASES = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arccosh": "acosh", "arcsinh": "asinh",
            "arctanh": "atanh", "arctan2": "atan2"}
