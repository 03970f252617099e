"""PyTorch's legacy tensor types, in Python: ``Tensor.type()`` (the type's name, or a
conversion), the type objects ``graft.FloatTensor``, ``DoubleTensor``, ``LongTensor``,
``IntTensor`` and ``BoolTensor`` (constructors whose ``isinstance`` checks a tensor's dtype and
device, as PyTorch's metaclass does), and the legacy constructor ``graft.Tensor(...)``;
``HalfTensor`` and ``BFloat16Tensor`` likewise.

graft has no 8- or 16-bit integer dtypes, so their types (``ByteTensor``, ``CharTensor``,
``ShortTensor``) do not exist here; ``Tensor.type('torch.ByteTensor')`` raises NotImplementedError.
"""
import operator
import warnings

from . import _C
from ._tensor import Size

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "BoolTensor"]

# graft's dtypes by the names PyTorch's legacy types give them, and the C++ names of its
# TensorOptions messages
_TYPE_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half", _C.bfloat16: "BFloat16",
               _C.int64: "Long", _C.int32: "Int", _C.bool: "Bool"}
_DTYPE_OF_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}
_CPP_NAMES = {_C.float32: "float", _C.float64: "double", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
              _C.int64: "long int", _C.int32: "int", _C.bool: "bool"}
# PyTorch 2.x's other legacy types (torch/csrc/utils/tensor_types.cpp): dtypes graft does not have
_FOREIGN_NAMES = ("Byte", "Char", "Short")

_graft_type_name = _C.Tensor.type  # the C++ method: 'graft.FloatTensor', for graft's own messages


def _type_string(t):
    """PyTorch's name of a tensor's legacy type: 'torch.FloatTensor', 'torch.meta.LongTensor'."""
    prefix = "torch." if t.device.type == "cpu" else f"torch.{t.device.type}."
    return prefix + _TYPE_NAMES[t.dtype] + "Tensor"


def _parse_type_name(name):
    """(dtype, device type) of a legacy type name, with PyTorch 2.x's map: 'torch.Tensor' is the
    default dtype; 'torch.sparse.X' converts to the dense dtype, as PyTorch's Tensor.type does."""
    if name == "torch.Tensor":
        return _C.get_default_dtype(), "cpu"
    device = "cpu"
    rest = name[len("torch."):] if name.startswith("torch.") else None
    if rest is not None and rest.startswith("cuda."):
        device, rest = "cuda", rest[len("cuda."):]
    if rest is not None and rest.startswith("sparse."):
        rest = rest[len("sparse."):]
        if rest == "BoolTensor":  # PyTorch has no sparse bool type
            rest = None
    if rest is not None and rest.endswith("Tensor") and "." not in rest:
        base = rest[:-len("Tensor")]
        if base in _DTYPE_OF_NAME:
            return _DTYPE_OF_NAME[base], device
        if base in _FOREIGN_NAMES:
            raise NotImplementedError(f"Tensor.type('{name}'): graft has no {base} dtype (graft's dtypes are float32, "
                                      "float64, float16, bfloat16, int64, int32 and bool)")
    raise ValueError(f"invalid type: '{name}'")


def _target_of(dtype):
    """(dtype, device type or None) that Tensor.type(dtype) converts to."""
    if isinstance(dtype, _C.dtype):
        return dtype, None
    if isinstance(dtype, str):
        return _parse_type_name(dtype)
    if isinstance(dtype, type):
        if dtype is _C.Tensor:
            name = "torch.Tensor"
        elif isinstance(dtype, _LegacyTensorType):
            name = "torch." + dtype.__name__
        else:
            name = dtype.__name__
        return _parse_type_name(name)
    raise TypeError("dtype must be a type, str, or dtype object")


_ASYNC_DEPRECATION = ("This overload of type is deprecated:\n\ttype(object dtype, bool async, *, torch.memory_format "
                      "memory_format)\nConsider using one of the following signatures instead:\n\ttype(object dtype, "
                      "bool non_blocking, *, torch.memory_format memory_format)")


def _bind_type_args(args, kwargs):
    """Tensor.type's arguments by name, with PyTorch's TypeErrors."""
    if len(args) > 2:
        raise TypeError(f"type() takes from 0 to 2 positional arguments but {len(args)} were given")
    bound = dict(zip(("dtype", "non_blocking"), args))
    for key, value in kwargs.items():
        if key == "async":  # the deprecated spelling of non_blocking
            warnings.warn(_ASYNC_DEPRECATION, stacklevel=3)
            key = "non_blocking"
        elif key not in ("dtype", "non_blocking", "memory_format"):
            raise TypeError(f"type() got an unexpected keyword argument '{key}'")
        if key in bound:
            raise TypeError(f"type() got multiple values for argument '{key}'")
        bound[key] = value
    non_blocking = bound.get("non_blocking", False)
    if not isinstance(non_blocking, bool):
        where = " (position 2)" if len(args) == 2 else ""
        raise TypeError(f"type(): argument 'non_blocking'{where} must be bool, not {type(non_blocking).__name__}")
    memory_format = bound.get("memory_format")
    if memory_format is not None and not isinstance(memory_format, _C.memory_format):
        raise TypeError(f"type(): argument 'memory_format' must be graft.memory_format, not "
                        f"{type(memory_format).__name__}")
    return bound.get("dtype"), non_blocking, memory_format


def _type(self, *args, **kwargs):
    """type(dtype=None, non_blocking=False, **kwargs) -> str or Tensor

    Without ``dtype``, the name of the tensor's legacy type ('torch.FloatTensor',
    'torch.LongTensor', ...). Otherwise the tensor converted to ``dtype``: a graft dtype, a name
    such as 'torch.LongTensor', or a type object (graft.LongTensor, graft.Tensor); the tensor
    itself when it already has that type. ``non_blocking`` (or the deprecated ``async``) and
    ``memory_format`` are taken as by ``Tensor.to``."""
    dtype, non_blocking, memory_format = _bind_type_args(args, kwargs)
    if dtype is None:
        return _type_string(self)
    target, device = _target_of(dtype)
    options = {"dtype": target, "non_blocking": non_blocking}
    if device is not None:
        options["device"] = device
    if memory_format is not None:
        options["memory_format"] = memory_format
    return self.to(**options)


_C.Tensor.type = _type


def _is_index(o):
    """Whether PyTorch's parser takes `o` as an int where a size may start (THPUtils_checkIndex):
    anything with __index__ but a bool (a 0-d integer tensor, a NumPy integer)."""
    if isinstance(o, bool):
        return False
    try:
        operator.index(o)
    except Exception:  # noqa: BLE001  (PyTorch clears whatever __index__ raised)
        return False
    return True


def _size_element(fname, o, pos):
    """One element of a size argument: an int as __index__ gives it (bools and one-element integer
    tensors count, as in PyTorch); PyTorch's TypeError otherwise or beyond int64."""
    try:
        value = operator.index(o)  # a tensor: an integer one of one element, as in PyTorch
    except Exception:  # noqa: BLE001  (any failure is the wrong type)
        value = None
    if value is None or not -2 ** 63 <= value < 2 ** 63:
        raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, but found element of type "
                        f"{type(o).__name__} at pos {pos}")
    return value


def _type_name(o):
    """A type as PyTorch's argument messages name it: 'int', 'Tensor', 'graft.dtype', 'numpy.ndarray'."""
    cls = type(o)
    if isinstance(o, _C.Tensor):
        return "Tensor"
    if cls.__module__.startswith("graft"):
        return "graft." + cls.__name__
    if cls.__module__ == "builtins" or cls.__flags__ & (1 << 9):  # a heap type's tp_name is its bare name
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _describe(o):
    if isinstance(o, (tuple, list)):
        inner = ", ".join(_type_name(e) for e in o)
        return f"{type(o).__name__} of " + (f"({inner}{',' if len(o) == 1 else ''})" if isinstance(o, tuple)
                                            else f"[{inner}]")
    return _type_name(o)


def _invalid_combination(fname, options, args, kwargs):
    """PyTorch's "received an invalid combination of arguments" message (format_invalid_args in
    torch/csrc/utils/invalid_arguments.cpp) for `options`: (printed signature, parameter names,
    the types each parameter matches) tuples; `*` is a parameter there, as in PyTorch."""
    got = "".join(f"{_type_name(a)}, " for a in args) + "".join(f"{k}={_type_name(v)}, " for k, v in kwargs.items())
    lines = [f"{fname}() received an invalid combination of arguments - got ({got[:-2] if args else got}), "
             "but expected one of:"]
    for printed, names, types in options:
        lines.append(f" * {printed}")
        if len(names) != len(args) + len(kwargs):
            continue
        start = max(len(names) - len(kwargs), 0)
        unmatched = [k for k in kwargs if k not in names[start:]]
        if unmatched:
            lines.append("      didn't match because some of the keywords were incorrect: " + ", ".join(unmatched))
            continue
        given = list(args) + [kwargs[names[i]] for i in range(len(args), len(names))]
        parts = []
        for i, a in enumerate(given):
            text = (f"{names[i]}=" if i >= len(args) else "") + _describe(a)
            parts.append(text if types[i] and isinstance(a, types[i]) else f"!{text}!")
        lines.append("      didn't match because some of the arguments have invalid types: (" + ", ".join(parts) + ")")
    return "\n".join(lines) + "\n"


_NEW_OPTIONS = (  # PyTorch's legacy constructor signatures, as its messages print them
    ("(*, graft.device device)", ("*", "device"), (None, _C.device)),
    ("(graft.Storage storage)", ("storage",), (None,)),
    ("(Tensor other)", ("other",), (_C.Tensor,)),
    ("(tuple of ints size, *, graft.device device)", ("size", "*", "device"), (None, None, _C.device)),
    ("(object data, *, graft.device device)", ("data", "*", "device"), (None, None, _C.device)),
)


def _options_text(dtype, device):
    return (f"TensorOptions(dtype={_CPP_NAMES[dtype]}, device={device}, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _legacy_device(kwargs, args):
    """The device= of a legacy constructor call: None or a CPU device (PyTorch's errors otherwise)."""
    for key in kwargs:
        if key != "device":
            raise TypeError(_invalid_combination("new", _NEW_OPTIONS, args, kwargs))
    device = kwargs.get("device")
    if device is None:
        return None
    if not isinstance(device, (str, int, _C.device)):
        raise TypeError(_invalid_combination("new", _NEW_OPTIONS, args, kwargs))
    device = _C.device(device)
    if device.type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device.type} was passed")
    return device


def _legacy_new(dtype, args, kwargs, any_tensor_dtype=False):
    """PyTorch's legacy constructor (torch.FloatTensor(...), torch.Tensor(...)): no argument, an
    empty tensor; ints (or a graft.Size), an uninitialized tensor of that size; a tensor, an
    alias of it (which must have `dtype` unless `any_tensor_dtype`); otherwise a sequence whose
    data is copied. Always on the CPU."""
    device = _legacy_device(kwargs, args)
    if not args:
        return _C.empty(0, dtype=dtype, device="cpu")
    first = args[0]
    if isinstance(first, _C.Tensor) and len(args) == 1:
        if device is not None:
            raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
                               "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.")
        if not any_tensor_dtype and (first.dtype != dtype or first.device.type != "cpu"):
            raise TypeError(f"expected {_options_text(dtype, 'cpu')} (got {_options_text(first.dtype, first.device)})")
        return first.view(first.shape)  # an alias that keeps the autograd history, as PyTorch's alias()
    if _is_index(first):
        size = [_size_element("new", a, i + 1) for i, a in enumerate(args)]
        return _C.empty(size, dtype=dtype, device="cpu")
    if len(args) > 1:
        raise TypeError(_invalid_combination("new", _NEW_OPTIONS, args, kwargs))
    if isinstance(first, Size):
        return _C.empty([_size_element("new", a, i + 1) for i, a in enumerate(first)], dtype=dtype, device="cpu")
    if not hasattr(type(first), "__getitem__") or isinstance(first, dict):  # PySequence_Check
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
    if isinstance(first, range):
        first = list(first)
    return _C.tensor(first, dtype=dtype, device="cpu")


class _LegacyTensorType(type):
    """The metaclass of graft.FloatTensor & co.: calling one is PyTorch's legacy constructor,
    and isinstance(t, graft.FloatTensor) is true for a float32 tensor on the CPU."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        return _legacy_new(cls.dtype, args, kwargs)


def _legacy_type(name, dtype):
    doc = f"PyTorch's legacy type of {dtype} CPU tensors: a constructor, and an isinstance check."
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__module__": "graft",
                                        "__doc__": doc})


FloatTensor = _legacy_type("FloatTensor", _C.float32)
DoubleTensor = _legacy_type("DoubleTensor", _C.float64)
HalfTensor = _legacy_type("HalfTensor", _C.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _C.bfloat16)
LongTensor = _legacy_type("LongTensor", _C.int64)
IntTensor = _legacy_type("IntTensor", _C.int32)
BoolTensor = _legacy_type("BoolTensor", _C.bool)


# graft.Tensor(...) is the legacy constructor with the default dtype, as torch.Tensor(...) (a
# tensor argument of any dtype is aliased, as PyTorch 1.13 and 2.x do). Subclasses (nn.Parameter)
# keep the C++ constructor Tensor(data, requires_grad).
_cpp_new = _C.Tensor.__new__
_cpp_init = _C.Tensor.__init__


def _tensor_new(cls, *args, **kwargs):
    if cls is _C.Tensor:
        return _legacy_new(_C.get_default_dtype(), args, kwargs, any_tensor_dtype=True)
    return _cpp_new(cls, *args, **kwargs)


def _tensor_init(self, *args, **kwargs):
    if type(self) is not _C.Tensor:  # graft.Tensor(...) itself was made whole by __new__
        _cpp_init(self, *args, **kwargs)


_C.Tensor.__new__ = staticmethod(_tensor_new)
_C.Tensor.__init__ = _tensor_init
