"""graft.nn.Module: the base class of layers and models, with torch.nn.Module's behaviour
(attribute registration, traversal, state_dict, train/eval, dtype/device conversion, hooks,
repr). Pure Python over graft's C++ tensors."""
import collections
import itertools
import threading

from ... import _C
from ..._tensor_types import _graft_type_name
from ...autograd.grad_mode import no_grad
from ...utils.hooks import _add_hook
from ..parameter import Parameter, is_lazy
from .hooks import RemovableHandle, _BackwardHooks

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook", "register_module_forward_hook"]

# Global hooks, run for every module's call (PyTorch's torch.nn.modules.module globals): before
# each module's own hooks.
_global_forward_pre_hooks = collections.OrderedDict()
_global_forward_hooks = collections.OrderedDict()
_global_forward_hooks_with_kwargs = collections.OrderedDict()
_global_forward_hooks_always_called = collections.OrderedDict()


def register_module_forward_pre_hook(hook):
    """Registers ``hook(module, input)`` to run before every module's forward (as PyTorch's
    global hook: before the module's own pre-hooks). It may return a new input (a tuple, or
    a single value that is wrapped into one). Returns a handle whose ``remove()`` drops it."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Registers ``hook(module, input, output)`` (``hook(module, args, kwargs, output)`` with
    ``with_kwargs``) to run after every module's forward, before the module's own forward
    hooks. It may return a new output. With ``always_call`` it also runs when forward raised
    (then its result is ignored and the error propagates)."""
    return _add_hook(_global_forward_hooks, hook, flags=[(_global_forward_hooks_with_kwargs, with_kwargs),
                                                          (_global_forward_hooks_always_called, always_call)])


# graft.doctor (LD005): while it watches, attributes that hooks set on modules are reported to
# it; _in_hook counts the hooks running on this interpreter (hooks run with the GIL held).
_doctor_note_hook_setattr = None
_in_hook = 0
# graft.doctor: while it watches, every module call goes through _doctor_calls(module, args,
# kwargs), which calls module._call_unwatched(args, kwargs) (graft/doctor/_scopes.py)
_doctor_calls = None


def _run_hook(hook, *args):
    global _in_hook
    _in_hook += 1
    try:
        return hook(*args)
    finally:
        _in_hook -= 1


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """load_state_dict's result: the missing and unexpected keys."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, unexpected_keys={self.unexpected_keys!r})"

    __str__ = __repr__


def _typename(obj):
    """torch.typename: 'graft.FloatTensor' for tensors, 'module.QualName' otherwise."""
    if isinstance(obj, _C.Tensor):
        return _graft_type_name(obj)
    module = getattr(obj, "__module__", None)
    prefix = module + "." if module not in (None, "builtins", "__builtin__") else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    return prefix + name


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _check_name(kind, name, owner):
    """The checks register_parameter / register_buffer / add_module share."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"" + (f", got: {name}" if kind == "module" else ""))
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if hasattr(owner, name) and name not in owner._registry_of(kind):
        raise KeyError(f"attribute '{name}' already exists")


# load_state_dict validates every module before copying anything: _load_from_state_dict
# queues its copies here while a load is in progress (per thread).
_pending_loads = threading.local()


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required \"forward\" function")


class Module:
    """Base class of all graft.nn layers and models, as torch.nn.Module."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            if not self.call_super_init:
                unexpected = next(iter(kwargs)) if kwargs else None
                if unexpected is not None:
                    raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{unexpected}'")
                raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                                f"{len(args) + 1} were given")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", collections.OrderedDict())
        setattr_(self, "_buffers", collections.OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", collections.OrderedDict())
        setattr_(self, "_forward_pre_hooks", collections.OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", collections.OrderedDict())
        setattr_(self, "_forward_hooks", collections.OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", collections.OrderedDict())
        setattr_(self, "_forward_hooks_always_called", collections.OrderedDict())
        setattr_(self, "_backward_pre_hooks", collections.OrderedDict())
        setattr_(self, "_backward_hooks", collections.OrderedDict())
        setattr_(self, "_state_dict_hooks", collections.OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", collections.OrderedDict())

    forward = _forward_unimplemented

    # ---- registration ----
    def _registry_of(self, kind):
        return {"parameter": self._parameters, "buffer": self._buffers, "module": self._modules}[kind]

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a buffer (state that is not a parameter, e.g. running statistics); persistent
        buffers are part of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self)
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a parameter (a Parameter, or None for an optional one such as a missing bias)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module (or None), reachable as an attribute and included in traversals."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name, self)
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of add_module."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ('' is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def _owner_of(self, target):
        """(submodule, attribute name) of dotted path ``target``; AttributeError as PyTorch's when
        the submodule lacks the attribute."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target):
        """The parameter at dotted path ``target``."""
        mod, name = self._owner_of(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        """Extra (non-tensor) state for state_dict; override together with set_extra_state."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        """Restores what get_extra_state returned."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    # ---- attributes ----
    def __getattr__(self, name):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def forget(*registries):
            for r in registries:
                if r in d:
                    if isinstance(d[r], dict):
                        d[r].pop(name, None)
                    else:
                        d[r].discard(name)
            d.pop(name, None)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            forget("_buffers", "_modules", "_non_persistent_buffers_set")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            forget("_parameters", "_buffers", "_non_persistent_buffers_set")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
        if _in_hook and _doctor_note_hook_setattr is not None:  # graft.doctor watches hooks (LD005)
            _doctor_note_hook_setattr(self, name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, ()):
                del self.__dict__[registry][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(dir(type(self))) + list(self.__dict__) + list(self._parameters) + list(self._modules) \
            + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_backward_pre_hooks",
                     "_state_dict_hooks", "_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                self.__dict__[name] = collections.OrderedDict()
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()

    # ---- traversal ----
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        """The parameters of this module (and of its submodules when ``recurse``), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, parameter) pairs; a parameter shared by several modules is listed once
        unless ``remove_duplicate`` is False."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """The buffers of this module (and submodules)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, buffer) pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        """The direct submodules, each once."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """(name, module) of the direct submodules, each module once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self):
        """This module and every submodule, depth first, each once."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) for this module and every submodule; ``memo`` is the set of
        modules already seen (a module reachable twice is listed once)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def __hash__(self):
        return id(self)

    # ---- modes ----
    def train(self, mode=True):
        """Sets training mode on this module and every submodule; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """train(False)."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Drops (set_to_none, the default) or zeroes the gradients of every parameter."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- conversion ----
    def _apply(self, fn):
        """Converts parameters (in place: ``p.data = fn(p)``, so references held elsewhere,
        e.g. by an optimizer, stay valid), their gradients, and buffers."""
        for m in self.children():
            m._apply(fn)
        for p in self._parameters.values():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                p.data = new
            if p.grad is not None:
                with no_grad():
                    new_grad = fn(p.grad)
                if new_grad is not p.grad:
                    p.grad.data = new_grad
        for k, b in self._buffers.items():
            if b is None:
                continue
            if is_lazy(b):  # an UninitializedBuffer stays one (PyTorch's conversions keep its class)
                with no_grad():
                    new = fn(b)
                if new is not b:
                    b.data = new
            else:
                self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Moves / casts parameters and buffers: to(device), to(dtype), to(device, dtype),
        to(tensor), and memory_format= (4-d and 5-d ones laid out so, as PyTorch's). Only
        floating-point values change dtype; returns self."""
        device, dtype, memory_format = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}")

        def convert(t):
            if dtype is not None and t.is_floating_point():
                t = t.to(device if device is not None else t.device, dtype)
            elif device is not None:
                t = t.to(device)
            if memory_format is not None and t.dim() in (4, 5):
                t = t.to(memory_format=memory_format)
            return t
        return self._apply(convert)

    def type(self, dst_type):
        """Casts all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def float(self):
        """Casts floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Casts floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        raise TypeError("graft has no float16 dtype: Module.half() is not supported")

    def bfloat16(self):
        raise TypeError("graft has no bfloat16 dtype: Module.bfloat16() is not supported")

    def cpu(self):
        """Moves parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Moves parameters and buffers to a CUDA device."""
        return self._apply(lambda t: t.cuda(device))

    # ---- state_dict ----
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state():
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached
        tensors sharing storage, unless ``keep_vars``)."""
        if args:
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, {"version": self._version})
            if result is not None:
                destination = result
        return destination

    def _register_state_dict_hook(self, hook):
        return _add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) runs after load_state_dict loaded this module."""
        return _add_hook(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Checks this module's entries of ``state_dict`` (missing, unexpected, wrong shape) and
        copies them into its parameters and buffers. Inside load_state_dict the copies wait
        until every module passed its checks."""
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = itertools.chain(self._parameters.items(), persistent.items())
        copies = []
        for name, param in local:
            if param is None:
                continue
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                error_msgs.append(f"While copying the parameter named \"{key}\", expected torch.Tensor or "
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            # an uninitialized (lazy) parameter takes any value (its module materialized it already if
            # the value has a shape); an uninitialized value's shape raises PyTorch's RuntimeError
            lazy = is_lazy(param)
            if not lazy and param.dim() == 0 and len(value.shape) == 1 and value.numel() == 1:
                value = value[0]  # checkpoints from before 0-d tensors
            if not lazy and tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            copies.append((self, name, key, param, value))
        extra_key = prefix + "_extra_state"
        if self._has_extra_state():
            if extra_key in state_dict:
                copies.append((self, None, extra_key, None, state_dict[extra_key]))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            known = set(self._modules) | set(self._parameters) | set(persistent)
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    if key[len(prefix):].split(".", 1)[0] not in known:
                        unexpected_keys.append(key)
        pending = getattr(_pending_loads, "copies", None)
        if pending is not None:
            pending.extend(copies)
        else:
            _run_copies(copies, assign=False)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies parameters and buffers from ``state_dict`` (keys as state_dict() makes them).
        strict: missing and unexpected keys are errors. Shape mismatches always are. On error
        nothing is changed and a RuntimeError lists every problem; otherwise returns
        (missing_keys, unexpected_keys). assign: take the given tensors instead of copying."""
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        previous = getattr(_pending_loads, "copies", None)
        _pending_loads.copies = []
        try:
            loaded = []

            def load(module, prefix):
                local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
                module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing_keys,
                                             unexpected_keys, error_msgs)
                loaded.append(module)
                for name, child in module._modules.items():
                    if child is not None:
                        load(child, prefix + name + ".")
            load(self, "")
            copies = _pending_loads.copies
        finally:
            _pending_loads.copies = previous
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        _run_copies(copies, assign)
        result = _IncompatibleKeys(missing_keys, unexpected_keys)
        for module in loaded:
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)
        return result

    # ---- hooks ----
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None or new args (a non-tuple is wrapped); with_kwargs:
        hook(module, args, kwargs) -> None or (args, kwargs). Runs before forward."""
        return _add_hook(self._forward_pre_hooks, hook, prepend=prepend,
                         flags=[(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None or a new output (with_kwargs: hook(module, args,
        kwargs, output)). Runs after forward; with always_call also when forward raised."""
        return _add_hook(self._forward_hooks, hook, prepend=prepend,
                         flags=[(self._forward_hooks_with_kwargs, with_kwargs),
                                (self._forward_hooks_always_called, always_call)])

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or a new grad_output, called when the gradients
        of the module's outputs are known."""
        return _add_hook(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or a new grad_input, called when the
        gradients of the module's positional tensor inputs are computed. grad_input has one
        entry per positional argument (None for non-tensors and inputs without gradient)."""
        return _add_hook(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated non-full backward hook (gradients of the module's last
        operation only) is not provided: use register_full_backward_hook."""
        raise NotImplementedError("graft does not support the deprecated Module.register_backward_hook (it reports the "
                                  "gradients of the module's last operation only); use register_full_backward_hook")

    def _call_impl(self, *args, **kwargs):
        if _doctor_calls is not None:  # graft.doctor watches (the outermost call, module scopes)
            return _doctor_calls(self, args, kwargs)
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_unwatched(self, args, kwargs):
        """The call without graft.doctor's wrapper (which calls it)."""
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        pre_hooks = list(_global_forward_pre_hooks.items()) + list(self._forward_pre_hooks.items())
        for hook_id, hook in pre_hooks:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = _run_hook(hook, self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = _run_hook(hook, self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward = _BackwardHooks(self)
            args = backward.wrap_inputs(args)
        hooks = [(hook_id, hook, hook_id in _global_forward_hooks_with_kwargs)
                 for hook_id, hook in _global_forward_hooks.items()]
        hooks += [(hook_id, hook, hook_id in self._forward_hooks_with_kwargs)
                  for hook_id, hook in self._forward_hooks.items()]
        try:
            result = self.forward(*args, **kwargs)
        except BaseException:
            # hooks registered with always_call run on the way out too; the error propagates
            for hook_id, hook, with_kwargs in hooks:
                if hook_id in _global_forward_hooks_always_called or hook_id in self._forward_hooks_always_called:
                    try:
                        if with_kwargs:
                            _run_hook(hook, self, args, kwargs, None)
                        else:
                            _run_hook(hook, self, args, None)
                    except Exception:  # the original error is the one to see
                        pass
            raise
        for hook_id, hook, with_kwargs in hooks:
            hooked = _run_hook(hook, self, args, kwargs, result) if with_kwargs else _run_hook(hook, self, args, result)
            if hooked is not None:
                result = hooked
        if backward is not None:
            result = backward.wrap_outputs(result)
        return result

    __call__ = _call_impl

    # ---- repr ----
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in repr (layers describe their settings)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _run_copies(copies, assign):
    """Writes the checked state_dict entries into their modules."""
    for module, name, key, param, value in copies:
        if name is None:
            module.set_extra_state(value)
            continue
        if assign:
            if isinstance(param, Parameter):
                setattr(module, name, Parameter(value, requires_grad=param.requires_grad))
            else:
                module._buffers[name] = value
            continue
        try:
            with no_grad():
                param.copy_(value)
        except Exception as ex:
            raise RuntimeError(f"While copying the parameter named \"{key}\", whose dimensions in the model are "
                               f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                               f"exception occurred : {ex.args}.") from ex


def _parse_to(*args, **kwargs):
    """(device, dtype, memory_format) from Module.to's arguments."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    memory_format = kwargs.pop("memory_format", None)
    if memory_format is not None and not isinstance(memory_format, _C.memory_format):
        raise TypeError(f"to() received an invalid combination of arguments: memory_format must be "
                        f"graft.memory_format, not {type(memory_format).__name__}")
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: unexpected keyword "
                        f"'{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, _C.Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, bool):
            continue  # non_blocking
        elif a is not None:
            device = a
    if device is not None and not isinstance(device, _C.device):
        device = _C.device(device)
    return device, dtype, memory_format
