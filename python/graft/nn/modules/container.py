"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict and the deprecated
Container."""
import collections
import collections.abc
import itertools
import operator
import warnings

from ... import _C
from ..parameter import Parameter
from .module import Module, _typename


def _abs_index(idx, size):
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


class Container(Module):
    """Deprecated (everything it did is Module's): adds each keyword argument as a submodule."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class _ModuleSequence(Module):
    """What Sequential and ModuleList share: submodules in order, numbered "0", "1", ..."""

    def _renumber(self):
        self.__dict__["_modules"] = collections.OrderedDict(
            (str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module):
        """Adds ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Removes and returns the module at position ``key``."""
        v = self[key]
        del self[key]
        return v


class Sequential(_ModuleSequence):
    """Calls its modules in order, each on the previous one's output. Built from modules
    (named "0", "1", ...) or from one OrderedDict of named modules."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(collections.OrderedDict(list(self._modules.items())[idx]))
        i = _abs_index(idx, len(self))
        return next(itertools.islice(self._modules.values(), i, None))

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, list(self._modules.keys())[_abs_index(idx, len(self))])
        self._renumber()

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        out = Sequential()
        for m in itertools.chain(self, other):
            out.append(m)
        return out

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(other)

    def insert(self, index, module):
        """Inserts ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = collections.OrderedDict((str(i), m) for i, m in enumerate(items))
        return self

    def extend(self, sequential):
        """Appends every module of ``sequential``; returns self."""
        for m in sequential:
            self.append(m)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of submodules, registered as "0", "1", ... (indexable, iterable)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self))))
        self._renumber()

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(itertools.chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def insert(self, index, module):
        """Inserts ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = collections.OrderedDict()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def extend(self, modules):
        """Appends the modules of an iterable; returns self."""
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules by name."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Removes every module."""
        self._modules.clear()

    def pop(self, key):
        """Removes and returns the module ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Adds modules from a mapping or from an iterable of (name, module) pairs."""
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (collections.OrderedDict, ModuleDict, collections.abc.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, collections.abc.Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
                                + type(m).__name__)
            if len(m) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) + " has length " + str(len(m))
                                 + "; 2 is required")
            self[m[0]] = m[1]


def _entries_repr(items, type_of):
    """ParameterList/ParameterDict extra_repr: a line per (key, value) of ``items``; a tensor is
    shown as Parameter or Tensor, ``type_of(tensor)`` (a dtype or a type name), size and device
    (when not the CPU), anything else as its type."""
    lines = []
    for k, p in items:
        if isinstance(p, _C.Tensor):
            size = "x".join(str(s) for s in p.size())
            device = f" ({p.device})" if p.device.type != "cpu" else ""
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            lines.append(f"  ({k}): {kind} containing: [{type_of(p)} of size {size}{device}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ...; tensors are wrapped in Parameter."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx, param):
        idx = _abs_index(idx, len(self))
        if isinstance(param, _C.Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, str(idx), param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Adds ``value`` (a Tensor becomes a Parameter) at the end; returns self."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """Appends every value of an iterable; returns self."""
        if not isinstance(values, collections.abc.Iterable) or isinstance(values, _C.Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got " + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return _entries_repr(enumerate(self), lambda p: p.dtype)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters by (string) name; tensors are wrapped in Parameter."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        attr = self._key_to_attr(key)
        self._keys[key] = None
        if isinstance(value, _C.Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(list(self._keys))

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(collections.OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k = list(self._keys)[-1]
        return k, self.pop(k)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Adds entries from a mapping (a plain dict in sorted key order, as PyTorch) or from
        an iterable of (key, value) pairs."""
        if not isinstance(parameters, collections.abc.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, collections.abc.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, collections.abc.Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j) + " should be Iterable; is"
                                    + type(p).__name__)
                if len(p) != 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j) + " has length "
                                     + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self):
        return _entries_repr(self.items(), _typename)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
