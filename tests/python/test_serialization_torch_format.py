"""graft.save / graft.load in PyTorch's own format (the zip archive torch.save writes since 1.6):
round trips of Python objects, tensors, Parameters and views; files written by PyTorch 1.13 load
in graft and files graft writes load in PyTorch 1.13 (and in PyTorch 2.x when one is found, see
GRAFT_TORCH2_PYTHON); weights_only loading, its refusals and the allowlist; hostile and broken
archives, refused with PyTorch's errors; atomic saves."""
import argparse
import collections
import io
import json
import math
import os
import pathlib
import pickle
import struct
import subprocess
import zipfile

import numpy as np
import pytest

import graft

TORCH2 = os.environ.get("GRAFT_TORCH2_PYTHON", "/tmp/ci/build/venv-torch2/bin/python")


def saved(obj, **kwargs):
    """What graft.save writes for ``obj`` to a file object."""
    buf = io.BytesIO()
    graft.save(obj, buf, **kwargs)
    return buf.getvalue()


def loaded(data, **kwargs):
    """graft.load from bytes."""
    return graft.load(io.BytesIO(data), **kwargs)


def records(data):
    """{name: bytes} of an archive's records."""
    zf = zipfile.ZipFile(io.BytesIO(data))
    return {n: zf.read(n) for n in zf.namelist()}


def run_torch2(code, *args):
    """Runs ``code`` in a PyTorch 2.x interpreter; its stdout is JSON."""
    if not os.path.exists(TORCH2):
        pytest.skip("no PyTorch 2.x interpreter (set GRAFT_TORCH2_PYTHON)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([TORCH2, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


class Point:
    """A user class: pickled by reference, loaded with weights_only=False or when allowlisted."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Point and (self.x, self.y) == (other.x, other.y)


def test_python_objects_round_trip_through_paths_and_file_objects(tmp_path):
    obj = {"none": None, "str": "ünï", "int": -(2 ** 70), "float": 0.25, "inf": math.inf, "flags": (True, False),
           "bytes": b"\x00\xff", "bytearray": bytearray(b"ab"), "set": {1, 2}, "complex": 1 + 2j,
           "list": [1, [2, (3,)]], "od": collections.OrderedDict([("b", 1), ("a", 2)]),
           "counter": collections.Counter("aab"), "ns": argparse.Namespace(lr=0.1, name="run"),
           "np": np.arange(6, dtype=np.float32).reshape(2, 3), "point": Point(1, [2]), "size": graft.Size([2, 3]),
           "dtype": graft.int64, "device": graft.device("cpu"), 5: "int key", (1, 2): "tuple key"}
    path = tmp_path / "obj.pt"
    graft.save(obj, path)
    for back in (graft.load(path, weights_only=False), loaded(saved(obj), weights_only=False)):
        assert list(back) == list(obj)
        for k in obj:
            if k != "np":
                assert back[k] == obj[k] and type(back[k]) is type(obj[k]), k
        assert np.array_equal(back["np"], obj["np"]) and back["np"].dtype == np.float32
        assert back["dtype"] is graft.int64 and type(back["size"]) is graft.Size
    # what the default (weights_only=True) builds: everything but numpy, the Namespace and Point
    plain = {k: v for k, v in obj.items() if k not in ("np", "ns", "point")}
    assert loaded(saved(plain)) == plain
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL argparse\.Namespace was not an allowed global"):
        graft.load(path)


def test_tensors_parameters_and_views_round_trip_sharing_memory(tmp_path):
    x = graft.arange(12, dtype=graft.float32)
    w = graft.nn.Parameter(graft.tensor([[1.0, -2.0], [3.0, 4.0]]))
    obj = {"x": x, "rows": x.view(3, 4)[1:], "t": x.view(3, 4).t(), "again": x, "w": w, "w_t": w.detach().t(),
           "grad": graft.tensor([0.5], requires_grad=True), "frozen": graft.nn.Parameter(graft.ones(1), False),
           "i64": graft.tensor([[-(2 ** 40)]]), "i32": graft.tensor([7], dtype=graft.int32),
           "b": graft.tensor([True, False]), "f64": graft.tensor(2.5, dtype=graft.float64),
           "empty": graft.zeros(0, 3), "tail": x[12:], "expanded": graft.ones(3).expand(2, 3),
           "meta": graft.empty(2, 3, device="meta")}
    data = saved(obj)
    names = sorted(n for n in records(data) if "/data/" in n)
    assert len(names) == 10  # x's storage once for x, rows, t, again and tail; w's once for w and w_t
    back = loaded(data)
    for k, t in obj.items():
        b = back[k]
        assert (type(b), b.dtype, b.shape, b.stride(), b.storage_offset(), b.requires_grad, b.device) == \
            (type(t), t.dtype, t.shape, t.stride(), t.storage_offset(), t.requires_grad, t.device), k
        if t.device.type == "cpu":
            assert b.tolist() == t.tolist(), k
        assert b._base is None, k
    assert back["again"] is back["x"] and type(back["w"]) is graft.nn.Parameter
    back["x"][5] = 100.0  # the views share the loaded storage
    assert back["rows"][0, 1].item() == 100.0 and back["t"][1, 1].item() == 100.0
    with graft.no_grad():
        back["w"][0, 1] = 9.0
    assert back["w_t"][1, 0].item() == 9.0
    graft.save(obj, tmp_path / "o.pt")
    assert sorted(records((tmp_path / "o.pt").read_bytes())) == sorted(n.replace("archive/", "o/")
                                                                        for n in records(data))


def test_a_view_met_before_the_tensor_reaching_further_gets_the_whole_storage():
    x = graft.arange(6, dtype=graft.float64)
    early = x[1:3].detach()  # shares x's memory, but is no view of it (no _base): met first
    data = saved([early, x])
    pkl = records(data)["archive/data.pkl"]
    assert pkl.count(b"K\x06t") == 2  # both persistent ids say 6 elements (a second pass fixed the first)
    assert len([n for n in records(data) if "/data/" in n]) == 1
    a, b = loaded(data)
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    b[1] = -1.0
    assert a[0].item() == -1.0


def test_the_archive_is_laid_out_as_pytorch_2_writes_it(tmp_path):
    path = tmp_path / "two.dots.pt"
    graft.save({"w": graft.ones(3), "b": graft.zeros(1)}, path)
    raw = path.read_bytes()
    zf = zipfile.ZipFile(path)
    assert zf.namelist() == ["two.dots/data.pkl", "two.dots/.format_version", "two.dots/.storage_alignment",
                             "two.dots/byteorder", "two.dots/data/0", "two.dots/data/1", "two.dots/version",
                             "two.dots/.data/serialization_id"]
    rec = {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist()}
    assert (rec[".format_version"], rec[".storage_alignment"], rec["byteorder"], rec["version"]) == \
        (b"1", b"64", b"little", b"3\n")
    assert rec["data/0"] == struct.pack("<3f", 1, 1, 1) and len(rec[".data/serialization_id"]) == 40
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename  # aligned data
    assert zipfile.ZipFile(io.BytesIO(saved([]))).namelist()[0] == "archive/data.pkl"

    class WriteOnly:  # a pipe or socket: no tell() or seek(); zipfile writes data descriptors
        def __init__(self):
            self.data = bytearray()

        def write(self, b):
            self.data += b
            return len(b)

        def flush(self):
            pass

    stream = WriteOnly()
    graft.save({"w": graft.ones(3)}, stream)
    raw = bytes(stream.data)
    for info in zipfile.ZipFile(io.BytesIO(raw)).infolist():
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0 and info.flag_bits & 8, info.filename
    assert loaded(raw)["w"].tolist() == [1.0, 1.0, 1.0]
    no_order = saved([], _disable_byteorder_record=True)
    assert "archive/byteorder" not in records(no_order) and loaded(no_order) == []


def test_files_written_by_pytorch_load_in_graft(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    base = torch.arange(12.0)
    obj = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3, "view": base.view(3, 4)[1:, 1:],
           "base": base, "param": torch.nn.Parameter(torch.ones(2)), "f16": torch.tensor([1.5, -65504.0]).half(),
           "bf16": torch.tensor([1.5, -3e38]).bfloat16(), "u8": torch.tensor([0, 255], dtype=torch.uint8),
           "i8": torch.tensor([-128, 127], dtype=torch.int8), "i16": torch.tensor([-32768, 9], dtype=torch.int16),
           "bool": torch.tensor([True, False]), "grad": torch.ones(2, requires_grad=True)}
    torch.save(obj, tmp_path / "t.pt")
    back = graft.load(tmp_path / "t.pt")
    assert list(back) == list(obj) and type(back["model"]) is collections.OrderedDict
    for k, v in obj["model"].items():
        assert back["model"][k].tolist() == v.tolist() and back["model"][k].shape == tuple(v.shape), k
    assert back["opt"]["param_groups"] == obj["opt"]["param_groups"] and list(back["opt"]["state"]) == [0, 1, 2, 3]
    assert back["opt"]["state"][0]["exp_avg"].tolist() == obj["opt"]["state"][0]["exp_avg"].tolist()
    assert back["view"].tolist() == obj["view"].tolist() and back["view"].stride() == (4, 1)
    assert back["view"].data_ptr() == back["base"].data_ptr() + 5 * 4  # one storage again
    assert type(back["param"]) is graft.nn.Parameter and back["grad"].requires_grad
    for k in ("f16", "bf16", "u8", "i8", "i16"):  # the 16-bit floats as they are, the small integers widened exactly
        assert back[k].tolist() == obj[k].tolist(), k
    assert back["f16"].dtype == graft.float16 and back["bf16"].dtype == graft.bfloat16
    assert back["u8"].dtype == graft.int32
    assert back["bool"].tolist() == [True, False]
    mine = graft.nn.Sequential(graft.nn.Linear(3, 4), graft.nn.BatchNorm1d(4))
    mine.load_state_dict(back["model"])
    x = [[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]]
    mine.eval(), model.eval()
    assert np.allclose(mine(graft.tensor(x)).tolist(), model(torch.tensor(x)).tolist(), atol=1e-6)


def test_files_written_by_graft_load_in_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    x = graft.arange(12, dtype=graft.float32)
    lin = graft.nn.Linear(2, 3)
    obj = {"sd": lin.state_dict(), "view": x.view(3, 4)[1:], "x": x, "p": graft.nn.Parameter(graft.ones(2)),
           "i": graft.tensor([2 ** 40]), "b": graft.tensor([True]), "d": graft.float64, "size": graft.Size([1, 2]),
           "dev": graft.device("cpu"), "np": np.ones(2), "ns": argparse.Namespace(a=1),
           "meta": graft.empty(2, device="meta")}
    graft.save(obj, tmp_path / "g.pt")
    back = torch.load(tmp_path / "g.pt")
    assert back["sd"]["weight"].tolist() == lin.weight.tolist() and type(back["sd"]) is collections.OrderedDict
    assert back["view"].tolist() == obj["view"].tolist() and back["view"].storage_offset() == 4
    assert back["view"].storage().data_ptr() == back["x"].storage().data_ptr()  # shared again in PyTorch
    assert type(back["p"]) is torch.nn.Parameter and back["p"].requires_grad
    assert back["i"].dtype == torch.int64 and back["b"].dtype == torch.bool and back["d"] is torch.float64
    assert back["size"] == torch.Size([1, 2]) and back["dev"] == torch.device("cpu")
    assert np.array_equal(back["np"], np.ones(2)) and back["ns"] == argparse.Namespace(a=1)
    assert back["meta"].is_meta and back["meta"].shape == (2,)
    sd = {k: v for k, v in obj["sd"].items()}
    assert torch.load(io.BytesIO(saved(sd)), weights_only=True)["bias"].tolist() == lin.bias.tolist()


_TORCH2_READ = """
import json, sys, torch
out = {}
back = torch.load(sys.argv[1])  # weights_only=True, 2.x's default
out["x"] = back["x"].tolist()
out["shared"] = back["v"].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
out["p"] = type(back["p"]).__name__; out["attr"] = back["t"].note
base = torch.arange(6.0)
torch.save({"v": base[2:], "base": base, "h": torch.tensor([0.5]).half(), "p": torch.nn.Parameter(torch.ones(1))},
           sys.argv[2])
print(json.dumps(out))
"""


def test_pytorch_2_reads_graft_files_weights_only_and_graft_reads_its_files(tmp_path):
    x = graft.arange(4, dtype=graft.float32)
    t = graft.ones(1)
    t.note = "kept"  # an attribute: saved through _rebuild_from_type_v2, as PyTorch 2.x saves it
    graft.save({"x": x, "v": x[1:], "p": graft.nn.Parameter(graft.ones(1)), "t": t}, tmp_path / "g.pt")
    out = run_torch2(_TORCH2_READ, tmp_path / "g.pt", tmp_path / "t2.pt")
    assert out == {"x": [0.0, 1.0, 2.0, 3.0], "shared": True, "p": "Parameter", "attr": "kept"}
    back = graft.load(tmp_path / "t2.pt")
    assert back["v"].tolist() == [2.0, 3.0, 4.0, 5.0] and back["v"].data_ptr() == back["base"].data_ptr() + 8
    assert back["h"].tolist() == [0.5] and type(back["p"]) is graft.nn.Parameter
    assert graft.load(tmp_path / "g.pt")["t"].note == "kept"


def archive(pkl, extra=None, prefix="archive", version=b"3\n", compression=zipfile.ZIP_STORED):
    """A zip archive holding ``pkl`` as data.pkl, and ``extra`` {name: bytes} records."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as z:
        z.writestr(f"{prefix}/data.pkl", pkl)
        for name, value in (extra or {}).items():
            z.writestr(f"{prefix}/{name}", value)
        if version is not None:
            z.writestr(f"{prefix}/version", version)
    return out.getvalue()


def edited(data, edit):
    """``data``'s records {name without the folder: bytes} after ``edit``, zipped again."""
    recs = {n.split("/", 1)[1]: v for n, v in records(data).items()}
    edit(recs)
    pkl = recs.pop("data.pkl", None)
    version = recs.pop("version", None)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        if pkl is not None:
            z.writestr("archive/data.pkl", pkl)
        for name, value in recs.items():
            z.writestr(name[1:] if name.startswith("/") else f"archive/{name}", value)  # "/x": x, not archive/x
        if version is not None:
            z.writestr("archive/version", version)
    return out.getvalue()


def patched(old, new):
    """An edit replacing ``old`` (found once) by ``new`` in data.pkl."""
    def edit(recs):
        assert recs["data.pkl"].count(old) == 1, old
        recs["data.pkl"] = recs["data.pkl"].replace(old, new)
    return edit


# pickles the weights-only unpickler refuses, with the message PyTorch 2.x gives
_REFUSED = {
    "namespace": (b"\x80\x02cargparse\nNamespace\nq\x00)\x81}b.", "Unsupported global: GLOBAL argparse.Namespace was "
                  "not an allowed global by default. Please use `torch.serialization.add_safe_globals"),
    "blocked": (b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00exitR.", "Trying to load unsupported GLOBAL os.system whose "
                "module os is blocked."),
    "builtin": (b"\x80\x02c__builtin__\neval\nX\x01\x00\x00\x001\x85R.", "Unsupported global: GLOBAL eval was not an "
                "allowed global by default. Please use `torch.serialization.add_safe_globals([eval])`"),
    "append": (b"\x80\x02}K\x01a.", "Can only append to lists, but got <class 'dict'>"),
    "setitem": (b"\x80\x02]K\x01K\x02s.", "Can only SETITEM for dict, collections.OrderedDict, collections.Counter, "
                "but got <class 'list'>"),
    "build": (b"\x80\x02}}b.", "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
              "`add_safe_globals`, but got <class 'dict'>"),
    "operand": (b"\x80\x02\x8c\x01a.", "Unsupported operand 140"),
    "persid": (b"\x80\x02(X\x06\x00\x00\x00moduletQ.", "Only persistent_load of storage is allowed, but got "
               "<class 'str'>"),
    "persid_list": (b"\x80\x02]Q.", "persistent_load id must be tuple or int, but got <class 'list'>"),
    "reduce": (b"\x80\x02ccollections\nOrderedDict\n)R)R.", "Trying to call reduce for unrecognized function "
               "OrderedDict()"),
}

_TORCH2_ERRORS = """
import io, json, sys, torch
out = {}
for path in sys.argv[1:]:
    try:
        torch.load(path)
        out[path] = ["ok", ""]
    except BaseException as e:
        out[path] = [type(e).__name__, str(e)]
print(json.dumps(out))
"""


def graft_error(fn):
    """[exception type name, message] of what ``fn()`` raises (['ok', ''] if nothing)."""
    try:
        fn()
    except BaseException as e:  # noqa: B902 - the type is what is compared
        return [type(e).__name__, str(e)]
    return ["ok", ""]


def test_weights_only_refusals_match_pytorch_2(tmp_path):
    marker = tmp_path / "ran"
    paths = {}
    for name, (pkl, message) in _REFUSED.items():
        paths[name] = tmp_path / f"{name}.pt"
        paths[name].write_bytes(archive(pkl))
        kind, text = graft_error(lambda: graft.load(paths[name]))
        assert kind == "UnpicklingError" and text.startswith("Weights only load failed.") and message in text, name
    hostile = archive(b"\x80\x02cposix\nsystem\nX" + struct.pack("<I", len(f"touch {marker}")) +
                      f"touch {marker}".encode() + b"\x85R.")
    with pytest.raises(pickle.UnpicklingError, match="whose module posix is blocked"):
        loaded(hostile)
    assert not marker.exists()
    theirs = run_torch2(_TORCH2_ERRORS, *paths.values())
    for name, path in paths.items():
        assert graft_error(lambda: graft.load(path)) == theirs[str(path)], name


def test_malformed_and_hostile_pickles_get_typed_errors_from_the_weights_only_unpickler():
    cases = {  # graft's own checks (PyTorch 2.x raises IndexError / KeyError or builds the object)
        b"\x80\x02ctorch\ndevice\n)\x81.": "Can only create new object for nn.Parameter or classes allowlisted via "
                                          "`add_safe_globals` but got <class 'graft.device'>",
        b"\x80\x02ctorch.nn.parameter\nParameter\nK\x05\x85\x81.": "a Parameter's data must be a tensor, not int",
        b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00\x40\x85R.": "bytearray() from int is not allowed when loading",
        b"\x80\x02ccollections\nOrderedDict\nK\x01R.": "REDUCE arguments must be a tuple, not int",
        b"\x80\x02R.": "the pickle data is truncated or corrupt (stack underflow)",
        b"\x80\x02h\x05.": "Memo value not found at index 5",
        b"\x80\x02K\x01t.": "could not find MARK",
    }
    for pkl, message in cases.items():
        with pytest.raises(pickle.UnpicklingError, match=r"^Weights only load failed\.") as e:
            loaded(archive(pkl))
        assert message in str(e.value), pkl
    with pytest.raises(EOFError):
        loaded(archive(b"\x80\x02X\xff\x00\x00\x00ab"))
    back = loaded(archive(b"\x80\x02ccollections\nOrderedDict\n)\x81K\x01K\x02s."))  # NEWOBJ of an allowed class
    assert back == collections.OrderedDict([(1, 2)]) and type(back) is collections.OrderedDict


def test_the_default_allowlist_is_pytorch_2s():
    from graft import _torch_globals
    theirs = run_torch2("import json, torch\nfrom torch._weights_only_unpickler import _get_allowed_globals\n"
                        "print(json.dumps(sorted(_get_allowed_globals())))")
    assert sorted(_torch_globals.default_allowed()) == theirs


def test_allowlisting_globals():
    ns = argparse.Namespace(lr=0.5)
    data = saved({"ns": ns, "point": Point(1, 2), "np": np.arange(3.0)})
    ser = graft.serialization
    assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == [
        "argparse.Namespace", "numpy.core.multiarray._reconstruct", "numpy.dtype", "numpy.ndarray",
        f"{__name__}.Point"]
    np_globals = [np.core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype("float64"))]
    try:
        ser.add_safe_globals([argparse.Namespace, (Point, f"{__name__}.Point")])
        assert set(ser.get_safe_globals()) == {argparse.Namespace, (Point, f"{__name__}.Point")}
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL numpy\.core\.multiarray\._reconstruct was not"):
            loaded(data)
        with ser.safe_globals(np_globals):
            back = loaded(data)
            assert ser.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
        assert back["ns"] == ns and back["point"] == Point(1, 2) and back["np"].tolist() == [0.0, 1.0, 2.0]
        assert set(ser.get_safe_globals()) == {argparse.Namespace, (Point, f"{__name__}.Point")}  # removed on exit
        ser.clear_safe_globals()
        assert ser.get_safe_globals() == []
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL argparse\.Namespace was not an allowed global"):
            loaded(data)
        ser.add_safe_globals([(Point, "a", "b")])
        with pytest.raises(ValueError, match=r"^Expected tuple of length 2 \(global, str of callable full path\), but "
                                             r"got tuple of length: 3$"):
            loaded(data)
        ser.clear_safe_globals()
        ser.add_safe_globals([(Point, 5)])
        with pytest.raises(TypeError, match=r"^Expected second item in tuple to be str of callable full path, but "
                                            r"got: <class 'int'>$"):
            loaded(data)
    finally:
        ser.clear_safe_globals()


def test_whole_modules_load_with_weights_only_false_or_when_allowlisted():
    lin = graft.nn.Linear(2, 3)
    data = saved(lin)
    assert b"ctorch.nn.modules.linear\nLinear\n" in records(data)["archive/data.pkl"]  # PyTorch's name for it
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL torch\.nn\.modules\.linear\.Linear was not an allowed"):
        loaded(data)
    for back in (loaded(data, weights_only=False), loaded(data, pickle_module=pickle)):
        assert type(back) is graft.nn.Linear and back.weight.tolist() == lin.weight.tolist()
        assert back(graft.ones(1, 2)).tolist() == lin(graft.ones(1, 2)).tolist()
    with graft.serialization.safe_globals([graft.nn.Linear]):  # listed under PyTorch's name
        assert type(loaded(data)) is graft.nn.Linear


def test_weights_only_arguments_and_environment(monkeypatch):
    data = saved({"ns": argparse.Namespace(a=1)})
    refused = r"GLOBAL argparse\.Namespace was not an allowed global"
    with pytest.raises(RuntimeError, match="^Can not safely load weights when explicit pickle_module is specified$"):
        loaded(data, pickle_module=pickle, weights_only=True)
    with pytest.warns(UserWarning, match=r"^pickle_load_args only works if `weights_only=False`\.$"):
        assert loaded(saved([1]), encoding="latin1") == [1]
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError, match=refused):
        loaded(data, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match=r"^Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                                           r"`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set\.$"):
        loaded(data)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    with pytest.warns(UserWarning, match=r"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                                         r"argument was not explicitly passed"):
        assert loaded(data)["ns"].a == 1
    with pytest.raises(pickle.UnpicklingError, match=refused):  # an explicit True wins
        loaded(data, weights_only=True)


def test_pickle_protocols():
    data = saved({"x": graft.ones(2), "d": graft.float64}, pickle_protocol=4)
    back = loaded(data, weights_only=False)  # STACK_GLOBAL names graft's objects as PyTorch's
    assert back["x"].tolist() == [1.0, 1.0] and back["d"] is graft.float64
    with pytest.warns(UserWarning, match="Detected pickle protocol 4 in the checkpoint"), \
            pytest.raises(pickle.UnpicklingError, match="Unsupported operand 149"):  # as PyTorch 2.x's unpickler
        loaded(data)


_BASE = None


def base_archive():
    """graft.save({'x': arange(6.)}): its pickle is the one PyTorch writes for the same dict."""
    global _BASE
    if _BASE is None:
        _BASE = saved({"x": graft.arange(6, dtype=graft.float32)})
    return _BASE


def _set(name, value):
    """An edit setting record ``name``."""
    return lambda recs: recs.__setitem__(name, value)


def _rename(old, new):
    """An edit moving record ``old`` to ``new``."""
    return lambda recs: recs.__setitem__(new, recs.pop(old))


def _flat(recs):
    """An edit taking every record out of the archive's folder."""
    for name in list(recs):
        recs["/" + name] = recs.pop(name)  # no folder


_NUMEL = b"X\x03\x00\x00\x00cpuq\x06K\x06"
_SIZE = b"K\x00K\x06\x85q\x08K\x01\x85q\t"
# broken archives refused with PyTorch 2.x's exception and message
_PARITY = {
    "no_data_pkl": lambda recs: recs.pop("data.pkl"),
    "no_storage_record": lambda recs: recs.pop("data/0"),
    "unknown_key": patched(b"X\x01\x00\x00\x000q\x05", b"X\x01\x00\x00\x009q\x05"),
    "truncated_storage": lambda recs: recs.__setitem__("data/0", recs["data/0"][:10]),
    "longer_storage": lambda recs: recs.__setitem__("data/0", recs["data/0"] + bytes(8)),
    "absurd_numel": patched(_NUMEL, _NUMEL[:-2] + b"J\xff\xff\xff\x7f"),
    "absurd_numel_long": patched(_NUMEL, _NUMEL[:-2] + b"\x8a\x08" + struct.pack("<q", 2 ** 62 - 1)),
    "half_storage": patched(b"torch\nFloatStorage", b"torch\nHalfStorage"),
    "size_past_storage": patched(_SIZE, b"K\x00K\x0a\x85q\x08K\x01\x85q\t"),
    "offset_past_storage": patched(_SIZE, b"K\x03K\x06\x85q\x08K\x01\x85q\t"),
    "negative_size": patched(_SIZE, b"K\x00J\xff\xff\xff\xff\x85q\x08K\x01\x85q\t"),
    "negative_offset": patched(_SIZE, b"J\xff\xff\xff\xffK\x06\x85q\x08K\x01\x85q\t"),
    "negative_stride": patched(_SIZE, b"K\x00K\x06\x85q\x08J\xff\xff\xff\xff\x85q\t"),
    "overflowing_stride": patched(_SIZE, b"K\x00K\x06\x85q\x08\x8a\x08" + struct.pack("<q", 2 ** 62) + b"\x85q\t"),
    "overflowing_size": patched(_SIZE, b"K\x00\x8a\x08" + struct.pack("<q", 2 ** 62)
                                + b"K\x04\x86q\x08K\x01K\x01\x86q\t"),
    "records_without_folder": _flat,
    "record_in_another_folder": _rename("data/0", "/other/data/0"),
    "size_not_ints": patched(_SIZE, b"K\x00X\x01\x00\x00\x00a\x85q\x08K\x01\x85q\t"),
    "stride_of_another_length": patched(_SIZE, b"K\x00K\x06\x85q\x08K\x01K\x01\x86q\t"),
    "no_version": lambda recs: recs.pop("version"),
    "data_version_too_new": _set(".data/version", b"11\n"),
    "version_too_new": _set("version", b"99\n"),
    "version_not_a_number": _set("version", b"abc"),
    "unknown_byteorder": _set("byteorder", b"middle"),
    "cuda_storage": patched(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"),
    "unknown_location": patched(b"X\x03\x00\x00\x00cpu", b"X\x03\x00\x00\x00xyz"),
}


def _hostile_files(tmp_path):
    """{case: path} of the broken archives PyTorch 2.x refuses too."""
    files = {name: edited(base_archive(), edit) for name, edit in _PARITY.items()}
    files["not_a_zip"] = b"PK\x03\x04" + bytes(60)
    files["cut_in_half"] = base_archive()[:len(base_archive()) // 2]
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.pt"
        paths[name].write_bytes(data)
    return paths


def _without_enforce_prefix(error):
    """PyTorch's error without the '[enforce fail at <file>:<line>] . ' prefix of its C++ checks."""
    kind, text = error
    if text.startswith("[enforce fail at "):
        text = text[text.index("] . ") + 4:]
    return [kind, text]


def test_broken_archives_are_refused_with_pytorchs_errors(tmp_path):
    paths = _hostile_files(tmp_path)
    mine = {name: graft_error(lambda: graft.load(path)) for name, path in paths.items()}
    for name, (kind, text) in mine.items():
        assert kind in ("RuntimeError", "ValueError", "TypeError", "UnpicklingError"), (name, kind, text)
    assert mine["truncated_storage"] == ["RuntimeError", "record size (10 bytes) does not match expected size (24 "
                                         "bytes = 24 elements * 1 bytes/element) for dtype Byte"]
    assert mine["size_past_storage"] == ["RuntimeError", "Trying to resize storage that is not resizable"]
    assert mine["no_data_pkl"][1].startswith("PytorchStreamReader failed locating file data.pkl: file not found.")
    theirs = run_torch2(_TORCH2_ERRORS, *paths.values())
    for name, path in paths.items():
        if name == "size_not_ints":  # PyTorch's argument parser lists set_'s overloads: the type is compared
            assert mine[name][0] == theirs[str(path)][0] == "TypeError"
            continue
        assert mine[name] == _without_enforce_prefix(theirs[str(path)]), name


def _central_directory_sizes(data, name, size):
    """``data`` with the central directory claiming ``size`` bytes for record ``name``."""
    i = data.index(b"PK\x01\x02")  # the first central directory header
    while True:
        n, m, k = struct.unpack("<HHH", data[i + 28:i + 34])
        if data[i + 46:i + 46 + n] == name.encode():
            return data[:i + 20] + struct.pack("<II", size, size) + data[i + 28:]
        i += 46 + n + m + k


def test_archives_claiming_more_than_they_hold_are_refused_before_allocating(tmp_path):
    big = 2 ** 29  # 2 GiB of float32, claimed by a 1 KiB archive
    numel_claim = patched(_NUMEL, _NUMEL[:-2] + b"J" + struct.pack("<i", big))
    lie = _central_directory_sizes(edited(base_archive(), numel_claim), "archive/data/0", 4 * big)
    with pytest.raises(RuntimeError, match=r"failed reading file data/0: the record's sizes \(2147483648 bytes, "
                                           r"2147483648 in the archive, method 0\) do not fit in the archive"):
        loaded(lie)
    deflated = io.BytesIO()  # a deflated record may expand, but no more than deflate can
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in records(edited(base_archive(), numel_claim)).items():
            z.writestr(name, value)
    with pytest.raises(RuntimeError, match=r"failed reading file data/0: the record's sizes \(2147483648 bytes, "):
        loaded(_central_directory_sizes(deflated.getvalue(), "archive/data/0", 4 * big))
    recompressed = io.BytesIO()  # an honest deflated archive loads (PyTorch reads it too)
    with zipfile.ZipFile(recompressed, "w", zipfile.ZIP_DEFLATED) as z:
        for name, value in records(saved({"z": graft.zeros(100000)})).items():
            z.writestr(name, value)
    assert loaded(recompressed.getvalue())["z"].sum().item() == 0.0
    corrupt = bytearray(base_archive())  # a flipped data byte: the CRC check refuses it (PyTorch does not check)
    corrupt[corrupt.index(struct.pack("<f", 1.0)) + 2] ^= 0xFF
    with pytest.raises(RuntimeError, match=r"failed reading file data/0: file read failed \(Bad CRC-32"):
        loaded(bytes(corrupt))
    with pytest.raises(RuntimeError, match="the archive has no records"):
        loaded(b"PK\x03\x04" + bytes(26) + _empty_zip())  # a local header's magic, then no entries


def _empty_zip():
    """A zip archive without records."""
    out = io.BytesIO()
    zipfile.ZipFile(out, "w").close()
    return out.getvalue()


def test_a_failed_load_leaves_nothing_behind(tmp_path):
    import gc
    paths = _hostile_files(tmp_path)
    good = tmp_path / "good.pt"
    graft.save({"a": graft.ones(1000), "b": graft.ones(10)}, good)
    late_failure = edited(good.read_bytes(), lambda recs: recs.pop("data/1"))  # after storage 0 was read
    gc.collect()
    before = (graft.cpu.memory_allocated(), sorted(os.listdir("/proc/self/fd")), graft.serialization.get_safe_globals())
    for path in list(paths.values()) * 2:
        graft_error(lambda: graft.load(path))
    with pytest.raises(RuntimeError, match="failed locating file data/1"):
        loaded(late_failure)
    with pytest.raises(RuntimeError, match="failed locating file data/1"), graft.serialization.safe_globals([Point]):
        loaded(late_failure)
    gc.collect()
    assert (graft.cpu.memory_allocated(), sorted(os.listdir("/proc/self/fd")),
            graft.serialization.get_safe_globals()) == before


def _storage_archive(storage, raw, byteorder=b"little"):
    """The base archive with its 6-element storage of class ``storage`` holding ``raw``."""
    def edit(recs):
        patched(b"torch\nFloatStorage", b"torch\n" + storage.encode())(recs)
        recs["data/0"], recs["byteorder"] = raw, byteorder
    return edited(base_archive(), edit)


def test_storage_types_load_exactly_and_byte_order_is_honoured():
    """The 16-bit floats load as themselves, the small integers graft lacks widened exactly."""
    f16 = np.array([1.5, -2.0, 65504.0, 2.0 ** -24, np.inf, -0.0], "<f2")
    f32 = np.array([1.5, -3.0e38, 1.0e-38, 7.0, -np.inf, 0.1], "<f4")
    bf16 = (f32.view("<u4") >> 16).astype("<u2")
    cases = {"HalfStorage": (f16, f16.astype(np.float64)), "BFloat16Storage": (bf16, (bf16.astype("<u4") << 16).view(
        "<f4").astype(np.float64)), "CharStorage": (np.array([-128, 127, 0, -1, 5, 6], "i1"), None),
        "ByteStorage": (np.array([0, 255, 1, 128, 5, 6], "u1"), None),
        "ShortStorage": (np.array([-32768, 32767, 0, -1, 5, 6], "<i2"), None),
        "FloatStorage": (f32, f32.astype(np.float64)),
        "LongStorage": (np.array([-2 ** 62, 3, 0, 1, 2, 5], "<i8"), None)}
    for storage, (values, expected) in cases.items():
        expected = values if expected is None else expected
        for order in ("little", "big"):
            raw = values.astype(values.dtype.newbyteorder("<" if order == "little" else ">")).tobytes()
            back = loaded(_storage_archive(storage, raw, order.encode()))["x"]
            got = np.array(back.tolist())
            dtypes = {"HalfStorage": graft.float16, "BFloat16Storage": graft.bfloat16, "FloatStorage": graft.float32,
                      "LongStorage": graft.int64}
            assert np.array_equal(got, expected, equal_nan=True), (storage, order)
            assert back.dtype == dtypes.get(storage, graft.int32), (storage, order)
            assert np.array_equal(np.signbit(got), np.signbit(expected)), (storage, order)
    back = loaded(_storage_archive("BoolStorage", bytes([0, 1, 2, 255, 0, 7])))["x"]
    assert back.dtype == graft.bool and back.tolist() == [False, True, True, True, False, True]
    with pytest.raises(TypeError, match=r"^graft\.load: the file holds a storage of type torch\.ComplexFloatStorage "
                                        r"\(complex64\), which graft cannot load \(graft has bool, int32, int64, "):
        loaded(_storage_archive("ComplexFloatStorage", bytes(48)))


def test_map_location():
    data = base_archive()
    for where in ("cpu", b"cpu", graft.device("cpu"), {"cpu": "cpu"}, {"cuda:0": "meta"}, lambda s, loc: s,
                  lambda s, loc: None):
        assert loaded(data, map_location=where)["x"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], where
    seen = []
    loaded(data, map_location=lambda s, loc: seen.append((loc, type(s), tuple(s.shape), s.dtype)))
    assert seen == [("cpu", graft.Tensor, (6,), graft.float32)]  # a storage: its elements as a 1-D tensor
    on_meta = loaded(data, map_location="meta")["x"]
    assert on_meta.device.type == "meta" and on_meta.shape == (6,)
    cuda = edited(data, _PARITY["cuda_storage"])
    for where in ("cpu", {"cuda:0": "cpu"}, graft.device("cpu"), lambda s, loc: s):
        assert loaded(cuda, map_location=where)["x"].tolist()[:2] == [0.0, 1.0], where
    for where in (None, {"cuda:1": "cpu"}, lambda s, loc: None):
        with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA device but "
                                               r"torch\.cuda\.is_available\(\) is False\. If you are running"):
            loaded(cuda, map_location=where)
    with pytest.raises(TypeError, match=r"map_location returned int; it must return the storage it was given"):
        loaded(data, map_location=lambda s, loc: 5)


def test_torchscript_archives_and_what_graft_lacks_are_refused_clearly():
    scripted = archive(b"\x80\x02}.", {"constants.pkl": b"\x80\x02).", "code/x.py": b""})
    with pytest.raises(RuntimeError, match=r"^Cannot use ``weights_only=True`` with TorchScript archives passed to "
                                           r"``torch\.load``\. In PyTorch 2\.6"):
        loaded(scripted)
    with pytest.raises(RuntimeError, match=r"^graft\.load: the file is a TorchScript archive \(torch\.jit\.save\)"):
        loaded(scripted, weights_only=False)
    for weights_only in (True, False):
        with pytest.raises(TypeError, match=r"^graft\.load: the file uses torch\.uint8, a dtype graft does not have "
                                            r"\(graft has bool, int32, int64, float16, bfloat16, float32 and float64; "
                                            r"int8, "):
            loaded(archive(b"\x80\x02ctorch\nuint8\n."), weights_only=weights_only)
        with pytest.raises(RuntimeError, match=r"^graft\.load: the file uses torch\._utils\._rebuild_sparse_tensor "
                                               r"\(sparse tensors\), which graft does not implement$"):
            loaded(archive(b"\x80\x02ctorch._utils\n_rebuild_sparse_tensor\n."), weights_only=weights_only)
    with pytest.raises(RuntimeError, match=r"^graft\.load: the file uses torch\.nn\.NoSuchModule, which graft does "
                                           r"not have$"):
        loaded(archive(b"\x80\x02ctorch.nn\nNoSuchModule\n."), weights_only=False)
    assert loaded(archive(b"\x80\x02ctorch.nn\nLinear\n."), weights_only=False) is graft.nn.Linear


_LAMBDA = lambda: 0  # noqa: E731  (pickled by reference: its name cannot be looked up)


def test_unpicklable_objects_raise_as_torch_save_does_and_write_nothing(tmp_path):
    class Local:
        pass

    path = tmp_path / "ckpt.pt"
    graft.save({"w": graft.ones(2)}, path)
    before = path.read_bytes()
    errors = {}
    for name, obj in (("local", {"w": graft.ones(2), "x": Local()}), ("lambda", [_LAMBDA]),
                      ("lock", [__import__("threading").Lock()])):
        errors[name] = graft_error(lambda: graft.save(obj, path))
        assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["ckpt.pt"], name
    assert errors["local"] == ["AttributeError", "Can't pickle local object "
                               "'test_unpicklable_objects_raise_as_torch_save_does_and_write_nothing.<locals>.Local'"]
    assert errors["lambda"][0] == "PicklingError" and errors["lambda"][1].endswith(
        f": attribute lookup <lambda> on {__name__} failed")
    assert errors["lock"] == ["TypeError", "cannot pickle '_thread.lock' object"]
    with pytest.raises(AttributeError, match="^expected 'f' to be string, path, or a file-like object with a 'write'"):
        graft.save([], 5)
    torch = pytest.importorskip("torch")
    assert graft_error(lambda: torch.save({"x": Local()}, tmp_path / "t.pt")) == errors["local"]


def test_saves_to_a_path_are_atomic(tmp_path, monkeypatch):
    from graft import _pickle_format
    target = tmp_path / "real.pt"
    graft.save([1], target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.pt"
    link.symlink_to(target)
    graft.save([2], link)  # the link is followed: its target is replaced, the link stays
    assert link.is_symlink() and graft.load(target) == [2] and (target.stat().st_mode & 0o777) == 0o640
    dead = int(open("/proc/sys/kernel/pid_max").read())  # never a live pid
    stale, live = tmp_path / f".x.pt.tmp-{dead}-0", tmp_path / f".x.pt.tmp-{os.getppid()}-0"
    stale.write_bytes(b"x")
    live.write_bytes(b"x")
    graft.save([3], tmp_path / "x.pt")
    assert not stale.exists() and live.exists()
    live.unlink()

    def failing_write(fh, *args):
        fh.write(b"PK\x03\x04 partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_pickle_format, "write_archive", failing_write)
    with pytest.raises(RuntimeError, match=r"^save: cannot write '.*x\.pt': writing '.*\.x\.pt\.tmp-\d+-\d+' failed: "
                                           r"No space left on device$"):
        graft.save([4], tmp_path / "x.pt")
    assert graft.load(tmp_path / "x.pt") == [3] and sorted(os.listdir(tmp_path)) == ["link.pt", "real.pt", "x.pt"]
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match=r"^save: cannot write '.*missing/y\.pt': cannot create temporary file "
                                           r"'.*missing/\.y\.pt\.tmp-\d+-\d+': No such file or directory$"):
        graft.save([5], tmp_path / "missing" / "y.pt")


def test_the_format_follows_the_path_and_safetensors_stays_reachable(tmp_path):
    sd = {"w": graft.ones(2)}
    graft.save(sd, tmp_path / "m.pt")
    graft.save(sd, tmp_path / "m.safetensors")
    graft.save(sd, pathlib.PurePath(tmp_path / "n.safetensors"))
    with pytest.raises(AttributeError, match="^expected 'f' to be string, path"):  # as torch.save: bytes are no path
        graft.save(sd, str(tmp_path / "o.pt").encode())
    assert (tmp_path / "m.pt").read_bytes()[:4] == b"PK\x03\x04"
    for name in ("m.safetensors", "n.safetensors"):
        raw = (tmp_path / name).read_bytes()
        assert json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])["w"]["dtype"] == "F32"
    buf = io.BytesIO()
    graft.serialization.save_safetensors({"w": graft.ones(2), "step": 3}, buf)
    assert buf.getvalue()[:4] != b"PK\x03\x04"
    assert loaded(buf.getvalue())["step"] == 3 and graft.load(tmp_path / "m.pt")["w"].tolist() == [1.0, 1.0]
    import graft as torch  # what PyTorch programs call
    assert torch.serialization.DEFAULT_PROTOCOL == 2 and callable(torch.serialization.add_safe_globals)


class _Reduces:
    """Pickles as a call of ``func(*args)`` (graft's pickler names graft's rebuild functions as
    PyTorch's torch._utils ones)."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def test_the_other_rebuild_functions_pytorch_files_use():
    from graft import _torch_globals as g
    data = saved([_Reduces(g._rebuild_device_tensor_from_numpy, np.arange(3.0), graft.float32, "cpu", True),
                  _Reduces(g._rebuild_device_tensor_from_cpu_tensor, graft.tensor([1, 2]), graft.float64, "meta",
                           False)])
    assert b"torch._utils\n_rebuild_device_tensor_from_numpy\n" in records(data)["archive/data.pkl"]
    from_numpy, from_cpu = loaded(data, weights_only=False)
    assert from_numpy.tolist() == [0.0, 1.0, 2.0] and from_numpy.dtype == graft.float32 and from_numpy.requires_grad
    assert from_cpu.device.type == "meta" and from_cpu.dtype == graft.float64
    storage = b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x06tQ"
    six = {"data/0": struct.pack("<6f", 0, 1, 2, 3, 4, 5)}
    v1 = archive(b"\x80\x02ctorch._utils\n_rebuild_tensor\n(" + storage + b"K\x02K\x02\x85K\x01\x85tR.", six)
    assert loaded(v1).tolist() == [2.0, 3.0]  # PyTorch's first rebuild function (offset, size, stride)
    as_parameter = archive(b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n_rebuild_tensor\n"
                           b"ctorch.nn.parameter\nParameter\n(" + storage + b"K\x00K\x01\x85K\x01\x85t}tR.", six)
    with pytest.raises(RuntimeError, match=r"^graft\.load: the file holds a tensor of type <class "
                                           r"'graft\.nn\.parameter\.Parameter'>; graft rebuilds torch\.Tensor"):
        loaded(as_parameter)
    t = graft.ones(1)
    t.note = "kept"
    p = graft.nn.Parameter(graft.ones(1))
    p.tag = 7
    back_t, back_p = loaded(saved([t, p]))
    assert back_t.note == "kept" and back_p.tag == 7 and type(back_p) is graft.nn.Parameter


def test_edge_cases_of_saving():
    a = np.arange(4, dtype=np.float32)
    with pytest.raises(RuntimeError, match="^Cannot save multiple tensors or storages that view the same data as "
                                           "different types$"):
        saved([graft.from_numpy(a), graft.from_numpy(a.view(np.int32))])
    data = saved([graft.ones(1)], _use_new_zipfile_serialization=False)  # the zip archive all the same
    assert data[:4] == b"PK\x03\x04" and loaded(data)[0].tolist() == [1.0]
    ser = graft.serialization
    with pytest.raises(ValueError, match="^Expected input to be a checkpoint returned by torch.save$"):
        ser.get_unsafe_globals_in_checkpoint(io.BytesIO(_safetensors_bytes()))
    scripted = archive(b"\x80\x02}.", {"constants.pkl": b"\x80\x02)."})
    with pytest.raises(ValueError, match="but got a torchscript checkpoint$"):
        ser.get_unsafe_globals_in_checkpoint(io.BytesIO(scripted))


def _safetensors_bytes():
    """A safetensors file's bytes."""
    buf = io.BytesIO()
    graft.serialization.save_safetensors({"w": graft.ones(1)}, buf)
    return buf.getvalue()
