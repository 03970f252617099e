"""Who holds a graph: the shortest reference path from a named root to each handle tensor.

Roots are the live frames' locals (every thread, innermost first), the ``__main__`` module's
globals and those of the user's other modules. The search walks Python references with
readable labels (``state['total']``, ``self.history[3]``, ``model.fc.weight``), plus what the
C++ side holds for a tensor (``.grad``). A path that goes through a hook (a module's hook
dict, a hook's closure, or a module attribute set while a hook ran) is marked, for LD005.
It runs only when a finding is reported (or on request) and keeps no reference afterwards.
"""
import collections
import functools
import inspect
import os
import site
import sys
import sysconfig
import threading
import types

from .. import _C
from . import _stored

_MAX_OBJECTS = 300_000
_MAX_DEPTH = 14
_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
               "_state_dict_hooks", "_load_state_dict_post_hooks")
_MODULE_REGISTRIES = ("_modules", "_parameters", "_buffers")

_package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# installed packages are no user's modules: besides sysconfig's directories, the site
# directories (Debian keeps its packages in /usr/lib/python3/dist-packages, which sysconfig
# does not name), so that numpy's or pytest's globals are not searched as roots
_std_dirs = tuple(p for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"),
                              sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib"),
                              *getattr(site, "getsitepackages", lambda: [])(),
                              getattr(site, "getusersitepackages", lambda: None)()} if p)


class GraftTensors:
    """What the holder search and the cycle rule ask of a framework's tensors, for graft (the
    PyTorch backend's TorchFramework answers the same): the tensor type, the package whose frames
    are not the user's, a tensor's object by identity, its .grad, live bytes, its creation line, the
    line that registered a hook (by its handle's id)."""

    type = _C.Tensor
    package_dir = _package_dir

    @staticmethod
    def object_of(tid):
        return _C._doctor_tensor_object(tid)

    @staticmethod
    def grad_of(t):
        gid = _C._doctor_grad_id(t)
        if not gid:
            return None
        g = _C._doctor_tensor_object(gid)
        return g if g is not None else _CppTensor(gid)

    @staticmethod
    def allocated():
        return _C._cpu_memory_allocated()

    @staticmethod
    def site_of(t):
        return _C._doctor_site_of(t)[0]

    @staticmethod
    def hook_registered_at(handle_id):
        from ..utils import hooks
        return hooks.registered_at.get(handle_id, "")


GRAFT = GraftTensors()


class _Found:
    __slots__ = ("path", "created_at", "created_step", "through_hook", "tensor", "stored_at", "hook_registered_at")

    def __init__(self, path, created_at, created_step, through_hook, tensor, stored_at="", hook_registered_at=""):
        self.path, self.created_at, self.created_step = path, created_at, created_step
        self.through_hook, self.tensor, self.stored_at = through_hook, tensor, stored_at
        self.hook_registered_at = hook_registered_at

    def _dict(self):
        return {"path": self.path, "created_at": self.created_at, "created_step": self.created_step,
                "through_hook": self.through_hook, "tensor": self.tensor, "stored_at": self.stored_at,
                "hook_registered_at": self.hook_registered_at}


def _key_label(k, tensors=GRAFT):
    if isinstance(k, (str, int, float, bool, type(None))):
        return f"[{k!r}]"
    if isinstance(k, tuple) and len(k) < 4 and all(isinstance(x, (str, int)) for x in k):
        return f"[{k!r}]"
    if isinstance(k, tensors.type):
        return "[<tensor>]"
    return f"[<{type(k).__name__}>]"


def _is_module(obj):
    d = getattr(obj, "__dict__", None)
    return isinstance(d, dict) and "_modules" in d and "_parameters" in d


def labelled_referents(obj, tensors=GRAFT):
    """(label, referent) pairs of what `obj` refers to, with labels that read as Python."""
    out = []
    try:
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                out.append((_key_label(k, tensors), v))
        elif isinstance(obj, (list, tuple, collections.deque)):
            for i, v in enumerate(list(obj)):
                out.append((f"[{i}]", v))
        elif isinstance(obj, (set, frozenset)):
            for v in list(obj):
                out.append(("{...}", v))
        elif isinstance(obj, types.CellType):
            try:
                out.append(("", obj.cell_contents))
            except ValueError:  # an empty cell
                pass
        elif isinstance(obj, types.FunctionType):
            closure = obj.__closure__ or ()
            for name, cell in zip(obj.__code__.co_freevars, closure):
                try:
                    out.append((f".<closure {name}>", cell.cell_contents))
                except ValueError:
                    pass
            for i, v in enumerate(obj.__defaults__ or ()):
                out.append((f".__defaults__[{i}]", v))
        elif isinstance(obj, types.MethodType):
            out.append((".__self__", obj.__self__))
            out.append((".__func__", obj.__func__))
        elif isinstance(obj, functools.partial):
            out.append((".func", obj.func))
            for i, v in enumerate(obj.args):
                out.append((f".args[{i}]", v))
            for k, v in obj.keywords.items():
                out.append((f".keywords[{k!r}]", v))
        else:
            if isinstance(obj, tensors.type):
                g = tensors.grad_of(obj)
                if g is not None:
                    out.append((".grad", g))
                fn = obj.grad_fn
                # a custom Function's ctx (graft's; PyTorch's node is its ctx)
                if fn is not None and (hasattr(type(fn), "_ctx_attrs") or hasattr(fn, "_forward_cls")):
                    out.append((".grad_fn", fn))
            elif hasattr(type(obj), "_ctx_attrs"):
                for k, v in list(obj._ctx_attrs.items()):
                    out.append((f".{k}", v))
                return out
            d = getattr(obj, "__dict__", None) if not isinstance(obj, type) else None
            if isinstance(d, dict):
                if _is_module(obj):
                    for reg in _MODULE_REGISTRIES:
                        for k, v in d.get(reg, {}).items():
                            if v is not None:
                                out.append((f".{k}", v))
                    for k, v in d.items():
                        if k in _MODULE_REGISTRIES:
                            continue
                        out.append((f".{k}", v))
                else:
                    for k, v in list(d.items()):
                        out.append((f".{k}", v))
            for slot in _slots_of(type(obj)):
                try:
                    out.append((f".{slot}", object.__getattribute__(obj, slot)))
                except AttributeError:
                    pass
    except Exception:  # an exotic container: no labels, no descent
        return []
    return out


def _slots_of(cls):
    names = []
    for c in getattr(cls, "__mro__", ()):
        s = c.__dict__.get("__slots__", ())
        if isinstance(s, str):
            s = (s,)
        names.extend(n for n in s if n not in ("__dict__", "__weakref__"))
    return names


class _CppTensor:
    """A tensor the C++ side holds that has no Python object (a ``.grad`` never read)."""

    __slots__ = ("id",)

    def __init__(self, tid):
        self.id = tid


def _user_module(mod):
    f = getattr(mod, "__file__", None)
    if not f or mod.__name__ == "__main__":
        return False
    f = os.path.abspath(f)
    return not f.startswith(_package_dir) and not any(f.startswith(d) for d in _std_dirs)


def _hook_registered_at(pieces, tensors):
    """The line that registered the hook a path goes through ("._forward_hooks", "[3]"), or ""."""
    for name, key in zip(pieces, pieces[1:]):
        if name[1:] in _HOOK_DICTS and key[1:-1].isdigit():
            return tensors.hook_registered_at(int(key[1:-1]))
    return ""


def _class_file(obj):
    """The source file of `obj`'s class when a user's module defines it, else None."""
    mod = sys.modules.get(getattr(type(obj), "__module__", None) or "")
    if mod is None or not (_user_module(mod) or mod.__name__ == "__main__"):
        return None
    return getattr(mod, "__file__", None)


def _line_range(code):
    """"FIRST-LAST": the lines of a code object."""
    lines = [line for _, _, line in code.co_lines() if line is not None] or [code.co_firstlineno]
    return f"{min(lines)}-{max(lines)}"


def _roots(framework_dir=None):
    """(label, object, file, hint) for every named root, frames first (innermost first): the file is
    the source the root's name lives in (for the line that stored a reference there); for a frame's
    local the hint is where the frame is ("file.py:FIRST-LAST:LINE": its function's lines, the one
    it runs now): where to look for the store when the tensor's creation line is unknown (on PyTorch)."""
    roots = []
    here = os.path.abspath(__file__)
    # Before Python 3.13 a function frame's f_locals is a snapshot dict kept on the frame: it
    # would hold each local as it was now until the function reads its locals again or returns,
    # so that a tensor the program deletes or rebinds after this search stayed alive. The
    # snapshot is emptied once read where nothing copies it back into the frame: this thread's
    # frames while no trace or profile function runs on it (those write f_locals back).
    may_empty = sys.gettrace() is None and sys.getprofile() is None
    this_thread = threading.get_ident()
    for tid, frame in sys._current_frames().items():
        f = frame
        while f is not None:
            code = f.f_code
            fn = os.path.abspath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
            if not fn.startswith(_package_dir) and fn != here and not (framework_dir and fn.startswith(framework_dir)):
                local_vars = f.f_locals
                hint = f"{os.path.basename(code.co_filename)}:{_line_range(code)}:{f.f_lineno}"
                for name, value in list(local_vars.items()):
                    roots.append((name, value, code.co_filename, hint))
                if (may_empty and tid == this_thread and code.co_flags & inspect.CO_OPTIMIZED and f.f_trace is None
                        and type(local_vars) is dict):
                    local_vars.clear()
                del local_vars
            f = f.f_back
    # `frame` may be this very frame: a cycle that would keep every root (the user's tensors)
    # alive until the next cyclic collection, which the doctor runs only at step boundaries
    del frame
    main = sys.modules.get("__main__")
    if main is not None:
        main_file = getattr(main, "__file__", "") or ""
        for name, value in list(vars(main).items()):
            if not name.startswith("__"):
                roots.append((name, value, main_file, ""))
    for modname, mod in list(sys.modules.items()):
        if mod is None or mod is main or not _user_module(mod):
            continue
        for name, value in list(vars(mod).items()):
            if not name.startswith("__"):
                roots.append((f"{modname}.{name}", value, mod.__file__, ""))
    return roots


_LEAF_TYPES = (str, bytes, int, float, complex, bool, range)
_SKIP_TYPES = (type, types.ModuleType, types.CodeType, types.FrameType, types.BuiltinFunctionType) + _LEAF_TYPES


def find(handles, max_paths, hook_attrs, with_ids=False, tensors=GRAFT):
    """Holders of the given handles (dicts with ``tensor``, ``site``, ``step``): up to
    ``max_paths`` paths, one per handle first, shortest first. ``tensors``: the framework's
    tensors (GRAFT, or the PyTorch backend's)."""
    targets = {}  # tensor identity -> handle
    for h in handles:
        targets.setdefault(h["tensor"], h)
    if not targets:
        return []
    want_obj = {}
    for tid in targets:
        o = tensors.object_of(tid)
        if o is not None:
            want_obj[id(o)] = tid
    found = {}  # tensor identity -> (path pieces, through_hook, the root's file)
    roots = _roots(tensors.package_dir if tensors is not GRAFT else None)
    # BFS: the queue holds (object, path pieces, through_hook, depth, the root's file)
    seen = set()
    alive = []
    queue = collections.deque()
    hints = {}  # the root's label -> its hint
    for label, value, origin, hint in roots:
        if id(value) not in seen:
            seen.add(id(value))
            hints[label] = hint
            queue.append((value, [label], False, 0, (origin,)))
    budget = _MAX_OBJECTS
    while queue and budget > 0 and len(found) < len(targets):
        obj, path, hooked, depth, origin = queue.popleft()
        budget -= 1
        tid = want_obj.get(id(obj))
        if tid is None and isinstance(obj, _CppTensor):
            tid = obj.id if obj.id in targets else None
        if tid is not None and tid not in found:
            found[tid] = (path, hooked, origin)
        if (depth >= _MAX_DEPTH or isinstance(obj, _SKIP_TYPES) or isinstance(obj, _CppTensor)
                or getattr(type(obj), "_graft_doctor_private", False)):
            continue  # (the doctor's own objects hold what they saw, not what the program keeps)
        module_attrs = hook_attrs.get(id(obj), ()) if _is_module(obj) else ()
        cls_file = _class_file(obj)  # a user's class: its methods may store what its instance holds
        origins = origin if cls_file is None or cls_file in origin else origin + (cls_file,)
        for label, ref in labelled_referents(obj, tensors):
            if ref is None or isinstance(ref, _LEAF_TYPES) or id(ref) in seen:
                continue
            seen.add(id(ref))
            name = label[1:] if label.startswith(".") else ""
            through = hooked or name in _HOOK_DICTS or (bool(name) and name in module_attrs)
            queue.append((ref, path + [label], through, depth + 1, origins))
            alive.append(ref)  # a temporary (a grad_fn wrapper) must outlive the search: ids stay unique
    out = []
    # one path per handle, in the order the handles came (the most relevant first)
    for h in handles:
        tid = h["tensor"]
        if tid in found and all(f.tensor != tid for f in out):
            pieces, hooked, origin = found[tid]
            out.append(_Found("".join(pieces), h.get("site", ""), h.get("step", 0), hooked, tid,
                              _stored.stored_at(pieces, origin, h.get("site", ""), hints.get(pieces[0], "")),
                              _hook_registered_at(pieces, tensors)))
        if len(out) >= max_paths:
            break
    return out
