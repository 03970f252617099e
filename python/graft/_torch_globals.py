"""The ``torch.*`` globals that PyTorch checkpoints name, and graft's objects for them.

A pickle written by torch.save calls ``torch._utils._rebuild_tensor_v2`` with a storage, names
storage classes (``torch.FloatStorage``), dtypes (``torch.float32``), ``torch.Size``,
``torch.device`` and ``torch.nn.parameter.Parameter``. This module gives each such name graft's
object (the rebuild functions are implemented here), in both directions: graft's pickler writes
these names for graft's objects, so that PyTorch reads the file, and graft's unpicklers resolve
them to graft's objects. ``default_allowed()`` is the set of names PyTorch 2.x's weights-only
unpickler accepts by default; those graft cannot represent resolve to an error that says why.
See docs/checkpoints.md ("PyTorch's format")."""
import _codecs
import collections
import functools
import importlib
import pickle

from . import _C

INT64_MAX = 2 ** 63 - 1

# graft's dtypes by PyTorch's name
GRAFT_DTYPES = {"float32": _C.float32, "float64": _C.float64, "float16": _C.float16, "bfloat16": _C.bfloat16,
                "int32": _C.int32, "int64": _C.int64, "bool": _C.bool}
_GRAFT_HAS = "graft has bool, int32, int64, float16, bfloat16, float32 and float64"

# storage class -> (bytes per element in the file, the graft dtype it loads as, how the bytes
# become that dtype: None when they are its bytes, else the conversion; every one is exact)
_STORAGE_LAYOUTS = {
    "FloatStorage": (4, "float32", None), "DoubleStorage": (8, "float64", None),
    "LongStorage": (8, "int64", None), "IntStorage": (4, "int32", None), "BoolStorage": (1, "bool", "bool"),
    "HalfStorage": (2, "float16", None), "BFloat16Storage": (2, "bfloat16", None),
    "ShortStorage": (2, "int32", "int16"), "CharStorage": (1, "int32", "int8"), "ByteStorage": (1, "int32", "uint8"),
}
# storage classes PyTorch has and graft cannot load, with their dtype
_UNLOADABLE_STORAGES = {
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128", "QUInt8Storage": "quint8",
    "QInt8Storage": "qint8", "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
# graft dtype -> the storage class PyTorch names it by
STORAGE_FOR_DTYPE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                     "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                     "bool": "BoolStorage"}

_OTHER_DTYPES = ("complex32", "complex64", "complex128", "bcomplex32", "uint8", "int8", "int16",
                 "uint16", "uint32", "uint64", "quint8", "qint8", "qint32", "quint4x2", "quint2x4", "bits1x8",
                 "bits2x4", "bits4x2", "bits8", "bits16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
                 "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2") + tuple(
                     f"{kind}{n}" for kind in ("uint", "int") for n in range(1, 8))
_TENSOR_TYPES = ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16")
_QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
             "per_channel_affine_float_qparams")


def dtype_name(dtype):
    """'float32' for graft.float32."""
    return str(dtype).rsplit(".", 1)[-1]


class StorageType:
    """A PyTorch storage class named in a checkpoint (``torch.FloatStorage``): what its elements
    are in the file and which graft dtype they load as (``dtype`` is None when graft cannot)."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        layout = _STORAGE_LAYOUTS.get("ByteStorage" if name == "UntypedStorage" else name)
        self.itemsize, graft_name, self.convert = layout if layout else (None, None, None)
        self.dtype = GRAFT_DTYPES[graft_name] if graft_name else None
        self.file_dtype = _UNLOADABLE_STORAGES.get(name) or (self.convert or graft_name)

    def __repr__(self):
        return f"{self.module}.{self.name}"


class LoadedStorage:
    """A storage read from a checkpoint: a 1-D graft tensor of its elements. Tensors rebuilt
    from it are views of that tensor's memory (views saved from one storage share it again)."""

    def __init__(self, tensor, storage_type):
        self.tensor = tensor
        self.storage_type = storage_type
        self.numel = tensor.numel()

    def __repr__(self):
        return f"<storage {self.storage_type!r} of {self.numel} elements>"


class _Missing:
    """A name PyTorch's checkpoints may use that graft has no object for: resolving it raises."""

    def __init__(self, path, error, message):
        self.path, self.error, self.message = path, error, message

    def raise_(self):
        """Raises the error that says what graft lacks."""
        raise self.error(self.message)


def _missing_dtype(path):
    """A dtype graft does not have."""
    return _Missing(path, TypeError, f"graft.load: the file uses {path}, a dtype graft does not have ({_GRAFT_HAS}; "
                                     "int8, uint8 and int16 storages are widened on load)")


def _missing(path, what):
    """A torch.* object graft does not implement."""
    return _Missing(path, RuntimeError, f"graft.load: the file uses {path} ({what}), which graft does not implement")


def check_geometry(size, stride, offset, storage_numel=None, itemsize=1):
    """Validates a tensor's geometry against its storage as PyTorch's ``set_`` does, with the
    same errors; returns (size, stride, offset, the storage elements it needs)."""
    if not isinstance(size, (tuple, list)) or not all(type(s) is int for s in size):
        raise TypeError(f"set_(): argument 'size' must be tuple of ints, but found {_describe(size)}")
    if not isinstance(stride, (tuple, list)) or not all(type(s) is int for s in stride):
        raise TypeError(f"set_(): argument 'stride' must be tuple of ints, but found {_describe(stride)}")
    if type(offset) is not int:
        raise TypeError(f"set_(): argument 'storage_offset' must be int, not {type(offset).__name__}")
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length ({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    numel = 1
    for s in size:
        numel *= s
        if s < 0 or numel > INT64_MAX:
            raise RuntimeError("numel: integer multiplication overflow")
    span = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if numel else 0
    if any(st < 0 for st in stride) or max(span, 1) * itemsize > INT64_MAX or (offset + span) * itemsize > INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    needed = offset + span if numel else 0
    if storage_numel is not None and needed > storage_numel:
        raise RuntimeError("Trying to resize storage that is not resizable")
    return tuple(size), tuple(stride), offset, needed


def _describe(value):
    """What in a size or stride is not an int, as PyTorch's argument errors say."""
    if isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            if type(v) is not int:
                return f"element of type {type(v).__name__} at pos {i}"
    return f"type {type(value).__name__}"


# ---- the rebuild functions (PyTorch's torch._utils names; graft's implementations) ----

def _rebuild_tensor(storage, storage_offset, size, stride):
    """A tensor over ``storage``'s memory (no copy), validated as PyTorch's ``set_`` validates."""
    if not isinstance(storage, LoadedStorage):
        raise TypeError(f"graft.load: a tensor's storage must be a storage from the file, not {type(storage).__name__}")
    size, stride, offset, _ = check_geometry(size, stride, storage_offset, storage.numel, storage.tensor.dtype.itemsize)
    return storage.tensor.as_strided(size, stride, offset).detach()


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """torch._utils._rebuild_tensor_v2: what torch.save writes for every tensor. Backward hooks
    (PyTorch never saves any) and metadata (conjugate/negative bits) are not kept."""
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _parameter_class():
    """graft.nn.Parameter (imported late: graft.nn imports this package's modules)."""
    from .nn.parameter import Parameter
    return Parameter


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """torch._utils._rebuild_parameter: an nn.Parameter sharing ``data``'s memory."""
    if not isinstance(data, _C.Tensor):
        raise TypeError(f"graft.load: a Parameter's data must be a tensor, not {type(data).__name__}")
    return _parameter_class()(data, bool(requires_grad))


def _set_obj_state(obj, state):
    """Sets the attributes a pickled object's state holds ({name: value} or (dict, slots))."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for part in (dict_state, slots_state):
        if part:
            if not isinstance(part, dict) or not all(isinstance(k, str) for k in part):
                raise RuntimeError(f"Invalid serialized state: {state}")
            for k, v in part.items():
                setattr(obj, k, v)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: a Parameter with attributes set."""
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor with attributes (or of a subclass)."""
    ret = func(*args)
    if type(ret) is not new_type:
        raise RuntimeError(f"graft.load: the file holds a tensor of type {new_type!r}; graft rebuilds torch.Tensor "
                           "and torch.nn.Parameter only")
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None:
        setstate(ret, state)
        return ret
    return _set_obj_state(ret, state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """torch._utils._rebuild_meta_tensor_no_storage: a tensor on the meta device."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"graft.load: a meta tensor's dtype must be a dtype, not {type(dtype).__name__}")
    size, stride, _, needed = check_geometry(size, stride, 0, None, dtype.itemsize)
    t = _C.empty(needed, dtype=dtype, device="meta").as_strided(size, stride, 0).detach()
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    """torch._utils._rebuild_device_tensor_from_cpu_tensor: ``data`` moved to ``device``."""
    if not isinstance(data, _C.Tensor):
        raise TypeError(f"graft.load: expected a tensor, not {type(data).__name__}")
    t = data.to(dtype=dtype, device=device)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_device_tensor_from_numpy(data, dtype, device, requires_grad):
    """torch._utils._rebuild_device_tensor_from_numpy: a numpy array as a tensor on ``device``."""
    t = _C.from_numpy(data).to(dtype=dtype, device=device)
    return t.requires_grad_(True) if requires_grad else t


def _bytearray(*args):
    """builtins.bytearray as pickles call it (from bytes or a str and its encoding); a size
    (``bytearray(10**12)``), which no pickle writes, is refused rather than allocated."""
    if args and not isinstance(args[0], (bytes, str)):
        raise pickle.UnpicklingError(f"bytearray() from {type(args[0]).__name__} is not allowed when loading")
    return bytearray(*args)


_REBUILDERS = {f.__name__: f for f in (
    _rebuild_tensor, _rebuild_tensor_v2, _rebuild_parameter, _rebuild_parameter_with_state,
    _rebuild_meta_tensor_no_storage, _rebuild_device_tensor_from_cpu_tensor, _rebuild_device_tensor_from_numpy)}


@functools.lru_cache(maxsize=1)
def default_allowed():
    """{'module.name': object} for every global PyTorch 2.x's weights-only unpickler allows by
    default; a _Missing stands for one graft has no object for."""
    from ._tensor import Size
    rc = {"collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
          "torch.nn.parameter.Parameter": _parameter_class(), "torch.Size": Size, "torch.Tensor": _C.Tensor,
          "torch.device": _C.device, "_codecs.encode": _codecs.encode, "builtins.bytearray": _bytearray,
          "builtins.set": set, "builtins.complex": complex,
          "torch.serialization._get_layout": _missing("torch.serialization._get_layout", "sparse layouts"),
          "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2}
    for name in tuple(GRAFT_DTYPES) + _OTHER_DTYPES:
        rc[f"torch.{name}"] = GRAFT_DTYPES.get(name) or _missing_dtype(f"torch.{name}")
    for module, kinds in (("torch", ("Tensor", "Storage")), ("torch.cuda", ("Tensor", "Storage")),
                          ("torch.sparse", ("Tensor",)), ("torch.cuda.sparse", ("Tensor",))):
        for kind in kinds:
            for t in _TENSOR_TYPES + (("ComplexFloat", "ComplexDouble") if kind == "Storage" else ()):
                if "sparse" in module and t == "Bool":
                    continue
                path = f"{module}.{t}{kind}"
                rc[path] = StorageType(module, t + kind) if kind == "Storage" else _missing(path, "legacy tensor type")
    for q in ("QUInt8", "QInt8", "QInt32", "QUInt4x2", "QUInt2x4"):
        rc[f"torch.{q}Storage"] = StorageType("torch", f"{q}Storage")
    rc["torch.storage.UntypedStorage"] = StorageType("torch.storage", "UntypedStorage")
    rc["torch.storage.TypedStorage"] = _missing("torch.storage.TypedStorage", "a storage object")
    for q in _QSCHEMES:
        rc[f"torch.{q}"] = _missing(f"torch.{q}", "quantization")
    for name, what in (("_rebuild_qtensor", "quantized tensors"), ("_rebuild_sparse_tensor", "sparse tensors"),
                       ("_rebuild_wrapper_subclass", "tensor subclasses"),
                       ("_rebuild_tensor_v3", "tensors of dtypes without a storage class")):
        rc[f"torch._utils.{name}"] = _missing(f"torch._utils.{name}", what)
    for name, f in _REBUILDERS.items():
        rc[f"torch._utils.{name}"] = f
    return rc


def resolve(value):
    """``value`` from default_allowed(), raising if it is a _Missing."""
    if isinstance(value, _Missing):
        value.raise_()
    return value


@functools.lru_cache(maxsize=1)
def _torch_paths():
    """id(graft object) -> (module, name) PyTorch knows it by, for graft's pickler."""
    from ._tensor import Size
    out = {id(obj): tuple(path.rsplit(".", 1)) for path, obj in default_allowed().items()
           if not isinstance(obj, _Missing) and not path.startswith(("builtins.", "_codecs.", "collections."))
           and not isinstance(obj, StorageType) and not isinstance(obj, _C.dtype)}
    out[id(Size)] = ("torch", "Size")
    return out


def torch_path(obj):
    """(module, name) under which a checkpoint names the graft object ``obj`` (as PyTorch
    names its counterpart), or None for an object that is not graft's."""
    if isinstance(obj, StorageType):
        return obj.module, obj.name
    if isinstance(obj, _C.dtype):
        return "torch", dtype_name(obj)
    known = _torch_paths().get(id(obj))
    if known is not None:
        return known
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and (module == "graft" or module.startswith("graft.")):
        return "torch" + module[len("graft"):], getattr(obj, "__qualname__", None) or obj.__name__
    return None


def graft_object(module, name):
    """The graft object for ``torch.<...>.name`` outside default_allowed() (``torch.nn.modules.
    linear.Linear`` -> graft.nn.modules.linear.Linear), for loads with weights_only=False."""
    try:
        obj = importlib.import_module("graft" + module[len("torch"):])
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise RuntimeError(f"graft.load: the file uses {module}.{name}, which graft does not have") from None
    return obj
