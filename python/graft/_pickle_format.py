"""PyTorch's checkpoint format, what torch.save writes since PyTorch 1.6: a zip archive of
``<name>/data.pkl`` (the object, pickled with protocol 2; each tensor is a call of
``torch._utils._rebuild_tensor_v2`` on a storage named by a persistent id ``('storage',
torch.FloatStorage, '<key>', 'cpu', <numel>)``), ``<name>/data/<key>`` (each storage's bytes,
little-endian), ``byteorder``, ``version`` ("3") and PyTorch 2.x's ``.format_version``,
``.storage_alignment`` and ``.data/serialization_id``. Records are stored uncompressed, their
data aligned to 64 bytes as PyTorch aligns them.

Saving: tensors that share memory (views) share one storage record, found by their data
pointers; the record holds the part of the storage the saved tensors (and the tensors they are
views of) reach. Loading: every storage is read once into graft memory (checked against the
archive first), and tensors are views of it. See docs/checkpoints.md ("PyTorch's format")."""
import array
import collections
import ctypes
import io
import os
import pickle
import re
import struct
import sys
import types
import zipfile

from . import _C
from . import _torch_globals as _globals
from ._weights_only import WeightsUnpickler, UNSAFE_MESSAGE, failure_message

DEFAULT_PROTOCOL = 2  # serialization.DEFAULT_PROTOCOL
_ALIGNMENT = 64
_MAX_VERSION = 10
_CORRUPT = (". This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
            "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
            "transferred incorrectly, or the file was modified after saving.")
_CUDA_MESSAGE = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you "
                 "are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') "
                 "to map your storages to the CPU.")
_MAX_DEFLATE_RATIO = 1032  # deflate cannot expand data more than this


def raw_memory(t):
    """A writable memoryview of a contiguous CPU tensor's bytes (no copy); ``t`` must outlive it."""
    n = t.numel() * t.dtype.itemsize
    if n == 0:
        return memoryview(bytearray(0))
    return memoryview((ctypes.c_ubyte * n).from_address(t.data_ptr())).cast("B")


# ---- saving ----

class _StorageRecord:
    """A storage to write: its key, PyTorch storage class, elements and a tensor over it."""

    __slots__ = ("key", "storage_type", "numel", "source")

    def __init__(self, key, storage_type, numel, source):
        self.key, self.storage_type, self.numel, self.source = key, storage_type, numel, source


def _extent(t):
    """Elements of its storage that ``t`` reaches (from the storage's start)."""
    if t.numel() == 0:
        return 0
    return t.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))


class StorageTable:
    """Groups the saved tensors by the memory they view: one record per (start of storage,
    dtype), sized to what they all reach. ``sizes`` primes the sizes from an earlier pass."""

    def __init__(self, sizes=None):
        self.records = {}
        self.sizes = dict(sizes or {})
        self.dtype_at = {}
        self.grew = False  # a record met later needed more than its persistent id said

    def record_for(self, t):
        """The record of ``t``'s storage."""
        itemsize = t.dtype.itemsize
        base = t.data_ptr() - t.storage_offset() * itemsize
        name = _globals.dtype_name(t.dtype)
        if name not in _globals.STORAGE_FOR_DTYPE:
            raise TypeError(f"graft.save: cannot save a tensor of dtype {t.dtype}")
        need = _extent(t)
        root = t
        while root._base is not None:
            root = root._base
        if root is not t and root.dtype == t.dtype and root.data_ptr() - root.storage_offset() * itemsize == base:
            need = max(need, _extent(root))
        if t.numel() and self.dtype_at.setdefault(base, name) != name:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        group = (base, name)
        self.sizes[group] = max(self.sizes.get(group, 0), need)
        rec = self.records.get(group)
        if rec is None:
            storage_type = _globals.default_allowed()["torch." + _globals.STORAGE_FOR_DTYPE[name]]
            rec = self.records[group] = _StorageRecord(str(len(self.records)), storage_type, self.sizes[group], t)
        elif need > rec.numel:
            self.grew = True
        return rec


class TorchPickler(pickle._Pickler):
    """pickle's Python pickler, writing graft's tensors, parameters, dtypes, devices and sizes
    as PyTorch pickles its own (``torch.*`` globals), so that torch.load reads the result."""

    def __init__(self, file, protocol, table):
        super().__init__(file, protocol)
        self.table = table
        self.parameter = _globals._parameter_class()
        from ._tensor import Size
        self.size_class = Size

    def persistent_id(self, obj):
        """Storages go to their own records."""
        if type(obj) is _StorageRecord:
            return ("storage", obj.storage_type, obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        """PyTorch's reductions for graft's objects; graft's functions and classes by the names
        PyTorch gives them (pickle's dispatch table would bypass save_global)."""
        t = type(obj)
        if isinstance(obj, _C.Tensor):
            return self.reduce_tensor(obj)
        if t is self.size_class:
            return (self.size_class, (tuple(obj),))
        if t is _C.device:
            return (_C.device, (str(obj),))
        if t is _C.dtype or t is _globals.StorageType or isinstance(obj, _BY_REFERENCE):
            path = _globals.torch_path(obj)
            if path is not None:
                return path[1]  # pickle calls self.save_global(obj, name)
            if isinstance(obj, (type, types.FunctionType)):  # (a builtin method pickles by reduction)
                _check_global(obj, None)
        return NotImplemented

    def reduce_tensor(self, t):
        """torch._utils._rebuild_tensor_v2 (_rebuild_parameter, _rebuild_meta_tensor_no_storage);
        a tensor with attributes goes through _rebuild_from_type_v2 (or
        _rebuild_parameter_with_state), as in PyTorch 2.x."""
        state = dict(t.__dict__) or None
        if isinstance(t, self.parameter):
            if state:
                return (_globals._rebuild_parameter_with_state,
                        (t.detach(), t.requires_grad, collections.OrderedDict(), state))
            return (_globals._rebuild_parameter, (t.detach(), t.requires_grad, collections.OrderedDict()))
        size, stride = tuple(t.shape), tuple(t.stride())
        if t.device.type == "meta":
            rv = (_globals._rebuild_meta_tensor_no_storage, (t.dtype, size, stride, t.requires_grad))
        elif t.device.type != "cpu":
            raise RuntimeError(f"graft.save: cannot save a tensor on {t.device}")
        else:
            rec = self.table.record_for(t)
            rv = (_globals._rebuild_tensor_v2,
                  (rec, t.storage_offset(), size, stride, t.requires_grad, collections.OrderedDict()))
        return (_globals._rebuild_from_type_v2, (rv[0], _C.Tensor, rv[1], state)) if state else rv

    def save_global(self, obj, name=None):
        """graft's objects under PyTorch's names; others as pickle writes them, with the C
        pickler's errors (an AttributeError for a local object, as torch.save raises)."""
        path = _globals.torch_path(obj)
        if path is None or (path[0] != "torch" and not path[0].startswith("torch.")):
            _check_global(obj, name)
            return super().save_global(obj, name)
        if _globals._torch_paths().get(id(obj)) is None and not isinstance(obj, (_C.dtype, _globals.StorageType)):
            _check_global(obj, name)  # a graft class or function: reachable under its own name
        module, qualname = path
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + bytes(f"{module}\n{qualname}\n", "utf-8"))
        self.memoize(obj)


_BY_REFERENCE = (type, types.FunctionType, types.BuiltinFunctionType)


def _check_global(obj, name):
    """Raises what the C pickler raises for an object it cannot pickle by reference."""
    name = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(name, str):
        return  # pickle's own error follows
    module_name = pickle.whichmodule(obj, name)
    if "<locals>" in name.split("."):
        raise AttributeError(f"Can't pickle local object {name!r}")
    try:
        __import__(module_name, level=0)
        found = sys.modules[module_name]
    except (ImportError, KeyError, ValueError):
        raise pickle.PicklingError(f"Can't pickle {obj!r}: import of module {module_name!r} failed") from None
    try:
        for part in name.split("."):
            found = getattr(found, part)
    except AttributeError:
        raise pickle.PicklingError(f"Can't pickle {obj!r}: attribute lookup {name} on {module_name} failed") from None
    if found is not obj:
        raise pickle.PicklingError(f"Can't pickle {obj!r}: it's not the same object as {module_name}.{name}")


def pickle_object(obj, protocol=DEFAULT_PROTOCOL):
    """(data.pkl's bytes, the storage records) for ``obj``. A second pass runs when a storage
    met early turned out to be reached further by a tensor met later."""
    table = StorageTable()
    for _ in range(2):
        buf = io.BytesIO()
        TorchPickler(buf, protocol, table).dump(obj)
        if not table.grew:
            break
        table = StorageTable(table.sizes)
    return buf.getvalue(), list(table.records.values())


def _archive_records(data, storages, byteorder_record):
    """(name, bytes, owner) for each record, in PyTorch 2.x's order."""
    yield "data.pkl", data, None
    yield ".format_version", b"1", None
    yield ".storage_alignment", str(_ALIGNMENT).encode(), None
    if byteorder_record:
        yield "byteorder", sys.byteorder.encode(), None
    for rec in storages:
        whole = rec.source.detach().as_strided((rec.numel,), (1,), 0)
        yield f"data/{rec.key}", raw_memory(whole), whole
    yield "version", b"3\n", None
    ident = int.from_bytes(os.urandom(16), "little")
    yield ".data/serialization_id", f"{ident >> 64:020d}{ident & (2 ** 64 - 1):020d}".encode(), None


def write_archive(fileobj, archive_name, data, storages, byteorder_record=True):
    """Writes the zip archive: stored records, each one's data aligned to 64 bytes by padding
    in its local header's extra field (PyTorch's 'FB' field)."""
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, payload, owner in _archive_records(data, storages, byteorder_record):
            info = zipfile.ZipInfo(f"{archive_name}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = len(payload)
            info.CRC = info.compress_size = 0  # written by zipfile; FileHeader() needs them
            zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
            info.extra = b"FB\0\0"
            pad = -(zf.start_dir + len(info.FileHeader(zip64))) % _ALIGNMENT
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            with zf.open(info, "w", force_zip64=zip64) as w:
                for begin in range(0, len(payload), 1 << 26):
                    w.write(payload[begin:begin + (1 << 26)])
            del owner


def archive_name_for(f):
    """The archive's folder: a path's file name without its extension, else 'archive'."""
    if isinstance(f, (str, bytes, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fsdecode(os.fspath(f))))[0]
        return stem or "archive"
    return "archive"


# ---- loading ----

class ZipReader:
    """A torch.save archive, checked as PyTorch's reader checks it (its errors); every record
    read is checked against the archive's size before memory is allocated for it."""

    def __init__(self, fileobj, size):
        try:
            self.zf = zipfile.ZipFile(fileobj)
            names = self.zf.namelist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, EOFError, OSError,
                NotImplementedError, OverflowError, KeyError, IndexError) as e:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory"
                               + _CORRUPT) from e
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive has no records" + _CORRUPT)
        if "/" not in names[0]:
            raise RuntimeError(f"file in archive is not in a subdirectory: {names[0]}")
        self.prefix = names[0].split("/", 1)[0] + "/"
        for n in names:
            if not n.startswith(self.prefix):
                raise RuntimeError(f"file in archive is not in a subdirectory {self.prefix}: {n}")
        self.names = set(names)
        self.size = size

    def has(self, name):
        """Whether the archive holds record ``name``."""
        return self.prefix + name in self.names

    def info(self, name):
        """The zip entry of record ``name``."""
        try:
            return self.zf.getinfo(self.prefix + name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found{_CORRUPT}") from None

    def claim(self, name, info):
        """Refuses a record whose sizes the archive cannot hold, before memory is allocated for
        it: stored data lies within the archive, deflated data expands at most as deflate can.
        (zipfile checks each local header's name, so two records cannot share their data.)"""
        if info.compress_type == zipfile.ZIP_STORED:
            sizes_ok = info.file_size == info.compress_size
        else:
            sizes_ok = (info.compress_type == zipfile.ZIP_DEFLATED
                        and info.file_size <= info.compress_size * _MAX_DEFLATE_RATIO + 1024)
        if not sizes_ok or info.header_offset + info.compress_size > self.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record's sizes ({info.file_size} "
                               f"bytes, {info.compress_size} in the archive, method {info.compress_type}) do not fit "
                               f"in the archive{_CORRUPT}")

    def read_into(self, name, info, out):
        """Reads record ``name`` (claimed) into the memoryview ``out`` of its size, CRC checked."""
        try:
            with self.zf.open(info) as f:
                done = 0
                while done < len(out):
                    n = f.readinto(out[done:])
                    if not n:
                        raise EOFError("the record ends early")
                    done += n
                if f.read(1):
                    raise EOFError("the record is longer than its size")
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error, NotImplementedError, RuntimeError,
                OverflowError, IndexError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: file read failed ({e}){_CORRUPT}"
                               ) from None

    def read(self, name):
        """Record ``name``'s bytes."""
        info = self.info(name)
        self.claim(name, info)
        out = bytearray(info.file_size)
        self.read_into(name, info, memoryview(out))
        return bytes(out)

    def version(self):
        """The archive's format version, checked as PyTorch checks it."""
        name = ".data/version" if self.has(".data/version") else "version"
        if not self.has(name):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.  (Could this error message '
                               "be improved?  If so, please report an enhancement request to PyTorch.)")
        text = self.read(name).decode("utf-8", "replace")
        if not re.fullmatch(r"\s*[+-]?[0-9]{1,18}\s*", text):
            raise RuntimeError(f"Couldn't parse the version {text} as Long Long.")
        v = int(text)
        if v < 1:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {v}, but the minimum supported version "
                               "for reading is 1. Your PyTorch script module file is too old. Please regenerate it "
                               "with latest version of PyTorch to mitigate this issue.")
        if v > _MAX_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {v}, but the maximum supported version "
                               f"for reading is {_MAX_VERSION}. The version of your PyTorch installation may be too "
                               "old, please upgrade PyTorch to latest version to mitigate this issue.")
        return v

    def byteorder(self):
        """'little' or 'big': how the storages' bytes are ordered."""
        if not self.has("byteorder"):
            return sys.byteorder
        order = self.read("byteorder").decode("utf-8", "replace")
        if order not in ("little", "big"):
            raise ValueError("Unknown endianness type: " + order)
        return order


_BOOL_TABLE = bytes([0] + [1] * 255)  # any non-zero byte is true


def _byteswapped(raw, itemsize):
    """``raw`` with each element's bytes reversed (a big-endian archive)."""
    code = next(c for c in "HILQ" if array.array(c).itemsize == itemsize)
    a = array.array(code)
    a.frombytes(raw)
    a.byteswap()
    return a.tobytes()


def _widened(raw, convert):
    """The elements of ``raw`` (little-endian ``convert``: int8, uint8, int16 or bool) as graft's
    int32 / bool bytes; every value is kept exactly."""
    if convert == "bool":
        return raw.translate(_BOOL_TABLE)
    if convert == "uint8":
        out = bytearray(len(raw) * 4)
        out[0::4] = raw
        return out
    code = {"int8": "b", "int16": "h"}[convert]
    wide = array.array("i" if array.array("i").itemsize == 4 else "l", memoryview(raw).cast(code))
    return wide.tobytes()


def _default_restore(tensor, location):
    """A storage restored at ``location`` as PyTorch's default_restore_location does."""
    if location == "cpu":
        return tensor
    if location.startswith("cuda"):
        raise RuntimeError(_CUDA_MESSAGE)
    if location == "meta":
        return tensor.to("meta")
    raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                       f"{location})")


def _location_string(value):
    """A map_location entry as a location name."""
    if isinstance(value, bytes):
        return value.decode("ascii")
    return str(value) if isinstance(value, (str, _C.device)) else value


def restore_location(tensor, location, map_location):
    """torch.load's map_location applied to a storage (a 1-D tensor) tagged ``location``: None,
    a device or its name, a {file location: location} dict, or a callable (storage, location)
    returning a storage (None: the default)."""
    if map_location is None:
        return _default_restore(tensor, location)
    if isinstance(map_location, dict):
        return _default_restore(tensor, _location_string(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes, _C.device)):
        return _default_restore(tensor, _location_string(map_location))
    result = map_location(tensor, location)
    if result is None:
        return _default_restore(tensor, location)
    if not isinstance(result, _C.Tensor) or result.dim() != 1 or result.numel() != tensor.numel():
        raise TypeError(f"graft.load: map_location returned {type(result).__name__}; it must return the storage it "
                        "was given (a 1-D tensor), moved, or None")
    return result


class StorageLoader:
    """torch.load's persistent_load: reads each storage record once (by key)."""

    def __init__(self, reader, map_location, byteorder):
        self.reader, self.map_location, self.byteorder = reader, map_location, byteorder
        self.loaded = {}

    def __call__(self, saved_id):
        """The storage a persistent id names, loaded on first use."""
        typename = _decode_ascii(saved_id[0])
        if typename != "storage":
            raise AssertionError(f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'")
        storage_type, key, location, numel = saved_id[1:]
        key, location = _decode_ascii(key), _decode_ascii(location)
        if not isinstance(key, str) or not isinstance(location, str):
            raise TypeError("graft.load: a storage's key and location must be strings")
        if key in self.loaded:
            return self.loaded[key]
        if not isinstance(storage_type, _globals.StorageType):
            raise TypeError(f"graft.load: a storage's type must be a torch storage class, not {storage_type!r}")
        if storage_type.dtype is None:
            raise TypeError(f"graft.load: the file holds a storage of type {storage_type!r} "
                            f"({storage_type.file_dtype}), which graft cannot load ({_globals._GRAFT_HAS}; int8, "
                            "uint8 and int16 storages are widened on load)")
        if type(numel) is not int:
            raise TypeError(f"graft.load: a storage's size must be an int, not {type(numel).__name__}")
        tensor = self.read(f"data/{key}", storage_type, numel)
        storage = _globals.LoadedStorage(restore_location(tensor, location, self.map_location), storage_type)
        self.loaded[key] = storage
        return storage

    def read(self, name, storage_type, numel):
        """The record's elements as a new 1-D graft tensor."""
        info = self.reader.info(name)
        nbytes = numel * storage_type.itemsize
        if info.file_size != nbytes:
            raise RuntimeError(f"record size ({info.file_size} bytes) does not match expected size ({nbytes} bytes = "
                               f"{nbytes} elements * 1 bytes/element) for dtype Byte")
        self.reader.claim(name, info)
        out = _C.empty(numel, dtype=storage_type.dtype)
        if storage_type.convert is None and (self.byteorder == "little" or storage_type.itemsize == 1):
            self.reader.read_into(name, info, raw_memory(out))  # straight into graft's memory
            return out
        raw = bytearray(nbytes)
        self.reader.read_into(name, info, memoryview(raw))
        if self.byteorder == "big" and storage_type.itemsize > 1:
            raw = _byteswapped(raw, storage_type.itemsize)
        raw_memory(out)[:] = _widened(bytes(raw), storage_type.convert) if storage_type.convert else raw
        return out


def _decode_ascii(value):
    """A persistent id's bytes field (Python 2 pickles) as str."""
    return str(value, "ascii") if isinstance(value, bytes) else value


def _full_unpickler(pickle_module, data, persistent_load, **kwargs):
    """pickle_module's Unpickler with torch.* globals resolved to graft's objects."""
    base = pickle_module.Unpickler

    class Unpickler(base):
        def find_class(self, module, name):
            """torch.* names resolved to graft's objects; others imported."""
            full = f"{module}.{name}"
            allowed = _globals.default_allowed()
            if full in allowed:
                return _globals.resolve(allowed[full])
            if module == "torch" or module.startswith("torch."):
                return _globals.graft_object(module, name)
            return super().find_class(module, name)

        def persistent_load(self, pid):
            """Storages from the archive."""
            return persistent_load(pid)

    return Unpickler(io.BytesIO(data), **kwargs)


def load(fileobj, size, map_location, weights_only, pickle_module, pickle_load_args):
    """Reads a torch.save archive from the seekable binary ``fileobj`` of ``size`` bytes."""
    reader = ZipReader(fileobj, size)
    reader.version()
    if reader.has("constants.pkl"):
        if weights_only:
            raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives passed to "
                               "``torch.load``. " + UNSAFE_MESSAGE)
        raise RuntimeError("graft.load: the file is a TorchScript archive (torch.jit.save), which graft cannot load")
    loader = StorageLoader(reader, map_location, reader.byteorder())
    data = reader.read("data.pkl")
    if weights_only:
        unpickler = WeightsUnpickler(io.BytesIO(data), loader, encoding=pickle_load_args.get("encoding", "utf-8"))
        try:
            return unpickler.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(failure_message(str(e))) from None
    return _full_unpickler(pickle_module or pickle, data, loader, **pickle_load_args).load()


def save(obj, f, protocol=DEFAULT_PROTOCOL, byteorder_record=True):
    """Writes ``obj`` to ``f`` (a path, replaced atomically, or a binary file object) as
    torch.save does. The object is pickled first: if that fails, nothing is written."""
    data, storages = pickle_object(obj, protocol)
    name = archive_name_for(f)
    if isinstance(f, (str, bytes, os.PathLike)):
        from ._atomic_file import write_atomically
        write_atomically(f, lambda fh: write_archive(fh, name, data, storages, byteorder_record))
    else:
        write_archive(f, name, data, storages, byteorder_record)
