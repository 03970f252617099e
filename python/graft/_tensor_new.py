"""Tensor.new_zeros, new_ones, new_empty, new_full and new_tensor (PyTorch's factories that
take their dtype and device from the tensor they are called on), and the device predicates
PyTorch's tensors have and graft's devices never satisfy (is_xpu, is_mps)."""
import numbers
import warnings

from . import _C
from ._tensor_types import _is_index, _size_element, _type_name

_FACTORY_KEYWORDS = ("dtype", "layout", "device", "pin_memory", "requires_grad")
_NEW_TENSOR_WARNING = (  # PyTorch 2.x's text (1.13 says clone().detach())
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).")


def _bind(fname, positional, keywords, args, kwargs, varargs_size):
    """The arguments of a call by parameter name, with PyTorch's argument-parser TypeErrors. With
    `varargs_size`, ints as the first positional arguments are the size (x.new_zeros(2, 3))."""
    if varargs_size and args and _is_index(args[0]):
        bound = {"size": args}
    else:
        if len(args) > len(positional):
            n = len(positional)
            raise TypeError(f"{fname}() takes {n} positional argument{'s' if n != 1 else ''} but {len(args)} were "
                            "given")
        bound = dict(zip(positional, args))
    for key, value in kwargs.items():
        if key not in positional and key not in keywords:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"{fname}() got multiple values for argument '{key}'")
        bound[key] = value
    missing = [name for name in positional if name not in bound]
    if missing:
        names = ", ".join(f'"{name}"' for name in missing)
        raise TypeError(f"{fname}() missing {len(missing)} required positional arguments: {names}")
    return bound


def _size(fname, value, positional):
    """A size argument (a sequence of ints; ints as varargs come as a tuple) as a list of ints."""
    if isinstance(value, (tuple, list)):
        return [_size_element(fname, e, i + 1) for i, e in enumerate(value)]
    where = " (position 1)" if positional else ""
    raise TypeError(f"{fname}(): argument 'size'{where} must be tuple of ints, not {_type_name(value)}")


def _check_keyword(fname, bound, name, accepts, expected):
    value = bound.get(name)
    if value is not None and not accepts(value):
        raise TypeError(f"{fname}(): argument '{name}' must be {expected}, not {_type_name(value)}")


def _options(self, fname, bound):
    """dtype, device and requires_grad of the result: the tensor's own dtype and device by default."""
    _check_keyword(fname, bound, "dtype", lambda v: isinstance(v, _C.dtype), "graft.dtype")
    _check_keyword(fname, bound, "device", lambda v: isinstance(v, (str, int, _C.device)), "graft.device")
    _check_keyword(fname, bound, "requires_grad", lambda v: isinstance(v, bool), "bool")
    _check_keyword(fname, bound, "pin_memory", lambda v: isinstance(v, bool), "bool")
    options = {"dtype": bound.get("dtype") or self.dtype,
               "device": self.device if bound.get("device") is None else bound["device"]}
    for name in ("layout", "pin_memory"):
        if name in bound:
            options[name] = bound[name]
    return options, bool(bound.get("requires_grad", False))


def _factory(fname, make):
    """A Tensor.new_* method of one size argument (new_zeros, new_ones, new_empty)."""
    def method(self, *args, **kwargs):
        bound = _bind(fname, ("size",), _FACTORY_KEYWORDS, args, kwargs, varargs_size=True)
        size = _size(fname, bound["size"], positional=bool(args))
        options, requires_grad = _options(self, fname, bound)
        return make(size, requires_grad=requires_grad, **options)

    method.__name__ = fname
    method.__doc__ = (f"{fname}(*size, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False)"
                      f" -> Tensor\n\nA tensor as graft.{fname[4:]}(size) of this tensor's dtype and device unless "
                      "given. The size is ints or one sequence of ints.")
    return method


def _is_number(value):
    if isinstance(value, _C.Tensor):
        return value.dim() == 0
    return isinstance(value, numbers.Number)


def new_full(self, *args, **kwargs):
    """new_full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
    pin_memory=False) -> Tensor

    A tensor of `size` filled with `fill_value`, of this tensor's dtype and device unless given."""
    bound = _bind("new_full", ("size", "fill_value"), _FACTORY_KEYWORDS, args, kwargs, varargs_size=False)
    size = _size("new_full", bound["size"], positional=bool(args))
    fill_value = bound["fill_value"]
    if not _is_number(fill_value):
        where = " (position 2)" if len(args) > 1 else ""
        raise TypeError(f"new_full(): argument 'fill_value'{where} must be Number, not {_type_name(fill_value)}")
    options, requires_grad = _options(self, "new_full", bound)
    return _C.full(size, fill_value, requires_grad=requires_grad, **options)


def new_tensor(self, *args, **kwargs):
    """new_tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor

    A new leaf tensor holding a copy of `data` (as graft.tensor), of this tensor's dtype and
    device unless given. A tensor as `data` is copied with a warning, as in PyTorch."""
    bound = _bind("new_tensor", ("data",), ("dtype", "device", "requires_grad"), args, kwargs, varargs_size=False)
    options, requires_grad = _options(self, "new_tensor", bound)
    data = bound["data"]
    if isinstance(data, _C.Tensor):
        warnings.warn(_NEW_TENSOR_WARNING, stacklevel=2)
        result = data.detach().to(**options).clone()
    else:
        result = _C.tensor(data, **options)
    return result.requires_grad_(True) if requires_grad else result


_C.Tensor.new_zeros = _factory("new_zeros", _C.zeros)
_C.Tensor.new_ones = _factory("new_ones", _C.ones)
_C.Tensor.new_empty = _factory("new_empty", _C.empty)
_C.Tensor.new_full = new_full
_C.Tensor.new_tensor = new_tensor
_C.Tensor.is_xpu = property(lambda self: False, doc="False: graft has no XPU device.")
_C.Tensor.is_mps = property(lambda self: False, doc="False: graft has no MPS device.")
