"""graft.load(..., weights_only=True): an unpickler that builds tensors, storages, primitive
containers and what the user allowlisted, and nothing else, as PyTorch 2.x's weights-only
unpickler does (the same opcodes, globals, checks and messages).

It never imports a module or looks a name up: GLOBAL resolves only through
_torch_globals.default_allowed() and the names given to ``add_safe_globals`` /
``safe_globals``; REDUCE and NEWOBJ call only those; BUILD sets state only on Parameters,
OrderedDicts and allowlisted types. See docs/checkpoints.md ("weights_only")."""
import collections
import re
import struct
import warnings
from pickle import UnpicklingError

from . import _torch_globals as _globals

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")

# Python 2 names pickles of protocol 2 may use, as PyTorch maps them
_IMPORT_MAPPING = {"__builtin__": "builtins", "copy_reg": "copyreg", "Queue": "queue", "repr": "reprlib",
                   "_abcoll": "collections.abc", "UserDict": "collections", "UserList": "collections",
                   "UserString": "collections", "whichdb": "dbm", "StringIO": "io", "cStringIO": "io"}
_NAME_MAPPING = {("__builtin__", "xrange"): ("builtins", "range"), ("__builtin__", "reduce"): ("functools", "reduce"),
                 ("__builtin__", "intern"): ("sys", "intern"), ("__builtin__", "unichr"): ("builtins", "chr"),
                 ("__builtin__", "unicode"): ("builtins", "str"), ("__builtin__", "long"): ("builtins", "int"),
                 ("itertools", "izip"): ("builtins", "zip"), ("itertools", "imap"): ("builtins", "map"),
                 ("itertools", "ifilter"): ("builtins", "filter"),
                 ("itertools", "ifilterfalse"): ("itertools", "filterfalse"),
                 ("itertools", "izip_longest"): ("itertools", "zip_longest"),
                 ("UserDict", "IterableUserDict"): ("collections", "UserDict"),
                 ("UserList", "UserList"): ("collections", "UserList"),
                 ("UserString", "UserString"): ("collections", "UserString"),
                 ("__builtin__", "basestring"): ("builtins", "str"),
                 ("exceptions", "StandardError"): ("builtins", "Exception"),
                 ("UserDict", "UserDict"): ("collections", "UserDict")}

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a "
    "trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")

# ---- the user's allowlist (torch.serialization.add_safe_globals and friends) ----

_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Marks the given globals (objects, or ``(object, "module.name")`` pairs) safe for
    ``weights_only=True`` loads."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals.union(set(safe_globals))


def get_safe_globals():
    """The globals added with add_safe_globals (a list)."""
    return list(_marked_safe_globals)


def clear_safe_globals():
    """Forgets every global added with add_safe_globals."""
    global _marked_safe_globals
    _marked_safe_globals = set()


def _remove_safe_globals(globals_to_remove):
    """Takes globals off the allowlist (safe_globals' exit)."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals - set(globals_to_remove)


class safe_globals:
    """Context manager: the given globals are safe for ``weights_only=True`` loads inside the
    ``with`` block (they are removed from the allowlist on exit)."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, exc_type, exc_value, tb):
        _remove_safe_globals(self.safe_globals)


def user_allowed():
    """{'module.name': object} for the allowlisted globals. A graft object is listed under the
    name PyTorch gives its counterpart (graft.nn.Linear as torch.nn.modules.linear.Linear)."""
    rc = {}
    for f in _marked_safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: {type(f[1])}")
            rc[f[1]] = f[0]
            continue
        path = _globals.torch_path(f)
        rc[".".join(path) if path else f"{f.__module__}.{f.__qualname__}"] = f
    return rc


def read_global(readline):
    """The (module, name) of a GLOBAL opcode, Python 2 names mapped as PyTorch maps them."""
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    if (module, name) in _NAME_MAPPING:
        return _NAME_MAPPING[(module, name)]
    return _IMPORT_MAPPING.get(module, module), name


def _unsupported_global(full_path):
    """PyTorch 2.x's refusal of a global that is not allowlisted."""
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. "
        f"Please use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this global "
        "if you trust this class/function.")


def failure_message(message):
    """torch.load's text for a weights-only refusal, around the unpickler's ``message``."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: "
                + message + _DOCS_MESSAGE)
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        out += ("Please file an issue with the following so that we can make "
                "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return out + "\n\n" + message + _DOCS_MESSAGE


class _IdSet:
    """Membership by identity (a tensor on the stack must not be compared with ==)."""

    def __init__(self, objects):
        self.ids = {id(o) for o in objects}
        self.objects = list(objects)  # keeps them alive

    def __contains__(self, obj):
        return id(obj) in self.ids


class WeightsUnpickler:
    """PyTorch 2.x's weights-only unpickler, opcode for opcode; ``persistent_load(pid)``
    supplies storages."""

    def __init__(self, file, persistent_load, *, encoding="bytes"):
        self.read, self.readline = file.read, file.readline
        self.persistent_load = persistent_load
        self.encoding = encoding
        self.memo = {}
        self.proto = -1
        self.default = {k: v for k, v in _globals.default_allowed().items()}
        self.user = user_allowed()
        values = [v for v in self.default.values() if not isinstance(v, _globals._Missing)]
        self.allowed_values = _IdSet(values + list(self.user.values()))
        self.user_types = _IdSet(list(self.user.values()))
        from .nn.parameter import Parameter
        self.parameter = Parameter
        self.stack, self.metastack = [], []

    def load(self):
        """The unpickled object."""
        dispatch = _DISPATCH
        while True:
            key = self.read(1)
            if not key:
                raise EOFError
            op = dispatch.get(key[0])
            if op is None:
                raise UnpicklingError(f"Unsupported operand {key[0]}")
            try:
                if op(self) is _STOP:
                    return self.stack.pop()
            except IndexError:
                raise UnpicklingError("the pickle data is truncated or corrupt (stack underflow)") from None

    def take(self, n):
        """n bytes of the pickle (EOFError when it ends first)."""
        data = self.read(n)
        if len(data) != n:
            raise EOFError("Ran out of input")
        return data

    def pop_mark(self):
        """The items pushed since the last MARK."""
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def op_global(self):
        """GLOBAL: only allowed names, resolved without importing anything."""
        module, name = read_global(self.readline)
        full_path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
        if full_path in self.default:
            self.stack.append(_globals.resolve(self.default[full_path]))
        elif full_path in self.user:
            self.stack.append(self.user[full_path])
        else:
            raise _unsupported_global(full_path)

    def op_newobj(self):
        """NEWOBJ: a Parameter, or an allowlisted class's __new__."""
        args = self.stack.pop()
        cls = self.stack.pop()
        if cls is self.parameter:
            if args and not isinstance(args[0], _globals._C.Tensor):
                raise UnpicklingError(f"a Parameter's data must be a tensor, not {type(args[0]).__name__}")
            self.stack.append(self.parameter(*args))
        elif cls in self.allowed_values and isinstance(cls, type) and not isinstance(cls, type(_globals._C.device)):
            self.stack.append(cls.__new__(cls, *args))  # not graft's C++ types: __new__ leaves them uninitialized
        else:
            raise UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                  f"via `add_safe_globals` but got {cls}")

    def op_reduce(self):
        """REDUCE: calls an allowed function."""
        args = self.stack.pop()
        func = self.stack[-1]
        if func not in self.allowed_values or func is _globals._C.Tensor:
            message = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                message += f" which belongs to {func.__self__}"
            raise UnpicklingError(message)
        if not isinstance(args, tuple):
            raise UnpicklingError(f"REDUCE arguments must be a tuple, not {type(args).__name__}")
        self.stack[-1] = func(*args)

    def op_build(self):
        """BUILD: state for a Parameter, an OrderedDict or an allowlisted type."""
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is self.parameter:
            _globals._set_obj_state(inst, state)
        elif type(inst) is collections.OrderedDict:
            if not isinstance(state, dict):
                raise UnpicklingError(f"an OrderedDict's state must be a dict, not {type(state).__name__}")
            inst.__dict__.update(state)
        elif type(inst) in self.user_types:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                _globals._set_obj_state(inst, state)
        else:
            raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                  f"via `add_safe_globals`, but got {type(inst)}")

    def op_append(self):
        """APPEND: to a list only."""
        item = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(item)

    def op_appends(self):
        """APPENDS: to a list only."""
        items = self.pop_mark()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)

    def check_set_item_target(self, opcode):
        """SETITEM(S) only into dict, OrderedDict and Counter."""
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")

    def op_setitem(self):
        """SETITEM: into a dict only."""
        value, key = self.stack.pop(), self.stack.pop()
        self.check_set_item_target("SETITEM")
        self.stack[-1][key] = value

    def op_setitems(self):
        """SETITEMS: into a dict only."""
        items = self.pop_mark()
        self.check_set_item_target("SETITEMS")
        if len(items) % 2:
            raise UnpicklingError("SETITEMS with an odd number of items")
        for i in range(0, len(items), 2):
            self.stack[-1][items[i]] = items[i + 1]

    def op_mark(self):
        """MARK."""
        self.metastack.append(self.stack)
        self.stack = []

    def op_tuple(self):
        """TUPLE: the items since the last MARK."""
        items = tuple(self.pop_mark())  # before self.stack is read: pop_mark replaces it
        self.stack.append(items)

    def op_tuple_n(self, n):
        """TUPLE1, TUPLE2, TUPLE3."""
        if len(self.stack) < n:
            raise IndexError
        items = tuple(self.stack[len(self.stack) - n:]) if n else ()
        del self.stack[len(self.stack) - n:]
        self.stack.append(items)

    def op_persid(self):
        """BINPERSID: storages only."""
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _decode_ascii(pid[0]) != "storage":
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    def op_get(self, idx):
        """BINGET, LONG_BINGET."""
        if idx not in self.memo:
            raise UnpicklingError(f"Memo value not found at index {idx}")
        self.stack.append(self.memo[idx])

    def op_put(self, idx):
        """BINPUT, LONG_BINPUT."""
        self.memo[idx] = self.stack[-1]

    def op_unicode(self):
        """BINUNICODE."""
        (n,) = struct.unpack("<I", self.take(4))
        self.stack.append(str(self.take(n), "utf-8", "surrogatepass"))

    def op_short_binstring(self):
        """SHORT_BINSTRING (decoded with the load's encoding)."""
        data = self.take(self.take(1)[0])
        self.stack.append(data.decode(self.encoding, "strict") if self.encoding != "bytes" else data)

    def op_proto(self):
        """PROTO: a protocol other than 2 is warned about, as PyTorch does."""
        self.proto = self.take(1)[0]
        if self.proto != 2:
            warnings.warn(f"Detected pickle protocol {self.proto} in the checkpoint, which was not the default pickle "
                          "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                          "instructions implemented by this protocol, please file an issue for adding support if "
                          "you encounter this.", stacklevel=4)


def _decode_ascii(value):
    """A persistent id's bytes field (Python 2 pickles) as str."""
    return str(value, "ascii") if isinstance(value, bytes) else value


_STOP = object()


def _push(value):
    """An opcode that pushes ``value`` (a fresh one when it is a type)."""
    return lambda self: self.stack.append(value() if callable(value) else value)


def _dispatch_table():
    """{opcode byte: handler} for the opcodes PyTorch 2.x's unpickler supports."""
    u = WeightsUnpickler
    table = {
        b"c": u.op_global, b"\x81": u.op_newobj, b"R": u.op_reduce, b"b": u.op_build, b"a": u.op_append,
        b"e": u.op_appends, b"s": u.op_setitem, b"u": u.op_setitems, b"(": u.op_mark, b"t": u.op_tuple,
        b"\x85": lambda self: self.op_tuple_n(1), b"\x86": lambda self: self.op_tuple_n(2),
        b"\x87": lambda self: self.op_tuple_n(3), b"N": _push(None), b"\x89": _push(False), b"\x88": _push(True),
        b")": _push(()), b"]": _push(list), b"}": _push(dict), b"\x8f": _push(set),
        b"J": lambda self: self.stack.append(struct.unpack("<i", self.take(4))[0]),
        b"K": lambda self: self.stack.append(self.take(1)[0]),
        b"M": lambda self: self.stack.append(struct.unpack("<H", self.take(2))[0]),
        b"G": lambda self: self.stack.append(struct.unpack(">d", self.take(8))[0]),
        b"X": u.op_unicode, b"U": u.op_short_binstring, b"Q": u.op_persid,
        b"h": lambda self: self.op_get(self.take(1)[0]),
        b"j": lambda self: self.op_get(struct.unpack("<I", self.take(4))[0]),
        b"q": lambda self: self.op_put(self.take(1)[0]),
        b"r": lambda self: self.op_put(struct.unpack("<I", self.take(4))[0]),
        b"\x8a": lambda self: self.stack.append(int.from_bytes(self.take(self.take(1)[0]), "little", signed=True)),
        b"\x80": u.op_proto, b".": lambda self: _STOP,
    }
    return {k[0]: v for k, v in table.items()}


_DISPATCH = _dispatch_table()
