"""graft.save / graft.load (``torch.save`` / ``torch.load``), and torch.serialization's
allowlist for weights-only loads.

graft.save writes PyTorch's own format (a zip archive with a pickle, what torch.save writes), so
that torch.load reads what graft writes and graft reads what PyTorch writes: any picklable object
(dicts, lists, numpy arrays, argparse Namespaces ...) with its tensors, Parameters and views. A
path ending in ``.safetensors`` is written as a safetensors file instead (as torch.load reads
such paths), and save_safetensors writes one to any file.

graft.load reads both, by content. A PyTorch archive is unpickled with ``weights_only=True``
by default (PyTorch 2.6's default): only tensors, primitive containers and what
add_safe_globals allowlisted are built; ``weights_only=False`` unpickles anything (never load
an untrusted file so). A safetensors file never runs code.

Safetensors files: a mapping of str -> Tensor (a model's state_dict) is written as a plain file,
one entry per key. Anything else built from tensors, dicts (OrderedDict kept), lists, tuples,
str, int, float, bool and None is flattened: each tensor is stored under its dotted path
("optimizer.state.0.exp_avg") and the structure with the non-tensor values goes, as JSON, into
the file's ``__metadata__`` under "graft.structure". See docs/checkpoints.md ("Python")."""
import collections
import io
import json
import math
import os
import stat
import warnings

from . import _C
from ._weights_only import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: F401

__all__ = ["save", "load", "save_safetensors", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2  # the pickle protocol torch.save uses
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


def _path_name(f):
    """A path argument as str."""
    return os.fsdecode(os.fspath(f))


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves ``obj`` to ``f`` (a path, replaced atomically, or a binary file object) as torch.save
    does: PyTorch's zip archive, which torch.load reads. A path ending in ``.safetensors`` gets a
    safetensors file (see save_safetensors). ``pickle_module`` is not used (graft pickles with
    pickle's Python pickler) and ``_use_new_zipfile_serialization=False`` still writes the zip
    archive (PyTorch's legacy format is not written)."""
    if _is_path(f) and _path_name(f).endswith(".safetensors"):
        return save_safetensors(obj, f)
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    from . import _pickle_format  # zipfile and ctypes load on first use (import graft stays fast)
    _pickle_format.save(obj, f, pickle_protocol, byteorder_record=not _disable_byteorder_record)


def save_safetensors(obj, f):
    """Saves ``obj`` to ``f`` (a path, written atomically, or a binary file object) as a
    safetensors file: a flat state dict as a plain file, anything else built from tensors,
    dicts, lists, tuples, str, int, float, bool and None with its structure in the metadata."""
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


_ZIP_MAGIC = b"PK\x03\x04"
_TRUE_VALUES = ("1", "y", "yes", "true")


def _looks_like_legacy_torch_file(head):
    """torch.save's legacy format (before PyTorch 1.6) starts with a pickle."""
    return head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")


def _weights_only_setting(weights_only, pickle_module):
    """torch.load's weights_only: True by default unless a pickle_module is given; the
    TORCH_FORCE_WEIGHTS_ONLY_LOAD / TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD environment variables."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE_VALUES
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        return True
    if force_no and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                      "`weights_only` argument was not explicitly passed to `torch.load`, forcing weights_only=False.",
                      UserWarning, stacklevel=3)
        return False
    return bool(weights_only)


def _open_source(f):
    """(source name, reader of the safetensors tensors, (file, size) of a zip archive or None,
    the first bytes) for a path or a binary file object."""
    if _is_path(f):
        source = os.fspath(f)
        # FileNotFoundError, IsADirectoryError, PermissionError as torch.load raises them; a FIFO or
        # a device is refused before anything opens it (opening a FIFO waits for a writer)
        mode = os.stat(source).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise RuntimeError(f"load: '{source}' is not a regular file")
        fh = open(source, "rb")
        try:
            head = fh.read(4)
            if head == _ZIP_MAGIC:
                fh.seek(0)
                return source, None, (fh, os.fstat(fh.fileno()).st_size), head
        except BaseException:
            fh.close()
            raise
        fh.close()
        return source, lambda: _C._serialize.load_file(source), None, head
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
    if head == _ZIP_MAGIC:
        return source, None, (io.BytesIO(data), len(data)), head
    return source, lambda: _C._serialize.from_bytes(data, str(source)), None, head


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads what torch.save or graft.save wrote (PyTorch's zip archive), or a safetensors file
    (what save_safetensors wrote; a plain file gives an OrderedDict of its tensors, in file
    order). Archives are unpickled weights-only unless ``weights_only=False`` (see
    add_safe_globals). ``map_location``: a device, a string, a {location: location} dict or a
    callable (storage, location) -> storage (for safetensors files: (tensor, 'cpu') -> tensor).
    ``mmap`` is accepted and ignored (storages are read into memory)."""
    weights_only = _weights_only_setting(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.")
    pickle_load_args.setdefault("encoding", "utf-8")
    source, reader, archive, head = _open_source(f)
    if archive is not None:
        from . import _pickle_format
        with archive[0]:
            return _pickle_format.load(archive[0], archive[1], map_location, weights_only, pickle_module,
                                       pickle_load_args)
    try:
        items, metadata = reader()
    except ValueError as e:
        if _looks_like_legacy_torch_file(head):
            raise ValueError(f"graft.load: '{source}' is a PyTorch checkpoint in the legacy format (torch.save before "
                             "PyTorch 1.6, or with _use_new_zipfile_serialization=False), which graft does not read; "
                             "save it again with torch.save from PyTorch 1.6 or later") from e
        raise
    return _rebuild_safetensors(items, metadata, source, map_location)


def _rebuild_safetensors(items, metadata, source, map_location):
    """The object a safetensors file holds: its structure rebuilt, or an OrderedDict."""
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


def get_unsafe_globals_in_checkpoint(f):
    """The globals a torch.save archive names that weights-only loading does not allow (those
    to pass to add_safe_globals after checking them)."""
    import pickletools
    from . import _pickle_format, _torch_globals, _weights_only
    _, _, archive, _ = _open_source(f)
    if archive is None:
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    with archive[0]:
        reader = _pickle_format.ZipReader(*archive)
        if reader.has("constants.pkl"):
            raise ValueError("Expected input to be a checkpoint returned by torch.save but got a torchscript "
                             "checkpoint")
        data = reader.read("data.pkl")
    found = set()
    for opcode, arg, _ in pickletools.genops(data):
        if opcode.name == "GLOBAL":
            module, name = _weights_only.read_global(io.BytesIO(arg.replace(" ", "\n", 1).encode() + b"\n").readline)
            found.add(f"{module}.{name}")
    safe = set(_torch_globals.default_allowed()) | set(_weights_only.user_allowed())
    return sorted(found - safe)
