"""graft.save / graft.load with safetensors files (a path ending in .safetensors, or
graft.serialization.save_safetensors: a flat state dict is a plain file other readers parse;
nested checkpoints keep their structure in __metadata__), round trips of optimizer and checkpoint
dicts, file objects, and the errors (unsupported objects, corrupt files, legacy pickles).
PyTorch's own format, graft.save's default, is tested in test_serialization_torch_format.py."""
import collections
import io
import json
import math
import pathlib
import struct

import numpy as np
import pytest

import graft
from graft import optim


def read_safetensors(path):
    """An independent reader of the format: header JSON and the raw little-endian bytes."""
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    dtypes = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4", "BOOL": "?"}
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return list(header), tensors, metadata


def test_flat_state_dict_is_a_plain_safetensors_file(tmp_path):
    path = tmp_path / "model.safetensors"
    sd = collections.OrderedDict([
        ("fc.weight", graft.tensor([[1.5, -2.0], [0.25, 3.0]])),
        ("fc.bias", graft.tensor([0.5, -0.5], dtype=graft.float64)),
        ("bn.num_batches_tracked", graft.tensor(7)),
        ("mask", graft.tensor([True, False])),
    ])
    graft.save(sd, path)
    names, tensors, metadata = read_safetensors(path)
    assert names == ["fc.weight", "fc.bias", "bn.num_batches_tracked", "mask"]
    assert metadata == {"format": "pt"}
    assert tensors["fc.weight"].tolist() == [[1.5, -2.0], [0.25, 3.0]] and tensors["fc.weight"].dtype == np.float32
    assert tensors["fc.bias"].dtype == np.float64 and tensors["bn.num_batches_tracked"].tolist() == 7
    back = graft.load(path)
    assert type(back) is collections.OrderedDict and list(back) == list(sd)
    for k in sd:
        assert back[k].dtype == sd[k].dtype and back[k].tolist() == sd[k].tolist()
    assert not back["fc.weight"].requires_grad


def make_trained_adam():
    w = graft.tensor([0.5, -1.0, 2.0], requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True)
    for g in ([0.1, -0.2, 0.3], [0.5, 0.25, -0.75]):
        w.grad = graft.tensor(g)
        opt.step()
    return w, opt


def test_checkpoint_round_trip_keeps_structure_and_types(tmp_path):
    w, opt = make_trained_adam()
    model = collections.OrderedDict([("w", w.detach().clone())])
    ckpt = {"model": model, "optimizer": opt.state_dict(), "epoch": 3, "loss": 0.5, "name": "run-1",
            "history": [1.0, float("inf"), float("nan")], "flags": (True, None), "big": 2 ** 70}
    path = tmp_path / "ckpt.safetensors"
    graft.save(ckpt, str(path))
    back = graft.load(path)
    assert list(back) == list(ckpt)
    assert type(back["model"]) is collections.OrderedDict and back["model"]["w"].tolist() == w.tolist()
    assert back["epoch"] == 3 and type(back["epoch"]) is int
    assert back["loss"] == 0.5 and back["name"] == "run-1" and back["big"] == 2 ** 70
    assert back["history"][:2] == [1.0, math.inf] and math.isnan(back["history"][2])
    assert back["flags"] == (True, None)
    osd = back["optimizer"]
    assert list(osd["state"]) == [0]  # int keys come back as ints
    assert list(osd["state"][0]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    assert osd["state"][0]["step"].item() == 2.0
    assert osd["state"][0]["exp_avg"].tolist() == opt.state[w]["exp_avg"].tolist()
    assert osd["param_groups"] == opt.state_dict()["param_groups"]  # betas a tuple, foreach None, ...
    names, _, metadata = read_safetensors(path)
    assert "optimizer.state.0.exp_avg" in names and "model.w" in names
    assert json.loads(metadata["graft.structure"])["version"] == 1


def test_optimizer_resumes_exactly_through_a_file(tmp_path):
    w, opt = make_trained_adam()
    path = tmp_path / "opt.safetensors"
    graft.save(opt.state_dict(), path)
    w2 = w.detach().clone().requires_grad_(True)
    opt2 = optim.Adam([w2], lr=0.5)
    opt2.load_state_dict(graft.load(path))
    for g in ([-0.3, 0.6, 0.2], [0.05, -0.05, 0.05]):
        w.grad = graft.tensor(g)
        w2.grad = graft.tensor(g)
        opt.step()
        opt2.step()
    assert w2.tolist() == w.tolist()
    assert opt2.param_groups[0]["lr"] == 0.1


def test_a_path_with_a_nul_is_refused_as_open_refuses_it(tmp_path):
    # a C++ string would end the path at the NUL and write "ckpt" instead
    path = str(tmp_path / "ckpt\0x")
    with pytest.raises(ValueError, match="^embedded null byte$"):
        graft.save({"w": graft.ones(2)}, path)
    with pytest.raises(ValueError, match="^embedded null byte$"):
        graft.load(path)
    for snapshot_path in (path, bytes(tmp_path / "ckpt\0x")):  # open() takes bytes paths too
        with pytest.raises(ValueError, match="^embedded null byte$"):
            graft.cpu.memory._dump_snapshot(snapshot_path)
    assert list(tmp_path.iterdir()) == []


def test_file_objects_and_shared_tensors():
    a = graft.tensor([1.0, 2.0], requires_grad=True)
    obj = {"first": a, "again": a, "nested": [a, graft.tensor([3])]}
    buf = io.BytesIO()
    graft.serialization.save_safetensors(obj, buf)
    assert buf.getvalue()[8:9] == b"{"  # a safetensors header, not a zip
    buf.seek(0)
    back = graft.load(buf)
    assert back["first"] is back["again"] and back["nested"][0] is back["first"]  # stored once
    assert back["first"].requires_grad and back["first"].tolist() == [1.0, 2.0]
    assert back["nested"][1].dtype == graft.int64


def test_map_location(tmp_path):
    path = tmp_path / "t.safetensors"
    graft.save({"x": graft.ones(2)}, path)
    assert graft.load(path, map_location="cpu")["x"].tolist() == [1.0, 1.0]
    seen = []
    graft.load(path, map_location=lambda t, loc: seen.append(loc))
    assert seen == ["cpu"]
    assert graft.load(path, weights_only=True)["x"].tolist() == [1.0, 1.0]


def test_unsupported_objects_raise_and_write_nothing(tmp_path):
    path = tmp_path / "bad.safetensors"
    graft.save({"x": graft.zeros(1)}, path)
    before = path.read_bytes()

    class Custom:
        pass

    with pytest.raises(TypeError, match=r"^graft\.save: cannot save an object of type .*Custom at 'extra\.1': graft "
                                        r"writes safetensors files, which hold tensors, dicts, lists, tuples, str, "
                                        r"int, float, bool and None \(it does not pickle Python objects\)$"):
        graft.save({"x": graft.zeros(1), "extra": [1, Custom()]}, path)
    with pytest.raises(TypeError, match=r"^graft\.save: cannot save a dict key of type tuple at 'd': keys must be"):
        graft.save({"d": {(1, 2): 3}}, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.safetensors"]  # no temporary file left


def test_failed_load_leaves_model_and_optimizer_unchanged(tmp_path):
    w, opt = make_trained_adam()
    path = tmp_path / "ckpt.safetensors"
    graft.save({"model": {"w": w.detach().clone()}, "optimizer": opt.state_dict()}, path)
    data = path.read_bytes()
    (tmp_path / "cut.safetensors").write_bytes(data[:-5])
    model = {"w": graft.tensor([9.0, 9.0, 9.0])}
    with pytest.raises(ValueError, match="invalid safetensors file"):
        ck = graft.load(tmp_path / "cut.safetensors")
        model["w"].copy_(ck["model"]["w"])
    assert model["w"].tolist() == [9.0, 9.0, 9.0]
    other = optim.Adam([graft.zeros(3, requires_grad=True), graft.zeros(1, requires_grad=True)], lr=0.7)
    with pytest.raises(ValueError, match="^loaded state dict contains a parameter group that doesn't match"):
        other.load_state_dict(graft.load(path)["optimizer"])
    assert other.param_groups[0]["lr"] == 0.7 and len(other.state) == 0


def test_broken_archives_legacy_pickles_and_bad_structure_are_refused(tmp_path):
    zip_like = tmp_path / "model.pt"  # a zip's magic, then nothing a zip has: PyTorch's reader's error
    zip_like.write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    with pytest.raises(RuntimeError, match=r"^PytorchStreamReader failed reading zip archive: failed finding central "
                                           r"directory\. This is an internal miniz error"):
        graft.load(zip_like)
    legacy = tmp_path / "legacy.pt"  # torch.save's format before PyTorch 1.6 starts with a pickle
    legacy.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.")
    with pytest.raises(ValueError, match=r"is a PyTorch checkpoint in the legacy format \(torch\.save before PyTorch "
                                         r"1\.6, or with _use_new_zipfile_serialization=False\), which graft does not"):
        graft.load(legacy)
    raw = graft._C._serialize.to_bytes([("a", graft.zeros(1))], {"graft.structure": '{"version": 1, "root": '
                                                                                   '{"tensor": "b"}}'})
    with pytest.raises(ValueError, match=r"invalid graft\.structure description: tensor 'b' is not in the file"):
        graft.load(io.BytesIO(raw))
    raw = graft._C._serialize.to_bytes([("a", graft.zeros(1))], {"graft.structure": '{"version": 1, "root": 5}'})
    with pytest.raises(ValueError, match=r"tensor 'a' is not part of the structure"):
        graft.load(io.BytesIO(raw))
    with pytest.raises(FileNotFoundError):
        graft.load(tmp_path / "missing.safetensors")
    text = tmp_path / "t.txt"
    text.write_text("hello")
    with open(text) as fh, pytest.raises(TypeError, match=r"must be opened in binary mode"):
        graft.load(fh)
