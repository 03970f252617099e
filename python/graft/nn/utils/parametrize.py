"""graft.nn.utils.parametrize: torch.nn.utils.parametrize for graft. register_parametrization
makes ``module.<name>`` a computed tensor, ``parametrization(original)``: the unconstrained
tensor(s) move to ``module.parametrizations[name]`` (a ParametrizationList holding ``original``,
or ``original0``, ``original1``, ... when ``right_inverse`` returns several tensors), and the
module's class is swapped for a generated ``Parametrized<Class>`` subclass that carries one
property per parametrized name. Also: remove_parametrizations, is_parametrized, the cached()
context manager, type_before_parametrizations and transfer_parametrizations_and_params.

PyTorch moves a tensor's data with ``Tensor.set_``; graft has no ``set_``, so the same effect
(the Parameter object, which optimizers hold, keeps its identity) comes from assigning
``.data``, which may change the shape too."""
import collections.abc
import copy
import copyreg
from contextlib import contextmanager

from ... import _C
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations", "transfer_parametrizations_and_params"]

_Tensor = _C.Tensor

# cached(): how many cached() blocks are open, and (id(module), tensor name) -> computed tensor
_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within this block, each parametrized tensor is computed once, on its first access, and
    the same tensor is returned afterwards (e.g. a weight read at every step of a recurrent
    loop). The values are dropped when the outermost block exits."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _move_data(target, value):
    """PyTorch's ``target.set_(value)``: ``target`` (same Python object) now holds ``value``'s data."""
    if value is target:
        return
    with no_grad():
        target.data = value


def _type_name(obj):
    return type(obj).__name__


class ParametrizationList(ModuleList):
    """The parametrizations registered on one tensor of a module, in order, together with the
    unconstrained tensor(s) they are applied to: ``original`` when the first parametrization's
    ``right_inverse`` returns one tensor (or is missing: the identity), else ``original0``,
    ``original1``, ... It is ``module.parametrizations[name]``; register_parametrization builds
    it, users do not. ``unsafe``: skip the checks that the parametrized tensor keeps the dtype
    and shape of the tensor it replaces."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        new = self._initial_originals(original)
        self.is_tensor = isinstance(new, _Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            # the same object stays registered, so an optimizer that holds it needs no update
            _move_data(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, _Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                                     f"Got element {i} of the sequence with type {_type_name(value)}.")
                if isinstance(original, Parameter):
                    value = Parameter(value)
                value.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)
        if not self.unsafe:
            self._check_forward(original_shape, original_dtype)

    def _initial_originals(self, original):
        """The right inverses of the parametrizations, last first, applied to ``original`` (a
        missing right_inverse, or one that raises NotImplementedError, is the identity)."""
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (_Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {_type_name(new)}")
        return new

    def _check_forward(self, original_shape, original_dtype):
        """forward(right_inverse(original)) must be a tensor of the original's dtype and shape."""
        z = self()
        if not isinstance(z, _Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {_type_name(z)}.")
        if z.dtype != original_dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                             "flag is enabled.\n"
                             f"unparametrized dtype: {original_dtype}\n"
                             f"parametrized dtype: {z.dtype}")
        if z.shape != original_shape:
            raise ValueError("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                             "flag is enabled.\n"
                             f"unparametrized shape: {original_shape}\n"
                             f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Sets the original tensor(s) so that the parametrized tensor becomes ``value``: the
        parametrizations' right_inverse methods, last registered first, map ``value`` back and
        the result is written into ``original`` (or ``original0``, ``original1``, ...)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {_type_name(module)} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, _Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {_type_name(value)}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                                     f"while `original` has dtype {self.original.dtype}")
                _move_data(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {_type_name(value)}.")
            if len(value) != self.ntensors:
                # "lenght": PyTorch's text, kept as it is
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. "
                                 f"Got a sequence of lenght {len(value)}.")
            for i, tensor in enumerate(value):
                original_i = getattr(self, f"original{i}")
                if not isinstance(tensor, _Tensor):
                    raise ValueError(f"`right_inverse` must return a sequence of tensors. "
                                     f"Got element {i} of type {_type_name(tensor)}")
                if original_i.dtype != tensor.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                                     f"while `original{i}` has dtype {original_i.dtype}")
                _move_data(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _default_deepcopy(self, memo):
    """copy.deepcopy of a parametrized module whose class defines no __deepcopy__: a new
    object of the same (parametrized) class with a deep copy of the instance dict."""
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(type(self)):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module):
    """Gives ``module`` a class of its own, ``Parametrized<Class>`` (a subclass of its class),
    to hold the properties of its parametrized tensors."""
    cls = type(module)
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    """Adds the property ``tensor_name`` to the module's parametrized class: reading it runs the
    parametrizations (once per cached() block), assigning to it calls their right_inverse."""
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(get_parametrized, set_original))


def _check_added_parametrization(module, tensor_name, parametrization):
    """A parametrization added to an already parametrized tensor must map that tensor's dtype
    and shape to themselves, and so must its right_inverse (when it has one)."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, _Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {_type_name(x)}.")
    if x.dtype != y.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         "flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         "flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, _Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {_type_name(z)}")
    if z.dtype != y.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same dtype "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.dtype: {y.dtype}\n"
                         f"returned dtype: {z.dtype}")
    if z.shape != y.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the same shape "
                         f"as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                         f"module.{tensor_name}.shape: {y.shape}\n"
                         f"returned shape: {z.shape}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrizes the parameter or buffer ``tensor_name`` of ``module``: afterwards
    ``module.<tensor_name>`` is ``parametrization(original)``, recomputed on each access
    (gradients flow to the original), and the original lives in
    ``module.parametrizations[tensor_name].original`` (``original0``, ``original1``, ... when the
    parametrization's ``right_inverse`` returns several tensors). ``right_inverse``, when
    present, gives the original's initial value from the current tensor and makes assigning
    ``module.<tensor_name> = value`` possible. Registering again on the same name chains the
    parametrizations. Unless ``unsafe``, the parametrization must keep the tensor's dtype and
    shape. The parametrization takes the module's training mode. Returns ``module``."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_added_parametrization(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe  # once unsafe, the list stays so
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)  # may raise: nothing changed yet
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrized tensor (``tensor_name``: whether that one is)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes register_parametrization on ``tensor_name``: it becomes a plain parameter (or
    buffer) again, holding the current parametrized value (``leave_parametrized``) or the
    original tensor (only possible when there is one original). A single original keeps its
    identity either way. When no parametrized tensor is left the module gets its class back.
    Returns ``module``."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            _move_data(original, value)
    elif leave_parametrized:
        value = getattr(module, tensor_name)  # with grad mode on: does it depend on an original needing grad?
        original = Parameter(value.detach(), value.requires_grad) if value.requires_grad else value.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization (its own class otherwise)."""
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Registers ``from_module``'s parametrizations (of ``tensor_name``, or of every parametrized
    tensor) on ``to_module`` too, creating the tensor there when it lacks it, and makes
    ``to_module``'s originals the very tensors of ``from_module``. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
