"""graft.save / graft.load: checkpoints as safetensors files, never pickles.

A mapping of str -> Tensor (a model's state_dict) is written as a plain safetensors file, one
entry per key. Anything else that is built from tensors, dicts (OrderedDict kept), lists,
tuples, str, int, float, bool and None (an optimizer's state_dict, a checkpoint dict with the
epoch and the loss) is flattened: each tensor is stored under its dotted path
("optimizer.state.0.exp_avg") and the structure with the non-tensor values goes, as JSON,
into the file's ``__metadata__`` under "graft.structure". graft.load rebuilds the object.
See docs/checkpoints.md ("Python")."""
import collections
import json
import math
import os
import stat

from . import _C

__all__ = ["save", "load"]

_Tensor = _C.Tensor
_STRUCTURE_KEY = "graft.structure"
_FORMAT_VERSION = 1


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def _is_flat_state_dict(obj):
    return (isinstance(obj, dict) and all(isinstance(k, str) for k in obj)
            and all(isinstance(v, _Tensor) and not v.requires_grad for v in obj.values()))


_NOT_SCALAR = object()


def _scalar_json(x):
    """``x`` as JSON when it is None, a bool, str, int (an int subclass as a plain int) or float
    (a non-finite one as ``{"float": repr}``); _NOT_SCALAR for anything else. Values and dict
    keys are saved alike."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return x if math.isfinite(x) else {"float": repr(x)}
    return _NOT_SCALAR


class _Flattener:
    """Walks an object, collecting its tensors under dotted names and describing the rest."""

    def __init__(self):
        self.items = []  # (name, tensor) in the order met
        self.names = set()
        self.by_id = {}  # id(tensor) -> name: a tensor met twice is stored once

    def unique_name(self, path):
        name = path or "tensor"
        n = 1
        while name in self.names or name == "__metadata__":
            name = f"{path or 'tensor'}#{n}"
            n += 1
        self.names.add(name)
        return name

    def node(self, obj, path):
        if isinstance(obj, _Tensor):
            name = self.by_id.get(id(obj))
            if name is None:
                name = self.unique_name(path)
                self.by_id[id(obj)] = name
                self.items.append((name, obj.detach()))
            out = {"tensor": name}
            if obj.requires_grad:
                out["requires_grad"] = True
            return out
        scalar = _scalar_json(obj)
        if scalar is not _NOT_SCALAR:
            return scalar
        if isinstance(obj, dict):
            kind = "ordered_dict" if isinstance(obj, collections.OrderedDict) else "dict"
            return {kind: [[self.key(k, path), self.node(v, _join(path, k))] for k, v in obj.items()]}
        if type(obj) in (list, tuple):
            kind = "list" if isinstance(obj, list) else "tuple"
            return {kind: [self.node(v, _join(path, i)) for i, v in enumerate(obj)]}
        if type(obj).__name__ == "Size" and isinstance(obj, tuple):
            return {"size": [int(s) for s in obj]}
        raise TypeError(f"graft.save: cannot save an object of type {type(obj).__module__}.{type(obj).__qualname__}"
                        f"{_where(path)}: graft writes safetensors files, which hold tensors, dicts, lists, tuples, "
                        "str, int, float, bool and None (it does not pickle Python objects)")

    def key(self, k, path):
        scalar = _scalar_json(k)
        if scalar is not _NOT_SCALAR:
            return scalar
        raise TypeError(f"graft.save: cannot save a dict key of type {type(k).__qualname__}{_where(path)}: keys "
                        "must be str, int, float, bool or None")


def _join(path, key):
    return f"{path}.{key}" if path else str(key)


def _where(path):
    return f" at '{path}'" if path else ""


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Saves `obj` to `f` (a path, written atomically, or a binary file object) as safetensors.
    ``pickle_module`` and the other pickle options are accepted for compatibility and unused."""
    if _is_flat_state_dict(obj):
        items = [(k, v.detach()) for k, v in obj.items()]
        metadata = {"format": "pt"}
    else:
        flat = _Flattener()
        root = flat.node(obj, "")
        items = flat.items
        structure = {"version": _FORMAT_VERSION, "root": root}
        metadata = {"format": "pt", _STRUCTURE_KEY: json.dumps(structure, separators=(",", ":"), allow_nan=False)}
    if _is_path(f):
        _C._serialize.save_file(items, os.fspath(f), metadata)
    else:
        f.write(_C._serialize.to_bytes(items, metadata))


class _Rebuilder:
    def __init__(self, tensors, source):
        self.tensors = tensors
        self.source = source
        self.used = set()

    def fail(self, what):
        raise ValueError(f"graft.load: '{self.source}' has an invalid {_STRUCTURE_KEY} description: {what}")

    def scalar(self, value):
        if isinstance(value, dict):
            if set(value) != {"float"} or value["float"] not in ("nan", "inf", "-inf"):
                self.fail(f"unexpected key {value!r}")
            return float(value["float"])
        return value

    def node(self, value):
        if not isinstance(value, dict):
            if isinstance(value, list):
                self.fail("a bare list")
            return value
        if len(value) == 1 and "float" in value:
            return self.scalar(value)
        if "tensor" in value:
            name = value["tensor"]
            if name not in self.tensors:
                self.fail(f"tensor '{name}' is not in the file")
            self.used.add(name)
            t = self.tensors[name]
            if value.get("requires_grad"):
                t.requires_grad_(True)
            return t
        if len(value) != 1:
            self.fail(f"unexpected node {sorted(value)}")
        (kind, body), = value.items()
        if not isinstance(body, list):
            self.fail(f"'{kind}' does not hold a list")
        if kind in ("dict", "ordered_dict"):
            out = collections.OrderedDict() if kind == "ordered_dict" else {}
            for pair in body:
                if not isinstance(pair, list) or len(pair) != 2:
                    self.fail(f"a '{kind}' entry is not a [key, value] pair")
                out[self.scalar(pair[0])] = self.node(pair[1])
            return out
        if kind == "list":
            return [self.node(v) for v in body]
        if kind == "tuple":
            return tuple(self.node(v) for v in body)
        if kind == "size":
            from ._tensor import Size
            return Size(int(s) for s in body)
        self.fail(f"unknown node kind '{kind}'")


def _apply_map_location(t, map_location):
    if map_location is None:
        return t
    if callable(map_location):
        out = map_location(t, "cpu")
        return t if out is None else out
    if isinstance(map_location, dict):
        target = map_location.get("cpu")
        return t if target is None else t.to(_C.device(target) if isinstance(target, str) else target)
    return t.to(_C.device(map_location) if isinstance(map_location, str) else map_location)


def _looks_like_torch_file(head):
    """torch.save writes a zip archive (or, with the legacy format, a pickle)."""
    return head[:4] == b"PK\x03\x04" or (head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"))


def _read_head(path):
    try:
        with open(path, "rb") as fh:
            return fh.read(4)
    except OSError:
        return b""


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads what graft.save wrote (or any safetensors file: a plain file gives an OrderedDict of
    its tensors, in file order). ``weights_only`` is accepted and always safe: graft never runs
    code from a file. ``map_location`` (a device, a string, a {'cpu': device} dict or a callable
    taking (tensor, 'cpu')) moves the tensors."""
    if _is_path(f):
        source = os.fspath(f)
        # FileNotFoundError, IsADirectoryError, PermissionError as torch.load raises them; a FIFO or
        # a device is refused before anything opens it (opening a FIFO waits for a writer)
        mode = os.stat(source).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise RuntimeError(f"load: '{source}' is not a regular file")
        open(source, "rb").close()
        head = None
        reader = lambda: _C._serialize.load_file(source)  # noqa: E731
    else:
        source = getattr(f, "name", "<file object>")
        data = f.read()
        if isinstance(data, str):
            raise TypeError("graft.load: the file object must be opened in binary mode ('rb')")
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(f"graft.load: the file object's read() returned {type(data).__name__}, not bytes") from None
        if not view.c_contiguous or view.itemsize != 1 or view.ndim != 1:
            data = view.tobytes()  # a strided or multi-byte view: its bytes in order
        head = bytes(data[:4])
        reader = lambda: _C._serialize.from_bytes(data, str(source))  # noqa: E731
    try:
        items, metadata = reader()
    except ValueError as e:
        if _looks_like_torch_file(_read_head(source) if head is None else head):
            raise ValueError(f"graft.load: '{source}' is a PyTorch (torch.save) checkpoint, which is a pickle; "
                             "graft reads safetensors files only (convert it with safetensors.torch.save_file)"
                             ) from e
        raise
    tensors = collections.OrderedDict((name, _apply_map_location(t, map_location)) for name, t in items)
    described = metadata.get(_STRUCTURE_KEY)
    if described is None:
        return tensors
    rebuild = _Rebuilder(tensors, source)
    try:
        structure = json.loads(described)
    except ValueError as e:
        rebuild.fail(f"not JSON ({e})")
    if not isinstance(structure, dict) or structure.get("version") != _FORMAT_VERSION or "root" not in structure:
        rebuild.fail(f"expected {{'version': {_FORMAT_VERSION}, 'root': ...}}")
    obj = rebuild.node(structure["root"])
    unused = [name for name in tensors if name not in rebuild.used]
    if unused:
        rebuild.fail(f"tensor '{unused[0]}' is not part of the structure")
    return obj
