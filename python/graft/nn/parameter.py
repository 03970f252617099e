"""graft.nn.Parameter: a tensor that a Module registers as one of its parameters; and the lazy
modules' placeholders, UninitializedParameter and UninitializedBuffer (torch.nn.parameter),
which hold no data until ``materialize(shape)`` gives them their shape."""
from .. import _C


class Parameter(_C.Tensor):
    """A leaf tensor that shares ``data``'s storage, requires grad by default and is tagged
    as a parameter in the allocator. Assigning one to a Module attribute registers it.
    Operations on a Parameter return plain tensors, as in PyTorch."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        _C.Tensor.__init__(self, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    def __reduce_ex__(self, protocol):
        # pickled as its data and flag; rebuilt by the constructor
        return (Parameter, (self.detach(), self.requires_grad))


# The methods an uninitialized tensor still takes (PyTorch's UninitializedTensorMixin._allowed_methods):
# conversions of its dtype and device, copy_, size() and the dtype questions. Properties (dtype, device,
# requires_grad, grad, data, is_leaf, ...) stay readable too, except ``shape``.
_ALLOWED_METHODS = frozenset({
    "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char", "short", "int", "long",
    "cuda", "cpu", "to", "get_device", "bfloat16",
})
# The operators, whose implicit calls bypass __getattribute__: each gets a refusing stub on the class.
_OPERATORS = (
    "__abs__", "__add__", "__and__", "__array__", "__bool__", "__dlpack__", "__eq__", "__float__", "__floordiv__",
    "__ge__", "__getitem__", "__gt__", "__iadd__", "__iand__", "__ifloordiv__", "__imod__", "__imul__", "__index__",
    "__int__", "__invert__", "__ior__", "__ipow__", "__isub__", "__iter__", "__itruediv__", "__ixor__", "__le__",
    "__len__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__", "__pow__",
    "__radd__", "__rand__", "__rfloordiv__", "__rmatmul__", "__rmod__", "__rmul__", "__ror__", "__rpow__",
    "__rsub__", "__rtruediv__", "__rxor__", "__setitem__", "__sub__", "__truediv__", "__xor__",
)
_refused_methods = None  # the public methods of graft.Tensor an uninitialized tensor refuses (built on first use)


def _uninitialized_use(cls, name):
    return ValueError(
        f"Attempted to use an uninitialized parameter in <method '{name}' of 'graft.Tensor' objects>. This error "
        "happens when you are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call `forward` with a dummy batch to "
        "initialize the parameters before calling torch functions")


def _refused():
    global _refused_methods
    if _refused_methods is None:
        names = set()
        for name in dir(_C.Tensor):
            if name.startswith("_") or name in _ALLOWED_METHODS:
                continue
            attr = next(k.__dict__[name] for k in _C.Tensor.__mro__ if name in k.__dict__)
            if callable(attr) and not isinstance(attr, type):  # methods, not properties
                names.add(name)
        _refused_methods = frozenset(names)
    return _refused_methods


def _refusing_operator(name):
    def refuse(self, *args, **kwargs):
        raise _uninitialized_use(type(self), name)
    refuse.__name__ = name
    return refuse


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: an empty tensor of the dtype and
    device the materialized one will take. Its methods (but the conversions, ``size`` and
    ``copy_``) and operators raise PyTorch's ValueError, ``shape`` raises its RuntimeError; graft's
    C++ functions given one see an empty tensor (graft has no __torch_function__ to intercept them)."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor ``shape`` (uninitialized memory) on its device with its dtype, or the
        given ones, and turns it into ``cls_to_become`` in place."""
        data = _C.Tensor.__getattribute__(self, "data")
        device = data.device if device is None else device
        dtype = data.dtype if dtype is None else dtype
        self.data = _C.empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` "
            "to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __getattribute__(self, name):
        if name in _refused() and name not in UninitializedTensorMixin.__dict__:
            cls = type(self)

            def refuse(*args, **kwargs):
                raise _uninitialized_use(cls, name)
            return refuse
        return super().__getattribute__(name)

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            data = _C.Tensor.__getattribute__(self, "data")
            memo[id(self)] = type(self)(self.requires_grad, data.device, data.dtype)
        return memo[id(self)]

    def __copy__(self):
        return self.__deepcopy__({})

    __hash__ = _C.Tensor.__hash__


for _name in _OPERATORS:
    setattr(UninitializedTensorMixin, _name, _refusing_operator(_name))
del _name


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or an UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's, until its first forward).
    ``materialize(shape)`` turns this very object into a Parameter of that shape, so that an
    optimizer given it before keeps updating it. ``device``/``dtype`` set the ones it will have."""

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, _C.empty(0, device=device, dtype=dtype), requires_grad)


class _MaterializedBuffer(_C.Tensor):
    """What a materialized UninitializedBuffer becomes: graft cannot turn a Python subclass instance
    into the C++ graft.Tensor class in place, so it becomes this plain subclass (lazy modules then
    hold a graft.Tensor sharing its storage, as PyTorch's hold a torch.Tensor)."""


class UninitializedBuffer(UninitializedTensorMixin, _C.Tensor):
    """A buffer whose shape is not known yet (a lazy module's running statistics). ``persistent``
    says whether it goes into state_dict (read by register_buffer's caller, as PyTorch 2.x's)."""

    cls_to_become = _MaterializedBuffer

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        _C.Tensor.__init__(self, _C.empty(0, device=device, dtype=dtype), requires_grad)
        self.persistent = persistent
        self._is_buffer = True
